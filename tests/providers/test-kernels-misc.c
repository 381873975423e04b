/* test-kernels-misc.c: shape inference and CPU kernels of the misc op family (losses, Unique, Compress,
 * random generators, BitCast, Det, MaxUnpool, CenterCropPad, Col2Im...), on what the ONNX conformance
 * cases leave out: symbolic dims, bad attributes and data, strings, seeded determinism. */
#include <owb/owb.h>

#include <math.h>
#include <string.h>
#include "../engine/test-util.h"
#include "kernel-test-util.h"

/* ---- inference tests ---- */

static void
test_infer_losses (void)
{
  OwbValueType out[2];
  OwbValueType t[3] = { VT (OWB_TYPE_FLOAT, "batch", "5", "len"), VT (OWB_TYPE_INT64, "batch", "len"),
                        VT (OWB_TYPE_FLOAT, "5") };
  g_autoptr (OwbNode) nll = node_new ("NegativeLogLikelihoodLoss", 3, 1);
  g_assert_true (infer_node (nll, 13, t, NULL, out, NULL));
  assert_type (&out[0], "float32[]");
  tu_set_string (nll, "reduction", "none");
  g_assert_true (infer_node (nll, 13, t, NULL, out, NULL));
  assert_type (&out[0], "float32[batch,len]");

  g_autoptr (OwbNode) sce = node_new ("SoftmaxCrossEntropyLoss", 2, 2);
  tu_set_string (sce, "reduction", "sum");
  g_assert_true (infer_node (sce, 13, t, NULL, out, NULL));
  assert_type (&out[0], "float32[]");
  assert_type (&out[1], "float32[batch,5,len]");

  g_autoptr (OwbNode) bad = node_new ("NegativeLogLikelihoodLoss", 3, 1);
  tu_set_string (bad, "reduction", "average");
  assert_infer_fails (bad, 13, t, NULL, "average");

  /* Weights that do not match the classes, a target of the wrong rank, float targets. */
  t[2] = VT (OWB_TYPE_FLOAT, "4");
  assert_infer_fails (nll, 13, t, NULL, "weights");
  t[2] = VT (OWB_TYPE_FLOAT, "5");
  t[1] = VT (OWB_TYPE_INT64, "batch");
  assert_infer_fails (nll, 13, t, NULL, "rank");
  t[1] = VT (OWB_TYPE_FLOAT, "batch", "len");
  assert_infer_fails (nll, 13, t, NULL, "int32 or int64");
}

static void
test_infer_unique_compress (void)
{
  OwbValueType out[4];
  OwbValueType x = VT (OWB_TYPE_FLOAT, "batch", "4");
  g_autoptr (OwbNode) u = node_new ("Unique", 1, 4);
  g_assert_true (infer_node (u, 11, &x, NULL, out, NULL));
  assert_type (&out[0], "float32[?]");
  assert_type (&out[1], "int64[?]");
  assert_type (&out[2], "int64[?]");
  assert_type (&out[3], "int64[?]");
  tu_set_int (u, "axis", -1);
  g_assert_true (infer_node (u, 11, &x, NULL, out, NULL));
  assert_type (&out[0], "float32[batch,?]");
  assert_type (&out[2], "int64[4]");
  g_autoptr (OwbNode) u2 = node_new ("Unique", 1, 1);
  tu_set_int (u2, "axis", 2);
  assert_infer_fails (u2, 11, &x, NULL, "out of range");

  /* Compress: a constant condition fixes the size; one true past the end is an error. */
  OwbValueType ct[2] = { VT (OWB_TYPE_INT32, "batch", "4"), VT (OWB_TYPE_BOOL, "3") };
  g_autoptr (OwbTensor) cond = tu_vector (OWB_TYPE_BOOL, 3, (uint8_t[]) { 1, 0, 1 });
  OwbTensor *values[2] = { NULL, cond };
  g_autoptr (OwbNode) c = node_new ("Compress", 2, 1);
  tu_set_int (c, "axis", 1);
  g_assert_true (infer_node (c, 11, ct, values, out, NULL));
  assert_type (&out[0], "int32[batch,2]");
  g_autoptr (OwbTensor) far = tu_vector (OWB_TYPE_BOOL, 6, (uint8_t[]) { 0, 0, 0, 0, 0, 1 });
  values[1] = far;
  ct[1] = VT (OWB_TYPE_BOOL, "6");
  assert_infer_fails (c, 11, ct, values, "past");
  /* No axis: flattened; unknown condition value leaves the length unknown. */
  g_autoptr (OwbNode) flat = node_new ("Compress", 2, 1);
  g_assert_true (infer_node (flat, 11, ct, NULL, out, NULL));
  assert_type (&out[0], "int32[?]");
  ct[1] = VT (OWB_TYPE_INT64, "6");
  assert_infer_fails (flat, 11, ct, NULL, "bool");
}

static void
test_infer_generators (void)
{
  OwbValueType out[1];
  g_autoptr (OwbNode) ru = node_new ("RandomUniform", 0, 1);
  assert_infer_fails (ru, 22, NULL, NULL, "shape");
  tu_set_ints (ru, "shape", 2, (int64_t[]) { 3, 4 });
  g_assert_true (infer_node (ru, 22, NULL, NULL, out, NULL));
  assert_type (&out[0], "float32[3,4]");
  tu_set_int (ru, "dtype", OWB_TYPE_INT32);
  assert_infer_fails (ru, 22, NULL, NULL, "dtype");

  g_autoptr (OwbNode) neg = node_new ("RandomNormal", 0, 1);
  tu_set_ints (neg, "shape", 2, (int64_t[]) { 3, -4 });
  assert_infer_fails (neg, 22, NULL, NULL, "negative");

  /* *Like from an integer input needs a float dtype. */
  OwbValueType x = VT (OWB_TYPE_INT32, "batch", "7");
  g_autoptr (OwbNode) like = node_new ("RandomNormalLike", 1, 1);
  assert_infer_fails (like, 22, &x, NULL, "dtype");
  tu_set_int (like, "dtype", OWB_TYPE_DOUBLE);
  g_assert_true (infer_node (like, 22, &x, NULL, out, NULL));
  assert_type (&out[0], "float64[batch,7]");

  OwbValueType p = VT (OWB_TYPE_FLOAT, "batch", "10");
  g_autoptr (OwbNode) m = node_new ("Multinomial", 1, 1);
  tu_set_int (m, "sample_size", 6);
  g_assert_true (infer_node (m, 7, &p, NULL, out, NULL));
  assert_type (&out[0], "int32[batch,6]");
  tu_set_int (m, "sample_size", 0);
  assert_infer_fails (m, 7, &p, NULL, "sample_size");

  g_autoptr (OwbNode) b = node_new ("Bernoulli", 1, 1);
  tu_set_int (b, "dtype", OWB_TYPE_STRING);
  assert_infer_fails (b, 15, &p, NULL, "dtype");

  g_autoptr (OwbNode) eye = node_new ("EyeLike", 1, 1);
  OwbValueType e = VT (OWB_TYPE_INT32, "rows", "cols");
  g_assert_true (infer_node (eye, 9, &e, NULL, out, NULL));
  assert_type (&out[0], "int32[rows,cols]");
  OwbValueType e3 = VT (OWB_TYPE_INT32, "2", "2", "2");
  assert_infer_fails (eye, 9, &e3, NULL, "rank");
}

static void
test_infer_shapes (void)
{
  OwbValueType out[1];
  /* BitCast keeps the shape and needs equal widths. */
  OwbValueType f = VT (OWB_TYPE_FLOAT, "batch", "3");
  g_autoptr (OwbNode) bc = node_new ("BitCast", 1, 1);
  assert_infer_fails (bc, 26, &f, NULL, "to");
  tu_set_int (bc, "to", OWB_TYPE_UINT32);
  g_assert_true (infer_node (bc, 26, &f, NULL, out, NULL));
  assert_type (&out[0], "uint32[batch,3]");
  g_autoptr (OwbNode) bc2 = node_new ("BitCast", 1, 1);
  tu_set_int (bc2, "to", OWB_TYPE_INT64);
  assert_infer_fails (bc2, 26, &f, NULL, "bits");

  OwbValueType m = VT (OWB_TYPE_DOUBLE, "batch", "n", "n");
  g_autoptr (OwbNode) det = node_new ("Det", 1, 1);
  g_assert_true (infer_node (det, 11, &m, NULL, out, NULL));
  assert_type (&out[0], "float64[batch]");
  OwbValueType nsq = VT (OWB_TYPE_DOUBLE, "2", "3");
  assert_infer_fails (det, 11, &nsq, NULL, "square");

  OwbValueType mu[3] = { VT (OWB_TYPE_FLOAT, "batch", "3", "2", "5"), VT (OWB_TYPE_INT64, "batch", "3", "2", "5"),
                         VT (OWB_TYPE_INT64, "4") };
  g_autoptr (OwbNode) unpool = node_new ("MaxUnpool", 2, 1);
  tu_set_ints (unpool, "kernel_shape", 2, (int64_t[]) { 2, 3 });
  tu_set_ints (unpool, "strides", 2, (int64_t[]) { 2, 2 });
  tu_set_ints (unpool, "pads", 4, (int64_t[]) { 0, 1, 0, 0 });
  g_assert_true (infer_node (unpool, 11, mu, NULL, out, NULL));
  assert_type (&out[0], "float32[batch,3,4,10]");
  g_autoptr (OwbNode) unpool3 = node_new ("MaxUnpool", 3, 1);
  tu_set_ints (unpool3, "kernel_shape", 2, (int64_t[]) { 2, 2 });
  g_autoptr (OwbTensor) shape = tu_vector (OWB_TYPE_INT64, 3, (int64_t[]) { 1, 3, 8 });
  OwbTensor *sv[3] = { NULL, NULL, shape };
  mu[2] = VT (OWB_TYPE_INT64, "3");
  assert_infer_fails (unpool3, 11, mu, sv, "output_shape");
  tu_set_ints (unpool3, "kernel_shape", 1, (int64_t[]) { 2 });
  assert_infer_fails (unpool3, 11, mu, NULL, "kernel_shape");

  /* CenterCropPad: listed axes take the shape's values, the others pass through. */
  OwbValueType cc[2] = { VT (OWB_TYPE_STRING, "h", "w", "3"), VT (OWB_TYPE_INT64, "2") };
  g_autoptr (OwbNode) crop = node_new ("CenterCropPad", 2, 1);
  tu_set_ints (crop, "axes", 2, (int64_t[]) { 0, -2 });
  g_autoptr (OwbTensor) size = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 5, 7 });
  OwbTensor *cv[2] = { NULL, size };
  g_assert_true (infer_node (crop, 18, cc, cv, out, NULL));
  assert_type (&out[0], "string[5,7,3]");
  g_assert_true (infer_node (crop, 18, cc, NULL, out, NULL));
  assert_type (&out[0], "string[?,?,3]");
  g_autoptr (OwbNode) crop2 = node_new ("CenterCropPad", 2, 1);
  tu_set_ints (crop2, "axes", 2, (int64_t[]) { 1, -2 });
  assert_infer_fails (crop2, 18, cc, cv, "repeated");

  /* Col2Im: the block count must match the input's last dim. */
  OwbValueType ci[3] = { VT (OWB_TYPE_FLOAT, "batch", "8", "9"), VT (OWB_TYPE_INT64, "2"), VT (OWB_TYPE_INT64, "2") };
  g_autoptr (OwbTensor) img = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 4, 4 });
  g_autoptr (OwbTensor) blk = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 2, 2 });
  OwbTensor *civ[3] = { NULL, img, blk };
  g_autoptr (OwbNode) col = node_new ("Col2Im", 3, 1);
  g_assert_true (infer_node (col, 18, ci, civ, out, NULL));
  assert_type (&out[0], "float32[batch,2,4,4]");
  ci[0] = VT (OWB_TYPE_FLOAT, "batch", "8", "10");
  assert_infer_fails (col, 18, ci, civ, "blocks");
  ci[0] = VT (OWB_TYPE_FLOAT, "batch", "6", "9");
  assert_infer_fails (col, 18, ci, civ, "multiple");
  g_assert_true (infer_node (col, 18, ci, NULL, out, NULL));
  assert_type (&out[0], "float32[batch,?,?,?]");
  tu_set_ints (col, "strides", 1, (int64_t[]) { 1 });
  assert_infer_fails (col, 18, ci, civ, "strides");

  g_autoptr (OwbNode) rs = node_new ("ReverseSequence", 2, 1);
  OwbValueType rt[2] = { VT (OWB_TYPE_FLOAT, "3", "4"), VT (OWB_TYPE_INT64, "4") };
  tu_set_int (rs, "batch_axis", 0);
  assert_infer_fails (rs, 10, rt, NULL, "time_axis");
  tu_set_int (rs, "time_axis", 1);
  assert_infer_fails (rs, 10, rt, NULL, "sequence_lens");
}

/* ---- kernels, through a session ---- */

typedef OneNodeInput In;

static OwbTensor *
strings_tensor (int n, const char *const *v)
{
  int64_t dims[1] = { n };
  OwbTensor *t = owb_tensor_new (OWB_TYPE_STRING, 1, dims, NULL);
  for (int i = 0; i < n; i++)
    ((char **) t->data)[i] = g_strdup (v[i]);
  return t;
}

static void
assert_doubles (const OwbTensor *t, int n, const double *expected, double tol)
{
  g_assert_cmpint (t->nelems, ==, n);
  for (int i = 0; i < n; i++)
    if (!(fabs (owb_tensor_get_double (t, i) - expected[i]) <= tol))
      g_error ("element %d: expected %.17g, got %.17g", i, expected[i], owb_tensor_get_double (t, i));
}

static void
assert_strings (const OwbTensor *t, int n, const char *const *expected)
{
  g_assert_cmpint (t->dtype, ==, OWB_TYPE_STRING);
  g_assert_cmpint (t->nelems, ==, n);
  for (int i = 0; i < n; i++)
    g_assert_cmpstr (((char **) t->data)[i], ==, expected[i]);
}

static void
test_losses (void)
{
  g_autoptr (GError) error = NULL;
  OwbTensor *out[2] = { 0 };
  /* (N=2, C=3): log-probabilities given directly; target 1 of row 0 is ignored. */
  float lp[] = { -1.0f, -2.0f, -3.0f, -0.5f, -1.5f, -2.5f };
  int64_t target_v[] = { 1, 2 };
  float w[] = { 1.0f, 2.0f, 4.0f };
  g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 3 }, lp);
  g_autoptr (OwbTensor) target = tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]) { 2 }, target_v);
  g_autoptr (OwbTensor) weight = tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 }, w);
  In in[3] = { { x, TRUE }, { target, TRUE }, { weight, TRUE } };

  OwbNode *nll = node_new ("NegativeLogLikelihoodLoss", 3, 1);
  tu_set_int (nll, "ignore_index", 1);
  g_assert_true (one_node_run (nll, 13, in, 1, out, &error));
  g_assert_no_error (error);
  /* Only row 1 counts: 4 * 2.5 / 4. */
  assert_doubles (out[0], 1, (double[]) { 2.5 }, 1e-6);
  clear_outputs (out, 1);

  /* Every target ignored: mean divides 0 by 0, as the reference does. */
  int64_t all1[] = { 1, 1 };
  g_autoptr (OwbTensor) ignored = tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]) { 2 }, all1);
  In in2[3] = { { x, TRUE }, { ignored, TRUE }, { weight, TRUE } };
  OwbNode *nll2 = node_new ("NegativeLogLikelihoodLoss", 3, 1);
  tu_set_int (nll2, "ignore_index", 1);
  g_assert_true (one_node_run (nll2, 13, in2, 1, out, &error));
  g_assert_true (isnan (owb_tensor_get_double (out[0], 0)));
  clear_outputs (out, 1);

  /* A target outside [0, C) that is not ignored is an error, not a read past the end. */
  int64_t far[] = { 0, 3 };
  g_autoptr (OwbTensor) bad = tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]) { 2 }, far);
  In in3[3] = { { x, TRUE }, { bad, TRUE }, { weight, TRUE } };
  g_assert_false (one_node_run (node_new ("NegativeLogLikelihoodLoss", 3, 1), 13, in3, 1, out, &error));
  g_assert_nonnull (strstr (error->message, "target 3"));
  g_clear_error (&error);

  /* SCE without the log_prob output, sum over int32 targets. */
  int32_t t32[] = { 0, 2 };
  g_autoptr (OwbTensor) target32 = tu_new_tensor (OWB_TYPE_INT32, 1, (int64_t[]) { 2 }, t32);
  In in4[2] = { { x, TRUE }, { target32, TRUE } };
  OwbNode *sce = node_new ("SoftmaxCrossEntropyLoss", 2, 1);
  tu_set_string (sce, "reduction", "sum");
  g_assert_true (one_node_run (sce, 13, in4, 1, out, &error));
  g_assert_no_error (error);
  double l0 = log (exp (-1.0) + exp (-2.0) + exp (-3.0)) + 1.0;
  double l1 = log (exp (-0.5) + exp (-1.5) + exp (-2.5)) + 2.5;
  assert_doubles (out[0], 1, (double[]) { l0 + l1 }, 1e-5);
  clear_outputs (out, 1);
}

static void
test_cumprod (void)
{
  g_autoptr (GError) error = NULL;
  OwbTensor *out = NULL;
  int64_t v[] = { 1, 2, 3, 4, 5, 6 };
  g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_INT64, 2, (int64_t[]) { 2, 3 }, v);
  g_autoptr (OwbTensor) axis = owb_tensor_new_scalar_int64 (-1);
  In in[2] = { { x, TRUE }, { axis, FALSE } };
  OwbNode *node = node_new ("CumProd", 2, 1);
  tu_set_int (node, "exclusive", 1);
  tu_set_int (node, "reverse", 1);
  g_assert_true (one_node_run (node, 26, in, 1, &out, &error));
  g_assert_no_error (error);
  assert_ints (out, 6, (int64_t[]) { 6, 3, 1, 30, 6, 1 });
  g_clear_pointer (&out, owb_tensor_unref);

  g_autoptr (OwbTensor) axis2 = owb_tensor_new_scalar_int64 (2);
  In bad[2] = { { x, TRUE }, { axis2, TRUE } };
  g_assert_false (one_node_run (node_new ("CumProd", 2, 1), 26, bad, 1, &out, &error));
  g_assert_nonnull (error);
}

static void
test_unique (void)
{
  g_autoptr (GError) error = NULL;
  OwbTensor *out[4] = { 0 };
  const char *words[] = { "pear", "apple", "pear", "fig", "apple", "" };
  g_autoptr (OwbTensor) s = strings_tensor (6, words);
  In in[1] = { { s, TRUE } };
  OwbNode *node = node_new ("Unique", 1, 4);
  tu_set_int (node, "sorted", 0);
  g_assert_true (one_node_run (node, 11, in, 4, out, &error));
  g_assert_no_error (error);
  assert_strings (out[0], 4, (const char *[]) { "pear", "apple", "fig", "" });
  assert_ints (out[1], 4, (int64_t[]) { 0, 1, 3, 5 });
  assert_ints (out[2], 6, (int64_t[]) { 0, 1, 0, 2, 1, 3 });
  assert_ints (out[3], 4, (int64_t[]) { 2, 2, 1, 1 });
  clear_outputs (out, 4);

  /* Columns (axis 1) of a 2x4 matrix, sorted; NaN compares greater than numbers and equal to itself. */
  double m[] = { 1, NAN, 1, NAN, 0, 2, 0, 2 };
  g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_DOUBLE, 2, (int64_t[]) { 2, 4 }, m);
  In xin[1] = { { x, TRUE } };
  OwbNode *ax = node_new ("Unique", 1, 4);
  tu_set_int (ax, "axis", 1);
  g_assert_true (one_node_run (ax, 11, xin, 4, out, &error));
  g_assert_no_error (error);
  g_assert_cmpint (out[0]->rank, ==, 2);
  g_assert_cmpint (out[0]->dims[0], ==, 2);
  g_assert_cmpint (out[0]->dims[1], ==, 2);
  g_assert_cmpfloat (((double *) out[0]->data)[0], ==, 1.0);
  g_assert_true (isnan (((double *) out[0]->data)[1]));
  assert_ints (out[1], 2, (int64_t[]) { 0, 1 });
  assert_ints (out[2], 4, (int64_t[]) { 0, 1, 0, 1 });
  assert_ints (out[3], 2, (int64_t[]) { 2, 2 });
  clear_outputs (out, 4);

  /* An empty input gives empty outputs; only Y asked for. */
  g_autoptr (OwbTensor) empty = tu_new_tensor (OWB_TYPE_INT32, 1, (int64_t[]) { 0 }, NULL);
  In ein[1] = { { empty, TRUE } };
  g_assert_true (one_node_run (node_new ("Unique", 1, 1), 11, ein, 1, out, &error));
  g_assert_no_error (error);
  g_assert_cmpint (out[0]->nelems, ==, 0);
  clear_outputs (out, 1);
}

static void
test_compress_reverse (void)
{
  g_autoptr (GError) error = NULL;
  OwbTensor *out = NULL;
  const char *words[] = { "a", "b", "c", "d", "e", "f" };
  g_autoptr (OwbTensor) s1 = strings_tensor (6, words);
  g_autoptr (OwbTensor) s = owb_tensor_new_view (s1, 2, (int64_t[]) { 3, 2 }, NULL);
  g_autoptr (OwbTensor) cond = tu_vector (OWB_TYPE_BOOL, 2, (uint8_t[]) { 0, 1 });
  In in[2] = { { s, TRUE }, { cond, TRUE } };
  OwbNode *node = node_new ("Compress", 2, 1);
  tu_set_int (node, "axis", -1);
  g_assert_true (one_node_run (node, 11, in, 1, &out, &error));
  g_assert_no_error (error);
  assert_strings (out, 3, (const char *[]) { "b", "d", "f" });
  g_clear_pointer (&out, owb_tensor_unref);

  g_autoptr (OwbTensor) far = tu_vector (OWB_TYPE_BOOL, 4, (uint8_t[]) { 0, 0, 0, 1 });
  In fin[2] = { { s, TRUE }, { far, TRUE } };
  OwbNode *n2 = node_new ("Compress", 2, 1);
  tu_set_int (n2, "axis", 1);
  g_assert_false (one_node_run (n2, 11, fin, 1, &out, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);

  /* ReverseSequence over strings, batch on axis 1; lengths past the time axis are refused. */
  g_autoptr (OwbTensor) lens = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 3, 1 });
  In rin[2] = { { s, TRUE }, { lens, TRUE } };
  g_assert_true (one_node_run (node_new ("ReverseSequence", 2, 1), 10, rin, 1, &out, &error));
  g_assert_no_error (error);
  assert_strings (out, 6, (const char *[]) { "e", "b", "c", "d", "a", "f" });
  g_clear_pointer (&out, owb_tensor_unref);
  g_autoptr (OwbTensor) long_lens = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 4, 1 });
  In lin[2] = { { s, TRUE }, { long_lens, TRUE } };
  g_assert_false (one_node_run (node_new ("ReverseSequence", 2, 1), 10, lin, 1, &out, &error));
  g_assert_nonnull (strstr (error->message, "sequence length 4"));
}

static void
test_eye_bitcast_det (void)
{
  g_autoptr (GError) error = NULL;
  OwbTensor *out = NULL;
  g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { 3, 2 }, NULL);
  In in[1] = { { x, TRUE } };
  OwbNode *eye = node_new ("EyeLike", 1, 1);
  tu_set_int (eye, "k", -1);
  tu_set_int (eye, "dtype", OWB_TYPE_FLOAT16);
  g_assert_true (one_node_run (eye, 9, in, 1, &out, &error));
  g_assert_no_error (error);
  g_assert_cmpint (out->dtype, ==, OWB_TYPE_FLOAT16);
  assert_doubles (out, 6, (double[]) { 0, 0, 1, 0, 0, 1 }, 0);
  g_clear_pointer (&out, owb_tensor_unref);
  /* A diagonal entirely outside the matrix (huge k) gives zeros. */
  OwbNode *far = node_new ("EyeLike", 1, 1);
  tu_set_int (far, "k", G_MININT64);
  g_assert_true (one_node_run (far, 9, in, 1, &out, &error));
  assert_doubles (out, 6, (double[]) { 0, 0, 0, 0, 0, 0 }, 0);
  g_clear_pointer (&out, owb_tensor_unref);

  float f[] = { 1.0f, -2.0f };
  g_autoptr (OwbTensor) fx = tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 }, f);
  In fin[1] = { { fx, TRUE } };
  OwbNode *bc = node_new ("BitCast", 1, 1);
  tu_set_int (bc, "to", OWB_TYPE_UINT32);
  g_assert_true (one_node_run (bc, 26, fin, 1, &out, &error));
  g_assert_no_error (error);
  assert_ints (out, 2, (int64_t[]) { 0x3f800000, 0xc0000000 });
  g_clear_pointer (&out, owb_tensor_unref);

  /* 3x3 needing a pivot, a singular 2x2 and an empty 0x0 (determinant 1). */
  double m3[] = { 0, 2, 1, 1, 1, 0, 3, 0, 1 };
  g_autoptr (OwbTensor) a = tu_new_tensor (OWB_TYPE_DOUBLE, 2, (int64_t[]) { 3, 3 }, m3);
  In ain[1] = { { a, TRUE } };
  g_assert_true (one_node_run (node_new ("Det", 1, 1), 11, ain, 1, &out, &error));
  g_assert_no_error (error);
  assert_doubles (out, 1, (double[]) { -5.0 }, 1e-12);
  g_clear_pointer (&out, owb_tensor_unref);
  float sing[] = { 1, 2, 2, 4, 1, 0, 0, 1 };
  g_autoptr (OwbTensor) b = tu_new_tensor (OWB_TYPE_FLOAT, 3, (int64_t[]) { 2, 2, 2 }, sing);
  In bin[1] = { { b, TRUE } };
  g_assert_true (one_node_run (node_new ("Det", 1, 1), 11, bin, 1, &out, &error));
  assert_doubles (out, 2, (double[]) { 0.0, 1.0 }, 1e-6);
  g_clear_pointer (&out, owb_tensor_unref);
  g_autoptr (OwbTensor) e = tu_new_tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { 0, 0 }, NULL);
  In ein[1] = { { e, TRUE } };
  g_assert_true (one_node_run (node_new ("Det", 1, 1), 11, ein, 1, &out, &error));
  assert_doubles (out, 1, (double[]) { 1.0 }, 0);
  g_clear_pointer (&out, owb_tensor_unref);
}

static void
test_random (void)
{
  g_autoptr (GError) error = NULL;
  OwbTensor *out = NULL, *again = NULL;
  In none[1] = { { 0 } };

  /* Seeded: numpy's RandomState(5).randn(6), the same at every run. */
  OwbNode *rn = node_new ("RandomNormal", 0, 1);
  tu_set_ints (rn, "shape", 2, (int64_t[]) { 2, 3 });
  tu_set_int (rn, "dtype", OWB_TYPE_DOUBLE);
  tu_set_float (rn, "seed", 5.0f);
  g_autoptr (OwbSession) session = one_node_session_new (rn, 22, none, 2, &error);
  g_assert_no_error (error);
  g_assert_true (one_node_session_run (session, none, 1, &out, &error));
  g_assert_true (one_node_session_run (session, none, 1, &again, &error));
  double expected[] = { 0.44122748688504143, -0.33087015189408764, 2.43077118700778,
                        -0.2520921296030769, 0.10960984157818278, 1.5824811170615634 };
  assert_doubles (out, 6, expected, 1e-15);
  assert_doubles (again, 6, expected, 1e-15);
  g_clear_pointer (&out, owb_tensor_unref);
  g_clear_pointer (&again, owb_tensor_unref);

  /* RandomUniformLike in float: the draw is rounded, then scaled by high - low and shifted by low. */
  g_autoptr (OwbTensor) like = tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 }, NULL);
  In lin[1] = { { like, TRUE } };
  OwbNode *ru = node_new ("RandomUniformLike", 1, 1);
  tu_set_float (ru, "low", -1.0f);
  tu_set_float (ru, "high", 2.0f);
  tu_set_float (ru, "seed", 7.0f);
  g_assert_true (one_node_run (ru, 22, lin, 1, &out, &error));
  g_assert_no_error (error);
  assert_doubles (out, 4, (double[]) { -0.7710751f, 1.3397565f, 0.31522775f, 1.1703956f }, 0);
  g_clear_pointer (&out, owb_tensor_unref);

  /* Unseeded: a generator per node, so two runs differ. */
  OwbNode *free_rn = node_new ("RandomUniform", 0, 1);
  tu_set_ints (free_rn, "shape", 1, (int64_t[]) { 64 });
  g_autoptr (OwbSession) s2 = one_node_session_new (free_rn, 22, none, 2, &error);
  g_assert_true (one_node_session_run (s2, none, 1, &out, &error));
  g_assert_true (one_node_session_run (s2, none, 1, &again, &error));
  g_assert_cmpint (memcmp (out->data, again->data, out->nbytes), !=, 0);
  for (int i = 0; i < 64; i++)
    g_assert_true (((float *) out->data)[i] >= 0.0f && ((float *) out->data)[i] < 1.0f);
  g_clear_pointer (&out, owb_tensor_unref);
  g_clear_pointer (&again, owb_tensor_unref);

  /* Bernoulli with a seed draws numpy's RandomState(3).binomial(1, p), here into int32. */
  double p[] = { 0.1, 0.9, 0.5, 0.3, 0.7, 0.0, 1.0, 0.45 };
  g_autoptr (OwbTensor) px = tu_new_tensor (OWB_TYPE_DOUBLE, 1, (int64_t[]) { 8 }, p);
  In pin[1] = { { px, TRUE } };
  OwbNode *be = node_new ("Bernoulli", 1, 1);
  tu_set_float (be, "seed", 3.0f);
  tu_set_int (be, "dtype", OWB_TYPE_INT32);
  g_assert_true (one_node_run (be, 15, pin, 1, &out, &error));
  g_assert_no_error (error);
  g_assert_cmpint (out->dtype, ==, OWB_TYPE_INT32);
  assert_ints (out, 8, (int64_t[]) { 0, 1, 0, 0, 0, 0, 1, 0 });
  g_clear_pointer (&out, owb_tensor_unref);
  double badp[] = { 0.5, 1.5 };
  g_autoptr (OwbTensor) bx = tu_new_tensor (OWB_TYPE_DOUBLE, 1, (int64_t[]) { 2 }, badp);
  In bin[1] = { { bx, TRUE } };
  g_assert_false (one_node_run (node_new ("Bernoulli", 1, 1), 15, bin, 1, &out, &error));
  g_assert_nonnull (strstr (error->message, "probability"));
  g_clear_error (&error);

  /* Multinomial: a class with probability 0 (log -inf) is never drawn; a seed repeats the draw. */
  float logits[] = { 0.0f, -INFINITY, 0.0f, -INFINITY, -INFINITY, 3.0f };
  g_autoptr (OwbTensor) lx = tu_new_tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 3 }, logits);
  In min[1] = { { lx, TRUE } };
  OwbNode *mn = node_new ("Multinomial", 1, 1);
  tu_set_int (mn, "sample_size", 50);
  tu_set_int (mn, "dtype", OWB_TYPE_INT64);
  tu_set_float (mn, "seed", 11.0f);
  g_autoptr (OwbSession) s3 = one_node_session_new (mn, 7, min, 2, &error);
  g_assert_true (one_node_session_run (s3, min, 1, &out, &error));
  g_assert_true (one_node_session_run (s3, min, 1, &again, &error));
  g_assert_cmpint (out->dims[1], ==, 50);
  g_assert_cmpint (memcmp (out->data, again->data, out->nbytes), ==, 0);
  int seen[3] = { 0 };
  for (int i = 0; i < 50; i++)
    {
      int64_t c = ((int64_t *) out->data)[i];
      g_assert_true (c == 0 || c == 2);
      seen[c]++;
      g_assert_cmpint (((int64_t *) out->data)[50 + i], ==, 2);
    }
  g_assert_cmpint (seen[0], >, 0);
  g_assert_cmpint (seen[2], >, 0);
  g_clear_pointer (&out, owb_tensor_unref);
  g_clear_pointer (&again, owb_tensor_unref);
}

static void
test_unpool_crop_col2im (void)
{
  g_autoptr (GError) error = NULL;
  OwbTensor *out = NULL;
  float v[] = { 1, 2 };
  int64_t idx[] = { 3, 4 };
  g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 1, 2 }, v);
  g_autoptr (OwbTensor) ind = tu_new_tensor (OWB_TYPE_INT64, 3, (int64_t[]) { 1, 1, 2 }, idx);
  In in[2] = { { x, TRUE }, { ind, TRUE } };
  OwbNode *node = node_new ("MaxUnpool", 2, 1);
  tu_set_ints (node, "kernel_shape", 1, (int64_t[]) { 3 });
  tu_set_ints (node, "strides", 1, (int64_t[]) { 2 });
  g_assert_true (one_node_run (node, 11, in, 1, &out, &error));
  g_assert_no_error (error);
  assert_doubles (out, 5, (double[]) { 0, 0, 0, 1, 2 }, 0);
  g_clear_pointer (&out, owb_tensor_unref);
  int64_t far_idx[] = { 3, 5 };
  g_autoptr (OwbTensor) far = tu_new_tensor (OWB_TYPE_INT64, 3, (int64_t[]) { 1, 1, 2 }, far_idx);
  In fin[2] = { { x, TRUE }, { far, TRUE } };
  OwbNode *n2 = node_new ("MaxUnpool", 2, 1);
  tu_set_ints (n2, "kernel_shape", 1, (int64_t[]) { 3 });
  tu_set_ints (n2, "strides", 1, (int64_t[]) { 2 });
  g_assert_false (one_node_run (n2, 11, fin, 1, &out, &error));
  g_assert_nonnull (strstr (error->message, "index 5"));
  g_clear_error (&error);

  /* CenterCropPad on strings: crop 5 -> 2 starts at 1, pad 1 -> 4 puts the value at 1. */
  const char *w[] = { "a", "b", "c", "d", "e" };
  g_autoptr (OwbTensor) s1 = strings_tensor (5, w);
  g_autoptr (OwbTensor) s = owb_tensor_new_view (s1, 2, (int64_t[]) { 5, 1 }, NULL);
  g_autoptr (OwbTensor) shape = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 2, 4 });
  In cin[2] = { { s, TRUE }, { shape, FALSE } };
  g_assert_true (one_node_run (node_new ("CenterCropPad", 2, 1), 18, cin, 1, &out, &error));
  g_assert_no_error (error);
  g_assert_cmpint (out->dims[0], ==, 2);
  g_assert_cmpint (out->dims[1], ==, 4);
  const char *const *got = (const char *const *) out->data;
  /* Padding is the empty string (NULL or ""). */
  const char *want[] = { "", "b", "", "", "", "c", "", "" };
  for (int i = 0; i < 8; i++)
    g_assert_cmpstr (got[i] ? got[i] : "", ==, want[i]);
  g_clear_pointer (&out, owb_tensor_unref);

  /* Col2Im 1-D with stride 2 and overlap: blocks of 3 on a 5-long image, columns summed. */
  float cols[] = { 1, 10, 2, 20, 3, 30 }; /* (N=1, C*K=3, L=2) */
  g_autoptr (OwbTensor) cx = tu_new_tensor (OWB_TYPE_FLOAT, 3, (int64_t[]) { 1, 3, 2 }, cols);
  g_autoptr (OwbTensor) img = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 5 });
  g_autoptr (OwbTensor) blk = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 3 });
  In col_in[3] = { { cx, TRUE }, { img, FALSE }, { blk, FALSE } };
  OwbNode *col = node_new ("Col2Im", 3, 1);
  tu_set_ints (col, "strides", 1, (int64_t[]) { 2 });
  g_assert_true (one_node_run (col, 18, col_in, 1, &out, &error));
  g_assert_no_error (error);
  g_assert_cmpint (out->rank, ==, 3);
  assert_doubles (out, 5, (double[]) { 1, 2, 13, 20, 30 }, 0);
  g_clear_pointer (&out, owb_tensor_unref);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/misc/infer/losses", test_infer_losses);
  g_test_add_func ("/misc/infer/unique-compress", test_infer_unique_compress);
  g_test_add_func ("/misc/infer/generators", test_infer_generators);
  g_test_add_func ("/misc/infer/shapes", test_infer_shapes);
  g_test_add_func ("/misc/kernel/losses", test_losses);
  g_test_add_func ("/misc/kernel/cumprod", test_cumprod);
  g_test_add_func ("/misc/kernel/unique", test_unique);
  g_test_add_func ("/misc/kernel/compress-reverse", test_compress_reverse);
  g_test_add_func ("/misc/kernel/eye-bitcast-det", test_eye_bitcast_det);
  g_test_add_func ("/misc/kernel/random", test_random);
  g_test_add_func ("/misc/kernel/unpool-crop-col2im", test_unpool_crop_col2im);
  return g_test_run ();
}
