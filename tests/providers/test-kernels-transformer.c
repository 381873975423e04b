/* test-kernels-transformer.c: Attention, RotaryEmbedding, RMSNormalization, Swish, SwiGLU, TensorScatter,
 * CausalConvWithState, LinearAttention and FlexAttention: inference with symbolic dims, refused attributes,
 * data errors, and shapes the conformance cases miss (long query blocks, empty key sets, 3-D caches). */
#include <math.h>
#include <string.h>

#include <owb/owb.h>
#include "../engine/test-util.h"
#include "kernel-test-util.h"

/* ---- builders --------------------------------------------------------------------------------- */

/* Deterministic, irregular values. */
static OwbTensor *
wave (OwbDataType dtype, int rank, const int64_t *dims, int k)
{
  OwbTensor *t = tensor (dtype, rank, dims, NULL);
  for (int64_t i = 0; i < t->nelems; i++)
    owb_tensor_set_double (t, i, sin (i * 0.37 + k) * 1.5);
  return t;
}

static const char *const in_names[] = { "i0", "i1", "i2", "i3", "i4", "i5", "i6" };
static const char *const out_names[] = { "o0", "o1", "o2", "o3" };

/* Runs a one-node model (takes the node). inputs: n_inputs slots, NULL for a missing optional one.
 * want: which of the n_outputs outputs are named (NULL: all); those are fetched into outputs[i]. */
static gboolean
run_node (OwbNode *node, int opset, int n_inputs, OwbTensor **inputs, int n_outputs, const gboolean *want,
          OwbTensor **outputs, GError **error)
{
  return run_wired_node (node, opset, in_names, n_inputs, inputs, 0, out_names, n_outputs, want, outputs, error);
}

static void
assert_close (const OwbTensor *t, const double *expected, int64_t n, double tol)
{
  g_assert_cmpint (t->nelems, ==, n);
  for (int64_t i = 0; i < n; i++)
    {
      double v = owb_tensor_get_double (t, i);
      if (!(fabs (v - expected[i]) <= tol * (1 + fabs (expected[i]))))
        g_error ("element %" G_GINT64_FORMAT ": got %.9g, expected %.9g", i, v, expected[i]);
    }
}

static void
unref_all (OwbTensor **t, int n)
{
  for (int i = 0; i < n; i++)
    if (t[i])
      owb_tensor_unref (t[i]);
}

/* ---- inference -------------------------------------------------------------------------------- */

typedef struct {
  OwbNode *node;
  int n_inputs;
  OwbValueType types[7];
  OwbValueType outputs[4];
} InferCase;

/* dims: >= 0 known, -1 unknown, -2 the named dim "batch". rank -1: unknown rank. Absent (NULL dims with
 * rank -3): a missing optional input. */
static void
infer_input (InferCase *c, OwbDataType dtype, int rank, const int64_t *dims)
{
  OwbValueType *t = &c->types[c->n_inputs];
  if (rank == -3)
    {
      owb_node_add_input (c->node, "");
      c->n_inputs++;
      t->kind = OWB_VALUE_UNKNOWN_KIND;
      return;
    }
  *t = batch_type (dtype, rank, dims);
  owb_node_add_input (c->node, in_names[c->n_inputs]);
  c->n_inputs++;
}

/* outputs: names (NULL entries are unused "" outputs). */
static gboolean
infer_outputs (InferCase *c, int opset, int n_outputs, const gboolean *want, GError **error)
{
  for (int i = 0; i < n_outputs; i++)
    owb_node_add_output (c->node, !want || want[i] ? out_names[i] : "");
  c->node->opset = opset;
  const OwbValueType *inputs[7];
  const OwbTensor *values[7] = { NULL };
  for (int i = 0; i < c->n_inputs; i++)
    inputs[i] = c->types[i].kind == OWB_VALUE_UNKNOWN_KIND && c->node->inputs[i][0] == '\0' ? NULL : &c->types[i];
  OwbInferContext ctx = { .node = c->node, .opset = opset, .n_inputs = c->n_inputs, .inputs = inputs,
                          .input_values = values, .n_outputs = n_outputs, .outputs = c->outputs };
  const OwbOpSchema *schema = owb_op_schema_lookup (c->node->domain, c->node->op_type, opset);
  if (!schema)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_UNSUPPORTED_OP, "no schema for %s at %d", c->node->op_type, opset);
      return FALSE;
    }
  return owb_op_infer (schema, &ctx, error);
}

static gboolean
infer (InferCase *c, int opset, int n_outputs, GError **error)
{
  return infer_outputs (c, opset, n_outputs, NULL, error);
}

#define ABSENT OWB_TYPE_UNDEFINED, -3, NULL

static void
test_infer_symbolic (void)
{
  g_autoptr (GError) error = NULL;
  {
    /* 4-D with a past cache: present length = past + new; the named batch passes through. */
    InferCase c = { owb_node_new ("Attention", "", "att") };
    infer_input (&c, OWB_TYPE_FLOAT, 4, (int64_t[]) { -2, 8, 5, 16 });
    infer_input (&c, OWB_TYPE_FLOAT, 4, (int64_t[]) { -2, 2, 5, 16 });
    infer_input (&c, OWB_TYPE_FLOAT, 4, (int64_t[]) { -2, 2, 5, 12 });
    infer_input (&c, ABSENT);
    infer_input (&c, OWB_TYPE_FLOAT, 4, (int64_t[]) { -2, 2, 7, 16 });
    infer_input (&c, OWB_TYPE_FLOAT, 4, (int64_t[]) { -2, 2, 7, 12 });
    g_assert_true (infer (&c, 23, 4, &error));
    assert_dims (&c.outputs[0], OWB_TYPE_FLOAT, 4, (int64_t[]) { -2, 8, 5, 12 });
    assert_dims (&c.outputs[1], OWB_TYPE_FLOAT, 4, (int64_t[]) { -2, 2, 12, 16 });
    assert_dims (&c.outputs[2], OWB_TYPE_FLOAT, 4, (int64_t[]) { -2, 2, 12, 12 });
    assert_dims (&c.outputs[3], OWB_TYPE_FLOAT, 4, (int64_t[]) { -2, 8, 5, 12 });
    owb_node_free (c.node);
  }
  {
    /* 3-D: hidden sizes split by the head attributes; an unknown past length leaves the total unknown. */
    InferCase c = { owb_node_new ("Attention", "", "att") };
    tu_set_int (c.node, "q_num_heads", 6);
    tu_set_int (c.node, "kv_num_heads", 2);
    infer_input (&c, OWB_TYPE_FLOAT16, 3, (int64_t[]) { -2, -1, 48 });
    infer_input (&c, OWB_TYPE_FLOAT16, 3, (int64_t[]) { -2, 3, 16 });
    infer_input (&c, OWB_TYPE_FLOAT16, 3, (int64_t[]) { -2, 3, 10 });
    infer_input (&c, ABSENT);
    infer_input (&c, OWB_TYPE_FLOAT16, 4, (int64_t[]) { -2, 2, -1, 8 });
    infer_input (&c, OWB_TYPE_FLOAT16, 4, (int64_t[]) { -2, 2, -1, 5 });
    g_assert_true (infer (&c, 24, 4, &error));
    assert_dims (&c.outputs[0], OWB_TYPE_FLOAT16, 3, (int64_t[]) { -2, -1, 30 });
    assert_dims (&c.outputs[1], OWB_TYPE_FLOAT16, 4, (int64_t[]) { -2, 2, -1, 8 });
    assert_dims (&c.outputs[3], OWB_TYPE_FLOAT16, 4, (int64_t[]) { -2, 6, -1, -1 });
    owb_node_free (c.node);
  }
  {
    InferCase c = { owb_node_new ("LinearAttention", "", "la") };
    tu_set_int (c.node, "q_num_heads", 4);
    tu_set_int (c.node, "kv_num_heads", 2);
    tu_set_string (c.node, "update_rule", "linear");
    infer_input (&c, OWB_TYPE_FLOAT, 3, (int64_t[]) { -2, -1, 32 });
    infer_input (&c, OWB_TYPE_FLOAT, 3, (int64_t[]) { -2, -1, 16 });
    infer_input (&c, OWB_TYPE_FLOAT, 3, (int64_t[]) { -2, -1, 6 });
    g_assert_true (infer (&c, 27, 2, &error));
    assert_dims (&c.outputs[0], OWB_TYPE_FLOAT, 3, (int64_t[]) { -2, -1, 12 });
    assert_dims (&c.outputs[1], OWB_TYPE_FLOAT, 4, (int64_t[]) { -2, 2, 8, 3 });
    owb_node_free (c.node);
  }
  {
    InferCase c = { owb_node_new ("CausalConvWithState", "", "cc") };
    infer_input (&c, OWB_TYPE_FLOAT, 3, (int64_t[]) { -2, 6, -1 });
    infer_input (&c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 6, 1, 4 });
    g_assert_true (infer (&c, 27, 2, &error));
    assert_dims (&c.outputs[0], OWB_TYPE_FLOAT, 3, (int64_t[]) { -2, 6, -1 });
    assert_dims (&c.outputs[1], OWB_TYPE_FLOAT, 3, (int64_t[]) { -2, 6, 3 });
    owb_node_free (c.node);
  }
  {
    InferCase c = { owb_node_new ("FlexAttention", "ai.onnx.preview", "flex") };
    infer_input (&c, OWB_TYPE_DOUBLE, 4, (int64_t[]) { -2, 4, -1, 8 });
    infer_input (&c, OWB_TYPE_DOUBLE, 4, (int64_t[]) { -2, 2, 9, 8 });
    infer_input (&c, OWB_TYPE_DOUBLE, 4, (int64_t[]) { -2, 2, 9, 3 });
    g_assert_true (infer (&c, 1, 1, &error));
    assert_dims (&c.outputs[0], OWB_TYPE_DOUBLE, 4, (int64_t[]) { -2, 4, -1, 3 });
    owb_node_free (c.node);
  }
  {
    /* SwiGLU merges A's and B's dims: a known dim in B fills an unknown one in A. */
    InferCase c = { owb_node_new ("SwiGLU", "", "sg") };
    infer_input (&c, OWB_TYPE_FLOAT, 2, (int64_t[]) { -2, -1 });
    infer_input (&c, OWB_TYPE_FLOAT, 2, (int64_t[]) { -2, 64 });
    g_assert_true (infer (&c, 28, 1, &error));
    assert_dims (&c.outputs[0], OWB_TYPE_FLOAT, 2, (int64_t[]) { -2, 64 });
    owb_node_free (c.node);
  }
  {
    InferCase c = { owb_node_new ("TensorScatter", "", "ts") };
    infer_input (&c, OWB_TYPE_INT8, 4, (int64_t[]) { -2, 2, 16, 8 });
    infer_input (&c, OWB_TYPE_INT8, 4, (int64_t[]) { -2, 2, 1, 8 });
    g_assert_true (infer (&c, 24, 1, &error));
    assert_dims (&c.outputs[0], OWB_TYPE_INT8, 4, (int64_t[]) { -2, 2, 16, 8 });
    owb_node_free (c.node);
  }
  /* Versions: none of these exist before their opsets; FlexAttention only in the preview domain. */
  g_assert_null (owb_op_schema_lookup ("", "Attention", 22));
  g_assert_null (owb_op_schema_lookup ("", "Swish", 23));
  g_assert_null (owb_op_schema_lookup ("", "SwiGLU", 27));
  g_assert_null (owb_op_schema_lookup ("", "LinearAttention", 26));
  g_assert_null (owb_op_schema_lookup ("", "FlexAttention", 26));
  g_assert_nonnull (owb_op_schema_lookup ("ai.onnx.preview", "FlexAttention", 1));
  g_assert_cmpint (owb_op_schema_lookup ("", "Attention", 23)->max_inputs, ==, 6);
  g_assert_cmpint (owb_op_schema_lookup ("", "Attention", 25)->max_inputs, ==, 7);
}

/* Each setup builds a node that inference must refuse (opset in *opset). */
typedef void (*BadSetup) (InferCase *c, int *opset);

static void
qkv4 (InferCase *c)
{
  infer_input (c, OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 4, 3, 8 });
  infer_input (c, OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 2, 5, 8 });
  infer_input (c, OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 2, 5, 8 });
}

static void
bad_3d_without_heads (InferCase *c, int *opset)
{
  c->node = owb_node_new ("Attention", "", "a");
  for (int i = 0; i < 3; i++)
    infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 3, 8 });
}

static void
bad_mode (InferCase *c, int *opset)
{
  c->node = owb_node_new ("Attention", "", "a");
  tu_set_int (c->node, "qk_matmul_output_mode", 4);
  qkv4 (c);
}

static void
bad_causal (InferCase *c, int *opset)
{
  c->node = owb_node_new ("Attention", "", "a");
  tu_set_int (c->node, "is_causal", 2);
  qkv4 (c);
}

static void
bad_window (InferCase *c, int *opset)
{
  c->node = owb_node_new ("Attention", "", "a");
  tu_set_int (c->node, "left_window_size", -2);
  qkv4 (c);
  *opset = 25;
}

static void
bad_heads_on_4d_at_25 (InferCase *c, int *opset)
{
  c->node = owb_node_new ("Attention", "", "a");
  tu_set_int (c->node, "q_num_heads", 4);
  tu_set_int (c->node, "kv_num_heads", 2);
  qkv4 (c);
  *opset = 25;
}

static void
bad_gqa_ratio (InferCase *c, int *opset)
{
  c->node = owb_node_new ("Attention", "", "a");
  infer_input (c, OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 3, 3, 8 });
  infer_input (c, OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 2, 5, 8 });
  infer_input (c, OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 2, 5, 8 });
}

static void
bad_past_alone (InferCase *c, int *opset)
{
  c->node = owb_node_new ("Attention", "", "a");
  qkv4 (c);
  infer_input (c, ABSENT);
  infer_input (c, OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 2, 5, 8 });
}

static void
bad_nonpad_with_past (InferCase *c, int *opset)
{
  c->node = owb_node_new ("Attention", "", "a");
  qkv4 (c);
  infer_input (c, ABSENT);
  infer_input (c, OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 2, 5, 8 });
  infer_input (c, OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 2, 5, 8 });
  infer_input (c, OWB_TYPE_INT64, 1, (int64_t[]) { 1 });
  *opset = 24;
}

static void
bad_long_mask (InferCase *c, int *opset)
{
  c->node = owb_node_new ("Attention", "", "a");
  qkv4 (c);
  infer_input (c, OWB_TYPE_BOOL, 2, (int64_t[]) { 3, 6 });
}

static void
bad_head_sizes (InferCase *c, int *opset)
{
  c->node = owb_node_new ("Attention", "", "a");
  infer_input (c, OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 2, 3, 8 });
  infer_input (c, OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 2, 5, 4 });
  infer_input (c, OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 2, 5, 4 });
}

static void
bad_softmax_precision (InferCase *c, int *opset)
{
  c->node = owb_node_new ("Attention", "", "a");
  tu_set_int (c->node, "softmax_precision", 7);
  qkv4 (c);
}

static void
bad_rotary_dim (InferCase *c, int *opset)
{
  c->node = owb_node_new ("RotaryEmbedding", "", "r");
  tu_set_int (c->node, "rotary_embedding_dim", 3);
  infer_input (c, OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 2, 3, 8 });
  infer_input (c, OWB_TYPE_FLOAT, 2, (int64_t[]) { 10, 4 });
  infer_input (c, OWB_TYPE_FLOAT, 2, (int64_t[]) { 10, 4 });
  infer_input (c, OWB_TYPE_INT64, 2, (int64_t[]) { 1, 3 });
}

static void
bad_rotary_3d_no_heads (InferCase *c, int *opset)
{
  c->node = owb_node_new ("RotaryEmbedding", "", "r");
  infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 3, 8 });
  infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 3, 4 });
  infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 3, 4 });
}

static void
bad_rms_axis (InferCase *c, int *opset)
{
  c->node = owb_node_new ("RMSNormalization", "", "n");
  tu_set_int (c->node, "axis", 3);
  infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 2, 3, 4 });
  infer_input (c, OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 });
}

static void
bad_rms_stash (InferCase *c, int *opset)
{
  c->node = owb_node_new ("RMSNormalization", "", "n");
  tu_set_int (c->node, "stash_type", 7);
  infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 2, 3, 4 });
  infer_input (c, OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 });
}

static void
bad_swiglu_shapes (InferCase *c, int *opset)
{
  c->node = owb_node_new ("SwiGLU", "", "s");
  infer_input (c, OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 4 });
  infer_input (c, OWB_TYPE_FLOAT, 2, (int64_t[]) { 1, 4 });
  *opset = 28;
}

static void
bad_swish_int (InferCase *c, int *opset)
{
  c->node = owb_node_new ("Swish", "", "s");
  infer_input (c, OWB_TYPE_INT32, 1, (int64_t[]) { 4 });
}

static void
bad_scatter_axis (InferCase *c, int *opset)
{
  c->node = owb_node_new ("TensorScatter", "", "t");
  tu_set_int (c->node, "axis", 0);
  infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 2, 4, 5 });
  infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 2, 1, 5 });
}

static void
bad_scatter_mode (InferCase *c, int *opset)
{
  c->node = owb_node_new ("TensorScatter", "", "t");
  tu_set_string (c->node, "mode", "ring");
  infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 2, 4, 5 });
  infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 2, 1, 5 });
}

static void
bad_scatter_too_long (InferCase *c, int *opset)
{
  c->node = owb_node_new ("TensorScatter", "", "t");
  infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 2, 4, 5 });
  infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 2, 5, 5 });
}

static void
bad_conv_activation (InferCase *c, int *opset)
{
  c->node = owb_node_new ("CausalConvWithState", "", "c");
  tu_set_string (c->node, "activation", "relu");
  infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 4, 6 });
  infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 4, 1, 3 });
}

static void
bad_conv_state (InferCase *c, int *opset)
{
  c->node = owb_node_new ("CausalConvWithState", "", "c");
  infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 4, 6 });
  infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 4, 1, 3 });
  infer_input (c, ABSENT);
  infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 4, 3 });
}

static void
linear_qkv (InferCase *c)
{
  tu_set_int (c->node, "q_num_heads", 2);
  tu_set_int (c->node, "kv_num_heads", 2);
  for (int i = 0; i < 3; i++)
    infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 3, 8 });
}

static void
bad_linear_missing_decay (InferCase *c, int *opset)
{
  c->node = owb_node_new ("LinearAttention", "", "l");
  linear_qkv (c);
  *opset = 27;
}

static void
bad_linear_rule (InferCase *c, int *opset)
{
  c->node = owb_node_new ("LinearAttention", "", "l");
  tu_set_string (c->node, "update_rule", "mamba");
  linear_qkv (c);
  *opset = 27;
}

static void
bad_linear_heads (InferCase *c, int *opset)
{
  c->node = owb_node_new ("LinearAttention", "", "l");
  tu_set_int (c->node, "q_num_heads", 3);
  tu_set_int (c->node, "kv_num_heads", 2);
  tu_set_string (c->node, "update_rule", "linear");
  for (int i = 0; i < 3; i++)
    infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 3, 12 });
  *opset = 27;
}

static void
bad_flex_rank (InferCase *c, int *opset)
{
  c->node = owb_node_new ("FlexAttention", "ai.onnx.preview", "f");
  for (int i = 0; i < 3; i++)
    infer_input (c, OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 3, 8 });
  *opset = 1;
}

static void
test_infer_errors (void)
{
  static const struct {
    const char *name;
    BadSetup setup;
  } cases[] = {
    { "3d-without-heads", bad_3d_without_heads }, { "mode", bad_mode }, { "causal", bad_causal },
    { "window", bad_window }, { "heads-on-4d", bad_heads_on_4d_at_25 }, { "gqa-ratio", bad_gqa_ratio },
    { "past-alone", bad_past_alone }, { "nonpad-with-past", bad_nonpad_with_past }, { "long-mask", bad_long_mask },
    { "head-sizes", bad_head_sizes }, { "softmax-precision", bad_softmax_precision },
    { "rotary-dim", bad_rotary_dim }, { "rotary-3d", bad_rotary_3d_no_heads }, { "rms-axis", bad_rms_axis },
    { "rms-stash", bad_rms_stash }, { "swiglu-shapes", bad_swiglu_shapes }, { "swish-int", bad_swish_int },
    { "scatter-axis", bad_scatter_axis }, { "scatter-mode", bad_scatter_mode },
    { "scatter-too-long", bad_scatter_too_long }, { "conv-activation", bad_conv_activation },
    { "conv-state", bad_conv_state }, { "linear-decay", bad_linear_missing_decay },
    { "linear-rule", bad_linear_rule }, { "linear-heads", bad_linear_heads }, { "flex-rank", bad_flex_rank },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      InferCase c = { NULL };
      int opset = 0;
      cases[i].setup (&c, &opset);
      if (!opset)
        opset = strcmp (c.node->op_type, "TensorScatter") == 0 || strcmp (c.node->op_type, "Swish") == 0 ? 24 : 23;
      if (strcmp (c.node->op_type, "CausalConvWithState") == 0)
        opset = 27;
      g_autoptr (GError) error = NULL;
      gboolean ok = infer (&c, opset, 1, &error);
      if (ok)
        g_error ("case %s: inference accepted the node", cases[i].name);
      g_assert_nonnull (error);
      owb_node_free (c.node);
    }
  /* Before opset 25, head attributes on 4-D inputs are ignored rather than refused. */
  {
    InferCase c = { NULL };
    int opset = 0;
    bad_heads_on_4d_at_25 (&c, &opset);
    g_autoptr (GError) error = NULL;
    g_assert_true (infer (&c, 24, 1, &error));
    owb_node_free (c.node);
  }
}

/* ---- Attention numerics ----------------------------------------------------------------------- */

/* Plain attention over 4-D inputs in double: bias from a (q, total) float mask (or NULL), causal
 * offset `offset`, returning Y (b, hq, sq, dv). Fully masked rows give 0. */
static double *
naive_attention (const OwbTensor *q, const OwbTensor *k, const OwbTensor *v, const double *mask, gboolean causal,
                 int64_t offset, double scale, double softcap)
{
  int64_t B = q->dims[0], Hq = q->dims[1], Sq = q->dims[2], D = q->dims[3];
  int64_t Hkv = k->dims[1], T = k->dims[2], Dv = v->dims[3];
  double *y = g_new0 (double, B * Hq * Sq * Dv);
  double *row = g_new (double, MAX (T, 1));
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < Hq; h++)
      for (int64_t i = 0; i < Sq; i++)
        {
          int64_t g = h / (Hq / Hkv);
          double max = -INFINITY;
          for (int64_t j = 0; j < T; j++)
            {
              double s = 0;
              for (int64_t d = 0; d < D; d++)
                s += owb_tensor_get_double (q, ((b * Hq + h) * Sq + i) * D + d)
                     * owb_tensor_get_double (k, ((b * Hkv + g) * T + j) * D + d);
              s *= scale;
              if (softcap > 0)
                s = softcap * tanh (s / softcap);
              if (mask)
                s += mask[i * T + j];
              if (causal && j > i + offset)
                s = -INFINITY;
              row[j] = s;
              max = MAX (max, s);
            }
          if (max == -INFINITY)
            continue;
          double sum = 0;
          for (int64_t j = 0; j < T; j++)
            sum += row[j] = exp (row[j] - max);
          for (int64_t j = 0; j < T; j++)
            for (int64_t e = 0; e < Dv; e++)
              y[((b * Hq + h) * Sq + i) * Dv + e] += row[j] / sum * owb_tensor_get_double (v, ((b * Hkv + g) * T + j) * Dv + e);
        }
  g_free (row);
  return y;
}

/* More query rows than one work block, GQA, a float mask, causal and soft cap together. */
static void
test_attention_long_query (void)
{
  int64_t B = 2, Hq = 4, Hkv = 2, Sq = 150, T = 150, D = 8, Dv = 5;
  OwbTensor *in[4] = {
    wave (OWB_TYPE_FLOAT, 4, (int64_t[]) { B, Hq, Sq, D }, 1),
    wave (OWB_TYPE_FLOAT, 4, (int64_t[]) { B, Hkv, T, D }, 2),
    wave (OWB_TYPE_FLOAT, 4, (int64_t[]) { B, Hkv, T, Dv }, 3),
    wave (OWB_TYPE_FLOAT, 2, (int64_t[]) { Sq, T }, 4),
  };
  double *mask = g_new (double, Sq * T);
  for (int64_t i = 0; i < Sq * T; i++)
    mask[i] = owb_tensor_get_double (in[3], i);
  OwbNode *node = owb_node_new ("Attention", "", "att");
  tu_set_int (node, "is_causal", 1);
  tu_set_float (node, "softcap", 3.0f);
  OwbTensor *out[1] = { NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (run_node (node, 23, 4, in, 1, NULL, out, &error));
  g_assert_no_error (error);
  double *expected = naive_attention (in[0], in[1], in[2], mask, TRUE, 0, 1 / sqrt ((double) D), 3.0);
  assert_shape (out[0], 4, (int64_t[]) { B, Hq, Sq, Dv });
  assert_close (out[0], expected, B * Hq * Sq * Dv, 1e-4);
  g_free (expected);
  g_free (mask);
  unref_all (in, 4);
  unref_all (out, 1);
}

/* 3-D inputs with a past cache: present_key is (batch, heads, total, size) even though K is packed
 * (batch, seq, heads * size); Y is packed back. Compared against the same data run as 4-D. */
static void
test_attention_3d_cache (void)
{
  int64_t B = 2, Hq = 4, Hkv = 2, Sq = 3, Skv = 3, P = 4, D = 4, Dv = 3;
  OwbTensor *q4 = wave (OWB_TYPE_FLOAT, 4, (int64_t[]) { B, Hq, Sq, D }, 5);
  OwbTensor *k4 = wave (OWB_TYPE_FLOAT, 4, (int64_t[]) { B, Hkv, Skv, D }, 6);
  OwbTensor *v4 = wave (OWB_TYPE_FLOAT, 4, (int64_t[]) { B, Hkv, Skv, Dv }, 7);
  OwbTensor *pk = wave (OWB_TYPE_FLOAT, 4, (int64_t[]) { B, Hkv, P, D }, 8);
  OwbTensor *pv = wave (OWB_TYPE_FLOAT, 4, (int64_t[]) { B, Hkv, P, Dv }, 9);
  /* Pack (b, h, s, d) into (b, s, h * d). */
  OwbTensor *packed[3];
  OwbTensor *src[3] = { q4, k4, v4 };
  for (int t = 0; t < 3; t++)
    {
      int64_t h = src[t]->dims[1], s = src[t]->dims[2], d = src[t]->dims[3];
      packed[t] = tensor (OWB_TYPE_FLOAT, 3, (int64_t[]) { B, s, h * d }, NULL);
      for (int64_t b = 0; b < B; b++)
        for (int64_t hh = 0; hh < h; hh++)
          for (int64_t ss = 0; ss < s; ss++)
            for (int64_t dd = 0; dd < d; dd++)
              owb_tensor_set_double (packed[t], (b * s + ss) * h * d + hh * d + dd,
                                     owb_tensor_get_double (src[t], ((b * h + hh) * s + ss) * d + dd));
    }
  g_autoptr (GError) error = NULL;
  OwbNode *n4 = owb_node_new ("Attention", "", "a4");
  tu_set_int (n4, "is_causal", 1);
  OwbTensor *in4[6] = { q4, k4, v4, NULL, pk, pv }, *out4[3] = { NULL };
  g_assert_true (run_node (n4, 23, 6, in4, 3, NULL, out4, &error));
  OwbNode *n3 = owb_node_new ("Attention", "", "a3");
  tu_set_int (n3, "is_causal", 1);
  tu_set_int (n3, "q_num_heads", Hq);
  tu_set_int (n3, "kv_num_heads", Hkv);
  OwbTensor *in3[6] = { packed[0], packed[1], packed[2], NULL, pk, pv }, *out3[3] = { NULL };
  g_assert_true (run_node (n3, 23, 6, in3, 3, NULL, out3, &error));
  g_assert_no_error (error);
  assert_shape (out3[0], 3, (int64_t[]) { B, Sq, Hq * Dv });
  assert_shape (out3[1], 4, (int64_t[]) { B, Hkv, P + Skv, D });
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < Hq; h++)
      for (int64_t s = 0; s < Sq; s++)
        for (int64_t e = 0; e < Dv; e++)
          g_assert_cmpfloat_with_epsilon (owb_tensor_get_double (out3[0], (b * Sq + s) * Hq * Dv + h * Dv + e),
                                          owb_tensor_get_double (out4[0], ((b * Hq + h) * Sq + s) * Dv + e), 1e-5);
  for (int o = 1; o < 3; o++)
    for (int64_t i = 0; i < out4[o]->nelems; i++)
      g_assert_cmpfloat (owb_tensor_get_double (out3[o], i), ==, owb_tensor_get_double (out4[o], i));
  /* The cache starts with the past rows. */
  g_assert_cmpfloat (owb_tensor_get_double (out4[1], 0), ==, owb_tensor_get_double (pk, 0));
  unref_all (packed, 3);
  unref_all (out3, 3);
  unref_all (out4, 3);
  OwbTensor *rest[5] = { q4, k4, v4, pk, pv };
  unref_all (rest, 5);
}

/* No keys at all, and every key masked: Y rows are zero, not NaN; mode 3 exposes zero rows too. */
static void
test_attention_empty_and_masked (void)
{
  g_autoptr (GError) error = NULL;
  {
    OwbTensor *in[3] = {
      wave (OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 2, 3, 4 }, 1),
      tensor (OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 2, 0, 4 }, NULL),
      tensor (OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 2, 0, 5 }, NULL),
    };
    OwbTensor *out[1] = { NULL };
    g_assert_true (run_node (owb_node_new ("Attention", "", "a"), 23, 3, in, 1, NULL, out, &error));
    g_assert_no_error (error);
    assert_shape (out[0], 4, (int64_t[]) { 1, 2, 3, 5 });
    for (int64_t i = 0; i < out[0]->nelems; i++)
      g_assert_cmpfloat (owb_tensor_get_double (out[0], i), ==, 0);
    unref_all (in, 3);
    unref_all (out, 1);
  }
  {
    /* Row 1 fully masked by a bool mask. */
    OwbTensor *in[4] = {
      wave (OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 1, 2, 4 }, 1),
      wave (OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 1, 3, 4 }, 2),
      wave (OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 1, 3, 2 }, 3),
      tensor (OWB_TYPE_BOOL, 2, (int64_t[]) { 2, 3 }, (double[]) { 1, 0, 1, 0, 0, 0 }),
    };
    OwbNode *node = owb_node_new ("Attention", "", "a");
    tu_set_int (node, "qk_matmul_output_mode", 3);
    OwbTensor *out[4] = { NULL };
    g_assert_true (run_node (node, 24, 4, in, 4, (gboolean[]) { TRUE, FALSE, FALSE, TRUE }, out, &error));
    g_assert_no_error (error);
    for (int e = 0; e < 2; e++)
      g_assert_cmpfloat (owb_tensor_get_double (out[0], 2 + e), ==, 0);
    double p0 = owb_tensor_get_double (out[3], 0), p2 = owb_tensor_get_double (out[3], 2);
    g_assert_cmpfloat_with_epsilon (p0 + p2, 1, 1e-6);
    g_assert_cmpfloat (owb_tensor_get_double (out[3], 1), ==, 0);
    for (int c = 3; c < 6; c++)
      g_assert_cmpfloat (owb_tensor_get_double (out[3], c), ==, 0);
    unref_all (in, 4);
    unref_all (out, 4);
  }
}

/* qk_matmul_output modes 0-2 on a double model: raw scores (before the soft cap), capped, capped + bias. */
static void
test_attention_qk_modes (void)
{
  OwbTensor *in[4] = {
    wave (OWB_TYPE_DOUBLE, 4, (int64_t[]) { 1, 1, 2, 3 }, 1),
    wave (OWB_TYPE_DOUBLE, 4, (int64_t[]) { 1, 1, 2, 3 }, 2),
    wave (OWB_TYPE_DOUBLE, 4, (int64_t[]) { 1, 1, 2, 3 }, 3),
    tensor (OWB_TYPE_DOUBLE, 1, (int64_t[]) { 2 }, (double[]) { 0.5, -1 }),
  };
  double raw[4];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++)
      {
        double s = 0;
        for (int d = 0; d < 3; d++)
          s += owb_tensor_get_double (in[0], i * 3 + d) * owb_tensor_get_double (in[1], j * 3 + d);
        raw[i * 2 + j] = s * 0.25;
      }
  for (int mode = 0; mode < 3; mode++)
    {
      OwbNode *node = owb_node_new ("Attention", "", "a");
      tu_set_int (node, "qk_matmul_output_mode", mode);
      tu_set_float (node, "scale", 0.25f);
      tu_set_float (node, "softcap", 0.5f);
      OwbTensor *out[4] = { NULL };
      g_autoptr (GError) error = NULL;
      g_assert_true (run_node (node, 23, 4, in, 4, (gboolean[]) { TRUE, FALSE, FALSE, TRUE }, out, &error));
      g_assert_cmpint (out[3]->dtype, ==, OWB_TYPE_DOUBLE);
      double expected[4];
      for (int i = 0; i < 4; i++)
        {
          double capped = 0.5 * tanh (raw[i] / 0.5);
          expected[i] = mode == 0 ? raw[i] : mode == 1 ? capped : capped + (i % 2 ? -1 : 0.5);
        }
      assert_close (out[3], expected, 4, 1e-12);
      unref_all (out, 4);
    }
  unref_all (in, 4);
}

/* External cache: nonpad_kv_seqlen pads each batch's keys and moves its causal frontier; a mask shorter
 * than the keys is padded with -inf. */
static void
test_attention_nonpad (void)
{
  int64_t T = 6;
  OwbTensor *in[7] = {
    wave (OWB_TYPE_FLOAT, 4, (int64_t[]) { 2, 1, 2, 4 }, 1),
    wave (OWB_TYPE_FLOAT, 4, (int64_t[]) { 2, 1, T, 4 }, 2),
    wave (OWB_TYPE_FLOAT, 4, (int64_t[]) { 2, 1, T, 3 }, 3),
    tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 5 }, (double[]) { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }),
    NULL,
    NULL,
    tensor (OWB_TYPE_INT64, 1, (int64_t[]) { 2 }, (double[]) { 3, 1 }),
  };
  OwbNode *node = owb_node_new ("Attention", "", "a");
  tu_set_int (node, "is_causal", 1);
  OwbTensor *out[1] = { NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (run_node (node, 24, 7, in, 1, NULL, out, &error));
  g_assert_no_error (error);
  /* Batch 0: offset 1, query 0 sees keys 0-1, query 1 keys 0-2. Batch 1: offset -1: query 0 sees nothing
   * (zero row), query 1 sees key 0 only (Y = V[0]). */
  for (int e = 0; e < 3; e++)
    {
      g_assert_cmpfloat (owb_tensor_get_double (out[0], 6 + e), ==, 0);
      g_assert_cmpfloat_with_epsilon (owb_tensor_get_double (out[0], 9 + e),
                                      owb_tensor_get_double (in[2], T * 3 + e), 1e-6);
    }
  g_autoptr (OwbTensor) q0 = tensor (OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 1, 2, 4 }, NULL);
  g_autoptr (OwbTensor) k0 = tensor (OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 1, 3, 4 }, NULL);
  g_autoptr (OwbTensor) v0 = tensor (OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 1, 3, 3 }, NULL);
  memcpy (q0->data, in[0]->data, q0->nbytes);
  memcpy (k0->data, in[1]->data, k0->nbytes);
  memcpy (v0->data, in[2]->data, v0->nbytes);
  double *expected = naive_attention (q0, k0, v0, NULL, TRUE, 1, 0.5, 0);
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat_with_epsilon (owb_tensor_get_double (out[0], i), expected[i], 1e-5);
  g_free (expected);
  in[4] = in[5] = NULL;
  unref_all (in, 7);
  unref_all (out, 1);
}

/* Local windows (opset 25): left 1, right 1 around each query, no causal. */
static void
test_attention_window (void)
{
  OwbTensor *in[3] = {
    tensor (OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 1, 4, 1 }, (double[]) { 0, 0, 0, 0 }),
    tensor (OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 1, 4, 1 }, (double[]) { 0, 0, 0, 0 }),
    tensor (OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 1, 4, 1 }, (double[]) { 1, 2, 4, 8 }),
  };
  OwbNode *node = owb_node_new ("Attention", "", "a");
  tu_set_int (node, "left_window_size", 1);
  tu_set_int (node, "right_window_size", 1);
  OwbTensor *out[1] = { NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (run_node (node, 25, 3, in, 1, NULL, out, &error));
  g_assert_no_error (error);
  /* Equal scores: each query averages the values in its window. */
  assert_close (out[0], (double[]) { 1.5, 7.0 / 3, 14.0 / 3, 6 }, 4, 1e-6);
  unref_all (in, 3);
  unref_all (out, 1);
}

/* ---- other kernels ---------------------------------------------------------------------------- */

static void
test_rotary_position_error (void)
{
  OwbTensor *in[4] = {
    wave (OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 1, 2, 4 }, 1),
    wave (OWB_TYPE_FLOAT, 2, (int64_t[]) { 3, 2 }, 2),
    wave (OWB_TYPE_FLOAT, 2, (int64_t[]) { 3, 2 }, 3),
    tensor (OWB_TYPE_INT64, 2, (int64_t[]) { 1, 2 }, (double[]) { 0, 3 }),
  };
  OwbTensor *out[1] = { NULL };
  g_autoptr (GError) error = NULL;
  g_assert_false (run_node (owb_node_new ("RotaryEmbedding", "", "r"), 23, 4, in, 1, NULL, out, &error));
  g_assert_nonnull (error);
  unref_all (in, 4);
}

/* Partial rotation keeps the tail; 3-D packed input rotates each head by its own position. */
static void
test_rotary_partial_3d (void)
{
  OwbTensor *in[4] = {
    tensor (OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 2, 8 }, (double[]) { 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8 }),
    tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 1 }, (double[]) { 1, 0 }),
    tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 1 }, (double[]) { 0, 1 }),
    tensor (OWB_TYPE_INT64, 2, (int64_t[]) { 1, 2 }, (double[]) { 0, 1 }),
  };
  OwbNode *node = owb_node_new ("RotaryEmbedding", "", "r");
  tu_set_int (node, "num_heads", 2);
  tu_set_int (node, "rotary_embedding_dim", 2);
  OwbTensor *out[1] = { NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (run_node (node, 23, 4, in, 1, NULL, out, &error));
  g_assert_no_error (error);
  /* Position 0: identity. Position 1 (cos 0, sin 1): (x1, x2) -> (-x2, x1) on the first two of each head. */
  assert_close (out[0], (double[]) { 1, 2, 3, 4, 5, 6, 7, 8, -2, 1, 3, 4, -6, 5, 7, 8 }, 16, 1e-6);
  unref_all (in, 4);
  unref_all (out, 1);
}

static void
test_rms_scale_broadcast (void)
{
  /* Scale (2, 1) over normalized dims (2, 2): one factor per row of the normalized block. */
  OwbTensor *in[2] = {
    tensor (OWB_TYPE_DOUBLE, 3, (int64_t[]) { 2, 2, 2 }, (double[]) { 1, 1, 1, 1, 2, 2, 2, 2 }),
    tensor (OWB_TYPE_DOUBLE, 2, (int64_t[]) { 2, 1 }, (double[]) { 1, 3 }),
  };
  OwbNode *node = owb_node_new ("RMSNormalization", "", "n");
  tu_set_int (node, "axis", 1);
  tu_set_float (node, "epsilon", 0);
  OwbTensor *out[1] = { NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (run_node (node, 23, 2, in, 1, NULL, out, &error));
  g_assert_no_error (error);
  assert_close (out[0], (double[]) { 1, 1, 3, 3, 1, 1, 3, 3 }, 8, 1e-12);
  unref_all (in, 2);
  unref_all (out, 1);
}

static void
test_swish_swiglu (void)
{
  OwbTensor *a = tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 }, (double[]) { -2, 0, 3 });
  OwbTensor *b = tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 }, (double[]) { 2, 5, -1 });
  OwbNode *node = owb_node_new ("SwiGLU", "", "s");
  tu_set_float (node, "alpha", 0.5f);
  OwbTensor *in[2] = { a, b }, *out[1] = { NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (run_node (node, 28, 2, in, 1, NULL, out, &error));
  double expected[3];
  for (int i = 0; i < 3; i++)
    {
      double x = owb_tensor_get_double (a, i);
      expected[i] = x / (1 + exp (-0.5 * x)) * owb_tensor_get_double (b, i);
    }
  assert_close (out[0], expected, 3, 1e-6);
  unref_all (out, 1);
  /* Swish at opset 24; unknown before. */
  g_assert_true (run_node (owb_node_new ("Swish", "", "w"), 24, 1, in, 1, NULL, out, &error));
  for (int i = 0; i < 3; i++)
    expected[i] = owb_tensor_get_double (a, i) / (1 + exp (-owb_tensor_get_double (a, i)));
  assert_close (out[0], expected, 3, 1e-6);
  unref_all (out, 1);
  g_assert_false (run_node (owb_node_new ("Swish", "", "w"), 23, 1, in, 1, NULL, out, &error));
  unref_all (in, 2);
}

static void
test_tensor_scatter (void)
{
  g_autoptr (GError) error = NULL;
  /* Circular wrap on axis 1 with a negative start (Python modulo). */
  OwbTensor *in[3] = {
    tensor (OWB_TYPE_INT32, 2, (int64_t[]) { 1, 4 }, (double[]) { 0, 0, 0, 0 }),
    tensor (OWB_TYPE_INT32, 2, (int64_t[]) { 1, 3 }, (double[]) { 1, 2, 3 }),
    tensor (OWB_TYPE_INT64, 1, (int64_t[]) { 1 }, (double[]) { -1 }),
  };
  OwbNode *node = owb_node_new ("TensorScatter", "", "t");
  tu_set_string (node, "mode", "circular");
  tu_set_int (node, "axis", 1);
  OwbTensor *out[1] = { NULL };
  g_assert_true (run_node (node, 24, 3, in, 1, NULL, out, &error));
  g_assert_no_error (error);
  assert_close (out[0], (double[]) { 2, 3, 0, 1 }, 4, 0);
  unref_all (out, 1);
  /* Linear mode refuses an update that runs past the end. */
  owb_tensor_set_double (in[2], 0, 2);
  node = owb_node_new ("TensorScatter", "", "t");
  tu_set_int (node, "axis", -1);
  g_assert_false (run_node (node, 24, 3, in, 1, NULL, out, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  unref_all (in, 3);
}

static void
test_causal_conv_state (void)
{
  /* Kernel 3 over a length-1 input with a past: present_state shifts in the new value. */
  OwbTensor *in[4] = {
    tensor (OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 1, 1 }, (double[]) { 5 }),
    tensor (OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 1, 3 }, (double[]) { 1, 10, 100 }),
    tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 1 }, (double[]) { 0.5 }),
    tensor (OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 1, 2 }, (double[]) { 2, 3 }),
  };
  OwbTensor *out[2] = { NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (run_node (owb_node_new ("CausalConvWithState", "", "c"), 27, 4, in, 2, NULL, out, &error));
  g_assert_no_error (error);
  assert_close (out[0], (double[]) { 2 + 30 + 500 + 0.5 }, 1, 1e-6);
  assert_close (out[1], (double[]) { 3, 5 }, 2, 0);
  unref_all (in, 4);
  unref_all (out, 2);
}

static void
test_linear_attention_gqa (void)
{
  /* One KV head shared by two query heads; linear rule, two steps. State after: k0 v0^T + k1 v1^T. */
  OwbTensor *in[3] = {
    tensor (OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 2, 2 }, (double[]) { 1, 2, 3, 4 }),
    tensor (OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 2, 1 }, (double[]) { 1, 2 }),
    tensor (OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 2, 1 }, (double[]) { 10, 100 }),
  };
  OwbNode *node = owb_node_new ("LinearAttention", "", "l");
  tu_set_int (node, "q_num_heads", 2);
  tu_set_int (node, "kv_num_heads", 1);
  tu_set_string (node, "update_rule", "linear");
  tu_set_float (node, "scale", 1.0f);
  OwbTensor *out[2] = { NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (run_node (node, 27, 3, in, 2, NULL, out, &error));
  g_assert_no_error (error);
  assert_shape (out[0], 3, (int64_t[]) { 1, 2, 2 });
  assert_close (out[0], (double[]) { 10, 20, 630, 840 }, 4, 1e-6);
  assert_close (out[1], (double[]) { 210 }, 1, 1e-6);
  unref_all (in, 3);
  unref_all (out, 2);
}


/* ---- Gelu and BiasGelu (ai.onnx.workbench) ---------------------------------------------------- */

/* Both forms, with and without a bias, on a length with a partial vector at the end and values
 * from deep in either tail to 0, against the formulas in double: the vector kernel (AVX-512 where
 * the CPU has it) keeps within 2e-6 of them; NaN stays NaN. */
static void
test_gelu_accuracy (void)
{
  int64_t dims[2] = { 3, 1037 }, bd[1] = { 1037 };
  for (int form = 0; form < 2; form++)
    for (int with_bias = 0; with_bias < 2; with_bias++)
      {
        OwbTensor *x = tensor (OWB_TYPE_FLOAT, 2, dims, NULL), *b = tensor (OWB_TYPE_FLOAT, 1, bd, NULL);
        float *xv = x->data, *bv = b->data;
        for (int64_t i = 0; i < x->nelems; i++)
          xv[i] = (float) (-12.0 + 24.0 * i / x->nelems + 0.01 * sin (i * 0.7));
        xv[5] = NAN;
        xv[6] = 100.0f;
        xv[7] = -100.0f;
        for (int64_t i = 0; i < bd[0]; i++)
          bv[i] = with_bias ? (float) (0.5 * cos (i * 0.3)) : 0.0f;
        OwbNode *node = owb_node_new (with_bias ? "BiasGelu" : "Gelu", OWB_DOMAIN, "g");
        if (form)
          {
            OwbAttribute *a = owb_node_add_attribute (node, "approximate", OWB_ATTR_STRING);
            a->s = g_strdup ("tanh");
            a->s_len = strlen (a->s);
          }
        OwbTensor *in[2] = { x, b }, *out[1] = { NULL };
        g_autoptr (GError) error = NULL;
        g_assert_true (run_node (node, 17, with_bias ? 2 : 1, in, 1, NULL, out, &error));
        g_assert_no_error (error);
        const float *yv = out[0]->data;
        for (int64_t i = 0; i < x->nelems; i++)
          {
            double v = (double) xv[i] + (with_bias ? bv[i % bd[0]] : 0.0);
            double want = form ? 0.5 * v * (1 + tanh (0.7978845608028654 * (v + 0.044715 * v * v * v)))
                               : 0.5 * v * (1 + erf (v * M_SQRT1_2));
            if (isnan (v))
              {
                g_assert_true (isnan (yv[i]));
                continue;
              }
            if (!(fabs (yv[i] - want) <= 2e-6 * (1 + fabs (want))))
              g_error ("%s %s x %.9g: %.9g, want %.9g", with_bias ? "BiasGelu" : "Gelu", form ? "tanh" : "erf", v,
                       (double) yv[i], want);
          }
        owb_tensor_unref (out[0]);
        owb_tensor_unref (x);
        owb_tensor_unref (b);
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/transformer/infer/symbolic", test_infer_symbolic);
  g_test_add_func ("/transformer/infer/errors", test_infer_errors);
  g_test_add_func ("/transformer/attention/long-query", test_attention_long_query);
  g_test_add_func ("/transformer/attention/3d-cache", test_attention_3d_cache);
  g_test_add_func ("/transformer/attention/empty-and-masked", test_attention_empty_and_masked);
  g_test_add_func ("/transformer/attention/qk-modes", test_attention_qk_modes);
  g_test_add_func ("/transformer/attention/nonpad", test_attention_nonpad);
  g_test_add_func ("/transformer/attention/window", test_attention_window);
  g_test_add_func ("/transformer/rotary/position-error", test_rotary_position_error);
  g_test_add_func ("/transformer/rotary/partial-3d", test_rotary_partial_3d);
  g_test_add_func ("/transformer/rms/scale-broadcast", test_rms_scale_broadcast);
  g_test_add_func ("/transformer/swish-swiglu", test_swish_swiglu);
  g_test_add_func ("/transformer/tensor-scatter", test_tensor_scatter);
  g_test_add_func ("/transformer/causal-conv/state", test_causal_conv_state);
  g_test_add_func ("/transformer/linear-attention/gqa", test_linear_attention_gqa);
  g_test_add_func ("/transformer/gelu/accuracy", test_gelu_accuracy);
  return g_test_run ();
}
