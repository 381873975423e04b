/* owb-layout.c: the layered layout's input graph, its result, and the first stages: cycle
 * breaking, rank assignment and dummy nodes; ordering and coordinates live in owb-layout-order.c
 * and owb-layout-position.c. */
#include "owb-layout-private.h"

#include <math.h>
#include <string.h>

struct _OwbLayout
{
  guint n_nodes;
  guint n_edges;
  double *node_x; /* top-left corners */
  double *node_y;
  guint *node_rank;
  guint *edge_start; /* n_edges + 1: edge e's points are points[2 * edge_start[e] ..] */
  double *points;
  double width;
  double height;
  guint64 crossings;
  guint n_dummies;
  guint n_ranks;
};

OwbLayoutGraph *
owb_layout_graph_new (void)
{
  OwbLayoutGraph *graph = g_new0 (OwbLayoutGraph, 1);
  graph->sizes = g_array_new (FALSE, FALSE, sizeof (double));
  graph->edges = g_array_new (FALSE, FALSE, sizeof (guint));
  return graph;
}

void
owb_layout_graph_free (OwbLayoutGraph *graph)
{
  if (graph == NULL)
    return;
  g_array_unref (graph->sizes);
  g_array_unref (graph->edges);
  g_free (graph);
}

guint
owb_layout_graph_add_node (OwbLayoutGraph *graph, double width, double height)
{
  g_return_val_if_fail (graph != NULL, 0);
  /* A negative or NaN size would break the spacing arithmetic; treat it as an empty box. */
  double size[2] = { width > 0 ? width : 0, height > 0 ? height : 0 };
  g_array_append_vals (graph->sizes, size, 2);
  return graph->sizes->len / 2 - 1;
}

guint
owb_layout_graph_add_edge (OwbLayoutGraph *graph, guint from, guint to)
{
  g_return_val_if_fail (graph != NULL, 0);
  g_return_val_if_fail (from < graph->sizes->len / 2 && to < graph->sizes->len / 2, 0);
  guint ends[2] = { from, to };
  g_array_append_vals (graph->edges, ends, 2);
  return graph->edges->len / 2 - 1;
}

guint
owb_layout_graph_get_n_nodes (const OwbLayoutGraph *graph)
{
  return graph->sizes->len / 2;
}

guint
owb_layout_graph_get_n_edges (const OwbLayoutGraph *graph)
{
  return graph->edges->len / 2;
}

void
owb_layout_options_init (OwbLayoutOptions *options)
{
  options->node_spacing = 24;
  options->rank_spacing = 40;
  options->edge_spacing = 12;
  options->ordering_sweeps = 12;
}

/* CSR adjacency of the input graph by source, in edge order, self loops left out. */
typedef struct
{
  guint *start;
  guint *edge;
} Adjacency;

static void
adjacency_build (Adjacency *adj, guint n, guint n_edges, const guint *ends, gboolean by_target)
{
  adj->start = g_new0 (guint, n + 1);
  for (guint e = 0; e < n_edges; e++)
    if (ends[2 * e] != ends[2 * e + 1])
      adj->start[ends[2 * e + (by_target ? 1 : 0)] + 1]++;
  for (guint v = 0; v < n; v++)
    adj->start[v + 1] += adj->start[v];
  adj->edge = g_new (guint, adj->start[n]);
  g_autofree guint *fill = g_memdup2 (adj->start, sizeof (guint) * n);
  for (guint e = 0; e < n_edges; e++)
    if (ends[2 * e] != ends[2 * e + 1])
      adj->edge[fill[ends[2 * e + (by_target ? 1 : 0)]]++] = e;
}

static void
adjacency_clear (Adjacency *adj)
{
  g_clear_pointer (&adj->start, g_free);
  g_clear_pointer (&adj->edge, g_free);
}

/* Marks the edges to reverse so that the graph becomes acyclic: the back edges of a DFS that
 * starts from the sources in index order, then from any node not reached yet (nodes on cycles
 * with no source above them). Iterative: chains of 50k nodes would overflow the C stack. */
static void
break_cycles (guint n, guint n_edges, const guint *ends, gboolean *reversed)
{
  Adjacency out;
  adjacency_build (&out, n, n_edges, ends, FALSE);
  g_autofree guint *indeg = g_new0 (guint, n);
  for (guint e = 0; e < n_edges; e++)
    if (ends[2 * e] != ends[2 * e + 1])
      indeg[ends[2 * e + 1]]++;

  g_autofree guint8 *state = g_new0 (guint8, n); /* 0 new, 1 on the stack, 2 done */
  g_autofree guint *stack = g_new (guint, n);
  g_autofree guint *next = g_new (guint, n); /* next out-edge slot to look at */
  for (guint pass = 0; pass < 2; pass++)
    for (guint s = 0; s < n; s++)
      {
        if (state[s] != 0 || (pass == 0 && indeg[s] != 0))
          continue;
        guint top = 0;
        stack[top++] = s;
        state[s] = 1;
        next[s] = out.start[s];
        while (top > 0)
          {
            guint u = stack[top - 1];
            if (next[u] == out.start[u + 1])
              {
                state[u] = 2;
                top--;
                continue;
              }
            guint e = out.edge[next[u]++];
            guint v = ends[2 * e + 1];
            if (state[v] == 1)
              reversed[e] = TRUE;
            else if (state[v] == 0)
              {
                state[v] = 1;
                next[v] = out.start[v];
                stack[top++] = v;
              }
          }
      }
  adjacency_clear (&out);
}

/* Most nodes a tightening move takes along with the node it is about. */
#define GROUP_MAX 64

/* Ranks by longest path from the sources, then tightened: walking up from the sinks, a node whose
 * consumers are all further down moves next to the nearest of them, together with the inputs
 * that feed only it (and theirs, and so on), when that shortens the edges, or keeps their length
 * and brings a source along; edges from sources outside the group are not counted, since each
 * source follows its own nearest consumer afterwards, except from the graph's real inputs (the
 * sources of its longest paths), which stay at the top. Constants, weights, shape computations and inputs read deep in the
 * graph then sit by the node they feed instead of at the top; a short branch of a fork stays by
 * the fork (moving it would only trade which edge is long). Returns the number of ranks. */
static guint
assign_ranks (guint n, guint n_dag, const guint *dag, guint *rank)
{
  Adjacency out, in;
  adjacency_build (&out, n, n_dag, dag, FALSE);
  adjacency_build (&in, n, n_dag, dag, TRUE);

  /* Kahn's algorithm in index order: a topological order that does not depend on hashing. */
  g_autofree guint *topo = g_new (guint, n);
  g_autofree guint *missing = g_new (guint, n);
  guint head = 0, tail = 0;
  for (guint v = 0; v < n; v++)
    {
      missing[v] = in.start[v + 1] - in.start[v];
      rank[v] = 0;
      if (missing[v] == 0)
        topo[tail++] = v;
    }
  while (head < tail)
    {
      guint u = topo[head++];
      for (guint i = out.start[u]; i < out.start[u + 1]; i++)
        {
          guint v = dag[2 * out.edge[i] + 1];
          rank[v] = MAX (rank[v], rank[u] + 1);
          if (--missing[v] == 0)
            topo[tail++] = v;
        }
    }
  g_assert (tail == n); /* break_cycles made it acyclic */

  /* Sources that start a longest path (their latest possible rank is 0) are the graph's real
   * inputs; other sources (constants, inputs read deep down) can move and will. */
  g_autofree guint *latest = g_new (guint, MAX (n, 1));
  guint depth = 0;
  for (guint v = 0; v < n; v++)
    depth = MAX (depth, rank[v]);
  for (guint i = n; i-- > 0;)
    {
      guint v = topo[i];
      latest[v] = depth;
      for (guint k = out.start[v]; k < out.start[v + 1]; k++)
        latest[v] = MIN (latest[v], latest[dag[2 * out.edge[k] + 1]] - 1);
    }

  g_autofree guint *group = g_new (guint, GROUP_MAX);
  g_autofree guint *in_group = g_new (guint, MAX (n, 1)); /* the v whose group holds a node */
  for (guint v = 0; v < n; v++)
    in_group[v] = G_MAXUINT;
  for (guint i = n; i-- > 0;)
    {
      guint v = topo[i];
      if (out.start[v + 1] == out.start[v])
        continue;
      guint lowest = G_MAXUINT;
      for (guint k = out.start[v]; k < out.start[v + 1]; k++)
        lowest = MIN (lowest, rank[dag[2 * out.edge[k] + 1]]);
      if (lowest - 1 <= rank[v])
        continue;
      guint size = 0;
      group[size++] = v;
      in_group[v] = v;
      for (guint j = 0; j < size; j++)
        for (guint k = in.start[group[j]]; k < in.start[group[j] + 1] && size < GROUP_MAX; k++)
          {
            guint p = dag[2 * in.edge[k]];
            gboolean only_group = in_group[p] != v;
            for (guint q = out.start[p]; q < out.start[p + 1] && only_group; q++)
              only_group = in_group[dag[2 * out.edge[q] + 1]] == v;
            if (only_group)
              {
                in_group[p] = v;
                group[size++] = p;
              }
          }
      guint entering = 0, leaving = out.start[v + 1] - out.start[v];
      gboolean has_source = FALSE;
      for (guint j = 0; j < size; j++)
        {
          guint u = group[j];
          has_source |= in.start[u + 1] == in.start[u];
          /* An edge from a movable source outside does not count: the source follows its
           * nearest consumer later on, wherever that is. */
          for (guint k = in.start[u]; k < in.start[u + 1]; k++)
            {
              guint p = dag[2 * in.edge[k]];
              entering += in_group[p] != v && (in.start[p + 1] != in.start[p] || latest[p] == 0);
            }
        }
      guint delta = lowest - 1 - rank[v];
      if (entering < leaving || (entering == leaving && has_source))
        for (guint j = 0; j < size; j++)
          rank[group[j]] += delta;
    }

  /* Renumber the ranks in use from 0, so that no rank is empty. */
  guint max_rank = 0;
  for (guint v = 0; v < n; v++)
    max_rank = MAX (max_rank, rank[v]);
  g_autofree guint *remap = g_new0 (guint, max_rank + 2);
  for (guint v = 0; v < n; v++)
    remap[rank[v] + 1] = 1;
  for (guint r = 0; r <= max_rank; r++)
    remap[r + 1] += remap[r];
  for (guint v = 0; v < n; v++)
    rank[v] = remap[rank[v]];

  adjacency_clear (&out);
  adjacency_clear (&in);
  return n > 0 ? remap[max_rank] + 1 : 0;
}

static void
work_clear (OwbLayoutWork *w)
{
  g_free (w->width);
  g_free (w->height);
  g_free (w->rank);
  g_free (w->seg_from);
  g_free (w->seg_to);
  g_free (w->out_start);
  g_free (w->out_node);
  g_free (w->out_seg);
  g_free (w->in_start);
  g_free (w->in_node);
  g_free (w->in_seg);
  g_free (w->layer_start);
  g_free (w->order);
  g_free (w->pos);
  g_free (w->x);
  memset (w, 0, sizeof *w);
}

/* Both CSR adjacency lists of the segments, each list in segment order. */
static void
work_build_adjacency (OwbLayoutWork *w)
{
  guint n = w->n_nodes;
  w->out_start = g_new0 (guint, n + 1);
  w->in_start = g_new0 (guint, n + 1);
  for (guint s = 0; s < w->n_segs; s++)
    {
      w->out_start[w->seg_from[s] + 1]++;
      w->in_start[w->seg_to[s] + 1]++;
    }
  for (guint v = 0; v < n; v++)
    {
      w->out_start[v + 1] += w->out_start[v];
      w->in_start[v + 1] += w->in_start[v];
    }
  w->out_node = g_new (guint, w->n_segs);
  w->out_seg = g_new (guint, w->n_segs);
  w->in_node = g_new (guint, w->n_segs);
  w->in_seg = g_new (guint, w->n_segs);
  g_autofree guint *out_fill = g_memdup2 (w->out_start, sizeof (guint) * n);
  g_autofree guint *in_fill = g_memdup2 (w->in_start, sizeof (guint) * n);
  for (guint s = 0; s < w->n_segs; s++)
    {
      guint a = w->seg_from[s], b = w->seg_to[s];
      w->out_node[out_fill[a]] = b;
      w->out_seg[out_fill[a]++] = s;
      w->in_node[in_fill[b]] = a;
      w->in_seg[in_fill[b]++] = s;
    }
}

/* A target further than the next rank, reached through its source's trunk. */
typedef struct
{
  guint rank;
  guint seq; /* edge order, to keep targets of one rank in input order */
  guint node;
} FarTarget;

static int
compare_far (const void *a, const void *b)
{
  const FarTarget *x = a, *y = b;
  if (x->rank != y->rank)
    return (x->rank > y->rank) - (x->rank < y->rank);
  return (x->seq > y->seq) - (x->seq < y->seq);
}

static gboolean
check_cancel (GCancellable *cancellable, GError **error)
{
  return g_cancellable_set_error_if_cancelled (cancellable, error);
}

OwbLayout *
owb_layout_compute (const OwbLayoutGraph *graph, const OwbLayoutOptions *options,
                    GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (graph != NULL, NULL);
  OwbLayoutOptions defaults;
  if (options == NULL)
    {
      owb_layout_options_init (&defaults);
      options = &defaults;
    }
  if (check_cancel (cancellable, error))
    return NULL;

  guint n = owb_layout_graph_get_n_nodes (graph);
  guint n_edges = owb_layout_graph_get_n_edges (graph);
  const double *sizes = (const double *) graph->sizes->data;
  const guint *ends = (const guint *) graph->edges->data;
  double edge_spacing = MAX (options->edge_spacing, 0);
  double rank_spacing = MAX (options->rank_spacing, 0);
  /* How far a self loop reaches out of its box: sideways, and into the gaps above and below. */
  double loop_out = MAX (edge_spacing, 8);
  double loop_up = MIN (loop_out, rank_spacing / 3);

  /* Stage 1: an acyclic version of the graph, self loops left out. */
  g_autofree gboolean *reversed = g_new0 (gboolean, n_edges);
  break_cycles (n, n_edges, ends, reversed);
  g_autofree guint *dag = g_new (guint, 2 * n_edges); /* (upper, lower) pairs */
  g_autofree gboolean *has_loop = g_new0 (gboolean, n);
  guint n_dag = 0;
  for (guint e = 0; e < n_edges; e++)
    {
      guint a = ends[2 * e], b = ends[2 * e + 1];
      if (a == b)
        {
          has_loop[a] = TRUE;
          continue;
        }
      dag[2 * n_dag] = reversed[e] ? b : a;
      dag[2 * n_dag + 1] = reversed[e] ? a : b;
      n_dag++;
    }
  if (check_cancel (cancellable, error))
    return NULL;

  /* Stage 2: ranks. */
  g_autofree guint *rank = g_new (guint, MAX (n, 1));
  guint n_ranks = assign_ranks (n, n_dag, dag, rank);
  if (check_cancel (cancellable, error))
    return NULL;

  /* Stage 3: the proper graph. The edges a node sends further than the next rank share one
   * trunk of dummies, one per rank down to the rank above its furthest target, and each leaves
   * the trunk right above its target: a tensor read by many later nodes (an attention mask, a
   * position table) is drawn as one line with branches, and costs dummies for its longest reach
   * only, not once per reader. Parallel edges share their segments. */
  Adjacency out;
  adjacency_build (&out, n, n_dag, dag, FALSE);
  g_autofree guint *trunk = g_new (guint, MAX (n, 1)); /* first trunk dummy; G_MAXUINT: none */
  g_autofree guint *reach = g_new (guint, MAX (n, 1)); /* the furthest rank an edge reaches */
  guint n_dummies = 0, max_out = 0;
  for (guint u = 0; u < n; u++)
    {
      reach[u] = rank[u];
      for (guint k = out.start[u]; k < out.start[u + 1]; k++)
        reach[u] = MAX (reach[u], rank[dag[2 * out.edge[k] + 1]]);
      trunk[u] = G_MAXUINT;
      if (reach[u] > rank[u] + 1)
        {
          trunk[u] = n + n_dummies;
          n_dummies += reach[u] - rank[u] - 1;
        }
      max_out = MAX (max_out, out.start[u + 1] - out.start[u]);
    }

  OwbLayoutWork w = { 0 };
  w.n_real = n;
  w.n_nodes = n + n_dummies;
  w.n_ranks = n_ranks;
  w.width = g_new (double, MAX (w.n_nodes, 1));
  w.height = g_new (double, MAX (w.n_nodes, 1));
  w.rank = g_new (guint, MAX (w.n_nodes, 1));
  for (guint v = 0; v < n; v++)
    {
      /* A self loop runs down the right side of its box: keep room for it on both sides, so
       * that the box stays centred where the layout puts it. */
      w.width[v] = sizes[2 * v] + (has_loop[v] ? 2 * loop_out : 0);
      w.height[v] = sizes[2 * v + 1];
      w.rank[v] = rank[v];
    }
  w.seg_from = g_new (guint, MAX (n_dag + n_dummies, 1));
  w.seg_to = g_new (guint, MAX (n_dag + n_dummies, 1));
  g_autofree guint *stamp = g_new (guint, MAX (n, 1)); /* the last node that linked to this one */
  g_autofree FarTarget *far = g_new (FarTarget, MAX (max_out, 1));
  for (guint v = 0; v < n; v++)
    stamp[v] = G_MAXUINT;
  /* Segments in edge order per node, so that the initial order follows the input's order. */
  guint s = 0;
  for (guint u = 0; u < n; u++)
    {
      guint n_far = 0;
      for (guint k = out.start[u]; k < out.start[u + 1]; k++)
        {
          guint t = dag[2 * out.edge[k] + 1];
          if (stamp[t] == u)
            continue;
          stamp[t] = u;
          if (rank[t] == rank[u] + 1)
            {
              w.seg_from[s] = u;
              w.seg_to[s++] = t;
              continue;
            }
          if (n_far == 0)
            {
              /* The first far target starts the trunk. */
              w.seg_from[s] = u;
              w.seg_to[s++] = trunk[u];
            }
          far[n_far] = (FarTarget){ rank[t], n_far, t };
          n_far++;
        }
      qsort (far, n_far, sizeof (FarTarget), compare_far);
      guint j = 0;
      for (guint r = rank[u] + 1; r < reach[u]; r++)
        {
          guint d = trunk[u] + (r - rank[u] - 1);
          w.width[d] = edge_spacing;
          w.height[d] = 0;
          w.rank[d] = r;
          for (; j < n_far && far[j].rank == r + 1; j++)
            {
              w.seg_from[s] = d;
              w.seg_to[s++] = far[j].node;
            }
          if (r + 1 < reach[u])
            {
              w.seg_from[s] = d;
              w.seg_to[s++] = d + 1;
            }
        }
    }
  w.n_segs = s;
  adjacency_clear (&out);
  work_build_adjacency (&w);
  w.x = g_new0 (double, MAX (w.n_nodes, 1));

  /* Stages 4 and 5: order within ranks, then x. */
  /* Each stage returns FALSE only when cancelled, and cancellation stays set: one error. */
  if (g_cancellable_is_cancelled (cancellable)
      || !_owb_layout_order (&w, options->ordering_sweeps, cancellable)
      || !_owb_layout_position (&w, options, cancellable))
    {
      check_cancel (cancellable, error);
      work_clear (&w);
      return NULL;
    }

  /* Stage 6: y from ranks (boxes centred on their rank's middle line), then the result. */
  g_autofree double *rank_y = g_new0 (double, n_ranks + 1);
  g_autofree double *rank_h = g_new0 (double, n_ranks + 1);
  for (guint v = 0; v < n; v++)
    rank_h[rank[v]] = MAX (rank_h[rank[v]], w.height[v]);
  for (guint r = 0; r < n_ranks; r++)
    rank_y[r + 1] = rank_y[r] + rank_h[r] + rank_spacing;

  OwbLayout *layout = g_new0 (OwbLayout, 1);
  layout->n_nodes = n;
  layout->n_edges = n_edges;
  layout->n_dummies = n_dummies;
  layout->n_ranks = n_ranks;
  layout->node_x = g_new (double, MAX (n, 1));
  layout->node_y = g_new (double, MAX (n, 1));
  layout->node_rank = g_memdup2 (rank, sizeof (guint) * MAX (n, 1));
  for (guint v = 0; v < n; v++)
    {
      layout->node_x[v] = w.x[v] - sizes[2 * v] / 2;
      layout->node_y[v] = rank_y[rank[v]] + (rank_h[rank[v]] - sizes[2 * v + 1]) / 2;
    }

  layout->edge_start = g_new (guint, n_edges + 1);
  guint n_points = 0;
  for (guint e = 0; e < n_edges; e++)
    {
      layout->edge_start[e] = n_points;
      guint a = ends[2 * e], b = ends[2 * e + 1];
      n_points += a == b ? 6 : (rank[a] > rank[b] ? rank[a] - rank[b] : rank[b] - rank[a]) + 1;
    }
  layout->edge_start[n_edges] = n_points;
  layout->points = g_new (double, 2 * MAX (n_points, 1));
  for (guint e = 0; e < n_edges; e++)
    {
      double *p = layout->points + 2 * layout->edge_start[e];
      guint upper = reversed[e] ? ends[2 * e + 1] : ends[2 * e];
      guint lower = reversed[e] ? ends[2 * e] : ends[2 * e + 1];
      if (upper == lower)
        {
          /* Out of the bottom, round the right side, into the top. */
          guint v = upper;
          double cx = w.x[v], top = layout->node_y[v], bottom = top + sizes[2 * v + 1];
          double side = layout->node_x[v] + sizes[2 * v] + loop_out;
          double loop[12] = { cx, bottom, cx, bottom + loop_up, side, bottom + loop_up,
                              side, top - loop_up, cx, top - loop_up, cx, top };
          memcpy (p, loop, sizeof loop);
          continue;
        }
      guint k = 0;
      p[k++] = w.x[upper];
      p[k++] = layout->node_y[upper] + sizes[2 * upper + 1];
      for (guint r = rank[upper] + 1; r < rank[lower]; r++)
        {
          p[k++] = w.x[trunk[upper] + (r - rank[upper] - 1)];
          p[k++] = rank_y[r] + rank_h[r] / 2;
        }
      p[k++] = w.x[lower];
      p[k++] = layout->node_y[lower];
      if (reversed[e])
        {
          /* Drawn upwards: the same route, walked from the source (the lower box) up. */
          guint np = k / 2;
          for (guint i = 0; i < np / 2; i++)
            {
              double tx = p[2 * i], ty = p[2 * i + 1];
              p[2 * i] = p[2 * (np - 1 - i)];
              p[2 * i + 1] = p[2 * (np - 1 - i) + 1];
              p[2 * (np - 1 - i)] = tx;
              p[2 * (np - 1 - i) + 1] = ty;
            }
        }
    }

  /* Everything at >= 0: self loops reach above the top rank; boxes narrower than their rank
   * slot start right of 0 only by design. */
  double min_x = G_MAXDOUBLE, min_y = G_MAXDOUBLE, max_x = 0, max_y = 0;
  for (guint v = 0; v < n; v++)
    {
      min_x = MIN (min_x, layout->node_x[v]);
      min_y = MIN (min_y, layout->node_y[v]);
      max_x = MAX (max_x, layout->node_x[v] + sizes[2 * v]);
      max_y = MAX (max_y, layout->node_y[v] + sizes[2 * v + 1]);
    }
  for (guint i = 0; i < n_points; i++)
    {
      min_x = MIN (min_x, layout->points[2 * i]);
      min_y = MIN (min_y, layout->points[2 * i + 1]);
      max_x = MAX (max_x, layout->points[2 * i]);
      max_y = MAX (max_y, layout->points[2 * i + 1]);
    }
  if (n == 0)
    min_x = min_y = 0;
  for (guint v = 0; v < n; v++)
    {
      layout->node_x[v] -= min_x;
      layout->node_y[v] -= min_y;
    }
  for (guint i = 0; i < n_points; i++)
    {
      layout->points[2 * i] -= min_x;
      layout->points[2 * i + 1] -= min_y;
    }
  layout->width = max_x - min_x;
  layout->height = max_y - min_y;
  layout->crossings = _owb_layout_count_crossings (&w);

  work_clear (&w);
  return layout;
}

void
owb_layout_free (OwbLayout *layout)
{
  if (layout == NULL)
    return;
  g_free (layout->node_x);
  g_free (layout->node_y);
  g_free (layout->node_rank);
  g_free (layout->edge_start);
  g_free (layout->points);
  g_free (layout);
}

void
owb_layout_get_node_position (const OwbLayout *layout, guint node, double *x, double *y)
{
  g_return_if_fail (layout != NULL && node < layout->n_nodes);
  if (x)
    *x = layout->node_x[node];
  if (y)
    *y = layout->node_y[node];
}

guint
owb_layout_get_node_rank (const OwbLayout *layout, guint node)
{
  g_return_val_if_fail (layout != NULL && node < layout->n_nodes, 0);
  return layout->node_rank[node];
}

const double *
owb_layout_get_edge_points (const OwbLayout *layout, guint edge, guint *n_points)
{
  g_return_val_if_fail (layout != NULL && edge < layout->n_edges, NULL);
  if (n_points)
    *n_points = layout->edge_start[edge + 1] - layout->edge_start[edge];
  return layout->points + 2 * layout->edge_start[edge];
}

void
owb_layout_get_size (const OwbLayout *layout, double *width, double *height)
{
  g_return_if_fail (layout != NULL);
  if (width)
    *width = layout->width;
  if (height)
    *height = layout->height;
}

guint64
owb_layout_count_crossings (const OwbLayout *layout)
{
  g_return_val_if_fail (layout != NULL, 0);
  return layout->crossings;
}

guint
owb_layout_get_n_dummies (const OwbLayout *layout)
{
  return layout->n_dummies;
}

guint
owb_layout_get_n_ranks (const OwbLayout *layout)
{
  return layout->n_ranks;
}
