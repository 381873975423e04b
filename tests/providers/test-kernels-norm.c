/* test-kernels-norm.c: pooling, normalization, softmax-like and Dropout ops: version differences,
 * attribute errors, symbolic-dim inference and edge shapes that the conformance cases miss. */
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
    owb_tensor_set_double (t, i, sin (i * 0.9 + k) * 3.0);
  return t;
}

static const char *const in_names[] = { "i0", "i1", "i2", "i3", "i4" };
static const char *const out_names[] = { "o0", "o1", "o2", "o3", "o4" };

/* Runs a one-node model (takes the node). inputs: n_inputs slots, NULL for a missing optional one.
 * Outputs: n_outputs, each fetched into outputs[i]. */
static gboolean
run_node (OwbNode *node, int opset, int n_inputs, OwbTensor **inputs, int n_outputs, OwbTensor **outputs,
          GError **error)
{
  return run_wired_node (node, opset, in_names, n_inputs, inputs, 0, out_names, n_outputs, NULL, outputs, error);
}

/* Runs a node with one input and one output and returns the output. */
static OwbTensor *
run_simple (OwbNode *node, int opset, OwbTensor *x)
{
  g_autoptr (GError) error = NULL;
  OwbTensor *y = NULL;
  gboolean ok = run_node (node, opset, 1, &x, 1, &y, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  return y;
}

static void
assert_values (const OwbTensor *t, int64_t n, const double *expected, double tol)
{
  g_assert_cmpint (t->nelems, ==, n);
  for (int64_t i = 0; i < n; i++)
    {
      double v = owb_tensor_get_double (t, i);
      if (!(fabs (v - expected[i]) <= tol * (1 + fabs (expected[i]))))
        g_error ("element %" G_GINT64_FORMAT ": got %.9g, expected %.9g", i, v, expected[i]);
    }
}

/* ---- inference -------------------------------------------------------------------------------- */

typedef struct {
  OwbNode *node;
  int n_inputs;
  OwbValueType types[5];
  OwbValueType outputs[5];
} InferCase;

/* dims: >= 0 known, -1 unknown, -2 the named dim "batch". rank -1: unknown rank. */
static void
infer_input (InferCase *c, OwbDataType dtype, int rank, const int64_t *dims)
{
  OwbValueType *t = &c->types[c->n_inputs];
  *t = batch_type (dtype, rank, dims);
  owb_node_add_input (c->node, in_names[c->n_inputs]);
  c->n_inputs++;
}

static gboolean
infer (InferCase *c, int opset, int n_outputs, GError **error)
{
  for (int i = 0; i < n_outputs; i++)
    owb_node_add_output (c->node, out_names[i]);
  c->node->opset = opset;
  const OwbValueType *inputs[5];
  const OwbTensor *values[5] = { NULL };
  for (int i = 0; i < c->n_inputs; i++)
    inputs[i] = &c->types[i];
  OwbInferContext ctx = { .node = c->node, .opset = opset, .n_inputs = c->n_inputs, .inputs = inputs,
                          .input_values = values, .n_outputs = n_outputs, .outputs = c->outputs };
  const OwbOpSchema *schema = owb_op_schema_lookup ("", c->node->op_type, opset);
  if (!schema)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_UNSUPPORTED_OP, "no schema for %s at %d", c->node->op_type, opset);
      return FALSE;
    }
  return owb_op_infer (schema, &ctx, error);
}

static void
test_infer_symbolic (void)
{
  g_autoptr (GError) error = NULL;
  {
    /* batch flows through; spatial dims are computed; an unknown spatial dim stays unknown. */
    InferCase c = { owb_node_new ("MaxPool", "", "pool") };
    tu_set_ints (c.node, "kernel_shape", 2, (int64_t[]) { 3, 3 });
    tu_set_ints (c.node, "strides", 2, (int64_t[]) { 2, 2 });
    tu_set_ints (c.node, "pads", 4, (int64_t[]) { 1, 1, 1, 1 });
    infer_input (&c, OWB_TYPE_FLOAT, 4, (int64_t[]) { -2, 3, 32, -1 });
    g_assert_true (infer (&c, 13, 2, &error));
    assert_dims (&c.outputs[0], OWB_TYPE_FLOAT, 4, (int64_t[]) { -2, 3, 16, -1 });
    assert_dims (&c.outputs[1], OWB_TYPE_INT64, 4, (int64_t[]) { -2, 3, 16, -1 });
    owb_node_free (c.node);
  }
  {
    InferCase c = { owb_node_new ("AveragePool", "", "pool") };
    tu_set_ints (c.node, "kernel_shape", 1, (int64_t[]) { 3 });
    tu_set_ints (c.node, "strides", 1, (int64_t[]) { 2 });
    tu_set_string (c.node, "auto_pad", "SAME_LOWER");
    infer_input (&c, OWB_TYPE_DOUBLE, 3, (int64_t[]) { -2, 4, 7 });
    g_assert_true (infer (&c, 11, 1, &error));
    assert_dims (&c.outputs[0], OWB_TYPE_DOUBLE, 3, (int64_t[]) { -2, 4, 4 });
    owb_node_free (c.node);
  }
  {
    InferCase c = { owb_node_new ("GlobalAveragePool", "", "gap") };
    infer_input (&c, OWB_TYPE_FLOAT, 4, (int64_t[]) { -2, 8, -1, 5 });
    g_assert_true (infer (&c, 22, 1, &error));
    assert_dims (&c.outputs[0], OWB_TYPE_FLOAT, 4, (int64_t[]) { -2, 8, 1, 1 });
    owb_node_free (c.node);
  }
  {
    InferCase c = { owb_node_new ("LayerNormalization", "", "ln") };
    infer_input (&c, OWB_TYPE_DOUBLE, 3, (int64_t[]) { -2, -1, 64 });
    infer_input (&c, OWB_TYPE_DOUBLE, 1, (int64_t[]) { 64 });
    g_assert_true (infer (&c, 17, 3, &error));
    assert_dims (&c.outputs[0], OWB_TYPE_DOUBLE, 3, (int64_t[]) { -2, -1, 64 });
    /* Mean and InvStdDev follow stash_type (float by default), not X. */
    assert_dims (&c.outputs[1], OWB_TYPE_FLOAT, 3, (int64_t[]) { -2, -1, 1 });
    assert_dims (&c.outputs[2], OWB_TYPE_FLOAT, 3, (int64_t[]) { -2, -1, 1 });
    owb_node_free (c.node);
  }
  {
    InferCase c = { owb_node_new ("Dropout", "", "drop") };
    infer_input (&c, OWB_TYPE_FLOAT, 2, (int64_t[]) { -2, 10 });
    g_assert_true (infer (&c, 7, 2, &error));
    assert_dims (&c.outputs[1], OWB_TYPE_FLOAT, 2, (int64_t[]) { -2, 10 });
    owb_node_free (c.node);
  }
  {
    InferCase c = { owb_node_new ("Dropout", "", "drop") };
    infer_input (&c, OWB_TYPE_FLOAT, 2, (int64_t[]) { -2, 10 });
    g_assert_true (infer (&c, 13, 2, &error));
    assert_dims (&c.outputs[0], OWB_TYPE_FLOAT, 2, (int64_t[]) { -2, 10 });
    assert_dims (&c.outputs[1], OWB_TYPE_BOOL, 2, (int64_t[]) { -2, 10 });
    owb_node_free (c.node);
  }
  {
    InferCase c = { owb_node_new ("BatchNormalization", "", "bn") };
    infer_input (&c, OWB_TYPE_FLOAT, 4, (int64_t[]) { -2, 3, -1, -1 });
    for (int i = 0; i < 4; i++)
      infer_input (&c, OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 });
    tu_set_int (c.node, "training_mode", 1);
    g_assert_true (infer (&c, 15, 3, &error));
    assert_dims (&c.outputs[0], OWB_TYPE_FLOAT, 4, (int64_t[]) { -2, 3, -1, -1 });
    assert_dims (&c.outputs[2], OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 });
    owb_node_free (c.node);
  }
  {
    /* Unknown rank stays unknown. */
    InferCase c = { owb_node_new ("MaxPool", "", "pool") };
    tu_set_ints (c.node, "kernel_shape", 2, (int64_t[]) { 2, 2 });
    infer_input (&c, OWB_TYPE_FLOAT, -1, NULL);
    g_assert_true (infer (&c, 13, 1, &error));
    g_assert_cmpint (c.outputs[0].rank, <, 0);
    g_assert_cmpint (c.outputs[0].dtype, ==, OWB_TYPE_FLOAT);
    owb_node_free (c.node);
  }
  {
    /* Before opset 13 the axis may equal the rank (coercion to 2D). */
    InferCase c = { owb_node_new ("Softmax", "", "sm") };
    tu_set_int (c.node, "axis", 3);
    infer_input (&c, OWB_TYPE_FLOAT, 3, (int64_t[]) { -2, 4, 5 });
    g_assert_true (infer (&c, 11, 1, &error));
    assert_dims (&c.outputs[0], OWB_TYPE_FLOAT, 3, (int64_t[]) { -2, 4, 5 });
    owb_node_free (c.node);
  }
  /* LayerNormalization and GroupNormalization do not exist before their opsets. */
  g_assert_null (owb_op_schema_lookup ("", "LayerNormalization", 16));
  g_assert_null (owb_op_schema_lookup ("", "GroupNormalization", 17));
  g_assert_nonnull (owb_op_schema_lookup ("", "MaxPool", 1));
}

/* Each setup builds a node that inference must refuse. */
typedef void (*BadSetup) (InferCase *c);

static void
pool_input (InferCase *c)
{
  infer_input (c, OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, 3, 8, 8 });
}

static void
bad_no_kernel (InferCase *c)
{
  c->node = owb_node_new ("MaxPool", "", "p");
  pool_input (c);
}

static void
bad_kernel_rank (InferCase *c)
{
  c->node = owb_node_new ("AveragePool", "", "p");
  tu_set_ints (c->node, "kernel_shape", 3, (int64_t[]) { 2, 2, 2 });
  pool_input (c);
}

static void
bad_stride_zero (InferCase *c)
{
  c->node = owb_node_new ("MaxPool", "", "p");
  tu_set_ints (c->node, "kernel_shape", 2, (int64_t[]) { 2, 2 });
  tu_set_ints (c->node, "strides", 2, (int64_t[]) { 0, 1 });
  pool_input (c);
}

static void
bad_negative_pad (InferCase *c)
{
  c->node = owb_node_new ("LpPool", "", "p");
  tu_set_ints (c->node, "kernel_shape", 2, (int64_t[]) { 2, 2 });
  tu_set_ints (c->node, "pads", 4, (int64_t[]) { 0, -1, 0, 0 });
  pool_input (c);
}

static void
bad_huge_kernel (InferCase *c)
{
  c->node = owb_node_new ("MaxPool", "", "p");
  tu_set_ints (c->node, "kernel_shape", 2, (int64_t[]) { G_GINT64_CONSTANT (1) << 40, 2 });
  pool_input (c);
}

static void
bad_auto_pad (InferCase *c)
{
  c->node = owb_node_new ("AveragePool", "", "p");
  tu_set_ints (c->node, "kernel_shape", 2, (int64_t[]) { 2, 2 });
  tu_set_string (c->node, "auto_pad", "SAME");
  pool_input (c);
}

static void
bad_window_too_big (InferCase *c)
{
  c->node = owb_node_new ("MaxPool", "", "p");
  tu_set_ints (c->node, "kernel_shape", 2, (int64_t[]) { 9, 2 });
  pool_input (c);
}

static void
bad_storage_order (InferCase *c)
{
  c->node = owb_node_new ("MaxPool", "", "p");
  tu_set_ints (c->node, "kernel_shape", 2, (int64_t[]) { 2, 2 });
  tu_set_int (c->node, "storage_order", 2);
  pool_input (c);
}

static void
bad_lp_pool_p (InferCase *c)
{
  c->node = owb_node_new ("LpPool", "", "p");
  tu_set_ints (c->node, "kernel_shape", 2, (int64_t[]) { 2, 2 });
  tu_set_int (c->node, "p", 0);
  pool_input (c);
}

static void
bad_pool_int_input (InferCase *c)
{
  c->node = owb_node_new ("AveragePool", "", "p");
  tu_set_ints (c->node, "kernel_shape", 2, (int64_t[]) { 2, 2 });
  infer_input (c, OWB_TYPE_INT32, 4, (int64_t[]) { 1, 3, 8, 8 });
}

static void
bad_lrn_size (InferCase *c)
{
  c->node = owb_node_new ("LRN", "", "l");
  tu_set_int (c->node, "size", 0);
  pool_input (c);
}

static void
bad_lrn_no_size (InferCase *c)
{
  c->node = owb_node_new ("LRN", "", "l");
  pool_input (c);
}

static void
bad_lp_norm_p (InferCase *c)
{
  c->node = owb_node_new ("LpNormalization", "", "l");
  tu_set_int (c->node, "p", 3);
  pool_input (c);
}

static void
bad_group_count (InferCase *c)
{
  c->node = owb_node_new ("GroupNormalization", "", "g");
  tu_set_int (c->node, "num_groups", 2);
  pool_input (c); /* 3 channels */
  infer_input (c, OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 });
  infer_input (c, OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 });
}

static void
bad_group_missing (InferCase *c)
{
  c->node = owb_node_new ("GroupNormalization", "", "g");
  pool_input (c);
  infer_input (c, OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 });
  infer_input (c, OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 });
}

static void
bad_softmax_axis (InferCase *c)
{
  c->node = owb_node_new ("Softmax", "", "s");
  tu_set_int (c->node, "axis", 4);
  pool_input (c);
}

static void
bad_layer_norm_axis (InferCase *c)
{
  c->node = owb_node_new ("LayerNormalization", "", "l");
  tu_set_int (c->node, "axis", -5);
  pool_input (c);
  infer_input (c, OWB_TYPE_FLOAT, 1, (int64_t[]) { 8 });
}

static void
bad_layer_norm_scale (InferCase *c)
{
  c->node = owb_node_new ("LayerNormalization", "", "l");
  pool_input (c);
  infer_input (c, OWB_TYPE_FLOAT, 1, (int64_t[]) { 7 });
}

static void
bad_mvn_axes (InferCase *c)
{
  c->node = owb_node_new ("MeanVarianceNormalization", "", "m");
  tu_set_ints (c->node, "axes", 2, (int64_t[]) { 1, -3 });
  pool_input (c);
}

static void
bad_mvn_default_axes (InferCase *c)
{
  c->node = owb_node_new ("MeanVarianceNormalization", "", "m");
  infer_input (c, OWB_TYPE_FLOAT, 2, (int64_t[]) { 4, 4 });
}

static void
bad_batch_norm_scale (InferCase *c)
{
  c->node = owb_node_new ("BatchNormalization", "", "b");
  pool_input (c);
  infer_input (c, OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 });
  for (int i = 0; i < 3; i++)
    infer_input (c, OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 });
}

static void
bad_batch_norm_outputs (InferCase *c)
{
  c->node = owb_node_new ("BatchNormalization", "", "b");
  pool_input (c);
  for (int i = 0; i < 4; i++)
    infer_input (c, OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 });
}

static void
bad_epsilon (InferCase *c)
{
  c->node = owb_node_new ("InstanceNormalization", "", "i");
  tu_set_float (c->node, "epsilon", -1.0f);
  pool_input (c);
  infer_input (c, OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 });
  infer_input (c, OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 });
}

typedef struct {
  const char *what;
  BadSetup setup;
  int opset;
  int n_outputs;
} BadCase;

static void
test_bad_attributes (void)
{
  static const BadCase cases[] = {
    { "no kernel_shape", bad_no_kernel, 13, 1 },
    { "kernel_shape rank", bad_kernel_rank, 13, 1 },
    { "stride 0", bad_stride_zero, 13, 1 },
    { "negative pad", bad_negative_pad, 18, 1 },
    { "huge kernel", bad_huge_kernel, 13, 1 },
    { "auto_pad SAME", bad_auto_pad, 13, 1 },
    { "window larger than input", bad_window_too_big, 13, 1 },
    { "storage_order 2", bad_storage_order, 13, 1 },
    { "Indices before opset 8", bad_storage_order, 7, 2 },
    { "LpPool p 0", bad_lp_pool_p, 18, 1 },
    { "AveragePool on int32", bad_pool_int_input, 13, 1 },
    { "LRN size 0", bad_lrn_size, 13, 1 },
    { "LRN without size", bad_lrn_no_size, 13, 1 },
    { "LpNormalization p 3", bad_lp_norm_p, 13, 1 },
    { "GroupNormalization 3 channels in 2 groups", bad_group_count, 21, 1 },
    { "GroupNormalization without num_groups", bad_group_missing, 21, 1 },
    { "Softmax axis 4 at opset 13", bad_softmax_axis, 13, 1 },
    { "Softmax axis 4 at opset 11 (rank 4 allows <= 4)", NULL, 0, 0 },
    { "LayerNormalization axis -5", bad_layer_norm_axis, 17, 1 },
    { "LayerNormalization scale of 7 for 8", bad_layer_norm_scale, 17, 1 },
    { "MVN duplicate axis", bad_mvn_axes, 13, 1 },
    { "MVN default axes on rank 2", bad_mvn_default_axes, 13, 1 },
    { "BatchNormalization scale size", bad_batch_norm_scale, 15, 1 },
    { "BatchNormalization 4 outputs at opset 14", bad_batch_norm_outputs, 14, 4 },
    { "negative epsilon", bad_epsilon, 6, 1 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      if (!cases[i].setup)
        continue;
      InferCase c = { NULL };
      cases[i].setup (&c);
      g_autoptr (GError) error = NULL;
      gboolean ok = infer (&c, cases[i].opset, cases[i].n_outputs, &error);
      if (ok)
        g_error ("case '%s' was accepted", cases[i].what);
      g_assert_nonnull (error);
      g_assert_true (error->domain == OWB_ERROR);
      /* The message names the node. */
      g_assert_nonnull (strstr (error->message, c.node->op_type));
      owb_node_free (c.node);
    }
  /* The same axis that opset 13 refuses is the coercion point before it. */
  InferCase c = { NULL };
  bad_softmax_axis (&c);
  g_autoptr (GError) error = NULL;
  g_assert_true (infer (&c, 11, 1, &error));
  owb_node_free (c.node);
  /* Dropout's ratio/training_mode inputs only exist from opset 12. */
  InferCase d = { owb_node_new ("Dropout", "", "d") };
  infer_input (&d, OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 });
  infer_input (&d, OWB_TYPE_FLOAT, 0, NULL);
  g_assert_false (infer (&d, 11, 1, &error));
  g_clear_error (&error);
  owb_node_free (d.node);
}

/* ---- kernels ---------------------------------------------------------------------------------- */

/* Softmax over x viewed as [outer, n, inner], in double: the reference for the version tests. */
static void
reference_softmax (const OwbTensor *x, int64_t outer, int64_t n, int64_t inner, int op, double *out)
{
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++)
      {
        double max = -INFINITY, sum = 0;
        int64_t arg = 0;
        for (int64_t k = 0; k < n; k++)
          {
            double v = owb_tensor_get_double (x, (o * n + k) * inner + i);
            if (v > max)
              {
                max = v;
                arg = k;
              }
          }
        for (int64_t k = 0; k < n; k++)
          sum += exp (owb_tensor_get_double (x, (o * n + k) * inner + i) - max);
        for (int64_t k = 0; k < n; k++)
          {
            int64_t at = (o * n + k) * inner + i;
            double v = owb_tensor_get_double (x, at);
            out[at] = op == 0 ? exp (v - max) / sum : op == 1 ? v - max - log (sum) : (k == arg ? 1.0 : 0.0);
          }
      }
}

static void
test_softmax_versions (void)
{
  static const char *const ops[] = { "Softmax", "LogSoftmax", "Hardmax" };
  int64_t dims[] = { 2, 3, 4 };
  for (int op = 0; op < 3; op++)
    for (int d = 0; d < 2; d++)
      {
        OwbDataType dtype = d ? OWB_TYPE_DOUBLE : OWB_TYPE_FLOAT;
        g_autoptr (OwbTensor) x = wave (dtype, 3, dims, op);
        double expected[24];
        /* Opset 11, axis 1: rows of 12. */
        OwbNode *node = owb_node_new (ops[op], "", "n");
        tu_set_int (node, "axis", 1);
        g_autoptr (OwbTensor) y11 = run_simple (node, 11, x);
        reference_softmax (x, 2, 12, 1, op, expected);
        assert_values (y11, 24, expected, 1e-5);
        /* Opset 13, axis 1: along the 3 elements of axis 1 (strided). */
        node = owb_node_new (ops[op], "", "n");
        tu_set_int (node, "axis", 1);
        g_autoptr (OwbTensor) y13 = run_simple (node, 13, x);
        reference_softmax (x, 2, 3, 4, op, expected);
        assert_values (y13, 24, expected, 1e-5);
        /* Opset 13 default axis -1; opset 1 default axis 1. */
        node = owb_node_new (ops[op], "", "n");
        g_autoptr (OwbTensor) y13d = run_simple (node, 13, x);
        reference_softmax (x, 6, 4, 1, op, expected);
        assert_values (y13d, 24, expected, 1e-5);
        node = owb_node_new (ops[op], "", "n");
        g_autoptr (OwbTensor) y1 = run_simple (node, 1, x);
        reference_softmax (x, 2, 12, 1, op, expected);
        assert_values (y1, 24, expected, 1e-5);
      }
}

static void
test_softmax_stable (void)
{
  int64_t dims[] = { 1, 3 };
  g_autoptr (OwbTensor) x = tensor (OWB_TYPE_FLOAT, 2, dims, (double[]) { 1000, 1001, 1002 });
  OwbNode *node = owb_node_new ("Softmax", "", "s");
  g_autoptr (OwbTensor) y = run_simple (node, 13, x);
  assert_values (y, 3, (double[]) { 0.09003057, 0.24472847, 0.66524096 }, 1e-5);
  node = owb_node_new ("LogSoftmax", "", "s");
  g_autoptr (OwbTensor) ly = run_simple (node, 13, x);
  assert_values (ly, 3, (double[]) { -2.40760596, -1.40760596, -0.40760596 }, 1e-5);
}

static void
test_max_pool_indices (void)
{
  /* Two channels of 2x3; a 2x2 window sliding along the width. */
  int64_t dims[] = { 1, 2, 2, 3 };
  g_autoptr (OwbTensor) x = tensor (OWB_TYPE_FLOAT, 4, dims, (double[]) { 0, 1, 2, 3, 4, 5, 9, 1, 2, 3, 4, 5 });
  for (int order = 0; order < 2; order++)
    {
      OwbNode *node = owb_node_new ("MaxPool", "", "p");
      tu_set_ints (node, "kernel_shape", 2, (int64_t[]) { 2, 2 });
      tu_set_int (node, "storage_order", order);
      OwbTensor *out[2] = { NULL };
      g_autoptr (GError) error = NULL;
      g_assert_true (run_node (node, 12, 1, &x, 2, out, &error));
      g_assert_no_error (error);
      assert_shape (out[0], 4, (int64_t[]) { 1, 2, 1, 2 });
      assert_values (out[0], 4, (double[]) { 4, 5, 9, 5 }, 0);
      g_assert_cmpint (out[1]->dtype, ==, OWB_TYPE_INT64);
      /* Row-major (h * W + w) or column-major (h + w * H) within a plane, plus the plane offset. */
      const int64_t *idx = out[1]->data;
      const int64_t expect[2][4] = { { 4, 5, 6, 11 }, { 3, 5, 6, 11 } };
      for (int i = 0; i < 4; i++)
        g_assert_cmpint (idx[i], ==, expect[order][i]);
      owb_tensor_unref (out[0]);
      owb_tensor_unref (out[1]);
    }
}

static void
test_max_pool_int8_and_empty (void)
{
  int64_t dims[] = { 1, 1, 2, 2 };
  g_autoptr (OwbTensor) x = tensor (OWB_TYPE_INT8, 4, dims, (double[]) { -128, -100, -128, -128 });
  OwbNode *node = owb_node_new ("MaxPool", "", "p");
  tu_set_ints (node, "kernel_shape", 2, (int64_t[]) { 2, 2 });
  tu_set_ints (node, "pads", 4, (int64_t[]) { 1, 1, 0, 0 });
  g_autoptr (OwbTensor) y = run_simple (node, 12, x);
  g_assert_cmpint (y->dtype, ==, OWB_TYPE_INT8);
  assert_values (y, 4, (double[]) { -128, -100, -128, -100 }, 0);

  /* A batch of 0: no work, no crash. */
  int64_t empty_dims[] = { 0, 2, 4, 4 };
  g_autoptr (OwbTensor) e = tensor (OWB_TYPE_FLOAT, 4, empty_dims, NULL);
  node = owb_node_new ("AveragePool", "", "p");
  tu_set_ints (node, "kernel_shape", 2, (int64_t[]) { 2, 2 });
  tu_set_ints (node, "strides", 2, (int64_t[]) { 2, 2 });
  g_autoptr (OwbTensor) ey = run_simple (node, 19, e);
  assert_shape (ey, 4, (int64_t[]) { 0, 2, 2, 2 });
}

static void
test_average_pool_versions (void)
{
  /* Ones with one pixel of padding all round: each 2x2 window holds one real value. */
  int64_t dims[] = { 1, 1, 2, 2 };
  g_autoptr (OwbTensor) x = tensor (OWB_TYPE_FLOAT, 4, dims, (double[]) { 1, 1, 1, 1 });
  for (int v = 0; v < 2; v++)
    {
      OwbNode *node = owb_node_new ("AveragePool", "", "p");
      tu_set_ints (node, "kernel_shape", 2, (int64_t[]) { 2, 2 });
      tu_set_ints (node, "strides", 2, (int64_t[]) { 2, 2 });
      tu_set_ints (node, "pads", 4, (int64_t[]) { 1, 1, 1, 1 });
      tu_set_int (node, "count_include_pad", 1);
      /* Opset 1 has no count_include_pad: the attribute is not part of the op there. */
      g_autoptr (OwbTensor) y = run_simple (node, v ? 7 : 1, x);
      double want = v ? 0.25 : 1.0;
      assert_values (y, 4, (double[]) { want, want, want, want }, 1e-6);
    }
  /* dilations exist for AveragePool from opset 19. */
  int64_t dims1[] = { 1, 1, 5 };
  g_autoptr (OwbTensor) x1 = tensor (OWB_TYPE_DOUBLE, 3, dims1, (double[]) { 1, 2, 3, 4, 5 });
  OwbNode *node = owb_node_new ("AveragePool", "", "p");
  tu_set_ints (node, "kernel_shape", 1, (int64_t[]) { 2 });
  tu_set_ints (node, "dilations", 1, (int64_t[]) { 2 });
  g_autoptr (OwbTensor) y19 = run_simple (node, 19, x1);
  assert_values (y19, 3, (double[]) { 2, 3, 4 }, 1e-12);
}

static void
test_global_lp_pool (void)
{
  int64_t dims[] = { 1, 2, 2 };
  g_autoptr (OwbTensor) x = tensor (OWB_TYPE_FLOAT, 3, dims, (double[]) { 3, -4, 1, 1 });
  OwbNode *node = owb_node_new ("GlobalLpPool", "", "g");
  g_autoptr (OwbTensor) y = run_simple (node, 2, x);
  assert_shape (y, 3, (int64_t[]) { 1, 2, 1 });
  assert_values (y, 2, (double[]) { 5, sqrt (2) }, 1e-6);
  /* Opset 1 reads p as a float. */
  node = owb_node_new ("GlobalLpPool", "", "g");
  tu_set_float (node, "p", 1.0f);
  g_autoptr (OwbTensor) y1 = run_simple (node, 1, x);
  assert_values (y1, 2, (double[]) { 7, 2 }, 1e-6);
}

static void
test_dropout_versions (void)
{
  int64_t dims[] = { 8 };
  double values[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
  g_autoptr (OwbTensor) x = tensor (OWB_TYPE_FLOAT, 1, dims, values);
  g_autoptr (GError) error = NULL;
  /* Opset 7: mask has X's type; opset 10: bool; both identity at inference. */
  for (int v = 0; v < 2; v++)
    {
      OwbNode *node = owb_node_new ("Dropout", "", "d");
      tu_set_float (node, "ratio", 0.9f);
      OwbTensor *out[2] = { NULL };
      g_assert_true (run_node (node, v ? 10 : 7, 1, &x, 2, out, &error));
      g_assert_no_error (error);
      assert_values (out[0], 8, values, 0);
      g_assert_cmpint (out[1]->dtype, ==, v ? OWB_TYPE_BOOL : OWB_TYPE_FLOAT);
      assert_values (out[1], 8, (double[]) { 1, 1, 1, 1, 1, 1, 1, 1 }, 0);
      owb_tensor_unref (out[0]);
      owb_tensor_unref (out[1]);
    }
  /* Opset 13 training with seed 0 drops as numpy's RandomState(0).uniform: keep where u >= 0.5. */
  g_autoptr (OwbTensor) ratio = owb_tensor_new_scalar_float (0.5f);
  int64_t no_dims[1] = { 0 };
  g_autoptr (OwbTensor) train = owb_tensor_new (OWB_TYPE_BOOL, 0, no_dims, NULL);
  ((uint8_t *) train->data)[0] = 1;
  for (int run = 0; run < 2; run++)
    {
      OwbNode *node = owb_node_new ("Dropout", "", "d");
      tu_set_int (node, "seed", 0);
      OwbTensor *ins[3] = { x, ratio, train };
      OwbTensor *out[2] = { NULL };
      g_assert_true (run_node (node, 13, 3, ins, 2, out, &error));
      g_assert_no_error (error);
      assert_values (out[0], 8, (double[]) { 2, 4, 6, 8, 0, 12, 0, 16 }, 1e-6);
      assert_values (out[1], 8, (double[]) { 1, 1, 1, 1, 0, 1, 0, 1 }, 0);
      owb_tensor_unref (out[0]);
      owb_tensor_unref (out[1]);
    }
  /* A ratio of 1 would divide by zero: refused in training mode. */
  g_autoptr (OwbTensor) one = owb_tensor_new_scalar_float (1.0f);
  OwbNode *node = owb_node_new ("Dropout", "", "d");
  OwbTensor *ins[3] = { x, one, train };
  OwbTensor *y = NULL;
  g_assert_false (run_node (node, 13, 3, ins, 1, &y, &error));
  g_assert_nonnull (error);
  g_assert_null (y);
}

static void
test_batch_normalization_spatial (void)
{
  /* Opset 7 spatial = 0: statistics per element of a sample (C x D), not per channel. */
  int64_t xdims[] = { 2, 2, 2 }, pdims[] = { 2, 2 };
  g_autoptr (OwbTensor) x = tensor (OWB_TYPE_FLOAT, 3, xdims, (double[]) { 1, 2, 3, 4, 5, 6, 7, 8 });
  g_autoptr (OwbTensor) scale = tensor (OWB_TYPE_FLOAT, 2, pdims, (double[]) { 1, 2, 3, 4 });
  g_autoptr (OwbTensor) bias = tensor (OWB_TYPE_FLOAT, 2, pdims, (double[]) { 0, 1, 0, 1 });
  g_autoptr (OwbTensor) mean = tensor (OWB_TYPE_FLOAT, 2, pdims, (double[]) { 1, 1, 2, 2 });
  g_autoptr (OwbTensor) var = tensor (OWB_TYPE_FLOAT, 2, pdims, (double[]) { 4, 1, 4, 1 });
  OwbNode *node = owb_node_new ("BatchNormalization", "", "bn");
  tu_set_int (node, "spatial", 0);
  tu_set_float (node, "epsilon", 0.0f);
  OwbTensor *ins[5] = { x, scale, bias, mean, var };
  OwbTensor *y = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (run_node (node, 7, 5, ins, 1, &y, &error));
  g_assert_no_error (error);
  double expected[8];
  for (int i = 0; i < 8; i++)
    {
      int p = i % 4;
      double s[] = { 1, 2, 3, 4 }, b[] = { 0, 1, 0, 1 }, m[] = { 1, 1, 2, 2 }, v[] = { 4, 1, 4, 1 };
      expected[i] = (i + 1 - m[p]) / sqrt (v[p]) * s[p] + b[p];
    }
  assert_values (y, 8, expected, 1e-6);
  owb_tensor_unref (y);

  /* Opset 14 training: Y uses the batch statistics; running stats blend with momentum. */
  int64_t x2dims[] = { 2, 1 }, cdims[] = { 1 };
  g_autoptr (OwbTensor) x2 = tensor (OWB_TYPE_FLOAT, 2, x2dims, (double[]) { 1, 3 });
  g_autoptr (OwbTensor) one = tensor (OWB_TYPE_FLOAT, 1, cdims, (double[]) { 1 });
  g_autoptr (OwbTensor) zero = tensor (OWB_TYPE_FLOAT, 1, cdims, (double[]) { 0 });
  node = owb_node_new ("BatchNormalization", "", "bn");
  tu_set_int (node, "training_mode", 1);
  tu_set_float (node, "epsilon", 0.0f);
  tu_set_float (node, "momentum", 0.5f);
  OwbTensor *ins2[5] = { x2, one, zero, zero, one };
  OwbTensor *out[3] = { NULL };
  g_assert_true (run_node (node, 14, 5, ins2, 3, out, &error));
  g_assert_no_error (error);
  assert_values (out[0], 2, (double[]) { -1, 1 }, 1e-6);
  assert_values (out[1], 1, (double[]) { 1.0 }, 1e-6);  /* 0 * 0.5 + 2 * 0.5 */
  assert_values (out[2], 1, (double[]) { 1.0 }, 1e-6);  /* 1 * 0.5 + 1 * 0.5 */
  for (int i = 0; i < 3; i++)
    owb_tensor_unref (out[i]);

  /* Before opset 14 the statistics outputs themselves ask for training: 5 outputs, the last two
   * the batch mean and variance; with Y alone it is inference with the given statistics. */
  node = owb_node_new ("BatchNormalization", "", "bn");
  tu_set_float (node, "epsilon", 0.0f);
  tu_set_float (node, "momentum", 0.5f);
  OwbTensor *out5[5] = { NULL };
  g_assert_true (run_node (node, 9, 5, ins2, 5, out5, &error));
  g_assert_no_error (error);
  assert_values (out5[0], 2, (double[]) { -1, 1 }, 1e-6);
  assert_values (out5[1], 1, (double[]) { 1 }, 1e-6);
  assert_values (out5[2], 1, (double[]) { 1 }, 1e-6);
  assert_values (out5[3], 1, (double[]) { 2 }, 1e-6);
  assert_values (out5[4], 1, (double[]) { 1 }, 1e-6);
  for (int i = 0; i < 5; i++)
    owb_tensor_unref (out5[i]);
  node = owb_node_new ("BatchNormalization", "", "bn");
  tu_set_float (node, "epsilon", 0.0f);
  g_assert_true (run_node (node, 9, 5, ins2, 1, &y, &error));
  g_assert_no_error (error);
  assert_values (y, 2, (double[]) { 1, 3 }, 1e-6);
  owb_tensor_unref (y);
}

static void
test_layer_normalization_broadcast (void)
{
  int64_t xdims[] = { 2, 3 }, sdims[] = { 1 };
  g_autoptr (OwbTensor) x = tensor (OWB_TYPE_DOUBLE, 2, xdims, (double[]) { 1, 2, 3, 2, 4, 6 });
  g_autoptr (OwbTensor) scale = tensor (OWB_TYPE_DOUBLE, 1, sdims, (double[]) { 2 });
  OwbNode *node = owb_node_new ("LayerNormalization", "", "ln");
  tu_set_float (node, "epsilon", 0.0f);
  OwbTensor *ins[2] = { x, scale };
  OwbTensor *out[3] = { NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (run_node (node, 17, 2, ins, 3, out, &error));
  g_assert_no_error (error);
  /* Both rows normalize to {-sqrt(1.5), 0, sqrt(1.5)}; the scale of shape [1] broadcasts. */
  double r = sqrt (1.5);
  assert_values (out[0], 6, (double[]) { -2 * r, 0, 2 * r, -2 * r, 0, 2 * r }, 1e-9);
  g_assert_cmpint (out[1]->dtype, ==, OWB_TYPE_FLOAT);
  assert_shape (out[1], 2, (int64_t[]) { 2, 1 });
  assert_values (out[1], 2, (double[]) { 2, 4 }, 1e-6);
  assert_values (out[2], 2, (double[]) { r, sqrt (3.0 / 8.0) }, 1e-6);
  for (int i = 0; i < 3; i++)
    owb_tensor_unref (out[i]);
}

static void
test_group_normalization_versions (void)
{
  /* 4 channels in 2 groups, 2 elements each. */
  int64_t xdims[] = { 1, 4, 2 }, gdims[] = { 2 }, cdims[] = { 4 };
  g_autoptr (OwbTensor) x = tensor (OWB_TYPE_FLOAT, 3, xdims, (double[]) { 0, 2, 0, 2, 1, 1, 3, 3 });
  double norm[8] = { -1, 1, -1, 1, -1, -1, 1, 1 };
  /* Opset 18: one scale/bias per group. */
  g_autoptr (OwbTensor) gs = tensor (OWB_TYPE_FLOAT, 1, gdims, (double[]) { 2, 3 });
  g_autoptr (OwbTensor) gb = tensor (OWB_TYPE_FLOAT, 1, gdims, (double[]) { 0, 1 });
  OwbNode *node = owb_node_new ("GroupNormalization", "", "gn");
  tu_set_int (node, "num_groups", 2);
  tu_set_float (node, "epsilon", 0.0f);
  OwbTensor *ins[3] = { x, gs, gb };
  OwbTensor *y = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (run_node (node, 18, 3, ins, 1, &y, &error));
  g_assert_no_error (error);
  double expected[8];
  for (int i = 0; i < 8; i++)
    expected[i] = norm[i] * (i < 4 ? 2 : 3) + (i < 4 ? 0 : 1);
  assert_values (y, 8, expected, 1e-6);
  owb_tensor_unref (y);
  /* Opset 21: one per channel. */
  g_autoptr (OwbTensor) cs = tensor (OWB_TYPE_FLOAT, 1, cdims, (double[]) { 1, 2, 3, 4 });
  g_autoptr (OwbTensor) cb = tensor (OWB_TYPE_FLOAT, 1, cdims, (double[]) { 0, 0, 0, 1 });
  node = owb_node_new ("GroupNormalization", "", "gn");
  tu_set_int (node, "num_groups", 2);
  tu_set_float (node, "epsilon", 0.0f);
  OwbTensor *ins21[3] = { x, cs, cb };
  g_assert_true (run_node (node, 21, 3, ins21, 1, &y, &error));
  g_assert_no_error (error);
  for (int i = 0; i < 8; i++)
    expected[i] = norm[i] * (i / 2 + 1) + (i / 2 == 3 ? 1 : 0);
  assert_values (y, 8, expected, 1e-6);
  owb_tensor_unref (y);
  /* Opset 18 refuses per-channel parameters. */
  node = owb_node_new ("GroupNormalization", "", "gn");
  tu_set_int (node, "num_groups", 2);
  g_assert_false (run_node (node, 18, 3, ins21, 1, &y, &error));
  g_assert_nonnull (error);
}

static void
test_mvn_axes (void)
{
  int64_t dims[] = { 2, 3 };
  g_autoptr (OwbTensor) x = tensor (OWB_TYPE_FLOAT, 2, dims, (double[]) { 1, 2, 3, 10, 10, 40 });
  OwbNode *node = owb_node_new ("MeanVarianceNormalization", "", "m");
  tu_set_ints (node, "axes", 1, (int64_t[]) { 1 });
  g_autoptr (OwbTensor) y = run_simple (node, 13, x);
  double s0 = sqrt (2.0 / 3.0), s1 = sqrt (200.0);
  assert_values (y, 6, (double[]) { -1 / s0, 0, 1 / s0, -10 / s1, -10 / s1, 20 / s1 }, 1e-5);
  /* Axis 0 (strided statistics). */
  node = owb_node_new ("MeanVarianceNormalization", "", "m");
  tu_set_ints (node, "axes", 1, (int64_t[]) { 0 });
  g_autoptr (OwbTensor) y0 = run_simple (node, 9, x);
  assert_values (y0, 6, (double[]) { -1, -1, -1, 1, 1, 1 }, 1e-5);
}

static void
test_lp_normalization (void)
{
  /* p = 1 along axis 0: the second column is all zeros and stays zero. */
  int64_t dims[] = { 2, 2 };
  g_autoptr (OwbTensor) x = tensor (OWB_TYPE_FLOAT, 2, dims, (double[]) { 1, 0, -3, 0 });
  OwbNode *node = owb_node_new ("LpNormalization", "", "l");
  tu_set_int (node, "axis", 0);
  tu_set_int (node, "p", 1);
  g_autoptr (OwbTensor) y = run_simple (node, 1, x);
  assert_values (y, 4, (double[]) { 0.25, 0, -0.75, 0 }, 1e-6);
}

static void
test_lrn_even_size (void)
{
  /* size 2: each channel sums itself and the next one (floor/ceil of (size-1)/2 = 0/1). */
  int64_t dims[] = { 1, 3, 1 };
  g_autoptr (OwbTensor) x = tensor (OWB_TYPE_DOUBLE, 3, dims, (double[]) { 1, 2, 3 });
  OwbNode *node = owb_node_new ("LRN", "", "l");
  tu_set_int (node, "size", 2);
  tu_set_float (node, "alpha", 2.0f);
  tu_set_float (node, "beta", 1.0f);
  tu_set_float (node, "bias", 1.0f);
  g_autoptr (OwbTensor) y = run_simple (node, 13, x);
  assert_values (y, 3, (double[]) { 1 / (1 + 5.0), 2 / (1 + 13.0), 3 / (1 + 9.0) }, 1e-7);
}

static void
test_float16 (void)
{
  /* float16 runs through the float32 kernels. */
  int64_t dims[] = { 1, 2, 2 };
  g_autoptr (OwbTensor) x = tensor (OWB_TYPE_FLOAT16, 3, dims, (double[]) { 1, 3, -2, 2 });
  OwbNode *node = owb_node_new ("GlobalAveragePool", "", "g");
  g_autoptr (OwbTensor) y = run_simple (node, 22, x);
  g_assert_cmpint (y->dtype, ==, OWB_TYPE_FLOAT16);
  assert_values (y, 2, (double[]) { 2, 0 }, 1e-3);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/norm/infer/symbolic", test_infer_symbolic);
  g_test_add_func ("/norm/infer/bad-attributes", test_bad_attributes);
  g_test_add_func ("/norm/softmax/versions", test_softmax_versions);
  g_test_add_func ("/norm/softmax/stable", test_softmax_stable);
  g_test_add_func ("/norm/pool/max-indices", test_max_pool_indices);
  g_test_add_func ("/norm/pool/max-int8-empty", test_max_pool_int8_and_empty);
  g_test_add_func ("/norm/pool/average-versions", test_average_pool_versions);
  g_test_add_func ("/norm/pool/global-lp", test_global_lp_pool);
  g_test_add_func ("/norm/dropout/versions", test_dropout_versions);
  g_test_add_func ("/norm/batch-normalization/spatial-training", test_batch_normalization_spatial);
  g_test_add_func ("/norm/layer-normalization/broadcast", test_layer_normalization_broadcast);
  g_test_add_func ("/norm/group-normalization/versions", test_group_normalization_versions);
  g_test_add_func ("/norm/mvn/axes", test_mvn_axes);
  g_test_add_func ("/norm/lp-normalization", test_lp_normalization);
  g_test_add_func ("/norm/lrn/even-size", test_lrn_even_size);
  g_test_add_func ("/norm/float16", test_float16);
  return g_test_run ();
}
