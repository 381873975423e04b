/* pass-fuse-skip-layernorm.c: folds a residual Add (and a bias Add feeding it) into the
 * LayerNormalization that reads it: LayerNormalization (Add (x, Add (skip, bias))) over the last axis
 * becomes ai.onnx.workbench's SkipLayerNormalization (x, skip, gamma, beta, bias). When the sum is
 * also read elsewhere (pre-norm residual streams) the fused node outputs it too (output 3, as in ONNX
 * Runtime's contrib op). No standard op does this: a portable optimization leaves it. */
#include "owb-optimizer-private.h"

#include <string.h>

static gboolean
is_layer_norm (const OwbNode *node)
{
  return owb_pass_is_op (node, "LayerNormalization") || owb_pass_is_our_op (node, "LayerNormalization");
}

/* skip's dims after leading 1s are the trailing dims of `full` (it repeats over the leading ones). */
static gboolean
is_trailing_part (const OwbValueType *skip, const OwbValueType *full)
{
  if (skip->rank < 1 || full->rank < 1)
    return FALSE;
  int lead = 0;
  while (lead < skip->rank - 1 && owb_dim_is_known (skip->dims[lead]) && skip->dims[lead].value == 1)
    lead++;
  if (skip->rank - lead > full->rank)
    return FALSE;
  for (int k = lead; k < skip->rank; k++)
    if (!_owb_pass_dim_eq (skip->dims[k], full->dims[full->rank - skip->rank + k]))
      return FALSE;
  return TRUE;
}

/* A LayerNormalization parameter as a vector of `hidden` elements: its own name, a new 1-D view of a
 * constant, or NULL. */
static const char *
vector_parameter (OwbPassContext *ctx, const char *name, int64_t hidden, OwbDataType dtype)
{
  const OwbTensor *c = owb_pass_constant_through_identity (ctx, name);
  if (c)
    {
      if (c->kind != OWB_VALUE_TENSOR || c->dtype != dtype || c->nelems != hidden)
        return NULL;
      if (c->rank == 1)
        return name;
      int64_t dims[1] = { hidden };
      OwbTensor *view = owb_tensor_new_view ((OwbTensor *) c, 1, dims, NULL);
      return view ? owb_pass_add_initializer (ctx, name, view) : NULL;
    }
  const OwbValueType *t = owb_pass_value_type (ctx, name);
  if (t && t->rank == 1 && t->dtype == dtype && owb_dim_is_known (t->dims[0]) && t->dims[0].value == hidden)
    return name;
  return NULL;
}

/* operand = Add (p, c) with c a constant vector of `hidden` elements, p of the operand's shape, and the
 * Add read only by `reader`: returns that Add, with *p and *c. */
static OwbNode *
bias_add (OwbPassContext *ctx, const char *operand, const OwbNode *reader, int64_t hidden, OwbDataType dtype,
          const char **p, const char **c)
{
  OwbNode *add = owb_pass_producer (ctx, operand);
  if (!owb_pass_is_op (add, "Add") || add->n_inputs != 2 || owb_pass_n_uses (ctx, operand) != 1)
    return NULL;
  GPtrArray *readers = owb_pass_consumers (ctx, operand);
  if (readers->len != 1 || g_ptr_array_index (readers, 0) != reader)
    return NULL;
  OwbValueType operand_type, pt;
  if (!_owb_pass_tensor_type (ctx, operand, &operand_type))
    return NULL;
  for (int i = 0; i < 2; i++)
    {
      const OwbTensor *t = owb_pass_constant_through_identity (ctx, add->inputs[i]);
      if (!t || t->rank != 1 || t->nelems != hidden || t->dtype != dtype || owb_pass_constant_through_identity (ctx, add->inputs[1 - i]))
        continue;
      if (!_owb_pass_tensor_type (ctx, add->inputs[1 - i], &pt) || !_owb_pass_same_dims (&pt, &operand_type))
        continue;
      *p = add->inputs[1 - i];
      *c = add->inputs[i];
      return add;
    }
  return NULL;
}

static void
try_fuse (OwbPassContext *ctx, OwbNode *ln)
{
  const char *sum = owb_node_get_input (ln, 0), *scale = owb_node_get_input (ln, 1), *b = owb_node_get_input (ln, 2);
  OwbNode *add = sum ? owb_pass_producer (ctx, sum) : NULL;
  if (!owb_pass_is_op (add, "Add") || add->n_inputs != 2 || !scale)
    return;
  OwbValueType st;
  if (!_owb_pass_tensor_type (ctx, sum, &st) || st.rank < 1)
    return;
  int64_t axis = owb_node_get_int (ln, "axis", -1);
  if (axis != -1 && axis != st.rank - 1)
    return;
  for (int o = 1; o < ln->n_outputs; o++)
    if (ln->outputs[o][0] && owb_pass_n_uses (ctx, ln->outputs[o]) > 0)
      {
        owb_pass_near_miss (ctx, ln, "residual Add before it, but its mean/inverse std output is used");
        return;
      }
  OwbDim hidden_dim = st.dims[st.rank - 1];
  if (!owb_dim_is_known (hidden_dim))
    {
      owb_pass_near_miss (ctx, ln, "residual Add before it, but the normalized dim of '%s' is not known", sum);
      return;
    }
  int64_t hidden = hidden_dim.value;
  /* Which operand has the full shape (input) and which repeats (skip). */
  OwbValueType a, c;
  if (!_owb_pass_tensor_type (ctx, add->inputs[0], &a) || !_owb_pass_tensor_type (ctx, add->inputs[1], &c))
    return;
  int in = _owb_pass_same_dims (&a, &st) ? 0 : _owb_pass_same_dims (&c, &st) ? 1 : -1;
  if (in < 0 || !is_trailing_part (in == 0 ? &c : &a, &st))
    {
      owb_pass_near_miss (ctx, add, "residual Add before a LayerNormalization, but its operands' shapes do not fit "
                                     "SkipLayerNormalization (one of full shape, the other its trailing dims)");
      return;
    }
  const char *input = add->inputs[in], *skip = add->inputs[1 - in];
  if (owb_pass_constant_through_identity (ctx, input) && owb_pass_constant_through_identity (ctx, skip))
    return;
  const char *gamma = vector_parameter (ctx, scale, hidden, st.dtype);
  const char *beta = b ? vector_parameter (ctx, b, hidden, st.dtype) : NULL;
  if (!gamma || (b && !beta))
    {
      owb_pass_near_miss (ctx, ln, "residual Add before it, but its scale or bias is not a vector of %" G_GINT64_FORMAT
                                    " elements",
                           hidden);
      return;
    }
  if (ctx->options->portable)
    {
      owb_pass_near_miss (ctx, ln, "SkipLayerNormalization is not a standard ONNX op; kept as is (portable)");
      return;
    }
  /* A bias Add on either operand folds in too (a Linear's bias before the residual Add). */
  const char *p = NULL, *bias = NULL;
  OwbNode *badd = bias_add (ctx, skip, add, hidden, st.dtype, &p, &bias);
  if (badd)
    skip = p;
  else if ((badd = bias_add (ctx, input, add, hidden, st.dtype, &p, &bias)))
    input = p;
  gboolean want_sum = owb_pass_n_uses (ctx, sum) > 1;

  char *from[3] = { g_strdup (owb_pass_label (add)), g_strdup (owb_pass_label (ln)), badd ? g_strdup (owb_pass_label (badd)) : NULL };
  g_autofree char *ln_name = g_strdup (ln->name ? ln->name : "");
  OwbNode *fused = owb_node_new ("SkipLayerNormalization", OWB_DOMAIN, NULL);
  owb_node_add_input (fused, input);
  owb_node_add_input (fused, skip);
  owb_node_add_input (fused, gamma);
  if (beta || bias)
    owb_node_add_input (fused, beta ? beta : "");
  if (bias)
    owb_node_add_input (fused, bias);
  owb_node_add_output (fused, ln->outputs[0]);
  if (want_sum)
    {
      owb_node_add_output (fused, "");
      owb_node_add_output (fused, "");
      owb_node_add_output (fused, sum);
    }
  owb_node_add_attribute (fused, "epsilon", OWB_ATTR_FLOAT)->f = owb_node_get_float (ln, "epsilon", 1e-5f);
  owb_pass_remove_node (ctx, ln);
  owb_pass_remove_node (ctx, add);
  if (badd)
    owb_pass_remove_node (ctx, badd);
  /* the LayerNormalization's name (free again now that it is removed): its scope is kept */
  g_free (fused->name);
  fused->name = g_strdup (ln_name);
  owb_model_set_opset (ctx->model, OWB_DOMAIN, 1);
  owb_pass_add_node (ctx, fused, (const char *const *) from, badd ? 3 : 2);
  for (int i = 0; i < 3; i++)
    g_free (from[i]);
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  (void) error;
  _owb_pass_fuse_each_anchor (ctx, is_layer_norm, try_fuse);
  owb_pass_prune_initializers (ctx);
  return TRUE;
}

const OwbPass _owb_pass_fuse_skip_layernorm = {
  "fuse_skip_layernorm",
  OWB_OPTIMIZE_EXTENDED,
  "folds a residual Add (and bias) into LayerNormalization",
  run,
};
