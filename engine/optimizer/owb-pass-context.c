/* owb-pass-context.c: graph queries and edits for optimizer passes, keeping the report exact. */
#include "owb-optimizer-private.h"
#include "../ir/owb-ir-private.h"

#include <stdarg.h>
#include <string.h>

/* The maps own their keys: a removed node's strings are freed with it while other nodes may still
 * read the same names. */
static void
index_node (OwbPassContext *ctx, OwbNode *node)
{
  for (int o = 0; o < node->n_outputs; o++)
    if (node->outputs[o][0])
      g_hash_table_insert (ctx->producer, g_strdup (node->outputs[o]), node);
  for (int i = 0; i < node->n_inputs; i++)
    {
      if (!node->inputs[i][0])
        continue;
      GPtrArray *list = g_hash_table_lookup (ctx->consumers, node->inputs[i]);
      if (!list)
        {
          list = g_ptr_array_new ();
          g_hash_table_insert (ctx->consumers, g_strdup (node->inputs[i]), list);
        }
      g_ptr_array_add (list, node);
    }
  for (int a = 0; a < node->n_attributes; a++)
    {
      const OwbAttribute *attr = &node->attributes[a];
      if (attr->type == OWB_ATTR_GRAPH && attr->g)
        _owb_graph_collect_outer_refs (attr->g, ctx->outer_reads);
      for (int k = 0; attr->type == OWB_ATTR_GRAPHS && k < attr->n; k++)
        _owb_graph_collect_outer_refs (attr->graphs[k], ctx->outer_reads);
    }
}

static gboolean
has_subgraphs (const OwbNode *node)
{
  for (int a = 0; a < node->n_attributes; a++)
    if (node->attributes[a].type == OWB_ATTR_GRAPH || node->attributes[a].type == OWB_ATTR_GRAPHS)
      return TRUE;
  return FALSE;
}

/* Takes a node that is about to leave the graph out of valid maps (a node with subgraphs makes them
 * rebuild: its outer reads may be shared with others). */
static void
unindex_node (OwbPassContext *ctx, OwbNode *node)
{
  if (!ctx->maps_valid)
    return;
  if (has_subgraphs (node))
    {
      ctx->maps_valid = FALSE;
      return;
    }
  for (int o = 0; o < node->n_outputs; o++)
    if (node->outputs[o][0] && g_hash_table_lookup (ctx->producer, node->outputs[o]) == node)
      g_hash_table_remove (ctx->producer, node->outputs[o]);
  for (int i = 0; i < node->n_inputs; i++)
    {
      GPtrArray *list = node->inputs[i][0] ? g_hash_table_lookup (ctx->consumers, node->inputs[i]) : NULL;
      if (list)
        {
          g_ptr_array_remove (list, node); /* one slot per call, as index_node added one per input */
          if (list->len == 0)
            g_hash_table_remove (ctx->consumers, node->inputs[i]);
        }
    }
}

static void
build_maps (OwbPassContext *ctx)
{
  if (ctx->maps_valid)
    return;
  g_clear_pointer (&ctx->producer, g_hash_table_unref);
  g_clear_pointer (&ctx->consumers, g_hash_table_unref);
  g_clear_pointer (&ctx->outer_reads, g_hash_table_unref);
  ctx->producer = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  ctx->consumers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_ptr_array_unref);
  ctx->outer_reads = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint n = 0; n < ctx->graph->nodes->len; n++)
    index_node (ctx, g_ptr_array_index (ctx->graph->nodes, n));
  ctx->maps_valid = TRUE;
}

static void
add_name (OwbPassContext *ctx, const char *name)
{
  if (ctx->names && name && name[0] && !g_hash_table_contains (ctx->names, name))
    g_hash_table_add (ctx->names, g_strdup (name));
}

static void
add_node_names (OwbPassContext *ctx, const OwbNode *node)
{
  add_name (ctx, node->name);
  for (int i = 0; i < node->n_inputs; i++)
    add_name (ctx, node->inputs[i]);
  for (int o = 0; o < node->n_outputs; o++)
    add_name (ctx, node->outputs[o]);
}

/* Names only accumulate: one that was removed stays taken, which costs nothing and keeps the set
 * valid across every edit. */
static void
build_names (OwbPassContext *ctx)
{
  if (ctx->names)
    return;
  ctx->names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  ctx->next_suffix = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint n = 0; n < ctx->graph->nodes->len; n++)
    add_node_names (ctx, g_ptr_array_index (ctx->graph->nodes, n));
  for (guint i = 0; i < ctx->graph->initializer_names->len; i++)
    add_name (ctx, g_ptr_array_index (ctx->graph->initializer_names, i));
  for (guint i = 0; i < ctx->graph->inputs->len; i++)
    add_name (ctx, ((OwbValueInfo *) g_ptr_array_index (ctx->graph->inputs, i))->name);
  for (guint i = 0; i < ctx->graph->outputs->len; i++)
    add_name (ctx, ((OwbValueInfo *) g_ptr_array_index (ctx->graph->outputs, i))->name);
}

void
_owb_pass_context_clear (OwbPassContext *ctx)
{
  g_clear_pointer (&ctx->producer, g_hash_table_unref);
  g_clear_pointer (&ctx->consumers, g_hash_table_unref);
  g_clear_pointer (&ctx->outer_reads, g_hash_table_unref);
  g_clear_pointer (&ctx->names, g_hash_table_unref);
  g_clear_pointer (&ctx->next_suffix, g_hash_table_unref);
  ctx->maps_valid = FALSE;
}

gboolean
_owb_pass_swaps_last_two (const OwbNode *transpose, int rank)
{
  int n = 0;
  const int64_t *perm = owb_node_get_ints (transpose, "perm", &n);
  if (!perm)
    return rank == 2; /* no perm: all axes reversed */
  if (n != rank || n < 2)
    return FALSE;
  for (int i = 0; i < n - 2; i++)
    if (perm[i] != i)
      return FALSE;
  return perm[n - 2] == n - 1 && perm[n - 1] == n - 2;
}

gboolean
_owb_pass_is_our_op (const OwbNode *node, const char *op_type)
{
  return node && strcmp (node->op_type, op_type) == 0 && node->domain
         && strcmp (node->domain, "ai.onnx.workbench") == 0;
}

void
_owb_pass_set_activation (OwbNode *node, const char *attr, const char *params_attr, const char *kind,
                          const float *params, int n_params)
{
  OwbAttribute *a = owb_node_add_attribute (node, attr, OWB_ATTR_STRING);
  a->s = g_strdup (kind);
  a->s_len = strlen (kind);
  if (n_params > 0)
    {
      a = owb_node_add_attribute (node, params_attr, OWB_ATTR_FLOATS);
      a->n = n_params;
      a->floats = g_memdup2 (params, sizeof (float) * n_params);
    }
}

gboolean
_owb_pass_is_op (const OwbNode *node, const char *op_type)
{
  return node && strcmp (node->op_type, op_type) == 0
         && (!node->domain || !node->domain[0] || strcmp (node->domain, "ai.onnx") == 0);
}

int
_owb_pass_opset (OwbPassContext *ctx)
{
  return (int) owb_model_get_opset (ctx->model, "");
}

OwbNode *
_owb_pass_producer (OwbPassContext *ctx, const char *name)
{
  build_maps (ctx);
  return g_hash_table_lookup (ctx->producer, name);
}

GPtrArray *
_owb_pass_consumers (OwbPassContext *ctx, const char *name)
{
  static GPtrArray *empty;
  build_maps (ctx);
  GPtrArray *list = g_hash_table_lookup (ctx->consumers, name);
  if (list)
    return list;
  if (g_once_init_enter (&empty))
    g_once_init_leave (&empty, g_ptr_array_new ());
  return empty;
}

gboolean
_owb_pass_is_graph_output (OwbPassContext *ctx, const char *name)
{
  for (guint i = 0; i < ctx->graph->outputs->len; i++)
    if (strcmp (((OwbValueInfo *) g_ptr_array_index (ctx->graph->outputs, i))->name, name) == 0)
      return TRUE;
  return FALSE;
}

guint
_owb_pass_n_uses (OwbPassContext *ctx, const char *name)
{
  build_maps (ctx);
  guint n = _owb_pass_consumers (ctx, name)->len;
  if (_owb_pass_is_graph_output (ctx, name))
    n++;
  if (g_hash_table_contains (ctx->outer_reads, name))
    n++;
  return n;
}

static gboolean
is_graph_input (OwbPassContext *ctx, const char *name)
{
  for (guint i = 0; i < ctx->graph->inputs->len; i++)
    if (strcmp (((OwbValueInfo *) g_ptr_array_index (ctx->graph->inputs, i))->name, name) == 0)
      return TRUE;
  return FALSE;
}

const OwbTensor *
_owb_pass_get_constant (OwbPassContext *ctx, const char *name)
{
  if (!name || !name[0])
    return NULL;
  OwbTensor *init = owb_graph_get_initializer (ctx->graph, name);
  if (init)
    /* An initializer listed as a graph input is a default the caller may override. */
    return is_graph_input (ctx, name) ? NULL : init;
  OwbNode *producer = _owb_pass_producer (ctx, name);
  if (producer && strcmp (producer->op_type, "Constant") == 0 && (!producer->domain || !producer->domain[0]))
    {
      const OwbAttribute *value = owb_node_get_attribute (producer, "value");
      if (value && value->type == OWB_ATTR_TENSOR)
        return value->t;
    }
  return NULL;
}

void
_owb_pass_remove_node (OwbPassContext *ctx, OwbNode *node)
{
  g_ptr_array_add (ctx->report->removed, g_strdup (node->name && node->name[0] ? node->name : node->outputs[0]));
  unindex_node (ctx, node);
  g_ptr_array_remove (ctx->graph->nodes, node); /* frees it */
}

void
_owb_pass_add_node (OwbPassContext *ctx, OwbNode *node, const char *const *from, guint n_from)
{
  if (!node->name || !node->name[0])
    {
      g_free (node->name);
      node->name = _owb_pass_unique_name (ctx, node->op_type);
    }
  node->opset = (int) owb_model_get_opset (ctx->model, node->domain);
  node->graph = ctx->graph;
  OwbOptimizeCreated *created = g_new0 (OwbOptimizeCreated, 1);
  created->node = g_strdup (node->name);
  created->op_type = g_strdup (node->op_type);
  created->domain = g_strdup (node->domain ? node->domain : "");
  created->from = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < n_from; i++)
    g_ptr_array_add (created->from, g_strdup (from[i]));
  g_ptr_array_add (ctx->report->created, created);
  owb_graph_add_node (ctx->graph, node);
  add_node_names (ctx, node);
  if (ctx->maps_valid)
    index_node (ctx, node);
}

static void
rename_value_info (GPtrArray *list, const char *old_name, const char *new_name)
{
  for (guint i = 0; i < list->len; i++)
    {
      OwbValueInfo *info = g_ptr_array_index (list, i);
      if (strcmp (info->name, old_name) == 0)
        {
          g_free (info->name);
          info->name = g_strdup (new_name);
        }
    }
}

void
_owb_pass_replace_uses (OwbPassContext *ctx, const char *old_name, const char *new_name)
{
  char *old_copy = g_strdup (old_name), *new_copy = g_strdup (new_name);
  if (_owb_pass_is_graph_output (ctx, old_copy))
    {
      /* The graph's output names are its interface: keep old_name, let the producer of new_name
       * write it directly. */
      OwbNode *producer = _owb_pass_producer (ctx, new_copy);
      if (producer)
        {
          for (int o = 0; o < producer->n_outputs; o++)
            if (strcmp (producer->outputs[o], new_copy) == 0)
              {
                g_free (producer->outputs[o]);
                producer->outputs[o] = g_strdup (old_copy);
              }
          for (guint n = 0; n < ctx->graph->nodes->len; n++)
            {
              OwbNode *node = g_ptr_array_index (ctx->graph->nodes, n);
              for (int i = 0; i < node->n_inputs; i++)
                if (strcmp (node->inputs[i], new_copy) == 0)
                  {
                    g_free (node->inputs[i]);
                    node->inputs[i] = g_strdup (old_copy);
                  }
            }
          rename_value_info (ctx->graph->value_infos, new_copy, old_copy);
          ctx->maps_valid = FALSE;
          g_free (old_copy);
          g_free (new_copy);
          return;
        }
      /* new_name is a graph input or initializer: an Identity keeps the output name. */
      OwbNode *id = owb_node_new ("Identity", "", NULL);
      owb_node_add_input (id, new_copy);
      owb_node_add_output (id, old_copy);
      _owb_pass_add_node (ctx, id, NULL, 0);
    }
  for (guint n = 0; n < ctx->graph->nodes->len; n++)
    {
      OwbNode *node = g_ptr_array_index (ctx->graph->nodes, n);
      if (strcmp (node->op_type, "Identity") == 0 && node->n_outputs == 1 && strcmp (node->outputs[0], old_copy) == 0)
        continue;
      for (int i = 0; i < node->n_inputs; i++)
        if (strcmp (node->inputs[i], old_copy) == 0)
          {
            g_free (node->inputs[i]);
            node->inputs[i] = g_strdup (new_copy);
          }
    }
  ctx->maps_valid = FALSE;
  g_free (old_copy);
  g_free (new_copy);
}

char *
_owb_pass_unique_name (OwbPassContext *ctx, const char *base)
{
  build_names (ctx);
  guint k = GPOINTER_TO_UINT (g_hash_table_lookup (ctx->next_suffix, base));
  for (;; k++)
    {
      char *name = k ? g_strdup_printf ("%s_%u", base, k) : g_strdup (base);
      if (!g_hash_table_contains (ctx->names, name))
        {
          g_hash_table_insert (ctx->next_suffix, g_strdup (base), GUINT_TO_POINTER (k + 1));
          g_hash_table_add (ctx->names, g_strdup (name));
          return name;
        }
      g_free (name);
    }
}

const char *
_owb_pass_add_initializer (OwbPassContext *ctx, const char *base, OwbTensor *tensor)
{
  char *name = _owb_pass_unique_name (ctx, base);
  owb_graph_add_initializer (ctx->graph, name, tensor);
  guint i = GPOINTER_TO_UINT (g_hash_table_lookup (ctx->graph->initializer_index, name)) - 1;
  g_free (name);
  return g_ptr_array_index (ctx->graph->initializer_names, i);
}

void
_owb_pass_near_miss (OwbPassContext *ctx, const OwbNode *node, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  char *msg = g_strdup_vprintf (format, args);
  va_end (args);
  char *who = owb_node_describe (node);
  g_ptr_array_add (ctx->report->near_misses, g_strdup_printf ("%s: %s", who, msg));
  g_free (who);
  g_free (msg);
}

guint
_owb_pass_prune_initializers (OwbPassContext *ctx)
{
  build_maps (ctx);
  GPtrArray *dead = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < ctx->graph->initializer_names->len; i++)
    {
      const char *name = g_ptr_array_index (ctx->graph->initializer_names, i);
      if (_owb_pass_n_uses (ctx, name) == 0 && !is_graph_input (ctx, name))
        g_ptr_array_add (dead, g_strdup (name));
    }
  for (guint i = 0; i < dead->len; i++)
    owb_graph_remove_initializer (ctx->graph, g_ptr_array_index (dead, i));
  guint n = dead->len;
  g_ptr_array_unref (dead);
  ctx->report->n_removed_initializers += n;
  ctx->maps_valid = FALSE;
  return n;
}

const OwbValueType *
_owb_pass_value_type (OwbPassContext *ctx, const char *name)
{
  /* Initializers have no value info: read them with _owb_pass_get_constant. */
  const OwbValueInfo *info = owb_graph_find_value_info (ctx->graph, name);
  return info && info->has_type ? &info->type : NULL;
}
