/* owb-layout-position.c: x coordinates for the layered layout, after Brandes and Köpf ("Fast and
 * Simple Horizontal Coordinate Assignment"): nodes are aligned into vertical blocks with a median
 * neighbour, long edges first; blocks are packed as far as their rank neighbours allow; the four
 * combinations of up/down and left/right are balanced. The straight blocks of the result then
 * settle towards their neighbours and a common centre line, so that a long network stays one
 * column. Chains come out straight and parents centred over their children, in time linear in
 * the size of the layered graph (per settling sweep). */
#include "owb-layout-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct
{
  OwbLayoutWork *w;
  double node_spacing;
  /* Neighbours above (in) and below (out) each node, sorted by position: node and segment. */
  guint *up_node, *up_seg, *down_node, *down_seg;
  gboolean *marked; /* per segment: a non-inner segment crossing an inner one (type 1 conflict) */
  guint *root, *align;
  /* The block packing: constraint edges between blocks, by source block. */
  guint *cons_start, *cons_to;
  double *cons_sep;
  guint *indeg, *queue;
  double *bx;
} Positioner;

static guint
layer_size (const OwbLayoutWork *w, guint r)
{
  return w->layer_start[r + 1] - w->layer_start[r];
}

static int
compare_u64 (const void *a, const void *b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;
  return (x > y) - (x < y);
}

/* Copies each node's adjacency list sorted by the neighbours' positions. */
static void
sort_by_pos (const OwbLayoutWork *w, const guint *start, const guint *node, const guint *seg,
             guint *sorted_node, guint *sorted_seg, guint64 *scratch)
{
  for (guint v = 0; v < w->n_nodes; v++)
    {
      guint a = start[v], d = start[v + 1] - a;
      for (guint k = 0; k < d; k++)
        scratch[k] = ((guint64) w->pos[node[a + k]] << 32) | k;
      if (d > 16)
        qsort (scratch, d, sizeof (guint64), compare_u64);
      else
        for (guint i = 1; i < d; i++)
          {
            guint64 x = scratch[i];
            guint j = i;
            for (; j > 0 && scratch[j - 1] > x; j--)
              scratch[j] = scratch[j - 1];
            scratch[j] = x;
          }
      for (guint k = 0; k < d; k++)
        {
          guint from = a + (guint) (scratch[k] & 0xffffffffu);
          sorted_node[a + k] = node[from];
          sorted_seg[a + k] = seg[from];
        }
    }
}

/* A segment between two dummies: part of a long edge's trunk. */
static gboolean
is_inner (const OwbLayoutWork *w, guint seg)
{
  return _owb_layout_is_dummy (w, w->seg_from[seg]) && _owb_layout_is_dummy (w, w->seg_to[seg]);
}

/* Type 1 conflicts: a segment with a real end crossing a segment between two dummies loses, so
 * that long edges stay straight and the short edges bend around them. One scan per rank pair. */
static void
mark_conflicts (Positioner *p)
{
  OwbLayoutWork *w = p->w;
  for (guint r = 1; r + 1 < w->n_ranks; r++)
    {
      guint upper_last = layer_size (w, r) - 1;
      guint base = w->layer_start[r + 1], m = layer_size (w, r + 1);
      guint k0 = 0, l = 0;
      for (guint l1 = 0; l1 < m; l1++)
        {
          guint v = w->order[base + l1];
          guint inner_upper = G_MAXUINT;
          if (_owb_layout_is_dummy (w, v))
            for (guint k = w->in_start[v]; k < w->in_start[v + 1]; k++)
              if (is_inner (w, p->up_seg[k]))
                inner_upper = p->up_node[k];
          if (l1 + 1 != m && inner_upper == G_MAXUINT)
            continue;
          guint k1 = inner_upper != G_MAXUINT ? w->pos[inner_upper] : upper_last;
          for (; l <= l1; l++)
            {
              guint u = w->order[base + l];
              for (guint k = w->in_start[u]; k < w->in_start[u + 1]; k++)
                {
                  guint pu = w->pos[p->up_node[k]];
                  if ((pu < k0 || pu > k1) && !is_inner (w, p->up_seg[k]))
                    p->marked[p->up_seg[k]] = TRUE;
                }
            }
          k0 = k1;
        }
    }
}

/* Centre distance two rank neighbours need: half of each box, and the gap between them. An edge
 * passing a box keeps half the node spacing from it; edges side by side need only their own
 * width (edge_spacing, the dummies' width). */
static double
separation (const Positioner *p, guint a, guint b)
{
  const OwbLayoutWork *w = p->w;
  gboolean da = _owb_layout_is_dummy (w, a), db = _owb_layout_is_dummy (w, b);
  double gap = da && db ? 0 : da || db ? p->node_spacing / 2 : p->node_spacing;
  return (w->width[a] + w->width[b]) / 2 + gap;
}

/* One of the four layouts: aligned with upper (down) or lower neighbours, packed to the left or
 * the right. Writes centres into xs, in the direction's own frame (x grows to the right). */
static gboolean
place_one (Positioner *p, gboolean down, gboolean left, double *xs)
{
  OwbLayoutWork *w = p->w;
  guint n = w->n_nodes;
  for (guint v = 0; v < n; v++)
    p->root[v] = p->align[v] = v;

  /* Vertical alignment: each node, in the direction's order, joins the block of its median
   * neighbour when that does not cross an alignment made before in this rank, nor a conflict. */
  const guint *start = down ? w->in_start : w->out_start;
  const guint *nbr = down ? p->up_node : p->down_node;
  const guint *nseg = down ? p->up_seg : p->down_seg;
  for (guint step = 1; step < w->n_ranks; step++)
    {
      guint r = down ? step : w->n_ranks - 1 - step;
      guint base = w->layer_start[r], m = layer_size (w, r);
      gint64 last = left ? -1 : G_MAXINT64;
      for (guint i = 0; i < m; i++)
        {
          guint v = w->order[base + (left ? i : m - 1 - i)];
          guint d = start[v + 1] - start[v];
          if (d == 0)
            continue;
          guint medians[2] = { (d - 1) / 2, d / 2 };
          if (!left)
            medians[0] = d / 2, medians[1] = (d - 1) / 2;
          for (guint k = 0; k < (d % 2 ? 1u : 2u); k++)
            {
              if (p->align[v] != v)
                break;
              guint u = nbr[start[v] + medians[k]];
              gint64 pu = w->pos[u];
              if (p->marked[nseg[start[v] + medians[k]]] || (left ? last >= pu : last <= pu))
                continue;
              p->align[u] = v;
              p->root[v] = p->root[u];
              p->align[v] = p->root[v];
              last = pu;
            }
        }
    }

  /* Horizontal packing: the blocks with "must be right of" constraints from rank neighbours form
   * a DAG (alignments never cross); a longest path in it puts each block as far left as it can. */
  memset (p->cons_start, 0, sizeof (guint) * (n + 1));
  memset (p->indeg, 0, sizeof (guint) * n);
  for (guint r = 0; r < w->n_ranks; r++)
    for (guint i = w->layer_start[r] + 1; i < w->layer_start[r + 1]; i++)
      {
        guint a = w->order[left ? i - 1 : i], b = w->order[left ? i : i - 1];
        p->cons_start[p->root[a] + 1]++;
        p->indeg[p->root[b]]++;
      }
  for (guint v = 0; v < n; v++)
    p->cons_start[v + 1] += p->cons_start[v];
  g_autofree guint *fill = g_memdup2 (p->cons_start, sizeof (guint) * MAX (n, 1));
  for (guint r = 0; r < w->n_ranks; r++)
    for (guint i = w->layer_start[r] + 1; i < w->layer_start[r + 1]; i++)
      {
        guint a = w->order[left ? i - 1 : i], b = w->order[left ? i : i - 1];
        guint slot = fill[p->root[a]]++;
        p->cons_to[slot] = p->root[b];
        p->cons_sep[slot] = separation (p, a, b);
      }
  guint head = 0, tail = 0, n_blocks = 0;
  for (guint v = 0; v < n; v++)
    {
      p->bx[v] = 0;
      if (p->root[v] != v)
        continue;
      n_blocks++;
      if (p->indeg[v] == 0)
        p->queue[tail++] = v;
    }
  while (head < tail)
    {
      guint b = p->queue[head++];
      for (guint k = p->cons_start[b]; k < p->cons_start[b + 1]; k++)
        {
          guint c = p->cons_to[k];
          p->bx[c] = MAX (p->bx[c], p->bx[b] + p->cons_sep[k]);
          if (--p->indeg[c] == 0)
            p->queue[tail++] = c;
        }
    }
  if (tail != n_blocks)
    return FALSE; /* crossing alignments: cannot happen, but never overlap boxes if it did */
  for (guint v = 0; v < n; v++)
    xs[v] = left ? p->bx[p->root[v]] : -p->bx[p->root[v]];
  return TRUE;
}

/* Each rank packed and centred on one line: the fallback if the alignment ever failed. */
static void
place_packed (OwbLayoutWork *w, const Positioner *p)
{
  for (guint r = 0; r < w->n_ranks; r++)
    for (guint i = w->layer_start[r]; i < w->layer_start[r + 1]; i++)
      {
        guint v = w->order[i];
        w->x[v] = i == w->layer_start[r] ? 0 : w->x[w->order[i - 1]] + separation (p, w->order[i - 1], v);
      }
  /* Each rank centred on 0. */
  for (guint r = 0; r < w->n_ranks; r++)
    {
      guint a = w->order[w->layer_start[r]], b = w->order[w->layer_start[r + 1] - 1];
      double mid = (w->x[a] - w->width[a] / 2 + w->x[b] + w->width[b] / 2) / 2;
      for (guint i = w->layer_start[r]; i < w->layer_start[r + 1]; i++)
        w->x[w->order[i]] -= mid;
    }
}

/* Weight of a segment when blocks settle: long edges (between dummies) most, so that they stay
 * straight, then edges that pass into or out of a dummy, then the short edges (as in dot). */
static double
segment_weight (const OwbLayoutWork *w, guint a, guint b)
{
  guint dummies = _owb_layout_is_dummy (w, a) + _owb_layout_is_dummy (w, b);
  return dummies == 2 ? 8 : dummies == 1 ? 2 : 1;
}

/* How strongly each node is pulled towards the common centre line, against segment weights of
 * 1 to 8: enough to keep a long graph from wandering, too little to bend its edges. */
#define ANCHOR_WEIGHT 1.0
#define SETTLE_SWEEPS 8
/* Then sweeps that minimise the weighted horizontal length itself (not its square). */
#define SNAP_SWEEPS 2
#define SNAP_ANCHOR_WEIGHT 0.25
#define TRUNK_PIECE 8

typedef struct
{
  double x;
  guint node;
} BlockKey;

typedef struct
{
  double x;
  double weight;
} Pull;

static int
compare_pull (const void *a, const void *b)
{
  const Pull *p = a, *q = b;
  return (p->x > q->x) - (p->x < q->x);
}

static int
compare_block_key (const void *a, const void *b)
{
  const BlockKey *p = a, *q = b;
  if (p->x != q->x)
    return p->x < q->x ? -1 : 1;
  return (p->node > q->node) - (p->node < q->node);
}

/* The balanced layout keeps chains straight but lets a long graph wander sideways: straight
 * blocks only ever push each other apart. Here the straight runs of that layout (a node and a
 * neighbour right above it at the same x; long edges cut into pieces) move as rigid blocks,
 * one at a time, to where their other edges and a weak pull to the centre line want them, within
 * the room their rank neighbours leave: chains stay exactly straight, boxes never overlap, the
 * wandering goes. The last sweeps snap blocks under or over a neighbour where that is cheaper. */
static void
settle_blocks (OwbLayoutWork *w, const Positioner *p, double centre, GCancellable *cancellable)
{
  guint n = w->n_nodes;
  g_autofree guint *broot = g_new (guint, n);
  g_autofree guint *bnext = g_new (guint, n);
  g_autofree gboolean *taken = g_new0 (gboolean, n);
  g_autofree guint *run = g_new (guint, n); /* length of the block down to this node */
  g_autofree BlockKey *blocks = g_new (BlockKey, n);
  guint n_blocks = 0;
  for (guint i = 0; i < n; i++)
    {
      guint v = w->order[i]; /* rank by rank, top down */
      broot[v] = v;
      bnext[v] = G_MAXUINT;
      run[v] = 1;
      for (guint k = w->in_start[v]; k < w->in_start[v + 1]; k++)
        {
          guint u = w->in_node[k];
          /* A trunk is cut where a branch leaves it and every TRUNK_PIECE ranks, so that past
           * a wide stretch of the graph it can come back in, with a bend. */
          gboolean cut = _owb_layout_is_dummy (w, u)
                         && (w->out_start[u + 1] - w->out_start[u] > 1 || run[u] >= TRUNK_PIECE);
          if (!taken[u] && !cut && fabs (w->x[u] - w->x[v]) < 1e-6)
            {
              taken[u] = TRUE;
              bnext[u] = v;
              broot[v] = broot[u];
              run[v] = run[u] + 1;
              w->x[v] = w->x[u];
              break;
            }
        }
      if (broot[v] == v)
        blocks[n_blocks++] = (BlockKey){ w->x[v], v };
    }
  qsort (blocks, n_blocks, sizeof (BlockKey), compare_block_key);
  g_autofree Pull *pulls = g_new (Pull, 2 * w->n_segs + n + 1);

  for (guint sweep = 0; sweep < SETTLE_SWEEPS + SNAP_SWEEPS; sweep++)
    {
      if (g_cancellable_is_cancelled (cancellable))
        return;
      for (guint j = 0; j < n_blocks; j++)
        {
          guint b = blocks[sweep % 2 == 0 ? j : n_blocks - 1 - j].node;
          double sw = 0, swt = 0, lo = -G_MAXDOUBLE, hi = G_MAXDOUBLE;
          guint n_pulls = 0;
          for (guint v = b; v != G_MAXUINT; v = bnext[v])
            {
              for (guint k = w->in_start[v]; k < w->in_start[v + 1]; k++)
                if (broot[w->in_node[k]] != b)
                  {
                    double wt = segment_weight (w, w->in_node[k], v);
                    sw += wt;
                    swt += wt * w->x[w->in_node[k]];
                    pulls[n_pulls++] = (Pull){ w->x[w->in_node[k]], wt };
                  }
              for (guint k = w->out_start[v]; k < w->out_start[v + 1]; k++)
                if (broot[w->out_node[k]] != b)
                  {
                    double wt = segment_weight (w, v, w->out_node[k]);
                    sw += wt;
                    swt += wt * w->x[w->out_node[k]];
                    pulls[n_pulls++] = (Pull){ w->x[w->out_node[k]], wt };
                  }
              sw += ANCHOR_WEIGHT;
              swt += ANCHOR_WEIGHT * centre;
              guint base = w->layer_start[w->rank[v]], i = w->pos[v];
              if (i > 0)
                {
                  guint a = w->order[base + i - 1];
                  lo = MAX (lo, w->x[a] + separation (p, a, v));
                }
              if (base + i + 1 < w->layer_start[w->rank[v] + 1])
                {
                  guint c = w->order[base + i + 1];
                  hi = MIN (hi, w->x[c] - separation (p, v, c));
                }
            }
          if (sweep >= SETTLE_SWEEPS)
            {
              /* Snapping: the weighted median of the pulls instead of their mean, which puts
               * the block right under or over one of its neighbours (a straight edge) rather
               * than between them. */
              double len = 0;
              for (guint v = b; v != G_MAXUINT; v = bnext[v])
                len += 1;
              pulls[n_pulls++] = (Pull){ centre, SNAP_ANCHOR_WEIGHT * len };
              qsort (pulls, n_pulls, sizeof (Pull), compare_pull);
              double total = 0, acc = 0;
              for (guint k = 0; k < n_pulls; k++)
                total += pulls[k].weight;
              guint k = 0;
              for (; k + 1 < n_pulls && (acc += pulls[k].weight) < total / 2; k++)
                ;
              /* Exactly half on each side: any point between is as good; take the middle. */
              double med = pulls[k].x;
              if (acc == total / 2 && k + 1 < n_pulls)
                med = (pulls[k].x + pulls[k + 1].x) / 2;
              swt = med * sw;
            }
          double t = CLAMP (swt / sw, lo, hi);
          if (lo > hi)
            continue; /* rounding: leave it where it is */
          for (guint v = b; v != G_MAXUINT; v = bnext[v])
            w->x[v] = t;
        }
    }
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

gboolean
_owb_layout_position (OwbLayoutWork *w, const OwbLayoutOptions *options, GCancellable *cancellable)
{
  guint n = w->n_nodes;
  if (n == 0)
    return !g_cancellable_is_cancelled (cancellable);

  Positioner p = { .w = w, .node_spacing = MAX (options->node_spacing, 0) };
  guint max_deg = 1;
  for (guint v = 0; v < n; v++)
    {
      max_deg = MAX (max_deg, w->in_start[v + 1] - w->in_start[v]);
      max_deg = MAX (max_deg, w->out_start[v + 1] - w->out_start[v]);
    }
  g_autofree guint64 *scratch = g_new (guint64, max_deg);
  guint n_segs = MAX (w->n_segs, 1);
  p.up_node = g_new (guint, n_segs);
  p.up_seg = g_new (guint, n_segs);
  p.down_node = g_new (guint, n_segs);
  p.down_seg = g_new (guint, n_segs);
  sort_by_pos (w, w->in_start, w->in_node, w->in_seg, p.up_node, p.up_seg, scratch);
  sort_by_pos (w, w->out_start, w->out_node, w->out_seg, p.down_node, p.down_seg, scratch);
  p.marked = g_new0 (gboolean, n_segs);
  mark_conflicts (&p);
  p.root = g_new (guint, n);
  p.align = g_new (guint, n);
  p.cons_start = g_new (guint, n + 1);
  p.cons_to = g_new (guint, n);
  p.cons_sep = g_new (double, n);
  p.indeg = g_new (guint, n);
  p.queue = g_new (guint, n);
  p.bx = g_new (double, n);

  double *xs[4];
  gboolean ok = TRUE, cancelled = FALSE;
  for (guint k = 0; k < 4; k++)
    xs[k] = g_new (double, n);
  for (guint k = 0; k < 4 && ok; k++)
    {
      if (g_cancellable_is_cancelled (cancellable))
        {
          cancelled = TRUE;
          break;
        }
      ok = place_one (&p, k < 2, k % 2 == 0, xs[k]);
    }

  if (cancelled)
    ;
  else if (!ok)
    place_packed (w, &p);
  else
    {
      /* Balance: align the four to the narrowest (left ones by their left side, right ones by
       * their right side) and take, per node, the mean of the two middle values. Each of the four
       * keeps every rank's spacing, and so does that mean of order statistics. */
      double lo[4], hi[4];
      guint narrowest = 0;
      for (guint k = 0; k < 4; k++)
        {
          lo[k] = G_MAXDOUBLE;
          hi[k] = -G_MAXDOUBLE;
          for (guint v = 0; v < n; v++)
            {
              lo[k] = MIN (lo[k], xs[k][v] - w->width[v] / 2);
              hi[k] = MAX (hi[k], xs[k][v] + w->width[v] / 2);
            }
          if (hi[k] - lo[k] < hi[narrowest] - lo[narrowest])
            narrowest = k;
        }
      double shift[4];
      for (guint k = 0; k < 4; k++)
        shift[k] = k % 2 == 0 ? lo[narrowest] - lo[k] : hi[narrowest] - hi[k];
      for (guint v = 0; v < n; v++)
        {
          double c[4];
          for (guint k = 0; k < 4; k++)
            c[k] = xs[k][v] + shift[k];
          qsort (c, 4, sizeof (double), compare_double);
          w->x[v] = (c[1] + c[2]) / 2;
        }
    }

  if (!cancelled)
    {
      double centre = 0;
      for (guint v = 0; v < n; v++)
        centre += w->x[v];
      settle_blocks (w, &p, centre / n, cancellable);
      cancelled = g_cancellable_is_cancelled (cancellable);
    }
  if (!cancelled)
    {
      double min_left = G_MAXDOUBLE;
      for (guint v = 0; v < n; v++)
        min_left = MIN (min_left, w->x[v] - w->width[v] / 2);
      for (guint v = 0; v < n; v++)
        w->x[v] -= min_left;
    }

  for (guint k = 0; k < 4; k++)
    g_free (xs[k]);
  g_free (p.up_node);
  g_free (p.up_seg);
  g_free (p.down_node);
  g_free (p.down_seg);
  g_free (p.marked);
  g_free (p.root);
  g_free (p.align);
  g_free (p.cons_start);
  g_free (p.cons_to);
  g_free (p.cons_sep);
  g_free (p.indeg);
  g_free (p.queue);
  g_free (p.bx);
  return !cancelled;
}
