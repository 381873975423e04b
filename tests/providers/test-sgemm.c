/* test-sgemm.c: the packed-weights SGEMM (cpu-sgemm.c) against a double-precision reference on
 * random shapes with row/column/depth tails, strided operands, bias, residual, every in-register
 * activation and a rows callback, through the AVX2 microkernel (where the CPU has it) and the forced portable one;
 * weights packed from their transposed rows. */
#include "../engine/test-util.h"
#include "../../providers/cpu/cpu-sgemm-private.h"
#include "gemm-test-util.h"
#include "../../providers/cpu/cpu-activation-private.h"

#include <math.h>
#include <string.h>

#define SENTINEL 12345.0f

typedef struct {
  int64_t rows, N, K;
  gboolean bias, residual;
  OwbSgemmAct act;
  gboolean rows_fn;
  int threads;
  int64_t lda; /* A's row stride; 0: K + 3 */
} Case;

static void
run_case (const Case *cs, guint32 seed)
{
  GRand *r = g_rand_new_with_seed (seed);
  int64_t lda = cs->lda ? cs->lda : cs->K + 3, ldb = cs->N + 5, ldc = cs->N + 7, ldz = cs->N + 2;
  float *a = g_new (float, cs->rows * lda), *b = g_new (float, cs->K * ldb), *bias = g_new (float, cs->N);
  float *z = g_new (float, cs->rows * ldz), *c = g_new (float, cs->rows * ldc);
  fill (a, cs->rows * lda, r);
  fill (b, cs->K * ldb, r);
  fill (bias, cs->N, r);
  fill (z, cs->rows * ldz, r);
  for (int64_t i = 0; i < cs->rows * ldc; i++)
    c[i] = SENTINEL;
  OwbSgemmPacked *p = _owb_sgemm_pack (cs->K, cs->N, b, ldb);
  g_assert_cmpint (_owb_sgemm_packed_k (p), ==, cs->K);
  g_assert_cmpint (_owb_sgemm_packed_n (p), ==, cs->N);
  OwbSgemmEpilogue ep = { .bias = cs->bias ? bias : NULL, .z = cs->residual ? z : NULL, .ldz = ldz,
                          .act = cs->act, .p0 = cs->act == OWB_SGEMM_ACT_CLAMP ? -0.5f : 0.2f,
                          .p1 = cs->act == OWB_SGEMM_ACT_CLAMP ? 0.75f : 0.5f,
                          .rows_fn = cs->rows_fn ? square_rows : NULL, .rows_data = square_rows };
  OwbThreadPool *pool = cs->threads > 1 ? owb_thread_pool_new (cs->threads) : NULL;
  _owb_sgemm_packed (pool, p, cs->rows, a, lda, c, ldc, &ep);
  if (pool)
    owb_thread_pool_free (pool);
  double tol = 1e-6 * MAX (sqrt ((double) cs->K), 4);
  for (int64_t i = 0; i < cs->rows; i++)
    {
      for (int64_t j = 0; j < cs->N; j++)
        {
          double ref = 0;
          for (int64_t k = 0; k < cs->K; k++)
            ref += (double) a[i * lda + k] * b[k * ldb + j];
          if (cs->bias)
            ref += bias[j];
          if (cs->residual)
            ref += z[i * ldz + j];
          switch (cs->act)
            {
            case OWB_SGEMM_ACT_NONE:
              break;
            case OWB_SGEMM_ACT_CLAMP:
              ref = MIN (MAX (ref, -0.5), 0.75);
              break;
            case OWB_SGEMM_ACT_SIGMOID:
              ref = 1 / (1 + exp (-ref));
              break;
            case OWB_SGEMM_ACT_SWISH:
              ref = ref / (1 + exp (-ref));
              break;
            case OWB_SGEMM_ACT_HARD_SIGMOID:
              ref = MIN (MAX (0.2 * ref + 0.5, 0), 1);
              break;
            case OWB_SGEMM_ACT_HARD_SWISH:
              ref = ref * MIN (MAX (0.2 * ref + 0.5, 0), 1);
              break;
            }
          if (cs->rows_fn)
            ref *= ref;
          double got = c[i * ldc + j];
          if (!(fabs (got - ref) <= tol * (1 + fabs (ref))))
            g_error ("rows %" G_GINT64_FORMAT " N %" G_GINT64_FORMAT " K %" G_GINT64_FORMAT " (%s): C[%" G_GINT64_FORMAT
                     ", %" G_GINT64_FORMAT "] = %.9g, expected %.9g",
                     cs->rows, cs->N, cs->K,
                     _owb_sgemm_uses_avx512 () ? "avx512" : _owb_sgemm_uses_avx2 () ? "avx2" : "portable", i, j,
                     got, ref);
        }
      /* nothing written between rows */
      for (int64_t j = cs->N; j < ldc; j++)
        g_assert_cmpfloat (c[i * ldc + j], ==, SENTINEL);
    }
  _owb_sgemm_packed_free (p);
  g_free (a);
  g_free (b);
  g_free (bias);
  g_free (z);
  g_free (c);
  g_rand_free (r);
}

static void
run_random_cases (void)
{
  static const Case fixed[] = {
    { 1, 1, 1, FALSE, FALSE, OWB_SGEMM_ACT_NONE, FALSE, 1 },
    { 6, 16, 256, TRUE, FALSE, OWB_SGEMM_ACT_SWISH, FALSE, 1 },
    { 49, 512, 600, TRUE, TRUE, OWB_SGEMM_ACT_CLAMP, FALSE, 2 },  /* K: 3 blocks; split by columns */
    { 7, 300, 513, TRUE, TRUE, OWB_SGEMM_ACT_NONE, TRUE, 3 },     /* N past two column blocks of 128 */
    { 37, 24, 147, TRUE, FALSE, OWB_SGEMM_ACT_HARD_SWISH, FALSE, 2 }, /* 8-wide last panel */
    { 13, 10, 5, FALSE, TRUE, OWB_SGEMM_ACT_SIGMOID, FALSE, 1 },  /* one partial 16-wide panel */
    { 200, 40, 64, TRUE, TRUE, OWB_SGEMM_ACT_HARD_SIGMOID, TRUE, 4 },
    { 5, 33, 0, TRUE, TRUE, OWB_SGEMM_ACT_NONE, FALSE, 1 },       /* K = 0: bias + residual only */
    { 13, 1040, 1100, TRUE, TRUE, OWB_SGEMM_ACT_CLAMP, FALSE, 3 }, /* B over 4 MiB: threads take columns */
    /* A's rows a multiple of 2 KiB apart: its strips are copied before the tiles read them */
    { 30, 70, 1024, TRUE, TRUE, OWB_SGEMM_ACT_CLAMP, FALSE, 1, 1024 },   /* 4 depth blocks */
    { 17, 45, 300, FALSE, TRUE, OWB_SGEMM_ACT_SWISH, TRUE, 2, 512 },     /* 2 uneven depth blocks */
    { 43, 33, 200, TRUE, FALSE, OWB_SGEMM_ACT_NONE, FALSE, 1, 512 },     /* one depth block */
    { 3, 24, 2048, TRUE, TRUE, OWB_SGEMM_ACT_HARD_SWISH, FALSE, 2, 2048 }, /* few rows, 8-wide panel */
  };
  for (guint i = 0; i < G_N_ELEMENTS (fixed); i++)
    run_case (&fixed[i], i + 1);
  GRand *r = g_rand_new_with_seed (99);
  for (int i = 0; i < 40; i++)
    {
      Case cs = { g_rand_int_range (r, 1, 60), g_rand_int_range (r, 1, 90), g_rand_int_range (r, 1, 700),
                  g_rand_boolean (r), g_rand_boolean (r), g_rand_int_range (r, 0, OWB_SGEMM_ACT_HARD_SWISH + 1),
                  g_rand_int_range (r, 0, 4) == 0,
                  g_rand_int_range (r, 1, 4) };
      run_case (&cs, 1000 + i);
    }
  g_rand_free (r);
}

static void
test_sgemm_avx512 (void)
{
  _owb_sgemm_force_portable (FALSE);
  if (!_owb_sgemm_uses_avx512 ())
    {
      g_test_skip ("this CPU has no AVX-512");
      return;
    }
  g_assert_cmpint (_owb_sgemm_tile_rows (), ==, 14);
  run_random_cases ();
}

static void
test_sgemm_avx2 (void)
{
  _owb_sgemm_force_portable (FALSE);
  _owb_sgemm_force_avx2 (TRUE);
  if (!_owb_sgemm_uses_avx2 ())
    {
      _owb_sgemm_force_avx2 (FALSE);
      g_test_skip ("this CPU has no AVX2 + FMA");
      return;
    }
  g_assert_false (_owb_sgemm_uses_avx512 ());
  g_assert_cmpint (_owb_sgemm_tile_rows (), ==, 6);
  run_random_cases ();
  _owb_sgemm_force_avx2 (FALSE);
}

/* _owb_cpu_sigmoid_vector (the Sigmoid and Swish of the SGEMM epilogue's pass, of the depthwise
 * rows and of the Sigmoid op) over [-88, 88] and a tail of 3: within 1e-6 relative of the double
 * result where that is a normal float, 1e-37 absolute below, NaN kept. In a new process with
 * OWB_CPU_NO_AVX512 (read once) as well, for the AVX2 code a CPU with AVX-512 otherwise never runs. */
static void
check_sigmoid_vector (void)
{
  const int64_t n = 1763;
  for (int swish = 0; swish <= 1; swish++)
    {
      float *y = g_new (float, n + 1);
      for (int64_t i = 0; i < n; i++)
        y[i] = (float) (-88.0 + 176.0 * i / (n - 1));
      y[n] = NAN;
      if (!_owb_cpu_sigmoid_vector (y, n + 1, swish))
        {
          g_free (y);
          g_test_skip ("no AVX2 + FMA");
          return;
        }
      for (int64_t i = 0; i < n; i++)
        {
          double v = (float) (-88.0 + 176.0 * i / (n - 1)), want = (swish ? v : 1.0) / (1.0 + exp (-v));
          double tol = v >= -87 ? 1e-6 * fabs (want) : 1e-37 * MAX (1.0, fabs (v));
          if (fabs (y[i] - want) > tol)
            g_error ("%s (%.9g): got %.9g, want %.9g", swish ? "Swish" : "Sigmoid", v, y[i], want);
        }
      g_assert_true (isnan (y[n]));
      g_free (y);
    }
}

static void
test_sigmoid_vector (void)
{
  if (g_test_subprocess ())
    {
      g_setenv ("OWB_CPU_NO_AVX512", "1", TRUE);
      check_sigmoid_vector ();
      return;
    }
  check_sigmoid_vector ();
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* OWB_CPU_NO_AVX512 (read once, before the first kernel asks) takes the AVX2 paths on a CPU with
 * AVX-512, for measuring what CPUs without it run; checked in a fresh process. */
static void
test_env_no_avx512 (void)
{
  if (g_test_subprocess ())
    {
      g_setenv ("OWB_CPU_NO_AVX512", "1", TRUE);
      _owb_sgemm_force_portable (FALSE);
      g_assert_false (_owb_sgemm_uses_avx512 ());
      if (_owb_sgemm_uses_avx2 ())
        {
          g_assert_cmpint (_owb_sgemm_tile_rows (), ==, 6);
          run_random_cases ();
        }
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
test_sgemm_portable (void)
{
  _owb_sgemm_force_portable (TRUE);
  g_assert_false (_owb_sgemm_uses_avx2 ());
  run_random_cases ();
  _owb_sgemm_force_portable (FALSE);
}

/* A column sub-range leaves the other columns alone; NaN passes a clamp (as Relu/Clip do). */
static void
test_sgemm_subrange_and_nan (void)
{
  /* the CPU's best microkernel, AVX2, portable */
  for (int mode = 0; mode < 3; mode++)
    {
      _owb_sgemm_force_avx2 (mode == 1);
      _owb_sgemm_force_portable (mode == 2);
      int64_t rows = 7, K = 20, N = 50;
      float a[7 * 20], b[20 * 50], c[7 * 50];
      for (int i = 0; i < rows * K; i++)
        a[i] = (float) (i % 5) - 2;
      for (int i = 0; i < K * N; i++)
        b[i] = (float) (i % 3) - 1;
      a[3 * K + 4] = NAN;
      for (int i = 0; i < rows * N; i++)
        c[i] = SENTINEL;
      OwbSgemmPacked *p = _owb_sgemm_pack (K, N, b, N);
      OwbSgemmEpilogue ep = { .act = OWB_SGEMM_ACT_CLAMP, .p0 = 0, .p1 = INFINITY };
      _owb_sgemm_packed_run (p, rows, a, K, 16, 40, c, N, &ep);
      for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < N; j++)
          {
            float got = c[i * N + j];
            if (j < 16 || j >= 40)
              g_assert_cmpfloat (got, ==, SENTINEL);
            else if (i == 3)
              g_assert_true (isnan (got));
            else
              {
                double ref = 0;
                for (int64_t k = 0; k < K; k++)
                  ref += (double) a[i * K + k] * b[k * N + j];
                g_assert_cmpfloat (got, ==, (float) MAX (ref, 0));
              }
          }
      _owb_sgemm_packed_free (p);
    }
  _owb_sgemm_force_avx2 (FALSE);
  _owb_sgemm_force_portable (FALSE);
}

/* Packing a transposed weight straight from its rows gives the pack of its transposed copy: every
 * panel width (16, a last one of 8 or 16), depth blocks of 64 with tails, strided rows, alpha. */
static void
test_sgemm_pack_transposed (void)
{
  static const int64_t Ns[] = { 5, 8, 9, 16, 17, 24, 33, 40 }, Ks[] = { 1, 7, 64, 65, 130 };
  static const float alphas[] = { 1.0f, 0.5f, -2.0f };
  GRand *r = g_rand_new_with_seed (7);
  for (guint ni = 0; ni < G_N_ELEMENTS (Ns); ni++)
    for (guint ki = 0; ki < G_N_ELEMENTS (Ks); ki++)
      {
        int64_t N = Ns[ni], K = Ks[ki], ldbt = K + 3, rows = 7;
        float alpha = alphas[(ni + ki) % G_N_ELEMENTS (alphas)];
        float *bt = g_new (float, N * ldbt), *b = g_new (float, K * N), *a = g_new (float, rows * K);
        float *c1 = g_new (float, rows * N), *c2 = g_new (float, rows * N);
        fill (bt, N * ldbt, r);
        fill (a, rows * K, r);
        for (int64_t k = 0; k < K; k++)
          for (int64_t n = 0; n < N; n++)
            b[k * N + n] = alpha * bt[n * ldbt + k];
        OwbSgemmPacked *p1 = _owb_sgemm_pack (K, N, b, N), *p2 = _owb_sgemm_pack_transposed (K, N, bt, ldbt, alpha);
        g_assert_cmpint (_owb_sgemm_packed_k (p2), ==, K);
        g_assert_cmpint (_owb_sgemm_packed_n (p2), ==, N);
        _owb_sgemm_packed_run (p1, rows, a, K, 0, N, c1, N, NULL);
        _owb_sgemm_packed_run (p2, rows, a, K, 0, N, c2, N, NULL);
        g_assert_cmpmem (c1, rows * N * sizeof (float), c2, rows * N * sizeof (float));
        _owb_sgemm_packed_free (p1);
        _owb_sgemm_packed_free (p2);
        g_free (bt);
        g_free (b);
        g_free (a);
        g_free (c1);
        g_free (c2);
      }
  g_rand_free (r);
}

/* Both threads busy on every shape: a 7x7 image with 512 channels splits by columns. Row tiles
 * are whole register tiles: 6 rows with AVX2, 14 with AVX-512. */
static void
test_sgemm_partition (void)
{
  int64_t rt, cb;
  if (_owb_sgemm_uses_avx512 ())
    {
      _owb_sgemm_partition (49, 512, 64, 2, 49, &rt, &cb);
      g_assert_cmpint (rt % 14, ==, 0);
      g_assert_cmpint ((49 + rt - 1) / rt * ((512 + cb - 1) / cb) % 2, ==, 0);
      _owb_sgemm_partition (3136, 64, 64, 2, 455, &rt, &cb);
      g_assert_cmpint (rt % 14, ==, 0);
      g_assert_cmpint ((3136 + rt - 1) / rt % 2, ==, 0);
      /* 49 rows against a 4 MiB B (ResNet-50's last 1x1 layers): each thread takes half of B's
       * columns rather than all of B for half the rows */
      _owb_sgemm_partition (49, 2048, 512, 2, 49, &rt, &cb);
      g_assert_cmpint (rt, >=, 49);
      g_assert_cmpint (cb, ==, 1024);
    }
  _owb_sgemm_force_avx2 (TRUE);
  _owb_sgemm_partition (49, 512, 64, 2, 49, &rt, &cb);
  g_assert_cmpint (rt, ==, 54);
  g_assert_cmpint (cb, ==, 256);
  _owb_sgemm_partition (3136, 64, 64, 2, 455, &rt, &cb);
  g_assert_cmpint (rt % 6, ==, 0);
  g_assert_cmpint ((3136 + rt - 1) / rt % 2, ==, 0);
  g_assert_cmpint (cb, ==, 64);
  _owb_sgemm_partition (100, 30, 64, 1, 1000, &rt, &cb);
  g_assert_cmpint (rt, ==, 102);
  g_assert_cmpint (cb, ==, 32);
  _owb_sgemm_force_avx2 (FALSE);
}

/* Creating the CPU provider leaves the process with no BLAS threads: OpenBLAS starts its own when it
 * is loaded, and they spun beside the session's pool for the first ~100 ms. Runs first, before any
 * pool exists. */
static void
test_no_blas_threads (void)
{
#ifdef __linux__
  GPtrArray *providers = owb_providers_new_from_list ("cpu", NULL);
  g_assert_nonnull (providers);
  guint threads = 0;
  for (int attempt = 0; attempt < 50; attempt++)
    {
      g_autoptr (GDir) dir = g_dir_open ("/proc/self/task", 0, NULL);
      g_assert_nonnull (dir);
      threads = 0;
      while (g_dir_read_name (dir))
        threads++;
      if (threads == 1)
        break;
      g_usleep (2000); /* ended threads may take a moment to go */
    }
  g_assert_cmpuint (threads, ==, 1);
  g_ptr_array_unref (providers);
#else
  g_test_skip ("threads are counted through /proc/self/task");
#endif
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sgemm/no-blas-threads", test_no_blas_threads);
  g_test_add_func ("/sgemm/avx512", test_sgemm_avx512);
  g_test_add_func ("/sgemm/avx2", test_sgemm_avx2);
  g_test_add_func ("/sgemm/env-no-avx512", test_env_no_avx512);
  g_test_add_func ("/sgemm/sigmoid-vector", test_sigmoid_vector);
  g_test_add_func ("/sgemm/portable", test_sgemm_portable);
  g_test_add_func ("/sgemm/subrange-and-nan", test_sgemm_subrange_and_nan);
  g_test_add_func ("/sgemm/partition", test_sgemm_partition);
  g_test_add_func ("/sgemm/pack-transposed", test_sgemm_pack_transposed);
  return g_test_run ();
}
