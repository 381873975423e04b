/* pass-fuse-activation.c: fuses Relu/Clip/Sigmoid/HardSwish/LeakyRelu/... (and a residual Add) into the preceding Conv/Gemm/MatMul.
 * Also Tanh, HardSigmoid, Gelu (standard or ours, as activation Gelu or FastGelu for the tanh form),
 * and the exported forms x * HardSigmoid (x) (HardSwish) and x * Sigmoid (x) (Swish). */
#include "owb-optimizer-private.h"

#include <float.h>
#include <math.h>
#include <string.h>



/* What follows a producer and folds into it: an optional residual Add (FusedConv's Z), then an
 * optional activation of one or two nodes (x * HardSigmoid (x) is HardSwish, x * Sigmoid (x) Swish). */
typedef struct {
  OwbNode *add;
  const char *z;
  const char *activation;
  int n_params;
  float params[2];
  OwbNode *act_nodes[2];
  int n_act_nodes;
  const char *output; /* the value the fused node writes */
} Tail;

static gboolean
same_shape (const OwbValueType *a, const OwbValueType *b)
{
  if (a->rank < 0 || a->rank != b->rank || a->dtype != b->dtype)
    return FALSE;
  for (int i = 0; i < a->rank; i++)
    {
      OwbDim x = a->dims[i], y = b->dims[i];
      if (owb_dim_is_known (x) || owb_dim_is_known (y) ? x.value != y.value : !(x.param && x.param == y.param))
        return FALSE;
    }
  return TRUE;
}

/* Whether node, reading `value`, is an activation we fuse; fills the tail's activation. */
static gboolean
single_activation (OwbPassContext *ctx, OwbNode *node, const char *value, Tail *tail)
{
  if (node->n_inputs < 1 || node->n_outputs < 1 || strcmp (node->inputs[0], value) != 0)
    return FALSE;
  const char *op = node->op_type;
  tail->n_params = 0;
  if (owb_pass_is_op (node, "Relu") || owb_pass_is_op (node, "Sigmoid") || owb_pass_is_op (node, "Tanh"))
    tail->activation = op;
  else if (owb_pass_is_op (node, "LeakyRelu"))
    {
      tail->activation = op;
      tail->params[0] = owb_node_get_float (node, "alpha", 0.01f);
      tail->n_params = 1;
    }
  else if (owb_pass_is_op (node, "HardSigmoid"))
    {
      tail->activation = op;
      tail->params[0] = owb_node_get_float (node, "alpha", 0.2f);
      tail->params[1] = owb_node_get_float (node, "beta", 0.5f);
      tail->n_params = 2;
    }
  else if (owb_pass_is_op (node, "HardSwish"))
    {
      tail->activation = op;
      tail->params[0] = 1.0f / 6.0f;
      tail->params[1] = 0.5f;
      tail->n_params = 2;
    }
  else if ((owb_pass_is_op (node, "Gelu") || owb_pass_is_our_op (node, "Gelu")) && node->n_inputs == 1)
    {
      const char *approximate = owb_node_get_string (node, "approximate", "none");
      if (strcmp (approximate, "none") != 0 && strcmp (approximate, "tanh") != 0)
        return FALSE;
      tail->activation = strcmp (approximate, "tanh") == 0 ? "FastGelu" : "Gelu";
    }
  else if (owb_pass_is_op (node, "Clip"))
    {
      if (node->opset < 11)
        {
          tail->params[0] = owb_node_get_float (node, "min", -FLT_MAX);
          tail->params[1] = owb_node_get_float (node, "max", FLT_MAX);
        }
      else
        {
          double lo, hi;
          if (!_owb_pass_clip_bound (ctx, node, 1, -INFINITY, &lo)
              || !_owb_pass_clip_bound (ctx, node, 2, INFINITY, &hi))
            {
              owb_pass_near_miss (ctx, node, "its min/max are not constant scalars, so it is not fused; kept");
              return FALSE;
            }
          tail->params[0] = (float) lo;
          tail->params[1] = (float) hi;
        }
      tail->activation = op;
      tail->n_params = 2;
    }
  else
    return FALSE;
  tail->act_nodes[0] = node;
  tail->n_act_nodes = 1;
  tail->output = node->outputs[0];
  return TRUE;
}

/* x * HardSigmoid (x) or x * Sigmoid (x), the gate read only by the Mul. */
static gboolean
gated_activation (OwbPassContext *ctx, GPtrArray *readers, const char *value, Tail *tail)
{
  for (guint g = 0; g < 2; g++)
    {
      OwbNode *gate = g_ptr_array_index (readers, g), *mul = g_ptr_array_index (readers, 1 - g);
      gboolean hard = owb_pass_is_op (gate, "HardSigmoid");
      if ((!hard && !owb_pass_is_op (gate, "Sigmoid")) || !owb_pass_is_op (mul, "Mul") || gate->n_outputs != 1 || mul->n_inputs != 2
          || strcmp (gate->inputs[0], value) != 0 || owb_pass_n_uses (ctx, gate->outputs[0]) != 1)
        continue;
      gboolean wired = (strcmp (mul->inputs[0], value) == 0 && strcmp (mul->inputs[1], gate->outputs[0]) == 0)
                       || (strcmp (mul->inputs[1], value) == 0 && strcmp (mul->inputs[0], gate->outputs[0]) == 0);
      if (!wired)
        continue;
      tail->activation = hard ? "HardSwish" : "Swish";
      tail->n_params = 0;
      if (hard)
        {
          tail->params[0] = owb_node_get_float (gate, "alpha", 0.2f);
          tail->params[1] = owb_node_get_float (gate, "beta", 0.5f);
          tail->n_params = 2;
        }
      tail->act_nodes[0] = gate;
      tail->act_nodes[1] = mul;
      tail->n_act_nodes = 2;
      tail->output = mul->outputs[0];
      return TRUE;
    }
  return FALSE;
}

static gboolean
is_activation_op (const OwbNode *node)
{
  static const char *const ops[] = { "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish",
                                     "Gelu" };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    if (owb_pass_is_op (node, ops[i]))
      return TRUE;
  return owb_pass_is_our_op (node, "Gelu");
}

/* The activation reading `value` (written by `producer`), if it is the value's only reader. */
static gboolean
match_activation (OwbPassContext *ctx, const OwbNode *producer, const char *value, Tail *tail)
{
  GPtrArray *readers = owb_pass_consumers (ctx, value);
  guint uses = owb_pass_n_uses (ctx, value);
  if (uses == 1 && readers->len == 1)
    return single_activation (ctx, g_ptr_array_index (readers, 0), value, tail);
  if (uses == 2 && readers->len == 2 && gated_activation (ctx, readers, value, tail))
    return TRUE;
  for (guint i = 0; i < readers->len; i++)
    if (is_activation_op (g_ptr_array_index (readers, i)))
      {
        owb_pass_near_miss (ctx, producer, "its output '%s' is read by %u nodes (or is a graph output), so %s '%s' "
                             "stays separate", value, uses, ((OwbNode *) g_ptr_array_index (readers, i))->op_type,
                             owb_pass_label (g_ptr_array_index (readers, i)));
        break;
      }
  return FALSE;
}

/* Conv output + a tensor of the same shape, the Add being the output's only reader. */
static gboolean
match_residual (OwbPassContext *ctx, const OwbNode *conv, Tail *tail)
{
  const char *value = conv->outputs[0];
  GPtrArray *readers = owb_pass_consumers (ctx, value);
  if (owb_pass_n_uses (ctx, value) != 1 || readers->len != 1)
    return FALSE;
  OwbNode *add = g_ptr_array_index (readers, 0);
  if (!owb_pass_is_op (add, "Add") || add->n_inputs != 2 || add->n_outputs != 1)
    return FALSE;
  const char *other = strcmp (add->inputs[0], value) == 0 ? add->inputs[1] : add->inputs[0];
  OwbValueType y, z, sum;
  if (strcmp (other, value) == 0 || !_owb_pass_tensor_type (ctx, value, &y) || !_owb_pass_tensor_type (ctx, other, &z)
      || !_owb_pass_tensor_type (ctx, add->outputs[0], &sum))
    return FALSE;
  if (!same_shape (&y, &z) || !same_shape (&y, &sum))
    {
      char *ys = owb_value_type_to_string (&y), *zs = owb_value_type_to_string (&z);
      owb_pass_near_miss (ctx, add, "adds %s to Conv '%s' output %s: a residual needs the same known shape; kept", zs,
                           owb_pass_label (conv), ys);
      g_free (ys);
      g_free (zs);
      return FALSE;
    }
  tail->add = add;
  tail->z = other;
  tail->output = add->outputs[0];
  return TRUE;
}

static gboolean
try_fuse (OwbPassContext *ctx, OwbNode *node)
{
  gboolean conv = owb_pass_is_op (node, "Conv") || owb_pass_is_our_op (node, "FusedConv");
  gboolean gemm = owb_pass_is_op (node, "Gemm") || owb_pass_is_our_op (node, "FusedGemm");
  gboolean matmul = owb_pass_is_op (node, "MatMul") || owb_pass_is_our_op (node, "FusedMatMul");
  if (!conv && !gemm && !matmul)
    return FALSE;
  if (node->n_inputs < 2 || node->n_outputs != 1 || owb_node_get_attribute (node, "activation"))
    return FALSE;
  OwbValueType out;
  if (!_owb_pass_tensor_type (ctx, node->outputs[0], &out) || !_owb_pass_is_float_type (out.dtype))
    return FALSE;

  Tail tail = { .output = node->outputs[0] };
  if (conv && !owb_node_get_input (node, 3))
    match_residual (ctx, node, &tail);
  match_activation (ctx, node, tail.output, &tail);
  if (!tail.add && !tail.activation)
    return FALSE;
  const char *fused_op = conv ? "FusedConv" : gemm ? "FusedGemm" : "FusedMatMul";
  if (ctx->options->portable)
    {
      owb_pass_near_miss (ctx, node, "%s%s%s would fuse into %s, which is not a standard ONNX op; kept (portable)",
                           tail.add ? "the residual Add" : "", tail.add && tail.activation ? " and " : "",
                           tail.activation ? tail.activation : "", fused_op);
      return FALSE;
    }

  owb_model_set_opset (ctx->model, OWB_DOMAIN, 1);
  OwbNode *fused = _owb_pass_dup_as (node, fused_op, OWB_DOMAIN);
  if (tail.z)
    owb_node_set_input (fused, 3, tail.z);
  if (tail.activation)
    owb_pass_set_activation (fused, "activation", "activation_params", tail.activation, tail.params, tail.n_params);
  g_free (fused->outputs[0]);
  fused->outputs[0] = g_strdup (tail.output);
  const char *from[4];
  guint n = 0;
  from[n++] = owb_pass_label (node);
  if (tail.add)
    from[n++] = owb_pass_label (tail.add);
  for (int i = 0; i < tail.n_act_nodes; i++)
    from[n++] = owb_pass_label (tail.act_nodes[i]);
  owb_pass_add_node (ctx, fused, from, n);
  owb_pass_remove_node (ctx, node);
  if (tail.add)
    owb_pass_remove_node (ctx, tail.add);
  for (int i = 0; i < tail.n_act_nodes; i++)
    owb_pass_remove_node (ctx, tail.act_nodes[i]);
  return TRUE;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  static const char *const ops[] = { "Conv", "Gemm", "MatMul", NULL };
  static const char *const our_ops[] = { "FusedConv", "FusedGemm", "FusedMatMul", NULL };
  /* A fusion removes the candidate at hand, an Add and activations: never another candidate. */
  _owb_pass_fuse_each (ctx, ops, our_ops, try_fuse);
  return TRUE;
}

const OwbPass _owb_pass_fuse_activation = {
  "fuse_activation",
  OWB_OPTIMIZE_EXTENDED,
  "fuses Relu/Clip/Sigmoid/HardSwish/LeakyRelu/... (and a residual Add) into the preceding Conv/Gemm/MatMul",
  run,
};
