/* pass-fuse-qdq-lookup.c: DequantizeLinear (8-bit, per tensor) -> an elementwise float op of one
 * variable input (Sigmoid, HardSigmoid, HardSwish, Tanh, Relu, Clip...) -> QuantizeLinear (8-bit,
 * per tensor) becomes one QLinearLookup: the output byte is a function of the input byte, so the
 * 256 outputs are computed once, at optimization, by running those three nodes' own kernels on
 * every input byte; a run then reads a table instead of dequantizing, computing in float and
 * quantizing (a QDQ EfficientNet's SiLUs and MobileNet's HardSwishes sit between such pairs). */
#include "owb-optimizer-private.h"

#include <string.h>

static gboolean
is_8bit (OwbDataType t)
{
  return t == OWB_TYPE_UINT8 || t == OWB_TYPE_INT8;
}

static gboolean
is_lookup_op (const OwbNode *node)
{
  static const char *const ops[] = { "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Relu", "LeakyRelu", "Clip",
                                     "Elu", "Selu", "Celu", "Softplus", "Softsign", "Gelu", "Mish", "Erf",
                                     "Neg", "Abs", "Exp", "Sqrt", "Reciprocal", "ThresholdedRelu", "Identity" };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    if (owb_pass_is_op (node, ops[i]))
      return TRUE;
  return FALSE;
}

/* Scale and zero point of a Q/DQ node, constants of one value each (a zero point may be absent). */
static gboolean
per_tensor (OwbPassContext *ctx, const OwbNode *node)
{
  if (node->n_inputs < 2 || node->n_outputs != 1 || owb_node_get_int (node, "block_size", 0) != 0)
    return FALSE;
  for (int i = 1; i < node->n_inputs && i < 3; i++)
    {
      if (!node->inputs[i][0])
        continue;
      const OwbTensor *c = owb_pass_get_constant (ctx, node->inputs[i]);
      if (!c || c->nelems != 1)
        return FALSE;
    }
  return TRUE;
}

/* The table: DequantizeLinear, op and QuantizeLinear run as a model of their own on the 256 bytes
 * of x's type (byte b at index b), with the session's providers. NULL with *error on failure. */
static OwbTensor *
make_table (OwbPassContext *ctx, const OwbNode *dq, const OwbNode *op, const OwbNode *q, OwbDataType xtype,
            GError **error)
{
  g_autoptr (OwbModel) m = owb_model_new ();
  m->ir_version = MAX (ctx->model->ir_version, 4);
  for (guint i = 0; i < ctx->model->opset_imports->len; i++)
    {
      const OwbOpsetImport *imp = &g_array_index (ctx->model->opset_imports, OwbOpsetImport, i);
      owb_model_set_opset (m, imp->domain, imp->version);
    }
  m->graph = owb_graph_new ("qlinear_lookup");
  m->graph->model = m;
  int64_t n = 256;
  OwbTensor *bytes = owb_tensor_new (xtype, 1, &n, NULL);
  for (int i = 0; i < 256; i++)
    ((uint8_t *) bytes->data)[i] = (uint8_t) i;
  owb_graph_add_initializer (m->graph, dq->inputs[0], bytes);
  const OwbNode *nodes[3] = { dq, op, q };
  for (int k = 0; k < 3; k++)
    {
      owb_graph_add_node (m->graph, owb_node_dup (nodes[k]));
      for (int i = 1; i < nodes[k]->n_inputs; i++)
        if (nodes[k]->inputs[i][0])
          owb_graph_add_initializer (m->graph, nodes[k]->inputs[i],
                                     owb_tensor_ref ((OwbTensor *) owb_pass_get_constant (ctx, nodes[k]->inputs[i])));
    }
  g_ptr_array_add (m->graph->outputs, owb_value_info_new (q->outputs[0], NULL));
  OwbSessionOptions so;
  owb_session_options_init (&so);
  so.providers = ctx->options->providers;
  so.n_threads = 1;
  so.optimize = OWB_OPTIMIZE_DISABLED;
  g_autoptr (OwbSession) session = owb_session_new (m, &so, error);
  if (!session)
    return NULL;
  OwbTensor *out = NULL;
  if (!owb_session_run (session, 0, NULL, NULL, 1, NULL, &out, NULL, NULL, error))
    return NULL;
  if (out->nelems != 256 || !is_8bit (out->dtype))
    {
      owb_tensor_unref (out);
      g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "the table is not 256 bytes");
      return NULL;
    }
  OwbTensor *t = owb_tensor_dup (out);
  owb_tensor_unref (out);
  return t;
}

static gboolean
try_fuse (OwbPassContext *ctx, OwbNode *q)
{
  if (!owb_pass_is_op (q, "QuantizeLinear") || !per_tensor (ctx, q) || owb_node_get_int (q, "precision", 0) != 0)
    return FALSE;
  OwbNode *op = owb_pass_producer (ctx, q->inputs[0]);
  if (!op || !is_lookup_op (op) || op->n_outputs != 1 || op->n_inputs < 1)
    return FALSE;
  OwbNode *dq = owb_pass_producer (ctx, op->inputs[0]);
  if (!owb_pass_is_op (dq, "DequantizeLinear") || !per_tensor (ctx, dq))
    return FALSE;
  const OwbValueType *xt = owb_pass_value_type (ctx, dq->inputs[0]);
  const OwbValueType *ft = owb_pass_value_type (ctx, op->outputs[0]);
  if (!xt || xt->kind != OWB_VALUE_TENSOR || !is_8bit (xt->dtype) || !ft || ft->dtype != OWB_TYPE_FLOAT)
    return FALSE;
  for (int i = 1; i < op->n_inputs; i++)
    if (op->inputs[i][0] && !owb_pass_get_constant (ctx, op->inputs[i]))
      {
        owb_pass_near_miss (ctx, op, "sits between a DequantizeLinear and a QuantizeLinear but its input %d is not a "
                            "constant; kept", i);
        return FALSE;
      }
  if (owb_pass_n_uses (ctx, op->outputs[0]) != 1 || owb_pass_is_graph_output (ctx, op->outputs[0]))
    {
      owb_pass_near_miss (ctx, op, "sits between a DequantizeLinear and a QuantizeLinear but its float output is read "
                          "elsewhere too; kept");
      return FALSE;
    }
  if (!ctx->options->providers)
    return FALSE;
  g_autoptr (GError) local = NULL;
  OwbTensor *table = make_table (ctx, dq, op, q, xt->dtype, &local);
  if (!table)
    {
      owb_pass_near_miss (ctx, op, "its table could not be computed (%s); kept", local ? local->message : "unknown");
      return FALSE;
    }
  const char *label = owb_pass_label (op);
  g_autofree char *base = g_strdup_printf ("%s_table", label);
  const char *tname = owb_pass_add_initializer (ctx, base, table);
  g_autofree char *name = owb_pass_scoped_name (ctx, op->name && op->name[0] ? op->name : label, "QLinearLookup");
  OwbNode *lk = owb_node_new ("QLinearLookup", OWB_DOMAIN, name);
  owb_node_add_input (lk, dq->inputs[0]);
  owb_node_add_input (lk, tname);
  owb_node_add_output (lk, q->outputs[0]);
  gboolean drop_dq = owb_pass_n_uses (ctx, dq->outputs[0]) == 1 && !owb_pass_is_graph_output (ctx, dq->outputs[0]);
  const char *from[3];
  guint n_from = 0;
  if (drop_dq)
    from[n_from++] = owb_pass_label (dq);
  from[n_from++] = label;
  from[n_from++] = owb_pass_label (q);
  owb_model_set_opset (ctx->model, OWB_DOMAIN, 1);
  owb_pass_add_node (ctx, lk, from, n_from);
  owb_pass_remove_node (ctx, q);
  owb_pass_remove_node (ctx, op);
  if (drop_dq)
    owb_pass_remove_node (ctx, dq);
  return TRUE;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  (void) error;
  if (ctx->options->portable)
    return TRUE;
  GPtrArray *candidates = g_ptr_array_new ();
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    {
      OwbNode *node = g_ptr_array_index (owb_pass_nodes (ctx), i);
      if (owb_pass_is_op (node, "QuantizeLinear"))
        g_ptr_array_add (candidates, node);
    }
  /* a fusion removes its QuantizeLinear, op and DequantizeLinear, none of them another candidate */
  guint fused = 0;
  for (guint i = 0; i < candidates->len; i++)
    fused += try_fuse (ctx, g_ptr_array_index (candidates, i));
  g_ptr_array_unref (candidates);
  if (fused)
    owb_pass_prune_initializers (ctx);
  return TRUE;
}

const OwbPass _owb_pass_fuse_qdq_lookup = {
  "fuse_qdq_lookup",
  OWB_OPTIMIZE_EXTENDED,
  "turns DequantizeLinear -> elementwise op (Sigmoid, HardSwish, Tanh...) -> QuantizeLinear, per tensor and 8-bit, "
  "into a 256-entry QLinearLookup computed by those nodes' own kernels",
  run,
};
