/* pass-fuse-conv-add.c: folds an Add (or Sub) of a per-output-channel constant into the preceding
 * Conv's bias. */
#include "owb-optimizer-private.h"

#include <string.h>

/* The rank and channel count of a Conv's output, from its inferred type or its weight. */
static gboolean
conv_output_shape (OwbPassContext *ctx, const OwbNode *conv, int *rank, int64_t *m, OwbDataType *dtype)
{
  const OwbValueType *t = owb_pass_value_type (ctx, conv->outputs[0]);
  if (!t || t->kind != OWB_VALUE_TENSOR || t->rank < 3)
    return FALSE;
  *rank = t->rank;
  *dtype = t->dtype;
  if (owb_dim_is_known (t->dims[1]))
    *m = t->dims[1].value;
  else
    {
      const OwbValueType *w = owb_pass_value_type (ctx, conv->inputs[1]);
      const OwbTensor *wc = owb_pass_get_constant (ctx, conv->inputs[1]);
      if (wc)
        *m = wc->dims[0];
      else if (w && w->rank >= 1 && owb_dim_is_known (w->dims[0]))
        *m = w->dims[0].value;
      else
        return FALSE;
    }
  return TRUE;
}

static gboolean
try_fuse (OwbPassContext *ctx, OwbNode *add)
{
  gboolean is_sub = owb_pass_is_op (add, "Sub");
  if (add->n_inputs != 2 || add->n_outputs != 1)
    return FALSE;
  OwbNode *conv = NULL;
  const OwbTensor *s = NULL;
  for (int i = 0; i < (is_sub ? 1 : 2) && !conv; i++)
    {
      OwbNode *p = owb_pass_producer (ctx, add->inputs[i]);
      const OwbTensor *c = owb_pass_get_constant (ctx, add->inputs[1 - i]);
      if (owb_pass_is_op (p, "Conv") && p->n_inputs >= 2 && c)
        {
          conv = p;
          s = c;
        }
    }
  if (!conv)
    return FALSE;
  int rank;
  int64_t m;
  OwbDataType dtype;
  if (!conv_output_shape (ctx, conv, &rank, &m, &dtype) || !_owb_pass_is_float_type (dtype) || s->dtype != dtype)
    return FALSE;
  gboolean per_channel;
  if (!owb_pass_is_channel_constant (s, rank, m, &per_channel))
    {
      char *shape = owb_tensor_shape_to_string (s);
      owb_pass_near_miss (ctx, add, "follows Conv '%s' but its constant %s is not one value per output channel; kept",
                           owb_pass_label (conv), shape);
      g_free (shape);
      return FALSE;
    }
  const char *bias_name = owb_node_get_input (conv, 2);
  const OwbTensor *b = bias_name ? owb_pass_get_constant (ctx, bias_name) : NULL;
  if (bias_name && (!b || b->nelems != m || b->dtype != dtype))
    {
      owb_pass_near_miss (ctx, add, "follows Conv '%s', whose bias B is not a constant; kept", owb_pass_label (conv));
      return FALSE;
    }
  guint uses = owb_pass_n_uses (ctx, conv->outputs[0]);
  if (uses != 1)
    {
      owb_pass_near_miss (ctx, add, "follows Conv '%s', whose output is also read by %u other node(s) or is a graph "
                           "output; kept", owb_pass_label (conv), uses - 1);
      return FALSE;
    }

  OwbTensor *nb = owb_tensor_new (dtype, 1, &m, NULL);
  for (int64_t c = 0; c < m; c++)
    {
      double v = owb_tensor_get_double (s, per_channel ? c : 0);
      owb_tensor_set_double (nb, c, (b ? owb_tensor_get_double (b, c) : 0) + (is_sub ? -v : v));
    }
  _owb_pass_replace_conv (ctx, conv, add, NULL, nb);
  return TRUE;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  static const char *const ops[] = { "Add", "Sub", NULL };
  /* A fusion removes the Add at hand and a Conv, never another candidate. */
  _owb_pass_fuse_each_and_prune (ctx, ops, try_fuse);
  return TRUE;
}

const OwbPass _owb_pass_fuse_conv_add = {
  "fuse_conv_add",
  OWB_OPTIMIZE_EXTENDED,
  "folds an Add (or Sub) of a per-output-channel constant into the preceding Conv's bias",
  run,
};
