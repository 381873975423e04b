/* owb-graph-pane.c: the graph canvas with its bar (breadcrumb, provider legend, zoom), find bar
 * and busy overlay; everything here follows the view's signals, so the window may drive the view
 * directly (shortcuts) and the pane stays in step. */
#include "owb-graph-pane.h"

#include <adwaita.h>
#include <glib/gi18n-lib.h>

#include "owb-graph-minimap.h"
#include "owb-graph-scene.h"

struct _OwbGraphPane {
  GtkWidget parent_instance;

  GtkWidget *box;
  GtkBox *breadcrumb;
  GtkBox *legend;
  GtkWidget *preparing_box;
  GtkSpinner *preparing_spinner;
  GtkLabel *zoom_label;
  GtkSearchBar *search_bar;
  GtkSearchEntry *search_entry;
  GtkLabel *match_label;
  GtkWidget *previous_button;
  GtkWidget *next_button;
  GtkMenuButton *matches_button;
  GtkPopover *matches_popover;
  GtkListBox *match_list;
  GtkLabel *match_path_label;
  OwbGraphView *view;
  OwbGraphMinimap *minimap;
  GtkWidget *busy_box;
  GtkSpinner *spinner;
  GtkLabel *progress_label;
  AdwStatusPage *status_page;
  guint zoom_idle;
};

G_DEFINE_FINAL_TYPE (OwbGraphPane, owb_graph_pane, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_FIND_VISIBLE, N_PROPS };
static GParamSpec *properties[N_PROPS];

static void
remove_children (GtkBox *box)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (box))))
    gtk_box_remove (box, child);
}

static void
crumb_clicked (GtkButton *button, OwbGraphPane *self)
{
  guint index = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (button), "owb-path-index"));
  if (index + 1 == owb_graph_view_get_path_length (self->view))
    owb_graph_view_zoom_to_fit (self->view);
  else
    owb_graph_view_go_to_path (self->view, index);
}

static void
path_changed (OwbGraphPane *self)
{
  remove_children (self->breadcrumb);
  guint n = owb_graph_view_get_path_length (self->view);
  for (guint i = 0; i < n; i++)
    {
      const char *text = owb_graph_view_get_path_label (self->view, i);
      if (i > 0)
        {
          GtkWidget *separator = gtk_label_new ("›");
          gtk_widget_add_css_class (separator, "dim-label");
          gtk_accessible_update_state (GTK_ACCESSIBLE (separator), GTK_ACCESSIBLE_STATE_HIDDEN, TRUE, -1);
          gtk_box_append (self->breadcrumb, separator);
        }
      GtkWidget *button = gtk_button_new_with_label (text);
      gtk_widget_add_css_class (button, "flat");
      gtk_accessible_update_property (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_PROPERTY_LABEL, text, -1);
      g_object_set_data (G_OBJECT (button), "owb-path-index", GUINT_TO_POINTER (i));
      g_signal_connect (button, "clicked", G_CALLBACK (crumb_clicked), self);
      if (i + 1 == n)
        {
          /* The level on screen: clicking it shows it whole. */
          gtk_widget_add_css_class (gtk_button_get_child (GTK_BUTTON (button)), "heading");
          gtk_widget_set_tooltip_text (button, _("Show the whole graph"));
        }
      else
        gtk_widget_set_tooltip_text (button, _("Back to this graph"));
      gtk_box_append (self->breadcrumb, button);
    }
}

static GtkWidget *
legend_item (const char *provider, const char *text)
{
  double rgb[3];
  owb_scene_provider_color (provider, rgb);
  GtkWidget *item = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);
  GtkWidget *swatch = gtk_drawing_area_new ();
  g_autofree char *css = g_strdup_printf ("* { background-color: rgb(%d,%d,%d); border-radius: 3px; min-width: 12px; min-height: 12px; }",
                                          (int) (rgb[0] * 255), (int) (rgb[1] * 255), (int) (rgb[2] * 255));
  g_autoptr (GtkCssProvider) style = gtk_css_provider_new ();
  gtk_css_provider_load_from_data (style, css, -1);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_add_provider (gtk_widget_get_style_context (swatch), GTK_STYLE_PROVIDER (style),
                                  GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  G_GNUC_END_IGNORE_DEPRECATIONS
  gtk_widget_set_valign (swatch, GTK_ALIGN_CENTER);
  gtk_accessible_update_state (GTK_ACCESSIBLE (swatch), GTK_ACCESSIBLE_STATE_HIDDEN, TRUE, -1);
  gtk_box_append (GTK_BOX (item), swatch);
  GtkWidget *label = gtk_label_new (text);
  gtk_widget_add_css_class (label, "caption");
  gtk_box_append (GTK_BOX (item), label);
  g_autofree char *name = g_strdup_printf (_("Provider %s"), text);
  gtk_accessible_update_property (GTK_ACCESSIBLE (item), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
  return item;
}

static void
scene_changed (OwbGraphPane *self)
{
  remove_children (self->legend);
  gboolean unassigned = FALSE;
  g_auto (GStrv) providers = owb_graph_view_dup_providers (self->view, &unassigned);
  /* Before partitioning no node has a provider: a legend of one grey swatch says nothing. */
  if (providers && providers[0])
    {
      for (guint i = 0; providers[i]; i++)
        gtk_box_append (self->legend, legend_item (providers[i], providers[i]));
      if (unassigned)
        gtk_box_append (self->legend, legend_item (NULL, _("unassigned")));
    }
  gtk_widget_set_visible (GTK_WIDGET (self->legend), providers && providers[0]);
  if (owb_graph_view_has_scene (self->view))
    gtk_widget_set_visible (GTK_WIDGET (self->status_page), FALSE);
}

static gboolean
update_zoom_label (gpointer data)
{
  OwbGraphPane *self = data;
  self->zoom_idle = 0;
  /* Far out a large graph is at hundredths of a percent: "0%" would say nothing. */
  double percent = owb_graph_view_get_zoom (self->view) * 100;
  g_autofree char *text = percent >= 1 ? g_strdup_printf ("%.0f%%", percent) : g_strdup_printf ("%.2g%%", percent);
  gtk_label_set_text (self->zoom_label, text);
  return G_SOURCE_REMOVE;
}

static void
zoom_changed (OwbGraphPane *self)
{
  /* The view changes its zoom while it is being allocated (fit on first show); resizing the bar's
   * label then, after the bar was allocated, would leave the bar unallocated when it is drawn. */
  if (!self->zoom_idle)
    self->zoom_idle = g_idle_add_full (G_PRIORITY_HIGH_IDLE, update_zoom_label, self, NULL);
}

static void
busy_changed (OwbGraphPane *self)
{
  gboolean busy = owb_graph_view_get_busy (self->view);
  gtk_widget_set_visible (self->busy_box, busy);
  gtk_spinner_set_spinning (self->spinner, busy);
  if (busy)
    {
      gtk_label_set_text (self->progress_label, _("Laying out the graph…"));
      gtk_widget_set_visible (GTK_WIDGET (self->status_page), FALSE);
    }
  else if (!owb_graph_view_has_scene (self->view) && owb_graph_view_get_graph (self->view) &&
           !gtk_widget_get_visible (GTK_WIDGET (self->status_page)))
    {
      /* Not busy, a graph, no scene, no error shown: the layout was cancelled. */
      adw_status_page_set_title (self->status_page, _("Layout Cancelled"));
      adw_status_page_set_description (self->status_page, _("The graph was not drawn."));
      gtk_widget_set_visible (GTK_WIDGET (self->status_page), TRUE);
    }
}

static void
layout_progress (OwbGraphPane *self, double fraction, const char *text)
{
  if (text)
    gtk_label_set_text (self->progress_label, text);
}

static void
layout_failed (OwbGraphPane *self, const GError *error)
{
  if (owb_graph_view_has_scene (self->view))
    return; /* an expand failed; the graph on screen is still right */
  adw_status_page_set_title (self->status_page, _("Could Not Draw the Graph"));
  adw_status_page_set_description (self->status_page, error ? error->message : NULL);
  gtk_widget_set_visible (GTK_WIDGET (self->status_page), TRUE);
}

static void
cancel_clicked (OwbGraphPane *self)
{
  owb_graph_view_cancel (self->view);
}

static void
retry_clicked (OwbGraphPane *self)
{
  gtk_widget_set_visible (GTK_WIDGET (self->status_page), FALSE);
  owb_graph_view_relayout (self->view);
}

static void
zoom_in_clicked (OwbGraphPane *self)
{
  owb_graph_view_zoom_in (self->view);
}

static void
zoom_out_clicked (OwbGraphPane *self)
{
  owb_graph_view_zoom_out (self->view);
}

static void
zoom_fit_clicked (OwbGraphPane *self)
{
  owb_graph_view_zoom_to_fit (self->view);
}

static void
matches_changed (OwbGraphPane *self)
{
  const char *query = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));
  guint n = owb_graph_view_get_n_matches (self->view);
  int index = owb_graph_view_get_match_index (self->view);
  g_autofree char *text = NULL;
  if (n > 0)
    text = g_strdup_printf (_("%d of %u"), index + 1, n);
  else if (query && *query)
    text = g_strdup (_("No matches"));
  gtk_label_set_text (self->match_label, text ? text : "");
  gtk_widget_set_sensitive (self->previous_button, n > 0);
  gtk_widget_set_sensitive (self->next_button, n > 0);
  gtk_widget_set_sensitive (GTK_WIDGET (self->matches_button), n > 0);
  const OwbSceneMatch *match = index >= 0 ? owb_graph_view_get_match (self->view, (guint) index) : NULL;
  g_autofree char *where = match && match->depth ? owb_scene_match_dup_path (match) : NULL;
  /* TRANSLATORS: where the current match of Find is: "in If_3 › then_branch" */
  g_autofree char *location = where ? g_strdup_printf (_("in %s"), where) : NULL;
  gtk_label_set_text (self->match_path_label, location ? location : "");
}

/* The list is filled when it opens, from the view's matches then (at most MAX_LISTED). */
#define MAX_LISTED 500

static void
fill_match_list (OwbGraphPane *self)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->match_list))))
    gtk_list_box_remove (self->match_list, child);
  guint n = MIN (owb_graph_view_get_n_matches (self->view), MAX_LISTED);
  for (guint i = 0; i < n; i++)
    {
      const OwbSceneMatch *match = owb_graph_view_get_match (self->view, i);
      const OwbNode *node = match->node;
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
      gtk_widget_set_margin_start (box, 6);
      gtk_widget_set_margin_end (box, 6);
      gtk_widget_set_margin_top (box, 4);
      gtk_widget_set_margin_bottom (box, 4);
      g_autofree char *title = node->name && node->name[0] ? g_strdup_printf ("%s  %s", node->op_type, node->name)
                                                            : g_strdup (node->op_type);
      GtkWidget *label = gtk_label_new (title);
      gtk_label_set_xalign (GTK_LABEL (label), 0);
      gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_MIDDLE);
      gtk_label_set_max_width_chars (GTK_LABEL (label), 48);
      gtk_box_append (GTK_BOX (box), label);
      g_autofree char *path = owb_scene_match_dup_path (match);
      if (path[0])
        {
          GtkWidget *where = gtk_label_new (path);
          gtk_label_set_xalign (GTK_LABEL (where), 0);
          gtk_label_set_ellipsize (GTK_LABEL (where), PANGO_ELLIPSIZE_START);
          gtk_label_set_max_width_chars (GTK_LABEL (where), 48);
          gtk_widget_add_css_class (where, "dim-label");
          gtk_widget_add_css_class (where, "caption");
          gtk_box_append (GTK_BOX (box), where);
        }
      GtkWidget *row = gtk_list_box_row_new ();
      gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
      g_autofree char *a11y = path[0] ? g_strdup_printf ("%s, %s", title, path) : g_strdup (title);
      gtk_accessible_update_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL, a11y, -1);
      g_object_set_data (G_OBJECT (row), "owb-match-index", GUINT_TO_POINTER (i));
      gtk_list_box_append (self->match_list, row);
    }
}

static void
match_row_activated (OwbGraphPane *self, GtkListBoxRow *row)
{
  guint index = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (row), "owb-match-index"));
  gtk_popover_popdown (self->matches_popover);
  owb_graph_view_set_match_index (self->view, index);
}

static void
matches_popover_shown (OwbGraphPane *self)
{
  fill_match_list (self);
}

GtkListBox *
owb_graph_pane_get_match_list (OwbGraphPane *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_PANE (self), NULL);
  fill_match_list (self);
  return self->match_list;
}

static void
search_changed (OwbGraphPane *self)
{
  owb_graph_view_find (self->view, gtk_editable_get_text (GTK_EDITABLE (self->search_entry)));
  matches_changed (self);
}

static void
find_next_clicked (OwbGraphPane *self)
{
  owb_graph_view_find_next (self->view);
}

static void
find_previous_clicked (OwbGraphPane *self)
{
  owb_graph_view_find_previous (self->view);
}

static void
stop_search (OwbGraphPane *self)
{
  owb_graph_pane_set_find_visible (self, FALSE);
}

static void
search_mode_changed (OwbGraphPane *self)
{
  if (!gtk_search_bar_get_search_mode (self->search_bar))
    {
      /* Closing the bar ends the search: no match outlines left on the graph. */
      owb_graph_view_find (self->view, NULL);
      matches_changed (self);
      gtk_widget_grab_focus (GTK_WIDGET (self->view));
    }
  else if (gtk_editable_get_text (GTK_EDITABLE (self->search_entry))[0])
    search_changed (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FIND_VISIBLE]);
}

void
owb_graph_pane_set_preparing (OwbGraphPane *self, const char *description)
{
  g_return_if_fail (OWB_IS_GRAPH_PANE (self));
  gboolean preparing = description != NULL;
  gtk_widget_set_visible (self->preparing_box, preparing);
  gtk_spinner_set_spinning (self->preparing_spinner, preparing);
  gtk_widget_set_tooltip_text (self->preparing_box, description);
  if (preparing)
    gtk_accessible_update_property (GTK_ACCESSIBLE (self->preparing_box), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
                                    description, -1);
  else
    gtk_accessible_reset_property (GTK_ACCESSIBLE (self->preparing_box), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION);
}

OwbGraphMinimap *
owb_graph_pane_get_minimap (OwbGraphPane *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_PANE (self), NULL);
  return self->minimap;
}

gboolean
owb_graph_pane_get_preparing (OwbGraphPane *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_PANE (self), FALSE);
  return gtk_widget_get_visible (self->preparing_box);
}

OwbGraphView *
owb_graph_pane_get_view (OwbGraphPane *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_PANE (self), NULL);
  return self->view;
}

void
owb_graph_pane_set_find_visible (OwbGraphPane *self, gboolean visible)
{
  g_return_if_fail (OWB_IS_GRAPH_PANE (self));
  gtk_search_bar_set_search_mode (self->search_bar, visible);
  if (visible)
    {
      gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
      gtk_editable_select_region (GTK_EDITABLE (self->search_entry), 0, -1);
    }
}

gboolean
owb_graph_pane_get_find_visible (OwbGraphPane *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_PANE (self), FALSE);
  return gtk_search_bar_get_search_mode (self->search_bar);
}

void
owb_graph_pane_toggle_find (OwbGraphPane *self)
{
  owb_graph_pane_set_find_visible (self, !owb_graph_pane_get_find_visible (self));
}

static void
owb_graph_pane_dispose (GObject *object)
{
  OwbGraphPane *self = OWB_GRAPH_PANE (object);
  g_clear_handle_id (&self->zoom_idle, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (self), OWB_TYPE_GRAPH_PANE);
  G_OBJECT_CLASS (owb_graph_pane_parent_class)->dispose (object);
}

static void
owb_graph_pane_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  OwbGraphPane *self = OWB_GRAPH_PANE (object);
  switch (prop_id)
    {
    case PROP_FIND_VISIBLE:
      g_value_set_boolean (value, owb_graph_pane_get_find_visible (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
owb_graph_pane_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  OwbGraphPane *self = OWB_GRAPH_PANE (object);
  switch (prop_id)
    {
    case PROP_FIND_VISIBLE:
      owb_graph_pane_set_find_visible (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
owb_graph_pane_class_init (OwbGraphPaneClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = owb_graph_pane_dispose;
  object_class->get_property = owb_graph_pane_get_property;
  object_class->set_property = owb_graph_pane_set_property;

  properties[PROP_FIND_VISIBLE] = g_param_spec_boolean ("find-visible", NULL, NULL, FALSE,
                                                        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (OWB_TYPE_GRAPH_VIEW);
  g_type_ensure (OWB_TYPE_GRAPH_MINIMAP);
  gtk_widget_class_set_template_from_resource (widget_class, "/org/onnxworkbench/Workbench/owb-graph-pane.ui");
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, box);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, breadcrumb);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, legend);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, preparing_box);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, preparing_spinner);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, zoom_label);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, search_bar);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, search_entry);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, match_label);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, previous_button);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, next_button);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, matches_button);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, matches_popover);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, match_list);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, match_path_label);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, view);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, minimap);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, busy_box);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, spinner);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, progress_label);
  gtk_widget_class_bind_template_child (widget_class, OwbGraphPane, status_page);
  gtk_widget_class_bind_template_callback (widget_class, zoom_in_clicked);
  gtk_widget_class_bind_template_callback (widget_class, zoom_out_clicked);
  gtk_widget_class_bind_template_callback (widget_class, zoom_fit_clicked);
  gtk_widget_class_bind_template_callback (widget_class, search_changed);
  gtk_widget_class_bind_template_callback (widget_class, find_next_clicked);
  gtk_widget_class_bind_template_callback (widget_class, find_previous_clicked);
  gtk_widget_class_bind_template_callback (widget_class, stop_search);
  gtk_widget_class_bind_template_callback (widget_class, search_mode_changed);
  gtk_widget_class_bind_template_callback (widget_class, busy_changed);
  gtk_widget_class_bind_template_callback (widget_class, zoom_changed);
  gtk_widget_class_bind_template_callback (widget_class, matches_changed);
  gtk_widget_class_bind_template_callback (widget_class, match_row_activated);
  gtk_widget_class_bind_template_callback (widget_class, layout_progress);
  gtk_widget_class_bind_template_callback (widget_class, layout_failed);
  gtk_widget_class_bind_template_callback (widget_class, path_changed);
  gtk_widget_class_bind_template_callback (widget_class, scene_changed);
  gtk_widget_class_bind_template_callback (widget_class, cancel_clicked);
  gtk_widget_class_bind_template_callback (widget_class, retry_clicked);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "graphpane");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
owb_graph_pane_init (OwbGraphPane *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_search_bar_connect_entry (self->search_bar, GTK_EDITABLE (self->search_entry));
  owb_graph_minimap_set_view (self->minimap, self->view);
  g_signal_connect_object (self->matches_popover, "show", G_CALLBACK (matches_popover_shown), self, G_CONNECT_SWAPPED);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Graph Pane"), -1);
  path_changed (self);
  scene_changed (self);
  update_zoom_label (self);
}

GtkWidget *
owb_graph_pane_new (void)
{
  return g_object_new (OWB_TYPE_GRAPH_PANE, NULL);
}
