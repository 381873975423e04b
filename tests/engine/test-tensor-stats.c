/* test-tensor-stats.c: owb_tensor_stats_compute (min, max, mean, std, NaN/Inf counts, histograms)
 * over every numeric type, and owb_tensor_top_k. */
#include <owb/owb.h>

#include <math.h>
#include <string.h>

static OwbTensor *
make_tensor (OwbDataType dtype, int64_t n)
{
  int64_t dims[1] = { n };
  return owb_tensor_new (dtype, 1, dims, NULL);
}

static void
test_stats_float32 (void)
{
  g_autoptr (OwbTensor) t = make_tensor (OWB_TYPE_FLOAT, 8);
  const float v[8] = { 1, 2, 3, 4, NAN, INFINITY, -INFINITY, 10 };
  memcpy (t->data, v, sizeof v);
  OwbTensorStats s;
  guint64 bins[4];
  g_assert_true (owb_tensor_stats_compute (t, &s, 4, bins, NULL));
  g_assert_cmpuint (s.count, ==, 8);
  g_assert_cmpuint (s.n_nan, ==, 1);
  g_assert_cmpuint (s.n_inf, ==, 2);
  g_assert_cmpfloat (s.min, ==, 1);
  g_assert_cmpfloat (s.max, ==, 10);
  g_assert_cmpfloat_with_epsilon (s.mean, 4.0, 1e-12);
  /* Finite values 1 2 3 4 10: deviations -3 -2 -1 0 6 → ss 50, population variance 10. */
  g_assert_cmpfloat_with_epsilon (s.std, sqrt (10.0), 1e-12);
  /* [1,10] in 4 bins of 2.25: 1 2 3 → bin 0; 4 → bin 1; 10 → bin 3. */
  g_assert_cmpuint (bins[0], ==, 3);
  g_assert_cmpuint (bins[1], ==, 1);
  g_assert_cmpuint (bins[2], ==, 0);
  g_assert_cmpuint (bins[3], ==, 1);
}

static void
test_stats_int64 (void)
{
  g_autoptr (OwbTensor) t = make_tensor (OWB_TYPE_INT64, 5);
  const int64_t v[5] = { -5, 0, 5, 10, 1000000000000 };
  memcpy (t->data, v, sizeof v);
  OwbTensorStats s;
  guint64 bins[16];
  g_assert_true (owb_tensor_stats_compute (t, &s, 16, bins, NULL));
  g_assert_cmpuint (s.n_nan, ==, 0);
  g_assert_cmpuint (s.n_inf, ==, 0);
  g_assert_cmpfloat (s.min, ==, -5);
  g_assert_cmpfloat (s.max, ==, 1e12);
  double mean = (1e12 + 10) / 5;
  g_assert_cmpfloat_with_epsilon (s.mean, mean, 1e-3);
  double ss = 0;
  for (int i = 0; i < 5; i++)
    ss += ((double) v[i] - mean) * ((double) v[i] - mean);
  g_assert_cmpfloat_with_epsilon (s.std, sqrt (ss / 5), 1e-3);
  guint64 sum = 0;
  for (int i = 0; i < 16; i++)
    sum += bins[i];
  g_assert_cmpuint (sum, ==, 5);
  g_assert_cmpuint (bins[0], ==, 4);
  g_assert_cmpuint (bins[15], ==, 1);
}

static void
test_stats_float16 (void)
{
  g_autoptr (OwbTensor) t = make_tensor (OWB_TYPE_FLOAT16, 6);
  uint16_t *d = t->data;
  d[0] = owb_float_to_half (-1.5f);
  d[1] = owb_float_to_half (0.5f);
  d[2] = owb_float_to_half (2.0f);
  d[3] = 0x7e00; /* NaN */
  d[4] = 0x7c00; /* +Inf */
  d[5] = owb_float_to_half (3.0f);
  OwbTensorStats s;
  guint64 bins[64];
  g_assert_true (owb_tensor_stats_compute (t, &s, 64, bins, NULL));
  g_assert_cmpuint (s.count, ==, 6);
  g_assert_cmpuint (s.n_nan, ==, 1);
  g_assert_cmpuint (s.n_inf, ==, 1);
  g_assert_cmpfloat (s.min, ==, -1.5);
  g_assert_cmpfloat (s.max, ==, 3.0);
  g_assert_cmpfloat_with_epsilon (s.mean, 1.0, 1e-12);
  /* deviations -2.5 -0.5 1 2 → 6.25+0.25+1+4 = 11.5 / 4 */
  g_assert_cmpfloat_with_epsilon (s.std, sqrt (11.5 / 4), 1e-12);
  guint64 sum = 0;
  for (int i = 0; i < 64; i++)
    sum += bins[i];
  g_assert_cmpuint (sum, ==, s.count - s.n_nan - s.n_inf);
  g_assert_cmpuint (bins[0], ==, 1);
  g_assert_cmpuint (bins[63], ==, 1);
}

static void
test_stats_odd_types (void)
{
  /* float8e4m3fn: 0x38 = 1.0, 0xC0 = -2.0, 0x7f = NaN; int4 held as sign-extended bytes. */
  g_autoptr (OwbTensor) f8 = make_tensor (OWB_TYPE_FLOAT8E4M3FN, 3);
  guint8 *b = f8->data;
  b[0] = 0x38;
  b[1] = 0xc0;
  b[2] = 0x7f;
  OwbTensorStats s;
  g_assert_true (owb_tensor_stats_compute (f8, &s, 0, NULL, NULL));
  g_assert_cmpuint (s.n_nan, ==, 1);
  g_assert_cmpfloat (s.min, ==, -2.0);
  g_assert_cmpfloat (s.max, ==, 1.0);
  g_assert_cmpfloat (s.mean, ==, -0.5);

  g_autoptr (OwbTensor) i4 = make_tensor (OWB_TYPE_INT4, 3);
  gint8 *c = i4->data;
  c[0] = -8;
  c[1] = 7;
  c[2] = 1;
  g_assert_true (owb_tensor_stats_compute (i4, &s, 0, NULL, NULL));
  g_assert_cmpfloat (s.min, ==, -8);
  g_assert_cmpfloat (s.max, ==, 7);

  /* All NaN: counted, and the summary says "no value" (NaN) instead of 0. */
  g_autoptr (OwbTensor) nan = make_tensor (OWB_TYPE_DOUBLE, 2);
  ((double *) nan->data)[0] = NAN;
  ((double *) nan->data)[1] = NAN;
  guint64 bins[2] = { 7, 7 };
  g_assert_true (owb_tensor_stats_compute (nan, &s, 2, bins, NULL));
  g_assert_cmpuint (s.n_nan, ==, 2);
  g_assert_true (isnan (s.min) && isnan (s.mean));
  g_assert_cmpuint (bins[0] + bins[1], ==, 0);

  /* Strings are refused with a type error. */
  int64_t one = 1;
  g_autoptr (OwbTensor) str = owb_tensor_new (OWB_TYPE_STRING, 1, &one, NULL);
  g_autoptr (GError) error = NULL;
  g_assert_false (owb_tensor_stats_compute (str, &s, 0, NULL, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_TYPE);
  int64_t idx[1];
  double val[1];
  g_assert_cmpuint (owb_tensor_top_k (str, 1, idx, val), ==, 0);
}

static void
test_top_k (void)
{
  int64_t dims[2] = { 2, 6 };
  g_autoptr (OwbTensor) t = owb_tensor_new (OWB_TYPE_FLOAT, 2, dims, NULL);
  /* Row 0 only; row 1 holds bigger values that must be ignored. */
  const float v[12] = { 0.1f, 0.7f, NAN, 0.7f, 0.05f, 0.9f, 5, 5, 5, 5, 5, 5 };
  memcpy (t->data, v, sizeof v);
  int64_t idx[4];
  double val[4];
  guint n = owb_tensor_top_k (t, 4, idx, val);
  g_assert_cmpuint (n, ==, 4);
  g_assert_cmpint (idx[0], ==, 5);
  g_assert_cmpint (idx[1], ==, 1); /* ties: the lower index first */
  g_assert_cmpint (idx[2], ==, 3);
  g_assert_cmpint (idx[3], ==, 0);
  g_assert_cmpfloat_with_epsilon (val[0], 0.9, 1e-6);
  g_assert_cmpfloat_with_epsilon (val[3], 0.1, 1e-6);

  /* k larger than the row: every non-NaN value, best first. */
  int64_t idx8[8];
  double val8[8];
  n = owb_tensor_top_k (t, 8, idx8, val8);
  g_assert_cmpuint (n, ==, 5);
  g_assert_cmpint (idx8[4], ==, 4);

  g_autoptr (OwbTensor) i = make_tensor (OWB_TYPE_INT32, 4);
  const int32_t iv[4] = { 3, -1, 9, 4 };
  memcpy (i->data, iv, sizeof iv);
  n = owb_tensor_top_k (i, 2, idx, val);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpint (idx[0], ==, 2);
  g_assert_cmpint (idx[1], ==, 3);
}

static void
test_stats_histogram_sum (void)
{
  g_autoptr (OwbTensor) t = make_tensor (OWB_TYPE_FLOAT, 10007);
  float *d = t->data;
  GRand *r = g_rand_new_with_seed (7);
  for (int i = 0; i < 10007; i++)
    d[i] = (float) g_rand_double_range (r, -3, 3);
  d[17] = NAN;
  d[99] = -INFINITY;
  g_rand_free (r);
  OwbTensorStats s;
  guint64 bins[64];
  g_assert_true (owb_tensor_stats_compute (t, &s, 64, bins, NULL));
  guint64 sum = 0;
  for (int i = 0; i < 64; i++)
    sum += bins[i];
  g_assert_cmpuint (sum, ==, s.count - s.n_nan - s.n_inf);
  g_assert_cmpuint (sum, ==, 10005);
  g_assert_cmpuint (bins[0], >, 0);
  g_assert_cmpuint (bins[63], >, 0);
}

/* The one quantile of timings (owb bench's median and p90, the profiler's, the Quantize page's
 * latency): numpy's linear interpolation between the two nearest sorted values. */
static void
test_quantile (void)
{
  double v[] = { 4, 1, 3, 2 };
  owb_stats_sort_doubles (v, G_N_ELEMENTS (v));
  for (guint i = 0; i < G_N_ELEMENTS (v); i++)
    g_assert_cmpfloat (v[i], ==, i + 1);
  g_assert_cmpfloat (owb_stats_quantile (v, 4, 0.5), ==, 2.5);
  g_assert_cmpfloat_with_epsilon (owb_stats_quantile (v, 4, 0.9), 3.7, 1e-12);
  g_assert_cmpfloat (owb_stats_quantile (v, 4, 0), ==, 1);
  g_assert_cmpfloat (owb_stats_quantile (v, 4, 1), ==, 4);
  g_assert_cmpfloat (owb_stats_quantile (v, 3, 0.5), ==, 2);
  g_assert_cmpfloat (owb_stats_quantile (v, 1, 0.9), ==, 1);
  g_assert_cmpfloat (owb_stats_quantile (NULL, 0, 0.5), ==, 0);
  owb_stats_sort_doubles (NULL, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/stats/quantile", test_quantile);
  g_test_add_func ("/stats/float32", test_stats_float32);
  g_test_add_func ("/stats/int64", test_stats_int64);
  g_test_add_func ("/stats/float16", test_stats_float16);
  g_test_add_func ("/stats/odd-types", test_stats_odd_types);
  g_test_add_func ("/stats/top-k", test_top_k);
  g_test_add_func ("/stats/histogram-sum", test_stats_histogram_sum);
  return g_test_run ();
}
