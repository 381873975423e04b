/* owb-layout-private.h: the working state shared by the three stages of the layered layout
 * (ranks and dummies in owb-layout.c, ordering in owb-layout-order.c, coordinates in
 * owb-layout-position.c), and a few numbers the bench reads. Not for the scene or the UI. */
#pragma once

#include "owb-layout.h"

G_BEGIN_DECLS

struct _OwbLayoutGraph
{
  GArray *sizes; /* double pairs: width, height */
  GArray *edges; /* guint pairs: from, to */
};

/* The "proper" layered graph: the input's nodes (0 .. n_real-1) followed by one dummy node per
 * rank that a long edge passes, so that every segment joins two adjacent ranks. Built once by
 * owb-layout.c; the order stage permutes `order`/`pos`, the position stage fills `x`. */
typedef struct
{
  guint n_nodes;   /* real + dummy */
  guint n_real;
  double *width;   /* per node; a dummy is edge_spacing wide, 0 high */
  double *height;
  guint *rank;
  guint n_ranks;

  /* Segments, each from a node of rank r to one of rank r+1; no two join the same pair. */
  guint n_segs;
  guint *seg_from;
  guint *seg_to;
  /* CSR adjacency, by source (out) and by target (in): neighbour node and segment index. */
  guint *out_start; /* n_nodes + 1 */
  guint *out_node;
  guint *out_seg;
  guint *in_start;
  guint *in_node;
  guint *in_seg;

  /* Layers: order[layer_start[r] .. layer_start[r + 1]) lists rank r left to right. */
  guint *layer_start; /* n_ranks + 1 */
  guint *order;       /* n_nodes */
  guint *pos;         /* node -> index within its layer */

  double *x; /* centre x of each node, filled by the position stage */
} OwbLayoutWork;

static inline gboolean
_owb_layout_is_dummy (const OwbLayoutWork *w, guint v)
{
  return v >= w->n_real;
}

/* Crossing reduction: sets order/pos. FALSE when cancelled. */
gboolean _owb_layout_order (OwbLayoutWork *w, guint sweeps, GCancellable *cancellable);
/* Crossings of the current order, over all pairs of adjacent ranks, in O(E log V). */
guint64 _owb_layout_count_crossings (const OwbLayoutWork *w);
/* Horizontal coordinates (centres) into w->x, left edge of everything at 0. FALSE when cancelled. */
gboolean _owb_layout_position (OwbLayoutWork *w, const OwbLayoutOptions *options,
                               GCancellable *cancellable);

/* For the bench: dummy nodes the last compute of this layout made, and its number of ranks. */
guint owb_layout_get_n_dummies (const OwbLayout *layout);
guint owb_layout_get_n_ranks (const OwbLayout *layout);

G_END_DECLS
