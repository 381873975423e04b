/* pass-fuse-conv-bn.c: folds BatchNormalization into the preceding Conv's weights and bias, and (at
 * the layout level) turns one that no Conv absorbed into a 1x1 depthwise Conv. */
#include "owb-optimizer-private.h"

#include <math.h>
#include <string.h>

/* The constant named `name` when it holds `n` values (any shape with that count); NULL otherwise. */
static const OwbTensor *
constant_vector (OwbPassContext *ctx, const char *name, int64_t n)
{
  const OwbTensor *t = owb_pass_get_constant (ctx, name);
  if (!t || t->kind != OWB_VALUE_TENSOR || t->nelems != n || !_owb_pass_is_float_type (t->dtype))
    return NULL;
  for (int i = 0; i < t->rank - 1; i++)
    if (t->dims[i] != 1)
      return NULL;
  return t;
}

/* f = scale / sqrt (var + eps) of each of the m channels, or NULL (with a near miss naming what) when
 * the parameters are not m constants or var + eps is not positive. Caller frees. */
static double *
bn_factors (OwbPassContext *ctx, OwbNode *bn, int64_t m, const char *what, const OwbTensor **beta,
            const OwbTensor **mean)
{
  const OwbTensor *scale = constant_vector (ctx, bn->inputs[1], m), *var = constant_vector (ctx, bn->inputs[4], m);
  *beta = constant_vector (ctx, bn->inputs[2], m);
  *mean = constant_vector (ctx, bn->inputs[3], m);
  if (!scale || !*beta || !*mean || !var)
    {
      owb_pass_near_miss (ctx, bn, "%s but scale, B, mean and var are not all constant vectors of %" G_GINT64_FORMAT
                           " values; kept", what, m);
      return NULL;
    }
  double eps = owb_node_get_float (bn, "epsilon", 1e-5f);
  double *factor = g_new (double, m);
  for (int64_t c = 0; c < m; c++)
    {
      double v = owb_tensor_get_double (var, c) + eps;
      if (!(v > 0))
        {
          owb_pass_near_miss (ctx, bn, "var + epsilon of channel %" G_GINT64_FORMAT " is not positive; kept", c);
          g_free (factor);
          return NULL;
        }
      factor[c] = owb_tensor_get_double (scale, c) / sqrt (v);
    }
  return factor;
}

/* Whether bn computes with its stored statistics and only Y is read; a near miss says why not. */
static gboolean
is_inference_bn (OwbPassContext *ctx, OwbNode *bn, const char *what)
{
  if (owb_node_get_int (bn, "training_mode", 0) != 0)
    {
      owb_pass_near_miss (ctx, bn, "%s but has training_mode=1 (batch statistics); kept", what);
      return FALSE;
    }
  for (int o = 1; o < bn->n_outputs; o++)
    if (bn->outputs[o][0] && owb_pass_n_uses (ctx, bn->outputs[o]) > 0)
      {
        owb_pass_near_miss (ctx, bn, "%s but its output %d (running statistics) is used; kept", what, o);
        return FALSE;
      }
  if (bn->opset < 9 && owb_node_get_int (bn, "spatial", 1) == 0)
    {
      owb_pass_near_miss (ctx, bn, "%s but has spatial=0 (statistics per element); kept", what);
      return FALSE;
    }
  return TRUE;
}

static gboolean
try_fuse (OwbPassContext *ctx, OwbNode *bn)
{
  OwbNode *conv = bn->n_inputs >= 5 ? owb_pass_producer (ctx, bn->inputs[0]) : NULL;
  if (!owb_pass_is_op (conv, "Conv") || conv->n_inputs < 2 || conv->n_outputs < 1)
    return FALSE;
  g_autofree char *what = g_strdup_printf ("follows Conv '%s'", owb_pass_label (conv));
  if (!is_inference_bn (ctx, bn, what))
    return FALSE;
  guint uses = owb_pass_n_uses (ctx, conv->outputs[0]);
  if (uses != 1)
    {
      owb_pass_near_miss (ctx, bn, "follows Conv '%s', whose output is also read by %u other node(s) or is a graph "
                           "output; kept", owb_pass_label (conv), uses - 1);
      return FALSE;
    }
  const OwbTensor *w = owb_pass_get_constant (ctx, conv->inputs[1]);
  const char *bias_name = owb_node_get_input (conv, 2);
  const OwbTensor *b = bias_name ? owb_pass_get_constant (ctx, bias_name) : NULL;
  if (!w || (bias_name && !b))
    {
      owb_pass_near_miss (ctx, bn, "follows Conv '%s', whose %s not a constant; kept", owb_pass_label (conv),
                           !w ? "weight W is" : "bias B is");
      return FALSE;
    }
  if (!_owb_pass_is_float_type (w->dtype) || w->rank < 3 || w->dims[0] < 1 || (b && b->dtype != w->dtype))
    return FALSE;
  int64_t m = w->dims[0];
  if (b && b->nelems != m)
    return FALSE;
  const OwbTensor *beta, *mean;
  double *factor = bn_factors (ctx, bn, m, what, &beta, &mean);
  if (!factor)
    return FALSE;

  /* W'[c] = W[c] * f[c], B'[c] = (B[c] - mean[c]) * f[c] + beta[c], f = scale / sqrt (var + eps). */
  OwbTensor *nw = _owb_pass_scale_conv_weight (w, factor, m);
  OwbTensor *nb = owb_tensor_new (w->dtype, 1, &m, NULL);
  for (int64_t c = 0; c < m; c++)
    {
      double b0 = b ? owb_tensor_get_double (b, c) : 0;
      owb_tensor_set_double (nb, c,
                             (b0 - owb_tensor_get_double (mean, c)) * factor[c] + owb_tensor_get_double (beta, c));
    }
  g_free (factor);

  _owb_pass_replace_conv (ctx, conv, bn, nw, nb);
  return TRUE;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  static const char *const ops[] = { "BatchNormalization", NULL };
  /* Only the BatchNormalization being fused is removed with its Conv, so the other candidates stay valid. */
  _owb_pass_fuse_each_and_prune (ctx, ops, try_fuse);
  return TRUE;
}

const OwbPass _owb_pass_fuse_conv_bn = {
  "fuse_conv_bn",
  OWB_OPTIMIZE_EXTENDED,
  "folds BatchNormalization into the preceding Conv's weights and bias",
  run,
};

/* ---- batchnorm_to_conv ---- */

/* A BatchNormalization that no Conv absorbed (a pre-activation one, as DenseNet's reading each
 * Concat) is a per-channel scale and shift: the same as a 1x1 depthwise Conv with W[c] = f[c] and
 * B[c] = beta[c] - mean[c] f[c]. As a Conv its ReLU fuses into it (fuse_activation runs next) and
 * layout_nhwc runs it channels-last with the convolutions around it; kept a BatchNormalization, it
 * was an NCHW island between Transposes, and DenseNet-121 stayed NCHW as a whole (the Transposes
 * around its 58 such nodes cost more than NHWC saved). ONNX Runtime's NCHWc transformer does the
 * same with its BatchNormalization. */
static gboolean
try_to_conv (OwbPassContext *ctx, OwbNode *bn)
{
  if (bn->n_inputs < 5 || bn->n_outputs < 1)
    return FALSE;
  const OwbValueType *x = owb_pass_value_type (ctx, bn->inputs[0]);
  if (!x || x->kind != OWB_VALUE_TENSOR || x->rank != 4 || x->dtype != OWB_TYPE_FLOAT || !owb_dim_is_known (x->dims[1])
      || x->dims[1].value < 1)
    return FALSE;
  const char *what = "could run as a 1x1 depthwise Conv";
  if (!is_inference_bn (ctx, bn, what))
    return FALSE;
  int64_t c = x->dims[1].value;
  const OwbTensor *beta, *mean;
  double *factor = bn_factors (ctx, bn, c, what, &beta, &mean);
  if (!factor)
    return FALSE;
  int64_t wd[4] = { c, 1, 1, 1 };
  OwbTensor *w = owb_tensor_new (OWB_TYPE_FLOAT, 4, wd, NULL);
  OwbTensor *b = owb_tensor_new (OWB_TYPE_FLOAT, 1, &c, NULL);
  for (int64_t k = 0; k < c; k++)
    {
      ((float *) w->data)[k] = (float) factor[k];
      ((float *) b->data)[k] = (float) (owb_tensor_get_double (beta, k) - owb_tensor_get_double (mean, k) * factor[k]);
    }
  g_free (factor);
  g_autofree char *w_base = g_strconcat (owb_pass_label (bn), "_scale", NULL);
  g_autofree char *b_base = g_strconcat (owb_pass_label (bn), "_shift", NULL);
  /* the Conv keeps the BatchNormalization's name, and so its scope: free again once bn goes */
  OwbNode *conv = owb_node_new ("Conv", "", bn->name);
  owb_node_add_input (conv, bn->inputs[0]);
  owb_node_add_input (conv, owb_pass_add_initializer (ctx, w_base, w));
  owb_node_add_input (conv, owb_pass_add_initializer (ctx, b_base, b));
  owb_node_add_output (conv, bn->outputs[0]);
  OwbAttribute *a = owb_node_add_attribute (conv, "group", OWB_ATTR_INT);
  a->i = c;
  a = owb_node_add_attribute (conv, "kernel_shape", OWB_ATTR_INTS);
  a->n = 2;
  a->ints = g_new (int64_t, 2);
  a->ints[0] = a->ints[1] = 1;
  const char *from = owb_pass_label (bn);
  owb_pass_add_node (ctx, conv, &from, 1);
  owb_pass_remove_node (ctx, bn);
  return TRUE;
}

static gboolean
run_to_conv (OwbPassContext *ctx, GError **error)
{
  GPtrArray *candidates = g_ptr_array_new ();
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    {
      OwbNode *node = g_ptr_array_index (owb_pass_nodes (ctx), i);
      if (owb_pass_is_op (node, "BatchNormalization"))
        g_ptr_array_add (candidates, node);
    }
  guint made = 0;
  for (guint i = 0; i < candidates->len; i++)
    made += try_to_conv (ctx, g_ptr_array_index (candidates, i));
  g_ptr_array_unref (candidates);
  if (made)
    owb_pass_prune_initializers (ctx);
  return TRUE;
}

const OwbPass _owb_pass_batchnorm_to_conv = {
  "batchnorm_to_conv",
  OWB_OPTIMIZE_LAYOUT,
  "turns a BatchNormalization that no Conv absorbed into a 1x1 depthwise Conv (per-channel scale and shift), so that "
  "its activation fuses into it and it runs channels-last",
  run_to_conv,
};
