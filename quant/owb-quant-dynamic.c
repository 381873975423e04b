/* owb-quant-dynamic.c: dynamic quantization. MatMul and Gemm run as MatMulInteger on int8 weights
 * with their activation quantized at run time (DynamicQuantizeLinear); recurrent weights and
 * embedding tables are stored in int8 behind DequantizeLinear. Standard ONNX ops only, so ONNX
 * Runtime loads the result; no calibration set is needed. */
#include "owb-quant-private.h"

#include <string.h>

/* A weight quantized once for every node that reads it (the same way). */
typedef struct {
  char *q, *scale, *zero_point; /* initializer names */
  char *dequantized;            /* the output of its DequantizeLinear, once one is made */
} QuantizedWeight;

/* What the passes share: the options and the weights quantized so far (a table read by a Gather
 * and by an LSTM is stored once). */
typedef struct {
  const OwbQuantOptions *options;
  GHashTable *weights; /* "name@axis" or "name@axis@T" (transposed) -> QuantizedWeight * */
  GHashTable *sources; /* names of the float weights quantized, to drop their Constant nodes */
} Dynamic;

/* DynamicQuantizeLinear's outputs for one activation, shared by every MatMul reading it. */
typedef struct {
  char *q, *scale, *zero_point;
} QuantizedActivation;

static void
quantized_weight_free (QuantizedWeight *w)
{
  g_free (w->q);
  g_free (w->scale);
  g_free (w->zero_point);
  g_free (w->dequantized);
  g_free (w);
}

static void
quantized_activation_free (QuantizedActivation *a)
{
  g_free (a->q);
  g_free (a->scale);
  g_free (a->zero_point);
  g_free (a);
}

static gboolean
is_excluded (const OwbQuantOptions *o, const OwbNode *node)
{
  if (o->exclude_ops && g_strv_contains (o->exclude_ops, node->op_type))
    return TRUE;
  return o->exclude_nodes && node->name && g_strv_contains (o->exclude_nodes, node->name);
}

static gboolean
is_float_constant (const OwbTensor *t)
{
  return t && t->kind == OWB_VALUE_TENSOR && t->dtype == OWB_TYPE_FLOAT;
}

/* The ops a node needs are newer than the model's imports: the caller must convert it first
 * (the rewrite would otherwise give a model no runtime accepts). */
static gboolean
check_opset (OwbPassContext *ctx, const OwbNode *node, int need, const char *why, GError **error)
{
  int opset = owb_pass_opset (ctx);
  if (opset >= need)
    return TRUE;
  g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
               "the model imports opset %d and dynamic quantization of %s '%s' needs opset %d (%s); prepare it "
               "first (owb_quant_prepare converts it)",
               opset, node->op_type, owb_pass_label (node), need, why);
  return FALSE;
}

static char *
weight_key (const char *name, int axis, gboolean transposed)
{
  return g_strdup_printf ("%s@%d%s", name, axis, transposed ? "@T" : "");
}

/* B of a Gemm with transB = 1 is [N, K]; MatMulInteger wants [K, N]. Quantizing first and moving
 * bytes after keeps the per-channel axis the output channel's either way. */
static OwbTensor *
transpose_matrix (const OwbTensor *m, GError **error)
{
  int64_t rows = m->dims[0], cols = m->dims[1];
  OwbTensor *t = owb_tensor_new (m->dtype, 2, (int64_t[]){ cols, rows }, error);
  if (t == NULL)
    return NULL;
  gsize size = m->nelems ? m->nbytes / m->nelems : 1;
  const guint8 *src = m->data;
  guint8 *dst = t->data;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++)
      memcpy (dst + (c * rows + r) * size, src + (r * cols + c) * size, size);
  return t;
}

/* The float weight `name` quantized along `axis` (-1: per tensor) to the options' type, as
 * initializers; transposed (2-D only) when asked. Cached: a shared weight is stored once. */
static QuantizedWeight *
quantize_weight (Dynamic *d, OwbPassContext *ctx, const char *name, int axis, gboolean transposed, GError **error)
{
  g_autofree char *key = weight_key (name, axis, transposed);
  QuantizedWeight *w = g_hash_table_lookup (d->weights, key);
  if (w)
    return w;
  const OwbTensor *c = owb_pass_get_constant (ctx, name);
  g_assert (is_float_constant (c));
  OwbTensor *q, *scale, *zp;
  if (!_owb_quant_quantize_weight (c, axis, d->options->weight_type, d->options->symmetric_weights, &q, &scale, &zp,
                                   error))
    {
      g_prefix_error (error, "weight '%s': ", name);
      return NULL;
    }
  if (transposed)
    {
      OwbTensor *t = transpose_matrix (q, error);
      owb_tensor_unref (q);
      if (t == NULL)
        {
          owb_tensor_unref (scale);
          owb_tensor_unref (zp);
          return NULL;
        }
      q = t;
    }
  g_autofree char *qb = g_strconcat (name, "_quantized", NULL);
  g_autofree char *sb = g_strconcat (name, "_scale", NULL);
  g_autofree char *zb = g_strconcat (name, "_zero_point", NULL);
  w = g_new0 (QuantizedWeight, 1);
  w->q = g_strdup (owb_pass_add_initializer (ctx, qb, q));
  w->scale = g_strdup (owb_pass_add_initializer (ctx, sb, scale));
  w->zero_point = g_strdup (owb_pass_add_initializer (ctx, zb, zp));
  g_hash_table_insert (d->weights, g_steal_pointer (&key), w);
  g_hash_table_add (d->sources, g_strdup (name));
  return w;
}

/* A fresh value name from `base` + `suffix`. Caller frees. */
static char *
fresh_name (OwbPassContext *ctx, const char *base, const char *suffix)
{
  g_autofree char *full = g_strconcat (base, suffix, NULL);
  return owb_pass_unique_name (ctx, full);
}

/* Adds a node of `op_type` reading `inputs` and writing `output`, created for the nodes `from`. */
static OwbNode *
add_node (OwbPassContext *ctx, const char *op_type, const char *label, const char *const *inputs, int n_inputs,
          const char *output, const char *const *from, guint n_from)
{
  g_autofree char *suffix = g_strconcat ("_", op_type, NULL);
  g_autofree char *name = fresh_name (ctx, label, suffix);
  OwbNode *node = owb_node_new (op_type, "", name);
  for (int i = 0; i < n_inputs; i++)
    owb_node_add_input (node, inputs[i]);
  owb_node_add_output (node, output);
  owb_pass_add_node (ctx, node, from, n_from);
  return node;
}

/* The weight's DequantizeLinear (made once, for the readers `from`). */
static const char *
dequantize_weight (OwbPassContext *ctx, QuantizedWeight *w, const char *name, int axis, const char *const *from,
                   guint n_from)
{
  if (w->dequantized)
    return w->dequantized;
  g_autofree char *out = fresh_name (ctx, name, "_DequantizeLinear_Output");
  const char *in[] = { w->q, w->scale, w->zero_point };
  OwbNode *dq = add_node (ctx, "DequantizeLinear", name, in, 3, out, from, n_from);
  if (axis >= 0 && owb_graph_get_initializer (ctx->graph, w->scale)->rank == 1)
    owb_node_add_attribute (dq, "axis", OWB_ATTR_INT)->i = axis;
  w->dequantized = g_steal_pointer (&out);
  return w->dequantized;
}

/* Weights that were Constant nodes leave a dead Constant behind once every reader moved to the
 * quantized copy; initializers go with owb_pass_prune_initializers. */
static void
drop_dead_weights (Dynamic *d, OwbPassContext *ctx)
{
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, d->sources);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      OwbNode *producer = owb_pass_producer (ctx, key);
      if (producer && owb_pass_is_op (producer, "Constant") && owb_pass_n_uses (ctx, key) == 0)
        owb_pass_remove_node (ctx, producer);
    }
  owb_pass_prune_initializers (ctx);
}

static GPtrArray *
labels_for (GHashTable *readers, const char *key)
{
  GPtrArray *labels = g_hash_table_lookup (readers, key);
  if (labels == NULL)
    {
      labels = g_ptr_array_new_with_free_func (g_free);
      g_hash_table_insert (readers, g_strdup (key), labels);
    }
  return labels;
}

static OwbTensor *
scaled_copy (const OwbTensor *t, float factor)
{
  OwbTensor *s = owb_tensor_dup (t);
  float *v = s->data;
  for (int64_t i = 0; i < s->nelems; i++)
    v[i] *= factor;
  return s;
}

/* ---- pass 1: MatMul and Gemm on integers ---- */

/* Why a MatMul or Gemm cannot run as MatMulInteger, or NULL when it can. */
static const char *
matmul_obstacle (OwbPassContext *ctx, const OwbNode *node)
{
  const char *a = owb_node_get_input (node, 0), *b = owb_node_get_input (node, 1);
  if (a == NULL || !_owb_quant_is_float_tensor (owb_pass_value_type (ctx, a)))
    return "input A is not a float tensor computed at run time";
  const OwbTensor *w = owb_pass_get_constant (ctx, b);
  if (w == NULL)
    return "input B is not a constant";
  if (!is_float_constant (w) || w->rank != 2)
    return "input B is not a 2-D float tensor";
  if (owb_pass_is_op (node, "Gemm") && owb_node_get_int (node, "transA", 0) != 0)
    return "transA = 1";
  return NULL;
}

/* The graph after it: A -> DynamicQuantizeLinear -> (A_q, A_scale, A_zp);
 * MatMulInteger (A_q, B_q, A_zp, B_zp) -> Cast to float -> Mul by A_scale * B_scale [* alpha]
 * [-> Add beta * C], written to the node's own output name so readers and graph outputs keep it. */
static gboolean
rewrite_matmul (Dynamic *d, OwbPassContext *ctx, OwbNode *node, QuantizedActivation *aq, GError **error)
{
  const OwbQuantOptions *o = d->options;
  gboolean gemm = owb_pass_is_op (node, "Gemm");
  gboolean transposed = gemm && owb_node_get_int (node, "transB", 0) != 0;
  float alpha = gemm ? owb_node_get_float (node, "alpha", 1.0f) : 1.0f;
  float beta = gemm ? owb_node_get_float (node, "beta", 1.0f) : 1.0f;
  g_autofree char *label = g_strdup (owb_pass_label (node));
  g_autofree char *b = g_strdup (owb_node_get_input (node, 1));
  g_autofree char *c = g_strdup (gemm ? owb_node_get_input (node, 2) : NULL);
  g_autofree char *out = g_strdup (node->outputs[0]);
  /* Per channel is per column of the [K, N] matrix: b_zero_point may be [N], not per row. */
  int axis = o->per_channel ? (transposed ? 0 : 1) : -1;
  QuantizedWeight *w = quantize_weight (d, ctx, b, axis, transposed, error);
  if (w == NULL)
    {
      g_prefix_error (error, "%s '%s': ", node->op_type, label);
      return FALSE;
    }
  owb_pass_remove_node (ctx, node);
  const char *from[] = { label };

  g_autofree char *y_int = fresh_name (ctx, out, "_MatMulInteger_Output");
  const char *mm_in[] = { aq->q, w->q, aq->zero_point, w->zero_point };
  add_node (ctx, "MatMulInteger", label, mm_in, 4, y_int, from, 1);

  g_autofree char *y_float = fresh_name (ctx, out, "_Cast_Output");
  OwbNode *cast = add_node (ctx, "Cast", label, (const char *[]){ y_int }, 1, y_float, from, 1);
  owb_node_add_attribute (cast, "to", OWB_ATTR_INT)->i = OWB_TYPE_FLOAT;

  const char *w_scale = w->scale;
  if (alpha != 1.0f)
    {
      g_autofree char *base = g_strconcat (b, "_scale_alpha", NULL);
      const OwbTensor *s = owb_graph_get_initializer (ctx->graph, w->scale);
      w_scale = owb_pass_add_initializer (ctx, base, scaled_copy (s, alpha));
    }
  g_autofree char *scale = fresh_name (ctx, out, "_scale");
  add_node (ctx, "Mul", label, (const char *[]){ aq->scale, w_scale }, 2, scale, from, 1);

  gboolean has_bias = c && c[0] && beta != 0.0f;
  g_autofree char *product = has_bias ? fresh_name (ctx, out, "_unbiased") : g_strdup (out);
  add_node (ctx, "Mul", label, (const char *[]){ y_float, scale }, 2, product, from, 1);
  if (!has_bias)
    return TRUE;

  const char *bias = c;
  g_autofree char *bias_scaled = NULL;
  if (beta != 1.0f)
    {
      const OwbTensor *cc = owb_pass_get_constant (ctx, c);
      g_autofree char *base = g_strconcat (c, "_beta", NULL);
      if (is_float_constant (cc))
        bias = owb_pass_add_initializer (ctx, base, scaled_copy (cc, beta));
      else
        {
          g_autofree char *beta_base = g_strconcat (label, "_beta", NULL);
          const char *beta_name = owb_pass_add_initializer (ctx, beta_base, owb_tensor_new_scalar_float (beta));
          bias_scaled = owb_pass_unique_name (ctx, base);
          add_node (ctx, "Mul", label, (const char *[]){ c, beta_name }, 2, bias_scaled, from, 1);
          bias = bias_scaled;
        }
    }
  add_node (ctx, "Add", label, (const char *[]){ product, bias }, 2, out, from, 1);
  return TRUE;
}

static gboolean
quantize_matmuls (OwbPassContext *ctx, GError **error)
{
  Dynamic *d = ctx->pass->user_data;
  GPtrArray *nodes = owb_pass_nodes (ctx);
  g_autoptr (GPtrArray) selected = g_ptr_array_new ();
  /* activation -> labels of the nodes reading it: one DynamicQuantizeLinear serves them all. */
  g_autoptr (GHashTable) readers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                          (GDestroyNotify) g_ptr_array_unref);
  for (guint i = 0; i < nodes->len; i++)
    {
      OwbNode *node = g_ptr_array_index (nodes, i);
      if (!owb_pass_is_op (node, "MatMul") && !owb_pass_is_op (node, "Gemm"))
        continue;
      if (is_excluded (d->options, node))
        {
          owb_pass_near_miss (ctx, node, "excluded by the user; kept in float");
          continue;
        }
      const char *why = matmul_obstacle (ctx, node);
      if (why)
        {
          owb_pass_near_miss (ctx, node, "kept in float: %s", why);
          continue;
        }
      if (!check_opset (ctx, node, 11, "DynamicQuantizeLinear and MatMulInteger", error))
        return FALSE;
      g_ptr_array_add (selected, node);
      g_ptr_array_add (labels_for (readers, node->inputs[0]), g_strdup (owb_pass_label (node)));
    }
  g_autoptr (GHashTable) activations = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                              (GDestroyNotify) quantized_activation_free);
  for (guint i = 0; i < selected->len; i++)
    {
      OwbNode *node = g_ptr_array_index (selected, i);
      const char *a = node->inputs[0];
      QuantizedActivation *aq = g_hash_table_lookup (activations, a);
      if (aq == NULL)
        {
          GPtrArray *labels = g_hash_table_lookup (readers, a);
          aq = g_new0 (QuantizedActivation, 1);
          aq->q = fresh_name (ctx, a, "_quantized");
          aq->scale = fresh_name (ctx, a, "_scale");
          aq->zero_point = fresh_name (ctx, a, "_zero_point");
          g_autofree char *base = g_strconcat (a, "_DynamicQuantizeLinear", NULL);
          g_autofree char *name = owb_pass_unique_name (ctx, base);
          OwbNode *dql = owb_node_new ("DynamicQuantizeLinear", "", name);
          owb_node_add_input (dql, a);
          owb_node_add_output (dql, aq->q);
          owb_node_add_output (dql, aq->scale);
          owb_node_add_output (dql, aq->zero_point);
          owb_pass_add_node (ctx, dql, (const char *const *) labels->pdata, labels->len);
          g_hash_table_insert (activations, g_strdup (a), aq);
        }
      if (!rewrite_matmul (d, ctx, node, aq, error))
        return FALSE;
    }
  drop_dead_weights (d, ctx);
  return TRUE;
}

/* ---- pass 2: recurrent weights ---- */

typedef struct {
  OwbNode *node;
  int slot;
} WeightUse;

static gboolean
is_recurrent (const OwbNode *node)
{
  return owb_pass_is_op (node, "LSTM") || owb_pass_is_op (node, "GRU") || owb_pass_is_op (node, "RNN");
}

/* W [directions, gates * hidden, input] and R [directions, gates * hidden, hidden] in int8; the
 * kernels stay float (weight-only), the file is 4x smaller. Per channel: per gate row, axis 1. */
static gboolean
quantize_recurrent (OwbPassContext *ctx, GError **error)
{
  Dynamic *d = ctx->pass->user_data;
  int axis = d->options->per_channel ? 1 : -1;
  GPtrArray *nodes = owb_pass_nodes (ctx);
  g_autoptr (GArray) uses = g_array_new (FALSE, FALSE, sizeof (WeightUse));
  g_autoptr (GHashTable) readers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                          (GDestroyNotify) g_ptr_array_unref);
  for (guint i = 0; i < nodes->len; i++)
    {
      OwbNode *node = g_ptr_array_index (nodes, i);
      if (!is_recurrent (node))
        continue;
      if (is_excluded (d->options, node))
        {
          owb_pass_near_miss (ctx, node, "excluded by the user; kept in float");
          continue;
        }
      const char *x = owb_node_get_input (node, 0);
      if (x == NULL || !_owb_quant_is_float_tensor (owb_pass_value_type (ctx, x)))
        {
          owb_pass_near_miss (ctx, node, "kept in float: input X is not a float tensor");
          continue;
        }
      for (int slot = 1; slot <= 2; slot++)
        {
          const char *name = owb_node_get_input (node, slot);
          const OwbTensor *c = owb_pass_get_constant (ctx, name);
          if (!is_float_constant (c) || c->rank != 3)
            {
              owb_pass_near_miss (ctx, node, "%s kept in float: not a constant 3-D float tensor",
                                  slot == 1 ? "W" : "R");
              continue;
            }
          if (!check_opset (ctx, node, axis >= 0 ? 13 : 10,
                            axis >= 0 ? "per-channel DequantizeLinear" : "DequantizeLinear", error))
            return FALSE;
          g_array_append_val (uses, ((WeightUse){ node, slot }));
          g_autofree char *key = weight_key (name, axis, FALSE);
          g_ptr_array_add (labels_for (readers, key), g_strdup (owb_pass_label (node)));
        }
    }
  for (guint k = 0; k < uses->len; k++)
    {
      WeightUse *u = &g_array_index (uses, WeightUse, k);
      g_autofree char *name = g_strdup (u->node->inputs[u->slot]);
      QuantizedWeight *w = quantize_weight (d, ctx, name, axis, FALSE, error);
      if (w == NULL)
        {
          g_prefix_error (error, "%s '%s': ", u->node->op_type, owb_pass_label (u->node));
          return FALSE;
        }
      g_autofree char *key = weight_key (name, axis, FALSE);
      GPtrArray *labels = g_hash_table_lookup (readers, key);
      const char *dq = dequantize_weight (ctx, w, name, axis, (const char *const *) labels->pdata, labels->len);
      owb_pass_set_input (ctx, u->node, u->slot, dq);
    }
  drop_dead_weights (d, ctx);
  return TRUE;
}

/* ---- pass 3: embedding tables ---- */

/* Gather on the int8 table, then DequantizeLinear of the rows gathered: with one scale for the
 * whole table the order does not change the result, and only the rows read are dequantized. */
static gboolean
quantize_gathers (OwbPassContext *ctx, GError **error)
{
  Dynamic *d = ctx->pass->user_data;
  GPtrArray *nodes = owb_pass_nodes (ctx);
  g_autoptr (GPtrArray) selected = g_ptr_array_new ();
  for (guint i = 0; i < nodes->len; i++)
    {
      OwbNode *node = g_ptr_array_index (nodes, i);
      /* A Gather from computed data (shapes, slices of activations) is not a table: no note. */
      if (!owb_pass_is_op (node, "Gather") || !is_float_constant (owb_pass_get_constant (ctx, node->inputs[0])))
        continue;
      if (is_excluded (d->options, node))
        {
          owb_pass_near_miss (ctx, node, "excluded by the user; kept in float");
          continue;
        }
      if (!check_opset (ctx, node, 10, "DequantizeLinear", error))
        return FALSE;
      g_ptr_array_add (selected, node);
    }
  for (guint i = 0; i < selected->len; i++)
    {
      OwbNode *node = g_ptr_array_index (selected, i);
      g_autofree char *label = g_strdup (owb_pass_label (node));
      g_autofree char *table = g_strdup (node->inputs[0]);
      g_autofree char *indices = g_strdup (node->inputs[1]);
      g_autofree char *out = g_strdup (node->outputs[0]);
      const OwbAttribute *axis_attr = owb_node_get_attribute (node, "axis");
      int64_t axis = owb_node_get_int (node, "axis", 0);
      QuantizedWeight *w = quantize_weight (d, ctx, table, -1, FALSE, error);
      if (w == NULL)
        {
          g_prefix_error (error, "Gather '%s': ", label);
          return FALSE;
        }
      owb_pass_remove_node (ctx, node);
      const char *from[] = { label };
      g_autofree char *rows = fresh_name (ctx, out, "_quantized");
      OwbNode *gather = add_node (ctx, "Gather", label, (const char *[]){ w->q, indices }, 2, rows, from, 1);
      if (axis_attr)
        owb_node_add_attribute (gather, "axis", OWB_ATTR_INT)->i = axis;
      add_node (ctx, "DequantizeLinear", label, (const char *[]){ rows, w->scale, w->zero_point }, 3, out, from, 1);
    }
  drop_dead_weights (d, ctx);
  return TRUE;
}

OwbModel *
owb_quant_quantize_dynamic (OwbModel *model, const OwbQuantOptions *options, OwbOptimizeReport **report,
                            GError **error)
{
  OwbQuantOptions defaults;
  if (options == NULL)
    {
      owb_quant_options_init (&defaults);
      options = &defaults;
    }
  /* DynamicQuantizeLinear is uint8 only, so activation_type is not consulted. */
  if (options->weight_type != OWB_TYPE_INT8 && options->weight_type != OWB_TYPE_UINT8)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "dynamic quantization stores weights in int8 or uint8, not %s",
                   owb_data_type_name (options->weight_type));
      return NULL;
    }
  Dynamic d = {
    .options = options,
    .weights = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) quantized_weight_free),
    .sources = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL),
  };
  OwbPass matmuls = { "quantize_dynamic_matmul", OWB_OPTIMIZE_BASIC,
                      "MatMul and Gemm with constant weights to DynamicQuantizeLinear + MatMulInteger",
                      quantize_matmuls, &d };
  OwbPass recurrent = { "quantize_dynamic_recurrent", OWB_OPTIMIZE_BASIC,
                        "LSTM, GRU and RNN weights stored in int8 behind DequantizeLinear", quantize_recurrent, &d };
  OwbPass gathers = { "quantize_dynamic_gather", OWB_OPTIMIZE_BASIC,
                      "constant Gather tables in int8, the gathered rows dequantized", quantize_gathers, &d };
  const OwbPass *passes[] = { &matmuls, &recurrent, &gathers };
  OwbModel *quantized = _owb_quant_run_passes (model, passes, G_N_ELEMENTS (passes), options, report, error);
  g_hash_table_unref (d.weights);
  g_hash_table_unref (d.sources);
  return quantized;
}
