/* pass-dead-code.c: removes nodes no output depends on and initializers nothing reads. */
#include "owb-optimizer-private.h"
#include "../ir/owb-ir-private.h"

#include <string.h>

/* Adds the names the node's subgraphs read from outer scopes: the node needs them to run. */
static void
add_outer_reads (const OwbNode *node, GHashTable *live)
{
  for (int a = 0; a < node->n_attributes; a++)
    {
      const OwbAttribute *attr = &node->attributes[a];
      if (attr->type == OWB_ATTR_GRAPH && attr->g)
        _owb_graph_collect_outer_refs (attr->g, live);
      for (int k = 0; attr->type == OWB_ATTR_GRAPHS && k < attr->n; k++)
        _owb_graph_collect_outer_refs (attr->graphs[k], live);
    }
}

/* Value infos of names nothing defines any more would be stale declarations for later passes
 * (a reused name would inherit them) and clutter a saved model. */
static void
prune_value_infos (OwbPassContext *ctx)
{
  GHashTable *defined = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint n = 0; n < owb_pass_nodes (ctx)->len; n++)
    {
      OwbNode *node = g_ptr_array_index (owb_pass_nodes (ctx), n);
      for (int o = 0; o < node->n_outputs; o++)
        g_hash_table_add (defined, node->outputs[o]);
    }
  for (guint i = 0; i < ctx->graph->inputs->len; i++)
    g_hash_table_add (defined, ((OwbValueInfo *) g_ptr_array_index (ctx->graph->inputs, i))->name);
  for (guint i = 0; i < ctx->graph->value_infos->len;)
    {
      OwbValueInfo *info = g_ptr_array_index (ctx->graph->value_infos, i);
      if (!g_hash_table_contains (defined, info->name) && !owb_graph_get_initializer (ctx->graph, info->name))
        g_ptr_array_remove_index (ctx->graph->value_infos, i); /* frees it */
      else
        i++;
    }
  g_hash_table_unref (defined);
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  OwbGraph *graph = ctx->graph;
  /* Keys are borrowed from nodes and value infos that stay alive during the walk. */
  GHashTable *live = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < graph->outputs->len; i++)
    g_hash_table_add (live, ((OwbValueInfo *) g_ptr_array_index (graph->outputs, i))->name);
  /* Reverse topological order: every reader is decided before the producer it reads. */
  GPtrArray *dead = g_ptr_array_new ();
  for (guint n = graph->nodes->len; n-- > 0;)
    {
      OwbNode *node = g_ptr_array_index (graph->nodes, n);
      gboolean needed = FALSE;
      for (int o = 0; !needed && o < node->n_outputs; o++)
        needed = node->outputs[o][0] && g_hash_table_contains (live, node->outputs[o]);
      if (!needed)
        {
          g_ptr_array_add (dead, node);
          continue;
        }
      for (int i = 0; i < node->n_inputs; i++)
        if (node->inputs[i][0])
          g_hash_table_add (live, node->inputs[i]);
      add_outer_reads (node, live);
    }
  g_hash_table_unref (live);
  for (guint i = 0; i < dead->len; i++)
    owb_pass_remove_node (ctx, g_ptr_array_index (dead, i));
  g_ptr_array_unref (dead);
  owb_pass_prune_initializers (ctx);
  prune_value_infos (ctx);
  return TRUE;
}

const OwbPass _owb_pass_dead_code = {
  "dead_code",
  OWB_OPTIMIZE_BASIC,
  "removes nodes no output depends on and initializers nothing reads",
  run,
};
