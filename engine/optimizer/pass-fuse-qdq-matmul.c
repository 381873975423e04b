/* pass-fuse-qdq-matmul.c: DequantizeLinear (8-bit activation) and DequantizeLinear (constant 8-bit
 * weight) -> MatMul -> QuantizeLinear becomes one QLinearMatMul, which the CPU runs on its integer
 * GEMM with the weight packed once. Fires only where the activation and the output are quantized
 * per tensor with constant parameters and the weight is a constant [K, N], per tensor or per
 * column; anything else is left as it is, with a near miss. */
#include "owb-optimizer-private.h"

#include <string.h>

/* The DequantizeLinear writing `name`, per tensor (weight FALSE) or a constant [K, N] weight per
 * tensor or per column (weight TRUE), with constant float32 scale and zero point. NULL *why when
 * `name` is no DequantizeLinear at all (no near miss to record). */
static gboolean
match_dq (OwbPassContext *ctx, const char *name, gboolean weight, OwbPassDq *dq, const char **why)
{
  if (!_owb_pass_match_dq (ctx, name, dq, why))
    return FALSE;
  OwbNode *node = dq->node;
  const OwbTensor *s = dq->scale_tensor;
  if (!weight)
    return s->nelems == 1 ? TRUE : (*why = "quantizes the activation per channel", FALSE);
  const OwbTensor *w = owb_pass_get_constant (ctx, dq->q);
  if (!w || w->rank != 2)
    return *why = "dequantizes a weight that is not a constant matrix", FALSE;
  if (s->nelems == 1)
    return TRUE;
  int64_t axis = owb_node_get_int (node, "axis", 1);
  if (s->rank != 1 || s->nelems != w->dims[1] || (axis != 1 && axis != -1))
    return *why = "quantizes the weight along an axis other than its columns", FALSE;
  return TRUE;
}

static gboolean
try_fuse (OwbPassContext *ctx, OwbNode *mm)
{
  if (mm->n_inputs != 2 || mm->n_outputs != 1)
    return FALSE;
  OwbPassDq x, w;
  const char *why;
  if (!match_dq (ctx, mm->inputs[0], FALSE, &x, &why))
    {
      if (why)
        owb_pass_near_miss (ctx, mm, "its input A's DequantizeLinear '%s' %s; kept", owb_pass_label (owb_pass_producer (ctx, mm->inputs[0])), why);
      return FALSE;
    }
  if (!match_dq (ctx, mm->inputs[1], TRUE, &w, &why))
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
  const OwbTensor *ys = owb_pass_get_constant (ctx, q->inputs[1]);
  const char *yzp_name = q->n_inputs > 2 && q->inputs[2][0] ? q->inputs[2] : NULL;
  const OwbTensor *yzp = yzp_name ? owb_pass_get_constant (ctx, yzp_name) : NULL;
  int64_t output_dtype = owb_node_get_int (q, "output_dtype", 0);
  OwbDataType ytype = yzp ? yzp->dtype : (output_dtype ? (OwbDataType) output_dtype : OWB_TYPE_UINT8);
  if (!ys || ys->dtype != OWB_TYPE_FLOAT || ys->nelems != 1 || (yzp_name && (!yzp || yzp->nelems != 1))
      || !_owb_pass_is_8bit (ytype) || owb_node_get_int (q, "block_size", 0) != 0 || owb_node_get_int (q, "precision", 0) != 0)
    {
      owb_pass_near_miss (ctx, mm, "its QuantizeLinear '%s' is not per tensor to int8 or uint8 with constant float32 "
                          "parameters; kept", owb_pass_label (q));
      return FALSE;
    }
  if (owb_pass_opset (ctx) < 10)
    return FALSE;

  const char *label = owb_pass_label (mm);
  const char *xzp = x.zp ? x.zp : _owb_pass_add_zero_point (ctx, label, x.scale, x.qtype);
  const char *wzp = w.zp ? w.zp : _owb_pass_add_zero_point (ctx, label, w.scale, w.qtype);
  const char *yz = yzp_name ? yzp_name : _owb_pass_add_zero_point (ctx, label, q->inputs[1], ytype);
  /* under the MatMul's name (free again once it is removed), so its scope is kept */
  OwbNode *fused = owb_node_new ("QLinearMatMul", "", mm->name && mm->name[0] ? mm->name : NULL);
  const char *inputs[8] = { x.q, x.scale, xzp, w.q, w.scale, wzp, q->inputs[1], yz };
  for (int i = 0; i < 8; i++)
    owb_node_add_input (fused, inputs[i]);
  owb_node_add_output (fused, q->outputs[0]);
  /* the DequantizeLinears go too where this MatMul was their only reader */
  gboolean drop_x = owb_pass_n_uses (ctx, mm->inputs[0]) == 1, drop_w = owb_pass_n_uses (ctx, mm->inputs[1]) == 1;
  if (strcmp (mm->inputs[0], mm->inputs[1]) == 0)
    drop_x = drop_w = FALSE;
  const char *from[4];
  guint n_from = 0;
  if (drop_x)
    from[n_from++] = owb_pass_label (x.node);
  if (drop_w)
    from[n_from++] = owb_pass_label (w.node);
  from[n_from++] = label;
  from[n_from++] = owb_pass_label (q);
  owb_pass_add_node (ctx, fused, from, n_from);
  owb_pass_remove_node (ctx, q);
  owb_pass_remove_node (ctx, mm);
  if (drop_x)
    owb_pass_remove_node (ctx, x.node);
  if (drop_w)
    owb_pass_remove_node (ctx, w.node);
  return TRUE;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  (void) error;
  GPtrArray *candidates = g_ptr_array_new ();
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    {
      OwbNode *node = g_ptr_array_index (owb_pass_nodes (ctx), i);
      if (owb_pass_is_op (node, "MatMul"))
        g_ptr_array_add (candidates, node);
    }
  /* A fusion removes its MatMul and nodes no other candidate is (DequantizeLinear, QuantizeLinear). */
  guint fused = 0;
  for (guint i = 0; i < candidates->len; i++)
    fused += try_fuse (ctx, g_ptr_array_index (candidates, i));
  g_ptr_array_unref (candidates);
  if (fused)
    owb_pass_prune_initializers (ctx);
  return TRUE;
}

const OwbPass _owb_pass_fuse_qdq_matmul = {
  "fuse_qdq_matmul",
  OWB_OPTIMIZE_EXTENDED,
  "turns DequantizeLinear (8-bit activation, constant 8-bit weight) -> MatMul -> QuantizeLinear into QLinearMatMul",
  run,
};
