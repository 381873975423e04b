/* owb-window.c: a workbench window: welcome, loading, error and document pages, the header bar's
 * provider and level choice, and the wiring between the graph view, the inspector and the pages. */
#include "owb-window-private.h"
#include "owb-page-util.h"

#include <glib/gi18n-lib.h>

#include "owb-optimize-page.h"
#include "owb-profile-page.h"
#include "owb-quantize-page.h"
#include "owb-resources.h"
#include "owb-run-page.h"

G_DEFINE_FINAL_TYPE (OwbWindow, owb_window, ADW_TYPE_APPLICATION_WINDOW)

/* The pages after Graph (which is in the template, wired to the inspector). A later page (Quantize,
 * Profile) is one more row here. */
typedef struct {
  const char *name;
  const char *title;
  const char *icon_name;
  GtkWidget *(*create) (void); /* an OwbPage */
} OwbWindowPage;

static const OwbWindowPage page_table[] = {
  { "optimize", N_("Optimize"), "emblem-system-symbolic", owb_optimize_page_new },
  { "run", N_("Run"), "media-playback-start-symbolic", owb_run_page_new },
  { "profile", N_("Profile"), "power-profile-performance-symbolic", owb_profile_page_new },
  { "quantize", N_("Quantize"), "applications-science-symbolic", owb_quantize_page_new },
};

/* The level drop-down lists the levels in OwbOptimizeLevel order. */
G_STATIC_ASSERT (OWB_OPTIMIZE_DISABLED == 0 && OWB_OPTIMIZE_ALL == 4);

static const char *const *
available_providers (void)
{
  return owb_providers_get_available ();
}

OwbOptimizeLevel
_owb_window_get_level (OwbWindow *self)
{
  guint selected = gtk_drop_down_get_selected (self->level_drop_down);
  if (selected == GTK_INVALID_LIST_POSITION || selected > OWB_OPTIMIZE_ALL)
    return OWB_OPTIMIZE_DISABLED;
  return (OwbOptimizeLevel) selected;
}

const char *
_owb_window_get_providers (OwbWindow *self)
{
  const char *const *names = available_providers ();
  guint selected = gtk_drop_down_get_selected (self->provider_drop_down);
  if (selected == GTK_INVALID_LIST_POSITION || selected >= g_strv_length ((char **) names))
    return "cpu";
  return names[selected];
}

void
_owb_window_show_toast (OwbWindow *self, const char *message)
{
  owb_page_toast (GTK_WIDGET (self->toast_overlay), message, 8);
}

GFile *
_owb_window_dup_sample_file (void)
{
  /* The installed copy; from a build tree, the source tree's. */
  g_autofree char *installed = g_build_filename (OWB_SAMPLES_DIR, "tiny-cnn.onnx", NULL);
  if (g_file_test (installed, G_FILE_TEST_IS_REGULAR))
    return g_file_new_for_path (installed);
  g_autofree char *source = g_build_filename (OWB_SOURCE_SAMPLES_DIR, "tiny-cnn.onnx", NULL);
  return g_file_new_for_path (source);
}

static gboolean
update_model_label (gpointer data)
{
  OwbWindow *self = data;
  gboolean document = g_strcmp0 (gtk_stack_get_visible_child_name (self->main_stack), "document") == 0;
  gboolean title_visible = adw_view_switcher_title_get_title_visible (self->switcher_title);
  gtk_widget_set_visible (GTK_WIDGET (self->model_label), document && !title_visible);
  const char *folder = gtk_label_get_text (self->model_folder_label);
  gtk_widget_set_visible (GTK_WIDGET (self->model_folder_label), document && !title_visible && folder[0]);
  self->model_label_idle = 0;
  return G_SOURCE_REMOVE;
}

/* The header bar's bottom twin shows the page switcher when the title is too narrow for it. */
static void
update_switcher_bar (OwbWindow *self)
{
  gboolean document = g_strcmp0 (gtk_stack_get_visible_child_name (self->main_stack), "document") == 0;
  gboolean title_visible = adw_view_switcher_title_get_title_visible (self->switcher_title);
  adw_view_switcher_bar_set_reveal (self->switcher_bar, document && title_visible);
  /* The title switches while the header bar is being allocated: showing a widget of the header
   * then would leave it unallocated for the frame being drawn. */
  if (self->model_label_idle == 0)
    self->model_label_idle = g_idle_add (update_model_label, self);
}

static void
set_titles (OwbWindow *self, const char *title, const char *subtitle)
{
  adw_view_switcher_title_set_title (self->switcher_title, title);
  adw_view_switcher_title_set_subtitle (self->switcher_title, subtitle ? subtitle : "");
  gtk_window_set_title (GTK_WINDOW (self), title);
  gtk_label_set_text (self->model_label, title);
  /* Short names whole ("tiny-cnn.onnx"); with six pages the switcher left it a few letters. */
  gtk_label_set_width_chars (self->model_label, title ? MIN ((int) g_utf8_strlen (title, -1), 16) : -1);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->model_label), subtitle);
  /* The folder under the name, as the title shows it when it has the room. */
  gtk_label_set_text (self->model_folder_label, subtitle ? subtitle : "");
  gtk_label_set_width_chars (self->model_folder_label, subtitle ? MIN ((int) g_utf8_strlen (subtitle, -1), 16) : -1);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->model_folder_label), subtitle);
  update_switcher_bar (self);
}

/* "~/models" rather than "/home/ann/models": the folder as people say it. */
static char *
dup_folder_label (GFile *file)
{
  g_autoptr (GFile) parent = g_file_get_parent (file);
  if (!parent)
    return NULL;
  g_autofree char *name = g_file_get_parse_name (parent);
  const char *home = g_get_home_dir ();
  gsize home_len = strlen (home);
  if (home_len > 1 && g_str_has_prefix (name, home) && (name[home_len] == '/' || name[home_len] == '\0'))
    return g_strconcat ("~", name + home_len, NULL);
  return g_steal_pointer (&name);
}

static char *
dup_display_name (GFile *file)
{
  g_autoptr (GFileInfo) info = g_file_query_info (file, G_FILE_ATTRIBUTE_STANDARD_DISPLAY_NAME,
                                                  G_FILE_QUERY_INFO_NONE, NULL, NULL);
  if (info)
    return g_strdup (g_file_info_get_display_name (info));
  return g_file_get_basename (file);
}

/* Selection and the inspector */

/* The value the tensor on show had in the Run page's last run, if that ran this graph and kept it
 * (or it is a graph output). */
static void
show_run_value (OwbWindow *self, const OwbGraph *graph, const char *name)
{
  for (guint i = 0; self->pages != NULL && i < self->pages->len; i++)
    if (OWB_IS_RUN_PAGE (g_ptr_array_index (self->pages, i)))
      {
        OwbTensor *value = owb_run_page_get_run_value (g_ptr_array_index (self->pages, i), graph, name);
        if (value != NULL)
          owb_inspector_show_run_value (self->inspector, name, value);
      }
}

static void
on_selection_changed (OwbWindow *self)
{
  OwbGraphView *view = owb_graph_pane_get_view (self->graph_pane);
  const OwbGraph *graph = owb_graph_view_get_graph (view);
  const OwbNode *node = owb_graph_view_get_selected_node (view);
  const char *tensor = owb_graph_view_get_selected_tensor (view);

  if (graph && node)
    owb_inspector_show_node (self->inspector, graph, node);
  else if (graph && tensor)
    {
      owb_inspector_show_tensor (self->inspector, graph, tensor);
      show_run_value (self, graph, tensor);
    }
  else if (self->document)
    {
      /* A subgraph on screen is described as itself, titled by its path. */
      g_autofree char *path = owb_graph_view_dup_path_title (view);
      owb_inspector_show_subgraph (self->inspector, owb_document_get_model (self->document), graph, path);
    }
  else
    owb_inspector_clear (self->inspector);
}

static void
on_inspector_subgraph_activated (OwbInspector *inspector, gpointer node, const char *attribute, OwbWindow *self)
{
  owb_graph_view_open_subgraph (owb_graph_pane_get_view (self->graph_pane), node, attribute);
}

static void
on_inspector_node_activated (OwbInspector *inspector, gpointer node, OwbWindow *self)
{
  owb_graph_view_select_node (owb_graph_pane_get_view (self->graph_pane), node);
}

static void
on_inspector_tensor_activated (OwbInspector *inspector, const char *name, OwbWindow *self)
{
  owb_graph_view_select_tensor (owb_graph_pane_get_view (self->graph_pane), name);
}

/* Compact graphs */

static void
set_compact_below (GtkWidget *widget, gboolean compact)
{
  if (OWB_IS_GRAPH_VIEW (widget))
    owb_graph_view_set_compact (OWB_GRAPH_VIEW (widget), compact);
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    set_compact_below (child, compact);
}

/* The Graph page and the Optimize page's two graphs follow the setting; the Quantize page's map
 * shows every QuantizeLinear and DequantizeLinear, weights' included. */
static void
apply_compact (OwbWindow *self)
{
  gboolean compact = g_settings_get_boolean (self->settings, "compact-graph");
  owb_graph_view_set_compact (owb_graph_pane_get_view (self->graph_pane), compact);
  GtkWidget *optimize = adw_view_stack_get_child_by_name (self->view_stack, "optimize");
  if (optimize)
    set_compact_below (optimize, compact);
}

/* Prepared models */

/* What the pane says while a session is prepared behind the graph on screen. */
static void
update_preparing (OwbWindow *self)
{
  gboolean preparing = self->n_preparing > 0 || (self->document && owb_document_get_preparing (self->document));
  gtk_widget_set_visible (GTK_WIDGET (self->prepare_spinner), preparing);
  gtk_spinner_set_spinning (self->prepare_spinner, preparing);

  OwbPrepared *prepared = self->document ? owb_document_get_prepared (self->document) : NULL;
  const char *what = NULL;
  if (prepared && owb_prepared_is_pending (prepared))
    what = owb_prepared_get_level (prepared) == OWB_OPTIMIZE_DISABLED
               ? _("The graph as loaded; the provider colours appear when the session is prepared")
               : _("The graph as loaded; the graph optimized at the chosen level replaces it when the session is prepared");
  else if (preparing)
    what = _("The graph shown stays until the session at the chosen level is prepared");
  owb_graph_pane_set_preparing (self->graph_pane, what);
}

static void
on_prepared_changed (OwbWindow *self)
{
  OwbPrepared *prepared = owb_document_get_prepared (self->document);
  if (!prepared)
    return;
  const OwbGraph *graph = owb_prepared_get_graph (prepared);
  OwbGraphView *view = owb_graph_pane_get_view (self->graph_pane);
  /* The same graph with its claims (the session at level disabled after the model as loaded)
   * keeps its layout, the place on screen and the selection; another one is laid out anew. */
  OwbPrepared *hold = owb_prepared_ref (prepared);
  if (!owb_graph_view_update_graph (view, graph, hold, (GDestroyNotify) owb_prepared_unref))
    owb_graph_view_set_graph (view, graph, hold, (GDestroyNotify) owb_prepared_unref);
  on_selection_changed (self);
  update_preparing (self);

  /* The graph is still shown (as loaded), but say why it is not the prepared one. */
  const GError *error = owb_prepared_get_error (prepared);
  if (error)
    {
      g_autofree char *message = g_strdup_printf (_("Showing the model as loaded: %s"), error->message);
      _owb_window_show_toast (self, message);
    }
}

static void
set_preparing (OwbWindow *self, gboolean preparing)
{
  if (preparing)
    self->n_preparing++;
  else if (self->n_preparing > 0)
    self->n_preparing--;
  update_preparing (self);
}

static void
on_prepare_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (OwbWindow) self = user_data;
  g_autoptr (GError) error = NULL;

  if (self->prepare_spinner == NULL)
    return; /* closed meanwhile */
  set_preparing (self, FALSE);
  if (!owb_document_prepare_finish (OWB_DOCUMENT (source), result, &error) &&
      !owb_error_is_cancelled (error))
    _owb_window_show_toast (self, error->message);
}

/* The header's level says what it means: the graph shown and the Run and Profile pages'
 * sessions are optimized to it, and the Optimize page compares levels without changing it. */
static void
update_level_tooltip (OwbWindow *self)
{
  g_autofree char *tooltip = g_strdup_printf (_("Optimization level of the graph shown and of the Run and Profile pages. %s. "
                                                "The Optimize page compares the levels without changing this one."),
                                              owb_page_describe_level (_owb_window_get_level (self)));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->level_drop_down), tooltip);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->level_drop_down), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
                                  tooltip, -1);
}

static void
on_level_or_provider_selected (OwbWindow *self)
{
  update_level_tooltip (self);
  if (self->syncing_drop_downs)
    return;

  /* The last choice is the next model's default. */
  if (self->settings)
    {
      g_settings_set_string (self->settings, "default-level",
                             owb_optimize_level_to_string (_owb_window_get_level (self)));
      g_settings_set_string (self->settings, "default-providers", _owb_window_get_providers (self));
    }
  if (!self->document)
    return;

  /* Only the newest choice matters: stop waiting for the one before. */
  g_cancellable_cancel (self->prepare_cancellable);
  g_clear_object (&self->prepare_cancellable);
  self->prepare_cancellable = g_cancellable_new ();
  set_preparing (self, TRUE);
  owb_document_prepare_async (self->document, _owb_window_get_level (self), _owb_window_get_providers (self),
                              self->prepare_cancellable, on_prepare_done, g_object_ref (self));
}

/* Loading */

static void
show_welcome (OwbWindow *self)
{
  set_titles (self, _("ONNX Workbench"), NULL);
  gtk_stack_set_visible_child_name (self->main_stack, "welcome");
  _owb_window_update_actions (self);
}

static void
show_error (OwbWindow *self, GFile *file, const GError *error)
{
  g_autofree char *name = dup_display_name (file);
  g_autofree char *folder = dup_folder_label (file);
  set_titles (self, name, folder);
  adw_status_page_set_description (self->error_page, error->message);
  gtk_stack_set_visible_child_name (self->main_stack, "error");
  _owb_window_update_actions (self);
}

static void
add_to_recent (GFile *file)
{
  g_autofree char *uri = g_file_get_uri (file);
  GtkRecentData data = {
    .mime_type = (char *) "application/x-onnx",
    .app_name = (char *) g_get_application_name (),
    .app_exec = (char *) "onnx-workbench %u",
  };
  gtk_recent_manager_add_full (gtk_recent_manager_get_default (), uri, &data);
}

static void
show_document (OwbWindow *self, OwbDocument *document)
{
  g_set_object (&self->document, document);
  g_signal_connect_object (document, "notify::prepared", G_CALLBACK (on_prepared_changed), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (document, "notify::preparing", G_CALLBACK (update_preparing), self,
                           G_CONNECT_SWAPPED);

  GFile *file = owb_document_get_file (document);
  g_autofree char *folder = dup_folder_label (file);
  set_titles (self, owb_document_get_title (document), folder);
  add_to_recent (file);

  /* The load prepared the first model before this window followed the document. */
  on_prepared_changed (self);
  owb_inspector_set_document (self->inspector, document);
  for (guint i = 0; i < self->pages->len; i++)
    owb_page_set_document (g_ptr_array_index (self->pages, i), document);

  adw_view_switcher_title_set_view_switcher_enabled (self->switcher_title, TRUE);
  adw_view_stack_set_visible_child_name (self->view_stack, "graph");
  gtk_stack_set_visible_child_name (self->main_stack, "document");
  _owb_window_update_actions (self);
}

static void
on_load_progress (OwbDocument *document, double fraction, const char *phase, OwbWindow *self)
{
  if (document != self->loading)
    return;
  gtk_progress_bar_set_fraction (self->loading_progress, fraction);
  gtk_label_set_text (self->loading_phase, phase);
}

static void
on_load_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (OwbWindow) self = user_data;
  OwbDocument *document = OWB_DOCUMENT (source);
  g_autoptr (GError) error = NULL;

  gboolean loaded = owb_document_load_finish (document, result, &error);
  /* A load cancelled and replaced by another: that one owns the window now. */
  if (document != self->loading)
    return;
  g_autoptr (OwbDocument) owned = g_steal_pointer (&self->loading);
  g_signal_handlers_disconnect_by_func (document, on_load_progress, self);
  g_clear_object (&self->load_cancellable);

  /* Closed while loading: the widgets are gone. */
  if (self->main_stack == NULL)
    return;
  if (loaded)
    show_document (self, document);
  else if (owb_error_is_cancelled (error))
    show_welcome (self);
  else
    show_error (self, g_object_get_data (G_OBJECT (document), "owb-window-file"), error);
}

static void
on_cancel_clicked (OwbWindow *self)
{
  g_cancellable_cancel (self->load_cancellable);
}

static void
start_loading (OwbWindow *self, GFile *file)
{
  g_autofree char *name = dup_display_name (file);
  g_autofree char *folder = dup_folder_label (file);
  g_autofree char *title = g_strdup_printf (_("Opening “%s”"), name);

  self->loading = owb_document_new ();
  g_object_set (self->loading, "level", (int) _owb_window_get_level (self),
                "providers", _owb_window_get_providers (self), NULL);
  g_signal_connect (self->loading, "progress", G_CALLBACK (on_load_progress), self);
  g_object_set_data_full (G_OBJECT (self->loading), "owb-window-file", g_object_ref (file), g_object_unref);

  set_titles (self, name, folder);
  gtk_label_set_text (self->loading_title, title);
  gtk_label_set_text (self->loading_phase, "");
  gtk_progress_bar_set_fraction (self->loading_progress, 0.0);
  gtk_stack_set_visible_child_name (self->main_stack, "loading");
  _owb_window_update_actions (self);

  self->load_cancellable = g_cancellable_new ();
  owb_document_load_async (self->loading, file, self->load_cancellable, on_load_done, g_object_ref (self));
}

OwbWindow *
owb_window_open_file (OwbWindow *self, GFile *file)
{
  g_return_val_if_fail (OWB_IS_WINDOW (self), NULL);
  g_return_val_if_fail (G_IS_FILE (file), NULL);

  /* One model per window: another one gets a window of its own. */
  if (self->document || self->loading)
    {
      OwbWindow *window = owb_window_new (gtk_window_get_application (GTK_WINDOW (self)));
      gtk_window_present (GTK_WINDOW (window));
      return owb_window_open_file (window, file);
    }
  start_loading (self, file);
  return self;
}

OwbDocument *
owb_window_get_document (OwbWindow *self)
{
  g_return_val_if_fail (OWB_IS_WINDOW (self), NULL);
  return self->document;
}

/* Drag and drop */

static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y, OwbWindow *self)
{
  GdkFileList *list = g_value_get_boxed (value);
  g_autoptr (GSList) files = list ? gdk_file_list_get_files (list) : NULL;
  if (!files)
    return FALSE;
  OwbWindow *window = self;
  for (GSList *l = files; l; l = l->next)
    window = owb_window_open_file (window, l->data);
  return TRUE;
}

/* Window state */

static void
restore_state (OwbWindow *self)
{
  if (!self->settings)
    return;
  int width = g_settings_get_int (self->settings, "window-width");
  int height = g_settings_get_int (self->settings, "window-height");
  gtk_window_set_default_size (GTK_WINDOW (self), width, height);
  if (g_settings_get_boolean (self->settings, "window-maximized"))
    gtk_window_maximize (GTK_WINDOW (self));
}

static gboolean
owb_window_close_request (GtkWindow *window)
{
  OwbWindow *self = OWB_WINDOW (window);
  if (self->settings)
    {
      int width, height;
      gtk_window_get_default_size (window, &width, &height);
      g_settings_delay (self->settings);
      if (!gtk_window_is_maximized (window) && width > 0 && height > 0)
        {
          g_settings_set_int (self->settings, "window-width", width);
          g_settings_set_int (self->settings, "window-height", height);
        }
      g_settings_set_boolean (self->settings, "window-maximized", gtk_window_is_maximized (window));
      g_settings_apply (self->settings);
    }
  return GTK_WINDOW_CLASS (owb_window_parent_class)->close_request (window);
}

static void
select_default_choices (OwbWindow *self)
{
  OwbOptimizeLevel level = OWB_OPTIMIZE_DISABLED;
  g_autofree char *level_name = NULL;
  g_autofree char *providers = NULL;
  if (self->settings)
    {
      level_name = g_settings_get_string (self->settings, "default-level");
      providers = g_settings_get_string (self->settings, "default-providers");
    }
  if (level_name && !owb_optimize_level_from_string (level_name, &level))
    level = OWB_OPTIMIZE_DISABLED;

  /* A provider list names the first choice; the engine always adds the CPU after it. */
  const char *const *names = available_providers ();
  g_auto (GStrv) wanted = g_strsplit (providers ? providers : "cpu", ",", 2);
  const char *first = wanted[0] ? g_strstrip (wanted[0]) : "cpu";
  guint provider_index = 0, cpu_index = 0;
  gboolean found = FALSE;
  for (guint i = 0; names[i]; i++)
    {
      if (g_strcmp0 (names[i], "cpu") == 0)
        cpu_index = i;
      if (!found && g_strcmp0 (names[i], first) == 0)
        {
          provider_index = i;
          found = TRUE;
        }
    }
  if (!found)
    provider_index = cpu_index;

  self->syncing_drop_downs = TRUE;
  gtk_drop_down_set_selected (self->level_drop_down, level);
  gtk_drop_down_set_selected (self->provider_drop_down, provider_index);
  self->syncing_drop_downs = FALSE;
}

static GtkStringList *
new_provider_list (void)
{
  GtkStringList *list = gtk_string_list_new (NULL);
  const char *const *names = available_providers ();
  for (guint i = 0; names[i]; i++)
    {
      /* Provider names are acronyms (CPU, CUDA, DNNL): show them as such. */
      g_autofree char *label = g_ascii_strup (names[i], -1);
      gtk_string_list_append (list, label);
    }
  return list;
}

/* A page that names a node (the Profile page's timeline): select it in the graph and the
 * inspector; reveal shows the graph. By name: the page may run a session of its own. */
static void
on_page_node_activated (GtkWidget *page, const char *name, gboolean reveal, OwbWindow *self)
{
  OwbGraphView *view = owb_graph_pane_get_view (self->graph_pane);
  const OwbGraph *graph = owb_graph_view_get_graph (view);
  const OwbNode *node = owb_graph_find_node (graph, name);
  if (node)
    {
      owb_graph_view_select_node (view, node);
      if (reveal)
        adw_view_stack_set_visible_child_name (self->view_stack, "graph");
    }
}

/* A page's overlay for the graph (the Profile page's time per node): set on the Graph page's view
 * and shown; NULL takes it away. */
static void
on_page_show_layer (GtkWidget *page, OwbGraphLayer *layer, OwbWindow *self)
{
  owb_graph_view_set_layer (owb_graph_pane_get_view (self->graph_pane), layer);
  if (layer)
    adw_view_stack_set_visible_child_name (self->view_stack, "graph");
}

static void
add_pages (OwbWindow *self)
{
  self->pages = g_ptr_array_new ();
  for (guint i = 0; i < G_N_ELEMENTS (page_table); i++)
    {
      GtkWidget *page = page_table[i].create ();
      AdwViewStackPage *stack_page = adw_view_stack_add_titled (self->view_stack, page, page_table[i].name,
                                                                 _(page_table[i].title));
      adw_view_stack_page_set_icon_name (stack_page, page_table[i].icon_name);
      g_signal_connect (page, "node-activated", G_CALLBACK (on_page_node_activated), self);
      g_signal_connect (page, "show-layer", G_CALLBACK (on_page_show_layer), self);
      if (g_signal_lookup ("run-values-changed", G_OBJECT_TYPE (page)))
        g_signal_connect_object (page, "run-values-changed", G_CALLBACK (on_selection_changed), self,
                                 G_CONNECT_SWAPPED);
      g_ptr_array_add (self->pages, page);
    }
}

static void
owb_window_dispose (GObject *object)
{
  OwbWindow *self = OWB_WINDOW (object);
  g_cancellable_cancel (self->load_cancellable);
  g_cancellable_cancel (self->prepare_cancellable);
  if (self->loading)
    g_signal_handlers_disconnect_by_func (self->loading, on_load_progress, self);
  g_clear_handle_id (&self->model_label_idle, g_source_remove);
  /* A prepare still running may install its result after the widgets are gone; whatever runs
   * for the document (a run, a quantization) is of no use once its window is closed. */
  if (self->document)
    {
      g_signal_handlers_disconnect_by_data (self->document, self);
      owb_document_cancel_jobs (self->document);
    }
  gtk_widget_dispose_template (GTK_WIDGET (self), OWB_TYPE_WINDOW);
  G_OBJECT_CLASS (owb_window_parent_class)->dispose (object);
}

static void
owb_window_finalize (GObject *object)
{
  OwbWindow *self = OWB_WINDOW (object);
  g_clear_object (&self->document);
  g_clear_object (&self->loading);
  g_clear_object (&self->load_cancellable);
  g_clear_object (&self->prepare_cancellable);
  g_clear_object (&self->settings);
  g_clear_object (&self->recent_menu);
  g_clear_pointer (&self->pages, g_ptr_array_unref);
  G_OBJECT_CLASS (owb_window_parent_class)->finalize (object);
}

static void
owb_window_class_init (OwbWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS (klass);

  object_class->dispose = owb_window_dispose;
  object_class->finalize = owb_window_finalize;
  window_class->close_request = owb_window_close_request;

  /* The resource registers itself when its object file is linked in; referring to it here makes
   * sure the static library's copy is. */
  if (owb_ui_get_resource () == NULL)
    g_error ("the workbench's GResource is missing");

  g_type_ensure (OWB_TYPE_WELCOME_PAGE);
  g_type_ensure (OWB_TYPE_GRAPH_PANE);
  g_type_ensure (OWB_TYPE_INSPECTOR);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/onnxworkbench/Workbench/owb-window.ui");
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, header_bar);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, open_button);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, recent_button);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, model_label);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, model_folder_label);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, switcher_title);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, menu_button);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, find_button);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, provider_drop_down);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, level_drop_down);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, prepare_spinner);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, main_stack);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, welcome_page);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, loading_title);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, loading_phase);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, loading_progress);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, cancel_button);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, error_page);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, view_stack);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, graph_paned);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, graph_pane);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, inspector);
  gtk_widget_class_bind_template_child (widget_class, OwbWindow, switcher_bar);
  gtk_widget_class_bind_template_callback (widget_class, update_switcher_bar);
  gtk_widget_class_bind_template_callback (widget_class, on_level_or_provider_selected);
  gtk_widget_class_bind_template_callback (widget_class, on_cancel_clicked);
}

static void
owb_window_init (OwbWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  /* Without the schema (an uninstalled build run without GSETTINGS_SCHEMA_DIR) the window still
   * works, with defaults and nothing remembered. */
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr (GSettingsSchema) schema = source ? g_settings_schema_source_lookup (source, OWB_APP_ID, TRUE) : NULL;
  if (schema)
    self->settings = g_settings_new (OWB_APP_ID);

  /* Filling the provider list changes its selection: not a choice of the user's to remember. */
  g_autoptr (GtkStringList) providers = new_provider_list ();
  self->syncing_drop_downs = TRUE;
  gtk_drop_down_set_model (self->provider_drop_down, G_LIST_MODEL (providers));
  self->syncing_drop_downs = FALSE;
  select_default_choices (self);
  update_level_tooltip (self);
  restore_state (self);

  /* The inspector starts 380 pixels wide (less in a narrow window); it keeps its width when the
   * window is resized (resize-end-child is off). */
  int width, height;
  gtk_window_get_default_size (GTK_WINDOW (self), &width, &height);
  gtk_paned_set_position (self->graph_paned, MAX (width - 380, width / 2));
  if (self->settings)
    g_settings_bind (self->settings, "inspector-visible", self->inspector, "visible", G_SETTINGS_BIND_DEFAULT);

  OwbGraphView *view = owb_graph_pane_get_view (self->graph_pane);
  g_signal_connect_object (view, "selection-changed", G_CALLBACK (on_selection_changed), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (view, "path-changed", G_CALLBACK (on_selection_changed), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->inspector, "subgraph-activated", G_CALLBACK (on_inspector_subgraph_activated), self, 0);
  g_signal_connect_object (self->inspector, "node-activated", G_CALLBACK (on_inspector_node_activated), self, 0);
  g_signal_connect_object (self->inspector, "tensor-activated", G_CALLBACK (on_inspector_tensor_activated), self, 0);
  g_object_bind_property (self->graph_pane, "find-visible", self->find_button, "active",
                          G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL);

  add_pages (self);
  if (self->settings)
    {
      g_signal_connect_object (self->settings, "changed::compact-graph", G_CALLBACK (apply_compact), self,
                               G_CONNECT_SWAPPED);
      apply_compact (self);
    }

  GtkDropTarget *drop = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self->main_stack), GTK_EVENT_CONTROLLER (drop));
  gtk_widget_add_css_class (GTK_WIDGET (self->main_stack), "owb-drop-area");

  _owb_window_install_actions (self);
  show_welcome (self);
}

OwbWindow *
owb_window_new (GtkApplication *application)
{
  return g_object_new (OWB_TYPE_WINDOW, "application", application, NULL);
}
