/* pass-fuse-dynamic-quant-matmul.c: what onnxruntime's quantize_dynamic writes for a MatMul with
 * a constant weight,
 *   DynamicQuantizeLinear (A) -> (A_q, a_scale, a_zero_point)
 *   MatMulInteger (A_q, W_q, a_zero_point, w_zero_point) -> Cast (to float) -> Mul (s) [-> Add (bias)]
 *   with s = Mul (a_scale, w_scale),
 * becomes one DynamicQuantizeMatMul (A, W_q, w_scale, w_zero_point, bias) of the engine's domain,
 * which quantizes A, runs the integer GEMM on W_q packed once and applies the scale and bias in its
 * epilogue, each step rounded as the unfused float32 ops round: the outputs are equal to the bit.
 * The weight must be a constant [K, N] with w_scale and w_zero_point constants of one value or one
 * per column; anything else is left as it is, with a near miss. */
#include "owb-optimizer-private.h"

#include <string.h>

/* One value, or N of them along a single axis (what broadcasts over the columns of [..., N]
 * without growing it). */
static gboolean
per_column (const OwbTensor *t, int64_t N)
{
  return t->nelems == 1 ? t->rank <= 1 : t->rank == 1 && t->dims[0] == N;
}

static gboolean
try_fuse (OwbPassContext *ctx, OwbNode *mm)
{
  if (mm->n_inputs < 2 || mm->n_outputs != 1)
    return FALSE;
  /* A from a DynamicQuantizeLinear, with that node's zero point */
  OwbNode *dql = owb_pass_producer (ctx, mm->inputs[0]);
  if (!owb_pass_is_op (dql, "DynamicQuantizeLinear") || dql->n_outputs != 3 || strcmp (dql->outputs[0], mm->inputs[0]) != 0)
    return FALSE; /* not what quantize_dynamic writes: no near miss to report */
  if (mm->n_inputs < 3 || strcmp (mm->inputs[2], dql->outputs[2]) != 0)
    {
      owb_pass_near_miss (ctx, mm, "reads DynamicQuantizeLinear '%s' without its zero point; kept", owb_pass_label (dql));
      return FALSE;
    }
  /* the weight: a constant 8-bit [K, N] with constant zero points, one or one per column */
  const OwbTensor *w = owb_pass_get_constant (ctx, mm->inputs[1]);
  if (!w || w->rank != 2 || !_owb_pass_is_8bit (w->dtype))
    {
      owb_pass_near_miss (ctx, mm, "its B is not a constant int8 or uint8 matrix; kept");
      return FALSE;
    }
  int64_t N = w->dims[1];
  const char *wzp = mm->n_inputs > 3 && mm->inputs[3][0] ? mm->inputs[3] : NULL;
  const OwbTensor *wz = wzp ? owb_pass_get_constant (ctx, wzp) : NULL;
  if (wzp && (!wz || wz->dtype != w->dtype || !per_column (wz, N)))
    {
      owb_pass_near_miss (ctx, mm, "its b_zero_point is not a constant of B's type with one value or one per column; kept");
      return FALSE;
    }
  /* -> Cast (to float) -> Mul (by a_scale w_scale) */
  OwbNode *cast = _owb_pass_only_reader (ctx, mm->outputs[0]);
  if (!owb_pass_is_op (cast, "Cast") || owb_node_get_int (cast, "to", 0) != OWB_TYPE_FLOAT || cast->n_outputs != 1)
    {
      owb_pass_near_miss (ctx, mm, "its int32 output is not read by one Cast to float only; kept");
      return FALSE;
    }
  OwbNode *mul = _owb_pass_only_reader (ctx, cast->outputs[0]);
  if (!owb_pass_is_op (mul, "Mul") || mul->n_outputs != 1)
    {
      owb_pass_near_miss (ctx, mm, "the output of its Cast '%s' is not read by one Mul only; kept", owb_pass_label (cast));
      return FALSE;
    }
  const char *s = _owb_pass_other_input (mul, cast->outputs[0]);
  OwbNode *smul = s ? owb_pass_producer (ctx, s) : NULL;
  const char *ws = smul && owb_pass_is_op (smul, "Mul") ? _owb_pass_other_input (smul, dql->outputs[1]) : NULL;
  const OwbTensor *wst = ws ? owb_pass_get_constant (ctx, ws) : NULL;
  if (!wst || wst->dtype != OWB_TYPE_FLOAT || !per_column (wst, N))
    {
      owb_pass_near_miss (ctx, mm, "its Cast '%s' is not scaled by one Mul with DynamicQuantizeLinear's scale times a "
                          "float32 constant of one value or one per column; kept", owb_pass_label (cast));
      return FALSE;
    }
  /* [-> Add (a float32 bias per column)] */
  OwbNode *add = _owb_pass_only_reader (ctx, mul->outputs[0]);
  const char *bias = add && owb_pass_is_op (add, "Add") && add->n_outputs == 1
                       ? _owb_pass_other_input (add, mul->outputs[0])
                       : NULL;
  const OwbTensor *bt = bias ? owb_pass_get_constant (ctx, bias) : NULL;
  if (!bt || bt->dtype != OWB_TYPE_FLOAT || !per_column (bt, N))
    {
      /* (an Add of another value, a residual, is simply not a bias) */
      if (bias && bt)
        owb_pass_near_miss (ctx, mm, "its Add '%s' does not add a float32 constant per column; the bias stays a "
                            "separate Add", owb_pass_label (add));
      add = NULL, bias = NULL;
    }
  OwbNode *last = add ? add : mul;

  owb_model_set_opset (ctx->model, OWB_DOMAIN, 1);
  /* under the MatMulInteger's name (free again once it is removed), so its scope is kept */
  OwbNode *fused = owb_node_new ("DynamicQuantizeMatMul", OWB_DOMAIN, mm->name && mm->name[0] ? mm->name : NULL);
  const char *inputs[5] = { dql->inputs[0], mm->inputs[1], ws, wzp ? wzp : "", bias ? bias : "" };
  int n_in = bias ? 5 : wzp ? 4 : 3;
  for (int i = 0; i < n_in; i++)
    owb_node_add_input (fused, inputs[i]);
  owb_node_add_output (fused, last->outputs[0]);
  /* the DynamicQuantizeLinear and the scale's Mul go too where nothing else reads them */
  const char *from[6];
  guint n_from = 0;
  from[n_from++] = owb_pass_label (dql);
  from[n_from++] = owb_pass_label (smul);
  from[n_from++] = owb_pass_label (mm);
  from[n_from++] = owb_pass_label (cast);
  from[n_from++] = owb_pass_label (mul);
  if (add)
    from[n_from++] = owb_pass_label (add);
  owb_pass_add_node (ctx, fused, from, n_from);
  if (add)
    owb_pass_remove_node (ctx, add);
  owb_pass_remove_node (ctx, mul);
  owb_pass_remove_node (ctx, cast);
  owb_pass_remove_node (ctx, mm);
  if (owb_pass_n_uses (ctx, smul->outputs[0]) == 0)
    owb_pass_remove_node (ctx, smul);
  gboolean dql_used = FALSE;
  for (int i = 0; i < dql->n_outputs; i++)
    dql_used = dql_used || (dql->outputs[i][0] && owb_pass_n_uses (ctx, dql->outputs[i]) > 0);
  if (!dql_used)
    owb_pass_remove_node (ctx, dql);
  return TRUE;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  (void) error;
  /* A fusion removes its MatMulInteger and nodes no other candidate is; a DynamicQuantizeLinear
   * or scale Mul shared by several goes with the last. */
  static const char *const ops[] = { "MatMulInteger", NULL };
  _owb_pass_fuse_each (ctx, ops, NULL, try_fuse);
  return TRUE;
}

const OwbPass _owb_pass_fuse_dynamic_quant_matmul = {
  "fuse_dynamic_quant_matmul",
  OWB_OPTIMIZE_EXTENDED,
  "turns DynamicQuantizeLinear -> MatMulInteger (constant 8-bit weight) -> Cast -> Mul (scale) [-> Add (bias)] into "
  "DynamicQuantizeMatMul",
  run,
};
