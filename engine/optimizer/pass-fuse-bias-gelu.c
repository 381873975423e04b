/* pass-fuse-bias-gelu.c: folds the bias Add before a Gelu into it: Gelu (Add (x, b)) with b a constant
 * vector over the last dim becomes ai.onnx.workbench's BiasGelu (x, b) (no standard op does this, so
 * a portable optimization leaves it). */
#include "owb-optimizer-private.h"

#include <string.h>

static gboolean
is_gelu (const OwbNode *node)
{
  return (owb_pass_is_op (node, "Gelu") || owb_pass_is_our_op (node, "Gelu")) && node->n_inputs == 1
         && node->n_outputs == 1;
}

static void
try_fuse (OwbPassContext *ctx, OwbNode *gelu)
{
  const char *in = gelu->inputs[0];
  OwbNode *add = owb_pass_producer (ctx, in);
  if (!owb_pass_is_op (add, "Add") || add->n_inputs != 2)
    return;
  int b = -1;
  for (int i = 0; i < 2 && b < 0; i++)
    {
      const OwbTensor *t = owb_pass_constant_through_identity (ctx, add->inputs[i]);
      if (t && t->kind == OWB_VALUE_TENSOR && t->rank == 1 && !owb_pass_constant_through_identity (ctx, add->inputs[1 - i]))
        b = i;
    }
  if (b < 0)
    return;
  const OwbTensor *bias = owb_pass_constant_through_identity (ctx, add->inputs[b]);
  const char *x = add->inputs[1 - b];
  const OwbValueType *xt = owb_pass_value_type (ctx, x), *sum = owb_pass_value_type (ctx, in);
  if (!xt || !sum || xt->rank < 1 || !_owb_pass_same_dims (xt, sum) || xt->dtype != bias->dtype
      || !owb_dim_is_known (xt->dims[xt->rank - 1]) || xt->dims[xt->rank - 1].value != bias->dims[0])
    {
      owb_pass_near_miss (ctx, add, "bias Add before a Gelu, but '%s' is not a vector over the last dim of '%s'",
                           add->inputs[b], x);
      return;
    }
  if (owb_pass_n_uses (ctx, in) != 1)
    {
      owb_pass_near_miss (ctx, add, "bias Add before a Gelu, but its output '%s' is also used elsewhere", in);
      return;
    }
  if (ctx->options->portable)
    {
      owb_pass_near_miss (ctx, gelu, "BiasGelu is not a standard ONNX op; kept as is (portable)");
      return;
    }
  const char *approximate = owb_node_get_string (gelu, "approximate", "none");
  char *from[2] = { g_strdup (owb_pass_label (add)), g_strdup (owb_pass_label (gelu)) };
  g_autofree char *gelu_name = g_strdup (gelu->name ? gelu->name : "");
  OwbNode *fused = owb_node_new ("BiasGelu", OWB_DOMAIN, NULL);
  owb_node_add_input (fused, x);
  owb_node_add_input (fused, add->inputs[b]);
  owb_node_add_output (fused, gelu->outputs[0]);
  OwbAttribute *a = owb_node_add_attribute (fused, "approximate", OWB_ATTR_STRING);
  a->s = g_strdup (approximate);
  a->s_len = strlen (a->s);
  owb_pass_remove_node (ctx, gelu);
  owb_pass_remove_node (ctx, add);
  /* the Gelu's name, free again now that it is removed: the fused node stays in its scope */
  g_free (fused->name);
  fused->name = g_strdup (gelu_name);
  owb_model_set_opset (ctx->model, OWB_DOMAIN, 1);
  owb_pass_add_node (ctx, fused, (const char *const *) from, 2);
  g_free (from[0]);
  g_free (from[1]);
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  (void) error;
  _owb_pass_fuse_each_anchor (ctx, is_gelu, try_fuse);
  return TRUE;
}

const OwbPass _owb_pass_fuse_bias_gelu = {
  "fuse_bias_gelu",
  OWB_OPTIMIZE_EXTENDED,
  "folds the bias Add before a Gelu into it",
  run,
};
