/* pass-fuse-conv-bn.c: folds BatchNormalization into the preceding Conv's weights and bias. */
#include "owb-optimizer-private.h"

#include <math.h>
#include <string.h>

/* Weights are folded in double and stored back in their own type. */
static gboolean
is_foldable_type (OwbDataType t)
{
  return t == OWB_TYPE_FLOAT || t == OWB_TYPE_DOUBLE || t == OWB_TYPE_FLOAT16;
}

/* The constant named `name` when it holds `n` values (any shape with that count); NULL otherwise. */
static const OwbTensor *
constant_vector (OwbPassContext *ctx, const char *name, int64_t n)
{
  const OwbTensor *t = owb_pass_get_constant (ctx, name);
  if (!t || t->kind != OWB_VALUE_TENSOR || t->nelems != n || !is_foldable_type (t->dtype))
    return NULL;
  for (int i = 0; i < t->rank - 1; i++)
    if (t->dims[i] != 1)
      return NULL;
  return t;
}

static gboolean
try_fuse (OwbPassContext *ctx, OwbNode *bn)
{
  OwbNode *conv = bn->n_inputs >= 5 ? owb_pass_producer (ctx, bn->inputs[0]) : NULL;
  if (!owb_pass_is_op (conv, "Conv") || conv->n_inputs < 2 || conv->n_outputs < 1)
    return FALSE;
  if (owb_node_get_int (bn, "training_mode", 0) != 0)
    {
      owb_pass_near_miss (ctx, bn, "follows Conv '%s' but has training_mode=1 (batch statistics); kept", owb_pass_label (conv));
      return FALSE;
    }
  for (int o = 1; o < bn->n_outputs; o++)
    if (bn->outputs[o][0] && owb_pass_n_uses (ctx, bn->outputs[o]) > 0)
      {
        owb_pass_near_miss (ctx, bn, "follows Conv '%s' but its output %d (running statistics) is used; kept",
                             owb_pass_label (conv), o);
        return FALSE;
      }
  if (bn->opset < 9 && owb_node_get_int (bn, "spatial", 1) == 0)
    {
      owb_pass_near_miss (ctx, bn, "follows Conv '%s' but has spatial=0 (statistics per element); kept", owb_pass_label (conv));
      return FALSE;
    }
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
  if (!is_foldable_type (w->dtype) || w->rank < 3 || w->dims[0] < 1 || (b && b->dtype != w->dtype))
    return FALSE;
  int64_t m = w->dims[0];
  if (b && b->nelems != m)
    return FALSE;
  const OwbTensor *scale = constant_vector (ctx, bn->inputs[1], m), *beta = constant_vector (ctx, bn->inputs[2], m);
  const OwbTensor *mean = constant_vector (ctx, bn->inputs[3], m), *var = constant_vector (ctx, bn->inputs[4], m);
  if (!scale || !beta || !mean || !var)
    {
      owb_pass_near_miss (ctx, bn, "follows Conv '%s' but scale, B, mean and var are not all constant vectors of %"
                           G_GINT64_FORMAT " values; kept", owb_pass_label (conv), m);
      return FALSE;
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
          return FALSE;
        }
      factor[c] = owb_tensor_get_double (scale, c) / sqrt (v);
    }

  /* W'[c] = W[c] * f[c], B'[c] = (B[c] - mean[c]) * f[c] + beta[c], f = scale / sqrt (var + eps). */
  OwbTensor *nw = owb_tensor_new (w->dtype, w->rank, w->dims, NULL);
  OwbTensor *nb = owb_tensor_new (w->dtype, 1, &m, NULL);
  int64_t per = w->nelems / m;
  for (int64_t c = 0; c < m; c++)
    {
      if (w->dtype == OWB_TYPE_FLOAT)
        for (int64_t i = c * per; i < (c + 1) * per; i++)
          ((float *) nw->data)[i] = (float) (((const float *) w->data)[i] * factor[c]);
      else
        for (int64_t i = c * per; i < (c + 1) * per; i++)
          owb_tensor_set_double (nw, i, owb_tensor_get_double (w, i) * factor[c]);
      double b0 = b ? owb_tensor_get_double (b, c) : 0;
      owb_tensor_set_double (nb, c,
                             (b0 - owb_tensor_get_double (mean, c)) * factor[c] + owb_tensor_get_double (beta, c));
    }
  g_free (factor);

  OwbNode *fused = owb_node_dup (conv);
  owb_node_clear_claims (fused);
  g_free (fused->inputs[1]);
  fused->inputs[1] = g_strdup (owb_pass_add_initializer (ctx, conv->inputs[1], nw));
  const char *nb_name = owb_pass_add_initializer (ctx, bias_name ? bias_name : conv->inputs[1], nb);
  if (fused->n_inputs > 2)
    {
      g_free (fused->inputs[2]);
      fused->inputs[2] = g_strdup (nb_name);
    }
  else
    owb_node_add_input (fused, nb_name);
  g_free (fused->outputs[0]);
  fused->outputs[0] = g_strdup (bn->outputs[0]);
  _owb_pass_replace_pair (ctx, fused, conv, bn);
  return TRUE;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  static const char *const ops[] = { "BatchNormalization", NULL };
  /* Only the BatchNormalization being fused is removed with its Conv, so the other candidates stay valid. */
  if (_owb_pass_fuse_each (ctx, ops, NULL, try_fuse))
    owb_pass_prune_initializers (ctx);
  return TRUE;
}

const OwbPass _owb_pass_fuse_conv_bn = {
  "fuse_conv_bn",
  OWB_OPTIMIZE_EXTENDED,
  "folds BatchNormalization into the preceding Conv's weights and bias",
  run,
};
