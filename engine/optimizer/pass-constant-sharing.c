/* pass-constant-sharing.c: merges initializers with equal type, shape and contents. */
#include "owb-optimizer-private.h"
#include "../ir/owb-ir-private.h"

#include <string.h>

static guint
tensor_hash (const OwbTensor *t)
{
  guint h = (guint) t->dtype * 31u + (guint) t->rank;
  for (int i = 0; i < t->rank; i++)
    h = h * 31u + (guint) t->dims[i];
  if (t->dtype == OWB_TYPE_STRING)
    {
      for (int64_t i = 0; i < t->nelems; i++)
        h = h * 31u + g_str_hash (((char **) t->data)[i] ? ((char **) t->data)[i] : "");
      return h;
    }
  /* FNV-1a over a sample of the bytes (all of them for small tensors): weights are large and
   * rarely equal, and equality is checked in full afterwards. */
  const guchar *p = t->data;
  guint32 f = 2166136261u;
  gsize n = p ? t->nbytes : 0, step = n > 4096 ? n / 1024 : 1;
  for (gsize i = 0; i < n; i += step)
    f = (f ^ p[i]) * 16777619u;
  for (gsize i = n > 64 ? n - 64 : 0; i < n; i++)
    f = (f ^ p[i]) * 16777619u;
  return h ^ f;
}

static gboolean
is_in_set (const char *name, gpointer set)
{
  return g_hash_table_contains (set, name);
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  OwbGraph *graph = ctx->graph;
  /* Decided before any edit: every replacement would otherwise rebuild the graph maps. */
  GHashTable *pinned = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < graph->initializers->len; i++)
    {
      const char *name = g_ptr_array_index (graph->initializer_names, i);
      /* Overridable inputs may change; outputs and subgraph reads are referred to by name. */
      if (_owb_pass_is_graph_input (ctx, name) || owb_pass_is_graph_output (ctx, name) || _owb_pass_is_outer_read (ctx, name))
        g_hash_table_add (pinned, (gpointer) name);
    }
  GHashTable *by_hash = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_ptr_array_unref);
  GPtrArray *dups = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < graph->initializers->len; i++)
    {
      const OwbTensor *t = g_ptr_array_index (graph->initializers, i);
      const char *name = g_ptr_array_index (graph->initializer_names, i);
      if (t->kind != OWB_VALUE_TENSOR || _owb_pass_is_graph_input (ctx, name))
        continue;
      guint h = tensor_hash (t);
      GPtrArray *bucket = g_hash_table_lookup (by_hash, GUINT_TO_POINTER (h));
      const char *first = NULL;
      for (guint k = 0; bucket && !first && k < bucket->len; k++)
        {
          const char *cand = g_ptr_array_index (bucket, k);
          if (_owb_pass_tensors_equal (owb_graph_get_initializer (graph, cand), t))
            first = cand;
        }
      if (first && !g_hash_table_contains (pinned, name))
        {
          owb_pass_replace_uses (ctx, name, first);
          g_ptr_array_add (dups, g_strdup (name));
          continue;
        }
      if (first)
        continue;
      if (!bucket)
        {
          bucket = g_ptr_array_new ();
          g_hash_table_insert (by_hash, GUINT_TO_POINTER (h), bucket);
        }
      g_ptr_array_add (bucket, (gpointer) name);
    }
  /* Names in the buckets point into the graph: remove only once they are no longer needed. */
  g_hash_table_unref (by_hash);
  g_hash_table_unref (pinned);
  GHashTable *dup_set = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < dups->len; i++)
    g_hash_table_add (dup_set, g_ptr_array_index (dups, i));
  ctx->report->n_removed_initializers += _owb_graph_remove_initializers_if (graph, is_in_set, dup_set);
  g_hash_table_unref (dup_set);
  g_ptr_array_unref (dups);
  return TRUE;
}

const OwbPass _owb_pass_constant_sharing = {
  "constant_sharing",
  OWB_OPTIMIZE_BASIC,
  "merges initializers with equal type, shape and contents",
  run,
};
