/* pass-fuse-transpose-matmul.c: folds a Transpose of the last two axes into the MatMul it feeds:
 * a Gemm with transA/transB when both operands are 2-D, else our FusedMatMul. */
#include "owb-optimizer-private.h"

#include <string.h>



static void
set_int (OwbNode *node, const char *name, int64_t value)
{
  owb_node_add_attribute (node, name, OWB_ATTR_INT)->i = value;
}

static gboolean
try_fuse (OwbPassContext *ctx, OwbNode *mm)
{
  gboolean ours = owb_pass_is_our_op (mm, "FusedMatMul");
  if (mm->n_inputs < 2 || mm->n_outputs != 1)
    return FALSE;
  const OwbValueType *out = owb_pass_value_type (ctx, mm->outputs[0]);
  if (!out || !_owb_pass_is_float_type (out->dtype))
    return FALSE;
  const char *names[2] = { mm->inputs[0], mm->inputs[1] };
  gboolean trans[2] = { ours && owb_node_get_int (mm, "transA", 0), ours && owb_node_get_int (mm, "transB", 0) };
  OwbNode *transposes[2] = { NULL, NULL };
  int ranks[2];
  for (int i = 0; i < 2; i++)
    {
      OwbNode *t = owb_pass_producer (ctx, mm->inputs[i]);
      ranks[i] = _owb_pass_rank_of (ctx, mm->inputs[i]);
      if (!owb_pass_is_op (t, "Transpose") || t->n_inputs != 1 || !owb_pass_swaps_last_two (t, ranks[i]))
        continue;
      if (owb_pass_n_uses (ctx, t->outputs[0]) != 1)
        {
          owb_pass_near_miss (ctx, mm, "its input %d comes from Transpose '%s', whose output is also read elsewhere; "
                               "kept", i, owb_pass_label (t));
          continue;
        }
      transposes[i] = t;
      names[i] = t->inputs[0];
      trans[i] = !trans[i];
    }
  if (!transposes[0] && !transposes[1])
    return FALSE;

  /* Gemm needs 2-D operands, and C optional (opset 11). */
  gboolean gemm = !ours && ranks[0] == 2 && ranks[1] == 2 && owb_pass_opset (ctx) >= 11;
  if (!gemm && ctx->options->portable)
    {
      if (ranks[0] == 2 && ranks[1] == 2 && !ours)
        owb_pass_near_miss (ctx, mm, "reads a Transpose: a Gemm without C needs opset 11 (model has %d), and "
                             "FusedMatMul is not a standard ONNX op; kept (portable)", owb_pass_opset (ctx));
      else
        owb_pass_near_miss (ctx, mm, "reads a Transpose of operands of ranks %d x %d, which only FusedMatMul takes in, "
                             "not a standard ONNX op; kept (portable)", ranks[0], ranks[1]);
      return FALSE;
    }
  OwbNode *fused;
  if (gemm)
    fused = owb_node_new ("Gemm", "", mm->name);
  else
    {
      owb_model_set_opset (ctx->model, OWB_DOMAIN, 1);
      fused = ours ? owb_node_dup (mm) : owb_node_new ("FusedMatMul", OWB_DOMAIN, mm->name);
      owb_node_clear_claims (fused);
    }
  if (ours)
    {
      for (int i = 0; i < 2; i++)
        {
          g_free (fused->inputs[i]);
          fused->inputs[i] = g_strdup (names[i]);
        }
    }
  else
    {
      owb_node_add_input (fused, names[0]);
      owb_node_add_input (fused, names[1]);
      owb_node_add_output (fused, mm->outputs[0]);
    }
  set_int (fused, "transA", trans[0]);
  set_int (fused, "transB", trans[1]);
  const char *from[3];
  guint n = 0;
  for (int i = 0; i < 2; i++)
    if (transposes[i])
      from[n++] = owb_pass_label (transposes[i]);
  from[n++] = owb_pass_label (mm);
  owb_pass_add_node (ctx, fused, from, n);
  owb_pass_remove_node (ctx, mm);
  for (int i = 0; i < 2; i++)
    if (transposes[i])
      owb_pass_remove_node (ctx, transposes[i]);
  return TRUE;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  static const char *const ops[] = { "MatMul", NULL };
  static const char *const our_ops[] = { "FusedMatMul", NULL };
  /* A fusion removes the MatMul at hand and Transposes, never another candidate. */
  _owb_pass_fuse_each (ctx, ops, our_ops, try_fuse);
  return TRUE;
}

const OwbPass _owb_pass_fuse_transpose_matmul = {
  "fuse_transpose_matmul",
  OWB_OPTIMIZE_EXTENDED,
  "folds a Transpose of the last two axes into the MatMul it feeds (Gemm when 2-D, else FusedMatMul)",
  run,
};
