/* owb-graph-view.h: the graph canvas. Draws an OwbGraphScene with GtkSnapshot (off-screen items
 * culled, detail reduced when zoomed out), pans and zooms, selects, finds, opens subgraphs in
 * place, and exports the view as PNG or SVG. Accessible name "Graph". */
#pragma once

#include <gtk/gtk.h>
#include <owb/owb.h>

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
/* The graph on screen: the main graph, or the subgraph opened in place. */
const OwbGraph *owb_graph_view_get_graph (OwbGraphView *self);
gboolean owb_graph_view_get_busy (OwbGraphView *self);
void owb_graph_view_cancel (OwbGraphView *self);

double owb_graph_view_get_zoom (OwbGraphView *self);
void owb_graph_view_set_zoom (OwbGraphView *self, double zoom);
void owb_graph_view_zoom_in (OwbGraphView *self);
void owb_graph_view_zoom_out (OwbGraphView *self);
void owb_graph_view_zoom_to_fit (OwbGraphView *self);

/* Selection: a node, or a value (an edge, or an initializer line on a node). "selection-changed"
 * when either changes. select_node reveals the node (expanding groups) and scrolls to it. */
const OwbNode *owb_graph_view_get_selected_node (OwbGraphView *self);
const char *owb_graph_view_get_selected_tensor (OwbGraphView *self);
void owb_graph_view_select_node (OwbGraphView *self, const OwbNode *node);
void owb_graph_view_select_tensor (OwbGraphView *self, const char *name);

/* Draws the named nodes emphasised (provenance of a fused node, say); NULL clears. */
void owb_graph_view_set_highlight (OwbGraphView *self, const char *const *node_names);

/* Find: returns the number of matches (node name, op type or tensor name) and selects the first;
 * next/previous wrap around. */
guint owb_graph_view_find (OwbGraphView *self, const char *query);
void owb_graph_view_find_next (OwbGraphView *self);
void owb_graph_view_find_previous (OwbGraphView *self);
/* 0-based index of the current match, -1 when none. */
int owb_graph_view_get_match_index (OwbGraphView *self);

/* Subgraphs (If/Loop/Scan bodies) open in place; the path is the breadcrumb back ("main", then
 * "Loop 'loop1' › body", ...); "path-changed" when it changes. */
void owb_graph_view_open_subgraph (OwbGraphView *self, const OwbNode *node, const char *attribute);
guint owb_graph_view_get_path_length (OwbGraphView *self);
const char *owb_graph_view_get_path_label (OwbGraphView *self, guint index);
void owb_graph_view_go_to_path (OwbGraphView *self, guint index);

/* The whole graph (not just what is on screen) as an image. */
gboolean owb_graph_view_export_png (OwbGraphView *self, GFile *file, GError **error);
gboolean owb_graph_view_export_svg (OwbGraphView *self, GFile *file, GError **error);

G_END_DECLS
