/* pass-fold-dequantized-weights.c: a DequantizeLinear of a constant weight whose readers have no
 * integer kernel (Conv, ConvTranspose, Gemm, LSTM: nothing fuses them yet) becomes the float
 * constant it computes, so that those ops pack their weights once and take their fast paths
 * instead of dequantizing every run into a weight they cannot pack (a QDQ ResNet-18 ran 10x slower
 * than its float model). Weights read by a MatMul stay quantized for fuse_qdq_matmul. It runs at
 * the layout level, before layout_nhwc, which then finds constant convolution weights. */
#include "owb-optimizer-private.h"

#include <string.h>

/* Readers that an integer fusion may still want to see a DequantizeLinear in front of. */
static gboolean
fusion_wants_it (const OwbNode *reader)
{
  return owb_pass_is_op (reader, "MatMul") || owb_pass_is_op (reader, "QuantizeLinear");
}

static OwbTensor *
dequantize (const OwbTensor *q, const OwbTensor *scale, const OwbTensor *zp, int axis, GError **error)
{
  if (q->kind != OWB_VALUE_TENSOR || scale->dtype != OWB_TYPE_FLOAT || (zp && zp->dtype != q->dtype))
    return NULL;
  switch (q->dtype)
    {
    case OWB_TYPE_INT8: case OWB_TYPE_UINT8: case OWB_TYPE_INT16: case OWB_TYPE_UINT16: case OWB_TYPE_INT32:
      break;
    default:
      return NULL;
    }
  int64_t channels = scale->nelems, inner = 1;
  if (channels > 1)
    {
      if (scale->rank != 1 || q->rank == 0)
        return NULL;
      if (axis < 0)
        axis += q->rank;
      if (axis < 0 || axis >= q->rank || q->dims[axis] != channels)
        return NULL;
      for (int d = axis + 1; d < q->rank; d++)
        inner *= q->dims[d];
    }
  if (zp && zp->nelems != channels)
    return NULL;
  OwbTensor *out = owb_tensor_new (OWB_TYPE_FLOAT, q->rank, q->dims, error);
  if (!out)
    return NULL;
  float *y = out->data;
  const float *s = scale->data;
  for (int64_t i = 0; i < q->nelems; i++)
    {
      int64_t c = channels > 1 ? (i / inner) % channels : 0;
      double z = zp ? owb_tensor_get_double (zp, c) : 0;
      /* as the DequantizeLinear kernel: (x - zero point) * scale in float */
      y[i] = (float) (owb_tensor_get_double (q, i) - z) * s[c];
    }
  return out;
}

static gboolean
fold_dequantized_weights (OwbPassContext *ctx, GError **error)
{
  GPtrArray *graph_nodes = owb_pass_nodes (ctx);
  g_autoptr (GPtrArray) nodes = g_ptr_array_sized_new (graph_nodes->len);
  for (guint i = 0; i < graph_nodes->len; i++)
    g_ptr_array_add (nodes, g_ptr_array_index (graph_nodes, i));
  gboolean folded = FALSE;
  for (guint i = 0; i < nodes->len; i++)
    {
      OwbNode *dq = g_ptr_array_index (nodes, i);
      if (!owb_pass_is_op (dq, "DequantizeLinear") || dq->n_outputs != 1 || !dq->outputs[0][0]
          || owb_node_get_int (dq, "block_size", 0) != 0)
        continue;
      const OwbTensor *q = owb_pass_get_constant (ctx, owb_node_get_input (dq, 0));
      const OwbTensor *scale = owb_pass_get_constant (ctx, owb_node_get_input (dq, 1));
      const char *zp_name = owb_node_get_input (dq, 2);
      const OwbTensor *zp = zp_name ? owb_pass_get_constant (ctx, zp_name) : NULL;
      if (!q || !scale || (zp_name && !zp))
        continue;
      const char *out = dq->outputs[0];
      if (owb_pass_is_graph_output (ctx, out))
        continue;
      GPtrArray *readers = owb_pass_consumers (ctx, out);
      if (readers->len == 0)
        continue;
      gboolean keep = FALSE;
      for (guint r = 0; r < readers->len; r++)
        keep |= fusion_wants_it (g_ptr_array_index (readers, r));
      if (keep)
        continue;
      OwbTensor *weight = dequantize (q, scale, zp, (int) owb_node_get_int (dq, "axis", 1), error);
      if (!weight)
        {
          if (error && *error)
            return FALSE;
          owb_pass_near_miss (ctx, dq, "its parameters are not ones this pass folds (types, axis); kept");
          continue;
        }
      g_autofree char *out_name = g_strdup (out);
      const char *name = owb_pass_add_initializer (ctx, out_name, weight);
      g_autofree char *name_copy = g_strdup (name);
      owb_pass_remove_node (ctx, dq);
      owb_pass_replace_uses (ctx, out_name, name_copy);
      folded = TRUE;
    }
  if (folded)
    owb_pass_prune_initializers (ctx);
  return TRUE;
}

const OwbPass _owb_pass_fold_dequantized_weights = {
  "fold_dequantized_weights",
  /* Layout, like the other rewrites for this engine's kernels: an `owb optimize -O extended`
   * export keeps its int8 weights. */
  OWB_OPTIMIZE_LAYOUT,
  "turns DequantizeLinear of a constant weight read by ops without integer kernels (Conv, Gemm) into a "
  "float constant they can pack",
  fold_dequantized_weights,
};
