/* pass-fuse-matmul-scale.c: folds a Mul/Div by a scalar constant on a MatMul's or Gemm's input or
 * output into a constant weight, or into Gemm's alpha. */
#include "owb-optimizer-private.h"

#include <string.h>

/* A Mul (either order) or Div (value first) of a value by a scalar constant that does not broadcast
 * the value to a higher rank. Sets *value to the scaled input and *factor to what it is multiplied by. */
static gboolean
match_scale (OwbPassContext *ctx, const OwbNode *node, const char **value, double *factor)
{
  gboolean is_div = owb_pass_is_op (node, "Div");
  if (!(is_div || owb_pass_is_op (node, "Mul")) || node->n_inputs != 2 || node->n_outputs != 1)
    return FALSE;
  for (int i = 0; i < (is_div ? 1 : 2); i++)
    {
      const OwbTensor *s = owb_pass_get_constant (ctx, node->inputs[1 - i]);
      if (!s || s->nelems != 1 || !_owb_pass_is_float_type (s->dtype) || owb_pass_get_constant (ctx, node->inputs[i]))
        continue;
      int rank = _owb_pass_rank_of (ctx, node->inputs[i]);
      if (rank < 0 || s->rank > rank)
        continue;
      double v = owb_tensor_get_double (s, 0);
      if (is_div && v == 0)
        return FALSE;
      *value = node->inputs[i];
      *factor = is_div ? 1 / v : v;
      return TRUE;
    }
  return FALSE;
}

static OwbTensor *
scaled_copy (const OwbTensor *t, double factor)
{
  OwbTensor *out = owb_tensor_new (t->dtype, t->rank, t->dims, NULL);
  if (t->dtype == OWB_TYPE_FLOAT)
    for (int64_t i = 0; i < t->nelems; i++)
      ((float *) out->data)[i] = (float) (((const float *) t->data)[i] * factor);
  else
    for (int64_t i = 0; i < t->nelems; i++)
      owb_tensor_set_double (out, i, owb_tensor_get_double (t, i) * factor);
  return out;
}

static void
set_float (OwbNode *node, const char *name, float value)
{
  owb_node_add_attribute (node, name, OWB_ATTR_FLOAT)->f = value;
}

/* Builds the replacement of `mm` with the factor folded in (NULL with a near miss when it cannot
 * be): a Gemm scales alpha (and beta when the scale is on the output); a MatMul scales a constant
 * operand, never `skip`, the input the scale sits on. */
static OwbNode *
fold (OwbPassContext *ctx, const OwbNode *mm, const OwbNode *scale, double factor, gboolean on_output, int skip)
{
  OwbNode *fused = owb_node_dup (mm);
  owb_node_clear_claims (fused);
  if (owb_pass_is_op (mm, "Gemm"))
    {
      set_float (fused, "alpha", (float) (owb_node_get_float (mm, "alpha", 1.0f) * factor));
      if (on_output && mm->n_inputs > 2 && mm->inputs[2][0])
        set_float (fused, "beta", (float) (owb_node_get_float (mm, "beta", 1.0f) * factor));
      return fused;
    }
  for (int i = 1; i >= 0; i--)
    {
      const OwbTensor *w = i != skip ? owb_pass_get_constant (ctx, mm->inputs[i]) : NULL;
      if (!w || !_owb_pass_is_float_type (w->dtype))
        continue;
      g_free (fused->inputs[i]);
      fused->inputs[i] = g_strdup (owb_pass_add_initializer (ctx, mm->inputs[i], scaled_copy (w, factor)));
      return fused;
    }
  owb_node_free (fused);
  owb_pass_near_miss (ctx, scale, "scales MatMul '%s', which has no constant operand to fold into; kept",
                       owb_pass_label (mm));
  return NULL;
}

/* Whether `value` is x * (1 + Erf (...)) or x * (1 + Tanh (...)): then a scale by 0.5 on it is the
 * end of an exported GELU, which fuse_gelu (a later pass) turns into one node; folding the 0.5
 * away here would hide the pattern from it. */
static gboolean
ends_gelu (OwbPassContext *ctx, const char *value)
{
  OwbNode *mul = owb_pass_producer (ctx, value);
  if (!owb_pass_is_op (mul, "Mul") || mul->n_inputs != 2)
    return FALSE;
  for (int i = 0; i < 2; i++)
    {
      OwbNode *add = owb_pass_producer (ctx, mul->inputs[i]);
      if (!owb_pass_is_op (add, "Add") || add->n_inputs != 2)
        continue;
      for (int k = 0; k < 2; k++)
        {
          OwbNode *t = owb_pass_producer (ctx, add->inputs[k]);
          if (owb_pass_is_op (t, "Erf") || owb_pass_is_op (t, "Tanh"))
            return TRUE;
        }
    }
  return FALSE;
}

static gboolean
try_fuse (OwbPassContext *ctx, OwbNode *scale)
{
  const char *value;
  double factor;
  if (!match_scale (ctx, scale, &value, &factor) || ends_gelu (ctx, value))
    return FALSE;
  /* On the output: MatMul/Gemm → scale. */
  OwbNode *mm = owb_pass_producer (ctx, value);
  if ((owb_pass_is_op (mm, "MatMul") || owb_pass_is_op (mm, "Gemm")) && mm->n_inputs >= 2)
    {
      guint uses = owb_pass_n_uses (ctx, value);
      if (uses != 1)
        owb_pass_near_miss (ctx, scale, "scales the output of %s '%s', which is also read by %u other node(s); kept",
                             mm->op_type, owb_pass_label (mm), uses - 1);
      else
        {
          OwbNode *fused = fold (ctx, mm, scale, factor, TRUE, -1);
          if (fused)
            {
              g_free (fused->outputs[0]);
              fused->outputs[0] = g_strdup (scale->outputs[0]);
              _owb_pass_replace_pair (ctx, fused, mm, scale);
              return TRUE;
            }
        }
    }
  /* On an input: scale → MatMul/Gemm (Gemm's input C excluded: alpha does not apply to it). */
  GPtrArray *readers = owb_pass_consumers (ctx, scale->outputs[0]);
  if (owb_pass_n_uses (ctx, scale->outputs[0]) != 1 || readers->len != 1)
    return FALSE;
  mm = g_ptr_array_index (readers, 0);
  if (!(owb_pass_is_op (mm, "MatMul") || owb_pass_is_op (mm, "Gemm")) || mm->n_inputs < 2)
    return FALSE;
  int slot = strcmp (mm->inputs[0], scale->outputs[0]) == 0 ? 0 : (strcmp (mm->inputs[1], scale->outputs[0]) == 0 ? 1 : -1);
  if (slot < 0)
    return FALSE;
  OwbNode *fused = fold (ctx, mm, scale, factor, FALSE, slot);
  if (!fused)
    return FALSE;
  g_free (fused->inputs[slot]);
  fused->inputs[slot] = g_strdup (value);
  _owb_pass_replace_pair (ctx, fused, scale, mm);
  return TRUE;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  /* A fusion removes the scale at hand and one MatMul/Gemm, never another candidate. */
  _owb_pass_fuse_each_scale_and_prune (ctx, try_fuse);
  return TRUE;
}

const OwbPass _owb_pass_fuse_matmul_scale = {
  "fuse_matmul_scale",
  OWB_OPTIMIZE_EXTENDED,
  "folds a Mul/Div by a scalar constant on a MatMul's or Gemm's input or output into a constant weight or Gemm's alpha",
  run,
};
