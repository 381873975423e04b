/* test-kernels-signal.c: DFT/STFT against a naive DFT (Bluestein, mixed-radix and odd lengths), the
 * window and mel generators, GridSample/AffineGrid, RoiAlign, NonMaxSuppression, DeformConv and
 * ImageDecoder on the CPU provider, plus attribute/shape errors and symbolic-dim inference. */
#include <math.h>
#include <string.h>

#include "../engine/test-util.h"
#include "kernel-test-util.h"

/* ---- model building ---- */

typedef void (*Setup) (OwbNode *node);

/* An input of a test node: a fed tensor, a constant (initializer), a declared type only (for
 * inference: dims -1 unknown, -2 "batch"), or missing. */
typedef struct {
  enum { IN_MISSING, IN_FEED, IN_CONST, IN_DECL } kind;
  OwbTensor *value;
  OwbDataType dtype;
  int rank;
  int64_t dims[6];
} In;

#define FEED(t) ((In){ IN_FEED, (t), 0, 0, { 0 } })
#define CONST(t) ((In){ IN_CONST, (t), 0, 0, { 0 } })
#define MISSING ((In){ IN_MISSING, NULL, 0, 0, { 0 } })
#define DECL(dt, r, ...) ((In){ IN_DECL, NULL, (dt), (r), { __VA_ARGS__ } })

static OwbModel *
build (int opset, const char *op, int n, const In *ins, Setup setup)
{
  OwbModel *m = tu_model_new (opset);
  const char *params[] = { "batch", "batch", "batch", "batch", "batch", "batch" };
  GString *names = g_string_new (NULL);
  for (int i = 0; i < n; i++)
    {
      char name[16];
      g_snprintf (name, sizeof name, "i%d", i);
      if (i)
        g_string_append_c (names, ',');
      if (ins[i].kind == IN_MISSING)
        continue;
      g_string_append (names, name);
      if (ins[i].kind == IN_CONST)
        owb_graph_add_initializer (m->graph, name, owb_tensor_ref (ins[i].value));
      else if (ins[i].kind == IN_FEED)
        tu_add_value (m->graph->inputs, name, ins[i].value->dtype, ins[i].value->rank, ins[i].value->dims, NULL);
      else
        tu_add_value (m->graph->inputs, name, ins[i].dtype, ins[i].rank, ins[i].dims, params);
    }
  add_node_to_y (m, op, names->str, setup);
  g_string_free (names, TRUE);
  return m;
}

/* The inferred type of y as text, or NULL with the error. */
static char *
infer (int opset, const char *op, int n, const In *ins, Setup setup, GError **error)
{
  g_autoptr (OwbModel) m = build (opset, op, n, ins, setup);
  return infer_y_text (m, error);
}

static void
expect_type (int opset, const char *op, int n, const In *ins, Setup setup, const char *want)
{
  GError *error = NULL;
  g_autofree char *t = infer (opset, op, n, ins, setup, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (t, ==, want);
}

static void
check_error (GError *error, int code, const char *fragment)
{
  g_assert_error (error, OWB_ERROR, code);
  g_assert_nonnull (strstr (error->message, "the_node"));
  if (!strstr (error->message, fragment))
    g_error ("error '%s' lacks '%s'", error->message, fragment);
}

static void
expect_infer_error (int opset, const char *op, int n, const In *ins, Setup setup, int code, const char *fragment)
{
  GError *error = NULL;
  g_autofree char *t = infer (opset, op, n, ins, setup, &error);
  if (t)
    g_error ("%s: expected an error containing '%s', inferred %s", op, fragment, t);
  check_error (error, code, fragment);
  g_error_free (error);
}

/* Runs the node on the CPU provider; NULL with the error (from load or run). */
static OwbTensor *
run (int opset, const char *op, int n, const In *ins, Setup setup, int threads, GError **error)
{
  g_autoptr (OwbModel) m = build (opset, op, n, ins, setup);
  g_autoptr (OwbSession) s = tu_session (m, threads, error);
  OwbTensor *fed[8] = { NULL };
  g_assert_cmpint (n, <=, 8);
  for (int i = 0; i < n; i++)
    fed[i] = ins[i].kind == IN_FEED ? ins[i].value : NULL;
  OwbTensor *out = NULL;
  const char *out_name = "y";
  if (!s || !tu_run_indexed (s, n, fed, 0, 1, &out_name, &out, error))
    return NULL;
  return out;
}

static void
expect_run_error (int opset, const char *op, int n, const In *ins, Setup setup, int code, const char *fragment)
{
  GError *error = NULL;
  OwbTensor *t = run (opset, op, n, ins, setup, 1, &error);
  if (t)
    g_error ("%s: expected an error containing '%s'", op, fragment);
  check_error (error, code, fragment);
  g_error_free (error);
}

static void
free_inputs (int n, In *ins)
{
  for (int i = 0; i < n; i++)
    if (ins[i].value)
      owb_tensor_unref (ins[i].value);
}

static OwbTensor *
scalar_int (int64_t v)
{
  return owb_tensor_new_scalar_int64 (v);
}

static OwbTensor *
random_tensor (GRand *rand, OwbDataType dtype, int rank, const int64_t *dims, double lo, double hi)
{
  OwbTensor *t = tu_new_tensor (dtype, rank, dims, NULL);
  for (int64_t i = 0; i < t->nelems; i++)
    owb_tensor_set_double (t, i, g_rand_double_range (rand, lo, hi));
  return t;
}

static void
assert_close (const OwbTensor *got, const double *want, double tol)
{
  for (int64_t i = 0; i < got->nelems; i++)
    {
      double g = owb_tensor_get_double (got, i);
      if (!(fabs (g - want[i]) <= tol * (1 + fabs (want[i]))))
        g_error ("element %" G_GINT64_FORMAT ": got %.9g, want %.9g", i, g, want[i]);
    }
}

/* ---- DFT ---- */

/* Naive DFT of one complex line of n points (input zero-padded/truncated from len points). */
static void
naive_dft (const double *re, const double *im, int64_t len, int64_t n, gboolean inverse, double *ore, double *oim)
{
  for (int64_t k = 0; k < n; k++)
    {
      long double sr = 0, si = 0;
      for (int64_t j = 0; j < MIN (len, n); j++)
        {
          long double a = (inverse ? 2.0L : -2.0L) * 3.14159265358979323846264338327950288L * (long double) ((k * j) % n)
                          / (long double) n;
          sr += re[j] * cosl (a) - im[j] * sinl (a);
          si += re[j] * sinl (a) + im[j] * cosl (a);
        }
      ore[k] = (double) (inverse ? sr / n : sr);
      oim[k] = (double) (inverse ? si / n : si);
    }
}

static void
setup_inverse (OwbNode *n)
{
  tu_set_int (n, "inverse", 1);
}

static void
setup_onesided (OwbNode *n)
{
  tu_set_int (n, "onesided", 1);
}

static void
setup_irfft (OwbNode *n)
{
  tu_set_int (n, "inverse", 1);
  tu_set_int (n, "onesided", 1);
}

/* A batch of 3 lines of n points along axis 1, real or complex, through every transform kind. */
static void
check_dft_length (GRand *rand, int64_t n, OwbDataType dtype, int threads)
{
  double tol = dtype == OWB_TYPE_DOUBLE ? 1e-9 : 2e-4;
  for (int mode = 0; mode < 4; mode++)
    for (int comps = 1; comps <= 2; comps++)
      {
        gboolean inverse = mode >= 2, onesided = mode % 2 == 1;
        if ((onesided && !inverse && comps == 2) || (onesided && inverse && (comps == 1 || n < 2)))
          continue;
        Setup setups[4] = { NULL, setup_onesided, setup_inverse, setup_irfft };
        /* IRFFT reads n/2 + 1 points and writes n (even or odd, through dft_length). */
        int64_t in_len = onesided && inverse ? n / 2 + 1 : n;
        int64_t xd[3] = { 3, in_len, comps };
        In ins[3] = { FEED (random_tensor (rand, dtype, 3, xd, -1, 1)), CONST (scalar_int (n)),
                      CONST (scalar_int (1)) };
        GError *error = NULL;
        g_autoptr (OwbTensor) y = run (20, "DFT", 3, ins, setups[mode], threads, &error);
        g_assert_no_error (error);
        int64_t out_len = onesided && !inverse ? n / 2 + 1 : n;
        int64_t yd[3] = { 3, out_len, onesided && inverse ? 1 : 2 };
        assert_shape (y, 3, yd);
        double *want = g_new (double, 3 * out_len * 2);
        double *re = g_new0 (double, n), *im = g_new0 (double, n), *ore = g_new (double, n), *oim = g_new (double, n);
        for (int b = 0; b < 3; b++)
          {
            memset (re, 0, sizeof (double) * n);
            memset (im, 0, sizeof (double) * n);
            for (int64_t j = 0; j < in_len; j++)
              {
                re[j] = owb_tensor_get_double (ins[0].value, (b * in_len + j) * comps);
                im[j] = comps == 2 ? owb_tensor_get_double (ins[0].value, (b * in_len + j) * comps + 1) : 0;
              }
            if (onesided && inverse)
              {
                /* Hermitian completion; the parts that must be real are taken as real. */
                im[0] = 0;
                if (n % 2 == 0)
                  im[n / 2] = 0;
                for (int64_t k = 1; k < (n + 1) / 2; k++)
                  {
                    re[n - k] = re[k];
                    im[n - k] = -im[k];
                  }
              }
            naive_dft (re, im, n, n, inverse, ore, oim);
            for (int64_t k = 0; k < out_len; k++)
              {
                if (onesided && inverse)
                  want[b * out_len + k] = ore[k];
                else
                  {
                    want[(b * out_len + k) * 2] = ore[k];
                    want[(b * out_len + k) * 2 + 1] = oim[k];
                  }
              }
          }
        /* The transform scale grows with n: compare relative to sqrt (n). */
        assert_close (y, want, tol * sqrt ((double) n));
        g_free (want);
        g_free (re);
        g_free (im);
        g_free (ore);
        g_free (oim);
        free_inputs (3, ins);
      }
}

static void
test_dft_against_naive (void)
{
  GRand *rand = g_rand_new_with_seed (7);
  /* Powers of two, mixed radices, primes above the generic radix limit (Bluestein), odd lengths. */
  const int64_t lengths[] = { 1, 2, 3, 5, 6, 8, 15, 16, 37, 64, 101, 120, 243, 1000 };
  for (guint i = 0; i < G_N_ELEMENTS (lengths); i++)
    check_dft_length (rand, lengths[i], OWB_TYPE_FLOAT, 1);
  check_dft_length (rand, 97, OWB_TYPE_DOUBLE, 2);
  check_dft_length (rand, 256, OWB_TYPE_DOUBLE, 2);
  g_rand_free (rand);
}

/* A round trip RFFT then IRFFT gives the signal back, for even and odd lengths. */
static void
test_dft_round_trip (void)
{
  GRand *rand = g_rand_new_with_seed (3);
  for (int64_t n = 2; n <= 40; n += 7)
    {
      int64_t xd[2] = { n, 1 };
      OwbTensor *x = random_tensor (rand, OWB_TYPE_DOUBLE, 2, xd, -2, 2);
      In a[3] = { FEED (owb_tensor_ref (x)), MISSING, CONST (scalar_int (0)) };
      GError *error = NULL;
      OwbTensor *spec = run (20, "DFT", 3, a, setup_onesided, 1, &error);
      g_assert_no_error (error);
      In b[3] = { FEED (spec), CONST (scalar_int (n)), CONST (scalar_int (0)) };
      g_autoptr (OwbTensor) back = run (20, "DFT", 3, b, setup_irfft, 1, &error);
      g_assert_no_error (error);
      assert_shape (back, 2, xd);
      double *want = g_new (double, n);
      for (int64_t i = 0; i < n; i++)
        want[i] = owb_tensor_get_double (x, i);
      assert_close (back, want, 1e-12);
      g_free (want);
      free_inputs (3, a);
      free_inputs (3, b);
      owb_tensor_unref (x);
    }
  g_rand_free (rand);
}

static void setup_axis2 (OwbNode *n) { tu_set_int (n, "axis", 2); }
static void setup_inverse2 (OwbNode *n) { tu_set_int (n, "inverse", 2); }

static void
test_dft_inference (void)
{
  /* The batch dim passes through; the signal axis follows onesided and dft_length. */
  expect_type (20, "DFT", 1, (In[]){ DECL (OWB_TYPE_FLOAT, 3, -2, 16, 1) }, NULL, "float32[batch,16,2]");
  expect_type (20, "DFT", 1, (In[]){ DECL (OWB_TYPE_FLOAT, 3, -2, 16, 1) }, setup_onesided, "float32[batch,9,2]");
  expect_type (20, "DFT", 1, (In[]){ DECL (OWB_TYPE_FLOAT, 3, -2, 9, 2) }, setup_irfft, "float32[batch,16,1]");
  expect_type (17, "DFT", 1, (In[]){ DECL (OWB_TYPE_FLOAT, 4, -2, 7, 5, 2) }, setup_axis2, "float32[batch,7,5,2]");
  /* Not onesided and no dft_length: even an unknown signal length passes through. */
  expect_type (20, "DFT", 1, (In[]){ DECL (OWB_TYPE_FLOAT, 3, 2, -2, 2) }, NULL, "float32[2,batch,2]");
  /* dft_length or axis known only at run time. */
  expect_type (20, "DFT", 2, (In[]){ DECL (OWB_TYPE_FLOAT, 3, -2, 16, 1), DECL (OWB_TYPE_INT64, 0) }, NULL,
               "float32[batch,?,2]");
  expect_type (20, "DFT", 3, (In[]){ DECL (OWB_TYPE_FLOAT, 3, -2, 16, 1), MISSING, DECL (OWB_TYPE_INT64, 0) }, NULL,
               "float32[?,?,2]");
  In c[2] = { DECL (OWB_TYPE_FLOAT, 3, -2, 16, 1), CONST (scalar_int (10)) };
  expect_type (20, "DFT", 2, c, setup_onesided, "float32[batch,6,2]");
  free_inputs (2, c);

  /* Errors: the real/imaginary axis, a bad last axis, a bad length, a bad flag. */
  expect_infer_error (17, "DFT", 1, (In[]){ DECL (OWB_TYPE_FLOAT, 3, 1, 8, 2) }, setup_axis2, OWB_ERROR_INVALID_MODEL,
                      "axis");
  In ax[3] = { DECL (OWB_TYPE_FLOAT, 3, 1, 8, 2), MISSING, CONST (scalar_int (-1)) };
  expect_infer_error (20, "DFT", 3, ax, NULL, OWB_ERROR_INVALID_MODEL, "axis");
  free_inputs (3, ax);
  expect_infer_error (20, "DFT", 1, (In[]){ DECL (OWB_TYPE_FLOAT, 3, 1, 8, 3) }, NULL, OWB_ERROR_SHAPE, "1 (real) or 2");
  expect_infer_error (20, "DFT", 1, (In[]){ DECL (OWB_TYPE_FLOAT, 3, 1, 8, 2) }, setup_inverse2,
                      OWB_ERROR_INVALID_MODEL, "inverse");
  expect_infer_error (20, "DFT", 1, (In[]){ DECL (OWB_TYPE_INT32, 3, 1, 8, 2) }, NULL, OWB_ERROR_TYPE, "floating");
  In z[2] = { DECL (OWB_TYPE_FLOAT, 3, 1, 8, 2), CONST (scalar_int (0)) };
  expect_infer_error (20, "DFT", 2, z, NULL, OWB_ERROR_INVALID_MODEL, "dft_length");
  free_inputs (2, z);
  /* IRFFT of a one-point spectrum would have length 0. */
  expect_infer_error (20, "DFT", 1, (In[]){ DECL (OWB_TYPE_FLOAT, 3, 1, 1, 2) }, setup_irfft, OWB_ERROR_SHAPE,
                      "too short");
}

/* ---- STFT ---- */

static void
test_stft (void)
{
  GRand *rand = g_rand_new_with_seed (11);
  /* A complex signal, full spectrum, window and explicit frame_length, against the naive DFT. */
  int64_t xd[3] = { 2, 40, 2 }, wd[1] = { 12 };
  In ins[4] = { FEED (random_tensor (rand, OWB_TYPE_FLOAT, 3, xd, -1, 1)), CONST (scalar_int (5)),
                FEED (random_tensor (rand, OWB_TYPE_FLOAT, 1, wd, 0, 1)), CONST (scalar_int (12)) };
  GError *error = NULL;
  const int64_t frames = (40 - 12) / 5 + 1;
  OwbTensor *y;
  /* onesided defaults to 1; a complex signal needs it off. */
  {
    g_autoptr (OwbModel) m = build (17, "STFT", 4, ins, NULL);
    OwbNode *node = g_ptr_array_index (m->graph->nodes, 0);
    tu_set_int (node, "onesided", 0);
    g_autoptr (OwbSession) s = tu_session (m, 2, &error);
    g_assert_no_error (error);
    const char *names[2] = { "i0", "i2" };
    OwbTensor *feeds[2] = { ins[0].value, ins[2].value };
    const char *out_name = "y";
    y = NULL;
    g_assert_true (owb_session_run (s, 2, names, feeds, 1, &out_name, &y, NULL, NULL, &error));
  }
  int64_t yd[4] = { 2, frames, 12, 2 };
  assert_shape (y, 4, yd);
  double *want = g_new (double, y->nelems);
  for (int b = 0; b < 2; b++)
    for (int64_t f = 0; f < frames; f++)
      {
        double re[12], im[12], ore[12], oim[12];
        for (int j = 0; j < 12; j++)
          {
            double w = owb_tensor_get_double (ins[2].value, j);
            re[j] = w * owb_tensor_get_double (ins[0].value, ((b * 40) + f * 5 + j) * 2);
            im[j] = w * owb_tensor_get_double (ins[0].value, ((b * 40) + f * 5 + j) * 2 + 1);
          }
        naive_dft (re, im, 12, 12, FALSE, ore, oim);
        for (int k = 0; k < 12; k++)
          {
            want[((b * frames + f) * 12 + k) * 2] = ore[k];
            want[((b * frames + f) * 12 + k) * 2 + 1] = oim[k];
          }
      }
  assert_close (y, want, 1e-4);
  g_free (want);
  owb_tensor_unref (y);
  free_inputs (4, ins);
  g_rand_free (rand);

  /* Inference: frames and bins from constants; the batch dim passes through. */
  In c[4] = { DECL (OWB_TYPE_FLOAT, 3, -2, 128, 1), CONST (scalar_int (8)), MISSING, CONST (scalar_int (16)) };
  expect_type (17, "STFT", 4, c, NULL, "float32[batch,15,9,2]");
  free_inputs (4, c);
  In d[3] = { DECL (OWB_TYPE_FLOAT, 3, -2, -1, 1), DECL (OWB_TYPE_INT64, 0), DECL (OWB_TYPE_FLOAT, 1, 20) };
  expect_type (17, "STFT", 3, d, NULL, "float32[batch,?,11,2]");
  /* Errors: window and frame_length disagree, frame longer than the signal, zero step. */
  In e[4] = { DECL (OWB_TYPE_FLOAT, 3, 1, 128, 1), CONST (scalar_int (8)), DECL (OWB_TYPE_FLOAT, 1, 20),
              CONST (scalar_int (16)) };
  expect_infer_error (17, "STFT", 4, e, NULL, OWB_ERROR_SHAPE, "frame_length");
  free_inputs (4, e);
  In f[4] = { DECL (OWB_TYPE_FLOAT, 3, 1, 10, 1), CONST (scalar_int (8)), MISSING, CONST (scalar_int (16)) };
  expect_infer_error (17, "STFT", 4, f, NULL, OWB_ERROR_SHAPE, "shorter");
  free_inputs (4, f);
  In g[2] = { DECL (OWB_TYPE_FLOAT, 3, 1, 10, 1), CONST (scalar_int (0)) };
  expect_infer_error (17, "STFT", 2, g, NULL, OWB_ERROR_INVALID_MODEL, "frame_step");
  free_inputs (2, g);
}

/* ---- windows and MelWeightMatrix ---- */

static void setup_symmetric (OwbNode *n) { tu_set_int (n, "periodic", 0); }
static void setup_int32_out (OwbNode *n) { tu_set_int (n, "output_datatype", OWB_TYPE_INT32); }
static void setup_double_out (OwbNode *n) { tu_set_int (n, "output_datatype", OWB_TYPE_DOUBLE); }
static void setup_string_out (OwbNode *n) { tu_set_int (n, "output_datatype", OWB_TYPE_STRING); }
static void setup_half_out (OwbNode *n) { tu_set_int (n, "output_datatype", OWB_TYPE_FLOAT16); }

static void
test_windows (void)
{
  const char *ops[3] = { "HannWindow", "HammingWindow", "BlackmanWindow" };
  for (int o = 0; o < 3; o++)
    {
      /* A symmetric window is symmetric and peaks at 1 in the middle (odd size). */
      In s[1] = { FEED (scalar_int (9)) };
      GError *error = NULL;
      g_autoptr (OwbTensor) y = run (17, ops[o], 1, s, setup_symmetric, 1, &error);
      g_assert_no_error (error);
      assert_shape (y, 1, (int64_t[]){ 9 });
      g_assert_cmpint (y->dtype, ==, OWB_TYPE_FLOAT);
      for (int k = 0; k < 9; k++)
        g_assert_cmpfloat_with_epsilon (owb_tensor_get_double (y, k), owb_tensor_get_double (y, 8 - k), 1e-6);
      g_assert_cmpfloat_with_epsilon (owb_tensor_get_double (y, 4), 1.0, 1e-6);
      free_inputs (1, s);
      In s1[1] = { FEED (scalar_int (1)) };
      g_autoptr (OwbTensor) one = run (17, ops[o], 1, s1, setup_symmetric, 1, &error);
      g_assert_no_error (error);
      g_assert_cmpfloat (owb_tensor_get_double (one, 0), ==, 1.0);
      free_inputs (1, s1);
      In s0[1] = { FEED (scalar_int (0)) };
      g_autoptr (OwbTensor) empty = run (17, ops[o], 1, s0, NULL, 1, &error);
      g_assert_no_error (error);
      assert_shape (empty, 1, (int64_t[]){ 0 });
      free_inputs (1, s0);
    }
  In s[1] = { FEED (owb_tensor_new_scalar_int64 (11)) };
  GError *error = NULL;
  /* Integer output truncates: only the peak of a symmetric window is 1. */
  g_autoptr (OwbTensor) yint = NULL;
  {
    g_autoptr (OwbModel) m = build (17, "HannWindow", 1, s, setup_int32_out);
    tu_set_int (g_ptr_array_index (m->graph->nodes, 0), "periodic", 0);
    g_autoptr (OwbSession) sess = tu_session (m, 1, &error);
    g_assert_no_error (error);
    const char *names[1] = { "i0" }, *out_name = "y";
    g_assert_true (owb_session_run (sess, 1, names, &s[0].value, 1, &out_name, &yint, NULL, NULL, &error));
  }
  g_assert_cmpint (yint->dtype, ==, OWB_TYPE_INT32);
  for (int k = 0; k < 11; k++)
    g_assert_cmpint (((int32_t *) yint->data)[k], ==, k == 5 ? 1 : 0);
  g_autoptr (OwbTensor) yd = run (17, "HammingWindow", 1, s, setup_double_out, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (yd->dtype, ==, OWB_TYPE_DOUBLE);
  /* Periodic Hamming: 25/46 - 21/46 cos (2 pi k / N). */
  for (int k = 0; k < 11; k++)
    g_assert_cmpfloat_with_epsilon (((double *) yd->data)[k], 25.0 / 46 - 21.0 / 46 * cos (2 * G_PI * k / 11), 1e-12);
  g_autoptr (OwbTensor) yh = run (17, "BlackmanWindow", 1, s, setup_half_out, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (yh->dtype, ==, OWB_TYPE_FLOAT16);
  free_inputs (1, s);

  expect_type (17, "HannWindow", 1, (In[]){ DECL (OWB_TYPE_INT32, 0) }, setup_double_out, "float64[?]");
  In c[1] = { CONST (scalar_int (7)) };
  expect_type (17, "BlackmanWindow", 1, c, NULL, "float32[7]");
  free_inputs (1, c);
  expect_infer_error (17, "HannWindow", 1, (In[]){ DECL (OWB_TYPE_INT32, 0) }, setup_string_out,
                      OWB_ERROR_INVALID_MODEL, "output_datatype");
  In neg[1] = { CONST (scalar_int (-3)) };
  expect_infer_error (17, "HammingWindow", 1, neg, NULL, OWB_ERROR_INVALID_MODEL, "size");
  free_inputs (1, neg);
  expect_infer_error (17, "HannWindow", 1, (In[]){ DECL (OWB_TYPE_FLOAT, 0) }, NULL, OWB_ERROR_TYPE, "int32 or int64");
}

static void
test_mel_weight_matrix (void)
{
  OwbTensor *lo = owb_tensor_new_scalar_float (100), *hi = owb_tensor_new_scalar_float (4000);
  In ins[5] = { FEED (scalar_int (10)), FEED (scalar_int (256)), FEED (scalar_int (8000)), FEED (lo), FEED (hi) };
  GError *error = NULL;
  g_autoptr (OwbTensor) y = run (17, "MelWeightMatrix", 5, ins, NULL, 1, &error);
  g_assert_no_error (error);
  assert_shape (y, 2, (int64_t[]){ 129, 10 });
  /* Every band is a triangle with a peak of 1, zero outside it. */
  for (int b = 0; b < 10; b++)
    {
      double peak = 0;
      int nonzero = 0;
      for (int k = 0; k < 129; k++)
        {
          double v = owb_tensor_get_double (y, k * 10 + b);
          g_assert_cmpfloat (v, >=, 0);
          g_assert_cmpfloat (v, <=, 1);
          peak = MAX (peak, v);
          nonzero += v > 0;
        }
      g_assert_cmpfloat (peak, ==, 1.0);
      g_assert_cmpint (nonzero, >=, 1);
    }
  free_inputs (5, ins);
  In c[5] = { CONST (scalar_int (10)), CONST (scalar_int (100)), DECL (OWB_TYPE_INT64, 0), DECL (OWB_TYPE_FLOAT, 0),
              DECL (OWB_TYPE_FLOAT, 0) };
  expect_type (17, "MelWeightMatrix", 5, c, setup_double_out, "float64[51,10]");
  free_inputs (5, c);
  In z[5] = { CONST (scalar_int (0)), DECL (OWB_TYPE_INT64, 0), DECL (OWB_TYPE_INT64, 0), DECL (OWB_TYPE_FLOAT, 0),
              DECL (OWB_TYPE_FLOAT, 0) };
  expect_infer_error (17, "MelWeightMatrix", 5, z, NULL, OWB_ERROR_INVALID_MODEL, "num_mel_bins");
  free_inputs (5, z);
}

/* ---- GridSample and AffineGrid ---- */

static void setup_align (OwbNode *n) { tu_set_int (n, "align_corners", 1); }
static void setup_align_cubic (OwbNode *n) { tu_set_int (n, "align_corners", 1); tu_set_string (n, "mode", "cubic"); }
static void setup_align_nearest (OwbNode *n) { tu_set_int (n, "align_corners", 1); tu_set_string (n, "mode", "nearest"); }
static void setup_mode_linear (OwbNode *n) { tu_set_string (n, "mode", "linear"); }
static void setup_mode_foo (OwbNode *n) { tu_set_string (n, "mode", "foo"); }
static void setup_pad_foo (OwbNode *n) { tu_set_string (n, "padding_mode", "wrap"); }

/* AffineGrid with the identity and align_corners, then GridSample of X on that grid, gives X back
 * for every mode (taps fall on pixel centres). */
static void
test_grid_identity (void)
{
  GRand *rand = g_rand_new_with_seed (5);
  for (int nsp = 2; nsp <= 3; nsp++)
    {
      int64_t xd[5] = { 2, 3, 4, 5, 3 };
      OwbTensor *theta = tu_new_tensor (OWB_TYPE_FLOAT, 3, (int64_t[]){ 2, nsp, nsp + 1 }, NULL);
      for (int n = 0; n < 2; n++)
        for (int i = 0; i < nsp; i++)
          ((float *) theta->data)[(n * nsp + i) * (nsp + 1) + i] = 1.0f;
      OwbTensor *size = tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]){ nsp + 2 }, NULL);
      memcpy (size->data, xd, sizeof (int64_t) * (nsp + 2));
      In a[2] = { FEED (theta), FEED (size) };
      GError *error = NULL;
      OwbTensor *grid = run (20, "AffineGrid", 2, a, setup_align, 1, &error);
      g_assert_no_error (error);
      int64_t gd[5] = { 2, 4, 5, 3, 3 };
      gd[nsp + 1] = nsp;
      assert_shape (grid, nsp + 2, gd);
      /* The first grid point is the corner (-1, -1[, -1]). */
      g_assert_cmpfloat (((float *) grid->data)[0], ==, -1.0f);
      OwbTensor *x = random_tensor (rand, OWB_TYPE_FLOAT, nsp + 2, xd, -1, 1);
      Setup modes[3] = { setup_align, setup_align_nearest, setup_align_cubic };
      for (int m = 0; m < (nsp == 2 ? 3 : 2); m++)
        {
          In g[2] = { FEED (owb_tensor_ref (x)), FEED (owb_tensor_ref (grid)) };
          g_autoptr (OwbTensor) y = run (22, "GridSample", 2, g, modes[m], 2, &error);
          g_assert_no_error (error);
          assert_shape (y, nsp + 2, xd);
          double *want = g_new (double, x->nelems);
          for (int64_t i = 0; i < x->nelems; i++)
            want[i] = owb_tensor_get_double (x, i);
          assert_close (y, want, 1e-5);
          g_free (want);
          free_inputs (2, g);
        }
      owb_tensor_unref (x);
      owb_tensor_unref (grid);
      free_inputs (2, a);
    }
  g_rand_free (rand);
}

static void
test_grid_sample_types_and_errors (void)
{
  /* Integer data: computed in floating point, truncated at the end. */
  OwbTensor *x = tu_new_tensor (OWB_TYPE_INT32, 4, (int64_t[]){ 1, 1, 1, 2 }, NULL);
  ((int32_t *) x->data)[0] = 10;
  ((int32_t *) x->data)[1] = 21;
  OwbTensor *g = tu_new_tensor (OWB_TYPE_FLOAT, 4, (int64_t[]){ 1, 1, 1, 2 }, NULL);
  /* The midpoint of the two pixels. */
  In ins[2] = { FEED (x), FEED (g) };
  GError *error = NULL;
  g_autoptr (OwbTensor) y = run (20, "GridSample", 2, ins, setup_align, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (y->dtype, ==, OWB_TYPE_INT32);
  g_assert_cmpint (((int32_t *) y->data)[0], ==, 15);
  free_inputs (2, ins);

  expect_type (20, "GridSample", 2,
               (In[]){ DECL (OWB_TYPE_FLOAT, 5, -2, 3, 8, 8, 8), DECL (OWB_TYPE_FLOAT, 5, -2, 4, 5, 6, 3) }, NULL,
               "float32[batch,3,4,5,6]");
  expect_type (16, "GridSample", 2,
               (In[]){ DECL (OWB_TYPE_FLOAT, 4, 1, 3, 8, 8), DECL (OWB_TYPE_FLOAT, 4, 1, -1, 5, 2) }, NULL,
               "float32[1,3,?,5]");
  /* "linear" is a name of opset 20; opset 16 has only 4-D inputs. */
  expect_infer_error (16, "GridSample", 2,
                      (In[]){ DECL (OWB_TYPE_FLOAT, 4, 1, 3, 8, 8), DECL (OWB_TYPE_FLOAT, 4, 1, 4, 5, 2) },
                      setup_mode_linear, OWB_ERROR_INVALID_MODEL, "mode");
  expect_infer_error (16, "GridSample", 2,
                      (In[]){ DECL (OWB_TYPE_FLOAT, 5, 1, 3, 8, 8, 8), DECL (OWB_TYPE_FLOAT, 5, 1, 4, 5, 6, 3) },
                      NULL, OWB_ERROR_SHAPE, "rank");
  expect_infer_error (20, "GridSample", 2,
                      (In[]){ DECL (OWB_TYPE_FLOAT, 4, 1, 3, 8, 8), DECL (OWB_TYPE_FLOAT, 4, 1, 4, 5, 2) },
                      setup_mode_foo, OWB_ERROR_INVALID_MODEL, "mode");
  expect_infer_error (20, "GridSample", 2,
                      (In[]){ DECL (OWB_TYPE_FLOAT, 4, 1, 3, 8, 8), DECL (OWB_TYPE_FLOAT, 4, 1, 4, 5, 2) },
                      setup_pad_foo, OWB_ERROR_INVALID_MODEL, "padding_mode");
  expect_infer_error (20, "GridSample", 2,
                      (In[]){ DECL (OWB_TYPE_FLOAT, 4, 1, 3, 8, 8), DECL (OWB_TYPE_FLOAT, 4, 1, 4, 5, 3) }, NULL,
                      OWB_ERROR_SHAPE, "grid");
  expect_infer_error (20, "GridSample", 2,
                      (In[]){ DECL (OWB_TYPE_FLOAT, 4, 2, 3, 8, 8), DECL (OWB_TYPE_FLOAT, 4, 3, 4, 5, 2) }, NULL,
                      OWB_ERROR_SHAPE, "batch");

  /* AffineGrid: the output comes from the size values; a wrong count is an error. */
  OwbTensor *size = tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]){ 4 }, NULL);
  memcpy (size->data, (int64_t[]){ 2, 3, 7, 9 }, sizeof (int64_t) * 4);
  In a[2] = { DECL (OWB_TYPE_FLOAT, 3, 2, 2, 3), CONST (size) };
  expect_type (20, "AffineGrid", 2, a, NULL, "float32[2,7,9,2]");
  free_inputs (2, a);
  expect_type (20, "AffineGrid", 2, (In[]){ DECL (OWB_TYPE_FLOAT, 3, -2, 3, 4), DECL (OWB_TYPE_INT64, 1, 5) }, NULL,
               "float32[batch,?,?,?,3]");
  expect_infer_error (20, "AffineGrid", 2, (In[]){ DECL (OWB_TYPE_FLOAT, 3, 2, 2, 3), DECL (OWB_TYPE_INT64, 1, 5) },
                      NULL, OWB_ERROR_SHAPE, "theta");
  OwbTensor *bad = tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]){ 4 }, NULL);
  memcpy (bad->data, (int64_t[]){ 3, 3, 7, 9 }, sizeof (int64_t) * 4);
  In b[2] = { DECL (OWB_TYPE_FLOAT, 3, 2, 2, 3), CONST (bad) };
  expect_infer_error (20, "AffineGrid", 2, b, NULL, OWB_ERROR_SHAPE, "batch");
  free_inputs (2, b);
}

/* ---- RoiAlign ---- */

static void setup_roi (OwbNode *n) { tu_set_int (n, "output_height", 3); tu_set_int (n, "output_width", 2); }
static void setup_roi_bad_mode (OwbNode *n) { tu_set_string (n, "mode", "min"); }
static void setup_roi_zero (OwbNode *n) { tu_set_int (n, "output_height", 0); }

static void
test_roi_align (void)
{
  /* On a constant image every sample inside the image averages to the constant. */
  OwbTensor *x = tu_new_tensor (OWB_TYPE_FLOAT, 4, (int64_t[]){ 2, 2, 8, 8 }, NULL);
  for (int64_t i = 0; i < x->nelems; i++)
    ((float *) x->data)[i] = i < 128 ? 3.0f : 5.0f;
  OwbTensor *rois = tu_new_tensor (OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 4 }, NULL);
  memcpy (rois->data, (float[]){ 1, 1, 6, 5, 0.5f, 2, 7.5f, 7 }, sizeof (float) * 8);
  OwbTensor *bi = tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]){ 2 }, NULL);
  ((int64_t *) bi->data)[0] = 1;
  In ins[3] = { FEED (x), FEED (rois), FEED (bi) };
  GError *error = NULL;
  g_autoptr (OwbTensor) y = run (16, "RoiAlign", 3, ins, setup_roi, 2, &error);
  g_assert_no_error (error);
  assert_shape (y, 4, (int64_t[]){ 2, 2, 3, 2 });
  for (int64_t i = 0; i < y->nelems; i++)
    g_assert_cmpfloat_with_epsilon (((float *) y->data)[i], i < 12 ? 5.0 : 3.0, 1e-5);
  /* A batch index out of range is a run-time error. */
  ((int64_t *) bi->data)[1] = 2;
  expect_run_error (16, "RoiAlign", 3, ins, setup_roi, OWB_ERROR_INVALID_MODEL, "batch index");
  free_inputs (3, ins);

  expect_type (10, "RoiAlign", 3,
               (In[]){ DECL (OWB_TYPE_FLOAT, 4, 1, 16, 9, 9), DECL (OWB_TYPE_FLOAT, 2, -2, 4),
                       DECL (OWB_TYPE_INT64, 1, -2) },
               setup_roi, "float32[batch,16,3,2]");
  expect_infer_error (16, "RoiAlign", 3,
                      (In[]){ DECL (OWB_TYPE_FLOAT, 4, 1, 16, 9, 9), DECL (OWB_TYPE_FLOAT, 2, 5, 4),
                              DECL (OWB_TYPE_INT64, 1, 5) },
                      setup_roi_bad_mode, OWB_ERROR_INVALID_MODEL, "mode");
  expect_infer_error (16, "RoiAlign", 3,
                      (In[]){ DECL (OWB_TYPE_FLOAT, 4, 1, 16, 9, 9), DECL (OWB_TYPE_FLOAT, 2, 5, 4),
                              DECL (OWB_TYPE_INT64, 1, 5) },
                      setup_roi_zero, OWB_ERROR_INVALID_MODEL, "output_height");
  expect_infer_error (16, "RoiAlign", 3,
                      (In[]){ DECL (OWB_TYPE_FLOAT, 4, 1, 16, 9, 9), DECL (OWB_TYPE_FLOAT, 2, 5, 4),
                              DECL (OWB_TYPE_INT64, 1, 4) },
                      NULL, OWB_ERROR_SHAPE, "batch_indices");
}

/* ---- NonMaxSuppression ---- */

static void setup_center (OwbNode *n) { tu_set_int (n, "center_point_box", 1); }

static OwbTensor *
float_scalar_1d (float v)
{
  OwbTensor *t = tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]){ 1 }, NULL);
  ((float *) t->data)[0] = v;
  return t;
}

static void
test_nms (void)
{
  /* Three boxes, two overlapping heavily; box 2 ties box 0 on score and comes after it. */
  OwbTensor *boxes = tu_new_tensor (OWB_TYPE_FLOAT, 3, (int64_t[]){ 1, 3, 4 }, NULL);
  memcpy (boxes->data, (float[]){ 0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 5, 5, 6, 6 }, sizeof (float) * 12);
  OwbTensor *scores = tu_new_tensor (OWB_TYPE_FLOAT, 3, (int64_t[]){ 1, 2, 3 }, NULL);
  memcpy (scores->data, (float[]){ 0.9f, 0.95f, 0.9f, 0.1f, 0.2f, 0.3f }, sizeof (float) * 6);
  OwbTensor *maxo = tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]){ 1 }, NULL);
  ((int64_t *) maxo->data)[0] = 10;
  In ins[5] = { FEED (boxes), FEED (scores), FEED (maxo), FEED (float_scalar_1d (0.5f)),
                FEED (float_scalar_1d (0.15f)) };
  GError *error = NULL;
  g_autoptr (OwbTensor) y = run (11, "NonMaxSuppression", 5, ins, NULL, 2, &error);
  g_assert_no_error (error);
  /* Class 0: box 1 (0.95), box 0 suppressed, box 2; class 1: boxes 2 and 1 pass the threshold. */
  const int64_t want[] = { 0, 0, 1, 0, 0, 2, 0, 1, 2, 0, 1, 1 };
  assert_shape (y, 2, (int64_t[]){ 4, 3 });
  for (int i = 0; i < 12; i++)
    g_assert_cmpint (((int64_t *) y->data)[i], ==, want[i]);

  /* Without max_output_boxes_per_class nothing is selected. */
  In two[2] = { FEED (owb_tensor_ref (boxes)), FEED (owb_tensor_ref (scores)) };
  g_autoptr (OwbTensor) none = run (10, "NonMaxSuppression", 2, two, NULL, 1, &error);
  g_assert_no_error (error);
  assert_shape (none, 2, (int64_t[]){ 0, 3 });
  free_inputs (2, two);
  /* Negative limits select nothing; an IoU threshold above 1 is refused. */
  ((int64_t *) maxo->data)[0] = -4;
  g_autoptr (OwbTensor) neg = run (11, "NonMaxSuppression", 5, ins, setup_center, 1, &error);
  g_assert_no_error (error);
  assert_shape (neg, 2, (int64_t[]){ 0, 3 });
  ((int64_t *) maxo->data)[0] = 1;
  ((float *) ins[3].value->data)[0] = 1.5f;
  expect_run_error (11, "NonMaxSuppression", 5, ins, NULL, OWB_ERROR_INVALID_MODEL, "iou_threshold");
  free_inputs (5, ins);

  expect_type (11, "NonMaxSuppression", 2, (In[]){ DECL (OWB_TYPE_FLOAT, 3, -2, 100, 4), DECL (OWB_TYPE_FLOAT, 3, -2, 5, 100) },
               NULL, "int64[?,3]");
  expect_infer_error (11, "NonMaxSuppression", 2,
                      (In[]){ DECL (OWB_TYPE_FLOAT, 3, 1, 100, 5), DECL (OWB_TYPE_FLOAT, 3, 1, 5, 100) }, NULL,
                      OWB_ERROR_SHAPE, "boxes");
  expect_infer_error (11, "NonMaxSuppression", 2,
                      (In[]){ DECL (OWB_TYPE_FLOAT, 3, 1, 100, 4), DECL (OWB_TYPE_FLOAT, 3, 1, 5, 99) }, NULL,
                      OWB_ERROR_SHAPE, "disagree");
}

/* ---- DeformConv ---- */

static void
setup_deform (OwbNode *n)
{
  tu_set_int (n, "group", 2);
  tu_set_ints (n, "strides", 2, (int64_t[]){ 2, 1 });
  tu_set_ints (n, "pads", 4, (int64_t[]){ 1, 0, 1, 2 });
  tu_set_ints (n, "dilations", 2, (int64_t[]){ 1, 2 });
}

enum { DN = 2, DC = 4, DH = 6, DW = 7, DM = 6, DKH = 3, DKW = 2, DG = 2 };
#define DOH ((DH + 2 - DKH) / 2 + 1)
#define DOW ((DW + 2 - ((DKW - 1) * 2 + 1)) / 1 + 1)

/* The convolution of setup_deform with every tap read `down` rows lower. */
static double *
naive_conv_shifted (const OwbTensor *x, const OwbTensor *w, int64_t down)
{
  const int64_t C = DC, H = DH, W = DW, M = DM, KH = DKH, KW = DKW, G = DG, OH = DOH, OW = DOW;
  double *want = g_new0 (double, DN * M * OH * OW);
  for (int64_t n = 0; n < DN; n++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++)
          {
            double acc = 0;
            int64_t g = m / (M / G);
            for (int64_t c = 0; c < C / G; c++)
              for (int64_t kh = 0; kh < KH; kh++)
                for (int64_t kw = 0; kw < KW; kw++)
                  {
                    int64_t ih = oh * 2 - 1 + kh + down, iw = ow + kw * 2;
                    if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                      continue;
                    acc += ((double *) x->data)[((n * C + g * (C / G) + c) * H + ih) * W + iw]
                           * ((double *) w->data)[((m * (C / G) + c) * KH + kh) * KW + kw];
                  }
            want[((n * M + m) * OH + oh) * OW + ow] = acc;
          }
  return want;
}

/* With zero offsets and no mask DeformConv is a plain convolution; a mask scales the taps; an
 * offset of one row shifts every tap. */
static void
test_deform_conv (void)
{
  GRand *rand = g_rand_new_with_seed (9);
  const int64_t N = DN, C = DC, H = DH, W = DW, M = DM, KH = DKH, KW = DKW, G = DG, OH = DOH, OW = DOW;
  int64_t xd[4] = { N, C, H, W }, wd[4] = { M, C / G, KH, KW }, od[4] = { N, KH * KW * 2, OH, OW },
          md[4] = { N, KH * KW, OH, OW };
  OwbTensor *x = random_tensor (rand, OWB_TYPE_DOUBLE, 4, xd, -1, 1);
  OwbTensor *w = random_tensor (rand, OWB_TYPE_DOUBLE, 4, wd, -1, 1);
  OwbTensor *b = random_tensor (rand, OWB_TYPE_DOUBLE, 1, (int64_t[]){ M }, -1, 1);
  OwbTensor *off = tu_new_tensor (OWB_TYPE_DOUBLE, 4, od, NULL);
  OwbTensor *mask = tu_new_tensor (OWB_TYPE_DOUBLE, 4, md, NULL);
  for (int64_t i = 0; i < mask->nelems; i++)
    ((double *) mask->data)[i] = 0.5;
  double *want = naive_conv_shifted (x, w, 0);
  In ins[5] = { FEED (x), FEED (w), FEED (off), FEED (b), MISSING };
  GError *error = NULL;
  g_autoptr (OwbTensor) y = run (19, "DeformConv", 5, ins, setup_deform, 2, &error);
  g_assert_no_error (error);
  assert_shape (y, 4, (int64_t[]){ N, M, OH, OW });
  double *with_bias = g_new (double, y->nelems);
  for (int64_t i = 0; i < y->nelems; i++)
    with_bias[i] = want[i] + ((double *) b->data)[(i / (OH * OW)) % M];
  assert_close (y, with_bias, 1e-12);
  ins[3] = MISSING;
  ins[4] = FEED (mask);
  g_autoptr (OwbTensor) ym = run (22, "DeformConv", 5, ins, setup_deform, 1, &error);
  g_assert_no_error (error);
  for (int64_t i = 0; i < ym->nelems; i++)
    want[i] *= 0.5;
  assert_close (ym, want, 1e-12);
  /* An offset of one row on every tap reads the next row (zero past the bottom edge). */
  for (int64_t i = 0; i < off->nelems; i++)
    ((double *) off->data)[i] = (i / (OH * OW)) % 2 == 0 ? 1.0 : 0.0;
  g_autoptr (OwbTensor) ys = run (22, "DeformConv", 5, (In[]){ FEED (x), FEED (w), FEED (off), MISSING, MISSING },
                                  setup_deform, 1, &error);
  g_assert_no_error (error);
  double *shifted = naive_conv_shifted (x, w, 1);
  assert_close (ys, shifted, 1e-12);
  g_free (shifted);
  owb_tensor_unref (b);
  free_inputs (5, ins);
  g_free (want);
  g_free (with_bias);
  g_rand_free (rand);

  expect_type (19, "DeformConv", 3,
               (In[]){ DECL (OWB_TYPE_FLOAT, 4, -2, 4, 6, 7), DECL (OWB_TYPE_FLOAT, 4, 6, 2, 3, 2),
                       DECL (OWB_TYPE_FLOAT, 4, -2, 12, 3, 7) },
               setup_deform, "float32[batch,6,3,7]");
  expect_infer_error (19, "DeformConv", 3,
                      (In[]){ DECL (OWB_TYPE_FLOAT, 4, 1, 4, 6, 7), DECL (OWB_TYPE_FLOAT, 4, 6, 2, 3, 2),
                              DECL (OWB_TYPE_FLOAT, 4, 1, 10, 3, 7) },
                      setup_deform, OWB_ERROR_SHAPE, "offset");
  expect_infer_error (19, "DeformConv", 3,
                      (In[]){ DECL (OWB_TYPE_FLOAT, 4, 1, 4, 6, 7), DECL (OWB_TYPE_FLOAT, 4, 6, 2, 3, 2),
                              DECL (OWB_TYPE_FLOAT, 4, 1, 12, 4, 7) },
                      setup_deform, OWB_ERROR_SHAPE, "offset");
  expect_infer_error (19, "DeformConv", 3,
                      (In[]){ DECL (OWB_TYPE_FLOAT, 4, 1, 5, 6, 7), DECL (OWB_TYPE_FLOAT, 4, 6, 2, 3, 2),
                              DECL (OWB_TYPE_FLOAT, 4, 1, 12, 3, 7) },
                      setup_deform, OWB_ERROR_SHAPE, "channels");
}

/* ---- ImageDecoder ---- */

static void setup_bgr (OwbNode *n) { tu_set_string (n, "pixel_format", "BGR"); }
static void setup_gray (OwbNode *n) { tu_set_string (n, "pixel_format", "Grayscale"); }
static void setup_rgba (OwbNode *n) { tu_set_string (n, "pixel_format", "RGBA"); }

static OwbTensor *
bytes_tensor (const void *data, gsize n)
{
  OwbTensor *t = tu_new_tensor (OWB_TYPE_UINT8, 1, (int64_t[]){ (int64_t) n }, NULL);
  memcpy (t->data, data, n);
  return t;
}

static OwbTensor *
decode (const void *data, gsize n, Setup setup, GError **error)
{
  In ins[1] = { FEED (bytes_tensor (data, n)) };
  OwbTensor *y = run (20, "ImageDecoder", 1, ins, setup, 1, error);
  free_inputs (1, ins);
  return y;
}

#include <sys/resource.h>

/* A 103-byte PNG (found by fuzz-calibration): an 8x8 palette image whose tEXt chunk claims
 * 1,006,632,997 bytes. libpng allocated the claim before finding the file too short: the decoder's
 * process peaked at 1 GB. In a subprocess, so that the peak is this decode's. */
static void
test_image_decoder_png_chunk_claim (void)
{
  if (g_test_subprocess ())
    {
      static const guint8 png[] = {
        0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n',
        0, 0, 0, 13, 'I', 'H', 'D', 'R', 0, 0, 0, 8, 0, 0, 0, 8, 8, 3, 0, 0, 0, 0xf3, 0xd1, 0x4e, 0xb9,
        0x3c, 0, 0, 0x25, 't', 'E', 'X', 't', 'k', 'e', 'y', 0, 'v', 'a', 'l', 'u', 'e',
      };
      GError *error = NULL;
      g_autoptr (OwbTensor) y = decode (png, sizeof png, NULL, &error);
      if (y == NULL) /* a build without libpng */
        {
          check_error (error, OWB_ERROR_UNSUPPORTED_OP, "PNG");
          g_clear_error (&error);
          return;
        }
      assert_shape (y, 3, (int64_t[]){ 0, 0, 3 });
      struct rusage usage;
      getrusage (RUSAGE_SELF, &usage);
      g_test_message ("peak RSS %ld KiB", usage.ru_maxrss);
      g_assert_cmpint (usage.ru_maxrss, <, 256 * 1024);
      return;
    }
  g_test_trap_subprocess (NULL, 120 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* An 8 x 8 JPEG whose frame header was made to claim 16000 x 16000 pixels (390 bytes): its data
 * ends at EOI long before the image does. libjpeg pads such a stream with gray, so it was decoded
 * in full (26 s, 768 MB; 4.5 GB as a calibration image); now it is corrupt, an empty image, as a
 * truncated image is to the ONNX reference. The file is fuzz-calibration's reproducer (its first
 * byte is the harness's folder kind). */
static void
test_image_decoder_jpeg_cut_short (void)
{
  g_autofree char *path = g_build_filename (g_getenv ("OWB_SOURCE_ROOT"), "tests", "fuzz", "regressions", "calibration",
                                            "jpeg-claims-16000x16000-pixels", NULL);
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (path, &data, &len, NULL));
  GError *error = NULL;
  g_autoptr (OwbTensor) y = decode (data + 1, len - 1, NULL, &error);
  if (y == NULL) /* a build without libjpeg */
    {
      check_error (error, OWB_ERROR_UNSUPPORTED_OP, "JPEG");
      g_clear_error (&error);
      return;
    }
  assert_shape (y, 3, (int64_t[]){ 0, 0, 3 });
}

static void
test_image_decoder (void)
{
  /* A 2x2 24-bit BMP, stored bottom-up in BGR with rows padded to 4 bytes. Top row: red, green;
   * bottom row: blue, white. */
  guint8 bmp[54 + 16] = { 'B', 'M' };
  bmp[2] = sizeof bmp;
  bmp[10] = 54;
  bmp[14] = 40;
  bmp[18] = 2;
  bmp[22] = 2;
  bmp[26] = 1;
  bmp[28] = 24;
  const guint8 pixels[16] = { 255, 0, 0, 255, 255, 255, 0, 0, /* bottom: blue, white */
                              0, 0, 255, 0, 255, 0, 0, 0 };    /* top: red, green */
  memcpy (bmp + 54, pixels, 16);
  const guint8 rgb[12] = { 255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255 };
  GError *error = NULL;
  g_autoptr (OwbTensor) y = decode (bmp, sizeof bmp, NULL, &error);
  g_assert_no_error (error);
  assert_shape (y, 3, (int64_t[]){ 2, 2, 3 });
  g_assert_cmpmem (y->data, 12, rgb, 12);
  g_autoptr (OwbTensor) yb = decode (bmp, sizeof bmp, setup_bgr, &error);
  g_assert_no_error (error);
  for (int i = 0; i < 4; i++)
    for (int c = 0; c < 3; c++)
      g_assert_cmpint (((guint8 *) yb->data)[3 * i + c], ==, rgb[3 * i + 2 - c]);
  g_autoptr (OwbTensor) yg = decode (bmp, sizeof bmp, setup_gray, &error);
  g_assert_no_error (error);
  assert_shape (yg, 3, (int64_t[]){ 2, 2, 1 });
  const guint8 gray[4] = { 76, 150, 29, 255 };
  g_assert_cmpmem (yg->data, 4, gray, 4);

  /* Plain and raw PNM: a PGM with 16-bit samples and a comment, and an ASCII PPM. */
  const char ppm[] = "P3\n# two pixels\n2 1\n255\n255 0 0  0 0 255\n";
  g_autoptr (OwbTensor) yp = decode (ppm, strlen (ppm), NULL, &error);
  g_assert_no_error (error);
  assert_shape (yp, 3, (int64_t[]){ 1, 2, 3 });
  g_assert_cmpmem (yp->data, 6, ((guint8[]){ 255, 0, 0, 0, 0, 255 }), 6);
  const guint8 pgm[] = { 'P', '5', ' ', '1', ' ', '2', ' ', '6', '5', '5', '3', '5', '\n', 0xff, 0xff, 0x80, 0x00 };
  g_autoptr (OwbTensor) yq = decode (pgm, sizeof pgm, setup_gray, &error);
  g_assert_no_error (error);
  assert_shape (yq, 3, (int64_t[]){ 2, 1, 1 });
  g_assert_cmpint (((guint8 *) yq->data)[0], ==, 255);
  g_assert_cmpint (((guint8 *) yq->data)[1], ==, 128);

  /* Undecodable streams give an empty image; a truncated BMP too. */
  const char junk[] = "not an image at all";
  g_autoptr (OwbTensor) ye = decode (junk, strlen (junk), NULL, &error);
  g_assert_no_error (error);
  assert_shape (ye, 3, (int64_t[]){ 0, 0, 3 });
  g_autoptr (OwbTensor) yt = decode (bmp, sizeof bmp - 3, setup_gray, &error);
  g_assert_no_error (error);
  assert_shape (yt, 3, (int64_t[]){ 0, 0, 1 });
  const guint8 pnm_bad[] = "P6 4 4 255\n\x01\x02";
  g_autoptr (OwbTensor) yn = decode (pnm_bad, sizeof pnm_bad - 1, NULL, &error);
  g_assert_no_error (error);
  assert_shape (yn, 3, (int64_t[]){ 0, 0, 3 });
  /* A damaged PNG: an empty image where libpng is built in, a clear error where it is not. */
  const guint8 png_bad[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR garbage";
  g_autoptr (OwbTensor) yx = decode (png_bad, sizeof png_bad - 1, NULL, &error);
  if (yx)
    assert_shape (yx, 3, (int64_t[]){ 0, 0, 3 });
  else
    {
      check_error (error, OWB_ERROR_UNSUPPORTED_OP, "PNG");
      g_clear_error (&error);
    }
  /* A header claiming a huge image is refused without allocating it. */
  guint8 huge[54 + 16];
  memcpy (huge, bmp, sizeof huge);
  huge[21] = 0x7f;
  huge[25] = 0x7f;
  g_autoptr (OwbTensor) yh = decode (huge, sizeof huge, NULL, &error);
  g_assert_no_error (error);
  assert_shape (yh, 3, (int64_t[]){ 0, 0, 3 });

  expect_type (20, "ImageDecoder", 1, (In[]){ DECL (OWB_TYPE_UINT8, 1, -1) }, setup_gray, "uint8[?,?,1]");
  expect_infer_error (20, "ImageDecoder", 1, (In[]){ DECL (OWB_TYPE_UINT8, 1, -1) }, setup_rgba,
                      OWB_ERROR_INVALID_MODEL, "pixel_format");
  expect_infer_error (20, "ImageDecoder", 1, (In[]){ DECL (OWB_TYPE_INT8, 1, -1) }, NULL, OWB_ERROR_TYPE, "uint8");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/signal/dft-naive", test_dft_against_naive);
  g_test_add_func ("/signal/dft-round-trip", test_dft_round_trip);
  g_test_add_func ("/signal/dft-inference", test_dft_inference);
  g_test_add_func ("/signal/stft", test_stft);
  g_test_add_func ("/signal/windows", test_windows);
  g_test_add_func ("/signal/mel-weight-matrix", test_mel_weight_matrix);
  g_test_add_func ("/signal/grid-identity", test_grid_identity);
  g_test_add_func ("/signal/grid-sample-types-errors", test_grid_sample_types_and_errors);
  g_test_add_func ("/signal/roi-align", test_roi_align);
  g_test_add_func ("/signal/nms", test_nms);
  g_test_add_func ("/signal/deform-conv", test_deform_conv);
  g_test_add_func ("/signal/image-decoder", test_image_decoder);
  g_test_add_func ("/signal/image-decoder/png-chunk-claim", test_image_decoder_png_chunk_claim);
  g_test_add_func ("/signal/image-decoder/jpeg-cut-short", test_image_decoder_jpeg_cut_short);
  return g_test_run ();
}
