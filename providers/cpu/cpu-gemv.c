/* cpu-gemv.c: float products with one to four rows of A, read straight from B without packing: the
 * batch-1 Linear layers and recurrent steps that are bound by reading the weights once. AVX2+FMA code
 * is chosen at run time, with portable loops elsewhere. Also the vector sigmoid/tanh of the recurrent
 * kernels. */
#include "cpu-gemv-private.h"
#include "cpu-kernels-private.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_AVX2_CODE 1
#include <immintrin.h>
#define AVX2 __attribute__ ((target ("avx2,fma")))
#define AVX2_INLINE __attribute__ ((target ("avx2,fma"), always_inline)) static inline
#endif

/* Columns of C one pass of the [k, n] kernel keeps in cache per row of A: long enough that every
 * row of B is read as one long stream (512 columns ran at half the bandwidth of 4096). */
#define AXPY_BLOCK 4096

int64_t
_owb_cpu_gemv_block (gboolean trans_b, int64_t n, int64_t k, int threads)
{
  /* Below ~64k multiply-adds a unit costs about what dispatching it does. */
  int64_t min_cols = MAX (64, (G_GINT64_CONSTANT (1) << 16) / MAX (k, 1));
  /* [k, n]: each unit reads a slice of every row of B, and short slices defeat the prefetcher
   * (512-column slices ran at half the speed of 4096-column ones): one unit per thread. */
  int64_t units = trans_b ? 4 * threads : threads;
  int64_t block = MAX ((n + units - 1) / units, min_cols);
  return MIN ((block + 15) / 16 * 16, MAX (n, 1));
}

/* ---- portable ---- */

static void
dots_portable (int64_t m, int64_t n, int64_t k, float alpha, const float *x, const float *b, int64_t ldb,
               gboolean accumulate, float *c, int64_t ldc)
{
  for (int64_t j = 0; j < n; j++)
    {
      const float *w = b + j * ldb;
      for (int64_t i = 0; i < m; i++)
        {
          const float *xi = x + i * k;
          float s[4] = { 0, 0, 0, 0 };
          int64_t kk = 0;
          for (; kk + 4 <= k; kk += 4)
            for (int u = 0; u < 4; u++)
              s[u] += xi[kk + u] * w[kk + u];
          for (; kk < k; kk++)
            s[0] += xi[kk] * w[kk];
          float v = alpha * ((s[0] + s[1]) + (s[2] + s[3]));
          c[i * ldc + j] = accumulate ? c[i * ldc + j] + v : v;
        }
    }
}

/* x already holds alpha A. */
static void
axpy_portable (int64_t m, int64_t n, int64_t k, const float *x, const float *b, int64_t ldb, gboolean accumulate,
               float *c, int64_t ldc)
{
  if (!accumulate)
    for (int64_t i = 0; i < m; i++)
      memset (c + i * ldc, 0, n * sizeof (float));
  for (int64_t kk = 0; kk < k; kk++)
    {
      const float *w = b + kk * ldb;
      for (int64_t i = 0; i < m; i++)
        {
          float xv = x[i * k + kk];
          float *ci = c + i * ldc;
          for (int64_t j = 0; j < n; j++)
            ci[j] += xv * w[j];
        }
    }
}

/* ---- AVX2 + FMA ---- */

#ifdef HAVE_AVX2_CODE
static const int32_t mask_bits[16] = { -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0 };

/* Lanes [0, r) set, r in [0, 8]. */
AVX2_INLINE __m256i
tail_mask (int64_t r)
{
  return _mm256_loadu_si256 ((const __m256i *) (mask_bits + 8 - r));
}

/* The sums of four vectors, as one 4-lane vector. */
AVX2_INLINE __m128
hsum4 (__m256 a0, __m256 a1, __m256 a2, __m256 a3)
{
  __m256 t = _mm256_hadd_ps (_mm256_hadd_ps (a0, a1), _mm256_hadd_ps (a2, a3));
  return _mm_add_ps (_mm256_castps256_ps128 (t), _mm256_extractf128_ps (t, 1));
}

AVX2_INLINE float
hsum1 (__m256 a)
{
  __m128 s = _mm_add_ps (_mm256_castps256_ps128 (a), _mm256_extractf128_ps (a, 1));
  s = _mm_add_ps (s, _mm_movehl_ps (s, s));
  s = _mm_add_ss (s, _mm_movehdup_ps (s));
  return _mm_cvtss_f32 (s);
}

/* out[i * R + r] = x_i . w_r for M rows of x (x + i k) and R rows of w (w + r ldw): every weight
 * vector is loaded once and multiplied with all M rows of x from registers. M and R are constants
 * after inlining, so acc lives in registers. */
AVX2_INLINE void
dots_block (const int M, const int R, int64_t k, const float *x, const float *w, int64_t ldw, float *out)
{
  __m256 acc[8][4];
#pragma GCC unroll 8
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int i = 0; i < M; i++)
      acc[r][i] = _mm256_setzero_ps ();
  int64_t kk = 0;
  for (; kk + 8 <= k; kk += 8)
    {
      __m256 xv[4];
#pragma GCC unroll 4
      for (int i = 0; i < M; i++)
        xv[i] = _mm256_loadu_ps (x + i * k + kk);
#pragma GCC unroll 8
      for (int r = 0; r < R; r++)
        {
          __m256 wv = _mm256_loadu_ps (w + r * ldw + kk);
#pragma GCC unroll 4
          for (int i = 0; i < M; i++)
            acc[r][i] = _mm256_fmadd_ps (xv[i], wv, acc[r][i]);
        }
    }
  if (kk < k)
    {
      __m256i mask = tail_mask (k - kk);
      __m256 xv[4];
#pragma GCC unroll 4
      for (int i = 0; i < M; i++)
        xv[i] = _mm256_maskload_ps (x + i * k + kk, mask);
#pragma GCC unroll 8
      for (int r = 0; r < R; r++)
        {
          __m256 wv = _mm256_maskload_ps (w + r * ldw + kk, mask);
#pragma GCC unroll 4
          for (int i = 0; i < M; i++)
            acc[r][i] = _mm256_fmadd_ps (xv[i], wv, acc[r][i]);
        }
    }
#pragma GCC unroll 4
  for (int i = 0; i < M; i++)
    {
      if (R % 4 == 0)
        {
#pragma GCC unroll 2
          for (int r = 0; r < R; r += 4)
            _mm_storeu_ps (out + i * R + r, hsum4 (acc[r][i], acc[r + 1][i], acc[r + 2][i], acc[r + 3][i]));
        }
      else
#pragma GCC unroll 8
        for (int r = 0; r < R; r++)
          out[i * R + r] = hsum1 (acc[r][i]);
    }
}

/* All n outputs for M rows of x: R weight rows at a time, then one at a time. */
AVX2_INLINE void
dots_rows (const int M, const int R, int64_t n, int64_t k, float alpha, const float *x, const float *b,
           int64_t ldb, gboolean accumulate, float *c, int64_t ldc)
{
  float out[8 * 4];
  int64_t j = 0;
  for (; j + R <= n; j += R)
    {
      dots_block (M, R, k, x, b + j * ldb, ldb, out);
      for (int i = 0; i < M; i++)
        for (int r = 0; r < R; r++)
          c[i * ldc + j + r] = alpha * out[i * R + r] + (accumulate ? c[i * ldc + j + r] : 0.f);
    }
  for (; j < n; j++)
    {
      dots_block (M, 1, k, x, b + j * ldb, ldb, out);
      for (int i = 0; i < M; i++)
        c[i * ldc + j] = alpha * out[i] + (accumulate ? c[i * ldc + j] : 0.f);
    }
}

/* One row of x: 8 weight rows at once keep 8 independent FMA chains in flight (4 would wait on the
 * FMA latency when the weights sit in cache). Two rows: 4 weight rows; three or four: 2. */
AVX2 static void
dots_avx2 (int64_t m, int64_t n, int64_t k, float alpha, const float *x, const float *b, int64_t ldb,
           gboolean accumulate, float *c, int64_t ldc)
{
  switch (m)
    {
    case 1:
      dots_rows (1, 8, n, k, alpha, x, b, ldb, accumulate, c, ldc);
      break;
    case 2:
      dots_rows (2, 4, n, k, alpha, x, b, ldb, accumulate, c, ldc);
      break;
    case 3:
      dots_rows (3, 2, n, k, alpha, x, b, ldb, accumulate, c, ldc);
      break;
    default:
      dots_rows (4, 2, n, k, alpha, x, b, ldb, accumulate, c, ldc);
      break;
    }
}

/* c_i[0, len) += sum over U rows u of x_i[u] * w[u * ldb + .], for M rows of c (c + i ldc). */
AVX2_INLINE void
axpy_step (const int M, const int U, int64_t len, const float *x, int64_t k, const float *w, int64_t ldb, float *c,
           int64_t ldc)
{
  __m256 xb[4][4];
#pragma GCC unroll 4
  for (int i = 0; i < M; i++)
#pragma GCC unroll 4
    for (int u = 0; u < U; u++)
      xb[i][u] = _mm256_broadcast_ss (x + i * k + u);
  int64_t v = 0;
  for (; v + 8 <= len; v += 8)
    {
      __m256 acc[4];
#pragma GCC unroll 4
      for (int i = 0; i < M; i++)
        acc[i] = _mm256_loadu_ps (c + i * ldc + v);
#pragma GCC unroll 4
      for (int u = 0; u < U; u++)
        {
          __m256 wv = _mm256_loadu_ps (w + u * ldb + v);
#pragma GCC unroll 4
          for (int i = 0; i < M; i++)
            acc[i] = _mm256_fmadd_ps (xb[i][u], wv, acc[i]);
        }
#pragma GCC unroll 4
      for (int i = 0; i < M; i++)
        _mm256_storeu_ps (c + i * ldc + v, acc[i]);
    }
  if (v < len)
    {
      __m256i mask = tail_mask (len - v);
      __m256 acc[4];
#pragma GCC unroll 4
      for (int i = 0; i < M; i++)
        acc[i] = _mm256_maskload_ps (c + i * ldc + v, mask);
#pragma GCC unroll 4
      for (int u = 0; u < U; u++)
        {
          __m256 wv = _mm256_maskload_ps (w + u * ldb + v, mask);
#pragma GCC unroll 4
          for (int i = 0; i < M; i++)
            acc[i] = _mm256_fmadd_ps (xb[i][u], wv, acc[i]);
        }
#pragma GCC unroll 4
      for (int i = 0; i < M; i++)
        _mm256_maskstore_ps (c + i * ldc + v, mask, acc[i]);
    }
}

/* C += X B over a block of columns kept in L1, the rows of B streamed contiguously U at a time. */
AVX2_INLINE void
axpy_rows (const int M, const int U, int64_t n, int64_t k, const float *x, const float *b, int64_t ldb, float *c,
           int64_t ldc)
{
  for (int64_t j0 = 0; j0 < n; j0 += AXPY_BLOCK)
    {
      int64_t len = MIN (AXPY_BLOCK, n - j0);
      int64_t kk = 0;
      for (; kk + U <= k; kk += U)
        axpy_step (M, U, len, x + kk, k, b + kk * ldb + j0, ldb, c + j0, ldc);
      for (; kk < k; kk++)
        axpy_step (M, 1, len, x + kk, k, b + kk * ldb + j0, ldb, c + j0, ldc);
    }
}

AVX2 static void
axpy_avx2 (int64_t m, int64_t n, int64_t k, const float *x, const float *b, int64_t ldb, gboolean accumulate,
           float *c, int64_t ldc)
{
  if (!accumulate)
    for (int64_t i = 0; i < m; i++)
      memset (c + i * ldc, 0, n * sizeof (float));
  switch (m)
    {
    case 1:
      axpy_rows (1, 4, n, k, x, b, ldb, c, ldc);
      break;
    case 2:
      axpy_rows (2, 4, n, k, x, b, ldb, c, ldc);
      break;
    case 3:
      axpy_rows (3, 2, n, k, x, b, ldb, c, ldc);
      break;
    default:
      axpy_rows (4, 2, n, k, x, b, ldb, c, ldc);
      break;
    }
}
#endif

void
_owb_cpu_gemv (gboolean trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
               int64_t a_row_stride, int64_t a_col_stride, const float *b, int64_t ldb, gboolean accumulate,
               float *c, int64_t ldc)
{
  g_return_if_fail (m <= OWB_CPU_GEMV_MAX_M);
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0 || alpha == 0)
    {
      if (!accumulate)
        for (int64_t i = 0; i < m; i++)
          memset (c + i * ldc, 0, n * sizeof (float));
      return;
    }
  /* The kernels read rows of A contiguously, k apart; the [k, n] kernel also wants alpha folded into
   * them. A is at most 4 rows: copying it is cheap next to reading B. */
  gboolean fold_alpha = !trans_b && alpha != 1;
  float stack_buf[1024];
  float *buf = NULL;
  const float *x = a;
  if (a_col_stride != 1 || (m > 1 && a_row_stride != k) || fold_alpha)
    {
      buf = m * k <= (int64_t) G_N_ELEMENTS (stack_buf) ? stack_buf : g_new (float, m * k);
      float s = fold_alpha ? alpha : 1;
      for (int64_t i = 0; i < m; i++)
        for (int64_t kk = 0; kk < k; kk++)
          buf[i * k + kk] = s * a[i * a_row_stride + kk * a_col_stride];
      x = buf;
    }
  if (trans_b)
    {
#ifdef HAVE_AVX2_CODE
      if (_owb_cpu_has_avx2_fma ())
        dots_avx2 (m, n, k, alpha, x, b, ldb, accumulate, c, ldc);
      else
#endif
        dots_portable (m, n, k, alpha, x, b, ldb, accumulate, c, ldc);
    }
  else
    {
#ifdef HAVE_AVX2_CODE
      if (_owb_cpu_has_avx2_fma ())
        axpy_avx2 (m, n, k, x, b, ldb, accumulate, c, ldc);
      else
#endif
        axpy_portable (m, n, k, x, b, ldb, accumulate, c, ldc);
    }
  if (buf != stack_buf)
    g_free (buf);
}

/* ---- sigmoid and tanh ---- */

