/* pass-fuse-qdq-lookup.c: DequantizeLinear (8-bit, per tensor) -> an elementwise float op of one
 * variable input (Sigmoid, HardSigmoid, HardSwish, Tanh, Relu, Clip...) -> QuantizeLinear (8-bit,
 * per tensor) becomes one QLinearLookup: the output byte is a function of the input byte, so the
 * 256 outputs are computed once, at optimization, by running those three nodes' own kernels on
 * every input byte; a run then reads a table instead of dequantizing, computing in float and
 * quantizing (a QDQ EfficientNet's SiLUs and MobileNet's HardSwishes sit between such pairs). Two
 * dequantized operands of an Add or Mul make a table of 65536 bytes the same way. */
#include "owb-optimizer-private.h"
#include <owb/owb-validate.h>

#include <math.h>
#include <string.h>

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

/* A Q/DQ node of one scale and zero point with its one output. */
static gboolean
per_tensor (OwbPassContext *ctx, const OwbNode *node)
{
  return _owb_pass_is_per_tensor_qdq (ctx, node) && node->n_outputs == 1;
}

/* `dq` when the fused op was its only reader and it writes no graph output, so that it goes with
 * the fusion; else NULL (it stays for its other readers). */
static OwbNode *
only_read_by_fusion (OwbPassContext *ctx, OwbNode *dq)
{
  return owb_pass_n_uses (ctx, dq->outputs[0]) == 1 && !owb_pass_is_graph_output (ctx, dq->outputs[0]) ? dq : NULL;
}

/* Whether op's float output is read by its QuantizeLinear only, so that the float value can go; a
 * near miss otherwise, `where` saying where op sits. */
static gboolean
float_output_only_quantized (OwbPassContext *ctx, OwbNode *op, const char *where)
{
  if (owb_pass_n_uses (ctx, op->outputs[0]) == 1 && !owb_pass_is_graph_output (ctx, op->outputs[0]))
    return TRUE;
  owb_pass_near_miss (ctx, op, "%s but its float output is read elsewhere too; kept", where);
  return FALSE;
}

/* The QLinearLookup that replaces op: reads x through `table` (taken, as an initializer named after
 * op) and writes y. NULL, with a near miss giving `local`'s reason, when the table could not be
 * computed (table NULL). */
static OwbNode *
lookup_node (OwbPassContext *ctx, const OwbNode *op, OwbTensor *table, const GError *local, const char *x,
             const char *y)
{
  if (!table)
    {
      owb_pass_near_miss (ctx, op, "its table could not be computed (%s); kept", local ? local->message : "unknown");
      return NULL;
    }
  const char *label = owb_pass_label (op);
  g_autofree char *base = g_strdup_printf ("%s_table", label);
  const char *tname = owb_pass_add_initializer (ctx, base, table);
  g_autofree char *name = owb_pass_scoped_name (ctx, op->name && op->name[0] ? op->name : label, "QLinearLookup");
  OwbNode *lk = owb_node_new ("QLinearLookup", OWB_DOMAIN, name);
  owb_node_add_input (lk, x);
  owb_node_add_input (lk, tname);
  owb_node_add_output (lk, y);
  return lk;
}

/* Runs m, a model of no inputs whose one output is the table, on the host and returns that output
 * as a 1-D table of its n bytes; NULL with *error when it fails or gives another count or type. */
static OwbTensor *
run_table_model (OwbPassContext *ctx, OwbModel *m, int64_t n, GError **error)
{
  if (!owb_model_validate (m, error))
    return NULL;
  g_autoptr (OwbSession) session = _owb_pass_new_host_session (ctx, m, error);
  if (!session)
    return NULL;
  OwbTensor *out = NULL;
  if (!owb_session_run (session, 0, NULL, NULL, 1, NULL, &out, NULL, NULL, error))
    return NULL;
  if (out->nelems != n || !_owb_pass_is_8bit (out->dtype))
    {
      owb_tensor_unref (out);
      g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "the table does not hold one byte per input");
      return NULL;
    }
  OwbTensor *t = owb_tensor_new (out->dtype, 1, &n, NULL);
  memcpy (t->data, out->data, (size_t) n);
  owb_tensor_unref (out);
  return t;
}

/* The table: the DequantizeLinear(s), the op and the QuantizeLinear run as a model of their own
 * with the session's providers, on the 256 bytes of x's type (byte b at index b); with a second
 * DequantizeLinear dq2, on the 256 x 256 pairs (dq's bytes [256, 1] against dq2's [1, 256], so
 * that entry 256 a + b is the output for bytes a and b). NULL with *error on failure. */
static OwbTensor *
make_table (OwbPassContext *ctx, const OwbNode *dq, const OwbNode *dq2, const OwbNode *op, const OwbNode *q,
            OwbDataType xtype, OwbDataType x2type, GError **error)
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
  int64_t col[2] = { 256, 1 }, row[2] = { 1, 256 };
  OwbTensor *bytes = owb_tensor_new (xtype, dq2 ? 2 : 1, col, NULL);
  for (int i = 0; i < 256; i++)
    ((uint8_t *) bytes->data)[i] = (uint8_t) i;
  owb_graph_add_initializer (m->graph, dq->inputs[0], bytes);
  if (dq2)
    {
      OwbTensor *bytes2 = owb_tensor_new (x2type, 2, row, NULL);
      for (int i = 0; i < 256; i++)
        ((uint8_t *) bytes2->data)[i] = (uint8_t) i;
      owb_graph_add_initializer (m->graph, dq2->inputs[0], bytes2);
    }
  const OwbNode *nodes[4] = { dq, op, q, dq2 };
  for (int k = 0; k < (dq2 ? 4 : 3); k++)
    {
      owb_graph_add_node (m->graph, owb_node_dup (nodes[k]));
      for (int i = 1; i < nodes[k]->n_inputs; i++)
        {
          const OwbTensor *c = nodes[k]->inputs[i][0] ? owb_pass_get_constant (ctx, nodes[k]->inputs[i]) : NULL;
          if (c)
            owb_graph_add_initializer (m->graph, nodes[k]->inputs[i], owb_tensor_ref ((OwbTensor *) c));
        }
    }
  g_ptr_array_add (m->graph->outputs, owb_value_info_new (q->outputs[0], NULL));
  return run_table_model (ctx, m, dq2 ? 65536 : 256, error);
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
  if (!xt || xt->kind != OWB_VALUE_TENSOR || !_owb_pass_is_8bit (xt->dtype) || !ft || ft->dtype != OWB_TYPE_FLOAT)
    return FALSE;
  for (int i = 1; i < op->n_inputs; i++)
    if (op->inputs[i][0] && !owb_pass_get_constant (ctx, op->inputs[i]))
      {
        owb_pass_near_miss (ctx, op, "sits between a DequantizeLinear and a QuantizeLinear but its input %d is not a "
                            "constant; kept", i);
        return FALSE;
      }
  if (!float_output_only_quantized (ctx, op, "sits between a DequantizeLinear and a QuantizeLinear"))
    return FALSE;
  if (!ctx->options->providers)
    return FALSE;
  g_autoptr (GError) local = NULL;
  OwbTensor *table = make_table (ctx, dq, NULL, op, q, xt->dtype, OWB_TYPE_UNDEFINED, &local);
  OwbNode *lk = lookup_node (ctx, op, table, local, dq->inputs[0], q->outputs[0]);
  if (!lk)
    return FALSE;
  owb_model_set_opset (ctx->model, OWB_DOMAIN, 1);
  OwbNode *const chain[] = { op, q }, *const dropped[] = { only_read_by_fusion (ctx, dq) };
  _owb_pass_replace_qdq (ctx, &lk, 1, chain, G_N_ELEMENTS (chain), dropped, G_N_ELEMENTS (dropped));
  return TRUE;
}

/* A Q/DQ node whose scale is one float32 and whose zero point is given, one 8-bit value. */
static gboolean
float32_params (OwbPassContext *ctx, const OwbNode *node)
{
  const OwbTensor *s = owb_pass_get_constant (ctx, node->inputs[1]);
  const OwbTensor *z = node->n_inputs > 2 && node->inputs[2][0] ? owb_pass_get_constant (ctx, node->inputs[2]) : NULL;
  return s && s->dtype == OWB_TYPE_FLOAT && s->nelems == 1 && z && z->nelems == 1 && _owb_pass_is_8bit (z->dtype);
}

/* DequantizeLinear (A), DequantizeLinear (B) -> Add/Mul -> QuantizeLinear, all per tensor and
 * 8-bit, as QLinearBinary (float32 parameters) or else QLinearBinaryLookup over a 65536-byte table (a QDQ EfficientNet's SiLU products and
 * squeeze-excitation scales, residual sums). */
static gboolean
try_fuse_binary (OwbPassContext *ctx, OwbNode *q)
{
  if (!owb_pass_is_op (q, "QuantizeLinear") || !per_tensor (ctx, q) || owb_node_get_int (q, "precision", 0) != 0)
    return FALSE;
  OwbNode *op = owb_pass_producer (ctx, q->inputs[0]);
  if (!op || !(owb_pass_is_op (op, "Add") || owb_pass_is_op (op, "Mul")) || op->n_inputs != 2 || op->n_outputs != 1)
    return FALSE;
  OwbNode *da = owb_pass_producer (ctx, op->inputs[0]), *db = owb_pass_producer (ctx, op->inputs[1]);
  if (!owb_pass_is_op (da, "DequantizeLinear") || !owb_pass_is_op (db, "DequantizeLinear") || da == db
      || !per_tensor (ctx, da) || !per_tensor (ctx, db))
    return FALSE;
  const OwbValueType *at = owb_pass_value_type (ctx, da->inputs[0]), *bt = owb_pass_value_type (ctx, db->inputs[0]);
  const OwbValueType *ft = owb_pass_value_type (ctx, op->outputs[0]);
  if (!at || !bt || at->kind != OWB_VALUE_TENSOR || bt->kind != OWB_VALUE_TENSOR || !_owb_pass_is_8bit (at->dtype)
      || !_owb_pass_is_8bit (bt->dtype) || !ft || ft->dtype != OWB_TYPE_FLOAT)
    return FALSE;
  if (!float_output_only_quantized (ctx, op, "has dequantized inputs and a QuantizeLinear"))
    return FALSE;
  if (!ctx->options->providers)
    return FALSE;
  const char *label = owb_pass_label (op);
  OwbNode *lk;
  if (float32_params (ctx, da) && float32_params (ctx, db) && float32_params (ctx, q))
    {
      /* the three ops' float32 arithmetic in one pass over the bytes (faster than the table) */
      g_autofree char *name = owb_pass_scoped_name (ctx, op->name && op->name[0] ? op->name : label, "QLinearBinary");
      lk = owb_node_new ("QLinearBinary", OWB_DOMAIN, name);
      const char *ins[8] = { da->inputs[0], da->inputs[1], da->inputs[2], db->inputs[0], db->inputs[1], db->inputs[2],
                             q->inputs[1], q->inputs[2] };
      for (int i = 0; i < 8; i++)
        owb_node_add_input (lk, ins[i]);
      OwbAttribute *a = owb_node_add_attribute (lk, "op", OWB_ATTR_STRING);
      a->s = g_strdup (op->op_type);
      a->s_len = strlen (a->s);
    }
  else
    {
      g_autoptr (GError) local = NULL;
      OwbTensor *table = make_table (ctx, da, db, op, q, at->dtype, bt->dtype, &local);
      if (!table)
        {
          owb_pass_near_miss (ctx, op, "its table could not be computed (%s); kept", local ? local->message : "unknown");
          return FALSE;
        }
      g_autofree char *base = g_strdup_printf ("%s_table", label);
      const char *tname = owb_pass_add_initializer (ctx, base, table);
      g_autofree char *name = owb_pass_scoped_name (ctx, op->name && op->name[0] ? op->name : label, "QLinearBinaryLookup");
      lk = owb_node_new ("QLinearBinaryLookup", OWB_DOMAIN, name);
      owb_node_add_input (lk, da->inputs[0]);
      owb_node_add_input (lk, db->inputs[0]);
      owb_node_add_input (lk, tname);
    }
  owb_node_add_output (lk, q->outputs[0]);
  owb_model_set_opset (ctx->model, OWB_DOMAIN, 1);
  OwbNode *const chain[] = { op, q };
  OwbNode *const dropped[] = { only_read_by_fusion (ctx, da), only_read_by_fusion (ctx, db) };
  _owb_pass_replace_qdq (ctx, &lk, 1, chain, G_N_ELEMENTS (chain), dropped, G_N_ELEMENTS (dropped));
  return TRUE;
}

/* A constant of one value (0 when the name is empty), as a double; FALSE when it is not one. */
static gboolean
scalar_value (OwbPassContext *ctx, const OwbNode *node, int input, double *v, OwbDataType *dtype)
{
  if (input >= node->n_inputs || !node->inputs[input][0])
    {
      *v = 0;
      *dtype = OWB_TYPE_UNDEFINED;
      return TRUE;
    }
  const OwbTensor *c = owb_pass_get_constant (ctx, node->inputs[input]);
  if (!c || c->nelems != 1)
    return FALSE;
  *v = owb_tensor_get_double (c, 0);
  *dtype = c->dtype;
  return TRUE;
}

/* Ops that only move or pick elements of input 0 (the others, if any, being shapes, axes or
 * permutations), and MaxPool, whose maximum commutes with the increasing dequantization. */
static gboolean
moves_bytes (const OwbNode *op)
{
  if (owb_pass_is_op (op, "MaxPool"))
    return op->n_inputs == 1 && (op->n_outputs == 1 || !op->outputs[1][0]);
  static const char *const ops[] = { "Flatten", "Reshape", "Transpose", "Squeeze", "Unsqueeze" };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    if (owb_pass_is_op (op, ops[i]))
      return op->n_outputs == 1;
  return FALSE;
}

/* DequantizeLinear -> MaxPool (or Flatten, Reshape, Transpose, Squeeze, Unsqueeze) ->
 * QuantizeLinear with the same scale (positive) and zero point, 8-bit: quantizing a dequantized
 * byte at the same parameters gives the byte back (|n s / s - n| < 0.5 for |n| <= 255), so the op
 * runs on the bytes with the same result (ResNet's stem pool sits between such a pair, and the
 * Flatten before a classifier: a float island otherwise). */
static gboolean
try_fuse_maxpool (OwbPassContext *ctx, OwbNode *q)
{
  if (!owb_pass_is_op (q, "QuantizeLinear") || !per_tensor (ctx, q) || owb_node_get_int (q, "precision", 0) != 0
      || owb_node_get_int (q, "saturate", 1) != 1)
    return FALSE;
  OwbNode *op = owb_pass_producer (ctx, q->inputs[0]);
  if (!op || !moves_bytes (op))
    return FALSE;
  OwbNode *dq = owb_pass_producer (ctx, op->inputs[0]);
  if (!owb_pass_is_op (dq, "DequantizeLinear") || !per_tensor (ctx, dq))
    return FALSE;
  const OwbValueType *xt = owb_pass_value_type (ctx, dq->inputs[0]), *yt = owb_pass_value_type (ctx, q->outputs[0]);
  if (!xt || !yt || xt->kind != OWB_VALUE_TENSOR || !_owb_pass_is_8bit (xt->dtype) || yt->dtype != xt->dtype)
    return FALSE;
  double s1, s2, z1, z2;
  OwbDataType st1, st2, zt1, zt2;
  if (!scalar_value (ctx, dq, 1, &s1, &st1) || !scalar_value (ctx, q, 1, &s2, &st2) || !scalar_value (ctx, dq, 2, &z1, &zt1)
      || !scalar_value (ctx, q, 2, &z2, &zt2))
    return FALSE;
  if (st1 != OWB_TYPE_FLOAT || st2 != OWB_TYPE_FLOAT || s1 != s2 || !(s1 > 0) || !isfinite (s1) || z1 != z2)
    return FALSE;
  if (!float_output_only_quantized (ctx, op, "sits between a DequantizeLinear and a QuantizeLinear"))
    return FALSE;
  const char *label = owb_pass_label (op);
  g_autofree char *name = owb_pass_scoped_name (ctx, op->name && op->name[0] ? op->name : label, op->op_type);
  OwbNode *mp = owb_node_dup (op);
  g_free (mp->name);
  mp->name = g_strdup (name);
  g_free (mp->inputs[0]);
  mp->inputs[0] = g_strdup (dq->inputs[0]);
  g_free (mp->outputs[0]);
  mp->outputs[0] = g_strdup (q->outputs[0]);
  OwbNode *const chain[] = { op, q }, *const dropped[] = { only_read_by_fusion (ctx, dq) };
  _owb_pass_replace_qdq (ctx, &mp, 1, chain, G_N_ELEMENTS (chain), dropped, G_N_ELEMENTS (dropped));
  return TRUE;
}

/* DequantizeLinear -> GlobalAveragePool -> QuantizeLinear, per tensor, 8-bit, float32 scales (a
 * squeeze-excitation block's pool): one QLinearGlobalAveragePool, which sums the bytes as integers
 * and rounds the exact mean once, instead of a float tensor, a float mean and a quantization. The
 * float chain rounds its sum in float32, so the two may differ by one step where the mean lies
 * within float32's error of a half step. */
static gboolean
try_fuse_global_average_pool (OwbPassContext *ctx, OwbNode *q)
{
  if (!owb_pass_is_op (q, "QuantizeLinear") || !per_tensor (ctx, q) || owb_node_get_int (q, "precision", 0) != 0)
    return FALSE;
  OwbNode *op = owb_pass_producer (ctx, q->inputs[0]);
  if (!op || !owb_pass_is_op (op, "GlobalAveragePool") || op->n_inputs != 1 || op->n_outputs != 1)
    return FALSE;
  OwbNode *dq = owb_pass_producer (ctx, op->inputs[0]);
  if (!owb_pass_is_op (dq, "DequantizeLinear") || !per_tensor (ctx, dq))
    return FALSE;
  const OwbValueType *xt = owb_pass_value_type (ctx, dq->inputs[0]), *ft = owb_pass_value_type (ctx, op->outputs[0]);
  if (!xt || xt->kind != OWB_VALUE_TENSOR || !_owb_pass_is_8bit (xt->dtype) || (xt->rank >= 0 && xt->rank < 3) || !ft
      || ft->dtype != OWB_TYPE_FLOAT)
    return FALSE;
  if (!float32_params (ctx, dq) || !float32_params (ctx, q))
    {
      owb_pass_near_miss (ctx, op, "sits between a DequantizeLinear and a QuantizeLinear, but a scale is not one "
                          "float32 value or a zero point is missing; kept");
      return FALSE;
    }
  if (!float_output_only_quantized (ctx, op, "sits between a DequantizeLinear and a QuantizeLinear"))
    return FALSE;
  const char *label = owb_pass_label (op);
  g_autofree char *name = owb_pass_scoped_name (ctx, op->name && op->name[0] ? op->name : label,
                                                "QLinearGlobalAveragePool");
  OwbNode *gp = owb_node_new ("QLinearGlobalAveragePool", OWB_DOMAIN, name);
  const char *ins[5] = { dq->inputs[0], dq->inputs[1], dq->inputs[2], q->inputs[1], q->inputs[2] };
  for (int i = 0; i < 5; i++)
    owb_node_add_input (gp, ins[i]);
  owb_node_add_attribute (gp, "channels_last", OWB_ATTR_INT)->i = 0;
  owb_node_add_output (gp, q->outputs[0]);
  owb_model_set_opset (ctx->model, OWB_DOMAIN, 1);
  OwbNode *const chain[] = { op, q }, *const dropped[] = { only_read_by_fusion (ctx, dq) };
  _owb_pass_replace_qdq (ctx, &gp, 1, chain, G_N_ELEMENTS (chain), dropped, G_N_ELEMENTS (dropped));
  return TRUE;
}

/* The 256 outputs of `node` (a QLinearBinary or QLinearBinaryLookup) run by its own kernel with
 * input xi fed every byte of xtype and input li fed `table` at those bytes (the lookup's outputs),
 * its other inputs the graph's constants. NULL with *error on failure. */
static OwbTensor *
make_table_of_pair (OwbPassContext *ctx, const OwbNode *node, int xi, int li, const OwbTensor *table,
                    OwbDataType xtype, GError **error)
{
  g_autoptr (OwbModel) m = owb_model_new ();
  m->ir_version = MAX (ctx->model->ir_version, 4);
  for (guint i = 0; i < ctx->model->opset_imports->len; i++)
    {
      const OwbOpsetImport *imp = &g_array_index (ctx->model->opset_imports, OwbOpsetImport, i);
      owb_model_set_opset (m, imp->domain, imp->version);
    }
  owb_model_set_opset (m, OWB_DOMAIN, 1);
  m->graph = owb_graph_new ("qlinear_lookup_pair");
  m->graph->model = m;
  OwbNode *n = owb_node_dup (node);
  /* the two data inputs under names of their own: x and the lookup's output may share a constant */
  g_free (n->inputs[xi]);
  n->inputs[xi] = g_strdup ("owb_lookup_pair_x");
  g_free (n->inputs[li]);
  n->inputs[li] = g_strdup ("owb_lookup_pair_t");
  int64_t len = 256;
  OwbTensor *bytes = owb_tensor_new (xtype, 1, &len, NULL);
  for (int i = 0; i < 256; i++)
    ((uint8_t *) bytes->data)[i] = (uint8_t) i;
  owb_graph_add_initializer (m->graph, n->inputs[xi], bytes);
  OwbTensor *t = owb_tensor_new (table->dtype, 1, &len, NULL);
  memcpy (t->data, table->data, 256);
  owb_graph_add_initializer (m->graph, n->inputs[li], t);
  for (int i = 0; i < node->n_inputs; i++)
    {
      if (i == xi || i == li || !node->inputs[i][0])
        continue;
      const OwbTensor *c = owb_pass_get_constant (ctx, node->inputs[i]);
      if (!c)
        {
          owb_node_free (n);
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "input %d is not a constant", i);
          return NULL;
        }
      owb_graph_add_initializer (m->graph, node->inputs[i], owb_tensor_ref ((OwbTensor *) c));
    }
  owb_graph_add_node (m->graph, n);
  g_ptr_array_add (m->graph->outputs, owb_value_info_new (node->outputs[0], NULL));
  return run_table_model (ctx, m, len, error);
}

/* QLinearBinary or QLinearBinaryLookup of x and QLinearLookup (x) (a SiLU, x sigmoid (x), or a
 * HardSwish written as x hardsigmoid (x)) is a function of x's byte alone: one QLinearLookup
 * whose table is the pair's outputs on every byte, computed by their own kernels. */
static gboolean
try_fuse_lookup_pair (OwbPassContext *ctx, OwbNode *bin)
{
  int a_in, b_in;
  if (owb_pass_is_our_op (bin, "QLinearBinary"))
    a_in = 0, b_in = 3;
  else if (owb_pass_is_our_op (bin, "QLinearBinaryLookup"))
    a_in = 0, b_in = 1;
  else
    return FALSE;
  if (bin->n_outputs != 1 || bin->n_inputs <= b_in || !ctx->options->providers)
    return FALSE;
  for (int side = 0; side < 2; side++)
    {
      int li = side ? a_in : b_in, xi = side ? b_in : a_in;
      OwbNode *lk = owb_pass_producer (ctx, bin->inputs[li]);
      if (!lk || !owb_pass_is_our_op (lk, "QLinearLookup") || lk->n_inputs < 2
          || strcmp (lk->inputs[0], bin->inputs[xi]) != 0)
        continue;
      const OwbTensor *t1 = owb_pass_get_constant (ctx, lk->inputs[1]);
      const OwbValueType *xt = owb_pass_value_type (ctx, bin->inputs[xi]);
      if (!t1 || t1->nelems != 256 || !_owb_pass_is_8bit (t1->dtype) || !xt || xt->kind != OWB_VALUE_TENSOR
          || !_owb_pass_is_8bit (xt->dtype))
        continue;
      if (owb_pass_n_uses (ctx, lk->outputs[0]) != 1 || owb_pass_is_graph_output (ctx, lk->outputs[0]))
        {
          owb_pass_near_miss (ctx, bin, "multiplies or adds x and a lookup of x, but the lookup's output is read "
                              "elsewhere too; kept");
          continue;
        }
      g_autoptr (GError) local = NULL;
      OwbTensor *table = make_table_of_pair (ctx, bin, xi, li, t1, xt->dtype, &local);
      OwbNode *nk = lookup_node (ctx, bin, table, local, bin->inputs[xi], bin->outputs[0]);
      if (!nk)
        return FALSE;
      const char *from[2] = { owb_pass_label (lk), owb_pass_label (bin) };
      owb_pass_add_node (ctx, nk, from, 2);
      owb_pass_remove_node (ctx, bin);
      owb_pass_remove_node (ctx, lk);
      return TRUE;
    }
  return FALSE;
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
  /* a fusion removes its QuantizeLinear, op and DequantizeLinear(s), none of them another candidate */
  guint fused = 0;
  for (guint i = 0; i < candidates->len; i++)
    {
      OwbNode *q = g_ptr_array_index (candidates, i);
      fused += try_fuse (ctx, q) || try_fuse_binary (ctx, q) || try_fuse_maxpool (ctx, q)
               || try_fuse_global_average_pool (ctx, q);
    }
  g_ptr_array_unref (candidates);
  /* then the pairs x op lookup (x) those fusions made */
  candidates = g_ptr_array_new ();
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    {
      OwbNode *node = g_ptr_array_index (owb_pass_nodes (ctx), i);
      if (owb_pass_is_our_op (node, "QLinearBinary") || owb_pass_is_our_op (node, "QLinearBinaryLookup"))
        g_ptr_array_add (candidates, node);
    }
  for (guint i = 0; i < candidates->len; i++)
    fused += try_fuse_lookup_pair (ctx, g_ptr_array_index (candidates, i));
  g_ptr_array_unref (candidates);
  if (fused)
    owb_pass_prune_initializers (ctx);
  return TRUE;
}

const OwbPass _owb_pass_fuse_qdq_lookup = {
  "fuse_qdq_lookup",
  OWB_OPTIMIZE_EXTENDED,
  "turns DequantizeLinear -> elementwise op (Sigmoid, HardSwish, Tanh...) -> QuantizeLinear, per tensor and 8-bit, "
  "into a 256-entry QLinearLookup, and two DequantizeLinears -> Add/Mul -> QuantizeLinear into a 65536-entry "
  "QLinearBinaryLookup, the tables computed by those nodes' own kernels; then x times (or plus) a lookup of x "
  "(SiLU) into one QLinearLookup; DequantizeLinear -> MaxPool (Flatten, Reshape, Transpose, Squeeze, Unsqueeze) -> "
  "QuantizeLinear at one scale into that op on the bytes; DequantizeLinear -> GlobalAveragePool -> QuantizeLinear "
  "into a QLinearGlobalAveragePool",
  run,
};
