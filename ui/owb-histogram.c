/* owb-histogram.c: the value-distribution bar chart of the inspector. */
#include "owb-histogram.h"

#include <glib/gi18n-lib.h>
#include <math.h>

#define BAR_AREA_HEIGHT 80
#define LABEL_GAP 4

struct _OwbHistogram {
  GtkWidget parent_instance;
  guint64 *bins;
  guint n_bins;
  guint64 max_count;
  double min, max;
};

G_DEFINE_FINAL_TYPE (OwbHistogram, owb_histogram, GTK_TYPE_WIDGET)

static char *
format_value (double v)
{
  return g_strdup_printf ("%.4g", v);
}

static PangoLayout *
make_label (OwbHistogram *self, double v)
{
  g_autofree char *text = format_value (v);
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);
  return layout;
}

static int
label_height (OwbHistogram *self)
{
  g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), "0");
  int h;
  pango_layout_get_pixel_size (layout, NULL, &h);
  return h;
}

static void
owb_histogram_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                       int *natural, int *minimum_baseline, int *natural_baseline)
{
  OwbHistogram *self = OWB_HISTOGRAM (widget);
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = 64;
      *natural = 256;
    }
  else
    *minimum = *natural = BAR_AREA_HEIGHT + LABEL_GAP + label_height (self);
}

static void
get_colors (GtkWidget *widget, GdkRGBA *bar, GdkRGBA *fg)
{
  GtkStyleContext *style = gtk_widget_get_style_context (widget);
  gtk_style_context_get_color (style, fg);
  /* libadwaita names its accent colour; a plain GTK theme may not, so fall back to the text colour. */
  if (!gtk_style_context_lookup_color (style, "accent_color", bar))
    {
      *bar = *fg;
      bar->alpha *= 0.6f;
    }
}

static void
owb_histogram_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  OwbHistogram *self = OWB_HISTOGRAM (widget);
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  int text_h = label_height (self);
  int bars_h = MAX (1, height - text_h - LABEL_GAP);
  GdkRGBA bar, fg;
  get_colors (widget, &bar, &fg);

  GdkRGBA axis = fg;
  axis.alpha *= 0.3f;
  gtk_snapshot_append_color (snapshot, &axis, &GRAPHENE_RECT_INIT (0, bars_h - 1, width, 1));

  if (self->n_bins == 0 || self->max_count == 0)
    return;

  double bar_w = (double) width / self->n_bins;
  /* A 1-pixel gap keeps neighbouring bars apart once they are wider than a few pixels. */
  double gap = bar_w >= 4 ? 1 : 0;
  for (guint i = 0; i < self->n_bins; i++)
    {
      if (self->bins[i] == 0)
        continue;
      double h = (double) self->bins[i] / self->max_count * (bars_h - 1);
      /* An outlier bin of one value among millions still shows. */
      h = MAX (h, 1);
      gtk_snapshot_append_color (snapshot, &bar,
                                 &GRAPHENE_RECT_INIT (i * bar_w, bars_h - 1 - h, bar_w - gap, h));
    }

  g_autoptr (PangoLayout) min_label = make_label (self, self->min);
  g_autoptr (PangoLayout) max_label = make_label (self, self->max);
  int max_w;
  pango_layout_get_pixel_size (max_label, &max_w, NULL);
  GdkRGBA text = fg;
  text.alpha *= 0.7f;
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (0, bars_h + LABEL_GAP));
  gtk_snapshot_append_layout (snapshot, min_label, &text);
  gtk_snapshot_restore (snapshot);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (MAX (0, width - max_w), bars_h + LABEL_GAP));
  gtk_snapshot_append_layout (snapshot, max_label, &text);
  gtk_snapshot_restore (snapshot);
}

static gboolean
owb_histogram_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard_mode, GtkTooltip *tooltip)
{
  OwbHistogram *self = OWB_HISTOGRAM (widget);
  int width = gtk_widget_get_width (widget);
  if (self->n_bins == 0 || width <= 0 || keyboard_mode)
    return FALSE;
  guint i = MIN ((guint) ((double) x / width * self->n_bins), self->n_bins - 1);
  double step = (self->max - self->min) / self->n_bins;
  g_autofree char *lo = format_value (self->min + i * step);
  g_autofree char *hi = format_value (self->min + (i + 1) * step);
  g_autofree char *count = g_strdup_printf ("%" G_GUINT64_FORMAT, self->bins[i]);
  /* TRANSLATORS: a histogram bar's tooltip: "-0.5 to 0.25: 1200 values" */
  g_autofree char *text =
    g_strdup_printf (ngettext ("%s to %s: %s value", "%s to %s: %s values", (gulong) self->bins[i]), lo, hi, count);
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
owb_histogram_finalize (GObject *object)
{
  OwbHistogram *self = OWB_HISTOGRAM (object);
  g_free (self->bins);
  G_OBJECT_CLASS (owb_histogram_parent_class)->finalize (object);
}

static void
owb_histogram_class_init (OwbHistogramClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->finalize = owb_histogram_finalize;
  widget_class->measure = owb_histogram_measure;
  widget_class->snapshot = owb_histogram_snapshot;
  widget_class->query_tooltip = owb_histogram_query_tooltip;
  gtk_widget_class_set_css_name (widget_class, "histogram");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
owb_histogram_init (OwbHistogram *self)
{
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Histogram"), -1);
}

GtkWidget *
owb_histogram_new (void)
{
  return g_object_new (OWB_TYPE_HISTOGRAM, NULL);
}

void
owb_histogram_set_bins (OwbHistogram *self, const guint64 *bins, guint n_bins, double min, double max)
{
  g_return_if_fail (OWB_IS_HISTOGRAM (self));
  g_return_if_fail (n_bins == 0 || bins != NULL);

  g_clear_pointer (&self->bins, g_free);
  self->n_bins = n_bins;
  self->min = min;
  self->max = max;
  self->max_count = 0;
  guint64 total = 0;
  if (n_bins)
    {
      self->bins = g_memdup2 (bins, n_bins * sizeof *bins);
      for (guint i = 0; i < n_bins; i++)
        {
          self->max_count = MAX (self->max_count, bins[i]);
          total += bins[i];
        }
    }

  /* What the picture says, for screen readers: the range and how many values it covers. */
  g_autofree char *lo = format_value (min);
  g_autofree char *hi = format_value (max);
  g_autofree char *count = g_strdup_printf ("%" G_GUINT64_FORMAT, total);
  g_autofree char *description =
    n_bins ? g_strdup_printf (ngettext ("%s finite value from %s to %s in %u bins",
                                        "%s finite values from %s to %s in %u bins", (gulong) total),
                              count, lo, hi, n_bins)
           : g_strdup (_("No values"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, description, -1);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

const guint64 *
owb_histogram_get_bins (OwbHistogram *self, guint *n_bins)
{
  g_return_val_if_fail (OWB_IS_HISTOGRAM (self), NULL);
  if (n_bins)
    *n_bins = self->n_bins;
  return self->bins;
}
