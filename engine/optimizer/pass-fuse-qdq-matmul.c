/* pass-fuse-qdq-matmul.c: DequantizeLinear (8-bit activation) and DequantizeLinear (constant 8-bit
 * weight) -> MatMul -> QuantizeLinear becomes one QLinearMatMul, which the CPU runs on its integer
 * GEMM with the weight packed once. Fires only where the activation and the output are quantized
 * per tensor with constant parameters and the weight is a constant [K, N], per tensor or per
 * column; anything else is left as it is, with a near miss. */
#include "owb-optimizer-private.h"

#include <string.h>

static gboolean
try_fuse (OwbPassContext *ctx, OwbNode *mm)
{
  if (mm->n_inputs != 2 || mm->n_outputs != 1)
    return FALSE;
  OwbPassDq x, w;
  const char *why;
  if (!_owb_pass_match_dq_input (ctx, mm->inputs[0], FALSE, 2, 1, NULL, NULL, &x, &why))
    {
      if (why)
        owb_pass_near_miss (ctx, mm, "its input A's DequantizeLinear '%s' %s; kept", owb_pass_label (owb_pass_producer (ctx, mm->inputs[0])), why);
      return FALSE;
    }
  /* B: a constant [K, N], per tensor or per column */
  if (!_owb_pass_match_dq_input (ctx, mm->inputs[1], TRUE, 2, 1, "dequantizes a weight that is not a constant matrix",
                                 "quantizes the weight along an axis other than its columns", &w, &why))
    {
      if (why)
        owb_pass_near_miss (ctx, mm, "its input B's DequantizeLinear '%s' %s; kept", owb_pass_label (owb_pass_producer (ctx, mm->inputs[1])), why);
      else
        owb_pass_near_miss (ctx, mm, "reads a dequantized activation but B is not dequantized; kept");
      return FALSE;
    }
  /* the MatMul's only reader: a per-tensor QuantizeLinear to 8 bits with constant parameters */
  GPtrArray *readers = owb_pass_consumers (ctx, mm->outputs[0]);
  OwbNode *q = readers->len == 1 ? g_ptr_array_index (readers, 0) : NULL;
  if (owb_pass_n_uses (ctx, mm->outputs[0]) != 1 || !owb_pass_is_op (q, "QuantizeLinear") || q->n_inputs < 2
      || strcmp (q->inputs[0], mm->outputs[0]) != 0)
    {
      owb_pass_near_miss (ctx, mm, "has dequantized inputs but its output is not read by one QuantizeLinear only; kept");
      return FALSE;
    }
  OwbPassQ y;
  if (!_owb_pass_match_final_q (ctx, mm, q, &y))
    return FALSE;
  if (owb_pass_opset (ctx) < 10)
    return FALSE;

  const char *label = owb_pass_label (mm);
  const char *inputs[8];
  _owb_pass_qlinear_inputs (ctx, label, &x, &w, &y, inputs);
  /* under the MatMul's name (free again once it is removed), so its scope is kept */
  OwbNode *fused = owb_node_new ("QLinearMatMul", "", mm->name && mm->name[0] ? mm->name : NULL);
  for (int i = 0; i < 8; i++)
    owb_node_add_input (fused, inputs[i]);
  owb_node_add_output (fused, q->outputs[0]);
  /* the DequantizeLinears go too where this MatMul was their only reader */
  gboolean drop_x = owb_pass_n_uses (ctx, mm->inputs[0]) == 1, drop_w = owb_pass_n_uses (ctx, mm->inputs[1]) == 1;
  if (strcmp (mm->inputs[0], mm->inputs[1]) == 0)
    drop_x = drop_w = FALSE;
  OwbNode *const chain[] = { mm, q }, *const dropped[] = { drop_x ? x.node : NULL, drop_w ? w.node : NULL };
  _owb_pass_replace_qdq (ctx, &fused, 1, chain, G_N_ELEMENTS (chain), dropped, G_N_ELEMENTS (dropped));
  return TRUE;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  (void) error;
  /* A fusion removes its MatMul and nodes no other candidate is (DequantizeLinear, QuantizeLinear). */
  static const char *const ops[] = { "MatMul", NULL };
  _owb_pass_fuse_each_and_prune (ctx, ops, try_fuse);
  return TRUE;
}

const OwbPass _owb_pass_fuse_qdq_matmul = {
  "fuse_qdq_matmul",
  OWB_OPTIMIZE_EXTENDED,
  "turns DequantizeLinear (8-bit activation, constant 8-bit weight) -> MatMul -> QuantizeLinear into QLinearMatMul",
  run,
};
