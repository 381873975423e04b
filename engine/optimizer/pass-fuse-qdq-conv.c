/* pass-fuse-qdq-conv.c: DequantizeLinear (8-bit activation) and DequantizeLinear (constant 8-bit
 * weight) [+ bias] -> Conv [-> Relu/Clip] -> QuantizeLinear becomes one QLinearConv, which the CPU
 * runs on its integer GEMM with the weight packed once. The bias (a float constant, or the
 * DequantizeLinear of an int32 constant) becomes int32 at x_scale w_scale[m]; a Relu or Clip between
 * the Conv and the QuantizeLinear goes where the QuantizeLinear's own saturation clamps the same.
 * Fires only where the activation and the output are quantized per tensor with constant
 * parameters and the weight per tensor or per output channel; anything else stays, with a near
 * miss. A Gemm in the same pattern becomes a 1x1 QLinearConv between two Reshapes. */
#include "owb-optimizer-private.h"

#include <math.h>
#include <string.h>

/* The Conv's bias as int32 at x_scale w_scale[m] (M values), or NULL with *why. The DequantizeLinear
 * of an int32 constant at exactly that scale (what quantizers write) gives its integers as they
 * are; any other constant bias is rounded to that scale. *bias_dq: the bias's DequantizeLinear. */
static OwbTensor *
int32_bias (OwbPassContext *ctx, const char *name, float xs, const OwbTensor *ws, int64_t M, OwbNode **bias_dq,
            const char **why)
{
  *bias_dq = NULL;
  const OwbTensor *f = owb_pass_get_constant (ctx, name);
  const OwbTensor *bq = NULL, *bs = NULL, *bz = NULL;
  OwbNode *p = owb_pass_producer (ctx, name);
  if (!f && owb_pass_is_op (p, "DequantizeLinear") && p->n_inputs >= 2)
    {
      bq = owb_pass_get_constant (ctx, p->inputs[0]);
      bs = owb_pass_get_constant (ctx, p->inputs[1]);
      bz = p->n_inputs > 2 && p->inputs[2][0] ? owb_pass_get_constant (ctx, p->inputs[2]) : NULL;
      if (!bq || !bs || bs->dtype != OWB_TYPE_FLOAT || (bs->nelems != 1 && bs->nelems != M)
          || (p->n_inputs > 2 && p->inputs[2][0] && (!bz || bz->nelems != bs->nelems))
          || (bq->dtype != OWB_TYPE_INT32 && !_owb_pass_is_8bit (bq->dtype)) || owb_node_get_int (p, "block_size", 0) != 0)
        return *why = "is the DequantizeLinear of something other than a constant per-channel integer vector", NULL;
      *bias_dq = p;
    }
  else if (!f || f->dtype != OWB_TYPE_FLOAT)
    return *why = "is neither a float32 constant nor a dequantized constant", NULL;
  const OwbTensor *v = f ? f : bq;
  if (v->nelems != M)
    return *why = "does not hold one value per output channel", NULL;
  OwbTensor *out = owb_tensor_new (OWB_TYPE_INT32, 1, (int64_t[]){ M }, NULL);
  int32_t *o = out->data;
  const float *wsf = ws->data;
  for (int64_t m = 0; m < M; m++)
    {
      float target = (float) ((double) xs * wsf[ws->nelems == 1 ? 0 : m]);
      double value;
      if (bq)
        {
          float s = ((const float *) bs->data)[bs->nelems == 1 ? 0 : m];
          double z = bz ? owb_tensor_get_double (bz, bz->nelems == 1 ? 0 : m) : 0;
          double q = owb_tensor_get_double (bq, m);
          if (s == target && z == 0 && bq->dtype == OWB_TYPE_INT32)
            {
              o[m] = (int32_t) q;
              continue;
            }
          value = (float) ((q - z) * s);
        }
      else
        value = ((const float *) f->data)[m];
      double r = target != 0 ? nearbyint (value / target) : 0;
      if (!(fabs (r) <= 2147483647.0))
        {
          owb_tensor_unref (out);
          return *why = "does not fit int32 at x_scale times w_scale", NULL;
        }
      o[m] = (int32_t) r;
    }
  return out;
}

/* Whether QuantizeLinear (scale ys, zero point yzp, to ytype) of Relu/Clip(v) equals that of v,
 * i.e. the integer clamp of lo and hi is no tighter than the type's own. */
static gboolean
clamp_is_saturation (float ys, int32_t yzp, OwbDataType ytype, double lo, double hi)
{
  double qmin = ytype == OWB_TYPE_UINT8 ? 0 : -128, qmax = ytype == OWB_TYPE_UINT8 ? 255 : 127;
  double qlo = isinf (lo) ? -INFINITY : nearbyint (lo / ys) + yzp;
  double qhi = isinf (hi) ? INFINITY : nearbyint (hi / ys) + yzp;
  return qlo <= qmin && qhi >= qmax;
}

/* The clamp [lo, hi] of a Relu or Clip with constant bounds; FALSE for another node. */
static gboolean
activation_clamp (OwbPassContext *ctx, const OwbNode *node, double *lo, double *hi)
{
  *lo = -INFINITY;
  *hi = INFINITY;
  if (owb_pass_is_op (node, "Relu"))
    {
      *lo = 0;
      return node->n_inputs == 1;
    }
  if (!owb_pass_is_op (node, "Clip"))
    return FALSE;
  if (owb_pass_opset (ctx) < 11)
    {
      *lo = owb_node_get_float (node, "min", -INFINITY);
      *hi = owb_node_get_float (node, "max", INFINITY);
      return TRUE;
    }
  return _owb_pass_clip_bound (ctx, node, 1, -INFINITY, lo) && _owb_pass_clip_bound (ctx, node, 2, INFINITY, hi);
}

/* ---- Gemm: a 1x1 convolution of [M, K, 1, 1] ----
 * DequantizeLinear (8-bit A [M, K], per tensor) and DequantizeLinear (constant 8-bit B, per tensor
 * or per output column) [+ bias C] -> Gemm (alpha 1, beta 1, transA 0) -> QuantizeLinear, the
 * classifier heads of QDQ CNNs, becomes Reshape (A to [M, K, 1, 1]) -> QLinearConv (B as
 * [N, K, 1, 1]) -> Reshape (to [M, N]): the same sums, on the integer GEMM with B packed once, in
 * standard ops. */
static gboolean
try_fuse_gemm (OwbPassContext *ctx, OwbNode *gemm)
{
  if (gemm->n_inputs < 2 || gemm->n_inputs > 3 || gemm->n_outputs != 1)
    return FALSE;
  OwbPassDq x, w = { 0 };
  const char *why;
  if (!_owb_pass_match_dq (ctx, gemm->inputs[0], &x, &why))
    return FALSE; /* a float Gemm */
  if (x.nparams != 1)
    {
      owb_pass_near_miss (ctx, gemm, "its input A's DequantizeLinear '%s' quantizes per channel; kept", owb_pass_label (x.node));
      return FALSE;
    }
  gboolean trans_b = owb_node_get_int (gemm, "transB", 0) != 0;
  const OwbTensor *wt = NULL;
  if (_owb_pass_match_dq (ctx, gemm->inputs[1], &w, &why))
    wt = owb_pass_get_constant (ctx, w.q);
  int64_t N = wt && wt->rank == 2 ? wt->dims[trans_b ? 0 : 1] : -1, K = wt && wt->rank == 2 ? wt->dims[trans_b ? 1 : 0] : -1;
  int64_t axis = w.node ? owb_node_get_int (w.node, "axis", 1) : 1;
  if (!wt || wt->rank != 2
      || (w.nparams != 1 && (w.scale_tensor->rank != 1 || w.nparams != N || (trans_b ? axis != 0 && axis != -2 : axis != 1 && axis != -1))))
    {
      owb_pass_near_miss (ctx, gemm, "reads a dequantized activation but B is not a constant 8-bit matrix quantized per "
                          "tensor or per output column; kept");
      return FALSE;
    }
  const OwbValueType *xt = owb_pass_value_type (ctx, gemm->inputs[0]);
  if (owb_node_get_int (gemm, "transA", 0) != 0 || owb_node_get_float (gemm, "alpha", 1.0f) != 1.0f
      || (gemm->n_inputs > 2 && gemm->inputs[2][0] && owb_node_get_float (gemm, "beta", 1.0f) != 1.0f)
      || !xt || xt->kind != OWB_VALUE_TENSOR || xt->rank != 2)
    {
      owb_pass_near_miss (ctx, gemm, "has transA, alpha or beta, or an A not known to be a matrix; kept");
      return FALSE;
    }
  OwbNode *q = _owb_pass_only_reader (ctx, gemm->outputs[0]);
  OwbPassQ y;
  if (!owb_pass_is_op (q, "QuantizeLinear") || q->n_inputs < 2 || !_owb_pass_match_q (ctx, q, &y))
    {
      owb_pass_near_miss (ctx, gemm, "has dequantized inputs but its output is not read by one per-tensor 8-bit "
                          "QuantizeLinear only; kept");
      return FALSE;
    }
  const OwbTensor *xst = owb_pass_get_constant (ctx, x.scale);
  OwbTensor *bias = NULL;
  OwbNode *bias_dq = NULL;
  const char *bias_name = gemm->n_inputs > 2 && gemm->inputs[2][0] ? gemm->inputs[2] : NULL;
  if (bias_name)
    {
      const OwbValueType *ct = owb_pass_value_type (ctx, bias_name);
      bias = ct && ct->rank == 1 ? int32_bias (ctx, bias_name, ((const float *) xst->data)[0], w.scale_tensor, N, &bias_dq, &why)
                                 : NULL;
      if (!bias)
        {
          owb_pass_near_miss (ctx, gemm, "its bias C %s; kept", ct && ct->rank == 1 ? why : "is not a vector of N values");
          return FALSE;
        }
    }
  if (owb_pass_opset (ctx) < 10)
    {
      if (bias)
        owb_tensor_unref (bias);
      return FALSE;
    }

  const char *label = owb_pass_label (gemm);
  /* B as a [N, K, 1, 1] weight: the same bytes with transB, else transposed */
  OwbTensor *w4 = owb_tensor_new (wt->dtype, 4, (int64_t[]){ N, K, 1, 1 }, NULL);
  const uint8_t *src = wt->data;
  uint8_t *dst = w4->data;
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < K; k++)
      dst[n * K + k] = trans_b ? src[n * K + k] : src[k * N + n];
  g_autofree char *w4_base = g_strdup_printf ("%s_weight_4d", label);
  const char *w4_name = owb_pass_add_initializer (ctx, w4_base, w4);
  const char *inputs[8];
  _owb_pass_qlinear_inputs (ctx, label, &x, &w, &y, inputs);
  g_autofree char *s4_base = g_strdup_printf ("%s_shape_4d", label), *s2_base = g_strdup_printf ("%s_shape_2d", label);
  OwbTensor *s4 = owb_tensor_new (OWB_TYPE_INT64, 1, (int64_t[]){ 4 }, NULL), *s2 = owb_tensor_new (OWB_TYPE_INT64, 1, (int64_t[]){ 2 }, NULL);
  memcpy (s4->data, (int64_t[]){ 0, K, 1, 1 }, 4 * sizeof (int64_t)); /* 0: A's M as it is */
  memcpy (s2->data, (int64_t[]){ 0, N }, 2 * sizeof (int64_t));
  const char *s4_name = owb_pass_add_initializer (ctx, s4_base, s4), *s2_name = owb_pass_add_initializer (ctx, s2_base, s2);
  g_autofree char *x4 = owb_pass_scoped_name (ctx, label, "A_4d"), *y4 = owb_pass_scoped_name (ctx, label, "Y_4d");
  g_autofree char *rx_name = owb_pass_scoped_name (ctx, label, "Reshape_A");
  g_autofree char *ry_name = owb_pass_scoped_name (ctx, label, "Reshape_Y");
  OwbNode *rx = owb_node_new ("Reshape", "", rx_name);
  owb_node_add_input (rx, x.q);
  owb_node_add_input (rx, s4_name);
  owb_node_add_output (rx, x4);
  /* under the Gemm's name (free again once it is removed), so its scope is kept */
  OwbNode *fused = owb_node_new ("QLinearConv", "", gemm->name && gemm->name[0] ? gemm->name : NULL);
  inputs[0] = x4; /* A and B as 4-D */
  inputs[3] = w4_name;
  for (int i = 0; i < 8; i++)
    owb_node_add_input (fused, inputs[i]);
  if (bias)
    {
      g_autofree char *base = g_strdup_printf ("%s_bias_int32", label);
      owb_node_add_input (fused, owb_pass_add_initializer (ctx, base, bias));
    }
  owb_node_add_output (fused, y4);
  OwbNode *ry = owb_node_new ("Reshape", "", ry_name);
  owb_node_add_input (ry, y4);
  owb_node_add_input (ry, s2_name);
  owb_node_add_output (ry, q->outputs[0]);
  gboolean drop_x = owb_pass_n_uses (ctx, gemm->inputs[0]) == 1, drop_w = owb_pass_n_uses (ctx, gemm->inputs[1]) == 1;
  gboolean drop_b = bias_dq && owb_pass_n_uses (ctx, bias_name) == 1;
  OwbNode *const added[] = { rx, fused, ry }, *const chain[] = { gemm, q };
  OwbNode *const dropped[] = { drop_x ? x.node : NULL, drop_w ? w.node : NULL, drop_b ? bias_dq : NULL };
  _owb_pass_replace_qdq (ctx, added, G_N_ELEMENTS (added), chain, G_N_ELEMENTS (chain), dropped, G_N_ELEMENTS (dropped));
  return TRUE;
}

static gboolean
try_fuse (OwbPassContext *ctx, OwbNode *conv)
{
  if (conv->n_inputs < 2 || conv->n_inputs > 3 || conv->n_outputs != 1)
    return FALSE;
  OwbPassDq x, w;
  const char *why;
  if (!_owb_pass_match_dq_input (ctx, conv->inputs[0], FALSE, 4, 0, NULL, NULL, &x, &why))
    {
      if (why)
        owb_pass_near_miss (ctx, conv, "its input X's DequantizeLinear '%s' %s; kept",
                            owb_pass_label (owb_pass_producer (ctx, conv->inputs[0])), why);
      return FALSE;
    }
  /* W: a constant 4-D weight, per tensor or per output channel */
  if (!_owb_pass_match_dq_input (ctx, conv->inputs[1], TRUE, 4, 0, "dequantizes a weight that is not a constant 4-D tensor",
                                 "quantizes the weight along an axis other than its output channels", &w, &why))
    {
      if (why)
        owb_pass_near_miss (ctx, conv, "its weight W's DequantizeLinear '%s' %s; kept",
                            owb_pass_label (owb_pass_producer (ctx, conv->inputs[1])), why);
      else
        owb_pass_near_miss (ctx, conv, "reads a dequantized activation but W is not dequantized; kept");
      return FALSE;
    }
  const OwbValueType *xt = owb_pass_value_type (ctx, conv->inputs[0]);
  if (!xt || xt->kind != OWB_VALUE_TENSOR || xt->rank != 4)
    {
      owb_pass_near_miss (ctx, conv, "is not known to be a 2-D convolution; kept");
      return FALSE;
    }
  /* the Conv's only reader (through one Relu or Clip): a per-tensor QuantizeLinear to 8 bits */
  OwbNode *act = NULL, *q = _owb_pass_only_reader (ctx, conv->outputs[0]);
  double lo = -INFINITY, hi = INFINITY;
  if (q && activation_clamp (ctx, q, &lo, &hi))
    {
      act = q;
      q = _owb_pass_only_reader (ctx, act->outputs[0]);
    }
  if (!owb_pass_is_op (q, "QuantizeLinear") || q->n_inputs < 2)
    {
      owb_pass_near_miss (ctx, conv, "has dequantized inputs but its output is not read by one QuantizeLinear only%s; kept",
                          act ? " (after its Relu/Clip)" : "");
      return FALSE;
    }
  OwbPassQ y;
  if (!_owb_pass_match_final_q (ctx, conv, q, &y))
    return FALSE;
  if (act && !clamp_is_saturation (y.scale_value, y.zero_point, y.qtype, lo, hi))
    {
      owb_pass_near_miss (ctx, conv, "its %s '%s' clamps tighter than QuantizeLinear '%s' saturates; kept",
                          act->op_type, owb_pass_label (act), owb_pass_label (q));
      return FALSE;
    }
  const OwbTensor *wt = owb_pass_get_constant (ctx, w.q);
  const OwbTensor *wst = owb_pass_get_constant (ctx, w.scale);
  const OwbTensor *xst = owb_pass_get_constant (ctx, x.scale);
  OwbTensor *bias = NULL;
  OwbNode *bias_dq = NULL;
  const char *bias_name = conv->n_inputs > 2 && conv->inputs[2][0] ? conv->inputs[2] : NULL;
  if (bias_name)
    {
      bias = int32_bias (ctx, bias_name, ((const float *) xst->data)[0], wst, wt->dims[0], &bias_dq, &why);
      if (!bias)
        {
          owb_pass_near_miss (ctx, conv, "its bias B %s; kept", why);
          return FALSE;
        }
    }
  if (owb_pass_opset (ctx) < 10)
    {
      if (bias)
        owb_tensor_unref (bias);
      return FALSE;
    }

  const char *label = owb_pass_label (conv);
  const char *inputs[8];
  _owb_pass_qlinear_inputs (ctx, label, &x, &w, &y, inputs);
  g_autofree char *name = owb_pass_scoped_name (ctx, conv->name && conv->name[0] ? conv->name : label, "QLinearConv");
  OwbNode *fused = owb_node_new ("QLinearConv", "", name);
  for (int i = 0; i < 8; i++)
    owb_node_add_input (fused, inputs[i]);
  if (bias)
    {
      g_autofree char *base = g_strdup_printf ("%s_bias_int32", label);
      owb_node_add_input (fused, owb_pass_add_initializer (ctx, base, bias));
    }
  owb_node_add_output (fused, q->outputs[0]);
  /* Conv's attributes (kernel_shape, strides, pads, dilations, group, auto_pad) are QLinearConv's */
  for (int a = 0; a < conv->n_attributes; a++)
    {
      const OwbAttribute *src = &conv->attributes[a];
      if (src->type != OWB_ATTR_INT && src->type != OWB_ATTR_INTS && src->type != OWB_ATTR_STRING)
        continue;
      OwbAttribute *d = owb_node_add_attribute (fused, src->name, src->type);
      if (src->type == OWB_ATTR_INT)
        d->i = src->i;
      else if (src->type == OWB_ATTR_INTS)
        {
          d->n = src->n;
          d->ints = g_memdup2 (src->ints, sizeof (int64_t) * src->n);
        }
      else
        {
          d->s = g_memdup2 (src->s, src->s_len + 1);
          d->s_len = src->s_len;
        }
    }
  /* the DequantizeLinears go too where this Conv was their only reader */
  gboolean drop_x = owb_pass_n_uses (ctx, conv->inputs[0]) == 1, drop_w = owb_pass_n_uses (ctx, conv->inputs[1]) == 1;
  gboolean drop_b = bias_dq && owb_pass_n_uses (ctx, bias_name) == 1;
  OwbNode *const chain[] = { conv, act, q };
  OwbNode *const dropped[] = { drop_x ? x.node : NULL, drop_w ? w.node : NULL, drop_b ? bias_dq : NULL };
  _owb_pass_replace_qdq (ctx, &fused, 1, chain, G_N_ELEMENTS (chain), dropped, G_N_ELEMENTS (dropped));
  return TRUE;
}

static gboolean
try_fuse_any (OwbPassContext *ctx, OwbNode *node)
{
  return owb_pass_is_op (node, "Gemm") ? try_fuse_gemm (ctx, node) : try_fuse (ctx, node);
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  (void) error;
  /* A fusion removes its Conv or Gemm and nodes no other candidate is (DequantizeLinear, Relu/Clip,
   * QuantizeLinear). */
  static const char *const ops[] = { "Conv", "Gemm", NULL };
  _owb_pass_fuse_each_and_prune (ctx, ops, try_fuse_any);
  return TRUE;
}

const OwbPass _owb_pass_fuse_qdq_conv = {
  "fuse_qdq_conv",
  OWB_OPTIMIZE_EXTENDED,
  "turns DequantizeLinear (8-bit activation, constant 8-bit weight) [+ bias] -> Conv [-> Relu/Clip] (or Gemm) -> "
  "QuantizeLinear into QLinearConv",
  run,
};
