/* test-qgemm.c: the packed integer GEMM (cpu-qgemm.c) bit-exact against a naive reference on odd
 * shapes (1, 3, 17, 63, 129 rows/columns/depths), both zero-point signs, per-tensor and per-column B
 * zero points, int8 and uint8 B, strided operands, every epilogue (int32, requantized uint8/int8
 * with ties, float), threads, through the AMX and VNNI microkernels (where the CPU has them) and
 * the forced AVX2 (with sums that would saturate int16) and portable ones; the QLinearMatMul and
 * MatMulInteger kernels on the core against the reference ones; the per-tensor QuantizeLinear/DequantizeLinear fast path against the spec;
 * DynamicQuantizeMatMul against the unfused DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul
 * [-> Add] graph, to the bit. */
#include "../engine/test-util.h"
#include "qgemm-test-util.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include "../../providers/cpu/cpu-qrequant-avx512-private.h"
#define HAVE_QREQUANT_AVX512 1
#endif

typedef struct {
  int64_t M, N, K;
  gboolean b_unsigned;
  int zb_kind; /* 0 none, 1 per tensor, 2 per column */
  OwbQgemmOutput output;
  gboolean bias, ties;
  int threads;
  /* scales from 1 to 9e6: products far past the int32 range, both signs (the saturation of the
   * VNNI packed 8-bit epilogue) */
  gboolean huge;
} Case;

static const uint8_t SENTINEL = 0xA5;

static void
run_case (const Case *cs, guint32 seed)
{
  GRand *r = g_rand_new_with_seed (seed);
  int64_t M = cs->M, N = cs->N, K = cs->K;
  int64_t lda = K + 5, ldb = N + 3, ldc = N + 7;
  uint8_t *a = g_new (uint8_t, M * lda), *b = g_new (uint8_t, MAX (K * ldb, 1));
  for (int64_t i = 0; i < M * lda; i++)
    a[i] = (uint8_t) g_rand_int_range (r, 0, 256);
  for (int64_t i = 0; i < K * ldb; i++)
    b[i] = (uint8_t) g_rand_int_range (r, 0, 256);
  /* za anywhere in its range: below, inside and above the data's mean */
  int32_t za = g_rand_int_range (r, 0, 256);
  int32_t zlo = cs->b_unsigned ? 0 : -128, zhi = cs->b_unsigned ? 255 : 127;
  int32_t *zb = g_new0 (int32_t, N);
  int64_t nzb = cs->zb_kind == 0 ? 0 : (cs->zb_kind == 1 ? 1 : N);
  for (int64_t i = 0; i < nzb; i++)
    zb[i] = g_rand_int_range (r, zlo, zhi + 1);
  int32_t *bias = g_new (int32_t, N);
  float *scale = g_new (float, N), *fbias = g_new (float, N);
  for (int64_t n = 0; n < N; n++)
    {
      bias[n] = g_rand_int_range (r, -20000, 20000);
      /* about +-40 steps around the output zero point, some saturating; or exact halves (ties) */
      scale[n] = cs->ties ? 0.5f : (float) (g_rand_double_range (r, 0.3, 3.0) / (sqrt ((double) MAX (K, 1)) * 128 * 74 / 40));
      if (cs->huge)
        scale[n] = (float) exp (g_rand_double_range (r, 0, 16));
      if (cs->output == OWB_QGEMM_OUT_FLOAT)
        scale[n] = (float) g_rand_double_range (r, 1e-5, 1e-3);
      fbias[n] = (float) g_rand_double_range (r, -1, 1);
    }
  int32_t yzp = cs->output == OWB_QGEMM_OUT_UINT8 ? g_rand_int_range (r, 0, 256) : g_rand_int_range (r, -128, 128);

  OwbQgemmPacked *p = _owb_qgemm_pack (K, N, b, ldb, cs->b_unsigned, zb, nzb);
  g_assert_nonnull (p);
  g_assert_cmpint (_owb_qgemm_packed_k (p), ==, K);
  g_assert_cmpint (_owb_qgemm_packed_n (p), ==, N);
  size_t es = cs->output == OWB_QGEMM_OUT_UINT8 || cs->output == OWB_QGEMM_OUT_INT8 ? 1 : 4;
  uint8_t *c = g_new (uint8_t, M * ldc * es);
  memset (c, SENTINEL, M * ldc * es);
  OwbQgemmEpilogue ep = { .output = cs->output, .bias = cs->bias ? bias : NULL, .scale = scale,
                          .y_zero_point = yzp, .float_bias = cs->bias ? fbias : NULL };
  OwbThreadPool *pool = cs->threads > 1 ? owb_thread_pool_new (cs->threads) : NULL;
  _owb_qgemm_packed (pool, p, M, a, lda, za, c, ldc, &ep);
  if (pool)
    owb_thread_pool_free (pool);

  for (int64_t m = 0; m < M; m++)
    {
      for (int64_t n = 0; n < N; n++)
        {
          int64_t s = 0;
          int32_t z = nzb == 0 ? 0 : zb[nzb == 1 ? 0 : n];
          for (int64_t k = 0; k < K; k++)
            {
              int32_t bv = cs->b_unsigned ? b[k * ldb + n] : (int8_t) b[k * ldb + n];
              s += (int64_t) ((int32_t) a[m * lda + k] - za) * (bv - z);
            }
          int32_t acc = (int32_t) (uint32_t) s;
          if (cs->bias && cs->output != OWB_QGEMM_OUT_FLOAT)
            acc = (int32_t) ((uint32_t) acc + (uint32_t) bias[n]);
          const uint8_t *cell = c + (m * ldc + n) * es;
          switch (cs->output)
            {
            case OWB_QGEMM_OUT_INT32:
              {
                int32_t got;
                memcpy (&got, cell, 4);
                if (got != acc)
                  g_error ("int32 [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]: %d, want %d", m, n, got, acc);
              }
              break;
            case OWB_QGEMM_OUT_UINT8:
            case OWB_QGEMM_OUT_INT8:
              {
                double lo = cs->output == OWB_QGEMM_OUT_UINT8 ? 0 : -128, hi = cs->output == OWB_QGEMM_OUT_UINT8 ? 255 : 127;
                double d = nearbyint ((double) acc * (double) scale[n]) + yzp;
                d = d < lo ? lo : (d > hi ? hi : d);
                int want = (int) d;
                int got = cs->output == OWB_QGEMM_OUT_UINT8 ? (int) cell[0] : (int) (int8_t) cell[0];
                if (got != want)
                  g_error ("8-bit [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]: %d, want %d (acc %d)", m, n, got, want, acc);
              }
              break;
            case OWB_QGEMM_OUT_FLOAT:
              {
                float f = (float) acc * scale[n];
                if (cs->bias)
                  f += fbias[n];
                float got;
                memcpy (&got, cell, 4);
                if (memcmp (&got, &f, 4) != 0)
                  g_error ("float [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]: %.9g, want %.9g", m, n, got, f);
              }
              break;
            }
        }
      /* nothing past column N written */
      for (size_t i = N * es; i < ldc * es; i++)
        g_assert_cmpint (c[m * ldc * es + i], ==, SENTINEL);
    }
  _owb_qgemm_packed_free (p);
  g_free (a);
  g_free (b);
  g_free (c);
  g_free (zb);
  g_free (bias);
  g_free (scale);
  g_free (fbias);
  g_rand_free (r);
}

static void
run_all (void)
{
  static const int64_t sizes[] = { 1, 3, 17, 63, 129 };
  guint32 seed = 1;
  int count = 0;
  for (int mi = 0; mi < 5; mi++)
    for (int ni = 0; ni < 5; ni++)
      for (int ki = 0; ki < 5; ki++)
        {
          Case cs = { .M = sizes[mi], .N = sizes[ni], .K = sizes[ki] };
          /* the variants rotate over the shapes, each shape trying several */
          for (int v = 0; v < 3; v++, seed++)
            {
              cs.b_unsigned = (seed % 7) < 3;
              cs.zb_kind = (int) (seed % 3);
              cs.output = (OwbQgemmOutput) ((seed / 3) % 4);
              cs.bias = (seed % 2) == 0;
              cs.ties = cs.output != OWB_QGEMM_OUT_FLOAT && (seed % 5) == 0;
              cs.threads = (seed % 4) == 1 ? 2 : ((seed % 4) == 3 ? 3 : 1);
              run_case (&cs, seed);
              count++;
            }
        }
  /* larger and wide shapes: several column blocks, strips, thread splits */
  static const Case big[] = {
    { 200, 300, 768, FALSE, 0, OWB_QGEMM_OUT_INT32, FALSE, FALSE, 2 },
    { 130, 1000, 513, TRUE, 2, OWB_QGEMM_OUT_UINT8, TRUE, FALSE, 2 },
    { 7, 4100, 70, FALSE, 2, OWB_QGEMM_OUT_INT8, TRUE, FALSE, 3 },
    { 64, 64, 4096, FALSE, 1, OWB_QGEMM_OUT_FLOAT, TRUE, FALSE, 2 },
    { 50, 77, 2, FALSE, 2, OWB_QGEMM_OUT_UINT8, FALSE, TRUE, 1 },
    { 5, 33, 0, FALSE, 1, OWB_QGEMM_OUT_INT32, TRUE, FALSE, 1 },
    { 40, 70, 33, FALSE, 2, OWB_QGEMM_OUT_UINT8, TRUE, FALSE, 1, TRUE },
    { 41, 47, 16, TRUE, 1, OWB_QGEMM_OUT_INT8, FALSE, FALSE, 1, TRUE },
    /* column blocks of whole panels on two threads (672 columns: 6 blocks of 7 panels) */
    { 37, 672, 45, TRUE, 2, OWB_QGEMM_OUT_UINT8, TRUE, FALSE, 2 },
    /* deeper than VNNI's 4608-deep blocks: two depth blocks, the accumulators kept between them */
    { 9, 70, 5000, FALSE, 2, OWB_QGEMM_OUT_UINT8, TRUE, FALSE, 2 },
    { 13, 33, 4703, TRUE, 1, OWB_QGEMM_OUT_INT32, TRUE, FALSE, 1 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (big); i++)
    run_case (&big[i], 1000 + i);
  g_test_message ("%d random cases + %u large", count, (guint) G_N_ELEMENTS (big));
}


#ifdef HAVE_QREQUANT_AVX512
/* The reference's requantization of one sum: the product in double, rounded half to even. */
static int32_t
requant_double (int32_t acc, float scale, int32_t zp, int lo, int hi)
{
  double d = nearbyint ((double) acc * (double) scale) + zp;
  return (int32_t) (d < lo ? lo : (d > hi ? hi : d));
}

static OWB_QREQUANT_AVX512 void
check_requant16 (const int32_t *acc, const float *scale, int32_t zp, int lo, int hi, int64_t *ties, int64_t *wides)
{
  __mmask16 wide;
  int32_t out[16];
  __m512i v = owb_qrequant16_avx512 (_mm512_loadu_si512 ((const void *) acc), _mm512_loadu_ps (scale),
                                     _mm512_set1_ps ((float) zp), _mm512_set1_ps ((float) lo), _mm512_set1_ps ((float) hi),
                                     &wide);
  _mm512_storeu_si512 ((void *) out, v);
  for (int l = 0; l < 16; l++)
    {
      double p = (double) acc[l] * (double) scale[l];
      if ((float) p != p && fabs ((double) (float) p - floor ((double) (float) p)) == 0.5)
        (*ties)++;
      if (wide & (1u << l))
        {
          g_assert_cmpint (abs (acc[l]) >= (1 << 24) || acc[l] == INT32_MIN, ==, TRUE);
          (*wides)++;
          continue;
        }
      if (out[l] != requant_double (acc[l], scale[l], zp, lo, hi))
        g_error ("acc %d scale %a zp %d: %d, want %d", acc[l], (double) scale[l], zp, out[l],
                 requant_double (acc[l], scale[l], zp, lo, hi));
    }
}
#endif

/* The float32 requantization of the AVX-512 kernels against the double one, on sums and scales
 * chosen so that the float product often lands on a half-integer the exact product is not. */
static void
test_qrequant_float (void)
{
#ifdef HAVE_QREQUANT_AVX512
  if (!__builtin_cpu_supports ("avx512f") || !__builtin_cpu_supports ("avx512dq") || !__builtin_cpu_supports ("fma"))
    {
      g_test_skip ("no AVX-512");
      return;
    }
  GRand *r = g_rand_new_with_seed (18);
  int64_t ties = 0, wides = 0, n = 0;
  for (int trial = 0; trial < 30000; trial++)
    {
      int32_t acc[16];
      float scale[16];
      int kind = trial % 3;
      for (int l = 0; l < 16; l++)
        {
          if (kind == 0) /* any scale, sums in range */
            {
              scale[l] = (float) g_rand_double_range (r, 1e-5, 0.1);
              acc[l] = g_rand_int_range (r, -100000, 100000);
            }
          else if (kind == 1) /* now and then past 2^24 */
            {
              scale[l] = (float) g_rand_double_range (r, 1e-7, 1e-5);
              acc[l] = g_rand_int_range (r, -(1 << 26), 1 << 26);
            }
          else
            {
              /* scale the float nearest to h / acc for a half-integer h: the exact product is
               * within an ulp or so of h, and its float often is h itself */
              double h = g_rand_int_range (r, -300, 300) + 0.5;
              acc[l] = g_rand_int_range (r, 1 << 12, 1 << 24) * (h < 0 ? -1 : 1);
              scale[l] = (float) (h / acc[l]);
            }
        }
      gboolean sgn = trial % 2;
      check_requant16 (acc, scale, sgn ? g_rand_int_range (r, -20, 20) : g_rand_int_range (r, 0, 256), sgn ? -128 : 0,
                       sgn ? 127 : 255, &ties, &wides);
      n += 16;
    }
  g_rand_free (r);
  g_test_message ("%" G_GINT64_FORMAT " sums, %" G_GINT64_FORMAT " float ties resolved, %" G_GINT64_FORMAT " wide",
                  n, ties, wides);
  g_assert_cmpint (ties, >, 100);
  g_assert_cmpint (wides, >, 100);
#else
  g_test_skip ("no x86-64 AVX-512 code in this build");
#endif
}

static void
test_qgemm_vnni (void)
{
  if (!qpath_hold (QPATH_VNNI))
    return;
  g_assert_false (_owb_qgemm_uses_amx ());
  run_all ();
  qpath_release ();
}

/* AMX where the CPU and kernel have it: 32 x 32 blocks on tiles, the edges (the odd sizes' 1, 3,
 * 17 rows or columns past a multiple of 32) on VNNI. */
static void
test_qgemm_amx (void)
{
  if (!qpath_hold (QPATH_AMX))
    return;
  run_all ();
  qpath_release ();
}

static void
test_qgemm_portable (void)
{
  qpath_hold (QPATH_PORTABLE);
  g_assert_false (_owb_qgemm_uses_vnni ());
  run_all ();
  qpath_release ();
}

/* The AVX2 microkernel forced on this CPU: every case, and the sums where two-product int16 sums
 * would saturate (A 255 against B 127 and -128, A 128 against -128), over depths with a tail. */
static void
test_qgemm_avx2 (void)
{
  if (!qpath_hold (QPATH_AVX2))
    return;
  g_assert_false (_owb_qgemm_uses_vnni ());
  g_assert_false (_owb_qgemm_uses_amx ());
  run_all ();
  static const struct { uint8_t a; int8_t b; } extremes[] = { { 255, 127 }, { 255, -128 }, { 128, -128 }, { 127, -128 } };
  /* depths of both AVX2 tiles: the split one below 16, the int16 one with a tail (shorter than 16
   * and not) and past its 256-deep buffer (and past a depth block, 1152); rows of its C tiles (5)
   * and its assembly (12: two strips of 6), and of the split tile (3: a run of few rows reads B's
   * bytes) */
  static const int64_t depths[] = { 9, 21, 67, 301, 1201 };
  static const int64_t rows[] = { 3, 5, 12 };
  const guint ne = G_N_ELEMENTS (extremes);
  for (guint e = 0; e < ne * G_N_ELEMENTS (depths) * G_N_ELEMENTS (rows); e++)
    {
      int64_t M = rows[e / ne / G_N_ELEMENTS (depths)], K = depths[e / ne % G_N_ELEMENTS (depths)], N = 21;
      uint8_t *a = g_new (uint8_t, M * K);
      int8_t *b = g_new (int8_t, K * N);
      memset (a, extremes[e % ne].a, M * K);
      memset (b, (uint8_t) extremes[e % ne].b, K * N);
      OwbQgemmPacked *p = _owb_qgemm_pack (K, N, b, N, FALSE, NULL, 0);
      g_assert_false (_owb_qgemm_packed_pairs_safe (p));
      int32_t *c = g_new (int32_t, M * N);
      OwbQgemmEpilogue ep = { .output = OWB_QGEMM_OUT_INT32 };
      _owb_qgemm_packed (NULL, p, M, a, K, 0, c, N, &ep);
      for (int64_t i = 0; i < M * N; i++)
        g_assert_cmpint (c[i], ==, (int32_t) K * extremes[e % ne].a * extremes[e % ne].b);
      _owb_qgemm_packed_free (p);
      g_free (a), g_free (b), g_free (c);
    }
  /* weights of 7 bits and pairs at the edge of what vpmaddubsw holds (64 + 64, -64 - 64, 127 - 128)
   * take the unwidened tile: A random with whole rows of 255, against the sums in int64 */
  GRand *rnd = g_rand_new_with_seed (5);
  for (guint di = 0; di < G_N_ELEMENTS (depths); di++)
    for (int pattern = 0; pattern < 2; pattern++)
      {
        int64_t M = 7, K = depths[di], N = 37;
        uint8_t *a = g_new (uint8_t, M * K);
        int8_t *b = g_new (int8_t, K * N);
        for (int64_t i = 0; i < M * K; i++)
          a[i] = i / K % 3 == 0 ? 255 : (uint8_t) g_rand_int_range (rnd, 0, 256);
        for (int64_t k = 0; k < K; k++)
          for (int64_t n = 0; n < N; n++)
            b[k * N + n] = pattern ? (k % 2 ? -128 : 127) : (n % 3 ? g_rand_int_range (rnd, -64, 65) : (n % 2 ? 64 : -64));
        OwbQgemmPacked *p = _owb_qgemm_pack (K, N, b, N, FALSE, NULL, 0);
        g_assert_true (_owb_qgemm_packed_pairs_safe (p));
        int32_t *c = g_new (int32_t, M * N);
        OwbQgemmEpilogue ep = { .output = OWB_QGEMM_OUT_INT32 };
        _owb_qgemm_packed (NULL, p, M, a, K, 0, c, N, &ep);
        for (int64_t m = 0; m < M; m++)
          for (int64_t n = 0; n < N; n++)
            {
              int64_t want = 0;
              for (int64_t k = 0; k < K; k++)
                want += (int64_t) a[m * K + k] * b[k * N + n];
              g_assert_cmpint (c[m * N + n], ==, want);
            }
        _owb_qgemm_packed_free (p);
        g_free (a), g_free (b), g_free (c);
      }
  /* B packed before the AVX2 path was forced has no int16 copy where the CPU has VNNI: the split
   * tile runs on its bytes */
  for (int packed_forced = 0; packed_forced < 2; packed_forced++)
    {
      int64_t M = 13, K = 301, N = 40;
      uint8_t *a = g_new (uint8_t, M * K);
      int8_t *b = g_new (int8_t, K * N);
      for (int64_t i = 0; i < M * K; i++)
        a[i] = (uint8_t) g_rand_int_range (rnd, 0, 256);
      for (int64_t i = 0; i < K * N; i++)
        b[i] = (int8_t) g_rand_int_range (rnd, -128, 128);
      _owb_qgemm_force_avx2 (packed_forced);
      OwbQgemmPacked *p = _owb_qgemm_pack (K, N, b, N, FALSE, NULL, 0);
      _owb_qgemm_force_avx2 (TRUE);
      int32_t *c = g_new (int32_t, M * N);
      OwbQgemmEpilogue ep = { .output = OWB_QGEMM_OUT_INT32 };
      _owb_qgemm_packed (NULL, p, M, a, K, 3, c, N, &ep);
      for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++)
          {
            int64_t want = 0;
            for (int64_t k = 0; k < K; k++)
              want += (int64_t) (a[m * K + k] - 3) * b[k * N + n];
            g_assert_cmpint (c[m * N + n], ==, want);
          }
      _owb_qgemm_packed_free (p);
      g_free (a), g_free (b), g_free (c);
    }
  /* sums past 2^24 next to half-integers (bias alone: A and B zero) where the float product of
   * their rounded float goes the wrong way and lands on no half-integer (so that no tie test
   * catches it): the requantizing epilogue must find the wide sums and take the double product */
  {
    int64_t M = 5, K = 16, N = 200;
    uint8_t *a = g_new0 (uint8_t, M * K);
    int8_t *b = g_new0 (int8_t, K * N);
    int32_t *bias = g_new (int32_t, N);
    float *scale = g_new (float, N);
    for (int64_t n = 0; n < N; n++)
      for (;;)
        {
          double h = g_rand_int_range (rnd, -120, 120) + 0.5;
          bias[n] = g_rand_int_range (rnd, 1 << 24, 1 << 26) * (h < 0 ? -1 : 1);
          scale[n] = (float) (h / bias[n]);
          volatile float pf = (float) bias[n] * scale[n];
          if (fabsf (pf - nearbyintf (pf)) != 0.5f && nearbyintf (pf) != nearbyint ((double) bias[n] * scale[n]))
            break;
        }
    OwbQgemmPacked *p = _owb_qgemm_pack (K, N, b, N, FALSE, NULL, 0);
    uint8_t *c = g_new (uint8_t, M * N);
    OwbQgemmEpilogue ep = { .output = OWB_QGEMM_OUT_UINT8, .bias = bias, .scale = scale, .y_zero_point = 128 };
    _owb_qgemm_packed (NULL, p, M, a, K, 0, c, N, &ep);
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++)
        g_assert_cmpint (c[m * N + n], ==, (int) (nearbyint ((double) bias[n] * (double) scale[n]) + 128));
    _owb_qgemm_packed_free (p);
    g_free (a), g_free (b), g_free (bias), g_free (scale), g_free (c);
  }
  g_rand_free (rnd);
  qpath_release ();
}

/* _owb_qgemm_lookup_rows (a fused QLinearLookup's table applied to C) on the CPU's path (VBMI),
 * AVX2 forced and portable: every byte value, rows with and without a gap between them, lengths
 * past and short of the vectors, bytes outside the rows untouched. */
static void
test_qgemm_lookup_rows (void)
{
  GRand *r = g_rand_new_with_seed (11);
  uint8_t table[256];
  for (int i = 0; i < 256; i++)
    table[i] = (uint8_t) g_rand_int_range (r, 0, 256);
  static const int64_t shapes[][3] = { { 3, 77, 80 }, { 5, 16, 16 }, { 1, 256, 256 }, { 4, 31, 33 }, { 2, 200, 200 } };
  for (int path = 0; path < 3; path++) /* the CPU's, AVX2, portable */
    for (guint si = 0; si < G_N_ELEMENTS (shapes); si++)
      {
        _owb_qgemm_force_avx2 (path == 1);
        _owb_qgemm_force_portable (path == 2);
        int64_t rows = shapes[si][0], cols = shapes[si][1], ldc = shapes[si][2];
        uint8_t *c = g_new (uint8_t, rows * ldc), *orig = g_new (uint8_t, rows * ldc);
        for (int64_t i = 0; i < rows * ldc; i++)
          orig[i] = c[i] = (uint8_t) (i % 7 == 0 ? i : g_rand_int_range (r, 0, 256));
        _owb_qgemm_lookup_rows (table, c, ldc, rows, cols);
        for (int64_t i = 0; i < rows * ldc; i++)
          {
            int want = i % ldc < cols ? table[orig[i]] : orig[i];
            if (c[i] != want)
              g_error ("path %d shape %u: byte %" G_GINT64_FORMAT " (%d) looked up as %d, want %d", path, si, i, orig[i],
                       c[i], want);
          }
        g_free (c);
        g_free (orig);
      }
  qpath_release ();
  g_rand_free (r);
}

/* Zero points out of the type's range are refused, not packed. */
/* The bound on a run's sums that picks the float requantization (below 2^24: max |a - za| times
 * the column's sum of |b - zb|, plus |bias|) at its edge: a column whose sum is 2^24 + 1 must be
 * requantized in double, where the float's 2^24 lands on a tie (201 2^-25 (2^24 + 1) is past
 * 100.5, 201 2^-25 2^24 is 100.5 itself), with |a - za| at its largest above za (A 255, za 0) and
 * below it (A 0, za 255); beside it a deep column of small weights that the bound lets through.
 * On each path: VNNI, AVX2 and portable (VNNI's narrow epilogue is the one a loose bound breaks). */
static void
check_narrow_bound (const char *path)
{
  const int64_t K = 499, N = 3;
  int8_t *b = g_new (int8_t, K * N);
  uint8_t *a = g_new (uint8_t, K);
  for (int side = 0; side < 2; side++)
    {
      int32_t za = side ? 255 : 0;
      memset (a, side ? 0 : 255, K);
      for (int64_t k = 0; k < K; k++)
        {
          b[k * N] = 127;
          b[k * N + 1] = (int8_t) ((k * 7) % 7 - 3);
          b[k * N + 2] = (int8_t) ((k * 5) % 11 - 5);
        }
      /* column 0 (zero point -1, a depth that leaves one padding byte in the packed groups):
       * (a - za) 128 K + bias = +-(2^24 + 1) */
      int32_t zb[3] = { -1, 0, 0 };
      int64_t dot = (int64_t) ((int32_t) a[0] - za) * 128 * K;
      int32_t bias[3] = { (int32_t) ((side ? -1 : 1) * ((1 << 24) + 1) - dot), 1000, -1000 };
      float scale[3] = { ldexpf (201.0f, -25), 0.01f, 0.0173f };
      OwbQgemmPacked *p = _owb_qgemm_pack (K, N, b, N, FALSE, zb, N);
      uint8_t c[3];
      OwbQgemmEpilogue ep = { .output = OWB_QGEMM_OUT_UINT8, .bias = bias, .scale = scale, .y_zero_point = 120 };
      _owb_qgemm_packed (NULL, p, 1, a, K, za, c, N, &ep);
      for (int64_t n = 0; n < N; n++)
        {
          int64_t sum = bias[n];
          for (int64_t k = 0; k < K; k++)
            sum += (int64_t) ((int32_t) a[k] - za) * (b[k * N + n] - zb[n]);
          double d = nearbyint ((double) sum * (double) scale[n]) + 120;
          int want = (int) (d < 0 ? 0 : (d > 255 ? 255 : d));
          if (c[n] != want)
            g_error ("%s: za %d column %" G_GINT64_FORMAT " (sum %" G_GINT64_FORMAT "): %d, want %d", path, za, n,
                     sum, c[n], want);
        }
      g_assert_cmpint (c[0], ==, side ? 19 : 221);
      _owb_qgemm_packed_free (p);
    }
  g_free (a);
  g_free (b);
}

static void
test_qgemm_narrow_bound (gconstpointer data)
{
  QPath path = (QPath) GPOINTER_TO_INT (data);
  if (!qpath_hold (path))
    return;
  check_narrow_bound (path == QPATH_VNNI ? "vnni" : path == QPATH_AVX2 ? "avx2" : "portable");
  qpath_release ();
}

static void
test_qgemm_pack_refuses (void)
{
  int8_t b[4] = { 1, 2, 3, 4 };
  int32_t zb_bad = 128, zb_u_bad = -1, zb_ok = 255;
  g_assert_null (_owb_qgemm_pack (2, 2, b, 2, FALSE, &zb_bad, 1));
  g_assert_null (_owb_qgemm_pack (2, 2, b, 2, TRUE, &zb_u_bad, 1));
  g_assert_null (_owb_qgemm_pack (2, 2, b, 2, FALSE, &zb_ok, 3));
  OwbQgemmPacked *p = _owb_qgemm_pack (2, 2, b, 2, TRUE, &zb_ok, 1);
  g_assert_nonnull (p);
  _owb_qgemm_packed_free (p);
  _owb_qgemm_packed_free (NULL);
}

/* ---- QLinearMatMul / MatMulInteger kernels on the core ---- */

static OwbTensor *
random_tensor (OwbDataType dtype, int rank, const int64_t *dims, GRand *r, int lo, int hi)
{
  OwbTensor *t = owb_tensor_new (dtype, rank, dims, NULL);
  for (int64_t i = 0; i < t->nelems; i++)
    {
      int v = g_rand_int_range (r, lo, hi + 1);
      if (dtype == OWB_TYPE_FLOAT)
        ((float *) t->data)[i] = (float) g_rand_double_range (r, 0.002, 0.05);
      else if (dtype == OWB_TYPE_UINT8)
        ((uint8_t *) t->data)[i] = (uint8_t) v;
      else
        ((int8_t *) t->data)[i] = (int8_t) v;
    }
  return t;
}

/* One node whose inputs i (named i0, i1...) are initializers where bit i of const_mask is set,
 * graph inputs otherwise; run with threads; returns output 0. */
static OwbTensor *
run_node (const char *op, int n_in, OwbTensor *const *in, guint const_mask, int threads, OwbNode **node_out,
          OwbModel **model_out)
{
  OwbModel *m = tu_model_new (13);
  g_autofree char *ins = tu_add_indexed_inputs (m->graph, n_in, in, const_mask);
  tu_add_untyped_output (m->graph->outputs, "y0");
  OwbNode *node = tu_node (m->graph, op, "node", ins, "y0");
  g_autoptr (GError) error = NULL;
  OwbSession *s = tu_session (m, threads, &error);
  g_assert_no_error (error);
  const char *out_names[1] = { "y0" };
  OwbTensor *y = NULL;
  g_assert_true (tu_run_indexed (s, n_in, in, const_mask, 1, out_names, &y, &error));
  g_assert_no_error (error);
  owb_session_free (s);
  *node_out = node;
  *model_out = m;
  return y;
}

/* Whether prepare packs this node's B (and so the run can take the core). */
static gboolean
packs (const OwbNode *node, OwbDataType a_dtype)
{
  OwbValueType at;
  owb_value_type_init_tensor (&at, a_dtype, 0, NULL);
  const OwbValueType *types[8] = { &at };
  void *state = NULL;
  g_assert_true (_owb_cpu_qgemm_matmul_prepare (node, 13, types, &state, NULL));
  gboolean packed = state != NULL;
  _owb_cpu_qgemm_matmul_free (state);
  return packed;
}

/* Each config through a model whose weights are initializers (the core) and one where they are
 * graph inputs (the reference kernels): outputs equal to the bit. */
static void
test_qgemm_kernels (void)
{
  guint32 seed = 77;
  int count = 0;
  for (int qlinear = 0; qlinear < 2; qlinear++)
    for (int a_signed = 0; a_signed < 2; a_signed++)
      for (int b_signed = 0; b_signed < 2; b_signed++)
        for (int per_column = 0; per_column < 2; per_column++)
          for (int variant = 0; variant < 2; variant++, seed++)
            {
              GRand *r = g_rand_new_with_seed (seed);
              int64_t M = variant ? 5 : 33, K = variant ? 130 : 63, N = variant ? 47 : 200, batch = variant ? 3 : 1;
              OwbDataType at = a_signed ? OWB_TYPE_INT8 : OWB_TYPE_UINT8, bt = b_signed ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
              int alo = a_signed ? -128 : 0, ahi = a_signed ? 127 : 255, blo = b_signed ? -128 : 0, bhi = b_signed ? 127 : 255;
              int64_t adims[3] = { batch, M, K }, bdims[2] = { K, N }, np = per_column ? N : 1;
              int arank = variant ? 3 : 2;
              OwbTensor *a = random_tensor (at, arank, variant ? adims : adims + 1, r, alo, ahi);
              OwbTensor *b = random_tensor (bt, 2, bdims, r, blo, bhi);
              OwbTensor *azp = random_tensor (at, 0, NULL, r, alo, ahi);
              /* weights' zero points: 0 for s8 (as exporters write them) in one variant, anything in the other */
              OwbTensor *bzp = random_tensor (bt, 1, &np, r, variant || !b_signed ? blo : 0, variant || !b_signed ? bhi : 0);
              OwbTensor *y, *want;
              OwbNode *node, *ref_node;
              OwbModel *m, *ref_m;
              if (qlinear)
                {
                  OwbDataType yt = (seed % 2) ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
                  OwbTensor *as = random_tensor (OWB_TYPE_FLOAT, 0, NULL, r, 0, 0);
                  OwbTensor *bs = random_tensor (OWB_TYPE_FLOAT, 1, &np, r, 0, 0);
                  OwbTensor *ys = random_tensor (OWB_TYPE_FLOAT, 0, NULL, r, 0, 0);
                  ((float *) ys->data)[0] *= 0.05f * (float) K; /* outputs mostly in range */
                  OwbTensor *yzp = random_tensor (yt, 0, NULL, r, yt == OWB_TYPE_INT8 ? -128 : 0, yt == OWB_TYPE_INT8 ? 127 : 255);
                  OwbTensor *in[8] = { a, as, azp, b, bs, bzp, ys, yzp };
                  y = run_node ("QLinearMatMul", 8, in, 0xFE, 1 + (int) (seed % 2), &node, &m);
                  want = run_node ("QLinearMatMul", 8, in, 0, 1, &ref_node, &ref_m);
                  owb_tensor_unref (as);
                  owb_tensor_unref (bs);
                  owb_tensor_unref (ys);
                  owb_tensor_unref (yzp);
                }
              else
                {
                  OwbTensor *in[4] = { a, b, variant ? azp : NULL, per_column || variant ? bzp : NULL };
                  y = run_node ("MatMulInteger", 4, in, 0x0A, 1 + (int) (seed % 2), &node, &m);
                  want = run_node ("MatMulInteger", 4, in, 0, 1, &ref_node, &ref_m);
                }
              g_assert_true (packs (node, at));
              g_assert_false (packs (ref_node, at));
              g_assert_cmpint (y->dtype, ==, want->dtype);
              g_assert_cmpint (y->nelems, ==, want->nelems);
              g_assert_cmpint (y->nelems, ==, batch * M * N);
              if (memcmp (y->data, want->data, y->nbytes) != 0)
                g_error ("%s a %s b %s per_column %d variant %d: outputs differ", qlinear ? "QLinearMatMul" : "MatMulInteger",
                         owb_data_type_name (at), owb_data_type_name (bt), per_column, variant);
              owb_tensor_unref (y);
              owb_tensor_unref (want);
              owb_model_unref (m);
              owb_model_unref (ref_m);
              owb_tensor_unref (a);
              owb_tensor_unref (b);
              owb_tensor_unref (azp);
              owb_tensor_unref (bzp);
              g_rand_free (r);
              count++;
            }
  g_test_message ("%d kernel configurations", count);
}

/* ---- DynamicQuantizeMatMul (ai.onnx.workbench) ---- */

/* The unfused graph quantize_dynamic writes, DynamicQuantizeLinear (A) -> MatMulInteger (B a graph
 * input, so the reference kernel runs it) -> Cast -> Mul (Mul (a_scale, b_scale)) [-> Add bias], or
 * the fused node with B an initializer (packed at prepare) or a graph input (packed per run).
 * in: A, B, b_scale, b_zero_point or NULL, bias or NULL. */
static OwbTensor *
run_dynamic (gboolean fused, gboolean b_const, OwbTensor *const *in, int threads)
{
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  const char *names[2] = { "A", "B" };
  OwbTensor *feeds[2] = { in[0], in[1] };
  tu_add_value (g->inputs, "A", OWB_TYPE_FLOAT, in[0]->rank, in[0]->dims, NULL);
  if (b_const)
    owb_graph_add_initializer (g, "B", owb_tensor_ref (in[1]));
  else
    tu_add_value (g->inputs, "B", in[1]->dtype, 2, in[1]->dims, NULL);
  owb_graph_add_initializer (g, "b_scale", owb_tensor_ref (in[2]));
  if (in[3])
    owb_graph_add_initializer (g, "b_zp", owb_tensor_ref (in[3]));
  if (in[4])
    owb_graph_add_initializer (g, "bias", owb_tensor_ref (in[4]));
  tu_add_untyped_output (g->outputs, "Y");
  if (fused)
    {
      owb_model_set_opset (m, OWB_DOMAIN, 1);
      g_autofree char *ins = g_strdup_printf ("A,B,b_scale%s%s", in[3] || in[4] ? (in[3] ? ",b_zp" : ",") : "",
                                              in[4] ? ",bias" : "");
      OwbNode *node = tu_node (g, "DynamicQuantizeMatMul", "node", ins, "Y");
      g_free (node->domain);
      node->domain = g_strdup (OWB_DOMAIN);
    }
  else
    {
      tu_node (g, "DynamicQuantizeLinear", "dql", "A", "A_q,a_scale,a_zp");
      tu_node (g, "MatMulInteger", "mmi", in[3] ? "A_q,B,a_zp,b_zp" : "A_q,B,a_zp", "acc");
      tu_set_int (tu_node (g, "Cast", "cast", "acc", "accf"), "to", OWB_TYPE_FLOAT);
      tu_node (g, "Mul", "scale_mul", "a_scale,b_scale", "scale");
      tu_node (g, "Mul", "mul", "accf,scale", in[4] ? "prod" : "Y");
      if (in[4])
        tu_node (g, "Add", "add", "prod,bias", "Y");
    }
  if (fused)
    {
      /* the kernel's prepare packs B exactly when it is a constant */
      const OwbNode *node = g_ptr_array_index (g->nodes, 0);
      g_assert_true (packs (node, OWB_TYPE_FLOAT) == b_const);
    }
  g_autoptr (GError) error = NULL;
  OwbSession *s = tu_session (m, threads, &error);
  g_assert_no_error (error);
  const char *out_names[1] = { "Y" };
  OwbTensor *y = NULL;
  g_assert_true (owb_session_run (s, b_const ? 1 : 2, names, feeds, 1, out_names, &y, NULL, NULL, &error));
  g_assert_no_error (error);
  owb_session_free (s);
  owb_model_unref (m);
  return y;
}

/* Odd shapes (K and N not multiples of 4 or 16, one row, batches), int8 and uint8 weights with
 * zero points of both signs, per-tensor and per-column scales and zero points, with and without
 * bias, activations of both signs, only positive (a_zero_point 0), only negative (255) and all
 * zero, one and two threads, on the VNNI and the forced portable paths: the fused node's output
 * equals the unfused graph's to the bit. */
static void
test_dynamic_quantize_matmul (void)
{
  static const int64_t shapes[][4] = { /* batch (0: A is 2-D), M, K, N */
    { 0, 37, 63, 70 }, { 3, 5, 130, 47 }, { 0, 1, 1, 1 }, { 0, 128, 256, 768 }, { 2, 7, 17, 33 },
  };
  int count = 0;
  for (int path = 0; path < 3; path++) /* VNNI, portable, AVX2 */
    {
      gboolean portable = path == 1;
      _owb_qgemm_force_portable (portable);
      _owb_qgemm_force_avx2 (path == 2);
      for (guint si = 0; si < G_N_ELEMENTS (shapes); si++)
        for (int variant = 0; variant < 8; variant++)
          {
            GRand *r = g_rand_new_with_seed (500 + 10 * si + variant);
            int64_t batch = shapes[si][0], M = shapes[si][1], K = shapes[si][2], N = shapes[si][3];
            gboolean b_signed = variant % 2 == 0, per_column = variant & 2, bias = variant != 3 && variant != 6;
            gboolean zps = variant != 4; /* b_zero_point given */
            OwbDataType bt = b_signed ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
            int blo = b_signed ? -128 : 0, bhi = b_signed ? 127 : 255;
            int64_t adims[3] = { batch, M, K }, bdims[2] = { K, N }, np = per_column ? N : 1;
            OwbTensor *a = owb_tensor_new (OWB_TYPE_FLOAT, batch ? 3 : 2, batch ? adims : adims + 1, NULL);
            /* ranges: mixed signs, positive only, negative only, all zero */
            double lo = variant == 5 ? 0.1 : variant == 6 ? -3.0 : -1.5, hi = variant == 5 ? 4.0 : variant == 6 ? -0.2 : 2.5;
            for (int64_t i = 0; i < a->nelems; i++)
              ((float *) a->data)[i] = variant == 7 && si == 2 ? 0.0f : (float) g_rand_double_range (r, lo, hi);
            OwbTensor *b = random_tensor (bt, 2, bdims, r, blo, bhi);
            OwbTensor *bs = random_tensor (OWB_TYPE_FLOAT, per_column ? 1 : 0, &np, r, 0, 0);
            /* int8 weights: 0 (symmetric, as quantize_dynamic writes) or any, both signs */
            OwbTensor *bzp = !zps ? NULL
                                  : random_tensor (bt, per_column ? 1 : 0, &np, r, b_signed && variant < 4 ? 0 : blo,
                                                   b_signed && variant < 4 ? 0 : bhi);
            OwbTensor *bi = NULL;
            if (bias)
              {
                bi = owb_tensor_new (OWB_TYPE_FLOAT, 1, &N, NULL);
                for (int64_t i = 0; i < N; i++)
                  ((float *) bi->data)[i] = (float) g_rand_double_range (r, -1, 1);
              }
            OwbTensor *in[5] = { a, b, bs, bzp, bi };
            int threads = 1 + (variant + (int) si) % 2;
            OwbTensor *want = run_dynamic (FALSE, FALSE, in, 1);
            for (int b_const = 0; b_const < 2; b_const++)
              {
                OwbTensor *y = run_dynamic (TRUE, b_const, in, threads);
                g_assert_cmpint (y->dtype, ==, OWB_TYPE_FLOAT);
                g_assert_cmpint (y->rank, ==, a->rank);
                g_assert_cmpint (y->dims[y->rank - 1], ==, N);
                g_assert_cmpint (y->nelems, ==, want->nelems);
                if (memcmp (y->data, want->data, y->nbytes) != 0)
                  {
                    int64_t i = 0;
                    while (((float *) y->data)[i] == ((float *) want->data)[i])
                      i++;
                    g_error ("DynamicQuantizeMatMul %s shape %u variant %d B %s: [%" G_GINT64_FORMAT "] %.9g, want %.9g",
                             path == 1 ? "portable" : path == 2 ? "avx2" : "vnni", si, variant, b_const ? "packed" : "per run", i,
                             ((float *) y->data)[i], ((float *) want->data)[i]);
                  }
                owb_tensor_unref (y);
                count++;
              }
            owb_tensor_unref (want);
            for (int i = 0; i < 5; i++)
              if (in[i])
                owb_tensor_unref (in[i]);
            g_rand_free (r);
          }
    }
  _owb_qgemm_force_portable (FALSE);
  _owb_qgemm_force_avx2 (FALSE);
  g_test_message ("%d DynamicQuantizeMatMul runs equal to the unfused graph", count);
}

/* A b_scale of the wrong count is refused with an error naming the node and the input: by shape
 * inference where its count is declared, by the kernel where it is only known at run time. */
static void
test_dynamic_quantize_matmul_errors (void)
{
  GRand *r = g_rand_new_with_seed (9);
  int64_t adims[2] = { 4, 8 }, n3 = 3;
  OwbTensor *a = owb_tensor_new (OWB_TYPE_FLOAT, 2, adims, NULL);
  memset (a->data, 0, a->nbytes);
  OwbTensor *b = random_tensor (OWB_TYPE_INT8, 2, (int64_t[]){ 8, 5 }, r, -128, 127);
  OwbTensor *bs = random_tensor (OWB_TYPE_FLOAT, 1, &n3, r, 0, 0);
  OwbModel *m = tu_model_new (13);
  owb_model_set_opset (m, OWB_DOMAIN, 1);
  tu_add_value (m->graph->inputs, "A", OWB_TYPE_FLOAT, 2, adims, NULL);
  /* the count left unknown: shape inference lets it through, the kernel sees 3 values for 5 columns */
  tu_add_value (m->graph->inputs, "b_scale", OWB_TYPE_FLOAT, 1, (int64_t[]){ -1 }, NULL);
  owb_graph_add_initializer (m->graph, "B", owb_tensor_ref (b));
  tu_add_untyped_output (m->graph->outputs, "Y");
  OwbNode *node = tu_node (m->graph, "DynamicQuantizeMatMul", "dqmm", "A,B,b_scale", "Y");
  g_free (node->domain);
  node->domain = g_strdup (OWB_DOMAIN);
  g_autoptr (GError) error = NULL;
  OwbSession *s = tu_session (m, 1, &error);
  g_assert_no_error (error);
  const char *names[2] = { "A", "b_scale" }, *out_names[1] = { "Y" };
  OwbTensor *feeds[2] = { a, bs }, *y = NULL;
  g_assert_false (owb_session_run (s, 2, names, feeds, 1, out_names, &y, NULL, NULL, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "dqmm"));
  g_assert_nonnull (strstr (error->message, "b_scale"));
  owb_session_free (s);
  g_clear_error (&error);
  /* declared: refused when the session is made */
  OwbValueInfo *vi = g_ptr_array_index (m->graph->inputs, 1);
  vi->type.dims[0] = OWB_DIM_VALUE (3);
  g_assert_null (tu_session (m, 1, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "dqmm"));
  g_assert_nonnull (strstr (error->message, "b_scale"));
  owb_model_unref (m);
  owb_tensor_unref (a);
  owb_tensor_unref (b);
  owb_tensor_unref (bs);
  g_rand_free (r);
}

/* ---- QuantizeLinear / DequantizeLinear per tensor (cpu-quantize-fast.c) ---- */

/* Against the spec's formulas: y = saturate (round_half_even (x / s) + zp) with the division in
 * float32 and NaN saturating low; x = (q - zp) s in float32. Ties, NaN, infinities, tails of
 * 1..15 elements, threads. */
static void
check_quantize_per_tensor (void)
{
  GRand *r = g_rand_new_with_seed (5);
  for (int is_signed = 0; is_signed < 2; is_signed++)
    for (int threads = 1; threads <= 2; threads++)
      {
        OwbDataType qt = is_signed ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
        int64_t n = 70000 + 13 * threads + is_signed;
        OwbTensor *x = owb_tensor_new (OWB_TYPE_FLOAT, 1, &n, NULL);
        float s = 0.0371f;
        float *xv = x->data;
        for (int64_t i = 0; i < n; i++)
          xv[i] = (float) g_rand_double_range (r, -6, 6);
        /* exact halves of the step (ties), and the specials */
        for (int64_t i = 0; i < 1000; i++)
          xv[i * 7] = ((float) g_rand_int_range (r, -200, 200) + 0.5f) * 0.25f;
        xv[1] = NAN;
        xv[2] = INFINITY;
        xv[3] = -INFINITY;
        xv[4] = -0.0f;
        OwbTensor *scale = owb_tensor_new (OWB_TYPE_FLOAT, 0, NULL, NULL);
        OwbTensor *zp = owb_tensor_new (qt, 0, NULL, NULL);
        OwbTensor *tie_scale = owb_tensor_new (OWB_TYPE_FLOAT, 0, NULL, NULL);
        int32_t z = is_signed ? -7 : 131;
        owb_tensor_set_double (zp, 0, z);
        ((float *) tie_scale->data)[0] = 0.25f;
        for (int pass = 0; pass < 2; pass++)
          {
            float sc = pass ? 0.25f : s;
            ((float *) scale->data)[0] = sc;
            OwbTensor *in[3] = { x, scale, zp };
            OwbNode *node;
            OwbModel *m;
            OwbTensor *y = run_node ("QuantizeLinear", 3, in, 0x6, threads, &node, &m);
            g_assert_cmpint (y->dtype, ==, qt);
            double lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
            for (int64_t i = 0; i < n; i++)
              {
                double v = nearbyint ((double) (xv[i] / sc)) + z;
                v = !(v >= lo) ? lo : (v > hi ? hi : v);
                int got = is_signed ? ((int8_t *) y->data)[i] : ((uint8_t *) y->data)[i];
                if (got != (int) v)
                  g_error ("QuantizeLinear [%" G_GINT64_FORMAT "] of %.9g / %g: %d, want %d", i, xv[i], sc, got, (int) v);
              }
            /* and back */
            OwbTensor *din[3] = { y, scale, zp };
            OwbNode *dnode;
            OwbModel *dm;
            OwbTensor *back = run_node ("DequantizeLinear", 3, din, 0x6, threads, &dnode, &dm);
            g_assert_cmpint (back->dtype, ==, OWB_TYPE_FLOAT);
            for (int64_t i = 0; i < n; i++)
              {
                int q = is_signed ? ((int8_t *) y->data)[i] : ((uint8_t *) y->data)[i];
                float want = (float) (q - z) * sc, got = ((float *) back->data)[i];
                if (memcmp (&want, &got, 4) != 0)
                  g_error ("DequantizeLinear [%" G_GINT64_FORMAT "]: %.9g, want %.9g", i, got, want);
              }
            owb_tensor_unref (back);
            owb_tensor_unref (y);
            owb_model_unref (m);
            owb_model_unref (dm);
          }
        owb_tensor_unref (x);
        owb_tensor_unref (scale);
        owb_tensor_unref (zp);
        owb_tensor_unref (tie_scale);
      }
  g_rand_free (r);
}

/* The same in a new process with OWB_CPU_NO_AVX512 (read once): the AVX2 loops a CPU with AVX-512
 * otherwise never runs. */
static void
test_quantize_per_tensor (void)
{
  if (g_test_subprocess ())
    {
      g_setenv ("OWB_CPU_NO_AVX512", "1", TRUE);
      g_assert_false (_owb_cpu_has_avx512 ());
      check_quantize_per_tensor ();
      return;
    }
  check_quantize_per_tensor ();
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/qgemm/requant-float", test_qrequant_float);
  g_test_add_func ("/qgemm/vnni", test_qgemm_vnni);
  g_test_add_func ("/qgemm/amx", test_qgemm_amx);
  g_test_add_func ("/qgemm/portable", test_qgemm_portable);
  g_test_add_func ("/qgemm/avx2", test_qgemm_avx2);
  g_test_add_func ("/qgemm/lookup-rows", test_qgemm_lookup_rows);
  g_test_add_func ("/qgemm/pack-refuses", test_qgemm_pack_refuses);
  g_test_add_data_func ("/qgemm/narrow-bound/vnni", GINT_TO_POINTER (QPATH_VNNI), test_qgemm_narrow_bound);
  g_test_add_data_func ("/qgemm/narrow-bound/avx2", GINT_TO_POINTER (QPATH_AVX2), test_qgemm_narrow_bound);
  g_test_add_data_func ("/qgemm/narrow-bound/portable", GINT_TO_POINTER (QPATH_PORTABLE), test_qgemm_narrow_bound);
  g_test_add_func ("/qgemm/kernels", test_qgemm_kernels);
  g_test_add_func ("/qgemm/quantize-per-tensor", test_quantize_per_tensor);
  g_test_add_func ("/qgemm/dynamic-quantize-matmul", test_dynamic_quantize_matmul);
  g_test_add_func ("/qgemm/dynamic-quantize-matmul/errors", test_dynamic_quantize_matmul_errors);
  return g_test_run ();
}
