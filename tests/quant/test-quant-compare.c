/* test-quant-compare.c: the accuracy comparison: identical models compare equal, a QDQ pair is
 * matched and its SQNR equals one computed here from the data, outputs pair by position, top-1
 * agreement and label accuracy on samples whose answer is known, shape mismatches skipped,
 * non-finite values counted apart, errors and cancellation. */
#include <owb/owb-quant.h>
#include "../engine/test-util.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#define N 8

/* Two samples of x [1, N], chosen away from the rounding boundaries of the 0.1 quantization step. */
static const float sample_values[2][N] = {
  { 0.03f, -0.5f, 0.26f, 1.04f, 0.149f, 2.5f, 0.77f, 0.0f },
  { 1.93f, 0.41f, -2.0f, 0.333f, 0.07f, 1.234f, 0.62f, 3.01f },
};

static void
remove_tree (const char *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_autoptr (GDir) d = g_dir_open (path, 0, NULL);
      const char *entry;
      while (d && (entry = g_dir_read_name (d)) != NULL)
        {
          g_autofree char *sub = g_build_filename (path, entry, NULL);
          remove_tree (sub);
        }
      g_rmdir (path);
    }
  else
    g_unlink (path);
}

/* dir/test_data_set_K/input_0.pb, one per sample, each a tensor named `name`. */
static char *
write_samples (const char *name, int rank, const int64_t *dims, const float *values, int n_samples)
{
  GError *error = NULL;
  char *dir = g_dir_make_tmp ("owb-compare-XXXXXX", &error);
  g_assert_no_error (error);
  int64_t count = 1;
  for (int d = 0; d < rank; d++)
    count *= dims[d];
  for (int s = 0; s < n_samples; s++)
    {
      g_autofree char *sub = g_strdup_printf ("%s/test_data_set_%d", dir, s);
      g_assert_cmpint (g_mkdir (sub, 0700), ==, 0);
      g_autofree char *path = g_build_filename (sub, "input_0.pb", NULL);
      g_autoptr (OwbTensor) t = tu_floats (rank, dims, values + s * count);
      g_assert_true (owb_tensor_save_pb_file (t, name, path, &error));
      g_assert_no_error (error);
    }
  return dir;
}

static char *
write_default_samples (void)
{
  return write_samples ("x", 2, (int64_t[]){ 1, N }, &sample_values[0][0], 2);
}

static OwbTensor *
scalar_float (float v)
{
  return owb_tensor_new_scalar_float (v);
}

/* x -> Relu -> y -> Mul (by 2) -> z; with qdq, y goes through QuantizeLinear / DequantizeLinear
 * (scale 0.1, zero point 0, uint8) into yd before the Mul. */
static OwbModel *
relu_mul_model (const char *input, gboolean qdq)
{
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  int64_t dims[] = { 1, N };
  tu_add_value (g->inputs, input, OWB_TYPE_FLOAT, 2, dims, NULL);
  tu_add_value (g->outputs, "z", OWB_TYPE_FLOAT, 2, dims, NULL);
  owb_graph_add_initializer (g, "two", scalar_float (2.0f));
  tu_node (g, "Relu", "relu", input, "y");
  if (qdq)
    {
      owb_graph_add_initializer (g, "scale", scalar_float (0.1f));
      OwbTensor *zp = owb_tensor_new (OWB_TYPE_UINT8, 0, NULL, NULL);
      owb_graph_add_initializer (g, "zp", zp);
      tu_node (g, "QuantizeLinear", "y_q", "y,scale,zp", "yq");
      tu_node (g, "DequantizeLinear", "y_dq", "yq,scale,zp", "yd");
      tu_node (g, "Mul", "mul", "yd,two", "z");
    }
  else
    tu_node (g, "Mul", "mul", "y,two", "z");
  return m;
}

static const OwbQuantTensorDiff *
find_tensor (const OwbQuantComparison *c, const char *name)
{
  for (guint i = 0; i < c->tensors->len; i++)
    {
      const OwbQuantTensorDiff *d = g_ptr_array_index (c->tensors, i);
      if (strcmp (d->name, name) == 0)
        return d;
    }
  return NULL;
}

static void
count_progress (guint done, guint total, gpointer user_data)
{
  guint *calls = user_data;
  (*calls)++;
  g_assert_cmpuint (done, ==, *calls);
  g_assert_cmpuint (total, ==, 2);
}

static void
test_identical (void)
{
  /* an input name that JSON must escape */
  const char *name = "x\"1\\\x01";
  g_autoptr (OwbModel) a = relu_mul_model (name, FALSE);
  g_autoptr (OwbModel) b = relu_mul_model (name, FALSE);
  g_autofree char *dir = write_samples (name, 2, (int64_t[]){ 1, N }, &sample_values[0][0], 2);
  GError *error = NULL;
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_from_dir (dir, &error);
  g_assert_no_error (error);
  OwbQuantCompareOptions opts;
  owb_quant_compare_options_init (&opts);
  g_assert_true (opts.per_tensor);
  guint calls = 0;
  opts.progress = count_progress;
  opts.user_data = &calls;
  g_autoptr (OwbQuantComparison) c = owb_quant_compare (a, b, ds, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (calls, ==, 2);
  g_assert_cmpuint (c->n_samples, ==, 2);
  g_assert_cmpuint (c->outputs->len, ==, 1);
  const OwbQuantOutputDiff *o = g_ptr_array_index (c->outputs, 0);
  g_assert_cmpstr (o->name, ==, "z");
  g_assert_cmpuint (o->count, ==, 2 * N);
  g_assert_true (isinf (o->sqnr_db) && o->sqnr_db > 0);
  g_assert_cmpfloat (o->cosine, ==, 1.0);
  g_assert_cmpfloat (o->max_abs, ==, 0.0);
  g_assert_cmpfloat (o->mean_abs, ==, 0.0);
  /* [1, 8] has a last axis of 8: classifier-like, and A agrees with itself everywhere */
  g_assert_true (o->classifier);
  g_assert_cmpfloat (o->top1_agreement, ==, 1.0);
  g_assert_false (o->has_accuracy);
  /* the input, y and z */
  g_assert_cmpuint (c->tensors->len, ==, 3);
  for (guint i = 0; i < c->tensors->len; i++)
    {
      const OwbQuantTensorDiff *d = g_ptr_array_index (c->tensors, i);
      g_assert_cmpstr (d->name, ==, d->matched);
      g_assert_true (isinf (d->sqnr_db) && d->sqnr_db > 0);
      g_assert_cmpfloat (d->cosine, ==, 1.0);
      g_assert_cmpuint (d->count, ==, 2 * N);
    }
  const OwbQuantTensorDiff *in = find_tensor (c, name), *y = find_tensor (c, "y");
  g_assert_nonnull (in);
  g_assert_cmpstr (in->op_type, ==, "input");
  g_assert_cmpstr (in->node, ==, "");
  g_assert_nonnull (y);
  g_assert_cmpstr (y->op_type, ==, "Relu");
  g_assert_cmpstr (y->node, ==, "relu");

  g_autofree char *json = owb_quant_comparison_to_json (c);
  g_assert_true (g_str_has_prefix (json, "{\"samples\":2,\"outputs\":[{\"name\":\"z\",\"sqnr_db\":null,\"cosine\":1,"));
  g_assert_nonnull (strstr (json, "\"top1_agreement\":1"));
  g_assert_null (strstr (json, "accuracy_a"));
  g_assert_nonnull (strstr (json, "\"name\":\"x\\\"1\\\\\\u0001\",\"matched\":\"x\\\"1\\\\\\u0001\",\"node\":\"\",\"op\":\"input\""));
  g_assert_null (strstr (json, "inf"));
  g_assert_null (strstr (json, "nan"));
  remove_tree (dir);
}

/* SQNR of relu (x) against its quantize-dequantize round trip, from the samples directly. */
static void
expected_qdq (double *sqnr_db, double *max_abs, double *cosine)
{
  double sx2 = 0, sd2 = 0, sxy = 0, sy2 = 0;
  *max_abs = 0;
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < N; i++)
      {
        float y = MAX (sample_values[s][i], 0.0f);
        float q = CLAMP (nearbyintf (y / 0.1f), 0.0f, 255.0f);
        float d = q * 0.1f;
        sx2 += (double) y * y;
        sd2 += ((double) y - d) * ((double) y - d);
        sxy += (double) y * d;
        sy2 += (double) d * d;
        *max_abs = MAX (*max_abs, fabs ((double) y - d));
      }
  *sqnr_db = 10 * log10 (sx2 / sd2);
  *cosine = sxy / sqrt (sx2 * sy2);
}

static void
test_qdq_matched (void)
{
  g_autoptr (OwbModel) a = relu_mul_model ("x", FALSE);
  g_autoptr (OwbModel) b = relu_mul_model ("x", TRUE);
  g_autofree char *dir = write_default_samples ();
  GError *error = NULL;
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_from_dir (dir, &error);
  g_assert_no_error (error);
  g_autoptr (OwbQuantComparison) c = owb_quant_compare (a, b, ds, NULL, &error);
  g_assert_no_error (error);
  double want, want_max, want_cos;
  expected_qdq (&want, &want_max, &want_cos);
  g_assert_cmpfloat (want, >, 10);
  g_assert_true (isfinite (want));

  const OwbQuantTensorDiff *y = find_tensor (c, "y");
  g_assert_nonnull (y);
  g_assert_cmpstr (y->matched, ==, "yd");
  g_assert_cmpstr (y->op_type, ==, "Relu");
  g_assert_cmpfloat_with_epsilon (y->sqnr_db, want, 1e-6 * want);
  g_assert_cmpfloat_with_epsilon (y->max_abs, want_max, 1e-6);
  g_assert_cmpfloat_with_epsilon (y->cosine, want_cos, 1e-9);
  /* z = 2 y on both sides: the same ratio */
  const OwbQuantTensorDiff *z = find_tensor (c, "z");
  g_assert_nonnull (z);
  g_assert_cmpstr (z->matched, ==, "z");
  g_assert_cmpfloat_with_epsilon (z->sqnr_db, want, 1e-6 * want);
  const OwbQuantOutputDiff *o = g_ptr_array_index (c->outputs, 0);
  g_assert_cmpfloat_with_epsilon (o->sqnr_db, want, 1e-6 * want);
  g_assert_cmpfloat_with_epsilon (o->max_abs, 2 * want_max, 1e-6);
  /* B's own tensors (yq, yd) are not A's; the input compares equal and sorts last */
  g_assert_null (find_tensor (c, "yq"));
  g_assert_null (find_tensor (c, "yd"));
  g_assert_cmpuint (c->tensors->len, ==, 3);
  const OwbQuantTensorDiff *last = g_ptr_array_index (c->tensors, 2);
  g_assert_cmpstr (last->name, ==, "x");
  g_assert_true (isinf (last->sqnr_db));

  /* statistics of each side and the error histogram, against the same sums taken directly */
  {
    double sa = 0, sa2 = 0, sb = 0, sb2 = 0, mina = INFINITY, maxa = -INFINITY, minb = INFINITY, maxb = -INFINITY;
    double emin = INFINITY, emax = -INFINITY;
    for (int s = 0; s < 2; s++)
      for (int i = 0; i < N; i++)
        {
          float yv = MAX (sample_values[s][i], 0.0f);
          float dv = CLAMP (nearbyintf (yv / 0.1f), 0.0f, 255.0f) * 0.1f;
          sa += yv, sa2 += (double) yv * yv, sb += dv, sb2 += (double) dv * dv;
          mina = MIN (mina, yv), maxa = MAX (maxa, yv), minb = MIN (minb, dv), maxb = MAX (maxb, dv);
          emin = MIN (emin, (double) dv - yv), emax = MAX (emax, (double) dv - yv);
        }
    double n = 2 * N, ma = sa / n, mb = sb / n;
    g_assert_cmpfloat_with_epsilon (y->min_a, mina, 1e-7);
    g_assert_cmpfloat_with_epsilon (y->max_a, maxa, 1e-7);
    g_assert_cmpfloat_with_epsilon (y->mean_a, ma, 1e-7);
    g_assert_cmpfloat_with_epsilon (y->std_a, sqrt (sa2 / n - ma * ma), 1e-6);
    g_assert_cmpfloat_with_epsilon (y->min_b, minb, 1e-7);
    g_assert_cmpfloat_with_epsilon (y->max_b, maxb, 1e-7);
    g_assert_cmpfloat_with_epsilon (y->mean_b, mb, 1e-7);
    g_assert_cmpfloat_with_epsilon (y->std_b, sqrt (sb2 / n - mb * mb), 1e-6);
    g_assert_cmpfloat (y->mean_a, !=, y->mean_b);
    g_assert_cmpuint (y->n_error_bins, >, 1);
    g_assert_nonnull (y->error_bins);
    guint64 total = 0;
    for (guint k = 0; k < y->n_error_bins; k++)
      total += y->error_bins[k];
    g_assert_cmpuint (total, ==, 2 * N);
    /* the bins hold every error, and the empty ones at the ends are cut */
    g_assert_cmpfloat (y->error_lo, <=, emin + 1e-7);
    g_assert_cmpfloat (y->error_hi, >=, emax - 1e-7);
    g_assert_cmpuint (y->error_bins[0], >, 0);
    g_assert_cmpuint (y->error_bins[y->n_error_bins - 1], >, 0);
    /* rounding to 0.1 errs by at most half a step; the range is within one doubling of that */
    g_assert_cmpfloat (y->error_hi - y->error_lo, <=, 4 * MAX (fabs (emin), fabs (emax)) + 1e-6);
    /* a tensor equal on both sides: one bin at 0 */
    const OwbQuantTensorDiff *xin = find_tensor (c, "x");
    g_assert_cmpuint (xin->n_error_bins, ==, 1);
    g_assert_cmpuint (xin->error_bins[0], ==, 2 * N);
    g_assert_cmpfloat (xin->min_a, ==, xin->min_b);
    g_assert_cmpfloat (xin->std_a, ==, xin->std_b);
  }

  g_autofree char *json = owb_quant_comparison_to_json (c);
  g_assert_nonnull (strstr (json, "\"name\":\"y\",\"matched\":\"yd\",\"node\":\"relu\",\"op\":\"Relu\",\"sqnr_db\":"));

  /* without per-tensor work, only the outputs */
  OwbQuantCompareOptions opts;
  owb_quant_compare_options_init (&opts);
  opts.per_tensor = FALSE;
  g_autoptr (OwbQuantComparison) c2 = owb_quant_compare (a, b, ds, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (c2->tensors->len, ==, 0);
  g_assert_cmpfloat_with_epsilon (((OwbQuantOutputDiff *) g_ptr_array_index (c2->outputs, 0))->sqnr_db, want,
                                  1e-6 * want);
  remove_tree (dir);
}

static void
test_outputs_by_position (void)
{
  g_autoptr (OwbModel) a = relu_mul_model ("x", FALSE);
  /* the same computation under other names */
  g_autoptr (OwbModel) b = tu_model_new (13);
  int64_t dims[] = { 1, N };
  tu_add_value (b->graph->inputs, "x", OWB_TYPE_FLOAT, 2, dims, NULL);
  tu_add_value (b->graph->outputs, "out", OWB_TYPE_FLOAT, 2, dims, NULL);
  owb_graph_add_initializer (b->graph, "k", scalar_float (2.0f));
  tu_node (b->graph, "Relu", "r", "x", "t");
  tu_node (b->graph, "Mul", "m", "t,k", "out");
  g_autofree char *dir = write_default_samples ();
  GError *error = NULL;
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_from_dir (dir, &error);
  g_assert_no_error (error);
  g_autoptr (OwbQuantComparison) c = owb_quant_compare (a, b, ds, NULL, &error);
  g_assert_no_error (error);
  const OwbQuantOutputDiff *o = g_ptr_array_index (c->outputs, 0);
  g_assert_cmpstr (o->name, ==, "z");
  g_assert_true (isinf (o->sqnr_db));
  g_assert_cmpuint (o->count, ==, 2 * N);
  /* only the input has the same name in both */
  g_assert_cmpuint (c->tensors->len, ==, 1);
  g_assert_cmpstr (((OwbQuantTensorDiff *) g_ptr_array_index (c->tensors, 0))->name, ==, "x");

  /* a second output in A: the counts differ, an error naming both sides */
  OwbModel *a2 = relu_mul_model ("x", FALSE);
  tu_add_value (a2->graph->outputs, "y", OWB_TYPE_FLOAT, 2, dims, NULL);
  OwbQuantComparison *bad = owb_quant_compare (a2, b, ds, NULL, &error);
  g_assert_null (bad);
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "'z', 'y'"));
  g_assert_nonnull (strstr (error->message, "'out'"));
  g_clear_error (&error);
  owb_model_unref (a2);
  remove_tree (dir);
}

/* p = x * k: A with k = (1, 1, 1), B with k = (1, 1, 0.1), which loses class 2. */
static OwbModel *
classifier_model (float k2)
{
  OwbModel *m = tu_model_new (13);
  int64_t dims[] = { 1, 3 }, kd[] = { 3 };
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 2, dims, NULL);
  tu_add_value (m->graph->outputs, "p", OWB_TYPE_FLOAT, 2, dims, NULL);
  owb_graph_add_initializer (m->graph, "k", tu_floats (1, kd, (float[]){ 1, 1, k2 }));
  tu_node (m->graph, "Mul", "scale", "x,k", "p");
  return m;
}

static void
test_classifier_labels (void)
{
  g_autoptr (OwbModel) a = classifier_model (1.0f);
  g_autoptr (OwbModel) b = classifier_model (0.1f);
  /* sample 0: A says 2, B says 1; sample 1: both say 0 */
  const float values[] = { 0.1f, 0.2f, 0.9f, 0.8f, 0.1f, 0.3f };
  g_autofree char *dir = write_samples ("x", 2, (int64_t[]){ 1, 3 }, values, 2);
  GError *error = NULL;
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_from_dir (dir, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (labels, g_strdup ("2"));
  g_ptr_array_add (labels, g_strdup (" 0 "));
  OwbQuantCompareOptions opts;
  owb_quant_compare_options_init (&opts);
  opts.labels = labels;
  g_autoptr (OwbQuantComparison) c = owb_quant_compare (a, b, ds, &opts, &error);
  g_assert_no_error (error);
  const OwbQuantOutputDiff *o = g_ptr_array_index (c->outputs, 0);
  g_assert_true (o->classifier);
  g_assert_cmpfloat (o->top1_agreement, ==, 0.5);
  g_assert_true (o->has_accuracy);
  g_assert_cmpfloat (o->accuracy_a, ==, 1.0);
  g_assert_cmpfloat (o->accuracy_b, ==, 0.5);
  g_autofree char *json = owb_quant_comparison_to_json (c);
  g_assert_nonnull (strstr (json, "\"top1_agreement\":0.5,\"accuracy_a\":1,\"accuracy_b\":0.5}"));

  /* a line with two classes for one position: an error naming the line */
  g_free (labels->pdata[1]);
  labels->pdata[1] = g_strdup ("0 1");
  OwbQuantComparison *bad = owb_quant_compare (a, b, ds, &opts, &error);
  g_assert_null (bad);
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "line 2"));
  g_clear_error (&error);

  /* one line for two samples */
  g_ptr_array_set_size (labels, 1);
  bad = owb_quant_compare (a, b, ds, &opts, &error);
  g_assert_null (bad);
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  remove_tree (dir);
}

/* Two positions per sample ([2, 3]): agreement counts positions, accuracy whole samples. */
static void
test_classifier_positions (void)
{
  g_autoptr (OwbModel) a = classifier_model (1.0f);
  g_autoptr (OwbModel) b = classifier_model (0.1f);
  int64_t dims[] = { 2, 3 };
  for (int m = 0; m < 2; m++)
    {
      OwbModel *model = m ? b : a;
      for (guint k = 0; k < 2; k++)
        {
          GPtrArray *list = k ? model->graph->outputs : model->graph->inputs;
          g_ptr_array_set_size (list, 0);
          tu_add_value (list, k ? "p" : "x", OWB_TYPE_FLOAT, 2, dims, NULL);
        }
    }
  /* sample 0: positions (2 vs 1), (0 vs 0); sample 1: (1 vs 1), (0 vs 0) */
  const float values[] = { 0.1f, 0.2f, 0.9f, 0.8f, 0.1f, 0.3f, 0.1f, 0.9f, 0.2f, 0.5f, 0.4f, 0.3f };
  g_autofree char *dir = write_samples ("x", 2, dims, values, 2);
  GError *error = NULL;
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_from_dir (dir, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (labels, g_strdup ("2 0"));
  g_ptr_array_add (labels, g_strdup ("1\t0"));
  OwbQuantCompareOptions opts;
  owb_quant_compare_options_init (&opts);
  opts.labels = labels;
  g_autoptr (OwbQuantComparison) c = owb_quant_compare (a, b, ds, &opts, &error);
  g_assert_no_error (error);
  const OwbQuantOutputDiff *o = g_ptr_array_index (c->outputs, 0);
  g_assert_cmpfloat (o->top1_agreement, ==, 0.75);
  g_assert_cmpfloat (o->accuracy_a, ==, 1.0);
  g_assert_cmpfloat (o->accuracy_b, ==, 0.5);
  remove_tree (dir);
}

static void
test_random_samples (void)
{
  g_autoptr (OwbModel) a = relu_mul_model ("x", FALSE);
  g_autoptr (OwbModel) b = relu_mul_model ("x", TRUE);
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_random (3, 0);
  GError *error = NULL;
  g_autoptr (OwbQuantComparison) c = owb_quant_compare (a, b, ds, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (c->n_samples, ==, 3);
  const OwbQuantTensorDiff *x = find_tensor (c, "x"), *y = find_tensor (c, "y");
  /* both models were fed the same random values */
  g_assert_true (isinf (x->sqnr_db));
  g_assert_cmpuint (y->count, ==, 3 * N);
  g_assert_true (isfinite (y->sqnr_db));
  g_assert_cmpfloat (y->max_abs, <=, 0.05 + 1e-6);
}

/* B's y and z are [8] where A's are [1, 8]: those pairs are skipped (and counted), not an error. */
static void
test_shape_mismatch_skipped (void)
{
  g_autoptr (OwbModel) a = relu_mul_model ("x", FALSE);
  g_autoptr (OwbModel) b = tu_model_new (13);
  int64_t dims[] = { 1, N }, flat[] = { N }, one[] = { 1 };
  tu_add_value (b->graph->inputs, "x", OWB_TYPE_FLOAT, 2, dims, NULL);
  tu_add_value (b->graph->outputs, "z", OWB_TYPE_FLOAT, 1, flat, NULL);
  OwbTensor *shape = owb_tensor_new (OWB_TYPE_INT64, 1, one, NULL);
  ((int64_t *) shape->data)[0] = N;
  owb_graph_add_initializer (b->graph, "shape", shape);
  owb_graph_add_initializer (b->graph, "two", scalar_float (2.0f));
  tu_node (b->graph, "Relu", "relu", "x", "t");
  tu_node (b->graph, "Reshape", "flat", "t,shape", "y");
  tu_node (b->graph, "Mul", "mul", "y,two", "z");
  g_autofree char *dir = write_default_samples ();
  GError *error = NULL;
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_from_dir (dir, &error);
  g_assert_no_error (error);
  g_autoptr (OwbQuantComparison) c = owb_quant_compare (a, b, ds, NULL, &error);
  g_assert_no_error (error);
  const OwbQuantOutputDiff *o = g_ptr_array_index (c->outputs, 0);
  g_assert_cmpuint (o->n_skipped, ==, 2);
  g_assert_cmpuint (o->count, ==, 0);
  g_assert_true (isnan (o->sqnr_db));
  const OwbQuantTensorDiff *y = find_tensor (c, "y"), *x = find_tensor (c, "x");
  g_assert_cmpuint (y->n_skipped, ==, 2);
  g_assert_cmpuint (y->count, ==, 0);
  g_assert_cmpuint (x->n_skipped, ==, 0);
  g_assert_true (isinf (x->sqnr_db));
  /* never compared: after the equal ones */
  g_assert_true (g_ptr_array_index (c->tensors, 0) == x);
  g_autofree char *json = owb_quant_comparison_to_json (c);
  g_assert_nonnull (strstr (json, "\"name\":\"z\",\"sqnr_db\":null,\"cosine\":null"));
  remove_tree (dir);
}

/* An infinite or NaN element is counted apart; the sums over the others stay finite. */
static void
test_nonfinite_counted (void)
{
  g_autoptr (OwbModel) a = relu_mul_model ("x", FALSE);
  g_autoptr (OwbModel) b = relu_mul_model ("x", TRUE);
  float values[N];
  memcpy (values, sample_values[0], sizeof values);
  values[3] = INFINITY;
  values[6] = NAN;
  g_autofree char *dir = write_samples ("x", 2, (int64_t[]){ 1, N }, values, 1);
  GError *error = NULL;
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_from_dir (dir, &error);
  g_assert_no_error (error);
  g_autoptr (OwbQuantComparison) c = owb_quant_compare (a, b, ds, NULL, &error);
  g_assert_no_error (error);
  const OwbQuantTensorDiff *x = find_tensor (c, "x"), *y = find_tensor (c, "y");
  g_assert_cmpuint (x->n_nonfinite, ==, 2);
  g_assert_cmpuint (x->count, ==, N - 2);
  g_assert_true (isinf (x->sqnr_db));
  g_assert_cmpuint (y->n_nonfinite, >=, 2);
  g_assert_true (isfinite (y->sqnr_db));
  g_assert_true (isfinite (y->cosine));
  remove_tree (dir);
}

static void
cancel_after_first (guint done, guint total, gpointer user_data)
{
  g_cancellable_cancel (user_data);
}

static void
test_cancel (void)
{
  g_autoptr (OwbModel) a = relu_mul_model ("x", FALSE);
  g_autoptr (OwbModel) b = relu_mul_model ("x", TRUE);
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_random (4, 0);
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  OwbQuantCompareOptions opts;
  owb_quant_compare_options_init (&opts);
  opts.cancellable = cancellable;
  opts.progress = cancel_after_first;
  opts.user_data = cancellable;
  GError *error = NULL;
  OwbQuantComparison *c = owb_quant_compare (a, b, ds, &opts, &error);
  g_assert_null (c);
  g_assert_error (error, OWB_ERROR, OWB_ERROR_CANCELLED);
  g_clear_error (&error);
  /* already cancelled: nothing runs */
  opts.progress = NULL;
  c = owb_quant_compare (a, b, ds, &opts, &error);
  g_assert_null (c);
  g_assert_error (error, OWB_ERROR, OWB_ERROR_CANCELLED);
  g_clear_error (&error);
  owb_quant_comparison_free (NULL);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/quant/compare/identical", test_identical);
  g_test_add_func ("/quant/compare/qdq-matched", test_qdq_matched);
  g_test_add_func ("/quant/compare/outputs-by-position", test_outputs_by_position);
  g_test_add_func ("/quant/compare/classifier-labels", test_classifier_labels);
  g_test_add_func ("/quant/compare/classifier-positions", test_classifier_positions);
  g_test_add_func ("/quant/compare/random-samples", test_random_samples);
  g_test_add_func ("/quant/compare/shape-mismatch-skipped", test_shape_mismatch_skipped);
  g_test_add_func ("/quant/compare/nonfinite-counted", test_nonfinite_counted);
  g_test_add_func ("/quant/compare/cancel", test_cancel);
  return g_test_run ();
}
