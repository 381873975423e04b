/* pass-fuse-pointwise-depthwise.c: an NhwcConv 1x1 (the expansion of a mobile network's inverted
 * residual block) whose only reader is a depthwise NhwcConv becomes one NhwcPointwiseDepthwise, which
 * computes the expanded rows a few at a time for the depthwise kernel instead of writing the whole
 * expanded tensor and reading it back. Only where that tensor outgrows L2 (the early, large images):
 * smaller ones already stay in cache between the two kernels. */
#include "owb-optimizer-private.h"

#include <string.h>

/* The expanded tensor's size from which the two convolutions are fused, and the image width below
 * which they are not (each pointwise row is a GEMM of that many rows). mobilenet_v3_large at one
 * thread, its 112x112x64 expansion: 1x1 and depthwise 0.64 + 0.43 ms apart. */
#define MIN_EXPANDED_BYTES (512 * 1024)
#define MIN_WIDTH 16


/* Whether the ints attribute `name` is absent or has every entry equal to v. */
static gboolean
ints_all (const OwbNode *node, const char *name, int64_t v)
{
  int n = 0;
  const int64_t *x = owb_node_get_ints (node, name, &n);
  for (int i = 0; i < n; i++)
    if (x[i] != v)
      return FALSE;
  return TRUE;
}

/* A constant float weight of rank 4, or NULL. */
static const OwbTensor *
weight (OwbPassContext *ctx, const OwbNode *node)
{
  const char *name = owb_node_get_input (node, 1);
  const OwbTensor *w = name ? owb_pass_get_constant (ctx, name) : NULL;
  return w && w->dtype == OWB_TYPE_FLOAT && w->rank == 4 ? w : NULL;
}

/* Neither a residual input nor an NCHW input: what NhwcPointwiseDepthwise has no place for. */
static gboolean
plain (const OwbNode *node)
{
  return node->n_outputs == 1 && !owb_node_get_input (node, 3) && owb_node_get_int (node, "nchw_input", 0) == 0;
}

/* Fuses dw with its producer when they fit; returns the producer it removed, or NULL. */
static OwbNode *
try_fuse (OwbPassContext *ctx, OwbNode *dw)
{
  const OwbTensor *w2 = weight (ctx, dw);
  int nk = 0;
  owb_node_get_ints (dw, "kernel_shape", &nk);
  if (!plain (dw) || !w2 || w2->dims[2] != 1 || owb_node_get_int (dw, "group", 1) != w2->dims[3] || nk != 2)
    return NULL;
  int nd = 0;
  const int64_t *dil = owb_node_get_ints (dw, "dilations", &nd);
  if (dil && nd > 0 && dil[0] != 1)
    return NULL;
  OwbNode *pw = owb_pass_producer (ctx, dw->inputs[0]);
  const OwbTensor *w1 = pw && owb_pass_is_our_op (pw, "NhwcConv") ? weight (ctx, pw) : NULL;
  if (!w1 || !plain (pw) || w1->dims[0] != 1 || w1->dims[1] != 1 || w1->dims[3] != w2->dims[3]
      || owb_node_get_int (pw, "group", 1) != 1 || !ints_all (pw, "strides", 1) || !ints_all (pw, "pads", 0)
      || !ints_all (pw, "dilations", 1))
    return NULL;
  const char *auto_pad = owb_node_get_string (pw, "auto_pad", "NOTSET");
  if (strcmp (auto_pad, "NOTSET") != 0 && strcmp (auto_pad, "VALID") != 0)
    return NULL;
  const OwbValueType *t = owb_pass_value_type (ctx, pw->outputs[0]);
  if (!t || t->rank != 4 || !owb_value_type_is_fully_known (t))
    return NULL;
  int64_t bytes = (int64_t) sizeof (float);
  for (int i = 0; i < 4; i++)
    bytes *= t->dims[i].value;
  if (bytes < MIN_EXPANDED_BYTES || t->dims[2].value < MIN_WIDTH)
    {
      owb_pass_near_miss (ctx, dw, "kept apart from its pointwise producer '%s': the expanded tensor (%" G_GINT64_FORMAT
                           " KiB, %" G_GINT64_FORMAT " wide) stays in cache between them",
                           owb_pass_label (pw), bytes / 1024, t->dims[2].value);
      return NULL;
    }
  if (owb_pass_n_uses (ctx, pw->outputs[0]) != 1 || owb_pass_is_graph_output (ctx, pw->outputs[0]))
    {
      owb_pass_near_miss (ctx, dw, "kept apart from its pointwise producer '%s', whose output is read elsewhere too",
                           owb_pass_label (pw));
      return NULL;
    }

  /* the depthwise node's attributes, the pointwise one's activation renamed */
  OwbNode *fused = owb_node_dup (dw);
  owb_node_clear_claims (fused);
  g_free (fused->op_type);
  fused->op_type = g_strdup ("NhwcPointwiseDepthwise"); /* under the depthwise node's name */
  const char *b1 = owb_node_get_input (pw, 2), *b2 = owb_node_get_input (dw, 2);
  const char *ins[5] = { pw->inputs[0], pw->inputs[1], b1 ? b1 : "", dw->inputs[1], b2 ? b2 : "" };
  for (int i = 0; i < fused->n_inputs; i++)
    g_free (fused->inputs[i]);
  g_free (fused->inputs);
  fused->inputs = NULL;
  fused->n_inputs = 0;
  for (int i = 0; i < (b2 ? 5 : 4); i++)
    owb_node_add_input (fused, ins[i]);
  const char *act = owb_node_get_string (pw, "activation", NULL);
  if (act)
    {
      int n = 0;
      const float *params = owb_node_get_floats (pw, "activation_params", &n);
      owb_pass_set_activation (fused, "pointwise_activation", "pointwise_activation_params", act, params,
                                params ? n : 0);
    }
  const char *from[2] = { owb_pass_label (pw), owb_pass_label (dw) };
  owb_pass_add_node (ctx, fused, from, 2);
  owb_pass_remove_node (ctx, dw);
  owb_pass_remove_node (ctx, pw);
  return pw;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  if (ctx->options->portable)
    return TRUE; /* the layout pass made no NhwcConv to fuse */
  GPtrArray *candidates = g_ptr_array_new ();
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    {
      OwbNode *node = g_ptr_array_index (owb_pass_nodes (ctx), i);
      if (owb_pass_is_our_op (node, "NhwcConv"))
        g_ptr_array_add (candidates, node);
    }
  /* A fusion removes the candidate at hand and its producer, which may be a later candidate (a
   * one-channel 1x1 convolution is depthwise too): removed ones are skipped (compared as
   * addresses only). */
  GHashTable *removed = g_hash_table_new (NULL, NULL);
  for (guint i = 0; i < candidates->len; i++)
    {
      OwbNode *node = g_ptr_array_index (candidates, i);
      if (g_hash_table_contains (removed, node))
        continue;
      OwbNode *pw = try_fuse (ctx, node);
      if (pw)
        g_hash_table_add (removed, pw);
    }
  g_hash_table_unref (removed);
  g_ptr_array_unref (candidates);
  return TRUE;
}

const OwbPass _owb_pass_fuse_pointwise_depthwise = {
  "fuse_pointwise_depthwise",
  OWB_OPTIMIZE_LAYOUT,
  "runs an NHWC 1x1 convolution and the depthwise convolution that reads it as one "
  "NhwcPointwiseDepthwise where the expanded tensor between them outgrows L2",
  run,
};
