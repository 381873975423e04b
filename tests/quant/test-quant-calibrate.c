/* test-quant-calibrate.c: histograms, thresholds, scale arithmetic, weight and bias quantization,
 * and calibration over sample folders (streamed: memory independent of the sample count). */
#include "owb-quant-private.h"
#include "../engine/test-util.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

static void
test_histogram_grow_is_exact (void)
{
  OwbQuantHistogram h;
  _owb_quant_histogram_init (&h, 16);
  float a[] = { 0.1f, -0.3f, 0.0f, 0.9f };
  _owb_quant_histogram_add (&h, a, 4, 0.9);
  g_assert_cmpfloat (h.range, ==, 0.9);
  /* Bins of width 0.1125: 0.1 -> bin 8, -0.3 -> bin 5, 0 -> bin 8, 0.9 (the edge) -> bin 15. */
  g_assert_cmpfloat (h.counts[8], ==, 2);
  g_assert_cmpfloat (h.counts[5], ==, 1);
  g_assert_cmpfloat (h.counts[15], ==, 1);
  float b[] = { 3.0f };
  _owb_quant_histogram_add (&h, b, 1, 3.0);
  /* 0.9 -> 1.8 -> 3.6: two doublings, every count kept, on nested edges. */
  g_assert_cmpfloat (h.range, ==, 0.9 * 4);
  double total = 0;
  for (guint i = 0; i < h.n_bins; i++)
    total += h.counts[i];
  g_assert_cmpfloat (total, ==, 5);
  g_assert_cmpfloat (h.total, ==, 5);
  /* Width 0.45 now: 0.1 and 0 in bin 8, -0.3 in bin 7, 3.0 in bin 14; 0.9 sat at the top edge of
   * the first range, so it is in the bin holding [0.7875, 0.9): 9. */
  g_assert_cmpfloat (h.counts[8], ==, 2);
  g_assert_cmpfloat (h.counts[7], ==, 1);
  g_assert_cmpfloat (h.counts[9], ==, 1);
  g_assert_cmpfloat (h.counts[14], ==, 1);
  _owb_quant_histogram_clear (&h);
}

static void
test_histogram_zeros_first (void)
{
  OwbQuantHistogram h;
  _owb_quant_histogram_init (&h, 8);
  float z[] = { 0, 0, 0 };
  _owb_quant_histogram_add (&h, z, 3, 0);
  g_assert_cmpfloat (h.range, ==, 0);
  float one[] = { 1 };
  _owb_quant_histogram_add (&h, one, 1, 1);
  g_assert_cmpfloat (h.counts[4], ==, 3);
  g_assert_cmpfloat (h.counts[7], ==, 1);
  g_assert_cmpfloat (h.total, ==, 4);
  _owb_quant_histogram_clear (&h);
}

static void
test_percentile (void)
{
  OwbQuantHistogram h;
  _owb_quant_histogram_init (&h, OWB_QUANT_HISTOGRAM_BINS);
  /* |x| uniform over (0, 1]: the 90th percentile is 0.9, to a bin. */
  float *x = g_new (float, 10000);
  for (int i = 0; i < 10000; i++)
    x[i] = (i % 2 ? -1.0f : 1.0f) * (i + 1) / 10000.0f;
  _owb_quant_histogram_add (&h, x, 10000, 1.0);
  double t = _owb_quant_histogram_percentile (&h, 90);
  g_assert_cmpfloat (fabs (t - 0.9), <, 2.0 / OWB_QUANT_HISTOGRAM_BINS * 2);
  g_assert_cmpfloat (_owb_quant_histogram_percentile (&h, 100), ==, 1.0);
  g_free (x);
  _owb_quant_histogram_clear (&h);
}

/* A Gaussian bulk with a few far outliers: entropy clips them; mse keeps what costs least in
 * squared error (here most of the range: five outliers clipped to 4 would cost more than the
 * coarser step), and its choice is checked against a direct search over thresholds. */
static void
test_entropy_and_mse_clip_outliers (void)
{
  OwbQuantHistogram h;
  _owb_quant_histogram_init (&h, OWB_QUANT_HISTOGRAM_BINS);
  GRand *rand = g_rand_new_with_seed (7);
  int n = 200000;
  float *x = g_new (float, n);
  double absmax = 0;
  for (int i = 0; i < n; i++)
    {
      double u1 = g_rand_double_range (rand, 1e-12, 1), u2 = g_rand_double (rand);
      x[i] = (float) (sqrt (-2 * log (u1)) * cos (2 * G_PI * u2));
      if (i < 5)
        x[i] = 40.0f + i; /* outliers */
      absmax = MAX (absmax, fabs (x[i]));
    }
  _owb_quant_histogram_add (&h, x, n, absmax);
  double te = _owb_quant_histogram_entropy (&h, 128, 1e-3);
  double tm = _owb_quant_histogram_mse (&h, -absmax, absmax, 256);
  g_test_message ("entropy threshold %.3f, mse threshold %.3f, max %.1f", te, tm, absmax);
  g_assert_cmpfloat (te, >, 2.0);
  g_assert_cmpfloat (te, <, 20.0);
  g_assert_cmpfloat (tm, >, 2.0);
  g_assert_cmpfloat (tm, <=, absmax);
  /* The mse threshold's true quantization error is near the best of a fine direct search. */
  double best = INFINITY, at_tm = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int k = 1; k <= (pass ? 1 : 400); k++)
      {
        double t = pass ? tm : k * absmax / 400;
        double step = 2 * t / 255, err = 0;
        for (int i = 0; i < n; i++)
          {
            double v = CLAMP (x[i], -t, t);
            double q = nearbyint (v / step) * step;
            err += (x[i] - q) * (x[i] - q);
          }
        if (pass)
          at_tm = err;
        else
          best = MIN (best, err);
      }
  g_test_message ("mse at threshold %.4g, best of the direct search %.4g", at_tm, best);
  g_assert_cmpfloat (at_tm, <, best * 1.10);
  g_rand_free (rand);
  g_free (x);
  _owb_quant_histogram_clear (&h);
}

static void
test_params (void)
{
  float s;
  int zp;
  _owb_quant_compute_params (-1, 3, OWB_TYPE_UINT8, FALSE, &s, &zp);
  g_assert_cmpfloat_with_epsilon (s, 4.0 / 255, 1e-7);
  g_assert_cmpint (zp, ==, 64); /* 1 / (4 / 255) = 63.75 */
  _owb_quant_compute_params (0.5, 3, OWB_TYPE_UINT8, FALSE, &s, &zp); /* widened to hold 0 */
  g_assert_cmpfloat_with_epsilon (s, 3.0 / 255, 1e-7);
  g_assert_cmpint (zp, ==, 0);
  _owb_quant_compute_params (-2, 1, OWB_TYPE_INT8, TRUE, &s, &zp);
  g_assert_cmpfloat_with_epsilon (s, 2.0 / 127, 1e-7);
  g_assert_cmpint (zp, ==, 0);
  _owb_quant_compute_params (-2, 1, OWB_TYPE_UINT8, TRUE, &s, &zp);
  g_assert_cmpint (zp, ==, 128);
  _owb_quant_compute_params (0, 0, OWB_TYPE_INT8, FALSE, &s, &zp);
  g_assert_cmpfloat (s, ==, 1.0f);
  _owb_quant_compute_params (-1, 1, OWB_TYPE_INT16, FALSE, &s, &zp);
  g_assert_cmpfloat_with_epsilon (s, 2.0 / 65535, 1e-9);
  int qmin, qmax;
  g_assert_true (_owb_quant_type_range (OWB_TYPE_INT8, TRUE, &qmin, &qmax));
  g_assert_cmpint (qmin, ==, -127);
  g_assert_false (_owb_quant_type_range (OWB_TYPE_FLOAT, FALSE, &qmin, &qmax));
}

static void
test_weight_per_channel (void)
{
  int64_t dims[] = { 3, 4 };
  float w[] = { 1, -2, 0.5f, 0.25f, 10, 5, -10, 0, 0, 0, 0, 0 };
  g_autoptr (OwbTensor) t = tu_floats (2, dims, w);
  OwbTensor *q, *scale, *zp;
  g_assert_true (_owb_quant_quantize_weight (t, 0, OWB_TYPE_INT8, TRUE, &q, &scale, &zp, NULL));
  g_assert_cmpint (scale->rank, ==, 1);
  g_assert_cmpint (scale->dims[0], ==, 3);
  const float *s = scale->data;
  g_assert_cmpfloat_with_epsilon (s[0], 2.0 / 127, 1e-7);
  g_assert_cmpfloat_with_epsilon (s[1], 10.0 / 127, 1e-7);
  g_assert_cmpfloat (s[2], ==, 1.0f); /* an all-zero channel */
  const int8_t *qv = q->data;
  g_assert_cmpint (qv[1], ==, -127);
  g_assert_cmpint (qv[4], ==, 127);
  for (int i = 0; i < 12; i++)
    g_assert_cmpfloat (fabs (qv[i] * s[i / 4] - w[i]), <=, s[i / 4] / 2 + 1e-6);
  owb_tensor_unref (q), owb_tensor_unref (scale), owb_tensor_unref (zp);
  /* Per tensor: one scalar scale; a channel axis along dim 1 (Gemm, transB = 0). */
  g_assert_true (_owb_quant_quantize_weight (t, -1, OWB_TYPE_INT8, TRUE, &q, &scale, &zp, NULL));
  g_assert_cmpint (scale->rank, ==, 0);
  g_assert_cmpfloat_with_epsilon (*(float *) scale->data, 10.0 / 127, 1e-7);
  owb_tensor_unref (q), owb_tensor_unref (scale), owb_tensor_unref (zp);
  g_assert_true (_owb_quant_quantize_weight (t, 1, OWB_TYPE_INT8, TRUE, &q, &scale, &zp, NULL));
  g_assert_cmpint (scale->dims[0], ==, 4);
  g_assert_cmpfloat_with_epsilon (((float *) scale->data)[2], 10.0 / 127, 1e-7);
  owb_tensor_unref (q), owb_tensor_unref (scale), owb_tensor_unref (zp);
}

/* NaN weights store as the zero point (they went through an undefined NaN-to-int conversion:
 * 0 on x86, not the zero point; found by fuzz-quantize under UBSan), infinities saturate. */
static void
test_weight_nan (void)
{
  int64_t dims[] = { 4 };
  float w[] = { NAN, 1, -1, INFINITY };
  g_autoptr (OwbTensor) t = tu_floats (1, dims, w);
  OwbTensor *q, *scale, *zp;
  g_assert_true (_owb_quant_quantize_weight (t, -1, OWB_TYPE_UINT8, FALSE, &q, &scale, &zp, NULL));
  const uint8_t *qv = q->data;
  g_assert_cmpint (*(uint8_t *) zp->data, >, 100);
  g_assert_cmpint (qv[0], ==, *(uint8_t *) zp->data);
  g_assert_cmpint (qv[3], ==, 255);
  owb_tensor_unref (q), owb_tensor_unref (scale), owb_tensor_unref (zp);
}

static void
test_bias (void)
{
  int64_t dims[] = { 2 };
  float b[] = { 0.5f, -1.0f };
  g_autoptr (OwbTensor) bias = tu_floats (1, dims, b);
  float ws[] = { 0.01f, 0.02f };
  g_autoptr (OwbTensor) wscale = tu_floats (1, dims, ws);
  OwbTensor *q, *scale, *zp;
  g_assert_true (_owb_quant_quantize_bias (bias, 0.1f, wscale, &q, &scale, &zp, NULL));
  g_assert_cmpint (q->dtype, ==, OWB_TYPE_INT32);
  g_assert_cmpfloat_with_epsilon (((float *) scale->data)[0], 0.001, 1e-9);
  g_assert_cmpfloat_with_epsilon (((float *) scale->data)[1], 0.002, 1e-9);
  g_assert_cmpint (((int32_t *) q->data)[0], ==, 500);
  g_assert_cmpint (((int32_t *) q->data)[1], ==, -500);
  owb_tensor_unref (q), owb_tensor_unref (scale), owb_tensor_unref (zp);
}

/* x [1, 4] -> Relu -> y -> Mul(2) -> z */
static OwbModel *
relu_model (void)
{
  OwbModel *m = tu_model_new (13);
  int64_t d[] = { 1, 4 };
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 2, d, NULL);
  tu_add_value (m->graph->outputs, "z", OWB_TYPE_FLOAT, 2, d, NULL);
  tu_node (m->graph, "Relu", "relu", "x", "y");
  tu_node (m->graph, "Mul", "mul", "y,two", "z");
  float two = 2;
  owb_graph_add_initializer (m->graph, "two", tu_floats (0, NULL, &two));
  g_assert_true (owb_model_validate (m, NULL));
  return m;
}

static char *
write_samples (const float (*values)[4], int n)
{
  char *dir = g_dir_make_tmp ("owb-quant-cal-XXXXXX", NULL);
  int64_t d[] = { 1, 4 };
  for (int i = 0; i < n; i++)
    {
      g_autofree char *sub = g_strdup_printf ("%s/test_data_set_%d", dir, i);
      g_mkdir (sub, 0755);
      g_autofree char *path = g_strdup_printf ("%s/input_0.pb", sub);
      g_autoptr (OwbTensor) t = tu_floats (2, d, values[i]);
      g_assert_true (owb_tensor_save_pb_file (t, "x", path, NULL));
    }
  return dir;
}

static void
remove_tree (const char *dir)
{
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", dir);
  g_assert_cmpint (system (cmd), ==, 0);
}

static void
test_calibrate_minmax (void)
{
  g_autoptr (OwbModel) m = relu_model ();
  const float values[3][4] = { { -1, 0.5f, 2, 0 }, { 3, -4, 0.25f, 1 }, { 0, 0, 1.5f, -0.5f } };
  g_autofree char *dir = write_samples (values, 3);
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_from_dir (dir, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (owb_quant_dataset_get_n_samples (ds), ==, 3);
  OwbQuantCalibrateOptions co;
  owb_quant_calibrate_options_init (&co);
  co.averaging_constant = 0.5;
  g_autoptr (OwbQuantCalibration) cal = owb_quant_calibrate (m, ds, &co, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (owb_quant_calibration_get_n_samples (cal), ==, 3);
  /* Every float tensor: x, y, z. */
  g_assert_cmpuint (owb_quant_calibration_get_n_tensors (cal), ==, 3);
  float lo, hi;
  g_assert_true (owb_quant_calibration_get_minmax (cal, "x", &lo, &hi));
  g_assert_cmpfloat (lo, ==, -4);
  g_assert_cmpfloat (hi, ==, 3);
  g_assert_true (owb_quant_calibration_get_minmax (cal, "z", &lo, &hi));
  g_assert_cmpfloat (lo, ==, 0);
  g_assert_cmpfloat (hi, ==, 6);
  OwbQuantRangeOptions ro;
  owb_quant_range_options_init (&ro);
  g_assert_cmpint (ro.method, ==, OWB_QUANT_PERCENTILE); /* the default */
  ro.method = OWB_QUANT_MINMAX;
  ro.moving_average = TRUE;
  g_assert_true (owb_quant_calibration_compute_range (cal, "x", &ro, &lo, &hi, &error));
  /* max: 2, then 2 + 0.5 (3 - 2) = 2.5, then 2.5 + 0.5 (1.5 - 2.5) = 2; min: -1, -2.5, -1.5. */
  g_assert_cmpfloat_with_epsilon (hi, 2.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (lo, -1.5, 1e-6);
  g_assert_false (owb_quant_calibration_compute_range (cal, "nope", &ro, &lo, &hi, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  remove_tree (dir);
}

static void
test_calibrate_selected_and_streamed (void)
{
  g_autoptr (OwbModel) m = relu_model ();
  const char *const wanted[] = { "y", NULL };
  gsize bytes[2];
  for (int k = 0; k < 2; k++)
    {
      g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_random (k ? 64 : 4, 1);
      OwbQuantCalibrateOptions co;
      owb_quant_calibrate_options_init (&co);
      co.tensors = wanted;
      g_autoptr (GError) error = NULL;
      g_autoptr (OwbQuantCalibration) cal = owb_quant_calibrate (m, ds, &co, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (owb_quant_calibration_get_n_tensors (cal), ==, 1);
      g_assert_true (owb_quant_calibration_has_tensor (cal, "y"));
      g_assert_false (owb_quant_calibration_has_tensor (cal, "x"));
      bytes[k] = owb_quant_calibration_get_bytes (cal);
    }
  /* 16x the samples, the same statistics' size. */
  g_assert_cmpuint (bytes[0], ==, bytes[1]);
}

static void
progress_cancel (guint done, guint total, gpointer user_data)
{
  if (done == 2)
    g_cancellable_cancel (user_data);
}

static void
test_calibrate_cancel (void)
{
  g_autoptr (OwbModel) m = relu_model ();
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_random (10, 1);
  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  OwbQuantCalibrateOptions co;
  owb_quant_calibrate_options_init (&co);
  co.cancellable = cancel;
  co.progress = progress_cancel;
  co.user_data = cancel;
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbQuantCalibration) cal = owb_quant_calibrate (m, ds, &co, &error);
  g_assert_null (cal);
  g_assert_error (error, OWB_ERROR, OWB_ERROR_CANCELLED);
}

static void
test_dataset_errors (void)
{
  g_autoptr (GError) error = NULL;
  g_assert_null (owb_quant_dataset_new_from_dir ("/nonexistent-owb-dir", &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_IO);
  g_clear_error (&error);
  g_autofree char *empty = g_dir_make_tmp ("owb-quant-empty-XXXXXX", NULL);
  g_assert_null (owb_quant_dataset_new_from_dir (empty, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "no sample"));
  g_rmdir (empty);
  /* Natural order: set_2 before set_10. */
  float v[11][4] = { { 0 } };
  for (int i = 0; i < 11; i++)
    v[i][0] = (float) i;
  g_autofree char *dir = write_samples ((const float (*)[4]) v, 11);
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_from_dir (dir, NULL);
  g_assert_true (g_str_has_suffix (owb_quant_dataset_get_sample_dir (ds, 2), "test_data_set_2"));
  g_assert_true (g_str_has_suffix (owb_quant_dataset_get_sample_dir (ds, 10), "test_data_set_10"));
  g_autoptr (OwbModel) m = relu_model ();
  g_autoptr (GPtrArray) names = NULL, tensors = NULL;
  g_assert_true (owb_quant_dataset_load_sample (ds, 10, m, &names, &tensors, NULL));
  g_assert_cmpfloat (((float *) ((OwbTensor *) tensors->pdata[0])->data)[0], ==, 10);
  owb_quant_dataset_truncate (ds, 3);
  g_assert_cmpuint (owb_quant_dataset_get_n_samples (ds), ==, 3);
  remove_tree (dir);
}

/* A PPM (binary, 8-bit RGB) of w x h pixels whose value is f(x, y, channel). */
static void
write_ppm (const char *path, int w, int h, guint8 (*f) (int x, int y, int c))
{
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "P6\n%d %d\n255\n", w, h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (int c = 0; c < 3; c++)
        g_string_append_c (s, (char) f (x, y, c));
  g_assert_true (g_file_set_contents (path, s->str, s->len, NULL));
  g_string_free (s, TRUE);
}

static guint8
pattern (int x, int y, int c)
{
  return (guint8) (x * 40 + y * 10 + c * 3);
}

/* An image model: [N, 3, 4, 4] or [1, 4, 4, 3] -> Relu. */
static OwbModel *
image_model (gboolean nhwc)
{
  OwbModel *m = tu_model_new (13);
  int64_t nchw[] = { -2, 3, 4, 4 }, hwc[] = { 1, 4, 4, 3 };
  const char *const params[] = { "N", NULL, NULL, NULL };
  tu_add_value (m->graph->inputs, "image", OWB_TYPE_FLOAT, 4, nhwc ? hwc : nchw, params);
  tu_add_value (m->graph->outputs, "out", OWB_TYPE_FLOAT, 4, nhwc ? hwc : nchw, params);
  tu_node (m->graph, "Relu", "relu", "image", "out");
  g_assert_true (owb_model_validate (m, NULL));
  return m;
}

static void
test_image_folder (void)
{
  g_autofree char *dir = g_dir_make_tmp ("owb-quant-img-XXXXXX", NULL);
  g_autofree char *a = g_build_filename (dir, "img_2.ppm", NULL);
  g_autofree char *b = g_build_filename (dir, "img_10.PPM", NULL);
  g_autofree char *big = g_build_filename (dir, "img_3.ppm", NULL);
  g_autofree char *other = g_build_filename (dir, "notes.txt", NULL);
  write_ppm (a, 4, 4, pattern);
  write_ppm (b, 4, 4, pattern);
  write_ppm (big, 8, 8, pattern);
  g_assert_true (g_file_set_contents (other, "not an image", -1, NULL));
  OwbQuantImageOptions io;
  owb_quant_image_options_init (&io);
  io.mean[0] = 0.5f, io.mean[1] = 0.25f, io.mean[2] = 0;
  io.std[0] = 0.5f, io.std[1] = 0.5f, io.std[2] = 2;
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_from_images (dir, &io, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (owb_quant_dataset_get_n_samples (ds), ==, 3);
  g_assert_true (g_str_has_suffix (owb_quant_dataset_get_sample_dir (ds, 0), "img_2.ppm"));
  g_assert_true (g_str_has_suffix (owb_quant_dataset_get_sample_dir (ds, 2), "img_10.PPM"));
  for (int layout = 0; layout < 2; layout++)
    {
      g_autoptr (OwbModel) m = image_model (layout == 1);
      g_autoptr (GPtrArray) names = NULL, tensors = NULL;
      g_assert_true (owb_quant_dataset_load_sample (ds, 0, m, &names, &tensors, &error));
      g_assert_no_error (error);
      const OwbTensor *t = tensors->pdata[0];
      g_assert_cmpint (t->rank, ==, 4);
      g_assert_cmpint (t->dims[layout ? 3 : 1], ==, 3);
      const float *v = t->data;
      /* Same size: no resampling, so every value is (p / 255 - mean) / std exactly. */
      for (int c = 0; c < 3; c++)
        for (int y = 0; y < 4; y++)
          for (int x = 0; x < 4; x++)
            {
              float want = (pattern (x, y, c) / 255.0f - io.mean[c]) / io.std[c];
              float got = layout ? v[(y * 4 + x) * 3 + c] : v[(c * 4 + y) * 4 + x];
              g_assert_cmpfloat_with_epsilon (got, want, 1e-5);
            }
      /* The 8 x 8 image is resized to the input's 4 x 4. */
      g_clear_pointer (&names, g_ptr_array_unref);
      g_clear_pointer (&tensors, g_ptr_array_unref);
      g_assert_true (owb_quant_dataset_load_sample (ds, 1, m, &names, &tensors, &error));
      g_assert_cmpint (((OwbTensor *) tensors->pdata[0])->nelems, ==, 48);
    }
  /* It calibrates like any data set. */
  g_autoptr (OwbModel) m = image_model (FALSE);
  g_autoptr (OwbQuantCalibration) cal = owb_quant_calibrate (m, ds, NULL, &error);
  g_assert_no_error (error);
  float lo, hi;
  g_assert_true (owb_quant_calibration_get_minmax (cal, "image", &lo, &hi));
  g_assert_cmpfloat (lo, <, 0);
  g_assert_cmpfloat (hi, >, 0);
  /* Not an image folder, a model with two inputs. */
  g_autofree char *empty = g_dir_make_tmp ("owb-quant-noimg-XXXXXX", NULL);
  g_assert_null (owb_quant_dataset_new_from_images (empty, NULL, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_IO);
  g_clear_error (&error);
  g_rmdir (empty);
  g_autoptr (OwbModel) two = relu_model ();
  tu_add_value (two->graph->inputs, "extra", OWB_TYPE_FLOAT, 0, NULL, NULL);
  g_autoptr (GPtrArray) n2 = NULL, t2 = NULL;
  g_assert_false (owb_quant_dataset_load_sample (ds, 0, two, &n2, &t2, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/quant/histogram/grow-exact", test_histogram_grow_is_exact);
  g_test_add_func ("/quant/histogram/zeros-first", test_histogram_zeros_first);
  g_test_add_func ("/quant/histogram/percentile", test_percentile);
  g_test_add_func ("/quant/histogram/entropy-mse-outliers", test_entropy_and_mse_clip_outliers);
  g_test_add_func ("/quant/params", test_params);
  g_test_add_func ("/quant/weight-per-channel", test_weight_per_channel);
  g_test_add_func ("/quant/weight-nan", test_weight_nan);
  g_test_add_func ("/quant/bias", test_bias);
  g_test_add_func ("/quant/calibrate/minmax", test_calibrate_minmax);
  g_test_add_func ("/quant/calibrate/selected-streamed", test_calibrate_selected_and_streamed);
  g_test_add_func ("/quant/calibrate/cancel", test_calibrate_cancel);
  g_test_add_func ("/quant/dataset", test_dataset_errors);
  g_test_add_func ("/quant/dataset/images", test_image_folder);
  return g_test_run ();
}
