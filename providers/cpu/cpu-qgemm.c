/* cpu-qgemm.c: uint8 x int8 -> int32 GEMM against a constant packed B (quantized weights). B is
 * packed once into 16-column panels of 4-deep groups, the layout vpdpbusd multiplies against four
 * broadcast bytes of A and also the layout of an AMX B tile (16 groups x 16 columns); a register
 * tile of up to 6 rows x 64 columns (AVX-512 VNNI) or 32 x 32 in four AMX tiles accumulates in
 * int32, exactly (an AVX2 microkernel gives the same sums where VNNI is missing), and zero points
 * are applied afterwards through A's row sums and B's column sums:
 *   sum (a - za)(b - zb) = sum a b - zb rowsum(a) - za colsum(b) + K za zb. */
#include "cpu-qgemm-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#include "cpu-qrequant-avx512-private.h"
#include <sys/syscall.h>
#include <unistd.h>
#define HAVE_X86_VNNI 1
/* GCC 12's AVX-512 intrinsics pass _mm512_undefined_* () values that it then warns about */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define NR 16 /* columns of a panel: one zmm of int32 */
#define NP 4  /* panels side by side in a register tile */
#define MR 6  /* rows of a register tile: 24 accumulators, 4 B vectors and a broadcast */
/* Depth of a block: B's tile of KC x 64 bytes stays in L1 */
#define KC 512
/* On VNNI (without AMX), depth blocks up to this deep (B's tile, 288 KiB at most, then stays in
 * L2): a strip's accumulators stay in registers through the whole depth, where blocks of 512 stored
 * and reloaded them every 128 groups and ran the epilogue apart. qgemm-bench at 1 thread, uint8
 * out: 196x256x2304 0.515 -> 0.504 ms, 128x512x2048 0.598 -> 0.585, 49x512x4608 0.510 -> 0.499
 * (458-463 GOP/s, 97-98% of the vpdpbusd peak) */
#define KC_VNNI 4608
/* Bytes of A a block of rows keeps in L2 while B's tiles pass over it */
#define A_BLOCK_BYTES (512 * 1024)
/* The indirect runs' depth pieces (see _owb_qgemm_packed_run_segments): at most SEG_KC deep, at
 * most SEG_MAX_PIECES of them, accumulators for SEG_STRIPS strips between them. */
#define SEG_KC 640
/* On VNNI, products up to this deep run strip by strip, unblocked: a strip's accumulators then stay
 * in registers through all segments (tile_segs_vnni), which measured faster than the pieces at
 * depth 1152 (ResNet-18's 28x28 layers, 0.537 -> 0.529 ms a layer at 1 thread) */
#define SEG_BLOCK_ABOVE 1152
#define SEG_MAX_PIECES 256
#define SEG_STRIPS 16
/* The AVX2 int16 tile (tile_wide_avx2): depth blocks and pieces as deep as a 64-column tile of
 * int16 B (147 KiB) stays in a Zen 3's 512 KiB L2: the tile streams B from L2 at its pace (blocks
 * that keep B in L1, 192 deep, measured 3-8% slower on ResNet-18's 3x3 layers: the accumulators
 * and A's widening between blocks cost more than L1 saves); below AVX2_WIDE_MIN_K deep, B is not
 * widened (tile_split_avx2 runs on the bytes: at depth 16, MobileNetV3's 112x112x64 1x1, the
 * split tile took 0.48 ms and this one 0.37; at 27, its stem, 0.41 and 0.37) */
#define KC_WIDE 1152
#define SEG_KC_WIDE 1152
#define AVX2_WIDE_MIN_K 16
#define AVX2_WIDE_MIN_ROWS 4

struct _OwbQgemmPacked {
  int64_t K, N, K4, npanels;
  int8_t *data;    /* npanels x K4 x 64 bytes */
  int32_t *colsum; /* npanels x 16: sum over k of the packed (int8) B */
  int32_t *zb;     /* npanels x 16: zero points of the packed B */
  /* npanels x 16: sum over k of |b - zb|, so that a run bounds its sums by the weights it has
   * (max |a - za| times this, plus the bias) rather than by K 255 255: the 3x3 layers of ONNX
   * Runtime's QDQ ResNet-18 at depths 576 and 1152 then take the narrow epilogue */
  int64_t *absdev;
  gboolean has_zb;
  /* every two depths of a column (the pairs vpmaddubsw sums) lie within 128 of zero together on
   * each side (sum of the positive ones <= 128, of the negative ones >= -128), so that 255 times
   * them fits an int16: the AVX2 path then multiplies the bytes as they are (tile_safe_avx2) */
  gboolean pairs_safe;
  /* NULL, or where the AVX2 path will run on B that is not pairs_safe (and K is deep enough for
   * tile_wide_avx2): the same panels widened to int16 once, npanels x K4 x 128 bytes, each pair of
   * depths (2q, 2q + 1) as columns 0-7 then 8-15, a column's two depths side by side, so that
   * vpmaddwd against a broadcast pair of A gives 8 columns' sums with nothing to add up after */
  int16_t *data16;
};

static void *
aligned_alloc0 (size_t bytes)
{
  void *mem = NULL;
  bytes = MAX (bytes, 64);
  if (posix_memalign (&mem, 64, bytes) != 0)
    g_error ("out of memory packing a quantized matrix (%zu bytes)", bytes);
  memset (mem, 0, bytes);
  return mem;
}

OwbQgemmPacked *
_owb_qgemm_pack (int64_t K, int64_t N, const void *b, int64_t ldb, gboolean b_unsigned, const int32_t *zb,
                 int64_t nzb)
{
  if (K < 0 || N < 0 || (nzb != 0 && nzb != 1 && nzb != N))
    return NULL;
  int32_t lo = b_unsigned ? 0 : -128, hi = b_unsigned ? 255 : 127, shift = b_unsigned ? 128 : 0;
  for (int64_t i = 0; i < nzb; i++)
    if (zb[i] < lo || zb[i] > hi)
      return NULL;
  OwbQgemmPacked *p = g_new0 (OwbQgemmPacked, 1);
  p->K = K;
  p->N = N;
  /* whole 16-group blocks: an AMX tile load reads 16 groups of a panel at once */
  p->K4 = ((K + 3) / 4 + 15) / 16 * 16;
  p->npanels = (N + NR - 1) / NR;
  p->data = aligned_alloc0 ((size_t) (p->npanels * p->K4 * 64));
  p->colsum = aligned_alloc0 ((size_t) (p->npanels * NR) * sizeof (int32_t));
  p->zb = aligned_alloc0 ((size_t) (p->npanels * NR) * sizeof (int32_t));
  p->absdev = g_new0 (int64_t, p->npanels * NR);
  for (int64_t n = 0; n < N; n++)
    {
      p->zb[n] = (nzb ? zb[nzb == 1 ? 0 : n] : 0) - shift;
      p->has_zb = p->has_zb || p->zb[n] != 0;
    }
  const uint8_t *bu = b;
  const int8_t *bs = b;
  for (int64_t k = 0; k < K; k++)
    for (int64_t n = 0; n < N; n++)
      {
        int v = b_unsigned ? (int) bu[k * ldb + n] - 128 : bs[k * ldb + n];
        p->data[(n / NR) * p->K4 * 64 + (k / 4) * 64 + (n % NR) * 4 + k % 4] = (int8_t) v;
        p->colsum[n] += v;
      }
  /* sum |b - zb| a panel at a time over its groups of 4 depths, in int32 (K 255 fits below
   * 2^31 for any K that packs): contiguous bytes the compiler vectorizes, where a term in the loop
   * above added 8 ms to ResNet-18's session load. The groups' padding bytes are zeros, |0 - zb|
   * each, taken off at the end. */
  const int64_t ng = (K + 3) / 4, pad = ng * 4 - K;
  for (int64_t pnl = 0; pnl < p->npanels; pnl++)
    {
      const int8_t *d = p->data + pnl * p->K4 * 64;
      int32_t z[NR * 4], acc[NR * 4] = { 0 };
      for (int i = 0; i < NR * 4; i++)
        z[i] = p->zb[pnl * NR + i / 4];
      for (int64_t g = 0; g < ng; g++, d += 64)
        for (int i = 0; i < NR * 4; i++)
          acc[i] += ABS (d[i] - z[i]);
      for (int c = 0; c < NR; c++)
        p->absdev[pnl * NR + c] = (int64_t) acc[4 * c] + acc[4 * c + 1] + acc[4 * c + 2] + acc[4 * c + 3]
                                  - pad * (int64_t) ABS (z[4 * c]);
    }
  p->pairs_safe = TRUE;
  for (int64_t i = 0; i + 1 < p->npanels * p->K4 * 64 && p->pairs_safe; i += 2)
    {
      int x = p->data[i], y = p->data[i + 1];
      p->pairs_safe = MAX (x, 0) + MAX (y, 0) <= 128 && MIN (x, 0) + MIN (y, 0) >= -128;
    }
  if (!p->pairs_safe && K >= AVX2_WIDE_MIN_K && _owb_qgemm_uses_avx2 ())
    {
      /* a panel's K4 groups of 4 depths x 16 columns: 2 K4 pairs x 2 vectors x 8 columns x 2 */
      p->data16 = aligned_alloc0 ((size_t) (p->npanels * p->K4 * 64) * sizeof (int16_t));
      for (int64_t pn = 0; pn < p->npanels; pn++)
        for (int64_t k = 0; k < 4 * p->K4; k++)
          for (int j = 0; j < NR; j++)
            p->data16[pn * p->K4 * 64 + k / 2 * 32 + j / 8 * 16 + j % 8 * 2 + k % 2]
              = p->data[pn * p->K4 * 64 + k / 4 * 64 + j * 4 + k % 4];
    }
  return p;
}

void
_owb_qgemm_packed_free (OwbQgemmPacked *p)
{
  if (!p)
    return;
  free (p->data);
  free (p->colsum);
  free (p->zb);
  free (p->data16);
  g_free (p->absdev);
  g_free (p);
}

void
_owb_qgemm_packed_drop_wide (OwbQgemmPacked *p)
{
  free (p->data16);
  p->data16 = NULL;
}

int64_t
_owb_qgemm_packed_k (const OwbQgemmPacked *p)
{
  return p->K;
}

gboolean
_owb_qgemm_packed_pairs_safe (const OwbQgemmPacked *p)
{
  return p->pairs_safe;
}

int64_t
_owb_qgemm_packed_n (const OwbQgemmPacked *p)
{
  return p->N;
}

/* What a tile's epilogue needs besides its accumulators: the zero-point corrections of its columns
 * (colterm, from column n0 of the run) and rows. */
typedef struct {
  const OwbQgemmPacked *b;
  const OwbQgemmEpilogue *ep;
  const int32_t *colterm; /* K za zb[n] - za colsum[n], indexed n - n0 */
  int64_t n0, ldc;
  void *c;
  /* every requantized sum is below 2^24 in magnitude (K 255^2 + the largest bias): the float
   * requantization needs no check for wide sums */
  gboolean narrow;
  /* ep->table where epilogue_vnni_q8 looks the bytes up in registers (the CPU has VBMI); NULL
   * where a table is applied to C a strip late (LookupLag) */
  const uint8_t *lut;
  /* narrow, and every |scale| of the run's columns below 64: epilogue_vnni_q8's integer clamp */
  gboolean pack_clamps;
  /* every |scale| of the run's columns below 64, narrow or not: epilogue_avx2's integer clamp for
   * the vectors whose sums it finds below 2^24 */
  gboolean small_scales;
} Run;

/* Element size of the output type. */
static size_t
out_size (OwbQgemmOutput o)
{
  return o == OWB_QGEMM_OUT_UINT8 || o == OWB_QGEMM_OUT_INT8 ? 1 : 4;
}

/* The epilogue's table (a fused QLinearLookup), applied to C a strip late: a strip's bytes are
 * looked up after the next strip's epilogue, once its stores have left the store buffer (a vector
 * load over bytes still being stored waits for them: looking each strip up at once made a
 * 16-column stem convolution 1.45 times slower). */
typedef struct {
  int64_t r0, j0;
  int R, ncols; /* R 0: none pending */
} LookupLag;

static inline void
lag_flush (LookupLag *l, const Run *run)
{
  if (l->R)
    _owb_qgemm_lookup_rows (run->ep->table, (uint8_t *) run->c + l->r0 * run->ldc + l->j0, run->ldc, l->R, l->ncols);
  l->R = 0;
}

/* Rows [r0, r0 + R), columns [j0, j0 + ncols) of C are written: look up the previous strip's. */
static inline void
lag_push (LookupLag *l, const Run *run, int R, int64_t r0, int64_t j0, int ncols)
{
  if (!run->ep->table || run->lut)
    return;
  lag_flush (l, run);
  *l = (LookupLag) { r0, j0, R, ncols };
}

/* ---- portable microkernel ---- */

/* acc[r][j] (row stride NP * NR) = (accumulate ? acc[r][j] : 0) + A's rows r < R (depths [0, K))
 * against the panels' depth groups from b on (panels panel_stride bytes apart). */
static void
tile_portable (int R, int P, const uint8_t *a, int64_t lda, int64_t K, const int8_t *b, int64_t panel_stride,
               int32_t *acc, gboolean accumulate)
{
  int64_t K4 = (K + 3) / 4;
  for (int r = 0; r < R && !accumulate; r++)
    memset (acc + r * NP * NR, 0, (size_t) P * NR * sizeof (int32_t));
  for (int p = 0; p < P; p++)
    {
      const int8_t *bp = b + p * panel_stride;
      for (int r = 0; r < R; r++)
        {
          const uint8_t *ar = a + r * lda;
          int32_t *accr = acc + r * NP * NR + p * NR;
          for (int64_t q = 0; q < K4; q++)
            {
              int32_t a4[4] = { 0, 0, 0, 0 };
              for (int t = 0; t < 4 && 4 * q + t < K; t++)
                a4[t] = ar[4 * q + t];
              const int8_t *bq = bp + q * 64;
              for (int j = 0; j < NR; j++)
                accr[j] += a4[0] * bq[4 * j] + a4[1] * bq[4 * j + 1] + a4[2] * bq[4 * j + 2] + a4[3] * bq[4 * j + 3];
            }
        }
    }
}

/* Rows r < R, columns [j0, j0 + ncols) of C from a tile's accumulators; rs: A's row sums (when B
 * has zero points). Unsigned arithmetic: int32 results wrap as the spec allows. */
static void
epilogue_portable (const Run *run, int R, int64_t r0, int64_t j0, int ncols, const int32_t *acc, const int32_t *rs)
{
  const OwbQgemmEpilogue *ep = run->ep;
  const OwbQgemmPacked *b = run->b;
  double lo = ep->output == OWB_QGEMM_OUT_UINT8 ? 0 : -128, hi = ep->output == OWB_QGEMM_OUT_UINT8 ? 255 : 127;
  for (int r = 0; r < R; r++)
    {
      int64_t row = r0 + r;
      for (int j = 0; j < ncols; j++)
        {
          int64_t n = j0 + j;
          uint32_t v = (uint32_t) acc[r * NP * NR + j] + (uint32_t) run->colterm[n - run->n0];
          if (b->has_zb)
            v -= (uint32_t) b->zb[n] * (uint32_t) rs[r];
          if (ep->output != OWB_QGEMM_OUT_FLOAT && ep->bias)
            v += (uint32_t) ep->bias[n];
          int32_t x = (int32_t) v;
          switch (ep->output)
            {
            case OWB_QGEMM_OUT_INT32:
              ((int32_t *) run->c)[row * run->ldc + n] = x;
              break;
            case OWB_QGEMM_OUT_UINT8:
            case OWB_QGEMM_OUT_INT8:
              {
                double d = nearbyint ((double) x * (double) ep->scale[n]) + ep->y_zero_point;
                d = d < lo ? lo : (d > hi ? hi : d);
                if (ep->output == OWB_QGEMM_OUT_UINT8)
                  ((uint8_t *) run->c)[row * run->ldc + n] = (uint8_t) d;
                else
                  ((int8_t *) run->c)[row * run->ldc + n] = (int8_t) d;
              }
              break;
            case OWB_QGEMM_OUT_FLOAT:
              {
                float f = (float) x * ep->scale[n];
                if (ep->float_bias)
                  f += ep->float_bias[n];
                ((float *) run->c)[row * run->ldc + n] = f;
              }
              break;
            }
        }
    }
}

/* ---- AVX-512 VNNI microkernel ---- */

#ifdef HAVE_X86_VNNI
#define VNNI __attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq,avx512vnni,fma")))

/* One group of 4 depths (q) of an R x P tile: P vectors of B against each row's 4 bytes of A
 * broadcast. R and P are constants where it is inlined, so acc stays in registers. */
static inline __attribute__ ((always_inline)) VNNI void
group_vnni (const int R, const int P, __m512i acc[MR][NP], const uint8_t *ap, int64_t lda, const int8_t *const *bp,
            int64_t q)
{
  __m512i bv[NP];
#pragma GCC unroll 4
  for (int p = 0; p < P; p++)
    bv[p] = _mm512_load_si512 ((const void *) (bp[p] + q * 64));
#pragma GCC unroll 6
  for (int r = 0; r < R; r++)
    {
      int32_t a4;
      memcpy (&a4, ap + r * lda, 4);
      __m512i av = _mm512_set1_epi32 (a4);
#pragma GCC unroll 4
      for (int p = 0; p < P; p++)
        acc[r][p] = _mm512_dpbusd_epi32 (acc[r][p], av, bv[p]);
    }
}

/* Calls FN (R, P, ...) with the tile's rows (1 to MR) and panels (1 to NP) as constants: each
 * pair gets its own unrolled instance, its accumulators in registers. */
#define TILE_RP_DISPATCH(FN, R, P, ...)                                                                                \
  switch (R)                                                                                                           \
    {                                                                                                                  \
    case 1: TILE_P_DISPATCH (FN, 1, P, __VA_ARGS__); break;                                                            \
    case 2: TILE_P_DISPATCH (FN, 2, P, __VA_ARGS__); break;                                                            \
    case 3: TILE_P_DISPATCH (FN, 3, P, __VA_ARGS__); break;                                                            \
    case 4: TILE_P_DISPATCH (FN, 4, P, __VA_ARGS__); break;                                                            \
    case 5: TILE_P_DISPATCH (FN, 5, P, __VA_ARGS__); break;                                                            \
    default: TILE_P_DISPATCH (FN, 6, P, __VA_ARGS__); break;                                                           \
    }
#define TILE_P_DISPATCH(FN, R, P, ...)                                                                                 \
  switch (P)                                                                                                           \
    {                                                                                                                  \
    case 1: FN (R, 1, __VA_ARGS__); break;                                                                             \
    case 2: FN (R, 2, __VA_ARGS__); break;                                                                             \
    case 3: FN (R, 3, __VA_ARGS__); break;                                                                             \
    default: FN (R, 4, __VA_ARGS__); break;                                                                            \
    }

static inline __attribute__ ((always_inline)) VNNI void
tile_vnni_rp (const int R, const int P, const uint8_t *a, int64_t lda, int64_t K, const int8_t *b,
              int64_t panel_stride, int32_t *out, gboolean accumulate)
{
  __m512i acc[MR][NP];
#pragma GCC unroll 6
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int p = 0; p < P; p++)
      acc[r][p] = accumulate ? _mm512_load_si512 ((const void *) (out + r * NP * NR + p * NR)) : _mm512_setzero_si512 ();
  const int8_t *bp[NP];
#pragma GCC unroll 4
  for (int p = 0; p < NP; p++)
    bp[p] = b + (p < P ? p : 0) * panel_stride;
  const int64_t kq = K / 4;
  const uint8_t *ap = a;
  for (int64_t q = 0; q < kq; q++, ap += 4)
    group_vnni (R, P, acc, ap, lda, bp, q);
  if (K % 4)
    {
      /* the last group: B is zero past K, so A's bytes there may be anything: a row but the
       * tile's last reads them from the next row (lda >= K), the last only its own */
      __m512i bv[NP];
#pragma GCC unroll 4
      for (int p = 0; p < P; p++)
        bv[p] = _mm512_load_si512 ((const void *) (bp[p] + kq * 64));
#pragma GCC unroll 6
      for (int r = 0; r < R; r++)
        {
          uint32_t a4 = 0;
          if (r < R - 1)
            memcpy (&a4, ap + r * lda, 4);
          else
            for (int t = 0; t < K % 4; t++)
              a4 |= (uint32_t) ap[r * lda + t] << (8 * t);
          __m512i av = _mm512_set1_epi32 ((int32_t) a4);
#pragma GCC unroll 4
          for (int p = 0; p < P; p++)
            acc[r][p] = _mm512_dpbusd_epi32 (acc[r][p], av, bv[p]);
        }
    }
#pragma GCC unroll 6
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int p = 0; p < P; p++)
      _mm512_store_si512 ((void *) (out + r * NP * NR + p * NR), acc[r][p]);
}

static VNNI void
tile_vnni (int R, int P, const uint8_t *a, int64_t lda, int64_t K, const int8_t *b, int64_t ps, int32_t *out,
           gboolean acc)
{
  TILE_RP_DISPATCH (tile_vnni_rp, R, P, a, lda, K, b, ps, out, acc)
}

/* tile_vnni over a product whose depth runs through nseg segments (seg[s] + r0 seg_lda[s], seglen
 * bytes each, seglen a multiple of 4; B's groups of segment s follow segment s - 1's): the
 * accumulators stay in registers from one segment to the next, where a tile_vnni call per segment
 * stored and reloaded them (the indirect 3x3 convolutions at depth 576: three calls a strip). */
static inline __attribute__ ((always_inline)) VNNI void
tile_segs_vnni_rp (const int R, const int P, int nseg, const uint8_t *const *seg, const int64_t *seg_lda, int64_t r0,
                   int64_t seglen, const int8_t *b, int64_t panel_stride, int32_t *out)
{
  __m512i acc[MR][NP];
#pragma GCC unroll 6
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int p = 0; p < P; p++)
      acc[r][p] = _mm512_setzero_si512 ();
  const int64_t kq = seglen / 4;
  for (int sg = 0; sg < nseg; sg++)
    {
      const int64_t lda = seg_lda[sg];
      const uint8_t *ap = seg[sg] + r0 * lda;
      const int8_t *bp[NP];
#pragma GCC unroll 4
      for (int p = 0; p < NP; p++)
        bp[p] = b + (p < P ? p : 0) * panel_stride + sg * kq * 64;
      for (int64_t q = 0; q < kq; q++, ap += 4)
        group_vnni (R, P, acc, ap, lda, bp, q);
    }
#pragma GCC unroll 6
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int p = 0; p < P; p++)
      _mm512_store_si512 ((void *) (out + r * NP * NR + p * NR), acc[r][p]);
}

static VNNI void
tile_segs_vnni (int R, int P, int nseg, const uint8_t *const *seg, const int64_t *seg_lda, int64_t r0, int64_t seglen,
                const int8_t *b, int64_t ps, int32_t *out)
{
  TILE_RP_DISPATCH (tile_segs_vnni_rp, R, P, nseg, seg, seg_lda, r0, seglen, b, ps, out)
}

/* As epilogue_portable, 16 columns a vector. The products use the *_round_ intrinsics: GCC does
 * not contract those into FMAs, so each rounds as the portable code's separate mul and add. */
static VNNI void
epilogue_vnni (const Run *run, int R, int64_t r0, int64_t j0, int ncols, const int32_t *acc, const int32_t *rs)
{
  const OwbQgemmEpilogue *ep = run->ep;
  const OwbQgemmPacked *b = run->b;
  const OwbQgemmOutput o = ep->output;
  const int32_t *const bias = o != OWB_QGEMM_OUT_FLOAT ? ep->bias : NULL;
  const float *const scale = ep->scale, *const fbias = ep->float_bias;
  const gboolean has_zb = b->has_zb;
  const __m512d lo = _mm512_set1_pd (o == OWB_QGEMM_OUT_UINT8 ? 0 : -128);
  const __m512d hi = _mm512_set1_pd (o == OWB_QGEMM_OUT_UINT8 ? 255 : 127);
  const __m512d yzp = _mm512_set1_pd (ep->y_zero_point);
  const __m512 fyzp = _mm512_set1_ps ((float) ep->y_zero_point);
  const __m512 flo = _mm512_set1_ps (o == OWB_QGEMM_OUT_UINT8 ? 0 : -128);
  const __m512 fhi = _mm512_set1_ps (o == OWB_QGEMM_OUT_UINT8 ? 255 : 127);
  const int64_t ldc = run->ldc;
  for (int j = 0; j < ncols; j += NR)
    {
      int64_t n = j0 + j;
      int left = MIN (NR, ncols - j);
      __mmask16 m = (__mmask16) (left == NR ? 0xFFFF : (1u << left) - 1);
      __m512i ct = _mm512_maskz_loadu_epi32 (m, run->colterm + (n - run->n0));
      __m512i zb = has_zb ? _mm512_load_si512 ((const void *) (b->zb + n)) : _mm512_setzero_si512 ();
      __m512i bi = bias ? _mm512_maskz_loadu_epi32 (m, bias + n) : _mm512_setzero_si512 ();
      ct = _mm512_add_epi32 (ct, bi);
      __m512d s0 = _mm512_setzero_pd (), s1 = s0;
      __m512 sf = _mm512_setzero_ps (), fb = sf;
      if (o == OWB_QGEMM_OUT_UINT8 || o == OWB_QGEMM_OUT_INT8)
        {
          s0 = _mm512_cvtps_pd (_mm256_maskz_loadu_ps ((__mmask8) m, scale + n));
          s1 = _mm512_cvtps_pd (_mm256_maskz_loadu_ps ((__mmask8) (m >> 8), scale + n + 8));
          sf = _mm512_maskz_loadu_ps (m, scale + n);
        }
      else if (o == OWB_QGEMM_OUT_FLOAT)
        {
          sf = _mm512_maskz_loadu_ps (m, scale + n);
          if (fbias)
            fb = _mm512_maskz_loadu_ps (m, fbias + n);
        }
      for (int r = 0; r < R; r++)
        {
          int64_t row = r0 + r;
          __m512i x = _mm512_add_epi32 (_mm512_load_si512 ((const void *) (acc + r * NP * NR + j)), ct);
          if (has_zb)
            x = _mm512_sub_epi32 (x, _mm512_mullo_epi32 (zb, _mm512_set1_epi32 (rs[r])));
          switch (o)
            {
            case OWB_QGEMM_OUT_INT32:
              _mm512_mask_storeu_epi32 ((int32_t *) run->c + row * ldc + n, m, x);
              break;
            case OWB_QGEMM_OUT_UINT8:
            case OWB_QGEMM_OUT_INT8:
              {
                __mmask16 wide = 0;
                __m512i y = run->narrow ? owb_qrequant16_narrow_avx512 (x, sf, fyzp, flo, fhi)
                                        : owb_qrequant16_avx512 (x, sf, fyzp, flo, fhi, &wide);
                if (!(wide & m))
                  {
                    _mm_mask_storeu_epi8 ((uint8_t *) run->c + row * ldc + n, m, _mm512_cvtepi32_epi8 (y));
                    break;
                  }
              }
              {
                /* a sum past 2^24: the product in double */
                __m512i y = owb_qrequant16_double_avx512 (x, s0, s1, yzp, lo, hi);
                _mm_mask_storeu_epi8 ((uint8_t *) run->c + row * ldc + n, m, _mm512_cvtepi32_epi8 (y));
              }
              break;
            case OWB_QGEMM_OUT_FLOAT:
              {
                enum { rnd = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }; /* a constant expression: clang wants one */
                __m512 f = _mm512_mul_round_ps (_mm512_cvtepi32_ps (x), sf, rnd);
                if (fbias)
                  f = _mm512_add_round_ps (f, fb, rnd);
                _mm512_mask_storeu_ps ((float *) run->c + row * ldc + n, m, f);
              }
              break;
            }
        }
    }
}

/* epilogue_vnni for uint8/int8 outputs whose sums are all below 2^24 (run->narrow): a row's four
 * vectors of 16 columns go out together. Clamped above in float and below by the saturating packs
 * (an int32 past the range, INT_MIN included, saturates to the low end), which also bring the
 * bytes of four vectors into one in a single permute: 3 packs and a vpermd where vpmovdb takes 2
 * uops per vector and the float clamp 2. The small-K 1x1 convolutions spend most of their time
 * here. */
static inline __attribute__ ((always_inline)) VNNI void
epilogue_vnni_q8_p (const int P, const Run *run, int R, int64_t r0, int64_t j0, int ncols, const int32_t *acc,
                    const int32_t *rs)
{
  const OwbQgemmEpilogue *ep = run->ep;
  const OwbQgemmPacked *b = run->b;
  const gboolean u8 = ep->output == OWB_QGEMM_OUT_UINT8, has_zb = b->has_zb;
  const __m512 fyzp = _mm512_set1_ps ((float) ep->y_zero_point), fhi = _mm512_set1_ps (u8 ? 255 : 127);
  /* packs order each 128-bit lane as [v0 v1 v2 v3] (4 bytes each): dword 4k + i of the output is
   * dword 4i + k of the packed vector */
  const __m512i perm = _mm512_setr_epi32 (0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const __mmask64 m = ncols >= 64 ? ~(__mmask64) 0 : ((__mmask64) 1 << ncols) - 1;
  const uint8_t *lut = run->lut;
  __m512i t0 = _mm512_setzero_si512 (), t1 = t0, t2 = t0, t3 = t0;
  if (lut)
    {
      t0 = _mm512_loadu_si512 ((const void *) lut);
      t1 = _mm512_loadu_si512 ((const void *) (lut + 64));
      t2 = _mm512_loadu_si512 ((const void *) (lut + 128));
      t3 = _mm512_loadu_si512 ((const void *) (lut + 192));
    }
  __m512i ct[NP], zb[NP];
  __m512 sf[NP];
#pragma GCC unroll 4
  for (int p = 0; p < P; p++)
    {
      int64_t n = j0 + p * NR;
      int left = MIN (NR, ncols - p * NR);
      __mmask16 mp = (__mmask16) (left >= NR ? 0xFFFF : (1u << left) - 1);
      ct[p] = _mm512_maskz_loadu_epi32 (mp, run->colterm + (n - run->n0));
      if (ep->bias)
        ct[p] = _mm512_add_epi32 (ct[p], _mm512_maskz_loadu_epi32 (mp, ep->bias + n));
      zb[p] = has_zb ? _mm512_load_si512 ((const void *) (b->zb + n)) : _mm512_setzero_si512 ();
      sf[p] = _mm512_maskz_loadu_ps (mp, ep->scale + n);
    }
  /* Every |scale| below 64 (run->pack_clamps): a product of a sum below 2^24 stays below 2^30,
   * so it converts to int32 exactly, the zero point is added as an integer and the saturating
   * packs clamp both ends: one rounding conversion and vreduceps's fraction for the tie test, in
   * place of roundscale, the difference, the float zero point and the float clamp. */
  const gboolean pack_clamps = run->pack_clamps;
  enum { rnd = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC };
  const __m512i iyzp = _mm512_set1_epi32 (ep->y_zero_point);
  const __m512 half = _mm512_set1_ps (0.5f);
  __mmask16 tie = 0;
  for (int r = 0; r < R; r++)
    {
      __m512i y[NP], xs[NP];
      __m512 pf[NP];
#pragma GCC unroll 4
      for (int p = 0; p < NP; p++)
        {
          if (p >= P)
            {
              y[p] = _mm512_setzero_si512 ();
              continue;
            }
          __m512i x = _mm512_add_epi32 (_mm512_load_si512 ((const void *) (acc + r * NP * NR + p * NR)), ct[p]);
          if (has_zb)
            x = _mm512_sub_epi32 (x, _mm512_mullo_epi32 (zb[p], _mm512_set1_epi32 (rs[r])));
          if (pack_clamps)
            {
              xs[p] = x;
              pf[p] = _mm512_mul_round_ps (_mm512_cvtepi32_ps (x), sf[p], rnd);
              /* p - round (p), exact: +-0.5 where p lies on a half-integer */
              __m512 frac = _mm512_reduce_ps (pf[p], 0);
              tie |= _mm512_cmp_ps_mask (_mm512_abs_ps (frac), half, _CMP_EQ_OQ);
              y[p] = _mm512_add_epi32 (_mm512_cvt_roundps_epi32 (pf[p], rnd), iyzp);
              continue;
            }
          __m512 q = _mm512_min_ps (fhi, _mm512_add_ps (owb_qrequant16_round_avx512 (x, sf[p]), fyzp));
          y[p] = _mm512_cvtps_epi32 (q);
        }
      if (__builtin_expect (tie != 0, 0))
        {
          /* a product on a half-integer (rare): the row's vectors again with the residual check */
#pragma GCC unroll 4
          for (int p = 0; p < P; p++)
            y[p] = _mm512_add_epi32 (_mm512_cvtps_epi32 (owb_qrequant16_round_avx512 (xs[p], sf[p])), iyzp);
          tie = 0;
        }
      __m512i w0 = _mm512_packs_epi32 (y[0], y[1]), w1 = _mm512_packs_epi32 (y[2], y[3]);
      __m512i v = u8 ? _mm512_packus_epi16 (w0, w1) : _mm512_packs_epi16 (w0, w1);
      v = _mm512_permutexvar_epi32 (perm, v);
      if (lut)
        {
          /* the fused table: vpermt2b looks each byte up in a 128-byte half by its low 7 bits,
           * its top bit picks the half. As inline assembly: this function's target has no VBMI,
           * and run->lut is set only where the CPU has it. */
          __m512i lo = t0, hi = t2;
          __asm__ ("vpermt2b %2, %1, %0" : "+v"(lo) : "v"(v), "v"(t1));
          __asm__ ("vpermt2b %2, %1, %0" : "+v"(hi) : "v"(v), "v"(t3));
          v = _mm512_mask_blend_epi8 (_mm512_movepi8_mask (v), lo, hi);
        }
      _mm512_mask_storeu_epi8 ((uint8_t *) run->c + (r0 + r) * run->ldc + j0, m, v);
    }
}

static VNNI void
epilogue_vnni_q8 (const Run *run, int R, int64_t r0, int64_t j0, int ncols, const int32_t *acc, const int32_t *rs)
{
  switch ((ncols + NR - 1) / NR)
    {
    case 1: epilogue_vnni_q8_p (1, run, R, r0, j0, ncols, acc, rs); break;
    case 2: epilogue_vnni_q8_p (2, run, R, r0, j0, ncols, acc, rs); break;
    case 3: epilogue_vnni_q8_p (3, run, R, r0, j0, ncols, acc, rs); break;
    default: epilogue_vnni_q8_p (4, run, R, r0, j0, ncols, acc, rs); break;
    }
}

/* A strip's whole product (one depth block) and its narrow 8-bit epilogue in one function: the
 * accumulators go from the tile to the requantization without the round trip through the
 * region's buffer that the separate calls make (the small-K 1x1 convolutions, whose time is
 * mostly epilogue). */
static inline __attribute__ ((always_inline)) VNNI void
tile_q8_vnni_rp (const int R, const int P, const Run *run, const uint8_t *a, int64_t lda, int64_t K, const int8_t *b,
                 int64_t ps, int64_t r0, int64_t j0, int ncols, const int32_t *rs)
{
  int32_t acc[MR * NP * NR] __attribute__ ((aligned (64)));
  tile_vnni_rp (R, P, a, lda, K, b, ps, acc, FALSE);
  epilogue_vnni_q8_p (P, run, R, r0, j0, ncols, acc, rs);
}

static VNNI void
tile_q8_vnni (int R, int P, const Run *run, const uint8_t *a, int64_t lda, int64_t K, const int8_t *b, int64_t ps,
              int64_t r0, int64_t j0, int ncols, const int32_t *rs)
{
  TILE_RP_DISPATCH (tile_q8_vnni_rp, R, P, run, a, lda, K, b, ps, r0, j0, ncols, rs)
}

/* ---- AVX2 microkernel ----
 * For CPUs without AVX-512 VNNI. vpmaddubsw's saturating int16 pair sums would overflow on the
 * weights real exporters make (255 (b0 + b1) past 32767 for two large weights of one sign: every
 * layer of ONNX Runtime's QDQ ResNet-18, MobileNetV3 and EfficientNet-B1 has such pairs), so both
 * sides are widened to int16 and vpmaddwd sums each pair exactly into int32: 255 x 128 x 2 fits.
 * B is widened once, when it is packed (OwbQgemmPacked.data16, where the AVX2 path will run), as
 * pairs of depths of 8 columns a vector; a tile widens its rows of A into int16 pairs once. A step
 * broadcasts one row's pair of depths (vpbroadcastd) and multiplies it by two B vectors: 6 rows x
 * 16 columns take 12 accumulators, two B vectors, the broadcast and a product, 12 vpmaddwd and 12
 * vpaddd for 192 products with 8 loads, and the int32 lanes are the columns' sums, nothing to add
 * up a tile (B kept in its bytes and widened with vpmovsxbw each step, against A widened 4x
 * broadcast, took 28 vector uops and 16 loads for 192 products on 3 x 16 and ran 49x512x4608 at
 * 116 GOP/s; Zen 4 issues 2 vpmaddwd and about 3.2 vpmaddwd + vpaddd uops a cycle). Sums wrap
 * alike, so they equal vpdpbusd's. */
#define AVX2 __attribute__ ((target ("avx2")))
/* Depths of A a tile widens at once: MR rows x AVX2_KW int16, 3 KiB on the stack */
#define AVX2_KW 256

/* Rows [0, RN) of one panel: RN rows of A as int16 pairs (aw, astride uint32 apart), G groups of 4
 * depths of B's int16 panel bp, into out (row stride NP * NR), RN a constant so that the
 * accumulators stay in registers. */
static inline __attribute__ ((always_inline)) AVX2 void
panel_wide_avx2 (const int RN, const uint32_t *aw, int64_t astride, int64_t G, const int16_t *bp, int32_t *out,
                 gboolean accumulate)
{
  if (RN == MR)
    {
      /* in assembly: GCC, left to it, reloads B or accumulators it has no register for */
      const uint32_t *a0 = aw, *a3 = aw + 3 * astride;
      const int16_t *b = bp;
      int64_t n = G, s = astride * 4, acc = accumulate;
      __asm__ volatile (
#define WIDE_C(op)                                                  \
  op (0, 0) op (32, 1) op (256, 2) op (288, 3) op (512, 4) op (544, 5) op (768, 6) op (800, 7) op (1024, 8)         \
    op (1056, 9) op (1280, 10) op (1312, 11)
#define WIDE_LOAD(off, x) "vmovdqa " #off "(%[o]), %%ymm" #x "\n\t"
#define WIDE_ZERO(off, x) "vpxor %%xmm" #x ", %%xmm" #x ", %%xmm" #x "\n\t"
#define WIDE_STORE(off, x) "vmovdqa %%ymm" #x ", " #off "(%[o])\n\t"
        "test %[acc], %[acc]\n\t"
        "jz 2f\n\t" WIDE_C (WIDE_LOAD) "jmp 3f\n"
        "2:\n\t" WIDE_C (WIDE_ZERO) "3:\n\t"
        "test %[n], %[n]\n\t"
        "jz 4f\n"
        "1:\n\t"
#define WIDE_ROW(addr, x, y)                                                                                           \
  "vpbroadcastd " addr ", %%ymm14\n\t"                                                                                \
  "vpmaddwd %%ymm12, %%ymm14, %%ymm15\n\t"                                                                            \
  "vpaddd %%ymm15, %%ymm" #x ", %%ymm" #x "\n\t"                                                                      \
  "vpmaddwd %%ymm13, %%ymm14, %%ymm15\n\t"                                                                            \
  "vpaddd %%ymm15, %%ymm" #y ", %%ymm" #y "\n\t"
#define WIDE_PAIR(boff, aoff)                                                                                          \
  "vmovdqa " #boff "(%[b]), %%ymm12\n\t"                                                                              \
  "vmovdqa " #boff "+32(%[b]), %%ymm13\n\t"                                                                           \
  WIDE_ROW (#aoff "(%[a0])", 0, 1) WIDE_ROW (#aoff "(%[a0],%[s])", 2, 3) WIDE_ROW (#aoff "(%[a0],%[s],2)", 4, 5)      \
    WIDE_ROW (#aoff "(%[a3])", 6, 7) WIDE_ROW (#aoff "(%[a3],%[s])", 8, 9) WIDE_ROW (#aoff "(%[a3],%[s],2)", 10, 11)
        WIDE_PAIR (0, 0) WIDE_PAIR (64, 4)
        "add $128, %[b]\n\t"
        "add $8, %[a0]\n\t"
        "add $8, %[a3]\n\t"
        "dec %[n]\n\t"
        "jnz 1b\n"
        "4:\n\t" WIDE_C (WIDE_STORE)
#undef WIDE_PAIR
#undef WIDE_ROW
#undef WIDE_STORE
#undef WIDE_ZERO
#undef WIDE_LOAD
#undef WIDE_C
        : [a0] "+r"(a0), [a3] "+r"(a3), [b] "+r"(b), [n] "+r"(n)
        : [s] "r"(s), [o] "r"(out), [acc] "r"(acc)
        : "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
          "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
      return;
    }
  __m256i c[MR][2];
#pragma GCC unroll 6
  for (int r = 0; r < RN; r++)
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++)
      c[r][h] = accumulate ? _mm256_load_si256 ((const __m256i *) (out + r * NP * NR + 8 * h)) : _mm256_setzero_si256 ();
  for (int64_t q = 0; q < 2 * G; q++)
    {
      __m256i b0 = _mm256_load_si256 ((const __m256i *) (bp + q * 32));
      __m256i b1 = _mm256_load_si256 ((const __m256i *) (bp + q * 32 + 16));
#pragma GCC unroll 6
      for (int r = 0; r < RN; r++)
        {
          __m256i av = _mm256_set1_epi32 ((int32_t) aw[r * astride + q]);
          c[r][0] = _mm256_add_epi32 (c[r][0], _mm256_madd_epi16 (av, b0));
          c[r][1] = _mm256_add_epi32 (c[r][1], _mm256_madd_epi16 (av, b1));
        }
    }
#pragma GCC unroll 6
  for (int r = 0; r < RN; r++)
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++)
      _mm256_store_si256 ((__m256i *) (out + r * NP * NR + 8 * h), c[r][h]);
}

/* The int16 tile: b points into B's int16 panels (OwbQgemmPacked.data16), ps their stride in
 * int16 pairs of bytes: K4 x 128 bytes. */
static AVX2 void
tile_wide_avx2 (int R, int P, const uint8_t *a, int64_t lda, int64_t K, const int8_t *b, int64_t ps, int32_t *out,
                gboolean accumulate)
{
  uint32_t aw[MR * AVX2_KW / 2] __attribute__ ((aligned (32)));
  const int64_t astride = AVX2_KW / 2;
  /* (K == 0 still runs once: zero sums) */
  for (int64_t k0 = 0; k0 < MAX (K, 1); k0 += AVX2_KW)
    {
      int64_t kn = MIN (AVX2_KW, K - k0), G = (kn + 3) / 4;
      for (int r = 0; r < R; r++)
        {
          const uint8_t *ar = a + r * lda + k0;
          int16_t *w = (int16_t *) (aw + r * astride);
          int64_t d = 0;
          for (; d + 16 <= kn; d += 16)
            _mm256_store_si256 ((__m256i *) (w + d), _mm256_cvtepu8_epi16 (_mm_loadu_si128 ((const __m128i *) (ar + d))));
          /* the tail as the last 16 bytes, over some already widened (a stem's 27 or 147 took up to
           * 15 scalar steps a row); A's bytes past K are not read (B is zero there) */
          if (d < kn && kn >= 16)
            {
              _mm256_storeu_si256 ((__m256i *) (w + kn - 16),
                                   _mm256_cvtepu8_epi16 (_mm_loadu_si128 ((const __m128i *) (ar + kn - 16))));
              d = kn;
            }
          for (; d < 4 * G; d++)
            w[d] = d < kn ? ar[d] : 0;
        }
      const int16_t *bk = (const int16_t *) b + k0 / 4 * 64;
      gboolean acc_in = accumulate || k0 > 0;
      for (int p = 0; p < P; p++)
        {
          const int16_t *bp = bk + p * (ps / 2);
          int32_t *o = out + p * NR;
          switch (R)
            {
            case 1: panel_wide_avx2 (1, aw, astride, G, bp, o, acc_in); break;
            case 2: panel_wide_avx2 (2, aw, astride, G, bp, o, acc_in); break;
            case 3: panel_wide_avx2 (3, aw, astride, G, bp, o, acc_in); break;
            case 4: panel_wide_avx2 (4, aw, astride, G, bp, o, acc_in); break;
            case 5: panel_wide_avx2 (5, aw, astride, G, bp, o, acc_in); break;
            default: panel_wide_avx2 (6, aw, astride, G, bp, o, acc_in); break;
            }
        }
    }
}

AVX2 void
_owb_qgemm_wide_rows_avx2 (int R, const uint32_t *aw, int64_t astride, int64_t G, const int16_t *bp, int32_t *out)
{
  switch (R)
    {
    case 1: panel_wide_avx2 (1, aw, astride, G, bp, out, FALSE); break;
    case 2: panel_wide_avx2 (2, aw, astride, G, bp, out, FALSE); break;
    case 3: panel_wide_avx2 (3, aw, astride, G, bp, out, FALSE); break;
    case 4: panel_wide_avx2 (4, aw, astride, G, bp, out, FALSE); break;
    case 5: panel_wide_avx2 (5, aw, astride, G, bp, out, FALSE); break;
    default: panel_wide_avx2 (6, aw, astride, G, bp, out, FALSE); break;
    }
}

static inline __attribute__ ((always_inline)) AVX2 __m256i
dot4_split_avx2 (__m256i acc, __m256i a_lo, __m256i a_hi, __m256i b, __m256i ones)
{
  __m256i lo = _mm256_madd_epi16 (_mm256_maddubs_epi16 (a_lo, b), ones);
  __m256i hi = _mm256_madd_epi16 (_mm256_maddubs_epi16 (a_hi, b), ones);
  return _mm256_add_epi32 (acc, _mm256_add_epi32 (lo, hi));
}

/* Rows [r0, r0 + RN) of one panel, RN a constant so that the accumulators stay in registers, with
 * each A byte split into its low 7 bits and top bit (a = (a & 0x7F) + (a & 0x80)): |127 b0 + 127 b1|
 * <= 32512 and 128 b0 + 128 b1 lies in [-32768, 32512], both exact in vpmaddubsw's int16, and
 * vpmaddwd against ones widens them. Twice the arithmetic of tile_wide_avx2 a product, but nothing a tile
 * besides, on B's bytes: depths below 16, runs of a few rows, B without its int16 copy. */
static inline __attribute__ ((always_inline)) AVX2 void
panel_split_avx2 (const int RN, const gboolean SAFE, const uint8_t *a, int64_t lda, int64_t K, const int8_t *bp,
                  int32_t *out, gboolean accumulate)
{
  const __m256i lo7 = _mm256_set1_epi8 (0x7F), top = _mm256_set1_epi8 ((char) 0x80), ones = _mm256_set1_epi16 (1);
  const int64_t kq = K / 4, K4 = (K + 3) / 4;
  __m256i acc[3][2];
#pragma GCC unroll 3
  for (int r = 0; r < RN; r++)
    for (int h = 0; h < 2; h++)
      acc[r][h] = accumulate ? _mm256_load_si256 ((const __m256i *) (out + r * NP * NR + 8 * h)) : _mm256_setzero_si256 ();
  for (int64_t q = 0; q < K4; q++)
    {
      __m256i b0 = _mm256_load_si256 ((const __m256i *) (bp + q * 64));
      __m256i b1 = _mm256_load_si256 ((const __m256i *) (bp + q * 64 + 32));
#pragma GCC unroll 3
      for (int r = 0; r < RN; r++)
        {
          const uint8_t *ar = a + r * lda + 4 * q;
          uint32_t a4 = 0;
          if (q < kq)
            memcpy (&a4, ar, 4);
          else /* the last group: A's bytes past K are not read (B is zero there) */
            for (int t = 0; t < K % 4; t++)
              a4 |= (uint32_t) ar[t] << (8 * t);
          __m256i av = _mm256_set1_epi32 ((int32_t) a4);
          if (SAFE)
            {
              acc[r][0] = _mm256_add_epi32 (acc[r][0], _mm256_madd_epi16 (_mm256_maddubs_epi16 (av, b0), ones));
              acc[r][1] = _mm256_add_epi32 (acc[r][1], _mm256_madd_epi16 (_mm256_maddubs_epi16 (av, b1), ones));
              continue;
            }
          __m256i a_lo = _mm256_and_si256 (av, lo7), a_hi = _mm256_and_si256 (av, top);
          acc[r][0] = dot4_split_avx2 (acc[r][0], a_lo, a_hi, b0, ones);
          acc[r][1] = dot4_split_avx2 (acc[r][1], a_lo, a_hi, b1, ones);
        }
    }
#pragma GCC unroll 3
  for (int r = 0; r < RN; r++)
    for (int h = 0; h < 2; h++)
      _mm256_store_si256 ((__m256i *) (out + r * NP * NR + 8 * h), acc[r][h]);
}

static inline __attribute__ ((always_inline)) AVX2 void
tile_split_avx2_s (const gboolean SAFE, int R, int P, const uint8_t *a, int64_t lda, int64_t K, const int8_t *b,
                   int64_t ps, int32_t *out, gboolean accumulate)
{
  for (int p = 0; p < P; p++)
    for (int r0 = 0; r0 < R; r0 += 3)
      {
        const uint8_t *ar = a + r0 * lda;
        int32_t *o = out + r0 * NP * NR + p * NR;
        switch (MIN (3, R - r0))
          {
          case 1: panel_split_avx2 (1, SAFE, ar, lda, K, b + p * ps, o, accumulate); break;
          case 2: panel_split_avx2 (2, SAFE, ar, lda, K, b + p * ps, o, accumulate); break;
          default: panel_split_avx2 (3, SAFE, ar, lda, K, b + p * ps, o, accumulate); break;
          }
      }
}

static AVX2 void
tile_split_avx2 (int R, int P, const uint8_t *a, int64_t lda, int64_t K, const int8_t *b, int64_t ps, int32_t *out,
                 gboolean accumulate)
{
  tile_split_avx2_s (FALSE, R, P, a, lda, K, b, ps, out, accumulate);
}

/* B whose pairs cannot saturate vpmaddubsw's int16 (OwbQgemmPacked.pairs_safe: weights quantized
 * with a reduced range, 7 bits, as ONNX Runtime's reduce_range does for CPUs without VNNI): one
 * vpmaddubsw, vpmaddwd and add for 32 products, A and B as they are. */
static AVX2 void
tile_safe_avx2 (int R, int P, const uint8_t *a, int64_t lda, int64_t K, const int8_t *b, int64_t ps, int32_t *out,
                gboolean accumulate)
{
  tile_split_avx2_s (TRUE, R, P, a, lda, K, b, ps, out, accumulate);
}

/* epilogue_portable for uint8/int8 outputs, 8 columns a vector: the same wrapping int32 sums, the
 * product with the scale in double rounded half to even (as the reference and the portable
 * epilogue: the AVX2 path had spent 12 ns an output there, a 112x112x64 1x1 convolution 10 ms),
 * clamped; other outputs, and the last ncols % 8 columns, by epilogue_portable. */
static AVX2 void
epilogue_avx2 (const Run *run, int R, int64_t r0, int64_t j0, int ncols, const int32_t *acc, const int32_t *rs)
{
  const OwbQgemmEpilogue *ep = run->ep;
  const OwbQgemmPacked *b = run->b;
  if (ep->output != OWB_QGEMM_OUT_UINT8 && ep->output != OWB_QGEMM_OUT_INT8)
    {
      epilogue_portable (run, R, r0, j0, ncols, acc, rs);
      return;
    }
  enum { rnd = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC };
  const gboolean u8 = ep->output == OWB_QGEMM_OUT_UINT8;
  const __m256d yzp = _mm256_set1_pd (ep->y_zero_point);
  const __m256d lo = _mm256_set1_pd (u8 ? 0 : -128), hi = _mm256_set1_pd (u8 ? 255 : 127);
  /* every sum below 2^24 (run->narrow): the product in float, the double one only for a vector
   * with a product on a half-integer */
  const gboolean narrow = run->narrow;
  const __m256 flo = _mm256_set1_ps (u8 ? 0 : -128), fhi = _mm256_set1_ps (u8 ? 255 : 127);
  const __m256 fyzp = _mm256_set1_ps ((float) ep->y_zero_point), half = _mm256_set1_ps (0.5f);
  const __m256 absmask = _mm256_castsi256_ps (_mm256_set1_epi32 (0x7FFFFFFF));
  const int n8 = ncols / 8 * 8;
  int j = 0;
  if (run->small_scales)
    /* every rounded product fits int32 (sums below 2^24, scales below 64): converted with the
     * CPU's rounding (half to even), the zero point added in int32 and clamped by the saturating
     * packs, 16 columns a step, the tie test once for both halves (a quarter fewer operations an
     * output than the float clamp). Where sums may reach 2^24 (not narrow: deep products, large
     * biases) each vector's are tested, and the double product taken only for those that do
     * (ResNet-18's layers, all K 255^2 >= 2^24, went to double for every output) */
    for (const __m256i yz = _mm256_set1_epi32 (ep->y_zero_point); j + 16 <= ncols; j += 16)
      {
        int64_t n = j0 + j;
        __m256i ct0 = _mm256_loadu_si256 ((const __m256i *) (run->colterm + (n - run->n0)));
        __m256i ct1 = _mm256_loadu_si256 ((const __m256i *) (run->colterm + (n + 8 - run->n0)));
        if (ep->bias)
          {
            ct0 = _mm256_add_epi32 (ct0, _mm256_loadu_si256 ((const __m256i *) (ep->bias + n)));
            ct1 = _mm256_add_epi32 (ct1, _mm256_loadu_si256 ((const __m256i *) (ep->bias + n + 8)));
          }
        __m256i zb0 = _mm256_setzero_si256 (), zb1 = _mm256_setzero_si256 ();
        if (b->has_zb)
          {
            zb0 = _mm256_loadu_si256 ((const __m256i *) (b->zb + n));
            zb1 = _mm256_loadu_si256 ((const __m256i *) (b->zb + n + 8));
          }
        __m256 sf0 = _mm256_loadu_ps (ep->scale + n), sf1 = _mm256_loadu_ps (ep->scale + n + 8);
        for (int r = 0; r < R; r++)
          {
            __m256i x0 = _mm256_add_epi32 (_mm256_loadu_si256 ((const __m256i *) (acc + r * NP * NR + j)), ct0);
            __m256i x1 = _mm256_add_epi32 (_mm256_loadu_si256 ((const __m256i *) (acc + r * NP * NR + j + 8)), ct1);
            if (b->has_zb)
              {
                __m256i rsv = _mm256_set1_epi32 (rs[r]);
                x0 = _mm256_sub_epi32 (x0, _mm256_mullo_epi32 (zb0, rsv));
                x1 = _mm256_sub_epi32 (x1, _mm256_mullo_epi32 (zb1, rsv));
              }
            __m256 p0 = _mm256_mul_ps (_mm256_cvtepi32_ps (x0), sf0), p1 = _mm256_mul_ps (_mm256_cvtepi32_ps (x1), sf1);
            __m256i y0 = _mm256_cvtps_epi32 (p0), y1 = _mm256_cvtps_epi32 (p1);
            __m256 f0 = _mm256_and_ps (_mm256_sub_ps (_mm256_cvtepi32_ps (y0), p0), absmask);
            __m256 f1 = _mm256_and_ps (_mm256_sub_ps (_mm256_cvtepi32_ps (y1), p1), absmask);
            __m128i w0, w1;
            /* a sum of 2^24 or more (|INT32_MIN| too) has a bit in its magnitude's top byte */
            gboolean wide = !narrow && !_mm256_testz_si256 (_mm256_or_si256 (_mm256_abs_epi32 (x0), _mm256_abs_epi32 (x1)),
                                                            _mm256_set1_epi32 ((int) 0xFF000000u));
            if (__builtin_expect (!wide && !_mm256_movemask_ps (_mm256_or_ps (_mm256_cmp_ps (f0, half, _CMP_EQ_OQ),
                                                                               _mm256_cmp_ps (f1, half, _CMP_EQ_OQ))),
                                  1))
              {
                __m256i w = _mm256_permute4x64_epi64 (
                  _mm256_packs_epi32 (_mm256_add_epi32 (y0, yz), _mm256_add_epi32 (y1, yz)), 0xD8);
                w0 = _mm256_castsi256_si128 (w);
                w1 = _mm256_extracti128_si256 (w, 1);
              }
            else
              {
                /* a product on a half-integer, or a wide sum: both halves in double, as the reference */
                __m256d s[4] = { _mm256_cvtps_pd (_mm_loadu_ps (ep->scale + n)), _mm256_cvtps_pd (_mm_loadu_ps (ep->scale + n + 4)),
                                 _mm256_cvtps_pd (_mm_loadu_ps (ep->scale + n + 8)),
                                 _mm256_cvtps_pd (_mm_loadu_ps (ep->scale + n + 12)) };
                __m128i xs[4] = { _mm256_castsi256_si128 (x0), _mm256_extracti128_si256 (x0, 1), _mm256_castsi256_si128 (x1),
                                  _mm256_extracti128_si256 (x1, 1) };
                __m128i q[4];
                for (int h = 0; h < 4; h++)
                  q[h] = _mm256_cvtpd_epi32 (_mm256_min_pd (
                    hi, _mm256_max_pd (lo, _mm256_add_pd (_mm256_round_pd (_mm256_mul_pd (_mm256_cvtepi32_pd (xs[h]), s[h]), rnd),
                                                          yzp))));
                w0 = _mm_packs_epi32 (q[0], q[1]);
                w1 = _mm_packs_epi32 (q[2], q[3]);
              }
            _mm_storeu_si128 ((__m128i *) ((uint8_t *) run->c + (r0 + r) * run->ldc + n),
                              u8 ? _mm_packus_epi16 (w0, w1) : _mm_packs_epi16 (w0, w1));
          }
      }
  for (; j < n8; j += 8)
    {
      int64_t n = j0 + j;
      __m256i ct = _mm256_loadu_si256 ((const __m256i *) (run->colterm + (n - run->n0)));
      if (ep->bias)
        ct = _mm256_add_epi32 (ct, _mm256_loadu_si256 ((const __m256i *) (ep->bias + n)));
      __m256i zb = b->has_zb ? _mm256_loadu_si256 ((const __m256i *) (b->zb + n)) : _mm256_setzero_si256 ();
      __m256d s0 = _mm256_cvtps_pd (_mm_loadu_ps (ep->scale + n)), s1 = _mm256_cvtps_pd (_mm_loadu_ps (ep->scale + n + 4));
      __m256 sf = _mm256_loadu_ps (ep->scale + n);
      for (int r = 0; r < R; r++)
        {
          __m256i x = _mm256_add_epi32 (_mm256_loadu_si256 ((const __m256i *) (acc + r * NP * NR + j)), ct);
          if (b->has_zb)
            x = _mm256_sub_epi32 (x, _mm256_mullo_epi32 (zb, _mm256_set1_epi32 (rs[r])));
          __m128i w;
          if (narrow)
            {
              /* x is exact in float; the rounded product lands on the other side of a half-integer
               * than the exact one never, only on it (rounding is monotonic and the half-integers
               * below 2^23 are floats): where no lane does, float rounds alike */
              __m256 pf = _mm256_mul_ps (_mm256_cvtepi32_ps (x), sf);
              __m256 rf = _mm256_round_ps (pf, rnd);
              __m256 frac = _mm256_and_ps (_mm256_sub_ps (pf, rf), absmask);
              if (__builtin_expect (!_mm256_movemask_ps (_mm256_cmp_ps (frac, half, _CMP_EQ_OQ)), 1))
                {
                  __m256 q = _mm256_min_ps (fhi, _mm256_max_ps (flo, _mm256_add_ps (rf, fyzp)));
                  __m256i y = _mm256_cvtps_epi32 (q);
                  w = _mm_packs_epi32 (_mm256_castsi256_si128 (y), _mm256_extracti128_si256 (y, 1));
                  goto store;
                }
            }
          __m256d d0 = _mm256_mul_pd (_mm256_cvtepi32_pd (_mm256_castsi256_si128 (x)), s0);
          __m256d d1 = _mm256_mul_pd (_mm256_cvtepi32_pd (_mm256_extracti128_si256 (x, 1)), s1);
          d0 = _mm256_min_pd (hi, _mm256_max_pd (lo, _mm256_add_pd (_mm256_round_pd (d0, rnd), yzp)));
          d1 = _mm256_min_pd (hi, _mm256_max_pd (lo, _mm256_add_pd (_mm256_round_pd (d1, rnd), yzp)));
          /* in range already: the saturating packs only narrow */
          w = _mm_packs_epi32 (_mm256_cvtpd_epi32 (d0), _mm256_cvtpd_epi32 (d1));
        store:;
          __m128i v = u8 ? _mm_packus_epi16 (w, w) : _mm_packs_epi16 (w, w);
          _mm_storel_epi64 ((__m128i *) ((uint8_t *) run->c + (r0 + r) * run->ldc + n), v);
        }
    }
  if (n8 < ncols)
    epilogue_portable (run, R, r0, j0 + n8, ncols - n8, acc + n8, rs);
}
#endif

/* ---- regions of C ---- */

typedef void (*TileFunc) (int, int, const uint8_t *, int64_t, int64_t, const int8_t *, int64_t, int32_t *, gboolean);
typedef void (*EpilogueFunc) (const Run *, int, int64_t, int64_t, int, const int32_t *, const int32_t *);

/* What the regions of one run share. */
typedef struct {
  Run run;
  TileFunc tile;
  EpilogueFunc epilogue;
  gboolean fused_q8; /* one depth block on VNNI with the narrow 8-bit epilogue: tile_q8_vnni */
  const int8_t *bdata; /* the panels the tile reads: B's bytes, or its int16 copy (tile_wide_avx2) */
  int64_t gbytes;      /* bytes of a panel's group of 4 depths there: 64, or 128 */
  int64_t K, ps, kc, lda;
  int32_t *acc;      /* a block's rows x 64 accumulators, between depth blocks */
  const int32_t *rs; /* the row block's row sums, or NULL */
} Region;

/* Rows [rb, re) of a row block (ab: its first row, mb0: its index in C), columns [cb, ce), on the
 * VNNI or portable tiles. Strips of equal height, so that none is a short remainder. */
static void
strips_region (const Region *g, const uint8_t *ab, int64_t mb0, int64_t rb, int64_t re, int64_t cb, int64_t ce)
{
  int64_t mrows = re - rb, K = g->K, kc = g->kc, lda = g->lda;
  if (mrows <= 0 || ce <= cb)
    return;
  int64_t nstrips = (mrows + MR - 1) / MR, strip_rows = mrows / nstrips, taller = mrows % nstrips;
  LookupLag lag = { 0 };
  for (int64_t j0 = cb; j0 < ce; j0 += NP * NR)
    {
      int64_t w = MIN (NP * NR, ce - j0);
      int P = (int) ((w + NR - 1) / NR);
      const int8_t *bt = g->bdata + (j0 / NR) * g->ps;
      /* (K == 0 still runs once: C is the epilogue alone) */
      for (int64_t k0 = 0; k0 < MAX (K, 1); k0 += kc)
        {
          int64_t kn = MIN (kc, K - k0);
          gboolean last = k0 + kc >= K;
          for (int64_t si = 0; si < nstrips; si++)
            {
              int64_t r0 = rb + si * strip_rows + MIN (si, taller);
              int mr = (int) (strip_rows + (si < taller));
              int32_t *acc_s = g->acc + (r0 - rb) * NP * NR;
#ifdef HAVE_X86_VNNI
              if (g->fused_q8)
                {
                  tile_q8_vnni (mr, P, &g->run, ab + r0 * lda, lda, K, bt, g->ps, mb0 + r0, j0, (int) w,
                                g->rs ? g->rs + r0 : NULL);
                  lag_push (&lag, &g->run, mr, mb0 + r0, j0, (int) w);
                  continue;
                }
#endif
              g->tile (mr, P, ab + r0 * lda + k0, lda, kn, bt + k0 / 4 * g->gbytes, g->ps, acc_s, k0 > 0);
              if (last)
                {
                  g->epilogue (&g->run, mr, mb0 + r0, j0, (int) w, acc_s, g->rs ? g->rs + r0 : NULL);
                  lag_push (&lag, &g->run, mr, mb0 + r0, j0, (int) w);
                }
            }
        }
    }
  lag_flush (&lag, &g->run);
}

#ifdef HAVE_X86_VNNI
/* ---- AMX microkernel ----
 * 32 x 32 blocks of C in four 16 x 16 int32 tiles (tmm0-3), two 16-row tiles of A (tmm4-5, 64
 * depths each, read in place) and two of B (tmm6-7: 16 depth groups of a panel, which is how the
 * panels are packed). A pair of panels (K x 32 bytes) stays in L1 while the row block's strips of
 * 32 rows pass over it. Depths past the last multiple of 64 go through a zero-padded copy of A. */
#define AMX __attribute__ ((target ("amx-tile,amx-int8,avx512f,avx512vl,avx512bw,avx512dq,avx512vnni")))

typedef struct {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} TileConfig;

static AMX void
amx_region (const Region *g, const uint8_t *ab, int64_t mb0, int64_t m32, int64_t cb, int64_t ce)
{
  TileConfig cfg __attribute__ ((aligned (64)));
  memset (&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  for (int t = 0; t < 8; t++)
    {
      cfg.colsb[t] = 64;
      cfg.rows[t] = 16;
    }
  _tile_loadconfig (&cfg);
  int32_t accb[32 * 64] __attribute__ ((aligned (64)));
  uint8_t apad[32 * 64] __attribute__ ((aligned (64)));
  const int64_t K = g->K, kfull = K / 64 * 64, lda = g->lda, ps = g->ps;
  LookupLag lag = { 0 };
  for (int64_t j0 = cb; j0 < ce; j0 += 32)
    {
      const int8_t *b0 = g->run.b->data + (j0 / NR) * ps, *b1 = b0 + ps;
      for (int64_t r0 = 0; r0 < m32; r0 += 32)
        {
          const uint8_t *a0 = ab + r0 * lda, *a1 = a0 + 16 * lda;
          _tile_zero (0);
          _tile_zero (1);
          _tile_zero (2);
          _tile_zero (3);
          for (int64_t k0 = 0; k0 < kfull; k0 += 64)
            {
              _tile_loadd (4, a0 + k0, lda);
              _tile_loadd (5, a1 + k0, lda);
              _tile_loadd (6, b0 + k0 / 4 * 64, 64);
              _tile_loadd (7, b1 + k0 / 4 * 64, 64);
              _tile_dpbusd (0, 4, 6);
              _tile_dpbusd (1, 4, 7);
              _tile_dpbusd (2, 5, 6);
              _tile_dpbusd (3, 5, 7);
            }
          if (kfull < K)
            {
              memset (apad, 0, sizeof apad);
              for (int r = 0; r < 32; r++)
                memcpy (apad + r * 64, a0 + r * lda + kfull, (size_t) (K - kfull));
              _tile_loadd (4, apad, 64);
              _tile_loadd (5, apad + 16 * 64, 64);
              _tile_loadd (6, b0 + kfull / 4 * 64, 64);
              _tile_loadd (7, b1 + kfull / 4 * 64, 64);
              _tile_dpbusd (0, 4, 6);
              _tile_dpbusd (1, 4, 7);
              _tile_dpbusd (2, 5, 6);
              _tile_dpbusd (3, 5, 7);
            }
          _tile_stored (0, accb, NP * NR * 4);
          _tile_stored (1, accb + 16, NP * NR * 4);
          _tile_stored (2, accb + 16 * NP * NR, NP * NR * 4);
          _tile_stored (3, accb + 16 * NP * NR + 16, NP * NR * 4);
          g->epilogue (&g->run, 32, mb0 + r0, j0, 32, accb, g->rs ? g->rs + r0 : NULL);
          lag_push (&lag, &g->run, 32, mb0 + r0, j0, 32);
        }
    }
  lag_flush (&lag, &g->run);
  _tile_release ();
}
#endif

/* ---- dispatch ---- */

/* A switch that tests set with _owb_qgemm_force_* and that is otherwise read once from the
 * environment variable `name` (on when set and not "0"); *flag is -1 until then. */
static gboolean
env_switch (int *flag, const char *name)
{
  int f = g_atomic_int_get (flag);
  if (f < 0)
    {
      const char *env = g_getenv (name);
      f = env && env[0] && strcmp (env, "0") != 0;
      g_atomic_int_compare_and_exchange (flag, -1, f);
      f = g_atomic_int_get (flag);
    }
  return f;
}

typedef enum { CPU_VNNI, CPU_AVX2, CPU_AMX, CPU_VBMI, N_CPU_FEATURES } CpuFeature;

#ifdef HAVE_X86_VNNI
static gboolean
cpu_probe (CpuFeature feature)
{
  __builtin_cpu_init ();
  switch (feature)
    {
    case CPU_VNNI:
      return _owb_cpu_has_avx512 () && __builtin_cpu_supports ("avx512vnni");
    case CPU_AVX2:
      return __builtin_cpu_supports ("avx2");
    case CPU_VBMI:
      return _owb_cpu_has_avx512 () && __builtin_cpu_supports ("avx512vbmi");
    case CPU_AMX:
      {
#ifdef __linux__
        /* AMX-TILE and AMX-INT8 (CPUID 7.0 EDX bits 24, 25), and the kernel's leave to use the tile
         * data (asked once for the process: Linux enables it per process on request). */
        unsigned eax, ebx, ecx, edx;
        gboolean ok = __get_cpuid_count (7, 0, &eax, &ebx, &ecx, &edx) && (edx >> 24 & 1) && (edx >> 25 & 1);
        /* ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA */
        return ok && syscall (SYS_arch_prctl, 0x1023, 18) == 0;
#else
        return FALSE;
#endif
      }
    default:
      return FALSE;
    }
}
#endif

/* Whether the CPU has feature, probed once (two threads racing both probe, and agree). */
static gboolean
cpu_has (CpuFeature feature)
{
#ifdef HAVE_X86_VNNI
  static int have[N_CPU_FEATURES] = { -1, -1, -1, -1 }; /* -1: not yet probed */
  if (g_atomic_int_get (&have[feature]) < 0)
    g_atomic_int_set (&have[feature], cpu_probe (feature));
  return g_atomic_int_get (&have[feature]);
#else
  return FALSE;
#endif
}

static int force_portable = -1; /* -1: not yet read from the environment */

static int force_avx2 = -1; /* -1: not yet read from the environment */

static gboolean
avx2_forced (void)
{
  return env_switch (&force_avx2, "OWB_QGEMM_AVX2");
}

static int force_no_amx = -1; /* -1: not yet read from the environment */

gboolean
_owb_qgemm_uses_amx (void)
{
  return !env_switch (&force_no_amx, "OWB_QGEMM_NO_AMX") && _owb_qgemm_uses_vnni () && cpu_has (CPU_AMX);
}

void
_owb_qgemm_force_no_amx (gboolean force)
{
  g_atomic_int_set (&force_no_amx, force ? 1 : 0);
}

gboolean
_owb_qgemm_uses_vnni (void)
{
  return !env_switch (&force_portable, "OWB_QGEMM_PORTABLE") && !avx2_forced () && cpu_has (CPU_VNNI);
}

void
_owb_qgemm_force_portable (gboolean force)
{
  g_atomic_int_set (&force_portable, force ? 1 : 0);
}

gboolean
_owb_qgemm_uses_avx2 (void)
{
  gboolean vnni = _owb_qgemm_uses_vnni (); /* also reads the environment */
  return !g_atomic_int_get (&force_portable) && !vnni && cpu_has (CPU_AVX2);
}

void
_owb_qgemm_force_avx2 (gboolean force)
{
  g_atomic_int_set (&force_avx2, force ? 1 : 0);
}

#ifdef HAVE_X86_VNNI
#define VBMI __attribute__ ((target ("avx512f,avx512bw,avx512vbmi")))
/* 64 bytes a step: two vpermi2b look each byte up in the table's halves (its low 7 bits), the
 * byte's top bit picks the half. */
static inline __attribute__ ((always_inline)) VBMI __m512i
lookup64_vbmi (__m512i v, __m512i t0, __m512i t1, __m512i t2, __m512i t3)
{
  __m512i lo = _mm512_permutex2var_epi8 (t0, v, t1), hi = _mm512_permutex2var_epi8 (t2, v, t3);
  return _mm512_mask_blend_epi8 (_mm512_movepi8_mask (v), lo, hi);
}

static VBMI void
lookup_rows_vbmi (const uint8_t *table, uint8_t *c, int64_t ldc, int64_t rows, int64_t cols)
{
  __m512i t0 = _mm512_loadu_si512 ((const void *) table), t1 = _mm512_loadu_si512 ((const void *) (table + 64));
  __m512i t2 = _mm512_loadu_si512 ((const void *) (table + 128)), t3 = _mm512_loadu_si512 ((const void *) (table + 192));
  if (ldc == cols)
    {
      /* contiguous rows (a stem's 16 channels): one run, whole vectors; masked loads and stores
       * of a few bytes a row cost Zen 4 more than the lookups */
      cols *= rows;
      rows = 1;
    }
  for (int64_t r = 0; r < rows; r++)
    {
      uint8_t *p = c + r * ldc;
      int64_t i = 0;
      for (; i + 64 <= cols; i += 64)
        _mm512_storeu_si512 ((void *) (p + i),
                             lookup64_vbmi (_mm512_loadu_si512 ((const void *) (p + i)), t0, t1, t2, t3));
      if (i < cols)
        {
          __mmask64 m = ((__mmask64) 1 << (cols - i)) - 1;
          __m512i v = lookup64_vbmi (_mm512_maskz_loadu_epi8 (m, p + i), t0, t1, t2, t3);
          _mm512_mask_storeu_epi8 (p + i, m, v);
        }
    }
}
#endif

#ifdef HAVE_X86_VNNI
/* 32 bytes a step without VBMI: sixteen vpshufb, one per 16-byte slice of the table, each on the
 * bytes' low nibbles, and the slice each byte wants picked by its high nibble in a tree of 15
 * vpblendvb (bits 4, 5, 6 and 7 of the byte moved to its sign by vpsllw): 36 vector operations for
 * 32 bytes, where each slice on the bytes less 16 i saturated by 0x70 (only the slice's own bytes
 * keeping bit 7 clear) took 64, and a byte at a time two loads and a store (6.5% of MobileNetV3's
 * INT8 time on AVX2). */
static AVX2 void
lookup_rows_avx2 (const uint8_t *table, uint8_t *c, int64_t ldc, int64_t rows, int64_t cols)
{
  __m256i t[16];
  for (int i = 0; i < 16; i++)
    t[i] = _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) (table + 16 * i)));
  const __m256i low = _mm256_set1_epi8 (0x0F);
  if (ldc == cols)
    {
      cols *= rows;
      rows = 1;
    }
  for (int64_t r = 0; r < rows; r++)
    {
      uint8_t *p = c + r * ldc;
      int64_t i = 0;
      for (; i + 32 <= cols; i += 32)
        {
          __m256i x = _mm256_loadu_si256 ((const __m256i *) (p + i)), l = _mm256_and_si256 (x, low);
          __m256i b4 = _mm256_slli_epi16 (x, 3), b5 = _mm256_slli_epi16 (x, 2), b6 = _mm256_add_epi8 (x, x);
          __m256i v[4];
#pragma GCC unroll 4
          for (int q = 0; q < 4; q++)
            {
              /* slices 4q .. 4q + 3: bit 4 picks within a pair, bit 5 between the pairs */
              __m256i u0 = _mm256_blendv_epi8 (_mm256_shuffle_epi8 (t[4 * q], l), _mm256_shuffle_epi8 (t[4 * q + 1], l), b4);
              __m256i u1
                = _mm256_blendv_epi8 (_mm256_shuffle_epi8 (t[4 * q + 2], l), _mm256_shuffle_epi8 (t[4 * q + 3], l), b4);
              v[q] = _mm256_blendv_epi8 (u0, u1, b5);
            }
          __m256i w0 = _mm256_blendv_epi8 (v[0], v[1], b6), w1 = _mm256_blendv_epi8 (v[2], v[3], b6);
          _mm256_storeu_si256 ((__m256i *) (p + i), _mm256_blendv_epi8 (w0, w1, x));
        }
      for (; i < cols; i++)
        p[i] = table[p[i]];
    }
}
#endif

void
_owb_qgemm_lookup_rows (const uint8_t *table, uint8_t *c, int64_t ldc, int64_t rows, int64_t cols)
{
#ifdef HAVE_X86_VNNI
  if (_owb_qgemm_uses_vnni () && cpu_has (CPU_VBMI))
    {
      lookup_rows_vbmi (table, c, ldc, rows, cols);
      return;
    }
  if (!g_atomic_int_get (&force_portable) && cpu_has (CPU_AVX2))
    {
      lookup_rows_avx2 (table, c, ldc, rows, cols);
      return;
    }
#endif
  for (int64_t r = 0; r < rows; r++)
    for (int64_t i = 0; i < cols; i++)
      c[r * ldc + i] = table[c[r * ldc + i]];
}

/* The microkernel, the epilogue and the columns' zero-point terms of a run over columns [n0, n1)
 * (colterm_stack when they fit, else allocated). */
static void
run_choose (const OwbQgemmPacked *b, int64_t rows, int32_t za, int64_t n0, int64_t n1, void *c, int64_t ldc,
            const OwbQgemmEpilogue *ep, int32_t *colterm_stack, TileFunc *tile_out, EpilogueFunc *epilogue_out,
            Run *run_out, const int8_t **bdata_out, int64_t *gbytes_out)
{
  void (*tile) (int, int, const uint8_t *, int64_t, int64_t, const int8_t *, int64_t, int32_t *, gboolean)
    = tile_portable;
  void (*epilogue) (const Run *, int, int64_t, int64_t, int, const int32_t *, const int32_t *) = epilogue_portable;
#ifdef HAVE_X86_VNNI
  if (_owb_qgemm_uses_vnni ())
    {
      tile = tile_vnni;
      epilogue = epilogue_vnni;
    }
  else if (_owb_qgemm_uses_avx2 ())
    {
      /* B without its int16 copy (not deep enough, or packed before AVX2 was forced) runs on the
       * split tile, exact on any bytes; so do runs of a few rows, where reading B is the cost and
       * its int16 copy twice the bytes (MobileNetV3's 1280x1000 classifier, one row: 0.110 ms on
       * the bytes, 0.171 on int16) */
      tile = b->pairs_safe                                  ? tile_safe_avx2
             : b->data16 && rows >= AVX2_WIDE_MIN_ROWS ? tile_wide_avx2
                                                        : tile_split_avx2;
      epilogue = epilogue_avx2;
    }
#endif
  *bdata_out = b->data;
  *gbytes_out = 64;
#ifdef HAVE_X86_VNNI
  if (tile == tile_wide_avx2)
    {
      *bdata_out = (const int8_t *) b->data16;
      *gbytes_out = 128;
    }
#endif
  const int64_t K = b->K;
  /* the columns' zero-point terms, once per run: K za zb[n] - za colsum[n] */
  int64_t ncols = n1 - n0;
  int32_t *colterm = ncols <= 512 ? colterm_stack : g_new (int32_t, ncols);
  for (int64_t n = n0; n < n1; n++)
    colterm[n - n0] = (int32_t) ((uint32_t) K * (uint32_t) za * (uint32_t) b->zb[n]
                                 - (uint32_t) za * (uint32_t) b->colsum[n]);
  Run run = { .b = b, .ep = ep, .colterm = colterm, .n0 = n0, .ldc = ldc, .c = c };
  if (ep->output == OWB_QGEMM_OUT_UINT8 || ep->output == OWB_QGEMM_OUT_INT8)
    {
      /* |sum (a - za)(b - zb)| <= max |a - za| sum |b - zb| (a in [0, 255]), plus |bias| */
      int64_t amax = MAX (ABS ((int64_t) za), ABS (255 - (int64_t) za)), bound = 0;
      for (int64_t n = n0; n < n1 && bound < (1 << 24); n++)
        bound = MAX (bound, amax * b->absdev[n] + (ep->bias ? ABS ((int64_t) ep->bias[n]) : 0));
      run.narrow = bound < (1 << 24);
      run.small_scales = TRUE;
      for (int64_t n = n0; n < n1 && run.small_scales; n++)
        run.small_scales = fabsf (ep->scale[n]) < 64.0f;
      run.pack_clamps = run.narrow && run.small_scales;
#ifdef HAVE_X86_VNNI
      if (run.narrow && epilogue == epilogue_vnni)
        epilogue = epilogue_vnni_q8;
      if (epilogue == epilogue_vnni_q8 && ep->table && cpu_has (CPU_VBMI))
        run.lut = ep->table;
#endif
    }
  *tile_out = tile;
  *epilogue_out = epilogue;
  *run_out = run;
}

/* What both entry points below set up before their tiles: run_choose's choices, and A's row sums
 * when B has zero points (in rs_stack when they fit). Set up by run_setup, released by
 * run_setup_done; not to be copied, since run.colterm may point into it. */
typedef struct {
  TileFunc tile;
  EpilogueFunc epilogue;
  Run run;
  const int8_t *bdata; /* Region.bdata, .gbytes */
  int64_t gbytes;
  int32_t *rs; /* NULL unless B has zero points */
  int32_t colterm_stack[512];
  int32_t rs_stack[256];
} Setup;

/* Row sums of A over all depth, for B's zero points: row r's depth runs through the nseg segments
 * seg[s] + r * seg_lda[s], seglen bytes each (a plain A is one segment). */
static void
a_row_sums (int64_t rows, int nseg, const uint8_t *const *seg, const int64_t *seg_lda, int64_t seglen, int32_t *rs)
{
  for (int64_t r = 0; r < rows; r++)
    {
      uint32_t sum = 0;
      for (int s = 0; s < nseg; s++)
        for (int64_t k = 0; k < seglen; k++)
          sum += seg[s][r * seg_lda[s] + k];
      rs[r] = (int32_t) sum;
    }
}

/* FALSE, with nothing set up, when the run has no rows or no columns (*n1 clamped to B's N);
 * rs_rows is how many row sums the caller needs at most. */
static gboolean
run_setup (Setup *st, const OwbQgemmPacked *b, int64_t rows, int64_t rs_rows, int32_t za, int64_t n0, int64_t *n1,
           void *c, int64_t ldc, const OwbQgemmEpilogue *ep)
{
  *n1 = MIN (*n1, b->N);
  if (rows <= 0 || *n1 <= n0)
    return FALSE;
  run_choose (b, rows, za, n0, *n1, c, ldc, ep, st->colterm_stack, &st->tile, &st->epilogue, &st->run, &st->bdata,
              &st->gbytes);
  st->rs = !b->has_zb ? NULL : rs_rows <= 256 ? st->rs_stack : g_new (int32_t, rs_rows);
  return TRUE;
}

static void
run_setup_done (Setup *st)
{
  if (st->run.colterm != st->colterm_stack)
    g_free ((int32_t *) st->run.colterm);
  if (st->rs != st->rs_stack)
    g_free (st->rs);
}


void
_owb_qgemm_packed_run (const OwbQgemmPacked *b, int64_t rows, const uint8_t *a, int64_t lda, int32_t za, int64_t n0,
                       int64_t n1, void *c, int64_t ldc, const OwbQgemmEpilogue *ep)
{
  g_return_if_fail (n0 % NR == 0 && ep);
  const int64_t K = b->K;
  /* Rows in blocks whose A stays in L2; in a block, each 64-column tile of B stays in L1 (KC x 64
   * bytes at most: deeper products run in depth blocks, the tile's accumulators kept in `acc`
   * between them) while every strip of the block's rows passes over it. A strip reads a byte of A
   * per vpdpbusd but 64 / rows bytes of B: B's tile is what must stay close. With AMX, the block's
   * whole 32 x 32 blocks run on tiles and the edges on the vector kernels. */
  int64_t mc = MAX (MR, A_BLOCK_BYTES / MAX (b->K4 * 4, 1) / 32 * 32);
  mc = MIN (mc, rows);
  Setup st;
  if (!run_setup (&st, b, rows, mc, za, n0, &n1, c, ldc, ep))
    return;
  const int64_t ps = b->K4 * st.gbytes;
  int64_t kcmax = st.gbytes == 64 ? KC : KC_WIDE;
#ifdef HAVE_X86_VNNI
  if (st.tile == tile_vnni && !_owb_qgemm_uses_amx ())
    kcmax = KC_VNNI;
#endif
  int64_t nkb = MAX (1, (K + kcmax - 1) / kcmax), kc = MAX (4, ((K + nkb - 1) / nkb + 3) / 4 * 4);
  int32_t *acc = NULL;
  if (posix_memalign ((void **) &acc, 64, (size_t) (mc * NP * NR) * sizeof (int32_t)) != 0)
    g_error ("out of memory in the integer GEMM");
  Region g = { .run = st.run, .tile = st.tile, .epilogue = st.epilogue, .bdata = st.bdata, .gbytes = st.gbytes,
               .K = K, .ps = ps, .kc = kc, .lda = lda, .acc = acc, .rs = st.rs };
  gboolean amx = FALSE;
#ifdef HAVE_X86_VNNI
  amx = _owb_qgemm_uses_amx ();
  g.fused_q8 = st.epilogue == epilogue_vnni_q8 && K > 0 && kc >= K;
#endif
  for (int64_t mb0 = 0; mb0 < rows; mb0 += mc)
    {
      int64_t mrows = MIN (mc, rows - mb0);
      const uint8_t *ab = a + mb0 * lda;
      if (st.rs)
        a_row_sums (mrows, 1, &ab, &lda, K, st.rs);
      int64_t m32 = amx ? mrows / 32 * 32 : 0, c32 = amx && K > 0 ? (n1 - n0) / 32 * 32 : 0;
      if (m32 == 0 || c32 == 0)
        m32 = c32 = 0;
#ifdef HAVE_X86_VNNI
      if (m32)
        amx_region (&g, ab, mb0, m32, n0, n0 + c32);
#endif
      /* the edges: columns right of the AMX blocks, then rows below them */
      strips_region (&g, ab, mb0, 0, m32, n0 + c32, n1);
      strips_region (&g, ab, mb0, m32, mrows, n0, n1);
    }
  free (acc);
  run_setup_done (&st);
}

void
_owb_qgemm_packed_run_segments (const OwbQgemmPacked *b, int64_t rows, int nseg, const uint8_t *const *seg,
                                const int64_t *seg_lda, int64_t seglen, int32_t za, int64_t n0, int64_t n1, void *c,
                                int64_t ldc, const OwbQgemmEpilogue *ep)
{
  g_return_if_fail (n0 % NR == 0 && ep && seglen % 4 == 0 && nseg * seglen == b->K);
  Setup st;
  if (!run_setup (&st, b, rows, rows, za, n0, &n1, c, ldc, ep))
    return;
  const TileFunc tile = st.tile;
  const EpilogueFunc epilogue = st.epilogue;
  const Run *run = &st.run;
  int32_t *rs = st.rs;
  const int64_t gbytes = st.gbytes, ps = b->K4 * gbytes, seg_kc = gbytes == 64 ? SEG_KC : SEG_KC_WIDE;
  if (rs)
    a_row_sums (rows, nseg, seg, seg_lda, seglen, rs);
  /* Deeper than seg_kc (on VNNI, SEG_BLOCK_ABOVE), depth in pieces of at most seg_kc, each within
   * one segment: while strip after strip reads a piece, its part of B's 64-column tile stays in
   * L1, where a whole tile of a deep product (K 2304: 144 KiB) would not. The strips' accumulators
   * wait between pieces in `acc`, SEG_STRIPS strips at a time. A product of one piece runs strip by
   * strip as before. */
  gboolean uses_segs_vnni = FALSE;
#ifdef HAVE_X86_VNNI
  uses_segs_vnni = tile == tile_vnni;
#endif
  int64_t npieces = 0;
  int64_t piece_seg[SEG_MAX_PIECES], piece_off[SEG_MAX_PIECES], piece_len[SEG_MAX_PIECES];
  int64_t nsplit = (seglen + seg_kc - 1) / seg_kc, plen = ((seglen + MAX (nsplit, 1) - 1) / MAX (nsplit, 1) + 3) / 4 * 4;
  gboolean blocked = b->K > (uses_segs_vnni ? SEG_BLOCK_ABOVE : seg_kc) && (int64_t) nseg * nsplit <= SEG_MAX_PIECES;
  if (blocked)
    for (int s = 0; s < nseg; s++)
      for (int64_t off = 0; off < seglen; off += plen, npieces++)
        {
          piece_seg[npieces] = s;
          piece_off[npieces] = off;
          piece_len[npieces] = MIN (plen, seglen - off);
        }
  int32_t acc_one[MR * NP * NR] __attribute__ ((aligned (64)));
  int32_t *acc = acc_one;
  if (blocked && posix_memalign ((void **) &acc, 64, (size_t) (SEG_STRIPS * MR * NP * NR) * sizeof (int32_t)) != 0)
    g_error ("out of memory in the integer GEMM");
  int64_t nstrips = (rows + MR - 1) / MR, strip_rows = rows / nstrips, taller = rows % nstrips;
  LookupLag lag = { 0 };
  for (int64_t j0 = n0; j0 < n1; j0 += NP * NR)
    {
      int64_t w = MIN (NP * NR, n1 - j0);
      int P = (int) ((w + NR - 1) / NR);
      const int8_t *bt = st.bdata + (j0 / NR) * ps;
      if (!blocked)
        {
          for (int64_t si = 0; si < nstrips; si++)
            {
              int64_t r0 = si * strip_rows + MIN (si, taller);
              int mr = (int) (strip_rows + (si < taller));
#ifdef HAVE_X86_VNNI
              if (uses_segs_vnni)
                tile_segs_vnni (mr, P, nseg, seg, seg_lda, r0, seglen, bt, ps, acc);
              else
#endif
                for (int s = 0; s < nseg; s++)
                  tile (mr, P, seg[s] + r0 * seg_lda[s], seg_lda[s], seglen, bt + s * seglen / 4 * gbytes, ps, acc,
                        s > 0);
              epilogue (run, mr, r0, j0, (int) w, acc, rs ? rs + r0 : NULL);
              lag_push (&lag, run, mr, r0, j0, (int) w);
            }
          continue;
        }
      for (int64_t sg = 0; sg < nstrips; sg += SEG_STRIPS)
        {
          int64_t sn = MIN (SEG_STRIPS, nstrips - sg);
          for (int64_t pc = 0; pc < npieces; pc++)
            {
              int s = (int) piece_seg[pc];
              int64_t off = piece_off[pc];
              const int8_t *bp = bt + (s * seglen + off) / 4 * gbytes;
              for (int64_t si = sg; si < sg + sn; si++)
                {
                  int64_t r0 = si * strip_rows + MIN (si, taller);
                  int mr = (int) (strip_rows + (si < taller));
                  tile (mr, P, seg[s] + r0 * seg_lda[s] + off, seg_lda[s], piece_len[pc], bp, ps,
                        acc + (si - sg) * MR * NP * NR, pc > 0);
                }
            }
          for (int64_t si = sg; si < sg + sn; si++)
            {
              int64_t r0 = si * strip_rows + MIN (si, taller);
              int mr = (int) (strip_rows + (si < taller));
              epilogue (run, mr, r0, j0, (int) w, acc + (si - sg) * MR * NP * NR, rs ? rs + r0 : NULL);
              lag_push (&lag, run, mr, r0, j0, (int) w);
            }
        }
    }
  lag_flush (&lag, run);
  if (acc != acc_one)
    free (acc);
  run_setup_done (&st);
}

typedef struct {
  const OwbQgemmPacked *b;
  int64_t rows, lda, ldc, row_tile, col_block, nrb;
  const uint8_t *a;
  int32_t za;
  void *c;
  const OwbQgemmEpilogue *ep;
} Job;

/* Units go column block by column block (unit u: row tile u % nrb of block u / nrb), so that a
 * thread's contiguous share reads few blocks of B. */
static void
job_units (int64_t begin, int64_t end, gpointer data)
{
  const Job *j = data;
  size_t es = out_size (j->ep->output);
  for (int64_t u = begin; u < end; u++)
    {
      int64_t r0 = u % j->nrb * j->row_tile, n0 = u / j->nrb * j->col_block;
      _owb_qgemm_packed_run (j->b, MIN (j->row_tile, j->rows - r0), j->a + r0 * j->lda, j->lda, j->za, n0,
                             n0 + j->col_block, (char *) j->c + (size_t) (r0 * j->ldc) * es, j->ldc, j->ep);
    }
}

void
_owb_qgemm_packed (OwbThreadPool *pool, const OwbQgemmPacked *b, int64_t rows, const uint8_t *a, int64_t lda,
                   int32_t za, void *c, int64_t ldc, const OwbQgemmEpilogue *ep)
{
  if (rows <= 0 || b->N <= 0)
    return;
  int threads = pool ? MAX (owb_thread_pool_get_n_threads (pool), 1) : 1;
  Job j = { .b = b, .rows = rows, .lda = lda, .ldc = ldc, .a = a, .za = za, .c = c, .ep = ep };
  int64_t ntiles = (b->N + NP * NR - 1) / (NP * NR), nstrips = (rows + MR - 1) / MR;
  int64_t ncb = 1, nrb = 1;
  if (threads > 1)
    {
      /* About four units a thread (the pool lets idle threads take units others have not started):
       * columns first, each thread then reads only its share of B, then rows. */
      int64_t want = 4 * threads;
      ncb = MIN (ntiles, want);
      nrb = MIN (nstrips, (want + ncb - 1) / ncb);
    }
  int64_t tiles_per_block = (ntiles + ncb - 1) / ncb, strips_per_tile = (nstrips + nrb - 1) / nrb;
  j.col_block = tiles_per_block * NP * NR;
  if (threads > 1 && nrb == 1 && ncb >= threads)
    {
      /* Column blocks of whole 16-column panels, as many as a multiple of the threads: the pool
       * hands each thread an equal count of units, and 64-column blocks left MobileNetV3's 672
       * columns in 6 blocks of 128, 128, 128, 128, 128 and 32 (384 columns for one thread, 288
       * for the other; now 6 of 112). The most blocks that give the first thread no more than
       * the others. */
      int64_t npanels = (b->N + NR - 1) / NR, best = G_MAXINT64;
      for (int64_t nb = MIN (ncb, npanels) / threads * threads; nb >= threads; nb -= threads)
        {
          /* blocks of pp panels: the first thread's share, the most any thread gets */
          int64_t pp = (npanels + nb - 1) / nb, count = (npanels + pp - 1) / pp;
          if (count % threads == 0 && pp * (count / threads) < best)
            {
              best = pp * (count / threads);
              j.col_block = pp * NR;
            }
        }
    }
  j.row_tile = MIN (rows, strips_per_tile * MR);
  /* whole AMX blocks of 32 rows in each tile, not edges of a few rows on the vector kernel */
  if (j.row_tile < rows && _owb_qgemm_uses_amx ())
    j.row_tile = MIN (rows, (j.row_tile + 31) / 32 * 32);
  j.nrb = (rows + j.row_tile - 1) / j.row_tile;
  ncb = (b->N + j.col_block - 1) / j.col_block;
  owb_parallel_for (pool, j.nrb * ncb, 1, job_units, &j);
}
