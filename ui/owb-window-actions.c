/* owb-window-actions.c: the window's actions (win.*): open, recent, find, zoom, export, close. */
#include "owb-window-private.h"

#include <glib/gi18n-lib.h>

#include "owb-page-util.h"

static OwbGraphView *
get_view (OwbWindow *self)
{
  return owb_graph_pane_get_view (self->graph_pane);
}

/* Opening */

static void
add_onnx_filters (GtkFileChooser *chooser)
{
  g_autoptr (GtkFileFilter) onnx = gtk_file_filter_new ();
  gtk_file_filter_set_name (onnx, _("ONNX Models"));
  gtk_file_filter_add_pattern (onnx, "*.onnx");
  gtk_file_filter_add_pattern (onnx, "*.ONNX");
  gtk_file_filter_add_mime_type (onnx, "application/x-onnx");
  gtk_file_chooser_add_filter (chooser, onnx);

  g_autoptr (GtkFileFilter) all = gtk_file_filter_new ();
  gtk_file_filter_set_name (all, _("All Files"));
  gtk_file_filter_add_pattern (all, "*");
  gtk_file_chooser_add_filter (chooser, all);

  gtk_file_chooser_set_filter (chooser, onnx);
}

static void
on_open_response (GtkNativeDialog *dialog, int response, OwbWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GListModel) files = gtk_file_chooser_get_files (GTK_FILE_CHOOSER (dialog));
      OwbWindow *window = self;
      for (guint i = 0; i < g_list_model_get_n_items (files); i++)
        {
          g_autoptr (GFile) file = g_list_model_get_item (files, i);
          window = owb_window_open_file (window, file);
        }
    }
  g_object_unref (dialog);
}

static void
open_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  OwbWindow *self = user_data;
  GtkFileChooserNative *dialog = owb_page_new_file_chooser (GTK_WIDGET (self), _("Open Model"),
                                                           GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"));
  gtk_file_chooser_set_select_multiple (GTK_FILE_CHOOSER (dialog), TRUE);
  add_onnx_filters (GTK_FILE_CHOOSER (dialog));
  /* The dialog holds itself until the response (unreffed there). */
  g_signal_connect (dialog, "response", G_CALLBACK (on_open_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
open_recent_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  OwbWindow *self = user_data;
  g_autoptr (GFile) file = g_file_new_for_uri (g_variant_get_string (parameter, NULL));
  owb_window_open_file (self, file);
}

static void
open_sample_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  OwbWindow *self = user_data;
  g_autoptr (GFile) file = _owb_window_dup_sample_file ();
  owb_window_open_file (self, file);
}

/* Find and zoom */

static void
find_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  OwbWindow *self = user_data;
  adw_view_stack_set_visible_child_name (self->view_stack, "graph");
  owb_graph_pane_set_find_visible (self->graph_pane, TRUE);
}

static void
find_next_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  owb_graph_view_find_next (get_view (user_data));
}

static void
find_previous_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  owb_graph_view_find_previous (get_view (user_data));
}

static OwbGraphView *
find_mapped_view (GtkWidget *widget)
{
  if (OWB_IS_GRAPH_VIEW (widget))
    return gtk_widget_get_mapped (widget) ? OWB_GRAPH_VIEW (widget) : NULL;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      OwbGraphView *view = find_mapped_view (child);
      if (view)
        return view;
    }
  return NULL;
}

/* The view Ctrl+plus, Ctrl+minus and Ctrl+0 act on: the one that has the focus (or whose pane
 * has it: its zoom buttons), else the first on the page shown (the Optimize page's original
 * graph), else the Graph page's. */
static OwbGraphView *
get_zoom_view (OwbWindow *self)
{
  for (GtkWidget *w = gtk_root_get_focus (GTK_ROOT (self)); w; w = gtk_widget_get_parent (w))
    if (OWB_IS_GRAPH_VIEW (w))
      return OWB_GRAPH_VIEW (w);
    else if (OWB_IS_GRAPH_PANE (w))
      return owb_graph_pane_get_view (OWB_GRAPH_PANE (w));
  GtkWidget *page = adw_view_stack_get_visible_child (self->view_stack);
  OwbGraphView *view = page ? find_mapped_view (page) : NULL;
  return view ? view : get_view (self);
}

static void
zoom_in_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  owb_graph_view_zoom_in (get_zoom_view (user_data));
}

static void
zoom_out_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  owb_graph_view_zoom_out (get_zoom_view (user_data));
}

static void
zoom_fit_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  owb_graph_view_zoom_to_fit (get_zoom_view (user_data));
}

/* Export */

typedef gboolean (*ExportFunc) (OwbGraphView *view, GFile *file, GError **error);

static void
on_export_response (GtkNativeDialog *dialog, int response, OwbWindow *self)
{
  ExportFunc export = g_object_get_data (G_OBJECT (dialog), "owb-export-func");
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autoptr (GError) error = NULL;
      g_autofree char *name = g_file_get_basename (file);
      g_autofree char *message = NULL;
      g_autofree char *checked = owb_page_check_save_target (self->document, file, &error);
      if (checked && export (get_view (self), file, &error))
        message = g_strdup_printf (_("Exported the graph to “%s”"), name);
      else
        message = g_strdup_printf (_("Could not export the graph to “%s”: %s"), name, error->message);
      _owb_window_show_toast (self, message);
    }
  g_object_unref (dialog);
}

static void
export_graph (OwbWindow *self, const char *title, const char *extension, const char *mime_type,
              const char *filter_name, ExportFunc export)
{
  if (!self->document)
    return;
  GtkFileChooserNative *dialog = owb_page_new_file_chooser (GTK_WIDGET (self), title, GTK_FILE_CHOOSER_ACTION_SAVE,
                                                           _("_Export"));

  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, filter_name);
  gtk_file_filter_add_mime_type (filter, mime_type);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), filter);

  /* "resnet18.onnx" → "resnet18.png", beside the model. */
  g_autofree char *suggested = owb_page_dup_model_file_name (self->document, extension);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), suggested);
  g_autoptr (GFile) folder = g_file_get_parent (owb_document_get_file (self->document));
  if (folder)
    gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (dialog), folder, NULL);

  g_object_set_data (G_OBJECT (dialog), "owb-export-func", export);
  g_signal_connect (dialog, "response", G_CALLBACK (on_export_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
export_png_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  export_graph (user_data, _("Export Graph as PNG"), ".png", "image/png", _("PNG Images"),
                owb_graph_view_export_png);
}

static void
export_svg_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  export_graph (user_data, _("Export Graph as SVG"), ".svg", "image/svg+xml", _("SVG Images"),
                owb_graph_view_export_svg);
}

static void
close_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  gtk_window_close (GTK_WINDOW (user_data));
}

/* The recent models menu of the header bar */

static void
rebuild_recent_menu (OwbWindow *self)
{
  g_menu_remove_all (self->recent_menu);
  g_autoptr (GPtrArray) infos = owb_welcome_page_dup_recent_models (10);
  for (guint i = 0; i < infos->len; i++)
    {
      GtkRecentInfo *info = g_ptr_array_index (infos, i);
      g_autoptr (GMenuItem) item = g_menu_item_new (gtk_recent_info_get_display_name (info), NULL);
      g_menu_item_set_action_and_target (item, "win.open-recent", "s", gtk_recent_info_get_uri (info));
      g_menu_append_item (self->recent_menu, item);
    }
  gtk_widget_set_sensitive (GTK_WIDGET (self->recent_button), infos->len > 0);
}

static const GActionEntry win_entries[] = {
  { "open", open_action },
  { "open-recent", open_recent_action, "s" },
  { "open-sample", open_sample_action },
  { "find", find_action },
  { "find-next", find_next_action },
  { "find-previous", find_previous_action },
  { "zoom-in", zoom_in_action },
  { "zoom-out", zoom_out_action },
  { "zoom-fit", zoom_fit_action },
  { "export-png", export_png_action },
  { "export-svg", export_svg_action },
  { "close", close_action },
};

/* Actions that act on the model on screen. */
static const char *const document_actions[] = {
  "find", "find-next", "find-previous", "zoom-in", "zoom-out", "zoom-fit", "export-png", "export-svg",
};

void
_owb_window_update_actions (OwbWindow *self)
{
  gboolean has_document = self->document != NULL &&
                          g_strcmp0 (gtk_stack_get_visible_child_name (self->main_stack), "document") == 0;
  for (guint i = 0; i < G_N_ELEMENTS (document_actions); i++)
    {
      GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), document_actions[i]);
      if (action)
        g_simple_action_set_enabled (G_SIMPLE_ACTION (action), has_document);
    }
  gtk_widget_set_sensitive (GTK_WIDGET (self->find_button), has_document);
  gtk_widget_set_sensitive (GTK_WIDGET (self->level_drop_down), self->loading == NULL);
  gtk_widget_set_sensitive (GTK_WIDGET (self->provider_drop_down), self->loading == NULL);
}

void
_owb_window_install_actions (OwbWindow *self)
{
  g_action_map_add_action_entries (G_ACTION_MAP (self), win_entries, G_N_ELEMENTS (win_entries), self);
  if (self->settings)
    {
      g_autoptr (GAction) inspector = g_settings_create_action (self->settings, "inspector-visible");
      g_action_map_add_action (G_ACTION_MAP (self), inspector);
      g_autoptr (GAction) compact = g_settings_create_action (self->settings, "compact-graph");
      g_action_map_add_action (G_ACTION_MAP (self), compact);
    }

  self->recent_menu = g_menu_new ();
  gtk_menu_button_set_menu_model (self->recent_button, G_MENU_MODEL (self->recent_menu));
  g_signal_connect_object (gtk_recent_manager_get_default (), "changed", G_CALLBACK (rebuild_recent_menu), self,
                           G_CONNECT_SWAPPED);
  rebuild_recent_menu (self);
}
