/* cpu-sgemm.c: float GEMM against a constant packed B (convolution weights), Goto/BLIS-style:
 * B is packed once into 16-column panels; A's rows are read in place (im2col rows or NHWC pixels);
 * a 6x16 register tile accumulates over a depth block of KC, so a 6 x KC strip of A stays in L1
 * while the KC x NC block of B streams from L2; bias, residual and activation are applied in registers
 * on the last depth block. */
#include <owb/owb-parallel.h>

#include "cpu-sgemm-private.h"
#include "cpu-gemv-private.h"
#include "cpu-activation-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include "cpu-avx512-private.h"
#define HAVE_X86_AVX2 1
#endif

#define MR 6
#define NR 16
/* depth of one block: A's 6 x KC strip (6 KiB) and B's KC x 16 panel (16 KiB) fit L1 together */
#define KC 256
/* columns of one B block: KC x NC floats (128 KiB) stay in L2 beside the KC-deep slice of A that
 * the strips read (vit_b_16's 197 rows: 197 KiB). With 256 columns the two filled L2: a chain of 24
 * [768 x 3072] MatMuls on 50 rows (weights streaming from memory) ran 57.4 -> 49.5 ms at 2 threads
 * with this and one-block-deep strips below (medians of 16 alternated runs), 167.6 -> 161.9 ms on
 * 197 rows. */
#define NC 128
/* Row stride of a copied A strip (a depth block and one cache line, so that its rows spread over
 * L1's sets), and the strides of A (in floats, 2 KiB) from which strips are copied. */
#define A_STRIP_STRIDE (KC + 16)
#define A_ALIASING_STRIDE 512
#define A_STRIP_ROWS 16
/* Bytes of B above which _owb_sgemm_packed splits the threads over columns only. */
#define COLUMN_SPLIT_B_BYTES (4 << 20)
/* Bytes of B above which it is taken not to stay in a core's L2 (2 MiB here) from run to run */
#define B_IN_L2_BYTES (1 << 20)
/* B's share of L2 when whole panels of it stay there */
#define L2_FLOATS (64 * 1024)

struct _OwbSgemmPacked {
  int64_t K, N, npanels;
  int64_t capacity;   /* floats allocated at data */
  float *data;
};

/* A last panel of 1..8 columns is packed 8 wide and runs a 6x8 tile, not half-empty 16-wide ones. */
static inline int64_t
panel_width (const OwbSgemmPacked *p, int64_t jp)
{
  int64_t left = p->N - jp * NR;
  return left >= NR ? NR : (left <= 8 ? 8 : NR);
}

/* p (a new pack when NULL) made a K x N pack with its panel storage allocated, not filled: the
 * storage it had is kept when large enough. */
static OwbSgemmPacked *
pack_reset (OwbSgemmPacked *p, int64_t K, int64_t N)
{
  if (!p)
    p = g_new0 (OwbSgemmPacked, 1);
  p->K = K;
  p->N = N;
  p->npanels = (N + NR - 1) / NR;
  int64_t total = 0;
  for (int64_t jp = 0; jp < p->npanels; jp++)
    total += panel_width (p, jp) * K;
  total = MAX (total, 16);
  if (total > p->capacity)
    {
      void *mem = NULL;
      if (posix_memalign (&mem, 64, total * sizeof (float)) != 0)
        g_error ("out of memory packing a %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT " matrix", K, N);
      free (p->data);
      p->data = mem;
      p->capacity = total;
    }
  return p;
}

OwbSgemmPacked *
_owb_sgemm_pack_transposed (int64_t K, int64_t N, const float *bt, int64_t ldbt, float alpha)
{
  return _owb_sgemm_repack_transposed (NULL, K, N, bt, ldbt, alpha);
}

OwbSgemmPacked *
_owb_sgemm_repack_transposed (OwbSgemmPacked *p, int64_t K, int64_t N, const float *bt, int64_t ldbt, float alpha)
{
  p = pack_reset (p, K, N);
  /* panel by panel: its (up to) 16 rows of bt are read side by side, each sequentially, where a
   * whole transposed copy first would write with a stride of N (vit's weights: a third of its load) */
  for (int64_t jp = 0; jp < p->npanels; jp++)
    {
      int64_t w = panel_width (p, jp), j0 = jp * NR, n = MIN (NR, N - j0);
      float *restrict dst = p->data + jp * NR * K;
      for (int64_t k0 = 0; k0 < K; k0 += 64)
        {
          int64_t k1 = MIN (k0 + 64, K);
          for (int64_t j = 0; j < w; j++)
            {
              const float *restrict src = bt + (j0 + j) * ldbt;
              if (j < n)
                for (int64_t k = k0; k < k1; k++)
                  dst[k * w + j] = alpha * src[k];
              else
                for (int64_t k = k0; k < k1; k++)
                  dst[k * w + j] = 0.0f;
            }
        }
    }
  return p;
}

OwbSgemmPacked *
_owb_sgemm_pack (int64_t K, int64_t N, const float *b, int64_t ldb)
{
  return _owb_sgemm_repack (NULL, K, N, b, ldb);
}

OwbSgemmPacked *
_owb_sgemm_repack (OwbSgemmPacked *p, int64_t K, int64_t N, const float *b, int64_t ldb)
{
  p = pack_reset (p, K, N);
  /* row by row: B is read once in order, each panel is written in order */
  for (int64_t k = 0; k < K; k++)
    for (int64_t jp = 0; jp < p->npanels; jp++)
      {
        int64_t w = panel_width (p, jp), j0 = jp * NR, n = MIN (NR, N - j0);
        float *restrict dst = p->data + jp * NR * K + k * w;
        const float *restrict src = b + k * ldb + j0;
        if (n == NR)
          for (int j = 0; j < NR; j++)
            dst[j] = src[j];
        else
          for (int64_t j = 0; j < w; j++)
            dst[j] = j < n ? src[j] : 0.0f;
      }
  return p;
}

const float *
_owb_sgemm_packed_panel (const OwbSgemmPacked *p, int64_t jp, int *width)
{
  *width = (int) panel_width (p, jp);
  return p->data + jp * NR * p->K;
}

void
_owb_sgemm_packed_free (OwbSgemmPacked *p)
{
  if (!p)
    return;
  free (p->data);
  g_free (p);
}

int64_t
_owb_sgemm_packed_k (const OwbSgemmPacked *p)
{
  return p->K;
}

int64_t
_owb_sgemm_packed_n (const OwbSgemmPacked *p)
{
  return p->N;
}

/* One 6-row strip of C against the panels of columns [j0, j1): A, C and z point at the strip's
 * first row (A at depth k0, C and z at column 0), bias at column 0. */
typedef struct {
  const OwbSgemmPacked *b;
  int64_t k0, kc, lda, ldc, ldz, j0, j1;
  const float *a, *bias, *z;
  float *c;
  gboolean first, last;
  OwbSgemmAct act;
  float p0, p1;
} Strip;

/* One tile's operands: rows x ncols of C (ncols <= the panel width). */
typedef struct {
  const float *b, *bias, *z;
  float *c;
  int ncols;
} Tile;

static inline Tile
strip_tile (const Strip *s, int64_t j0, int *w)
{
  int64_t jp = j0 / NR;
  *w = (int) panel_width (s->b, jp);
  Tile t = { .b = s->b->data + jp * NR * s->b->K + s->k0 * *w, .c = s->c + j0, .ncols = (int) MIN (*w, s->j1 - j0),
             .bias = s->bias ? s->bias + j0 : NULL, .z = s->z ? s->z + j0 : NULL };
  return t;
}

/* ---- portable microkernel ---- */

static inline float
clamp01 (float x)
{
  return x < 0 ? 0.0f : (x > 1 ? 1.0f : x);
}

static inline float
act_scalar (OwbSgemmAct act, float p0, float p1, float v)
{
  switch (act)
    {
    case OWB_SGEMM_ACT_NONE:
      break;
    case OWB_SGEMM_ACT_CLAMP:
      v = v < p0 ? p0 : v;
      v = v > p1 ? p1 : v;
      break;
    case OWB_SGEMM_ACT_SIGMOID:
      v = 1.0f / (1.0f + expf (-v));
      break;
    case OWB_SGEMM_ACT_SWISH:
      v = v / (1.0f + expf (-v));
      break;
    case OWB_SGEMM_ACT_HARD_SIGMOID:
      v = clamp01 (v * p0 + p1);
      break;
    case OWB_SGEMM_ACT_HARD_SWISH:
      v = v * clamp01 (v * p0 + p1);
      break;
    }
  return v;
}

static void
strip_portable (int rows, const Strip *s)
{
  for (int64_t j0 = s->j0; j0 < s->j1; j0 += NR)
    {
      int w;
      Tile t = strip_tile (s, j0, &w);
      float acc[MR][NR];
      memset (acc, 0, sizeof acc);
      for (int64_t k = 0; k < s->kc; k++)
        {
          const float *bk = t.b + k * w;
          for (int r = 0; r < rows; r++)
            {
              float av = s->a[r * s->lda + k];
              for (int j = 0; j < w; j++)
                acc[r][j] += av * bk[j];
            }
        }
      for (int r = 0; r < rows; r++)
        {
          float *cr = t.c + r * s->ldc;
          for (int j = 0; j < t.ncols; j++)
            {
              float v = acc[r][j];
              if (s->first)
                {
                  if (t.bias)
                    v += t.bias[j];
                  if (t.z)
                    v += t.z[r * s->ldz + j];
                }
              else
                v += cr[j];
              if (s->last)
                v = act_scalar (s->act, s->p0, s->p1, v);
              cr[j] = v;
            }
        }
    }
}

/* ---- AVX2 + FMA microkernel ---- */

#ifdef HAVE_X86_AVX2
#define AVX2 __attribute__ ((target ("avx2,fma")))

static inline __attribute__ ((always_inline)) AVX2 __m256
ld (const float *p, __m256i m, gboolean full)
{
  return full ? _mm256_loadu_ps (p) : _mm256_maskload_ps (p, m);
}

/* x / (1 + e^-x) (swish) or 1 / (1 + e^-x) over a strip's stored rows x ncols, still in cache. */
static void
sigmoid_pass (float *c, int64_t ldc, int rows, int ncols, gboolean swish)
{
  for (int r = 0; r < rows; r++)
    _owb_cpu_sigmoid_vector (c + r * ldc, ncols, swish);
}

/* In-tile activation modes (constants after inlining, so no branch per vector): the sigmoids
 * run afterwards over the strip's stored rows, which are still in cache. */
enum { MODE_NONE, MODE_CLAMP, MODE_HARD };

static inline __attribute__ ((always_inline)) AVX2 void
tile_avx2 (const int R, const int V, const int MODE, const Strip *s, const Tile *t)
{
  __m256 acc[MR][2];
#pragma GCC unroll 6
  for (int r = 0; r < R; r++)
    acc[r][0] = acc[r][1] = _mm256_setzero_ps ();
  const float *a = s->a, *b = t->b;
  const int64_t lda = s->lda, kc = s->kc;
#pragma GCC unroll 2
  for (int64_t k = 0; k < kc; k++, a++, b += V * 8)
    {
      __m256 b0 = _mm256_load_ps (b), b1 = V == 2 ? _mm256_load_ps (b + 8) : b0;
      /* B's panel 32 rows ahead into L1, as in tile_avx512: with few rows (a transformer's 50) the
       * strips stream B from L2 and the hardware prefetchers left the tile waiting on it. */
      _mm_prefetch ((const char *) (b + V * 8 * 32), _MM_HINT_T0);
#pragma GCC unroll 6
      for (int r = 0; r < R; r++)
        {
          __m256 av = _mm256_broadcast_ss (a + r * lda);
          acc[r][0] = _mm256_fmadd_ps (av, b0, acc[r][0]);
          if (V == 2)
            acc[r][1] = _mm256_fmadd_ps (av, b1, acc[r][1]);
        }
    }
  /* The epilogue reads its parameters from locals: with -fno-strict-aliasing each store to C could
   * otherwise rewrite *s and *t, and every flag would be reloaded after every store. */
  const int ncols = t->ncols;
  const gboolean full = ncols == V * 8, first = s->first;
  const float *const bias = t->bias, *const z = t->z;
  float *const c = t->c;
  const int64_t ldc = s->ldc, ldz = s->ldz;
  __m256i m[2] = { _mm256_setzero_si256 (), _mm256_setzero_si256 () };
  if (!full)
    {
      const __m256i n = _mm256_set1_epi32 (ncols);
      m[0] = _mm256_cmpgt_epi32 (n, _mm256_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7));
      m[1] = _mm256_cmpgt_epi32 (n, _mm256_setr_epi32 (8, 9, 10, 11, 12, 13, 14, 15));
    }
  const __m256 p0 = _mm256_set1_ps (s->p0), p1 = _mm256_set1_ps (s->p1);
  const __m256 zero = _mm256_setzero_ps (), one = _mm256_set1_ps (1.0f);
  /* hard swish multiplies by x, hard sigmoid by 1 */
  const __m256 swish = _mm256_castsi256_ps (_mm256_set1_epi32 (s->act == OWB_SGEMM_ACT_HARD_SWISH ? -1 : 0));
#pragma GCC unroll 6
  for (int r = 0; r < R; r++)
    {
      float *cr = c + r * ldc;
#pragma GCC unroll 2
      for (int v = 0; v < V; v++)
        {
          __m256 x = acc[r][v];
          if (first)
            {
              if (bias)
                x = _mm256_add_ps (x, ld (bias + v * 8, m[v], full));
              if (z)
                x = _mm256_add_ps (x, ld (z + r * ldz + v * 8, m[v], full));
            }
          else
            x = _mm256_add_ps (x, ld (cr + v * 8, m[v], full));
          if (MODE == MODE_CLAMP)
            x = _mm256_min_ps (p1, _mm256_max_ps (p0, x));
          else if (MODE == MODE_HARD)
            x = _mm256_mul_ps (_mm256_blendv_ps (one, x, swish),
                               _mm256_min_ps (one, _mm256_max_ps (zero, _mm256_fmadd_ps (x, p0, p1))));
          if (full)
            _mm256_storeu_ps (cr + v * 8, x);
          else
            _mm256_maskstore_ps (cr + v * 8, m[v], x);
        }
    }
}

static inline __attribute__ ((always_inline)) AVX2 void
strip_avx2_mode (const int R, const int MODE, const Strip *s)
{
  for (int64_t j0 = s->j0; j0 < s->j1; j0 += NR)
    {
      int w;
      Tile t = strip_tile (s, j0, &w);
      if (w == 16)
        tile_avx2 (R, 2, MODE, s, &t);
      else
        tile_avx2 (R, 1, MODE, s, &t);
    }
  if (s->last && (s->act == OWB_SGEMM_ACT_SIGMOID || s->act == OWB_SGEMM_ACT_SWISH))
    sigmoid_pass (s->c + s->j0, s->ldc, R, (int) (s->j1 - s->j0), s->act == OWB_SGEMM_ACT_SWISH);
}

static inline __attribute__ ((always_inline)) AVX2 void
strip_avx2_rows (const int R, const Strip *s)
{
  OwbSgemmAct act = s->last ? s->act : OWB_SGEMM_ACT_NONE;
  if (act == OWB_SGEMM_ACT_CLAMP)
    strip_avx2_mode (R, MODE_CLAMP, s);
  else if (act == OWB_SGEMM_ACT_HARD_SIGMOID || act == OWB_SGEMM_ACT_HARD_SWISH)
    strip_avx2_mode (R, MODE_HARD, s);
  else
    strip_avx2_mode (R, MODE_NONE, s);
}

static AVX2 void
strip_avx2 (int rows, const Strip *s)
{
  switch (rows)
    {
    case 1: strip_avx2_rows (1, s); break;
    case 2: strip_avx2_rows (2, s); break;
    case 3: strip_avx2_rows (3, s); break;
    case 4: strip_avx2_rows (4, s); break;
    case 5: strip_avx2_rows (5, s); break;
    default: strip_avx2_rows (6, s); break;
    }
}

/* ---- AVX-512 microkernel ----
 * A 14 x 32 tile: two 16-wide panels side by side, one zmm per panel row, 28 accumulators (with
 * the two B vectors and the broadcast, 31 of the 32 registers). Fourteen rows, not six, so that
 * each 64-byte line of B brought from L2 feeds fourteen FMAs: at 16 lanes a 6-row tile asks L2 for
 * a line every 1.5 FMA cycles, more than it gives. Against 12 rows (both libraries alternated, 8
 * rounds at 2 threads): vit_b_32 0.97, resnet18 0.955, mobilenet_v3_large 0.95, bert_small 1.005.
 * An 8-wide last panel runs the AVX2 tile, six rows at a time. */

#define AVX512 OWB_AVX512
#define MR512 14
/* one more in-tile mode than tile_avx2 has: the sigmoids in registers too */
enum { MODE_SIGMOID = MODE_HARD + 1, MODE_SWISH };

static inline __attribute__ ((always_inline)) AVX512 __m512
ld512 (const float *p, __mmask16 m, gboolean full)
{
  return full ? _mm512_loadu_ps (p) : _mm512_maskz_loadu_ps (m, p);
}

static inline __attribute__ ((always_inline)) AVX512 void
tile_avx512 (const int R, const int P, const int MODE, const Strip *s, const float *b0p, const float *b1p,
             const Tile *t)
{
  __m512 acc[MR512][2];
#pragma GCC unroll 14
  for (int r = 0; r < R; r++)
    acc[r][0] = acc[r][1] = _mm512_setzero_ps ();
  /* Rows addressed as group base (rows 0, 4, 8, 12) + 0, 1, 2 or 3 strides: one scaled-index
   * operand each, with six registers for all fourteen. Indexed from one pointer, GCC kept a
   * register per row and spilled them to the stack inside the loop. */
  const int64_t lda = s->lda, lda3 = 3 * s->lda, kc = s->kc;
  const float *ag[4] = { s->a, s->a + 4 * lda, s->a + 8 * lda, s->a + 12 * lda };
  for (int64_t k = 0; k < kc; k++, ag[0]++, ag[1]++, ag[2]++, ag[3]++, b0p += 16, b1p += 16)
    {
      __m512 b0 = _mm512_load_ps (b0p), b1 = P == 2 ? _mm512_load_ps (b1p) : b0;
      /* B's panels 32 rows (2 KiB) ahead into L1: the hardware prefetchers left the tile waiting
       * on L2. Both libraries alternated at 2 threads: vit_b_32 0.86, bert_small 0.96, resnet18
       * 0.95, mobilenet_v3_large 0.98. On 12 chained 50-row products (768 x 3072 and back) at
       * one thread: 0.86 with 8 rows ahead, then 0.97 for 16 against 8 and 0.94 for 32 against
       * 16; 64 was no better. */
      _mm_prefetch ((const char *) (b0p + 16 * 32), _MM_HINT_T0);
      if (P == 2)
        _mm_prefetch ((const char *) (b1p + 16 * 32), _MM_HINT_T0);
#pragma GCC unroll 14
      for (int r = 0; r < R; r++)
        {
          const float *ar = ag[r / 4];
          const int i = r % 4;
          __m512 av = _mm512_set1_ps (i == 0 ? ar[0] : i == 1 ? ar[lda] : i == 2 ? ar[2 * lda] : ar[lda3]);
          acc[r][0] = _mm512_fmadd_ps (av, b0, acc[r][0]);
          if (P == 2)
            acc[r][1] = _mm512_fmadd_ps (av, b1, acc[r][1]);
        }
    }
  /* parameters in locals, as in tile_avx2 */
  const int ncols = t->ncols;
  const gboolean full = ncols == P * 16, first = s->first;
  const float *const bias = t->bias, *const z = t->z;
  float *const c = t->c;
  const int64_t ldc = s->ldc, ldz = s->ldz;
  __mmask16 m[2] = { 0xffff, 0xffff };
  if (!full)
    {
      m[0] = (__mmask16) (ncols >= 16 ? 0xffff : (1u << ncols) - 1);
      m[1] = (__mmask16) (ncols >= 32 ? 0xffff : ncols <= 16 ? 0 : (1u << (ncols - 16)) - 1);
    }
  const __m512 p0 = _mm512_set1_ps (s->p0), p1 = _mm512_set1_ps (s->p1);
  const __m512 zero = _mm512_setzero_ps (), one = _mm512_set1_ps (1.0f);
  const gboolean hard_swish = s->act == OWB_SGEMM_ACT_HARD_SWISH;
#pragma GCC unroll 14
  for (int r = 0; r < R; r++)
    {
      float *cr = c + r * ldc;
#pragma GCC unroll 2
      for (int v = 0; v < P; v++)
        {
          __m512 x = acc[r][v];
          if (first)
            {
              if (bias)
                x = _mm512_add_ps (x, ld512 (bias + v * 16, m[v], full));
              if (z)
                x = _mm512_add_ps (x, ld512 (z + r * ldz + v * 16, m[v], full));
            }
          else
            x = _mm512_add_ps (x, ld512 (cr + v * 16, m[v], full));
          if (MODE == MODE_CLAMP)
            x = _mm512_min_ps (p1, _mm512_max_ps (p0, x));
          else if (MODE == MODE_HARD)
            {
              __m512 h = _mm512_min_ps (one, _mm512_max_ps (zero, _mm512_fmadd_ps (x, p0, p1)));
              x = hard_swish ? _mm512_mul_ps (x, h) : h;
            }
          else if (MODE == MODE_SIGMOID || MODE == MODE_SWISH)
            x = owb_sigmoid512 (x, MODE == MODE_SWISH);
          if (full)
            _mm512_storeu_ps (cr + v * 16, x);
          else
            _mm512_mask_storeu_ps (cr + v * 16, m[v], x);
        }
    }
}

/* The AVX2 tile on rows [r0, r0 + 6) or fewer of a strip of R (an 8-wide last panel). */
static inline __attribute__ ((always_inline)) AVX512 void
tile_avx2_part (const int R, const int MODE, const Strip *s, const Tile *t)
{
#pragma GCC unroll 2
  for (int r0 = 0; r0 < R; r0 += MR)
    {
      Strip sp = *s;
      sp.a = s->a + r0 * s->lda;
      sp.z = s->z ? s->z + r0 * s->ldz : NULL;
      Tile tp = *t;
      tp.c = t->c + r0 * s->ldc;
      tp.z = t->z ? t->z + r0 * s->ldz : NULL;
      if (R - r0 >= MR)
        tile_avx2 (MR, 1, MODE, &sp, &tp);
      else
        switch (R - r0)
          {
          case 1: tile_avx2 (1, 1, MODE, &sp, &tp); break;
          case 2: tile_avx2 (2, 1, MODE, &sp, &tp); break;
          case 3: tile_avx2 (3, 1, MODE, &sp, &tp); break;
          case 4: tile_avx2 (4, 1, MODE, &sp, &tp); break;
          default: tile_avx2 (5, 1, MODE, &sp, &tp); break;
          }
    }
}

static inline __attribute__ ((always_inline)) AVX512 void
strip_avx512_mode (const int R, const int MODE, const Strip *s)
{
  for (int64_t j0 = s->j0; j0 < s->j1;)
    {
      int w;
      Tile t = strip_tile (s, j0, &w);
      if (w != 16)
        {
          tile_avx2_part (R, MODE == MODE_SIGMOID || MODE == MODE_SWISH ? MODE_NONE : MODE, s, &t);
          j0 += NR;
          continue;
        }
      int64_t jp = j0 / NR;
      /* a second full panel beside this one, within the strip's columns */
      gboolean pair = j0 + NR < s->j1 && panel_width (s->b, jp + 1) == NR;
      const float *b0p = t.b;
      if (pair)
        {
          const float *b1p = s->b->data + (jp + 1) * NR * s->b->K + s->k0 * NR;
          t.ncols = (int) MIN (2 * NR, s->j1 - j0);
          tile_avx512 (R, 2, MODE, s, b0p, b1p, &t);
          j0 += 2 * NR;
        }
      else
        {
          tile_avx512 (R, 1, MODE, s, b0p, b0p, &t);
          j0 += NR;
        }
    }
  /* an 8-wide last panel ran the AVX2 tile, which leaves the sigmoids to a pass */
  int64_t last = s->b->npanels - 1;
  if (s->last && (MODE == MODE_SIGMOID || MODE == MODE_SWISH) && last * NR < s->j1 && panel_width (s->b, last) != NR)
    sigmoid_pass (s->c + last * NR, s->ldc, R, (int) (s->j1 - last * NR), MODE == MODE_SWISH);
}

static inline __attribute__ ((always_inline)) AVX512 void
strip_avx512_rows (const int R, const Strip *s)
{
  OwbSgemmAct act = s->last ? s->act : OWB_SGEMM_ACT_NONE;
  if (act == OWB_SGEMM_ACT_CLAMP)
    strip_avx512_mode (R, MODE_CLAMP, s);
  else if (act == OWB_SGEMM_ACT_HARD_SIGMOID || act == OWB_SGEMM_ACT_HARD_SWISH)
    strip_avx512_mode (R, MODE_HARD, s);
  else if (act == OWB_SGEMM_ACT_SIGMOID)
    strip_avx512_mode (R, MODE_SIGMOID, s);
  else if (act == OWB_SGEMM_ACT_SWISH)
    strip_avx512_mode (R, MODE_SWISH, s);
  else
    strip_avx512_mode (R, MODE_NONE, s);
}

static AVX512 void
strip_avx512 (int rows, const Strip *s)
{
  switch (rows)
    {
    case 1: strip_avx512_rows (1, s); break;
    case 2: strip_avx512_rows (2, s); break;
    case 3: strip_avx512_rows (3, s); break;
    case 4: strip_avx512_rows (4, s); break;
    case 5: strip_avx512_rows (5, s); break;
    case 6: strip_avx512_rows (6, s); break;
    case 7: strip_avx512_rows (7, s); break;
    case 8: strip_avx512_rows (8, s); break;
    case 9: strip_avx512_rows (9, s); break;
    case 10: strip_avx512_rows (10, s); break;
    case 11: strip_avx512_rows (11, s); break;
    case 12: strip_avx512_rows (12, s); break;
    case 13: strip_avx512_rows (13, s); break;
    default: strip_avx512_rows (14, s); break;
    }
}
#endif

/* ---- dispatch ---- */

static int force_portable, force_avx2;

gboolean
_owb_sgemm_uses_avx2 (void)
{
  return !g_atomic_int_get (&force_portable) && _owb_cpu_has_avx2_fma ();
}

gboolean
_owb_sgemm_uses_avx512 (void)
{
  return _owb_sgemm_uses_avx2 () && !g_atomic_int_get (&force_avx2) && _owb_cpu_has_avx512 ();
}

void
_owb_sgemm_force_portable (gboolean force)
{
  g_atomic_int_set (&force_portable, force ? 1 : 0);
}

void
_owb_sgemm_force_avx2 (gboolean force)
{
  g_atomic_int_set (&force_avx2, force ? 1 : 0);
}

int
_owb_sgemm_tile_rows (void)
{
#ifdef HAVE_X86_AVX2
  if (_owb_sgemm_uses_avx512 ())
    return MR512;
#endif
  return MR;
}

/* Asks for slice `part` of `nparts` of B's block (columns [j0, j1), depth [k0, k0 + kc)) to be
 * brought into L2. The block after the current one is fetched a slice per strip while the current
 * one computes: when few rows share a block, its first strip would otherwise wait on memory for every
 * panel (vit's and bert's weights, the last convolutions of a ResNet). */
static void
prefetch_slice (const OwbSgemmPacked *b, int64_t j0, int64_t j1, int64_t k0, int64_t kc, int64_t part, int64_t nparts)
{
  for (int64_t jp = j0 / NR; jp * NR < j1; jp++)
    {
      int64_t w = panel_width (b, jp);
      const char *first = (const char *) (b->data + jp * NR * b->K + k0 * w);
      int64_t bytes = kc * w * (int64_t) sizeof (float);
      int64_t lo = bytes * part / nparts / 64 * 64, hi = bytes * (part + 1) / nparts;
      for (int64_t off = lo; off < hi; off += 64)
        __builtin_prefetch (first + off, 0, 2);
    }
}

void
_owb_sgemm_packed_run (const OwbSgemmPacked *b, int64_t rows, const float *a, int64_t lda, int64_t n0, int64_t n1,
                       float *c, int64_t ldc, const OwbSgemmEpilogue *ep)
{
  static const OwbSgemmEpilogue none = { 0 };
  if (!ep)
    ep = &none;
  g_return_if_fail (n0 % NR == 0);
  n1 = MIN (n1, b->N);
  if (rows <= 0 || n1 <= n0)
    return;
  void (*strip) (int, const Strip *) = strip_portable;
  int64_t mr_max = MR;
#ifdef HAVE_X86_AVX2
  if (_owb_sgemm_uses_avx512 ())
    {
      strip = strip_avx512;
      mr_max = MR512;
    }
  else if (_owb_sgemm_uses_avx2 ())
    strip = strip_avx2;
#endif
  int64_t K = b->K;
  /* equal depth blocks, so that no block is a short remainder */
  int64_t nkb = MAX ((K + KC - 1) / KC, 1), kc_max = (K + nkb - 1) / nkb;
  /* A's rows a multiple of 2 KiB apart fall in one or two sets of L1 (32 KiB, 8 ways: addresses
   * 4 KiB apart share a set): a strip's 14 rows at a 4 or 8 KiB stride (ResNeXt's and ResNet's 1x1
   * convolutions over 1024 or 2048 channels, FFN layers of 2048-4096) evict one another at every
   * step of the tile. Those strips are copied to a buffer whose rows are one line more than a depth
   * block apart; the copy is one read of A per column block, against kc x 32 multiply-adds per
   * value in the tile. */
  float a_strip[A_STRIP_ROWS * A_STRIP_STRIDE];
  gboolean copy_a = rows > 1 && lda % A_ALIASING_STRIDE == 0 && kc_max <= KC;
  Strip s = { .b = b, .lda = copy_a ? A_STRIP_STRIDE : lda, .ldc = ldc, .ldz = ep->ldz, .bias = ep->bias,
              .act = ep->act, .p0 = ep->p0, .p1 = ep->p1 };
  /* When K is one depth block, each 6-row strip runs over a block of as many columns as fit L2
   * (its C tile in registers, A's strip and B's panel in L1); otherwise every depth block sweeps all
   * the rows (a KC x NC block of B in L2, C tiles revisited once per block). Running all the depth
   * of a deeper K strip by strip made the A strip and B panel outgrow L1, and A (a transformer's
   * 50-197 rows of 768-3072) re-stream from L3 for every block of columns. */
  int64_t nc_fit = L2_FLOATS / MAX (K, 1) / NR * NR;
  gboolean rows_outer = K <= KC;
  int64_t nc = rows_outer ? nc_fit : NC;
  /* strips of equal height (50 rows: five of 10, not four of 12 and one of 2, whose tile would be
   * bound by loading B for two rows) */
  int64_t nstrips = (rows + mr_max - 1) / mr_max, strip_rows = rows / nstrips, taller = rows % nstrips;
  for (int64_t nc0 = n0; nc0 < n1; nc0 += nc)
    {
      s.j0 = nc0;
      s.j1 = MIN (nc0 + nc, n1);
      /* (K == 0 still runs once: C is the epilogue alone) */
      for (int64_t k0 = 0; k0 < MAX (K, 1); k0 += rows_outer ? MAX (K, 1) : kc_max)
        {
          /* the block that comes after this one: the next columns, or the next depth block */
          int64_t next_j0 = nc0, next_k0 = k0 + kc_max;
          if (rows_outer || next_k0 >= K)
            {
              next_j0 = nc0 + nc;
              next_k0 = 0;
            }
          int64_t next_kc = rows_outer ? K : MIN (kc_max, K - next_k0);
          for (int64_t si = 0; si < nstrips; si++)
            {
              int64_t r0 = si * strip_rows + MIN (si, taller);
              int mr = (int) (strip_rows + (si < taller));
              if (next_j0 < n1)
                prefetch_slice (b, next_j0, MIN (next_j0 + nc, n1), next_k0, next_kc, si, nstrips);
              /* the next strip's C rows, for writing, when this pass writes C (its last depth block,
               * or every pass when K is one block): a large output (an expanding 1x1 convolution on
               * a big image) would otherwise wait on each line's read for ownership. mobilenet_v2's
               * 16 -> 96 at 112x112: 0.85 -> 0.60 ms at 2 threads. */
              if (si + 1 < nstrips && k0 + kc_max >= K)
                {
                  int64_t r1 = r0 + mr, mr1 = strip_rows + (si + 1 < taller);
                  for (int64_t r = 0; r < mr1; r++)
                    {
                      const char *row = (const char *) (c + (r1 + r) * ldc + nc0);
                      int64_t bytes = (MIN (nc0 + nc, n1) - nc0) * (int64_t) sizeof (float);
                      for (int64_t off = 0; off < bytes; off += 64)
                        __builtin_prefetch (row + off, 1, 3);
                    }
                }
              s.a = a + r0 * lda;
              s.c = c + r0 * ldc;
              s.z = ep->z ? ep->z + r0 * ep->ldz : NULL;
              /* rows_outer: this strip runs all its depth blocks now, its C tile still in L1 */
              int64_t kk = k0;
              do
                {
                  s.k0 = kk;
                  s.kc = MIN (kc_max, K - kk);
                  s.first = kk == 0;
                  s.last = kk + s.kc >= K;
                  s.a = a + r0 * lda + kk;
                  if (copy_a)
                    {
                      for (int r = 0; r < mr; r++)
                        memcpy (a_strip + r * A_STRIP_STRIDE, s.a + r * lda, s.kc * sizeof (float));
                      s.a = a_strip;
                    }
                  strip (mr, &s);
                  kk += s.kc;
                }
              while (rows_outer && kk < K);
              if (s.last && ep->rows_fn)
                ep->rows_fn (c + r0 * ldc + nc0, mr, s.j1 - nc0, ldc, ep->rows_data);
            }
        }
    }
}

void
_owb_sgemm_epilogue_set_activation (OwbSgemmEpilogue *ep, const OwbCpuActivation *act, OwbSgemmRowsFunc rows_fn)
{
  ep->act = OWB_SGEMM_ACT_NONE;
  ep->p0 = act->p0;
  ep->p1 = act->p1;
  switch (act->kind)
    {
    case OWB_CPU_ACT_NONE:
      break;
    case OWB_CPU_ACT_RELU:
      ep->act = OWB_SGEMM_ACT_CLAMP;
      ep->p0 = 0;
      ep->p1 = INFINITY;
      break;
    case OWB_CPU_ACT_CLIP:
      ep->act = OWB_SGEMM_ACT_CLAMP;
      break;
    case OWB_CPU_ACT_SIGMOID:
      ep->act = OWB_SGEMM_ACT_SIGMOID;
      break;
    case OWB_CPU_ACT_SWISH:
      ep->act = OWB_SGEMM_ACT_SWISH;
      break;
    case OWB_CPU_ACT_HARD_SIGMOID:
      ep->act = OWB_SGEMM_ACT_HARD_SIGMOID;
      break;
    case OWB_CPU_ACT_HARD_SWISH:
      ep->act = OWB_SGEMM_ACT_HARD_SWISH;
      break;
    default:
      ep->rows_fn = rows_fn;
      ep->rows_data = act;
      break;
    }
}

/* The work of the slowest thread when units (row tile, column block), cc blocks to a tile row, go
 * to the threads in contiguous shares as owb_parallel_for hands them out: each unit costs its real
 * rows (strips are of equal height, see _owb_sgemm_packed_run), plus a little per strip, times its
 * panels. */
static double
slowest_real_share (int64_t rows, int64_t np, int threads, int64_t rt, int64_t cb, int64_t cc, int64_t mr)
{
  int64_t units = (rows + rt - 1) / rt * cc;
  double slowest = 0;
  for (int t = 0; t < threads; t++)
    {
      double share = 0;
      for (int64_t u = units * t / threads; u < units * (t + 1) / threads; u++)
        {
          int64_t r = MIN (rt, rows - u / cc * rt), c = MIN (cb, np - u % cc * cb);
          share += (double) (r + 2 * ((r + mr - 1) / mr)) * c;
        }
      slowest = MAX (slowest, share);
    }
  return slowest;
}

void
_owb_sgemm_partition (int64_t rows, int64_t N, int64_t K, int threads, int64_t max_rows, int64_t *row_tile,
                      int64_t *col_block)
{
  int64_t np = MAX ((N + NR - 1) / NR, 1), mr = _owb_sgemm_tile_rows ();
  max_rows = MAX (max_rows, mr);
  int64_t pmin = (rows + max_rows - 1) / max_rows;
  /* Tiles are counted padded to whole strips of mr rows, except where B is too large to stay in
   * each core's L2 beside the rest: there a row split has every thread stream all of B, and tiles
   * are counted by their real rows (slowest_real_share). Counted padded, ResNet-50's 7x7 layers (a
   * 49-row tile as 56) kept a row split; counted by real rows they split by columns: resnet50 0.93
   * at 2 threads, alternated with the padded count. Counting real rows everywhere cost mnasnet0_5
   * 5%: its small layers' weights stay in L2, and a column split spreads each output row over both
   * cores. */
  gboolean streams_b = K * N * (int64_t) sizeof (float) > B_IN_L2_BYTES;
  double best = G_MAXDOUBLE;
  *row_tile = MAX (rows, 1);
  *col_block = N;
  for (int64_t cc = 1; cc <= MIN (np, 16); cc++)
    {
      int64_t cb = (np + cc - 1) / cc, cc_eff = (np + cb - 1) / cb;
      if (cc_eff != cc)
        continue;
      int64_t pc = MAX (pmin, 1);
      while ((pc * cc) % threads != 0 && pc < pmin + threads)
        pc++;
      int64_t rt = ((rows + pc - 1) / pc + mr - 1) / mr * mr;
      int64_t pc_eff = (rows + rt - 1) / rt, units = pc_eff * cc;
      /* The slowest thread's share; splitting columns costs a little (im2col repeated, shorter
       * reuse of A's strip). */
      double cost = streams_b ? slowest_real_share (rows, np, threads, rt, cb, cc, mr)
                              : (double) ((units + threads - 1) / threads) * rt * cb;
      cost *= 1.0 + 0.02 * (cc - 1);
      if (cost < best * 0.999)
        {
          best = cost;
          *row_tile = rt;
          *col_block = cb * NR;
        }
    }
}

typedef struct {
  const OwbSgemmPacked *b;
  int64_t rows, lda, ldc, row_tile, col_block, ncb;
  const float *a;
  float *c;
  const OwbSgemmEpilogue *ep;
} Job;

static void
job_units (int64_t begin, int64_t end, gpointer data)
{
  const Job *j = data;
  for (int64_t u = begin; u < end; u++)
    {
      int64_t r0 = u / j->ncb * j->row_tile, n0 = u % j->ncb * j->col_block;
      OwbSgemmEpilogue ep = j->ep ? *j->ep : (OwbSgemmEpilogue){ 0 };
      if (ep.z)
        ep.z += r0 * ep.ldz;
      _owb_sgemm_packed_run (j->b, MIN (j->row_tile, j->rows - r0), j->a + r0 * j->lda, j->lda, n0,
                             n0 + j->col_block, j->c + r0 * j->ldc, j->ldc, &ep);
    }
}

void
_owb_sgemm_packed (OwbThreadPool *pool, const OwbSgemmPacked *b, int64_t rows, const float *a, int64_t lda, float *c,
                   int64_t ldc, const OwbSgemmEpilogue *ep)
{
  if (rows <= 0 || b->N <= 0)
    return;
  int threads = pool ? MAX (owb_thread_pool_get_n_threads (pool), 1) : 1;
  Job j = { .b = b, .rows = rows, .lda = lda, .ldc = ldc, .a = a, .c = c, .ep = ep };
  _owb_sgemm_partition (rows, b->N, b->K, threads, rows, &j.row_tile, &j.col_block);
  /* A B past the caches (a transformer's weights): the threads take columns, so that each reads its
   * share of B once instead of all of B for its rows. bert_base at 2 threads, both libraries in one
   * process, runs alternated: 1-2% faster; 24 chained 128 x 768 x 3072 MatMuls 2-3%. Four blocks
   * per thread where B is wide, so that a thread slowed by the machine is helped by the others
   * (the pool hands out blocks the owner has not started): bert_base and vit_b_32 another ~2%. */
  int64_t np = (b->N + NR - 1) / NR;
  if (threads > 1 && b->K * b->N * (int64_t) sizeof (float) > COLUMN_SPLIT_B_BYTES && np >= 4 * threads)
    {
      int64_t parts = np >= 16 * threads ? 4 * threads : threads;
      j.row_tile = rows;
      j.col_block = (np + parts - 1) / parts * NR;
    }
  j.ncb = (b->N + j.col_block - 1) / j.col_block;
  int64_t units = (rows + j.row_tile - 1) / j.row_tile * j.ncb;
  /* About 16 multiply-adds a nanosecond on one core once the product is this small (packing and
   * edge tiles weigh more than in a large one): a recurrent step's or a one-token decoder's
   * MatMul stays on the caller instead of waking a worker for a microsecond of work. */
  owb_parallel_for_work (pool, units, 1, rows * b->N * b->K / 16, job_units, &j);
}

/* TRUE when A is known at prepare to have at most OWB_CPU_GEMV_MAX_M rows. */
static gboolean
few_rows (const OwbValueType *const *input_types, gboolean gemm_rows)
{
  const OwbValueType *t = input_types ? input_types[0] : NULL;
  if (!t || t->rank < 1)
    return t && t->rank == 0;
  int64_t rows = 1;
  int last = gemm_rows ? 1 : t->rank - 1;
  for (int i = 0; i < MIN (last, t->rank); i++)
    {
      if (!owb_dim_is_known (t->dims[i]))
        return FALSE;
      rows *= t->dims[i].value;
    }
  return rows <= OWB_CPU_GEMV_MAX_M;
}

OwbSgemmPacked *
_owb_sgemm_pack_constant_b (const OwbNode *node, const OwbValueType *const *input_types, gboolean gemm_rows,
                            gboolean trans_a, gboolean trans_b, float alpha, OwbTensor **b_out)
{
  *b_out = NULL;
  const char *name = node->n_inputs > 1 ? node->inputs[1] : "";
  OwbTensor *b = name[0] && node->graph ? owb_graph_get_initializer (node->graph, name) : NULL;
  if (!b || b->dtype != OWB_TYPE_FLOAT || b->rank != 2 || b->nelems == 0 || trans_a
      || few_rows (input_types, gemm_rows))
    return NULL;
  int64_t K = trans_b ? b->dims[1] : b->dims[0], N = trans_b ? b->dims[0] : b->dims[1];
  const float *src = b->data;
  OwbSgemmPacked *pack;
  if (trans_b)
    pack = _owb_sgemm_pack_transposed (K, N, src, K, alpha);
  else if (alpha == 1.0f)
    pack = _owb_sgemm_pack (K, N, src, N);
  else
    {
      float *t = g_new (float, K * N);
      for (int64_t i = 0; i < K * N; i++)
        t[i] = alpha * src[i];
      pack = _owb_sgemm_pack (K, N, t, N);
      g_free (t);
    }
  *b_out = owb_tensor_ref (b);
  return pack;
}
