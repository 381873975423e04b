/* pass-fuse-qconv-lookup.c: an NhwcQLinearConv whose only reader is a QLinearLookup (a quantized
 * HardSwish, SiLU, Sigmoid... that fuse_qdq_lookup made) takes the lookup's table as its Table
 * input: the kernel looks each requantized byte up while the strip it wrote is still in L1,
 * instead of a node of its own writing the whole tensor again. A QDQ EfficientNet-B1 has 92 such
 * pairs, a MobileNetV3-large 29. */
#include "owb-optimizer-private.h"

/* Fuses the lookup into its producer when they fit; the producer is then gone. */
static void
try_fuse (OwbPassContext *ctx, OwbNode *lookup)
{
  OwbNode *conv = owb_pass_producer (ctx, lookup->inputs[0]);
  if (!conv || !owb_pass_is_our_op (conv, "NhwcQLinearConv") || conv->n_outputs != 1 || lookup->n_inputs != 2
      || lookup->n_outputs != 1)
    return;
  if (conv->n_inputs > 9)
    {
      owb_pass_near_miss (ctx, lookup, "not fused into '%s', which already has a table", owb_pass_label (conv));
      return;
    }
  const OwbTensor *table = owb_pass_get_constant (ctx, lookup->inputs[1]);
  const OwbValueType *y = owb_pass_value_type (ctx, conv->outputs[0]);
  if (!table || table->nelems != 256 || !y || table->dtype != y->dtype)
    {
      owb_pass_near_miss (ctx, lookup,
                          "not fused into '%s': its table is not a constant of 256 values of the convolution's "
                          "output type",
                          owb_pass_label (conv));
      return;
    }
  if (owb_pass_n_uses (ctx, conv->outputs[0]) != 1 || owb_pass_is_graph_output (ctx, conv->outputs[0]))
    {
      owb_pass_near_miss (ctx, lookup, "not fused into '%s', whose output is read elsewhere too",
                          owb_pass_label (conv));
      return;
    }
  OwbNode *fused = owb_node_dup (conv);
  owb_node_clear_claims (fused);
  while (fused->n_inputs < 9)
    owb_node_add_input (fused, ""); /* no bias: Table is input 9 */
  owb_node_add_input (fused, lookup->inputs[1]);
  g_free (fused->outputs[0]);
  fused->outputs[0] = g_strdup (lookup->outputs[0]);
  const char *from[2] = { owb_pass_label (conv), owb_pass_label (lookup) };
  owb_pass_add_node (ctx, fused, from, 2);
  owb_pass_remove_node (ctx, lookup);
  owb_pass_remove_node (ctx, conv);
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  (void) error;
  if (ctx->options->portable)
    return TRUE; /* the layout pass made no NhwcQLinearConv */
  GPtrArray *lookups = g_ptr_array_new ();
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    {
      OwbNode *node = g_ptr_array_index (owb_pass_nodes (ctx), i);
      if (owb_pass_is_our_op (node, "QLinearLookup"))
        g_ptr_array_add (lookups, node);
    }
  /* a fusion removes the lookup at hand and its producer, never another lookup */
  for (guint i = 0; i < lookups->len; i++)
    try_fuse (ctx, g_ptr_array_index (lookups, i));
  g_ptr_array_unref (lookups);
  return TRUE;
}

const OwbPass _owb_pass_fuse_qconv_lookup = {
  "fuse_qconv_lookup",
  OWB_OPTIMIZE_LAYOUT,
  "folds a QLinearLookup (quantized HardSwish, SiLU, Sigmoid...) into the NhwcQLinearConv it reads "
  "as the convolution's output table",
  run,
};
