/* owb-pass-context.c: graph queries and edits for optimizer passes, keeping the report exact. */
#include "owb-optimizer-private.h"
#include "../ir/owb-ir-private.h"

#include <stdarg.h>
#include <string.h>

static void
build_maps (OwbPassContext *ctx)
{
  if (ctx->maps_valid)
    return;
  g_clear_pointer (&ctx->producer, g_hash_table_unref);
  g_clear_pointer (&ctx->consumers, g_hash_table_unref);
  g_clear_pointer (&ctx->outer_reads, g_hash_table_unref);
  ctx->producer = g_hash_table_new (g_str_hash, g_str_equal);
  ctx->consumers = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) g_ptr_array_unref);
  ctx->outer_reads = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint n = 0; n < ctx->graph->nodes->len; n++)
    {
      OwbNode *node = g_ptr_array_index (ctx->graph->nodes, n);
      for (int o = 0; o < node->n_outputs; o++)
        if (node->outputs[o][0])
          g_hash_table_insert (ctx->producer, node->outputs[o], node);
      for (int i = 0; i < node->n_inputs; i++)
        {
          if (!node->inputs[i][0])
            continue;
          GPtrArray *list = g_hash_table_lookup (ctx->consumers, node->inputs[i]);
          if (!list)
            {
              list = g_ptr_array_new ();
              g_hash_table_insert (ctx->consumers, node->inputs[i], list);
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
  ctx->maps_valid = TRUE;
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
  ctx->maps_valid = FALSE;
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
  ctx->maps_valid = FALSE;
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
  build_maps (ctx);
  for (guint k = 0;; k++)
    {
      char *name = k ? g_strdup_printf ("%s_%u", base, k) : g_strdup (base);
      gboolean taken = g_hash_table_contains (ctx->producer, name) || g_hash_table_contains (ctx->consumers, name)
                       || owb_graph_get_initializer (ctx->graph, name) || is_graph_input (ctx, name);
      for (guint n = 0; !taken && n < ctx->graph->nodes->len; n++)
        {
          OwbNode *node = g_ptr_array_index (ctx->graph->nodes, n);
          taken = node->name && strcmp (node->name, name) == 0;
        }
      if (!taken)
        return name;
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
  ctx->maps_valid = FALSE;
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
