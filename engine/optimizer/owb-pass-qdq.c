/* owb-pass-qdq.c: what the QDQ fusions (fuse_qdq_matmul, fuse_qdq_conv, fuse_qdq_lookup) match
 * alike: an 8-bit DequantizeLinear with constant float32 parameters (of an activation or of a
 * weight), a per-tensor 8-bit QuantizeLinear, and the zero point a fused integer op needs where
 * the DequantizeLinear left it out. */
#include "owb-optimizer-private.h"

#include <string.h>

gboolean
_owb_pass_is_8bit (OwbDataType t)
{
  return t == OWB_TYPE_UINT8 || t == OWB_TYPE_INT8;
}

static OwbDataType
dtype_of (OwbPassContext *ctx, const char *name)
{
  const OwbTensor *c = owb_pass_get_constant (ctx, name);
  if (c)
    return c->dtype;
  const OwbValueType *t = owb_pass_value_type (ctx, name);
  return t && t->kind == OWB_VALUE_TENSOR ? t->dtype : OWB_TYPE_UNDEFINED;
}

gboolean
_owb_pass_match_dq (OwbPassContext *ctx, const char *name, OwbPassDq *dq, const char **why)
{
  *why = NULL;
  OwbNode *node = owb_pass_producer (ctx, name);
  if (!owb_pass_is_op (node, "DequantizeLinear") || node->n_inputs < 2 || node->n_outputs != 1)
    return FALSE;
  memset (dq, 0, sizeof *dq);
  dq->node = node;
  dq->q = node->inputs[0];
  dq->scale = node->inputs[1];
  dq->zp = node->n_inputs > 2 && node->inputs[2][0] ? node->inputs[2] : NULL;
  dq->qtype = dtype_of (ctx, dq->q);
  const OwbTensor *s = owb_pass_get_constant (ctx, dq->scale);
  const OwbTensor *z = dq->zp ? owb_pass_get_constant (ctx, dq->zp) : NULL;
  if (owb_node_get_int (node, "block_size", 0) != 0)
    return *why = "is blocked", FALSE;
  if (!_owb_pass_is_8bit (dq->qtype))
    return *why = "does not dequantize int8 or uint8", FALSE;
  if (!s || s->dtype != OWB_TYPE_FLOAT || (dq->zp && !z))
    return *why = "has a scale or zero point that is not a float32 constant", FALSE;
  if (z && (z->dtype != dq->qtype || z->nelems != s->nelems))
    return *why = "has a zero point of another type or count than its scale", FALSE;
  dq->scale_tensor = s;
  dq->nparams = s->nelems;
  return TRUE;
}

gboolean
_owb_pass_match_dq_input (OwbPassContext *ctx, const char *name, gboolean weight, int rank, int channel_axis,
                          const char *not_weight, const char *not_channels, OwbPassDq *dq, const char **why)
{
  if (!_owb_pass_match_dq (ctx, name, dq, why))
    return FALSE;
  const OwbTensor *s = dq->scale_tensor;
  if (!weight)
    return s->nelems == 1 ? TRUE : (*why = "quantizes the activation per channel", FALSE);
  const OwbTensor *w = owb_pass_get_constant (ctx, dq->q);
  if (!w || w->rank != rank)
    return *why = not_weight, FALSE;
  if (s->nelems == 1)
    return TRUE;
  int64_t axis = owb_node_get_int (dq->node, "axis", 1);
  if (s->rank != 1 || s->nelems != w->dims[channel_axis] || (axis != channel_axis && axis != channel_axis - rank))
    return *why = not_channels, FALSE;
  return TRUE;
}

/* The QuantizeLinear's output type: its zero point's, else output_dtype, else uint8. */
gboolean
_owb_pass_match_q (OwbPassContext *ctx, const OwbNode *q, OwbPassQ *yq)
{
  const OwbTensor *ys = owb_pass_get_constant (ctx, q->inputs[1]);
  yq->scale = q->inputs[1];
  yq->zp = q->n_inputs > 2 && q->inputs[2][0] ? q->inputs[2] : NULL;
  const OwbTensor *yzp = yq->zp ? owb_pass_get_constant (ctx, yq->zp) : NULL;
  int64_t output_dtype = owb_node_get_int (q, "output_dtype", 0);
  yq->qtype = yzp ? yzp->dtype : (output_dtype ? (OwbDataType) output_dtype : OWB_TYPE_UINT8);
  if (!ys || ys->dtype != OWB_TYPE_FLOAT || ys->nelems != 1 || (yq->zp && (!yzp || yzp->nelems != 1))
      || !_owb_pass_is_8bit (yq->qtype) || owb_node_get_int (q, "block_size", 0) != 0 || owb_node_get_int (q, "precision", 0) != 0)
    return FALSE;
  yq->scale_value = ((const float *) ys->data)[0];
  yq->zero_point = yzp ? (int32_t) owb_tensor_get_double (yzp, 0) : 0;
  return TRUE;
}

gboolean
_owb_pass_match_final_q (OwbPassContext *ctx, const OwbNode *anchor, const OwbNode *q, OwbPassQ *yq)
{
  if (_owb_pass_match_q (ctx, q, yq))
    return TRUE;
  owb_pass_near_miss (ctx, anchor, "its QuantizeLinear '%s' is not per tensor to int8 or uint8 with constant float32 "
                      "parameters; kept", owb_pass_label (q));
  return FALSE;
}

/* zp, or a zero of `dtype` shaped like the constant `scale`, added as an initializer named after
 * `like`, where the model left the zero point out. */
static const char *
zero_point_or_add (OwbPassContext *ctx, const char *like, const char *zp, const char *scale, OwbDataType dtype)
{
  if (zp)
    return zp;
  const OwbTensor *s = owb_pass_get_constant (ctx, scale);
  OwbTensor *z = owb_tensor_new (dtype, s->rank, s->dims, NULL);
  memset (z->data, 0, z->nbytes);
  g_autofree char *base = g_strdup_printf ("%s_zero_point", like);
  return owb_pass_add_initializer (ctx, base, z);
}

void
_owb_pass_qlinear_inputs (OwbPassContext *ctx, const char *like, const OwbPassDq *x, const OwbPassDq *w,
                          const OwbPassQ *y, const char *inputs[8])
{
  inputs[0] = x->q;
  inputs[1] = x->scale;
  inputs[2] = zero_point_or_add (ctx, like, x->zp, x->scale, x->qtype);
  inputs[3] = w->q;
  inputs[4] = w->scale;
  inputs[5] = zero_point_or_add (ctx, like, w->zp, w->scale, w->qtype);
  inputs[6] = y->scale;
  inputs[7] = zero_point_or_add (ctx, like, y->zp, y->scale, y->qtype);
}

void
_owb_pass_replace_qdq (OwbPassContext *ctx, OwbNode *const *added, guint n_added, OwbNode *const *chain,
                       guint n_chain, OwbNode *const *dropped, guint n_dropped)
{
  const char *from[8];
  guint n_from = 0;
  g_assert (n_chain + n_dropped <= G_N_ELEMENTS (from));
  for (guint i = 0; i < n_dropped; i++)
    if (dropped[i])
      from[n_from++] = owb_pass_label (dropped[i]);
  for (guint i = 0; i < n_chain; i++)
    if (chain[i])
      from[n_from++] = owb_pass_label (chain[i]);
  for (guint i = 0; i < n_added; i++)
    owb_pass_add_node (ctx, added[i], from, n_from);
  for (guint i = n_chain; i-- > 0;)
    if (chain[i])
      owb_pass_remove_node (ctx, chain[i]);
  for (guint i = 0; i < n_dropped; i++)
    if (dropped[i])
      owb_pass_remove_node (ctx, dropped[i]);
}
