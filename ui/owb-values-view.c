/* owb-values-view.c: a tensor's values, OWB_VALUES_VIEW_PAGE_SIZE at a time in one or two columns
 * of (coordinates, value), with Previous / Next and an element spin to jump anywhere. */
#include "owb-values-view.h"

#include <glib/gi18n-lib.h>
#include <math.h>

#include "owb-page-util.h"

struct _OwbValuesView
{
  GtkWidget parent_instance;

  OwbTensor *tensor;
  int64_t first;
  GtkWidget *box;
  GtkLabel *range_label;
  GtkWidget *previous_button;
  GtkWidget *next_button;
  GtkSpinButton *element_spin;
  GtkGrid *grid;
  GtkLabel *where[OWB_VALUES_VIEW_PAGE_SIZE];
  GtkLabel *value[OWB_VALUES_VIEW_PAGE_SIZE];
  gboolean syncing;
};

G_DEFINE_FINAL_TYPE (OwbValuesView, owb_values_view, GTK_TYPE_WIDGET)

static char *
coordinates_text (const OwbTensor *t, int64_t flat)
{
  int64_t idx[OWB_MAX_RANK];
  for (int d = t->rank - 1; d >= 0; d--)
    {
      idx[d] = t->dims[d] > 0 ? flat % t->dims[d] : 0;
      flat = t->dims[d] > 0 ? flat / t->dims[d] : 0;
    }
  GString *s = g_string_new ("[");
  for (int d = 0; d < t->rank; d++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, d > 0 ? ", " : "", idx[d]);
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

static char *
value_text (const OwbTensor *t, int64_t i)
{
  switch (t->dtype)
    {
    case OWB_TYPE_STRING:
      {
        const char *s = ((char *const *) t->data)[i];
        g_autofree char *escaped = g_strescape (s != NULL ? s : "", NULL);
        if (g_utf8_strlen (escaped, -1) > 40)
          {
            g_autofree char *cut = g_utf8_substring (escaped, 0, 40);
            return g_strdup_printf ("\"%s…\"", cut);
          }
        return g_strdup_printf ("\"%s\"", escaped);
      }
    case OWB_TYPE_BOOL:
      return g_strdup (((const guint8 *) t->data)[i] ? "true" : "false");
    case OWB_TYPE_INT8: case OWB_TYPE_INT16: case OWB_TYPE_INT32: case OWB_TYPE_INT64:
    case OWB_TYPE_UINT8: case OWB_TYPE_UINT16: case OWB_TYPE_UINT32:
      return g_strdup_printf ("%" G_GINT64_FORMAT, owb_tensor_get_int64 (t, i));
    case OWB_TYPE_UINT64:
      return g_strdup_printf ("%" G_GUINT64_FORMAT, ((const guint64 *) t->data)[i]);
    case OWB_TYPE_COMPLEX64:
      {
        const float *p = (const float *) t->data + 2 * i;
        return g_strdup_printf ("%.6g%+.6gi", p[0], p[1]);
      }
    case OWB_TYPE_COMPLEX128:
      {
        const double *p = (const double *) t->data + 2 * i;
        return g_strdup_printf ("%.6g%+.6gi", p[0], p[1]);
      }
    default:
      if (owb_data_type_size (t->dtype) == 0 || owb_data_type_size (t->dtype) > 8)
        return g_strdup ("?");
      return g_strdup_printf ("%.6g", owb_tensor_get_double (t, i));
    }
}

char *
owb_values_view_format_element (const OwbTensor *tensor, int64_t i)
{
  g_return_val_if_fail (tensor != NULL && i >= 0 && i < tensor->nelems, NULL);
  g_autofree char *where = coordinates_text (tensor, i);
  g_autofree char *value = value_text (tensor, i);
  return g_strdup_printf ("%s: %s", where, value);
}

static void
show_page (OwbValuesView *self)
{
  const OwbTensor *t = self->tensor;
  int64_t n = t->nelems;
  int64_t last = MIN (self->first + OWB_VALUES_VIEW_PAGE_SIZE, n);
  g_autofree char *first_text = g_strdup_printf ("%" G_GINT64_FORMAT, n > 0 ? self->first : 0);
  g_autofree char *last_text = g_strdup_printf ("%" G_GINT64_FORMAT, last > 0 ? last - 1 : 0);
  g_autofree char *count_text = g_strdup_printf ("%" G_GINT64_FORMAT, n);
  /* Translators: the elements on show: "elements 20–39 of 1000" */
  g_autofree char *range = n > 0 ? g_strdup_printf (_("elements %s–%s of %s"), first_text, last_text, count_text)
                                 : g_strdup (_("no elements"));
  gtk_label_set_text (self->range_label, range);
  for (int k = 0; k < OWB_VALUES_VIEW_PAGE_SIZE; k++)
    {
      int64_t i = self->first + k;
      gboolean shown = i < n;
      gtk_widget_set_visible (GTK_WIDGET (self->where[k]), shown);
      gtk_widget_set_visible (GTK_WIDGET (self->value[k]), shown);
      if (!shown)
        continue;
      g_autofree char *where = coordinates_text (t, i);
      g_autofree char *value = value_text (t, i);
      gtk_label_set_text (self->where[k], where);
      gtk_label_set_text (self->value[k], value);
      g_autofree char *a11y = g_strdup_printf ("%s: %s", where, value);
      gtk_accessible_update_property (GTK_ACCESSIBLE (self->value[k]), GTK_ACCESSIBLE_PROPERTY_LABEL, a11y, -1);
    }
  gtk_widget_set_sensitive (self->previous_button, self->first > 0);
  gtk_widget_set_sensitive (self->next_button, last < n);
  self->syncing = TRUE;
  gtk_spin_button_set_value (self->element_spin, (double) self->first);
  self->syncing = FALSE;
}

void
owb_values_view_show_element (OwbValuesView *self, int64_t index)
{
  g_return_if_fail (OWB_IS_VALUES_VIEW (self));
  int64_t n = self->tensor->nelems;
  index = CLAMP (index, 0, MAX (n - 1, 0));
  self->first = index - index % OWB_VALUES_VIEW_PAGE_SIZE;
  show_page (self);
}

int64_t
owb_values_view_get_first (OwbValuesView *self)
{
  g_return_val_if_fail (OWB_IS_VALUES_VIEW (self), 0);
  return self->first;
}

static void
previous_clicked (OwbValuesView *self)
{
  owb_values_view_show_element (self, self->first - OWB_VALUES_VIEW_PAGE_SIZE);
}

static void
next_clicked (OwbValuesView *self)
{
  owb_values_view_show_element (self, self->first + OWB_VALUES_VIEW_PAGE_SIZE);
}

static void
element_changed (OwbValuesView *self)
{
  if (!self->syncing)
    owb_values_view_show_element (self, (int64_t) gtk_spin_button_get_value (self->element_spin));
}

static GtkWidget *
new_nav_button (const char *icon, const char *tooltip, const char *a11y_format, const char *name)
{
  GtkWidget *button = gtk_button_new_from_icon_name (icon);
  gtk_widget_add_css_class (button, "flat");
  gtk_widget_set_valign (button, GTK_ALIGN_CENTER);
  gtk_widget_set_tooltip_text (button, tooltip);
  g_autofree char *a11y = g_strdup_printf (a11y_format, name);
  gtk_accessible_update_property (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_PROPERTY_LABEL, a11y, -1);
  owb_page_keep_own_accessible_name (button);
  return button;
}

GtkWidget *
owb_values_view_new (OwbTensor *tensor, const char *name, guint n_columns)
{
  g_return_val_if_fail (n_columns == 1 || n_columns == 2, NULL);
  g_return_val_if_fail (tensor != NULL && tensor->kind == OWB_VALUE_TENSOR, NULL);
  OwbValuesView *self = g_object_new (OWB_TYPE_VALUES_VIEW, NULL);
  self->tensor = owb_tensor_ref (tensor);
  g_autofree char *a11y = g_strdup_printf (_("Values of %s"), name);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL, a11y, -1);

  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));

  GtkWidget *nav = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  self->range_label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (self->range_label, 0);
  gtk_widget_set_hexpand (GTK_WIDGET (self->range_label), TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->range_label), "dim-label");
  gtk_widget_add_css_class (GTK_WIDGET (self->range_label), "numeric");
  /* A narrow panel has no room for the range beside the controls: it goes above them. */
  gtk_box_append (GTK_BOX (n_columns == 1 ? self->box : nav), GTK_WIDGET (self->range_label));
  GtkWidget *go_label = gtk_label_new_with_mnemonic (_("_Element"));
  gtk_widget_set_hexpand (go_label, n_columns == 1);
  gtk_label_set_xalign (GTK_LABEL (go_label), 1);
  gtk_box_append (GTK_BOX (nav), go_label);
  self->element_spin = GTK_SPIN_BUTTON (gtk_spin_button_new_with_range (0, MAX (tensor->nelems - 1, 0), 1));
  gtk_spin_button_set_increments (self->element_spin, OWB_VALUES_VIEW_PAGE_SIZE, OWB_VALUES_VIEW_PAGE_SIZE * 10);
  gtk_widget_set_valign (GTK_WIDGET (self->element_spin), GTK_ALIGN_CENTER);
  gtk_label_set_mnemonic_widget (GTK_LABEL (go_label), GTK_WIDGET (self->element_spin));
  g_autofree char *spin_a11y = g_strdup_printf (_("Go to Element of %s"), name);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->element_spin), GTK_ACCESSIBLE_PROPERTY_LABEL, spin_a11y, -1);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->element_spin), _("Flat index of an element to show"));
  g_signal_connect_swapped (self->element_spin, "value-changed", G_CALLBACK (element_changed), self);
  gtk_box_append (GTK_BOX (nav), GTK_WIDGET (self->element_spin));
  self->previous_button = new_nav_button ("go-previous-symbolic", _("Previous values"), _("Previous Values of %s"), name);
  g_signal_connect_swapped (self->previous_button, "clicked", G_CALLBACK (previous_clicked), self);
  gtk_box_append (GTK_BOX (nav), self->previous_button);
  self->next_button = new_nav_button ("go-next-symbolic", _("Next values"), _("Next Values of %s"), name);
  g_signal_connect_swapped (self->next_button, "clicked", G_CALLBACK (next_clicked), self);
  gtk_box_append (GTK_BOX (nav), self->next_button);
  gtk_box_append (GTK_BOX (self->box), nav);

  /* Columns of (coordinates, value): twenty values in ten lines, or twenty in a narrow panel. */
  int rows = OWB_VALUES_VIEW_PAGE_SIZE / n_columns;
  self->grid = GTK_GRID (gtk_grid_new ());
  gtk_grid_set_column_spacing (self->grid, 12);
  gtk_grid_set_row_spacing (self->grid, 2);
  gtk_widget_add_css_class (GTK_WIDGET (self->grid), "card");
  gtk_widget_add_css_class (GTK_WIDGET (self->grid), "owb-values");
  for (int k = 0; k < OWB_VALUES_VIEW_PAGE_SIZE; k++)
    {
      int column = (k / rows) * 2, row = k % rows;
      GtkWidget *where = gtk_label_new (NULL);
      gtk_label_set_xalign (GTK_LABEL (where), 0);
      gtk_widget_add_css_class (where, "dim-label");
      gtk_widget_add_css_class (where, "numeric");
      gtk_widget_set_margin_start (where, column == 0 ? 12 : 24);
      GtkWidget *value = gtk_label_new (NULL);
      gtk_label_set_xalign (GTK_LABEL (value), 1);
      gtk_label_set_selectable (GTK_LABEL (value), TRUE);
      gtk_widget_set_focusable (value, FALSE);
      gtk_widget_add_css_class (value, "numeric");
      gtk_widget_set_hexpand (value, TRUE);
      /* Also in the first column: a short tensor leaves the second one empty. */
      gtk_widget_set_margin_end (value, 12);
      if (row == 0)
        {
          gtk_widget_set_margin_top (where, 6);
          gtk_widget_set_margin_top (value, 6);
        }
      if (row == rows - 1)
        {
          gtk_widget_set_margin_bottom (where, 6);
          gtk_widget_set_margin_bottom (value, 6);
        }
      gtk_grid_attach (self->grid, where, column, row, 1, 1);
      gtk_grid_attach (self->grid, value, column + 1, row, 1, 1);
      self->where[k] = GTK_LABEL (where);
      self->value[k] = GTK_LABEL (value);
    }
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->grid));
  show_page (self);
  return GTK_WIDGET (self);
}

static void
owb_values_view_dispose (GObject *object)
{
  OwbValuesView *self = OWB_VALUES_VIEW (object);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS (owb_values_view_parent_class)->dispose (object);
}

static void
owb_values_view_finalize (GObject *object)
{
  OwbValuesView *self = OWB_VALUES_VIEW (object);
  g_clear_pointer (&self->tensor, owb_tensor_unref);
  G_OBJECT_CLASS (owb_values_view_parent_class)->finalize (object);
}

static void
owb_values_view_class_init (OwbValuesViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = owb_values_view_dispose;
  object_class->finalize = owb_values_view_finalize;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "valuesview");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
owb_values_view_init (OwbValuesView *self)
{
}
