/* owb-prof-compare.c: run against run: nodes matched by graph path and name (then by name alone,
 * for a profile that does not know graph paths, then the rest by op type in run order), op types
 * matched by name, median ms of each. */
#include "owb-prof-private.h"

#include <math.h>
#include <string.h>

static char *
path_key (const OwbProfStat *s)
{
  return g_strconcat (s->graph_path ? s->graph_path : "", "\x1f", s->name, NULL);
}

static OwbProfDelta *
delta_new (const char *name, const char *op_type, double a_ms, double b_ms, OwbProfMatch match)
{
  OwbProfDelta *d = g_new0 (OwbProfDelta, 1);
  *d = (OwbProfDelta){ name, op_type, NULL, a_ms, b_ms, match };
  return d;
}

static void
delta_free (OwbProfDelta *d)
{
  g_free (d->merged);
  g_free (d);
}

/* A fused node's origins among the other run's rows, if all of them are there and free: their
 * rows, or NULL. */
static GArray *
find_origins (char **origins, GHashTable *by_name, GArray *rows, const gboolean *used)
{
  if (!origins || !origins[0])
    return NULL;
  GArray *found = g_array_new (FALSE, FALSE, sizeof (guint));
  for (char **o = origins; *o; o++)
    {
      gpointer hit = g_hash_table_lookup (by_name, *o);
      guint r = GPOINTER_TO_UINT (hit) - 1;
      gboolean dup = FALSE;
      for (guint k = 0; hit && k < found->len; k++)
        dup |= g_array_index (found, guint, k) == r;
      if (!hit || used[r] || dup || g_array_index (rows, OwbProfStat, r).graph_path[0])
        {
          g_array_unref (found);
          return NULL;
        }
      g_array_append_val (found, r);
    }
  return found;
}

static OwbProfDelta *
group_delta (const OwbProfStat *fused, GArray *other_rows, GArray *found, gboolean fused_in_a)
{
  double sum = 0;
  const char **merged = g_new0 (const char *, found->len + 1);
  for (guint k = 0; k < found->len; k++)
    {
      const OwbProfStat *s = &g_array_index (other_rows, OwbProfStat, g_array_index (found, guint, k));
      sum += s->median_ms;
      merged[k] = s->name;
    }
  OwbProfDelta *d = delta_new (fused->name, fused->op_type, fused_in_a ? fused->median_ms : sum,
                               fused_in_a ? sum : fused->median_ms, OWB_PROF_MATCH_ORIGINS);
  d->merged = merged;
  d->merged_in_a = !fused_in_a;
  return d;
}

/* The rows of one op type left unmatched in a and in b, in run order: paired where both runs have
 * the same number of them (else which goes with which is a guess). */
static void
pair_by_op_type (GArray *rows_a, GArray *rows_b, int *match, gboolean *b_used, OwbProfMatch *how)
{
  g_autoptr (GHashTable) left_a = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) g_array_unref);
  g_autoptr (GHashTable) left_b = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) g_array_unref);
  GArray *rows[] = { rows_a, rows_b };
  GHashTable *left[] = { left_a, left_b };
  for (int side = 0; side < 2; side++)
    for (guint i = 0; i < rows[side]->len; i++)
      {
        const OwbProfStat *s = &g_array_index (rows[side], OwbProfStat, i);
        if (side == 0 ? match[i] >= 0 : b_used[i])
          continue;
        GArray *list = g_hash_table_lookup (left[side], s->op_type);
        if (!list)
          {
            list = g_array_new (FALSE, FALSE, sizeof (guint));
            g_hash_table_insert (left[side], (gpointer) s->op_type, list);
          }
        g_array_append_val (list, i);
      }
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init (&iter, left_a);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      GArray *in_a = value, *in_b = g_hash_table_lookup (left_b, key);
      if (!in_b || in_b->len != in_a->len)
        continue;
      for (guint k = 0; k < in_a->len; k++)
        {
          guint i = g_array_index (in_a, guint, k), j = g_array_index (in_b, guint, k);
          match[i] = (int) j;
          b_used[j] = TRUE;
          how[i] = OWB_PROF_MATCH_OP_TYPE;
        }
    }
}

static int
by_node (gconstpointer a, gconstpointer b)
{
  const OwbProfStat *x = a, *y = b;
  return (x->node > y->node) - (x->node < y->node);
}

/* Rows of a and b paired: (nodes) fused nodes with their origins, by path and name (nodes), by
 * name, then (nodes) by op type. */
static GPtrArray *
pair_rows (const OwbProfRun *a, GArray *rows_a, const OwbProfRun *b, GArray *rows_b, gboolean nodes)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) delta_free);
  g_autoptr (GHashTable) b_by_path = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) b_by_name = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) a_by_name = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree gboolean *b_used = g_new0 (gboolean, MAX (rows_b->len, 1));
  g_autofree gboolean *a_merged = g_new0 (gboolean, MAX (rows_a->len, 1));
  g_autofree OwbProfDelta **groups = g_new0 (OwbProfDelta *, MAX (rows_a->len, 1));
  g_autofree OwbProfMatch *how = g_new0 (OwbProfMatch, MAX (rows_a->len, 1));
  g_autofree int *match = g_new (int, MAX (rows_a->len, 1));
  /* the first row of a name wins: later ones are left to match by themselves */
  for (guint i = rows_b->len; i-- > 0;)
    {
      OwbProfStat *s = &g_array_index (rows_b, OwbProfStat, i);
      if (nodes)
        g_hash_table_insert (b_by_path, path_key (s), GUINT_TO_POINTER (i + 1));
      g_hash_table_insert (b_by_name, (gpointer) s->name, GUINT_TO_POINTER (i + 1));
    }
  for (guint i = rows_a->len; i-- > 0;)
    g_hash_table_insert (a_by_name, (gpointer) g_array_index (rows_a, OwbProfStat, i).name, GUINT_TO_POINTER (i + 1));
  for (guint i = 0; i < rows_a->len; i++)
    match[i] = -1;

  /* a node the optimizer made, against the nodes it replaced (either way round) */
  for (guint i = 0; nodes && i < rows_a->len; i++)
    {
      const OwbProfStat *s = &g_array_index (rows_a, OwbProfStat, i);
      const OwbProfNode *node = g_ptr_array_index (a->nodes, s->node);
      g_autoptr (GArray) found = s->graph_path[0] ? NULL : find_origins (node->origins, b_by_name, rows_b, b_used);
      if (!found)
        continue;
      for (guint k = 0; k < found->len; k++)
        b_used[g_array_index (found, guint, k)] = TRUE;
      groups[i] = group_delta (s, rows_b, found, TRUE);
      a_merged[i] = TRUE;
    }
  for (guint j = 0; nodes && j < rows_b->len; j++)
    {
      const OwbProfStat *s = &g_array_index (rows_b, OwbProfStat, j);
      const OwbProfNode *node = g_ptr_array_index (b->nodes, s->node);
      g_autoptr (GArray) found = b_used[j] || s->graph_path[0] ? NULL
                                                                : find_origins (node->origins, a_by_name, rows_a, a_merged);
      if (!found)
        continue;
      guint first = G_MAXUINT;
      for (guint k = 0; k < found->len; k++)
        {
          guint r = g_array_index (found, guint, k);
          a_merged[r] = TRUE;
          first = MIN (first, r);
        }
      b_used[j] = TRUE;
      groups[first] = group_delta (s, rows_a, found, FALSE);
    }

  for (guint i = 0; i < rows_a->len; i++)
    {
      OwbProfStat *s = &g_array_index (rows_a, OwbProfStat, i);
      if (!nodes || a_merged[i])
        continue;
      g_autofree char *key = path_key (s);
      gpointer found = g_hash_table_lookup (b_by_path, key);
      if (found && !b_used[GPOINTER_TO_UINT (found) - 1])
        {
          match[i] = (int) GPOINTER_TO_UINT (found) - 1;
          b_used[match[i]] = TRUE;
          how[i] = OWB_PROF_MATCH_NAME;
        }
    }
  for (guint i = 0; i < rows_a->len; i++)
    if (match[i] < 0 && !a_merged[i])
      {
        OwbProfStat *s = &g_array_index (rows_a, OwbProfStat, i);
        gpointer found = g_hash_table_lookup (b_by_name, s->name);
        if (found && !b_used[GPOINTER_TO_UINT (found) - 1])
          {
            match[i] = (int) GPOINTER_TO_UINT (found) - 1;
            b_used[match[i]] = TRUE;
            how[i] = OWB_PROF_MATCH_NAME;
          }
      }
  if (nodes)
    {
      /* rows merged into a group take no part in the pairing by op type */
      for (guint i = 0; i < rows_a->len; i++)
        if (a_merged[i])
          match[i] = G_MAXINT;
      pair_by_op_type (rows_a, rows_b, match, b_used, how);
    }
  for (guint i = 0; i < rows_a->len; i++)
    {
      if (groups[i])
        {
          g_ptr_array_add (out, groups[i]);
          continue;
        }
      if (a_merged[i])
        continue;
      OwbProfStat *s = &g_array_index (rows_a, OwbProfStat, i);
      const OwbProfStat *t = match[i] >= 0 ? &g_array_index (rows_b, OwbProfStat, match[i]) : NULL;
      OwbProfDelta *d = delta_new (s->name, s->op_type, s->median_ms, t ? t->median_ms : NAN, how[i]);
      if (t && strcmp (t->name, s->name) != 0)
        d->b_name = t->name;
      g_ptr_array_add (out, d);
    }
  for (guint i = 0; i < rows_b->len; i++)
    if (!b_used[i])
      {
        OwbProfStat *s = &g_array_index (rows_b, OwbProfStat, i);
        g_ptr_array_add (out, delta_new (s->name, s->op_type, NAN, s->median_ms, OWB_PROF_MATCH_NONE));
      }
  return out;
}

GPtrArray *
owb_prof_compare_nodes (const OwbProfRun *a, const OwbProfRun *b)
{
  g_autoptr (GArray) rows_a = owb_prof_run_dup_node_stats (a);
  g_autoptr (GArray) rows_b = owb_prof_run_dup_node_stats (b);
  /* in run order, so the listing follows the graph */
  g_array_sort (rows_a, by_node);
  g_array_sort (rows_b, by_node);
  return pair_rows (a, rows_a, b, rows_b, TRUE);
}

GPtrArray *
owb_prof_compare_ops (const OwbProfRun *a, const OwbProfRun *b)
{
  g_autoptr (GArray) rows_a = owb_prof_run_dup_op_stats (a);
  g_autoptr (GArray) rows_b = owb_prof_run_dup_op_stats (b);
  return pair_rows (a, rows_a, b, rows_b, FALSE);
}

guint
owb_prof_deltas_count_matched (const GPtrArray *deltas)
{
  guint n = 0;
  for (guint i = 0; i < deltas->len; i++)
    {
      const OwbProfDelta *d = g_ptr_array_index (deltas, i);
      n += !isnan (d->a_ms) && !isnan (d->b_ms);
    }
  return n;
}
