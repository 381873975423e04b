/* owb-graph-view.h: the graph canvas. Draws an OwbGraphScene with GtkSnapshot (off-screen items
 * culled, detail reduced when zoomed out), pans and zooms, selects, finds, opens subgraphs in
 * place, and exports the view as PNG or SVG. Accessible name "Graph".
 *
 * Signals: "layout-progress" (double fraction, const char *text): the fraction is -1 while
 * unknown (the scene reports no steps; the text says what is laid out and for how long), 1 at
 * the end; "layout-failed" (GError *); "selection-changed"; "path-changed"; "scene-changed":
 * another scene is shown, or groups were expanded or collapsed; "viewport-changed": the zoom, the
 * scroll, the view's size or the scene changed.
 * Properties: "busy", "zoom", "match-index", "n-matches". */
#pragma once

#include <gtk/gtk.h>
#include <owb/owb.h>
#include "owb-graph-layer.h"
#include "owb-graph-scene.h"

G_BEGIN_DECLS

#define OWB_TYPE_GRAPH_VIEW (owb_graph_view_get_type ())
G_DECLARE_FINAL_TYPE (OwbGraphView, owb_graph_view, OWB, GRAPH_VIEW, GtkWidget)

GtkWidget *owb_graph_view_new (void);

/* Shows `graph`, building and laying out its scene in a worker thread (property "busy" is TRUE
 * meanwhile; signal "layout-progress" (double, const char *) reports it; "layout-failed" (GError *)
 * if it fails). `owner` keeps the graph alive: the view calls owner_release(owner) when it stops
 * showing it. graph NULL clears the view. */
void owb_graph_view_set_graph (OwbGraphView *self, const OwbGraph *graph, gpointer owner,
                               GDestroyNotify owner_release);
/* Shows `graph`, the graph on screen prepared again (the same nodes and values, maybe in another
 * order, now with provider claims), keeping the layout, the view, the selection and matches;
 * for a subgraph opened in place, goes back to the main graph. Takes `owner` as set_graph does.
 * FALSE (nothing taken, nothing changed) when the graphs differ: then set_graph it. */
gboolean owb_graph_view_update_graph (OwbGraphView *self, const OwbGraph *graph, gpointer owner,
                                      GDestroyNotify owner_release);
/* The graph on screen: the main graph, or the subgraph opened in place. */
const OwbGraph *owb_graph_view_get_graph (OwbGraphView *self);
/* The scene on screen (borrowed; NULL while building). Its indices change when groups toggle. */
const struct _OwbGraphScene *owb_graph_view_get_scene (OwbGraphView *self);
/* TRUE when a laid-out scene is on screen (FALSE while building, after a failure or cancel). */
gboolean owb_graph_view_has_scene (OwbGraphView *self);
gboolean owb_graph_view_get_busy (OwbGraphView *self);
void owb_graph_view_cancel (OwbGraphView *self);
/* Builds the scene of the graph on screen again (after a cancel or a failure); FALSE if busy. */
gboolean owb_graph_view_relayout (OwbGraphView *self);

/* The viewport. The zoom goes from 1/1048576 to 8; far out the view draws the scene's overview
 * image (a density image of the boxes) instead of the boxes themselves. */
double owb_graph_view_get_zoom (OwbGraphView *self);
void owb_graph_view_set_zoom (OwbGraphView *self, double zoom);
void owb_graph_view_zoom_in (OwbGraphView *self);
void owb_graph_view_zoom_out (OwbGraphView *self);
void owb_graph_view_zoom_to_fit (OwbGraphView *self);
/* Scene coordinates of the view's top-left corner; scrolling by widget pixels. */
void owb_graph_view_get_scroll (OwbGraphView *self, double *x, double *y);
void owb_graph_view_scroll_by (OwbGraphView *self, double dx, double dy);
/* Scrolls so that scene point (x, y) is at the centre of the view. */
void owb_graph_view_center_on (OwbGraphView *self, double x, double y);
/* Whether the view is so far out that it draws the overview image. */
gboolean owb_graph_view_get_drawing_overview (OwbGraphView *self);
/* The overview image of the scene (for the minimap), at least width × height pixels where it has
 * that many (borrowed; valid until the scene changes); NULL without a scene. It spans
 * extent_width × extent_height scene units from the scene's origin (the scene and a little
 * more). */
GdkTexture *owb_graph_view_get_overview (OwbGraphView *self, int width, int height, double *extent_width,
                                         double *extent_height);

/* Selection: a node, or a value (an edge, or an initializer line on a node). "selection-changed"
 * when either changes. select_node reveals the node (expanding groups) and scrolls to it. */
const OwbNode *owb_graph_view_get_selected_node (OwbGraphView *self);
const char *owb_graph_view_get_selected_tensor (OwbGraphView *self);
void owb_graph_view_select_node (OwbGraphView *self, const OwbNode *node);
void owb_graph_view_select_tensor (OwbGraphView *self, const char *name);
/* What a click (n_press 1) or double-click (2) at widget point (x, y) does: select the node, the
 * initializer line or the edge there (or clear the selection); double-click toggles a group or
 * opens a node's subgraph. For tests and assistive use; the view's gestures call it. */
void owb_graph_view_click (OwbGraphView *self, double x, double y, int n_press);

/* Draws the named nodes emphasised (provenance of a fused node, say); NULL clears. */
void owb_graph_view_set_highlight (OwbGraphView *self, const char *const *node_names);
/* Boxes drawn highlighted (a collapsed group counts once for all its highlighted members). */
guint owb_graph_view_get_n_highlighted (OwbGraphView *self);

/* Layers: an overlay colours op boxes (and badges them) instead of their provider colours; the
 * view takes a reference. NULL: back to the provider colours. layer_changed redraws after the
 * layer's colours changed. */
void owb_graph_view_set_layer (OwbGraphView *self, OwbGraphLayer *layer);
OwbGraphLayer *owb_graph_view_get_layer (OwbGraphView *self);
void owb_graph_view_layer_changed (OwbGraphView *self);
/* The providers of the nodes on screen, sorted, NULL-terminated (for the legend); has_unassigned
 * says whether some nodes have none. */
char **owb_graph_view_dup_providers (OwbGraphView *self, gboolean *has_unassigned);

/* Find: returns the number of matches (node name, op type or tensor name) in the graph on
 * screen and in every subgraph below it, and selects the first; next/previous wrap around. A
 * match inside a subgraph opens the subgraphs down to it and is selected once drawn. */
guint owb_graph_view_find (OwbGraphView *self, const char *query);
void owb_graph_view_find_next (OwbGraphView *self);
void owb_graph_view_find_previous (OwbGraphView *self);
guint owb_graph_view_get_n_matches (OwbGraphView *self);
/* 0-based index of the current match, -1 when none. */
int owb_graph_view_get_match_index (OwbGraphView *self);
/* Match `index` (borrowed; its path is relative to the level find was called on), or NULL. */
const OwbSceneMatch *owb_graph_view_get_match (OwbGraphView *self, guint index);
/* Makes match `index` the current one and shows it, as next/previous do. */
void owb_graph_view_set_match_index (OwbGraphView *self, guint index);

/* Subgraphs (If/Loop/Scan bodies) open in place; the path is the breadcrumb back ("main", then
 * "Loop_7 › body", ...); "path-changed" when it changes. Opening one clears the selection (and
 * emits "selection-changed"); going back shows the selection the graph had when it was left.
 * A double-click opens the subgraph whose line ("then_branch: 6 nodes") it is on; elsewhere on
 * a node with several, a popover (get_subgraph_chooser; NULL until first shown) asks which. */
void owb_graph_view_open_subgraph (OwbGraphView *self, const OwbNode *node, const char *attribute);
guint owb_graph_view_get_path_length (OwbGraphView *self);
const char *owb_graph_view_get_path_label (OwbGraphView *self, guint index);
void owb_graph_view_go_to_path (OwbGraphView *self, guint index);
/* The subgraph on screen named by its path ("If_3 › then_branch"); NULL on the main graph. */
char *owb_graph_view_dup_path_title (OwbGraphView *self);
GtkWidget *owb_graph_view_get_subgraph_chooser (OwbGraphView *self);

/* Compact: Constant nodes and ops that read only initializers (a weight's Identity, Transpose,
 * DequantizeLinear) have no box; their values show on the boxes that read them, as weights do
 * (OwbSceneStyle.compact). Changing it lays the graph out again. Off by default. */
void owb_graph_view_set_compact (OwbGraphView *self, gboolean compact);
gboolean owb_graph_view_get_compact (OwbGraphView *self);

/* The whole graph (not just what is on screen) as an image: a texture at scale 1, or smaller so
 * no side passes max_side pixels; a PNG file; an SVG file (drawn from the scene, not a bitmap). */
GdkTexture *owb_graph_view_render_texture (OwbGraphView *self, double max_side, GError **error);
gboolean owb_graph_view_export_png (OwbGraphView *self, GFile *file, GError **error);
gboolean owb_graph_view_export_svg (OwbGraphView *self, GFile *file, GError **error);

G_END_DECLS
