/* owb-prof-stats.c: what a run says: per-node and per-op time (mean, median, min, p90, share over
 * iterations), the wall time split into nodes, gaps and per-thread busy time, the critical path. */
#include "owb-prof-private.h"

#include <math.h>
#include <string.h>

guint
_owb_prof_run_n_iterations (const OwbProfRun *run)
{
  /* an imported profile may have events past its last model_run; count what the events say */
  guint n = run->iterations->len;
  for (guint e = 0; e < run->events->len; e++)
    n = MAX (n, g_array_index (run->events, OwbProfEvent, e).iteration + 1);
  return MAX (n, 1);
}

/* Fills rows' statistics from per-iteration times (rows x iterations ms) and call counts. */
static void
finish_rows (GArray *rows, double *times, guint n_iter, const guint *calls)
{
  double total = 0;
  g_autofree double *scratch = g_new (double, n_iter);
  for (guint r = 0; r < rows->len; r++)
    {
      OwbProfStat *s = &g_array_index (rows, OwbProfStat, r);
      const double *t = times + (gsize) r * n_iter;
      double sum = 0;
      for (guint i = 0; i < n_iter; i++)
        sum += t[i];
      s->mean_ms = sum / n_iter;
      s->calls = (double) calls[r] / n_iter;
      memcpy (scratch, t, n_iter * sizeof *scratch);
      s->median_ms = _owb_prof_quantile (scratch, n_iter, 0.5);
      s->min_ms = scratch[0];
      s->p90_ms = _owb_prof_quantile (scratch, n_iter, 0.9);
      total += s->mean_ms;
    }
  for (guint r = 0; r < rows->len; r++)
    {
      OwbProfStat *s = &g_array_index (rows, OwbProfStat, r);
      s->share = total > 0 ? s->mean_ms / total : 0;
    }
}

static int
slowest_first (gconstpointer a, gconstpointer b)
{
  const OwbProfStat *x = a, *y = b;
  if (x->mean_ms != y->mean_ms)
    return (x->mean_ms < y->mean_ms) - (x->mean_ms > y->mean_ms);
  /* ties (nodes of 0 ms) in run order, for a stable listing */
  return (x->node > y->node) - (x->node < y->node);
}

GArray *
owb_prof_run_dup_node_stats (const OwbProfRun *run)
{
  guint n_iter = _owb_prof_run_n_iterations (run), n_nodes = run->nodes->len;
  GArray *rows = g_array_sized_new (FALSE, TRUE, sizeof (OwbProfStat), n_nodes);
  g_autofree double *times = g_new0 (double, (gsize) MAX (n_nodes, 1) * n_iter);
  g_autofree guint *calls = g_new0 (guint, MAX (n_nodes, 1));
  g_autofree const char **shapes = g_new0 (const char *, MAX (n_nodes, 1));
  for (guint e = 0; e < run->events->len; e++)
    {
      const OwbProfEvent *ev = &g_array_index (run->events, OwbProfEvent, e);
      if (ev->kind != OWB_PROF_EVENT_NODE)
        continue;
      times[(gsize) ev->node * n_iter + ev->iteration] += ev->self_ns / 1e6;
      calls[ev->node]++;
      shapes[ev->node] = ev->output_shapes;
    }
  for (guint n = 0; n < n_nodes; n++)
    {
      const OwbProfNode *node = g_ptr_array_index (run->nodes, n);
      OwbProfStat s = { node->name, node->op_type, node->provider, node->graph_path, n };
      s.output_shapes = shapes[n];
      g_array_append_val (rows, s);
    }
  finish_rows (rows, times, n_iter, calls);
  g_array_sort (rows, slowest_first);
  return rows;
}

GArray *
owb_prof_run_dup_op_stats (const OwbProfRun *run)
{
  guint n_iter = _owb_prof_run_n_iterations (run);
  g_autoptr (GHashTable) index = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree guint *op_of = g_new (guint, MAX (run->nodes->len, 1));
  GArray *rows = g_array_new (FALSE, TRUE, sizeof (OwbProfStat));
  for (guint n = 0; n < run->nodes->len; n++)
    {
      const OwbProfNode *node = g_ptr_array_index (run->nodes, n);
      gpointer found = g_hash_table_lookup (index, node->op_type);
      if (!found)
        {
          OwbProfStat s = { node->op_type, node->op_type, NULL, NULL, G_MAXUINT };
          g_array_append_val (rows, s);
          found = GUINT_TO_POINTER (rows->len);
          g_hash_table_insert (index, node->op_type, found);
        }
      op_of[n] = GPOINTER_TO_UINT (found) - 1;
    }
  g_autofree double *times = g_new0 (double, (gsize) MAX (rows->len, 1) * n_iter);
  g_autofree guint *calls = g_new0 (guint, MAX (rows->len, 1));
  for (guint e = 0; e < run->events->len; e++)
    {
      const OwbProfEvent *ev = &g_array_index (run->events, OwbProfEvent, e);
      if (ev->kind != OWB_PROF_EVENT_NODE)
        continue;
      guint op = op_of[ev->node];
      times[(gsize) op * n_iter + ev->iteration] += ev->self_ns / 1e6;
      calls[op]++;
    }
  finish_rows (rows, times, n_iter, calls);
  g_array_sort (rows, slowest_first);
  return rows;
}

double
owb_prof_run_get_median_ms (const OwbProfRun *run)
{
  guint n = run->iterations->len;
  g_autofree double *v = g_new (double, MAX (n, 1));
  for (guint i = 0; i < n; i++)
    v[i] = g_array_index (run->iterations, OwbProfIteration, i).duration_ns / 1e6;
  return _owb_prof_quantile (v, n, 0.5);
}

void
owb_prof_run_get_wall_split (const OwbProfRun *run, OwbProfWallSplit *split)
{
  guint n_iter = _owb_prof_run_n_iterations (run);
  memset (split, 0, sizeof *split);
  split->thread_busy_ms = g_array_new (FALSE, TRUE, sizeof (double));
  double wall = 0, nodes = 0;
  for (guint i = 0; i < run->iterations->len; i++)
    wall += g_array_index (run->iterations, OwbProfIteration, i).duration_ns / 1e6;
  for (guint e = 0; e < run->events->len; e++)
    {
      const OwbProfEvent *ev = &g_array_index (run->events, OwbProfEvent, e);
      const OwbProfNode *node = g_ptr_array_index (run->nodes, ev->node);
      gboolean top = ev->kind == OWB_PROF_EVENT_NODE && node->graph_path[0] == '\0';
      /* lane 0 is busy for its top-level nodes' whole span (nested ones lie inside them) */
      double busy = ev->kind == OWB_PROF_EVENT_WORKER ? ev->self_ns / 1e6 : top ? ev->duration_ns / 1e6 : 0;
      if (top)
        nodes += ev->duration_ns / 1e6;
      if (ev->thread >= split->thread_busy_ms->len)
        g_array_set_size (split->thread_busy_ms, ev->thread + 1);
      g_array_index (split->thread_busy_ms, double, ev->thread) += busy;
    }
  for (guint t = 0; t < split->thread_busy_ms->len; t++)
    g_array_index (split->thread_busy_ms, double, t) /= n_iter;
  split->wall_ms = wall / n_iter;
  split->nodes_ms = nodes / n_iter;
  /* an imported profile's iterations may be missing: then there is no wall time to split */
  split->gaps_ms = split->wall_ms > 0 ? MAX (split->wall_ms - split->nodes_ms, 0) : 0;
}

void
owb_prof_wall_split_clear (OwbProfWallSplit *split)
{
  g_clear_pointer (&split->thread_busy_ms, g_array_unref);
}

static int
by_first_start (gconstpointer a, gconstpointer b, gpointer data)
{
  const gint64 *start = data;
  guint x = *(const guint *) a, y = *(const guint *) b;
  if (start[x] != start[y])
    return (start[x] > start[y]) - (start[x] < start[y]);
  return (x > y) - (x < y);
}

GArray *
owb_prof_run_dup_critical_path (const OwbProfRun *run, double *total_ms)
{
  guint n_nodes = run->nodes->len, n_iter = _owb_prof_run_n_iterations (run);
  g_autofree double *times = g_new0 (double, (gsize) MAX (n_nodes, 1) * n_iter);
  g_autofree gint64 *first_start = g_new (gint64, MAX (n_nodes, 1));
  for (guint n = 0; n < n_nodes; n++)
    first_start[n] = G_MAXINT64;
  for (guint e = 0; e < run->events->len; e++)
    {
      const OwbProfEvent *ev = &g_array_index (run->events, OwbProfEvent, e);
      if (ev->kind != OWB_PROF_EVENT_NODE)
        continue;
      times[(gsize) ev->node * n_iter + ev->iteration] += ev->duration_ns / 1e6;
      first_start[ev->node] = MIN (first_start[ev->node], ev->start_ns);
    }
  /* main-graph nodes in the order they started: a topological order, as the run respected
   * every dependency */
  g_autoptr (GArray) order = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint n = 0; n < n_nodes; n++)
    if (((OwbProfNode *) g_ptr_array_index (run->nodes, n))->graph_path[0] == '\0' && first_start[n] != G_MAXINT64)
      g_array_append_val (order, n);
  g_array_sort_with_data (order, by_first_start, first_start);
  g_autofree double *dist = g_new0 (double, MAX (n_nodes, 1));
  g_autofree int *via = g_new (int, MAX (n_nodes, 1));
  g_autoptr (GHashTable) producer = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree double *scratch = g_new (double, n_iter);
  int best = -1;
  for (guint k = 0; k < order->len; k++)
    {
      guint n = g_array_index (order, guint, k);
      const OwbProfNode *node = g_ptr_array_index (run->nodes, n);
      memcpy (scratch, times + (gsize) n * n_iter, n_iter * sizeof *scratch);
      double weight = _owb_prof_quantile (scratch, n_iter, 0.5);
      double before = 0;
      via[n] = -1;
      for (char **in = node->inputs; in && *in; in++)
        {
          gpointer p = (*in)[0] ? g_hash_table_lookup (producer, *in) : NULL;
          if (p && dist[GPOINTER_TO_UINT (p) - 1] > before)
            {
              before = dist[GPOINTER_TO_UINT (p) - 1];
              via[n] = (int) GPOINTER_TO_UINT (p) - 1;
            }
        }
      dist[n] = before + weight;
      for (char **out = node->outputs; out && *out; out++)
        if ((*out)[0])
          g_hash_table_insert (producer, *out, GUINT_TO_POINTER (n + 1));
      if (best < 0 || dist[n] > dist[best])
        best = (int) n;
    }
  GArray *path = g_array_new (FALSE, FALSE, sizeof (guint));
  *total_ms = best >= 0 ? dist[best] : 0;
  for (int n = best; n >= 0; n = via[n])
    {
      guint u = (guint) n;
      g_array_prepend_val (path, u);
    }
  return path;
}
