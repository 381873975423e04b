/* pass-fold-dequantized-weights.c: a DequantizeLinear of a constant weight whose readers have no
 * integer kernel (ConvTranspose, Gemm, LSTM, and the Convs fuse_qdq_conv left, e.g. those followed
 * by an activation QLinearConv cannot clamp to) becomes the float
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
      /* The DequantizeLinear kernel computes it, as the session would at run time. */
      OwbTensor *values[1] = { NULL };
      g_autoptr (GError) local = NULL;
      if (!ctx->options->providers || !_owb_pass_evaluate_node (ctx, dq, values, &local))
        {
          owb_pass_near_miss (ctx, dq, "could not be evaluated (%s); kept",
                              local ? local->message : "no provider to evaluate with");
          continue;
        }
      OwbTensor *weight = owb_tensor_dup (values[0]); /* compact: a kernel output may sit in a larger buffer */
      owb_tensor_unref (values[0]);
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
