/* owb-infer.c: whole-graph shape and type inference, symbolic dims carried by name. */
#include <owb/owb-validate.h>
#include <owb/owb-op.h>
#include <owb/owb-error.h>
#include "owb-ir-private.h"

#include <string.h>

typedef struct Env Env;
struct Env {
  GHashTable *types;  /* name -> OwbValueType * (owned) */
  GHashTable *values; /* name -> const OwbTensor * (borrowed: initializers, Constant attributes) */
  GHashTable *data;   /* name -> OwbInferData * (owned): data propagation's partly known values */
  GHashTable *computed; /* name -> OwbTensor * (owned): the values data propagation knows whole */
  const Env *outer;
};

static const OwbValueType *
env_type (const Env *env, const char *name)
{
  for (; env; env = env->outer)
    {
      const OwbValueType *t = g_hash_table_lookup (env->types, name);
      if (t)
        return t;
    }
  return NULL;
}

static const OwbTensor *
env_value (const Env *env, const char *name)
{
  for (; env; env = env->outer)
    {
      const OwbTensor *t = g_hash_table_lookup (env->values, name);
      if (t)
        return t;
    }
  return NULL;
}

static const OwbTensor *
env_computed (const Env *env, const char *name)
{
  for (; env; env = env->outer)
    {
      const OwbTensor *t = g_hash_table_lookup (env->computed, name);
      if (t)
        return t;
    }
  return NULL;
}

static const OwbInferData *
env_data (const Env *env, const char *name)
{
  for (; env; env = env->outer)
    {
      const OwbInferData *d = g_hash_table_lookup (env->data, name);
      if (d)
        return d;
    }
  return NULL;
}

static void
env_set (Env *env, const char *name, const OwbValueType *type)
{
  g_hash_table_replace (env->types, (gpointer) name, g_memdup2 (type, sizeof *type));
}

/* Where inference knows less than the file declares (an unknown dim), keep the declaration. */
static void
merge_declared (OwbValueType *inferred, const OwbValueType *declared)
{
  if (declared->kind != OWB_VALUE_TENSOR || inferred->kind != OWB_VALUE_TENSOR)
    return;
  if (inferred->dtype == OWB_TYPE_UNDEFINED)
    inferred->dtype = declared->dtype;
  if (inferred->rank < 0)
    {
      inferred->rank = declared->rank;
      memcpy (inferred->dims, declared->dims, sizeof declared->dims);
      return;
    }
  if (declared->rank != inferred->rank)
    return;
  for (int i = 0; i < inferred->rank; i++)
    if (!owb_dim_is_known (inferred->dims[i]) && !inferred->dims[i].param)
      inferred->dims[i] = declared->dims[i];
}

static gboolean infer_graph (OwbModel *model, OwbGraph *graph, const Env *outer, int depth, GError **error);

/* Records what data propagation knows of node's output: the whole value as a tensor (which every
 * schema reads as it reads a constant), or the partly known elements for the schemas that take
 * named dims (Reshape, Expand, ConstantOfShape, Range). */
static void
propagate (Env *env, const OwbNode *node, int opset, const OwbValueType *const *in_types,
           const OwbInferData *const *in, const OwbValueType *out_type)
{
  OwbInferData data;
  if (!_owb_infer_propagate (node, opset, in_types, in, out_type, &data))
    return;
  const char *name = node->outputs[0];
  if (!_owb_infer_data_all_known (&data))
    {
      g_hash_table_replace (env->data, (gpointer) name, g_memdup2 (&data, sizeof data));
      return;
    }
  int64_t dims[1] = { data.n };
  OwbTensor *t = owb_tensor_new (out_type->dtype, data.rank, dims, NULL);
  for (int i = 0; i < data.n; i++)
    if (out_type->dtype == OWB_TYPE_INT32)
      ((int32_t *) t->data)[i] = (int32_t) data.elements[i].value;
    else if (out_type->dtype == OWB_TYPE_BOOL)
      ((uint8_t *) t->data)[i] = data.elements[i].value != 0;
    else
      ((int64_t *) t->data)[i] = data.elements[i].value;
  g_hash_table_replace (env->computed, (gpointer) name, t);
}

static gboolean
infer_node (OwbModel *model, OwbNode *node, Env *env, int depth, GError **error)
{
  /* Subgraph inference is best effort: a branch that is never taken may be inconsistent for the
   * shapes at hand (exporters emit both branches of a rank test), and run time checks what runs. */
  for (int a = 0; a < node->n_attributes; a++)
    {
      OwbAttribute *attr = &node->attributes[a];
      if (depth + 1 > 64)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "subgraphs are nested more than 64 deep");
          return FALSE;
        }
      if (attr->type == OWB_ATTR_GRAPH && attr->g)
        infer_graph (model, attr->g, env, depth + 1, NULL);
      for (int k = 0; attr->type == OWB_ATTR_GRAPHS && k < attr->n; k++)
        infer_graph (model, attr->graphs[k], env, depth + 1, NULL);
    }

  OwbValueType *outputs = g_new (OwbValueType, MAX (node->n_outputs, 1));
  for (int o = 0; o < node->n_outputs; o++)
    owb_value_type_init_unknown (&outputs[o]);
  int opset = node->opset > 0 ? node->opset : (int) owb_model_get_opset (model, node->domain);
  const OwbOpSchema *schema = owb_op_schema_lookup (node->domain, node->op_type, opset);
  gboolean ok = TRUE;
  if (schema)
    {
      const OwbValueType **in_types = g_new0 (const OwbValueType *, MAX (node->n_inputs, 1));
      const OwbTensor **in_values = g_new0 (const OwbTensor *, MAX (node->n_inputs, 1));
      /* Data propagation: in_data for the schema (values only partly known), all_data for the
       * rules below (constants too). */
      const OwbInferData **in_data = g_new0 (const OwbInferData *, MAX (node->n_inputs, 1));
      const OwbInferData **all_data = g_new0 (const OwbInferData *, MAX (node->n_inputs, 1));
      OwbInferData *from_constants = NULL;
      gboolean propagated = FALSE;
      OwbValueType unknown;
      owb_value_type_init_unknown (&unknown);
      for (int i = 0; i < node->n_inputs; i++)
        {
          if (!node->inputs[i][0])
            continue;
          in_types[i] = env_type (env, node->inputs[i]);
          if (!in_types[i])
            in_types[i] = &unknown;
          in_values[i] = env_value (env, node->inputs[i]);
          if (!in_values[i] && (in_values[i] = env_computed (env, node->inputs[i])))
            propagated = TRUE;
          if (!in_values[i] && (all_data[i] = in_data[i] = env_data (env, node->inputs[i])))
            propagated = TRUE;
          if (in_values[i] && in_values[i]->kind == OWB_VALUE_TENSOR && in_values[i]->nelems <= OWB_INFER_DATA_MAX)
            {
              if (!from_constants)
                from_constants = g_new (OwbInferData, node->n_inputs);
              if (_owb_infer_data_from_tensor (in_values[i], &from_constants[i]))
                all_data[i] = &from_constants[i];
            }
        }
      OwbInferContext ctx = {
        .node = node,
        .opset = opset,
        .n_inputs = node->n_inputs,
        .inputs = in_types,
        .input_values = in_values,
        .n_outputs = node->n_outputs,
        .outputs = outputs,
        .graph = node->graph,
        .input_data = in_data,
      };
      GError *local = NULL;
      ok = owb_op_infer (schema, &ctx, &local);
      gboolean retried = !ok && propagated;
      if (retried)
        {
          /* What data propagation derived may disagree with a stale value_info the file declares
           * (a Reshape target from a declared shape): it never makes a model fail that loads
           * without it. The node is inferred again from its constants alone. */
          g_clear_error (&local);
          for (int i = 0; i < node->n_inputs; i++)
            {
              in_values[i] = node->inputs[i][0] ? env_value (env, node->inputs[i]) : NULL;
              in_data[i] = all_data[i] = NULL;
            }
          for (int o = 0; o < node->n_outputs; o++)
            owb_value_type_init_unknown (&outputs[o]);
          ctx.values_read = FALSE;
          ctx.values_read_inputs = 0;
          ok = owb_op_infer (schema, &ctx, &local);
        }
      if (!ok)
        g_propagate_error (error, local);
      if (ok && !retried && node->n_outputs == 1 && node->outputs[0][0])
        propagate (env, node, opset, in_types, all_data, &outputs[0]);
      g_free (in_types);
      g_free (in_values);
      g_free (in_data);
      g_free (all_data);
      g_free (from_constants);
    }
  for (int o = 0; ok && o < node->n_outputs; o++)
    {
      if (!node->outputs[o][0])
        continue;
      const OwbValueType *declared = env_type (env, node->outputs[o]);
      if (declared)
        merge_declared (&outputs[o], declared);
      env_set (env, node->outputs[o], &outputs[o]);
    }
  /* A Constant's value is known to everything downstream (Reshape targets and the like). */
  if (ok && strcmp (node->op_type, "Constant") == 0 && node->n_outputs == 1 && (!node->domain || !node->domain[0]))
    {
      const OwbAttribute *value = owb_node_get_attribute (node, "value");
      if (value && value->type == OWB_ATTR_TENSOR && value->t)
        g_hash_table_replace (env->values, node->outputs[0], value->t);
    }
  g_free (outputs);
  return ok;
}

static void
record_value_infos (OwbGraph *graph, Env *env)
{
  GHashTable *recorded = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < graph->inputs->len; i++)
    g_hash_table_add (recorded, ((OwbValueInfo *) g_ptr_array_index (graph->inputs, i))->name);
  for (guint i = 0; i < graph->outputs->len; i++)
    {
      OwbValueInfo *info = g_ptr_array_index (graph->outputs, i);
      const OwbValueType *t = g_hash_table_lookup (env->types, info->name);
      /* The inferred type already took in what the declaration knew (merge_declared). */
      if (t && t->dtype != OWB_TYPE_UNDEFINED)
        {
          info->type = *t;
          info->has_type = TRUE;
        }
      g_hash_table_add (recorded, info->name);
    }
  for (guint i = 0; i < graph->value_infos->len; i++)
    {
      OwbValueInfo *info = g_ptr_array_index (graph->value_infos, i);
      const OwbValueType *t = g_hash_table_lookup (env->types, info->name);
      if (t)
        {
          info->type = *t;
          info->has_type = TRUE;
        }
      g_hash_table_add (recorded, info->name);
    }
  for (guint n = 0; n < graph->nodes->len; n++)
    {
      OwbNode *node = g_ptr_array_index (graph->nodes, n);
      for (int o = 0; o < node->n_outputs; o++)
        {
          const char *name = node->outputs[o];
          if (!name[0] || g_hash_table_contains (recorded, name))
            continue;
          const OwbValueType *t = g_hash_table_lookup (env->types, name);
          if (!t)
            continue;
          g_ptr_array_add (graph->value_infos, owb_value_info_new (name, t));
          g_hash_table_add (recorded, (gpointer) name);
        }
    }
  g_hash_table_unref (recorded);
}

static gboolean
infer_graph (OwbModel *model, OwbGraph *graph, const Env *outer, int depth, GError **error)
{
  if (depth > 64)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "subgraphs are nested more than 64 deep");
      return FALSE;
    }
  Env env = { g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free), g_hash_table_new (g_str_hash, g_str_equal),
              g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free),
              g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) owb_tensor_unref), outer };
  /* Declared types first (value_info, outputs), so inference can fall back on them. */
  for (guint i = 0; i < graph->value_infos->len; i++)
    {
      OwbValueInfo *info = g_ptr_array_index (graph->value_infos, i);
      if (info->has_type)
        env_set (&env, info->name, &info->type);
    }
  for (guint i = 0; i < graph->outputs->len; i++)
    {
      OwbValueInfo *info = g_ptr_array_index (graph->outputs, i);
      if (info->has_type)
        env_set (&env, info->name, &info->type);
    }
  for (guint i = 0; i < graph->inputs->len; i++)
    {
      OwbValueInfo *info = g_ptr_array_index (graph->inputs, i);
      if (info->has_type)
        env_set (&env, info->name, &info->type);
    }
  for (guint i = 0; i < graph->initializers->len; i++)
    {
      OwbTensor *t = g_ptr_array_index (graph->initializers, i);
      const char *name = g_ptr_array_index (graph->initializer_names, i);
      OwbValueType type;
      owb_tensor_get_value_type (t, &type);
      env_set (&env, name, &type);
      g_hash_table_replace (env.values, (gpointer) name, t);
    }
  gboolean ok = TRUE;
  for (guint n = 0; ok && n < graph->nodes->len; n++)
    ok = infer_node (model, g_ptr_array_index (graph->nodes, n), &env, depth, error);
  if (ok)
    record_value_infos (graph, &env);
  g_hash_table_unref (env.types);
  g_hash_table_unref (env.values);
  g_hash_table_unref (env.data);
  g_hash_table_unref (env.computed);
  return ok;
}

gboolean
owb_model_infer_shapes (OwbModel *model, GError **error)
{
  if (!owb_model_validate (model, error))
    return FALSE;
  return infer_graph (model, model->graph, NULL, 0, error);
}
