/* pass-fuse-matmul-add.c: turns MatMul + Add of a bias into Gemm when A and B are 2-D, or into
 * our FusedMatMul with a bias input when A has more axes ([batch, seq, K] x [K, N] + [N]). */
#include "owb-optimizer-private.h"

#include <string.h>

static gboolean
is_one (OwbDim d)
{
  return d.value == 1;
}

/* Whether bias broadcasts one way into out (rank 2): Gemm's rule for C, which also keeps the Add's
 * output shape. */
static gboolean
fits_gemm (const OwbValueType *bias, const OwbValueType *out)
{
  if (bias->rank > 2)
    return FALSE;
  for (int i = 0; i < bias->rank; i++)
    if (!is_one (bias->dims[i]) && !_owb_pass_dim_eq (bias->dims[i], out->dims[2 - bias->rank + i]))
      return FALSE;
  return TRUE;
}

/* Whether `name` (of type bias) added to out is one value per output column: as it is ([N]), or
 * as a new [N] constant (from [1, 1, N], or a scalar repeated), which *vector receives when
 * create is TRUE. */
static gboolean
bias_vector (OwbPassContext *ctx, const char *name, const OwbValueType *bias, const OwbValueType *out,
             gboolean create, const char **vector)
{
  if (bias->rank > out->rank || out->rank < 1)
    return FALSE;
  OwbDim n = out->dims[out->rank - 1];
  for (int i = 0; i + 1 < bias->rank; i++)
    if (!is_one (bias->dims[i]))
      return FALSE;
  OwbDim last = bias->rank > 0 ? bias->dims[bias->rank - 1] : OWB_DIM_VALUE (1);
  *vector = name;
  if (bias->rank == 1 && _owb_pass_dim_eq (last, n))
    return TRUE;
  const OwbTensor *c = owb_pass_get_constant (ctx, name);
  if (!c || !owb_dim_is_known (n) || !(_owb_pass_dim_eq (last, n) || is_one (last)))
    return FALSE;
  if (create)
    {
      OwbTensor *v = owb_tensor_new (c->dtype, 1, &n.value, NULL);
      for (int64_t j = 0; j < n.value; j++)
        owb_tensor_set_double (v, j, owb_tensor_get_double (c, c->nelems == 1 ? 0 : j));
      *vector = owb_pass_add_initializer (ctx, name, v);
    }
  return TRUE;
}

static gboolean
fuse (OwbPassContext *ctx, OwbNode *add, OwbNode *mm, const char *bias_name)
{
  gboolean ours = owb_pass_is_our_op (mm, "FusedMatMul");
  OwbValueType a, b, bias, out;
  if (!_owb_pass_tensor_type (ctx, mm->inputs[0], &a) || !_owb_pass_tensor_type (ctx, mm->inputs[1], &b)
      || !_owb_pass_tensor_type (ctx, bias_name, &bias) || !_owb_pass_tensor_type (ctx, mm->outputs[0], &out)
      || bias.rank < 0 || out.rank < 0 || !_owb_pass_is_float_type (out.dtype) || bias.dtype != out.dtype)
    return FALSE;
  if (a.rank < 2 || b.rank != 2)
    return FALSE;
  if (!ours && a.rank == 2)
    {
      if (owb_pass_opset (ctx) < 7)
        return FALSE;
      if (!fits_gemm (&bias, &out))
        {
          char *s = owb_value_type_to_string (&bias);
          owb_pass_near_miss (ctx, add, "adds %s to MatMul '%s', which does not broadcast into Gemm's [M, N]; kept",
                               s, owb_pass_label (mm));
          g_free (s);
          return FALSE;
        }
      OwbNode *gemm = owb_node_new ("Gemm", "", mm->name);
      owb_node_add_input (gemm, mm->inputs[0]);
      owb_node_add_input (gemm, mm->inputs[1]);
      owb_node_add_input (gemm, bias_name);
      owb_node_add_output (gemm, add->outputs[0]);
      const char *from[] = { owb_pass_label (mm), owb_pass_label (add) };
      owb_pass_add_node (ctx, gemm, from, 2);
      owb_pass_remove_node (ctx, mm);
      owb_pass_remove_node (ctx, add);
      return TRUE;
    }
  const char *vector;
  if (!bias_vector (ctx, bias_name, &bias, &out, FALSE, &vector))
    {
      /* A tensor that is not a constant is a residual rather than a bias: no near miss for it. */
      if (!owb_pass_get_constant (ctx, bias_name))
        return FALSE;
      char *s = owb_value_type_to_string (&bias);
      owb_pass_near_miss (ctx, add, "adds %s to MatMul '%s', which is not one value per output column; kept", s,
                           owb_pass_label (mm));
      g_free (s);
      return FALSE;
    }
  if (ctx->options->portable)
    {
      owb_pass_near_miss (ctx, add, "adds a bias to MatMul '%s' whose A has rank %d: Gemm takes only 2-D A and "
                           "FusedMatMul is not a standard ONNX op; kept (portable)", owb_pass_label (mm), a.rank);
      return FALSE;
    }
  bias_vector (ctx, bias_name, &bias, &out, TRUE, &vector);
  owb_model_set_opset (ctx->model, OWB_DOMAIN, 1);
  OwbNode *fused;
  if (ours)
    {
      fused = owb_node_dup (mm);
      owb_node_clear_claims (fused);
      if (fused->n_inputs > 2)
        {
          g_free (fused->inputs[2]);
          fused->inputs[2] = g_strdup (vector);
        }
      else
        owb_node_add_input (fused, vector);
      g_free (fused->outputs[0]);
      fused->outputs[0] = g_strdup (add->outputs[0]);
    }
  else
    {
      fused = owb_node_new ("FusedMatMul", OWB_DOMAIN, mm->name);
      owb_node_add_input (fused, mm->inputs[0]);
      owb_node_add_input (fused, mm->inputs[1]);
      owb_node_add_input (fused, vector);
      owb_node_add_output (fused, add->outputs[0]);
    }
  _owb_pass_replace_pair (ctx, fused, mm, add);
  return TRUE;
}

static gboolean
try_fuse (OwbPassContext *ctx, OwbNode *add)
{
  if (add->n_inputs != 2 || add->n_outputs != 1 || strcmp (add->inputs[0], add->inputs[1]) == 0)
    return FALSE;
  for (int slot = 0; slot < 2; slot++)
    {
      OwbNode *mm = owb_pass_producer (ctx, add->inputs[slot]);
      gboolean ours = owb_pass_is_our_op (mm, "FusedMatMul");
      if (!owb_pass_is_op (mm, "MatMul") && !ours)
        continue;
      /* A FusedMatMul takes one bias, applied before its activation. */
      if (mm->n_inputs < 2 || mm->n_outputs != 1
          || (ours && ((mm->n_inputs > 2 && mm->inputs[2][0]) || owb_node_get_attribute (mm, "activation"))))
        continue;
      guint uses = owb_pass_n_uses (ctx, mm->outputs[0]);
      if (uses != 1)
        {
          owb_pass_near_miss (ctx, add, "follows MatMul '%s', whose output is also read by %u other node(s) or is a "
                               "graph output; kept", owb_pass_label (mm), uses - 1);
          continue;
        }
      if (fuse (ctx, add, mm, add->inputs[1 - slot]))
        return TRUE;
    }
  return FALSE;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  static const char *const ops[] = { "Add", NULL };
  /* A fusion removes the Add at hand and one MatMul, never another candidate. */
  _owb_pass_fuse_each_and_prune (ctx, ops, try_fuse);
  return TRUE;
}

const OwbPass _owb_pass_fuse_matmul_add = {
  "fuse_matmul_add",
  OWB_OPTIMIZE_EXTENDED,
  "turns MatMul + Add of a bias into Gemm (2-D) or FusedMatMul with a bias",
  run,
};
