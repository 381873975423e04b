/* owb-graph-view.c: the graph canvas. Scenes are built in a worker thread; drawing goes through
 * render nodes cached per tile (512 pixels of a half-octave zoom bucket), so panning and zooming
 * replay cached nodes under one transform and only the selection overlays are drawn anew.
 * This file is the widget itself: the graphs it shows and who keeps them alive, the layout
 * thread, selection, highlight and layers; the other concerns are in owb-graph-view-*.c (see
 * owb-graph-view-private.h). */
#include "owb-graph-view-private.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

#include "owb-graph-layer-providers.h"

/* Whoever keeps the graph alive. Shared by the view and its running builds: a cancelled build
 * can still be reading the graph, so the owner is released only when both are done with it. */
struct _OwnerHold {
  gatomicrefcount ref_count;
  gpointer owner;
  GDestroyNotify release;
};

G_DEFINE_FINAL_TYPE (OwbGraphView, owb_graph_view, GTK_TYPE_WIDGET)

GParamSpec *_owb_graph_view_properties[N_PROPS];
guint _owb_graph_view_signals[N_SIGNALS];

/* ---- owners and frames ---- */

static OwnerHold *
owner_hold_new (gpointer owner, GDestroyNotify release)
{
  OwnerHold *hold = g_new0 (OwnerHold, 1);
  g_atomic_ref_count_init (&hold->ref_count);
  hold->owner = owner;
  hold->release = release;
  return hold;
}

static OwnerHold *
owner_hold_ref (OwnerHold *hold)
{
  if (hold)
    g_atomic_ref_count_inc (&hold->ref_count);
  return hold;
}

static gboolean
owner_hold_release_cb (gpointer data)
{
  OwnerHold *hold = data;
  if (hold->release && hold->owner)
    hold->release (hold->owner);
  g_free (hold);
  return G_SOURCE_REMOVE;
}

static void
owner_hold_unref (OwnerHold *hold)
{
  if (!hold || !g_atomic_ref_count_dec (&hold->ref_count))
    return;
  /* The last holder may be a build finishing in a worker thread: release on the main context,
   * where the owner (a document, say) expects to be touched. */
  g_main_context_invoke (NULL, owner_hold_release_cb, hold);
}

static void
frame_free (gpointer data)
{
  Frame *frame = data;
  g_clear_pointer (&frame->scene, owb_graph_scene_free);
  g_free (frame->label);
  g_free (frame->attribute);
  g_free (frame->selected_tensor);
  g_free (frame);
}

Frame *
_owb_graph_view_frame_new (const OwbGraph *graph, const char *label)
{
  Frame *frame = g_new0 (Frame, 1);
  frame->graph = graph;
  frame->label = g_strdup (label);
  return frame;
}

Frame *
_owb_graph_view_top_frame (OwbGraphView *self)
{
  return self->frames->len ? g_ptr_array_index (self->frames, self->frames->len - 1) : NULL;
}

/* ---- building scenes ---- */

typedef struct {
  const OwbGraph *graph;
  OwbSceneStyle style;
  OwnerHold *owner;
  guint serial;
} BuildData;

static void
build_data_free (gpointer data)
{
  BuildData *build = data;
  owner_hold_unref (build->owner);
  g_free (build);
}

static void
build_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  BuildData *build = task_data;
  GError *error = NULL;
  OwbGraphScene *scene = owb_graph_scene_new (build->graph, &build->style, cancellable, &error);
  if (scene)
    g_task_return_pointer (task, scene, (GDestroyNotify) owb_graph_scene_free);
  else
    g_task_return_error (task, error);
}

void
_owb_graph_view_set_busy (OwbGraphView *self, gboolean busy)
{
  if (self->busy == busy)
    return;
  self->busy = busy;
  if (!busy)
    g_clear_handle_id (&self->progress_source, g_source_remove);
  g_object_notify_by_pspec (G_OBJECT (self), _owb_graph_view_properties[PROP_BUSY]);
}

/* The scene API reports no fractions, so progress is the work and the time it has taken; the
 * fraction is -1 (unknown) until the end. */
static gboolean
progress_tick (gpointer data)
{
  OwbGraphView *self = data;
  double seconds = (g_get_monotonic_time () - self->build_started) / 1e6;
  g_autofree char *text = g_strdup_printf (ngettext ("Laying out %u node… %.0f s", "Laying out %u nodes… %.0f s",
                                                     self->build_n_nodes),
                                           self->build_n_nodes, seconds);
  g_signal_emit (self, _owb_graph_view_signals[LAYOUT_PROGRESS], 0, -1.0, text);
  return G_SOURCE_CONTINUE;
}

static void
build_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (source);
  BuildData *build = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;
  OwbGraphScene *scene = g_task_propagate_pointer (G_TASK (result), &error);

  if (build->serial != self->build_serial)
    {
      /* Stale: set_graph, cancel or a path change came after this build started. */
      g_clear_pointer (&scene, owb_graph_scene_free);
      return;
    }
  _owb_graph_view_set_busy (self, FALSE);
  Frame *frame = _owb_graph_view_top_frame (self);
  if (!scene)
    {
      if (!owb_error_is_cancelled (error))
        g_signal_emit (self, _owb_graph_view_signals[LAYOUT_FAILED], 0, error);
      return;
    }
  if (owb_graph_scene_get_graph (scene) != frame->graph)
    {
      /* The graph was updated while this one was laid out (the prepared session came). */
      if (!owb_graph_scene_rebind (scene, frame->graph, NULL))
        {
          owb_graph_scene_free (scene);
          _owb_graph_view_start_build (self);
          return;
        }
    }
  g_signal_emit (self, _owb_graph_view_signals[LAYOUT_PROGRESS], 0, 1.0, _("Done"));
  g_debug ("graph view: %u nodes laid out in %.0f ms (%u boxes, %u edges, %u blocks)", frame->graph->nodes->len,
           (g_get_monotonic_time () - self->build_started) / 1000.0, owb_graph_scene_get_n_nodes (scene),
           owb_graph_scene_get_n_edges (scene), owb_graph_scene_get_n_blocks (scene));
  self->first_draw_pending = TRUE;
  frame->scene = scene;
  self->scene = scene;
  _owb_graph_view_scene_changed (self);
  _owb_graph_view_place_initially (self);
  if (self->pending_select)
    owb_graph_view_select_node (self, g_steal_pointer (&self->pending_select));
}

void
_owb_graph_view_start_build (OwbGraphView *self)
{
  Frame *frame = _owb_graph_view_top_frame (self);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->build_serial++;
  self->build_deferred = FALSE;
  if (!frame)
    {
      _owb_graph_view_set_busy (self, FALSE);
      return;
    }
  if (!gtk_widget_get_mapped (GTK_WIDGET (self)))
    {
      self->build_deferred = TRUE;
      _owb_graph_view_set_busy (self, FALSE);
      return;
    }
  _owb_graph_view_ensure_metrics (self);
  self->cancellable = g_cancellable_new ();
  BuildData *build = g_new0 (BuildData, 1);
  build->graph = frame->graph;
  build->style = self->style;
  build->style.compact = self->compact;
  build->owner = owner_hold_ref (self->owner);
  build->serial = self->build_serial;
  self->build_started = g_get_monotonic_time ();
  self->build_n_nodes = frame->graph->nodes->len;

  g_autoptr (GTask) task = g_task_new (self, self->cancellable, build_done, NULL);
  g_task_set_source_tag (task, _owb_graph_view_start_build);
  g_task_set_task_data (task, build, build_data_free);
  g_task_set_return_on_cancel (task, FALSE);
  _owb_graph_view_set_busy (self, TRUE);
  progress_tick (self);
  g_clear_handle_id (&self->progress_source, g_source_remove);
  self->progress_source = g_timeout_add (500, progress_tick, self);
  g_task_run_in_thread (task, build_thread);
}

/* Called whenever another scene is shown or the scene's content changed (expand, collapse). */
void
_owb_graph_view_scene_changed (OwbGraphView *self)
{
  _owb_graph_view_invalidate_tiles (self);
  g_signal_emit (self, _owb_graph_view_signals[SCENE_CHANGED], 0);
  g_signal_emit (self, _owb_graph_view_signals[VIEWPORT_CHANGED], 0);
}

void
_owb_graph_view_clear_selection (OwbGraphView *self, gboolean notify)
{
  gboolean had = self->selected_node || self->selected_tensor;
  self->selected_node = NULL;
  self->selected_line_node = NULL;
  g_clear_pointer (&self->selected_tensor, g_free);
  self->overlays_valid = FALSE;
  if (had && notify)
    g_signal_emit (self, _owb_graph_view_signals[SELECTION_CHANGED], 0);
}

void
owb_graph_view_set_graph (OwbGraphView *self, const OwbGraph *graph, gpointer owner, GDestroyNotify owner_release)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  g_cancellable_cancel (self->cancellable);
  self->build_serial++;
  self->scene = NULL;
  /* Nodes of the old graph: nothing waits to be selected, no popover offers their bodies. */
  self->pending_select = NULL;
  if (self->branch_popover)
    gtk_popover_popdown (GTK_POPOVER (self->branch_popover));
  g_ptr_array_set_size (self->frames, 0);
  g_clear_pointer (&self->owner, owner_hold_unref);
  _owb_graph_view_clear_find (self);
  /* selection-changed comes last, when get_graph already answers the new graph */
  gboolean had_selection = self->selected_node || self->selected_tensor;
  _owb_graph_view_clear_selection (self, FALSE);
  g_clear_pointer (&self->highlight, g_hash_table_unref);
  _owb_graph_view_invalidate_tiles (self);

  if (graph)
    {
      self->owner = owner_hold_new (owner, owner_release);
      g_ptr_array_add (self->frames, _owb_graph_view_frame_new (graph, _("main")));
      _owb_graph_view_start_build (self);
    }
  else
    {
      if (owner_release && owner)
        owner_release (owner);
      _owb_graph_view_set_busy (self, FALSE);
    }
  g_signal_emit (self, _owb_graph_view_signals[PATH_CHANGED], 0);
  g_signal_emit (self, _owb_graph_view_signals[SCENE_CHANGED], 0);
  if (had_selection)
    g_signal_emit (self, _owb_graph_view_signals[SELECTION_CHANGED], 0);
}

static const OwbNode *
remap_node (GHashTable *node_map, const OwbNode *node)
{
  const OwbNode *moved = node ? g_hash_table_lookup (node_map, node) : NULL;
  return moved ? moved : node;
}

/* Moves the view's node pointers (selection, matches) to the rebound graph's nodes. */
static void
remap_nodes (OwbGraphView *self, GHashTable *node_map)
{
  const OwbNode *selected = self->selected_node;
  self->selected_node = remap_node (node_map, self->selected_node);
  self->selected_line_node = remap_node (node_map, self->selected_line_node);
  for (guint i = 0; self->matches && i < self->matches->len; i++)
    {
      OwbSceneMatch *match = self->matches->pdata[i];
      match->node = remap_node (node_map, match->node);
      for (guint k = 0; k < match->depth; k++)
        match->steps[k].owner = remap_node (node_map, match->steps[k].owner);
    }
  self->overlays_valid = FALSE;
  _owb_graph_view_invalidate_tiles (self);
  g_signal_emit (self, _owb_graph_view_signals[SCENE_CHANGED], 0);
  if (selected != self->selected_node)
    g_signal_emit (self, _owb_graph_view_signals[SELECTION_CHANGED], 0);
}

gboolean
owb_graph_view_update_graph (OwbGraphView *self, const OwbGraph *graph, gpointer owner, GDestroyNotify owner_release)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), FALSE);
  g_return_val_if_fail (graph != NULL, FALSE);
  Frame *main = self->frames->len ? g_ptr_array_index (self->frames, 0) : NULL;
  if (main == NULL || graph->nodes->len != main->graph->nodes->len ||
      graph->outputs->len != main->graph->outputs->len)
    return FALSE;
  if (main->scene == NULL && !self->busy)
    return FALSE;  /* a failed or cancelled layout: lay the new graph out instead */

  /* Subgraph levels show bodies of the old graph: back to the main one first. */
  if (self->frames->len > 1)
    owb_graph_view_go_to_path (self, 0);
  if (self->branch_popover)
    gtk_popover_popdown (GTK_POPOVER (self->branch_popover));
  if (main->scene != NULL)
    {
      g_autoptr (GHashTable) node_map = g_hash_table_new (g_direct_hash, g_direct_equal);
      if (!owb_graph_scene_rebind (main->scene, graph, node_map))
        return FALSE;
      main->graph = graph;
      remap_nodes (self, node_map);
    }
  else
    main->graph = graph;  /* build_done rebinds the scene being built to it */
  /* Matches inside bodies are nodes of the old graph's subgraphs: find them again. */
  if (self->find_query && _owb_graph_view_has_nested_matches (self))
    {
      g_ptr_array_unref (self->matches);
      self->matches = owb_graph_find_nested (graph, self->find_query);
      if (self->match_index >= (int) self->matches->len)
        self->match_index = self->matches->len ? 0 : -1;
      self->overlays_valid = FALSE;
      g_object_notify_by_pspec (G_OBJECT (self), _owb_graph_view_properties[PROP_N_MATCHES]);
      g_object_notify_by_pspec (G_OBJECT (self), _owb_graph_view_properties[PROP_MATCH_INDEX]);
    }
  /* The old owner goes last: the build still running, if any, holds it until it is done. */
  OwnerHold *old = g_steal_pointer (&self->owner);
  self->owner = owner_hold_new (owner, owner_release);
  owner_hold_unref (old);
  return TRUE;
}

const OwbGraph *
owb_graph_view_get_graph (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  Frame *frame = _owb_graph_view_top_frame (self);
  return frame ? frame->graph : NULL;
}

gboolean
owb_graph_view_get_busy (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), FALSE);
  return self->busy;
}

void
owb_graph_view_cancel (OwbGraphView *self)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (!self->busy)
    return;
  g_cancellable_cancel (self->cancellable);
  self->build_serial++;
  _owb_graph_view_set_busy (self, FALSE);
  /* A subgraph that was still being built is left: back to the level that has a scene. */
  if (self->frames->len > 1 && !_owb_graph_view_top_frame (self)->scene)
    owb_graph_view_go_to_path (self, self->frames->len - 2);
}

gboolean
owb_graph_view_relayout (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), FALSE);
  Frame *frame = _owb_graph_view_top_frame (self);
  if (!frame || self->busy)
    return FALSE;
  self->scene = NULL;
  g_clear_pointer (&frame->scene, owb_graph_scene_free);
  _owb_graph_view_invalidate_tiles (self);
  _owb_graph_view_start_build (self);
  g_signal_emit (self, _owb_graph_view_signals[SCENE_CHANGED], 0);
  return TRUE;
}

const OwbGraphScene *
owb_graph_view_get_scene (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  return self->scene;
}

gboolean
owb_graph_view_has_scene (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), FALSE);
  return self->scene != NULL;
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const char *const *) a, *(const char *const *) b);
}

char **
owb_graph_view_dup_providers (OwbGraphView *self, gboolean *has_unassigned)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) list = g_ptr_array_new ();
  gboolean unassigned = FALSE;
  const OwbGraph *graph = owb_graph_view_get_graph (self);
  for (guint i = 0; graph && i < graph->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (graph->nodes, i);
      if (!node->provider)
        unassigned = TRUE;
      else if (g_hash_table_add (seen, node->provider))
        g_ptr_array_add (list, g_strdup (node->provider));
    }
  g_ptr_array_sort (list, compare_strings);
  if (has_unassigned)
    *has_unassigned = unassigned;
  g_ptr_array_add (list, NULL);
  return (char **) g_ptr_array_steal (list, NULL);
}

/* ---- selection ---- */

const OwbNode *
owb_graph_view_get_selected_node (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  return self->selected_node;
}

const char *
owb_graph_view_get_selected_tensor (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  return self->selected_tensor;
}

/* A node a compact scene left out (a Constant, a weight's Identity) shows on the boxes that read
 * its value: the first of them, following chains of left-out nodes; -1 when none. */
int
_owb_graph_view_reader_box (OwbGraphView *self, const OwbNode *node)
{
  const OwbGraph *graph = owb_graph_scene_get_graph (self->scene);
  for (guint depth = 0; node && depth < 16; depth++)
    {
      const OwbNode *next = NULL;
      for (guint i = 0; i < graph->nodes->len && !next; i++)
        {
          const OwbNode *reader = g_ptr_array_index (graph->nodes, i);
          for (int k = 0; k < reader->n_inputs && !next; k++)
            for (int o = 0; o < node->n_outputs && !next; o++)
              if (node->outputs[o][0] && strcmp (reader->inputs[k], node->outputs[o]) == 0)
                next = reader;
        }
      int index = next ? owb_graph_scene_find_op (self->scene, next) : -1;
      if (index >= 0)
        return index;
      node = next;
    }
  return -1;
}

static void
reveal_and_center (OwbGraphView *self, const OwbNode *node)
{
  if (!self->scene)
    return;
  g_autoptr (GError) error = NULL;
  int before = owb_graph_scene_find_op (self->scene, node);
  if (before >= 0 && owb_graph_scene_get_node (self->scene, before)->kind == OWB_SCENE_GROUP)
    {
      if (!owb_graph_scene_reveal (self->scene, node, NULL, &error))
        {
          g_signal_emit (self, _owb_graph_view_signals[LAYOUT_FAILED], 0, error);
          return;
        }
      _owb_graph_view_scene_changed (self);
    }
  int index = owb_graph_scene_find_op (self->scene, node);
  if (index < 0)
    index = _owb_graph_view_reader_box (self, node);
  if (index < 0)
    return;
  const OwbSceneNode *box = owb_graph_scene_get_node (self->scene, index);
  /* Finding a node in a graph shown whole is no use if it is a speck: zoom to read it. */
  if (self->zoom < 0.7)
    {
      self->zoom = 1.0;
      g_object_notify_by_pspec (G_OBJECT (self), _owb_graph_view_properties[PROP_ZOOM]);
    }
  self->fit_pending = FALSE;
  _owb_graph_view_center_on (self, box->x + box->width / 2, box->y + box->height / 2);
}

void
_owb_graph_view_select_internal (OwbGraphView *self, const OwbNode *node, const char *tensor, const OwbNode *line_node)
{
  if (self->selected_node == node && self->selected_line_node == line_node &&
      g_strcmp0 (self->selected_tensor, tensor) == 0)
    return;
  self->selected_node = node;
  self->selected_line_node = line_node;
  g_free (self->selected_tensor);
  self->selected_tensor = g_strdup (tensor);
  self->overlays_valid = FALSE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  /* Screen readers see one "Graph" area: say what is selected in it. */
  g_autofree char *described = node ? owb_node_describe (node) : NULL;
  g_autofree char *description = described ? g_strdup_printf (_("Selected node: %s"), described)
                                 : tensor ? g_strdup_printf (_("Selected value: %s"), tensor)
                                          : NULL;
  if (description)
    gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, description, -1);
  else
    gtk_accessible_reset_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION);
  g_signal_emit (self, _owb_graph_view_signals[SELECTION_CHANGED], 0);
}

void
owb_graph_view_select_node (OwbGraphView *self, const OwbNode *node)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  _owb_graph_view_select_internal (self, node, NULL, NULL);
  if (node)
    reveal_and_center (self, node);
}

void
owb_graph_view_select_tensor (OwbGraphView *self, const char *name)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  _owb_graph_view_select_internal (self, NULL, name, NULL);
}

void
owb_graph_view_set_highlight (OwbGraphView *self, const char *const *node_names)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  g_clear_pointer (&self->highlight, g_hash_table_unref);
  if (node_names && node_names[0])
    {
      self->highlight = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      for (guint i = 0; node_names[i]; i++)
        g_hash_table_add (self->highlight, g_strdup (node_names[i]));
    }
  self->overlays_valid = FALSE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
owb_graph_view_set_layer (OwbGraphView *self, OwbGraphLayer *layer)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (layer == self->layer)
    return;
  if (layer)
    owb_graph_layer_ref (layer);
  g_clear_pointer (&self->layer, owb_graph_layer_unref);
  self->layer = layer;
  owb_graph_view_layer_changed (self);
}

OwbGraphLayer *
owb_graph_view_get_layer (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  return self->layer;
}

void
owb_graph_view_layer_changed (OwbGraphView *self)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  /* Tiles and the overview image hold the old colours. */
  if (self->tiles)
    _owb_graph_view_invalidate_tiles (self);
}

guint
owb_graph_view_get_n_highlighted (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), 0);
  _owb_graph_view_ensure_overlays (self);
  return self->scene ? self->ov_highlight->len : 0;
}

/* ---- compact ---- */

void
owb_graph_view_set_compact (OwbGraphView *self, gboolean compact)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (self->compact == !!compact)
    return;
  self->compact = !!compact;
  /* Every level is laid out again, the one on screen now, the others when shown. */
  for (guint i = 0; i < self->frames->len; i++)
    {
      Frame *frame = g_ptr_array_index (self->frames, i);
      g_clear_pointer (&frame->scene, owb_graph_scene_free);
      frame->placed = FALSE;
    }
  if (self->frames->len == 0)
    return;
  if (self->busy)
    {
      g_cancellable_cancel (self->cancellable);
      self->build_serial++;
      _owb_graph_view_set_busy (self, FALSE);
    }
  self->scene = NULL;
  self->overlays_valid = FALSE;
  _owb_graph_view_invalidate_tiles (self);
  _owb_graph_view_start_build (self);
  g_signal_emit (self, _owb_graph_view_signals[SCENE_CHANGED], 0);
}

gboolean
owb_graph_view_get_compact (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), FALSE);
  return self->compact;
}

/* ---- GtkWidget ---- */

static void
owb_graph_view_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (widget);
  /* What was asked before the view had a size, in the order it matters: place, _owb_graph_view_fit, centre. */
  if (self->place_pending)
    _owb_graph_view_place_initially (self);
  if (self->fit_pending)
    _owb_graph_view_fit (self);
  if (self->center_pending)
    {
      self->center_pending = FALSE;
      _owb_graph_view_center_on (self, self->center_x, self->center_y);
    }
  if (self->branch_popover)
    gtk_popover_present (GTK_POPOVER (self->branch_popover));
  g_signal_emit (self, _owb_graph_view_signals[VIEWPORT_CHANGED], 0);
}

static void
owb_graph_view_map (GtkWidget *widget)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (widget);
  GTK_WIDGET_CLASS (owb_graph_view_parent_class)->map (widget);
  if (self->build_deferred)
    _owb_graph_view_start_build (self);
}

static void
owb_graph_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                        int *natural, int *minimum_baseline, int *natural_baseline)
{
  *minimum = orientation == GTK_ORIENTATION_HORIZONTAL ? 160 : 120;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 640 : 480;
}

static void
owb_graph_view_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (widget);
  GTK_WIDGET_CLASS (owb_graph_view_parent_class)->css_changed (widget, change);
  self->palette_valid = FALSE;
  if (self->tiles)
    _owb_graph_view_invalidate_tiles (self);
}

static void
owb_graph_view_dispose (GObject *object)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (object);
  g_cancellable_cancel (self->cancellable);
  self->build_serial++;
  g_clear_handle_id (&self->progress_source, g_source_remove);
  self->scene = NULL;
  if (self->frames)
    g_ptr_array_set_size (self->frames, 0);
  g_clear_pointer (&self->owner, owner_hold_unref);
  if (self->tiles)
    g_hash_table_remove_all (self->tiles);
  g_clear_pointer (&self->branch_popover, gtk_widget_unparent);
  G_OBJECT_CLASS (owb_graph_view_parent_class)->dispose (object);
}

static void
owb_graph_view_finalize (GObject *object)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (object);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->frames, g_ptr_array_unref);
  g_clear_pointer (&self->tiles, g_hash_table_unref);
  g_clear_pointer (&self->overview, _owb_overview_free);
  g_clear_pointer (&self->labels, _owb_edge_labels_free);
  g_clear_object (&self->layout);
  g_clear_pointer (&self->selected_tensor, g_free);
  g_clear_pointer (&self->default_layer, owb_graph_layer_unref);
  g_clear_pointer (&self->highlight, g_hash_table_unref);
  g_clear_pointer (&self->layer, owb_graph_layer_unref);
  g_clear_pointer (&self->matches, g_ptr_array_unref);
  g_clear_pointer (&self->find_query, g_free);
  g_clear_pointer (&self->ov_highlight, g_array_unref);
  g_clear_pointer (&self->ov_matches, g_array_unref);
  g_clear_pointer (&self->ov_edges, g_array_unref);
  /* Last: running builds hold a reference on the view, so no thread measures with these now. */
  _owb_graph_view_metrics_free (self->metrics);
  G_OBJECT_CLASS (owb_graph_view_parent_class)->finalize (object);
}

static void
owb_graph_view_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (object);
  switch (prop_id)
    {
    case PROP_BUSY:
      g_value_set_boolean (value, self->busy);
      break;
    case PROP_ZOOM:
      g_value_set_double (value, self->zoom);
      break;
    case PROP_MATCH_INDEX:
      g_value_set_int (value, self->match_index);
      break;
    case PROP_N_MATCHES:
      g_value_set_uint (value, owb_graph_view_get_n_matches (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
owb_graph_view_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (object);
  switch (prop_id)
    {
    case PROP_ZOOM:
      owb_graph_view_set_zoom (self, g_value_get_double (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
owb_graph_view_class_init (OwbGraphViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = owb_graph_view_dispose;
  object_class->finalize = owb_graph_view_finalize;
  object_class->get_property = owb_graph_view_get_property;
  object_class->set_property = owb_graph_view_set_property;
  widget_class->snapshot = _owb_graph_view_snapshot;
  widget_class->measure = owb_graph_view_measure;
  widget_class->map = owb_graph_view_map;
  widget_class->size_allocate = owb_graph_view_size_allocate;
  widget_class->css_changed = owb_graph_view_css_changed;
  widget_class->query_tooltip = _owb_graph_view_query_tooltip;

  /* Shared with the other files of the view (owb-graph-view-private.h). */
  GParamSpec **properties = _owb_graph_view_properties;
  guint *signals = _owb_graph_view_signals;
  properties[PROP_BUSY] = g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_ZOOM] = g_param_spec_double ("zoom", NULL, NULL, MIN_ZOOM, MAX_ZOOM, 1.0,
                                               G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_MATCH_INDEX] = g_param_spec_int ("match-index", NULL, NULL, -1, G_MAXINT, -1,
                                                   G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_N_MATCHES] = g_param_spec_uint ("n-matches", NULL, NULL, 0, G_MAXUINT, 0,
                                                  G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  signals[LAYOUT_PROGRESS] = g_signal_new ("layout-progress", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                           NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_DOUBLE, G_TYPE_STRING);
  signals[LAYOUT_FAILED] = g_signal_new ("layout-failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                         NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
  signals[SELECTION_CHANGED] = g_signal_new ("selection-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                             NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[PATH_CHANGED] = g_signal_new ("path-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                        NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SCENE_CHANGED] = g_signal_new ("scene-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                         NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[VIEWPORT_CHANGED] = g_signal_new ("viewport-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                            NULL, NULL, NULL, G_TYPE_NONE, 0);

  _owb_graph_view_class_init_gestures (widget_class);

  gtk_widget_class_set_css_name (widget_class, "graphview");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
owb_graph_view_init (OwbGraphView *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  self->zoom = 1.0;
  self->draw_zoom = 1.0;
  self->match_index = -1;
  self->ov_selected = self->ov_current = self->ov_line_node = -1;
  self->frames = g_ptr_array_new_with_free_func (frame_free);
  self->tiles = _owb_graph_view_tiles_new ();
  self->ov_highlight = g_array_new (FALSE, FALSE, sizeof (int));
  self->ov_matches = g_array_new (FALSE, FALSE, sizeof (int));
  self->ov_edges = g_array_new (FALSE, FALSE, sizeof (guint));
  self->default_layer = owb_graph_layer_providers_new ();
  self->layout = gtk_widget_create_pango_layout (widget, NULL);
  pango_layout_set_ellipsize (self->layout, PANGO_ELLIPSIZE_END);
  pango_layout_set_single_paragraph_mode (self->layout, TRUE);

  gtk_widget_set_focusable (widget, TRUE);
  gtk_widget_set_has_tooltip (widget, TRUE);
  gtk_widget_set_overflow (widget, GTK_OVERFLOW_HIDDEN);
  gtk_widget_set_hexpand (widget, TRUE);
  gtk_widget_set_vexpand (widget, TRUE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Graph"), -1);
  gtk_widget_action_set_enabled (widget, "graph.find-next", FALSE);
  gtk_widget_action_set_enabled (widget, "graph.find-previous", FALSE);

  _owb_graph_view_init_gestures (self);
}

GtkWidget *
owb_graph_view_new (void)
{
  return g_object_new (OWB_TYPE_GRAPH_VIEW, NULL);
}
