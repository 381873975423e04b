/* owb-layout.h: a layered (Sugiyama-style) layout of a directed graph of boxes: rank assignment,
 * crossing reduction, coordinate assignment and routed edges. GTK-free; the graph canvas uses it
 * through owb-graph-scene.h, the tests and bench/ use it directly. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* The input: boxes (width × height, in scene units) and directed edges between them. Edges go
 * from a producer to a consumer; the layout draws them top to bottom. Cycles are allowed (some
 * edges are then drawn upwards), as are self loops and parallel edges. */
typedef struct _OwbLayoutGraph OwbLayoutGraph;

OwbLayoutGraph *owb_layout_graph_new (void);
void owb_layout_graph_free (OwbLayoutGraph *graph);
/* Returns the new node's index (0, 1, 2, ... in call order). */
guint owb_layout_graph_add_node (OwbLayoutGraph *graph, double width, double height);
/* Returns the new edge's index (0, 1, 2, ... in call order). */
guint owb_layout_graph_add_edge (OwbLayoutGraph *graph, guint from, guint to);
guint owb_layout_graph_get_n_nodes (const OwbLayoutGraph *graph);
guint owb_layout_graph_get_n_edges (const OwbLayoutGraph *graph);

typedef struct {
  double node_spacing;   /* horizontal gap between neighbouring boxes of a rank */
  double rank_spacing;   /* vertical gap between ranks */
  double edge_spacing;   /* horizontal room kept for an edge passing through a rank */
  guint ordering_sweeps; /* crossing-reduction sweeps (down and up count as two) */
} OwbLayoutOptions;

/* Fills in defaults fit for the graph canvas. */
void owb_layout_options_init (OwbLayoutOptions *options);

typedef struct _OwbLayout OwbLayout;

/* Lays the graph out. Deterministic: the same graph and options give the same coordinates.
 * options may be NULL (defaults). Returns NULL with G_IO_ERROR_CANCELLED when cancelled. */
OwbLayout *owb_layout_compute (const OwbLayoutGraph *graph, const OwbLayoutOptions *options,
                               GCancellable *cancellable, GError **error);
void owb_layout_free (OwbLayout *layout);

/* Top-left corner of node's box; all coordinates are >= 0. */
void owb_layout_get_node_position (const OwbLayout *layout, guint node, double *x, double *y);
/* The rank (layer) a node was put in, 0 at the top. */
guint owb_layout_get_node_rank (const OwbLayout *layout, guint node);
/* The route of an edge as n_points (x, y) pairs, from the bottom centre of the source box to the
 * top centre of the target box (or the reverse sides for an edge drawn upwards), with one bend
 * point per rank it passes. Borrowed; valid until owb_layout_free. */
const double *owb_layout_get_edge_points (const OwbLayout *layout, guint edge, guint *n_points);
/* Size of the bounding box of everything laid out. */
void owb_layout_get_size (const OwbLayout *layout, double *width, double *height);
/* Number of pairs of edge segments that cross between adjacent ranks (for tests and the bench). */
guint64 owb_layout_count_crossings (const OwbLayout *layout);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbLayoutGraph, owb_layout_graph_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbLayout, owb_layout_free)

G_END_DECLS
