/* pass-fuse-conv-mul.c: folds a Mul (or Div) by a per-output-channel constant into the preceding
 * Conv's weights and bias. */
#include "owb-optimizer-private.h"

#include <string.h>

static gboolean
try_fuse (OwbPassContext *ctx, OwbNode *mul)
{
  gboolean is_div = owb_pass_is_op (mul, "Div");
  if (mul->n_inputs != 2 || mul->n_outputs != 1)
    return FALSE;
  /* Mul commutes; Div folds only when the Conv output is the dividend. */
  OwbNode *conv = NULL;
  const OwbTensor *s = NULL;
  for (int i = 0; i < (is_div ? 1 : 2) && !conv; i++)
    {
      OwbNode *p = owb_pass_producer (ctx, mul->inputs[i]);
      const OwbTensor *c = owb_pass_get_constant (ctx, mul->inputs[1 - i]);
      if (owb_pass_is_op (p, "Conv") && p->n_inputs >= 2 && c)
        {
          conv = p;
          s = c;
        }
    }
  if (!conv)
    return FALSE;
  const OwbTensor *w = owb_pass_get_constant (ctx, conv->inputs[1]);
  const char *bias_name = owb_node_get_input (conv, 2);
  const OwbTensor *b = bias_name ? owb_pass_get_constant (ctx, bias_name) : NULL;
  if (!w || !_owb_pass_is_float_type (w->dtype) || w->rank < 3 || s->dtype != w->dtype || (b && b->dtype != w->dtype))
    {
      if (!w)
        owb_pass_near_miss (ctx, mul, "follows Conv '%s', whose weight W is not a constant; kept", owb_pass_label (conv));
      return FALSE;
    }
  int64_t m = w->dims[0];
  gboolean per_channel;
  if (!owb_pass_is_channel_constant (s, w->rank, m, &per_channel))
    {
      char *shape = owb_tensor_shape_to_string (s);
      owb_pass_near_miss (ctx, mul, "follows Conv '%s' but its constant %s is not one value per output channel; kept",
                           owb_pass_label (conv), shape);
      g_free (shape);
      return FALSE;
    }
  if (bias_name && (!b || b->nelems != m))
    {
      owb_pass_near_miss (ctx, mul, "follows Conv '%s', whose bias B is not a constant; kept", owb_pass_label (conv));
      return FALSE;
    }
  guint uses = owb_pass_n_uses (ctx, conv->outputs[0]);
  if (uses != 1)
    {
      owb_pass_near_miss (ctx, mul, "follows Conv '%s', whose output is also read by %u other node(s) or is a graph "
                           "output; kept", owb_pass_label (conv), uses - 1);
      return FALSE;
    }
  double *factor = g_new (double, m);
  for (int64_t c = 0; c < m; c++)
    {
      double v = owb_tensor_get_double (s, per_channel ? c : 0);
      if (is_div && v == 0)
        {
          g_free (factor);
          return FALSE;
        }
      factor[c] = is_div ? 1 / v : v;
    }

  OwbTensor *nw = _owb_pass_scale_conv_weight (w, factor, m);
  OwbTensor *nb = NULL;
  if (b)
    {
      nb = owb_tensor_new (b->dtype, 1, &m, NULL);
      for (int64_t c = 0; c < m; c++)
        owb_tensor_set_double (nb, c, owb_tensor_get_double (b, c) * factor[c]);
    }
  g_free (factor);

  _owb_pass_replace_conv (ctx, conv, mul, nw, nb);
  return TRUE;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  /* A fusion removes the Mul at hand and a Conv, never another candidate; a Conv → Mul → Mul chain
   * folds twice, the second Mul then following the new Conv. */
  _owb_pass_fuse_each_scale_and_prune (ctx, try_fuse);
  return TRUE;
}

const OwbPass _owb_pass_fuse_conv_mul = {
  "fuse_conv_mul",
  OWB_OPTIMIZE_EXTENDED,
  "folds a Mul (or Div) by a per-output-channel constant into the preceding Conv's weights and bias",
  run,
};
