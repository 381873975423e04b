/* cpu-qconv.c: 2-D QLinearConv on the integer GEMM core (cpu-qgemm.c), channels-last. The weight
 * is packed once per session, per group, as the GEMM's B [kH kW C/group, M/group]; a run reads X
 * as NHWC uint8 (int8 shifted by 128, zero point alike) and writes Y NHWC: a 1x1 stride-1
 * convolution is the GEMM on X itself, any other gathers its rows (im2col) a block at a time, the
 * block small enough to stay in cache while B passes over it, and a depthwise one runs its own
 * kernel. Requantization is the reference's: nearbyint (acc * float (float (sx sw) / sy)) in double,
 * plus the zero point, saturated. QLinearConv (NCHW) transposes X and Y around the same code;
 * NhwcQLinearConv, which the layout level makes, reads and writes NHWC directly. */
#include "cpu-qgemm-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_X86_AVX512 1
#define AVX512 __attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq")))
#define VNNI512 __attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq,avx512vnni,fma")))
#include "cpu-qrequant-avx512-private.h"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/* Bytes of gathered rows a unit of work builds at once (with B's panels, within L2). */
#define IM2COL_BLOCK_BYTES (256 * 1024)
/* The indirect GEMM (direct_rows) runs on output rows at least this wide (a narrower row leaves
 * short strips: 14-wide rows measured slower; 28-wide ones tie); deeper products run in depth
 * pieces (_owb_qgemm_packed_run_segments), so that B's part stays in L1 */
#define INDIRECT_MIN_OW 16
/* On several threads, convolutions of fewer than FEW_ROWS output pixels a thread, whose gathered
 * rows take at most FEW_ROWS_BYTES, gather them all first (qconv_gathered): ResNet-18's 7x7
 * layers (at 14x14, 196 rows, row blocks measured faster) */
#define FEW_ROWS 32
#define FEW_ROWS_BYTES (1024 * 1024)

struct _OwbQconv {
  OwbTensor *w; /* the packed initializer: a run checks its input is that same tensor */
  gboolean nhwc, x_unsigned;
  int64_t M, Cg, KH, KW, group, Mg;
  OwbQgemmPacked **packs; /* one per group; NULL for a depthwise convolution */
  /* depthwise (group = C = M): (w - zw) per tap and channel, [KH KW][Cpad] int32 holding the int16
   * value in its low half (its high half zero), as vpmaddwd multiplies it */
  int32_t *dw;
  int64_t cpad;
  /* the same weights for dw_row_avx2's interior pixels: taps in pairs (2p, 2p + 1; the last of an
   * odd count with 0), [pairs][cpad][2] int16, a channel's two taps side by side as vpmaddwd
   * multiplies two interleaved taps of X; and each channel's sum of w - zw over all taps */
  int16_t *dwp;
  int32_t *dwpsum;
  /* a 3x3 stride-1 convolution where the AVX2 GEMM runs (wino_pack): U = G' (w - zw) G'^T (4 U
   * of Winograd F(2x2, 3x3)) per position xi of the 4x4 tile, [16][M / 16 panels][cpad / 2][16][2]
   * int16 as the AVX2 tile reads B; NULL otherwise */
  int16_t *wino;
  int64_t wino_cpad; /* C rounded up to 4 */
  /* the same weights for the VNNI depthwise kernel, where every w - zw fits int8 (NULL otherwise):
   * per block of 64 channels and group of 4 taps, four vectors of 16 int32 lanes, lane (l, i) of
   * vector v being channel 16 l + 4 v + i with its four taps' bytes (the order in which four
   * interleaved rows of X land, see dw_row_vnni); and each channel's sum of w - zw, in the same order */
  int8_t *dw8;
  int32_t *dwsum;
  int64_t ngroups4, nblocks64;
  /* 16 or 32 channels (a divisor of 64): dw8's one block repeats the channels 64 / M times, so
   * that a vector holds that many neighbouring pixels of a stride-1 row; 1 otherwise */
  int64_t dw_rep;
};

static void dw_pack_vnni (OwbQconv *s, int64_t ks);
static void wino_pack (OwbQconv *s, const OwbNode *node, const void *w, gboolean wu8, const int32_t *zw);

void
_owb_cpu_qconv_free (gpointer data)
{
  OwbQconv *s = data;
  if (!s)
    return;
  for (int64_t g = 0; s->packs && g < s->group; g++)
    _owb_qgemm_packed_free (s->packs[g]);
  g_free (s->packs);
  free (s->dw);
  free (s->dwp);
  free (s->dwpsum);
  free (s->wino);
  free (s->dw8);
  free (s->dwsum);
  owb_tensor_unref (s->w);
  g_free (s);
}


gboolean
_owb_cpu_qconv_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                        GError **error)
{
  (void) opset;
  (void) error;
  *state = NULL;
  OwbTensor *w = _owb_cpu_q_initializer (node, 3);
  const OwbValueType *xt = input_types ? input_types[0] : NULL;
  if (!w || w->rank != 4 || !_owb_cpu_q_is_8bit (w->dtype) || w->nelems == 0 || !xt || !_owb_cpu_q_is_8bit (xt->dtype))
    return TRUE;
  int64_t group = owb_node_get_int (node, "group", 1);
  int64_t M = w->dims[0], Cg = w->dims[1], KH = w->dims[2], KW = w->dims[3];
  if (group < 1 || M % group)
    return TRUE;
  OwbTensor *zwt = _owb_cpu_q_initializer (node, 5);
  if (!zwt || zwt->dtype != w->dtype || (zwt->nelems != 1 && zwt->nelems != M))
    return TRUE;
  OwbQconv *s = g_new0 (OwbQconv, 1);
  s->w = owb_tensor_ref (w);
  s->nhwc = strcmp (node->op_type, "NhwcQLinearConv") == 0;
  s->x_unsigned = xt->dtype == OWB_TYPE_UINT8;
  s->M = M;
  s->Cg = Cg;
  s->KH = KH;
  s->KW = KW;
  s->group = group;
  s->Mg = M / group;
  int32_t *zw = g_new (int32_t, M);
  for (int64_t m = 0; m < M; m++)
    zw[m] = (int32_t) owb_tensor_get_double (zwt, zwt->nelems == 1 ? 0 : m);
  const int8_t *ws = w->data;
  const uint8_t *wu = w->data;
  gboolean wu8 = w->dtype == OWB_TYPE_UINT8;
  int64_t ks = KH * KW;
  if (Cg == 1 && s->Mg == 1)
    {
      s->cpad = (M + 15) / 16 * 16;
      if (posix_memalign ((void **) &s->dw, 64, (size_t) (ks * s->cpad) * sizeof (int32_t)) != 0)
        g_error ("out of memory packing a depthwise weight");
      memset (s->dw, 0, (size_t) (ks * s->cpad) * sizeof (int32_t));
      for (int64_t m = 0; m < M; m++)
        for (int64_t k = 0; k < ks; k++)
          {
            int v = (wu8 ? (int) wu[m * ks + k] : ws[m * ks + k]) - zw[m];
            s->dw[k * s->cpad + m] = (int32_t) (uint16_t) (int16_t) v;
          }
      int64_t npairs = (ks + 1) / 2;
      if (posix_memalign ((void **) &s->dwp, 64, (size_t) (npairs * s->cpad * 2) * sizeof (int16_t)) != 0
          || posix_memalign ((void **) &s->dwpsum, 64, (size_t) s->cpad * sizeof (int32_t)) != 0)
        g_error ("out of memory packing a depthwise weight");
      memset (s->dwp, 0, (size_t) (npairs * s->cpad * 2) * sizeof (int16_t));
      memset (s->dwpsum, 0, (size_t) s->cpad * sizeof (int32_t));
      for (int64_t m = 0; m < M; m++)
        for (int64_t k = 0; k < ks; k++)
          {
            int16_t v = (int16_t) (uint16_t) s->dw[k * s->cpad + m];
            s->dwp[(k / 2 * s->cpad + m) * 2 + k % 2] = v;
            s->dwpsum[m] += v;
          }
      dw_pack_vnni (s, ks);
    }
  else
    {
      /* B [(kh kw c), n] of each group: row (kh, kw, c) holds the group's M/group channels */
      int64_t K = ks * Cg, Mg = s->Mg;
      s->packs = g_new0 (OwbQgemmPacked *, group);
      uint8_t *b = g_malloc (MAX (K * Mg, 1));
      for (int64_t g = 0; g < group; g++)
        {
          for (int64_t n = 0; n < Mg; n++)
            for (int64_t c = 0; c < Cg; c++)
              for (int64_t k = 0; k < ks; k++)
                b[(k * Cg + c) * Mg + n] = wu[((g * Mg + n) * Cg + c) * ks + k];
          s->packs[g] = _owb_qgemm_pack (K, Mg, b, Mg, wu8, zw + g * Mg, Mg);
          if (!s->packs[g])
            {
              g_free (b);
              g_free (zw);
              _owb_cpu_qconv_free (s);
              return TRUE;
            }
        }
      wino_pack (s, node, w->data, wu8, zw);
      g_free (b);
    }
  g_free (zw);
  *state = s;
  return TRUE;
}

/* Channel of lane `lane` (l = lane / 4, i = lane % 4) of vector v in a 64-channel block (of the
 * 64 / M pixels' channels when s->dw_rep > 1), or M and more past the last channel. */
static inline int64_t
dw8_channel (const OwbQconv *s, int64_t blk, int v, int lane)
{
  int64_t c = blk * 64 + 16 * (lane / 4) + 4 * v + lane % 4;
  return s->dw_rep > 1 ? c % s->M : c;
}

/* s->dw8 and s->dwsum from s->dw, when every weight fits int8. */
static void
dw_pack_vnni (OwbQconv *s, int64_t ks)
{
  int64_t M = s->M;
  for (int64_t k = 0; k < ks; k++)
    for (int64_t m = 0; m < M; m++)
      {
        int v = (int16_t) (uint16_t) s->dw[k * s->cpad + m];
        if (v < -128 || v > 127)
          return;
      }
  s->ngroups4 = (ks + 3) / 4;
  s->nblocks64 = (M + 63) / 64;
  s->dw_rep = M < 64 && 64 % M == 0 ? 64 / M : 1;
  size_t wbytes = (size_t) (s->nblocks64 * s->ngroups4 * 4 * 64), sbytes = (size_t) (s->nblocks64 * 64) * sizeof (int32_t);
  if (posix_memalign ((void **) &s->dw8, 64, wbytes) != 0 || posix_memalign ((void **) &s->dwsum, 64, sbytes) != 0)
    g_error ("out of memory packing a depthwise weight");
  memset (s->dw8, 0, wbytes);
  memset (s->dwsum, 0, sbytes);
  for (int64_t blk = 0; blk < s->nblocks64; blk++)
    for (int v = 0; v < 4; v++)
      for (int lane = 0; lane < 16; lane++)
        {
          int64_t c = dw8_channel (s, blk, v, lane);
          if (c >= M)
            continue;
          int32_t sum = 0;
          for (int64_t k = 0; k < ks; k++)
            {
              int w = (int16_t) (uint16_t) s->dw[k * s->cpad + c];
              s->dw8[((blk * s->ngroups4 + k / 4) * 4 + v) * 64 + lane * 4 + k % 4] = (int8_t) w;
              sum += w;
            }
          s->dwsum[(blk * 4 + v) * 16 + lane] = sum;
        }
}

/* ---- geometry ---- */

typedef struct {
  int64_t N, H, W, C, OH, OW, M;
  int64_t sh, sw, dh, dw, ph, pw; /* strides, dilations, leading pads */
} Geom;

static gboolean
geometry (const OwbQconv *s, const OwbNode *node, const OwbTensor *x, const OwbTensor *y, Geom *g)
{
  if (x->rank != 4 || y->rank != 4)
    return FALSE;
  const int64_t *xd = x->dims, *yd = y->dims;
  g->N = xd[0];
  if (s->nhwc)
    {
      g->H = xd[1], g->W = xd[2], g->C = xd[3];
      g->OH = yd[1], g->OW = yd[2], g->M = yd[3];
    }
  else
    {
      g->C = xd[1], g->H = xd[2], g->W = xd[3];
      g->M = yd[1], g->OH = yd[2], g->OW = yd[3];
    }
  if (g->C != s->Cg * s->group || g->M != s->M || yd[0] != g->N)
    return FALSE;
  int n = 0;
  const int64_t *v;
  int64_t st[2] = { 1, 1 }, di[2] = { 1, 1 }, pads[4] = { 0, 0, 0, 0 };
  if ((v = owb_node_get_ints (node, "strides", &n)) && n == 2)
    st[0] = v[0], st[1] = v[1];
  if ((v = owb_node_get_ints (node, "dilations", &n)) && n == 2)
    di[0] = v[0], di[1] = v[1];
  if ((v = owb_node_get_ints (node, "pads", &n)) && n == 4)
    memcpy (pads, v, sizeof pads);
  if ((v = owb_node_get_ints (node, "kernel_shape", &n)) && (n != 2 || v[0] != s->KH || v[1] != s->KW))
    return FALSE;
  if (st[0] < 1 || st[1] < 1 || di[0] < 1 || di[1] < 1)
    return FALSE;
  const char *ap = owb_node_get_string (node, "auto_pad", "NOTSET");
  gboolean upper = strcmp (ap, "SAME_UPPER") == 0, lower = strcmp (ap, "SAME_LOWER") == 0;
  gboolean valid = strcmp (ap, "VALID") == 0;
  int64_t in[2] = { g->H, g->W }, out[2] = { g->OH, g->OW }, k[2] = { s->KH, s->KW }, begin[2];
  for (int i = 0; i < 2; i++)
    {
      int64_t dk = (k[i] - 1) * di[i] + 1;
      if (upper || lower)
        {
          int64_t total = MAX ((out[i] - 1) * st[i] + dk - in[i], 0);
          begin[i] = upper ? total / 2 : total - total / 2;
        }
      else
        begin[i] = valid ? 0 : pads[i];
      /* the output the reference computes for these pads (its shape came from inference) */
      int64_t end_pad = (upper || lower || valid) ? 0 : pads[i + 2];
      if (!upper && !lower && out[i] != (in[i] + begin[i] + end_pad - dk) / st[i] + 1)
        return FALSE;
    }
  g->sh = st[0], g->sw = st[1], g->dh = di[0], g->dw = di[1], g->ph = begin[0], g->pw = begin[1];
  return TRUE;
}

/* ---- requantization ---- */

typedef struct {
  const float *scale;  /* M: float (float (sx sw[m]) / sy) */
  const int32_t *bias; /* M, or NULL */
  int32_t yzp;
  gboolean y_unsigned;
  const uint8_t *table; /* NULL, or NhwcQLinearConv's Table: each output byte y becomes table[y] */
} Requant;

static inline uint8_t
requant_one (int32_t acc, float scale, const Requant *q)
{
  double d = nearbyint ((double) acc * (double) scale) + q->yzp;
  double lo = q->y_unsigned ? 0 : -128, hi = q->y_unsigned ? 255 : 127;
  d = d < lo ? lo : (d > hi ? hi : d);
  return q->y_unsigned ? (uint8_t) d : (uint8_t) (int8_t) d;
}

#ifdef HAVE_X86_AVX512
/* 16 accumulators of channels c.. (mask m) to y, as requant_one does each (in double). */
static inline __attribute__ ((always_inline)) AVX512 void
requant16 (__m512i x, const float *scale, __mmask16 m, const Requant *q, uint8_t *y)
{
  __m512d s0 = _mm512_cvtps_pd (_mm256_maskz_loadu_ps ((__mmask8) m, scale));
  __m512d s1 = _mm512_cvtps_pd (_mm256_maskz_loadu_ps ((__mmask8) (m >> 8), scale + 8));
  __m512d yzp = _mm512_set1_pd (q->yzp);
  __m512d lo = _mm512_set1_pd (q->y_unsigned ? 0 : -128), hi = _mm512_set1_pd (q->y_unsigned ? 255 : 127);
  __m512i v = owb_qrequant16_double_avx512 (x, s0, s1, yzp, lo, hi);
  _mm_mask_storeu_epi8 (y, m, _mm512_cvtepi32_epi8 (v));
}
#endif

/* ---- depthwise ---- */

#define DW_VNNI_MAX_TAPS 128 /* kernels of up to 11 x 11 */

typedef struct {
  const OwbQconv *s;
  const Geom *g;
  const uint8_t *x; /* NHWC, unsigned */
  int32_t zx;
  uint8_t *y;       /* NHWC */
  const Requant *q;
  /* dw_row_vnni: per block and vector, bias - zx sum (w - zw) and the scale, in s->dw8's order */
  const int32_t *init;
  const float *scale;
  /* dw_row_vnni runs the first vnni_blocks blocks of 64 channels; dw_row_avx512 the channels
   * from 64 vnni_blocks on (a remainder of 16 or fewer costs it less than a block's lanes) */
  int64_t vnni_blocks;
  gboolean narrow; /* every sum below 2^24 in magnitude (KH KW 255^2 + the largest bias) */
  /* narrow, and every |scale| below 64: each rounded product then converts to int32 exactly, and
   * the saturating packs of dw_store_vnni clamp it to y's range without the float min and max */
  gboolean pack_clamps;
  /* W C + 64 bytes of zx: what a tap in the padding reads, so that no tap is tested per block
   * (dw_row_avx2: C + 64 bytes, its edge pixels' padded taps) */
  const uint8_t *zrow;
  /* dw_row_avx2's interior pixels: bias - zx sum (w - zw) per channel (cpad of them), NULL where
   * the AVX2 kernel does not run */
  const int32_t *avx2_init;
} DwJob;

static void
dw_row_portable (const DwJob *j, int64_t n, int64_t oh)
{
  const Geom *g = j->g;
  const OwbQconv *s = j->s;
  int64_t C = g->C;
  int32_t *acc = g_new (int32_t, C);
  for (int64_t ow = 0; ow < g->OW; ow++)
    {
      for (int64_t c = 0; c < C; c++)
        acc[c] = j->q->bias ? j->q->bias[c] : 0;
      for (int64_t kh = 0; kh < s->KH; kh++)
        {
          int64_t ih = oh * g->sh - g->ph + kh * g->dh;
          if (ih < 0 || ih >= g->H)
            continue;
          for (int64_t kw = 0; kw < s->KW; kw++)
            {
              int64_t iw = ow * g->sw - g->pw + kw * g->dw;
              if (iw < 0 || iw >= g->W)
                continue;
              const uint8_t *xp = j->x + ((n * g->H + ih) * g->W + iw) * C;
              const int32_t *wp = s->dw + (kh * s->KW + kw) * s->cpad;
              for (int64_t c = 0; c < C; c++)
                acc[c] += ((int32_t) xp[c] - j->zx) * (int32_t) (int16_t) (uint16_t) wp[c];
            }
        }
      uint8_t *yp = j->y + ((n * g->OH + oh) * g->OW + ow) * C;
      for (int64_t c = 0; c < C; c++)
        yp[c] = requant_one (acc[c], j->q->scale[c], j->q);
    }
  g_free (acc);
}

/* The taps [lo, hi) of n, d apart from off, that fall inside [0, limit): the depthwise rows call
 * it per output pixel, where stepping in from the ends costs two compares on an interior pixel
 * (_owb_cpu_conv_valid_range's divisions cost more there). */
static inline __attribute__ ((always_inline)) void
dw_taps_inside (int64_t off, int64_t d, int64_t limit, int64_t n, int64_t *lo, int64_t *hi)
{
  int64_t l = 0, h = n;
  while (l < h && off + l * d < 0)
    l++;
  while (h > l && off + (h - 1) * d >= limit)
    h--;
  *lo = l;
  *hi = h;
}
#ifdef HAVE_X86_AVX512
/* Each tap adds (x - zx) w for 16 channels in one vpmaddwd: x - zx is a sign-extended int16 in each
 * int32 lane, w an int16 over a zero high half, so the pair product is exactly their product. */
static VNNI512 void
dw_row_avx512 (const DwJob *j, int64_t n, int64_t oh, int64_t c_begin, int64_t ow_begin, int64_t ow_end)
{
  const Geom *g = j->g;
  const OwbQconv *s = j->s;
  const int64_t C = g->C, KW = s->KW, cpad = s->cpad;
  const __m512i zx = _mm512_set1_epi32 (j->zx);
  const __m512 yzp = _mm512_set1_ps ((float) j->q->yzp);
  const __m512 lo = _mm512_set1_ps (j->q->y_unsigned ? 0.0f : -128.0f);
  const __m512 hi = _mm512_set1_ps (j->q->y_unsigned ? 255.0f : 127.0f);
  int64_t kh0, kh1;
  dw_taps_inside (oh * g->sh - g->ph, g->dh, g->H, s->KH, &kh0, &kh1);
  for (int64_t ow = ow_begin; ow < ow_end; ow++)
    {
      int64_t kw0, kw1, iw0 = ow * g->sw - g->pw;
      dw_taps_inside (iw0, g->dw, g->W, KW, &kw0, &kw1);
      uint8_t *yp = j->y + ((n * g->OH + oh) * g->OW + ow) * C;
      for (int64_t c0 = c_begin; c0 < C; c0 += 16)
        {
          __mmask16 m = C - c0 >= 16 ? 0xFFFF : (__mmask16) ((1u << (C - c0)) - 1);
          __m512i acc = j->q->bias ? _mm512_maskz_loadu_epi32 (m, j->q->bias + c0) : _mm512_setzero_si512 ();
          for (int64_t kh = kh0; kh < kh1; kh++)
            {
              int64_t ih = oh * g->sh - g->ph + kh * g->dh;
              const uint8_t *xr = j->x + ((n * g->H + ih) * g->W) * C + c0;
              const int32_t *wr = s->dw + kh * KW * cpad + c0;
              for (int64_t kw = kw0; kw < kw1; kw++)
                {
                  __m512i xv = _mm512_cvtepu8_epi32 (_mm_maskz_loadu_epi8 (m, xr + (iw0 + kw * g->dw) * C));
                  xv = _mm512_sub_epi32 (xv, zx);
                  acc = _mm512_add_epi32 (acc, _mm512_madd_epi16 (xv, _mm512_load_si512 ((const void *) (wr + kw * cpad))));
                }
            }
          __mmask16 wide;
          __m512i r = owb_qrequant16_avx512 (acc, _mm512_maskz_loadu_ps (m, j->q->scale + c0), yzp, lo, hi, &wide);
          if (wide & m)
            requant16 (acc, j->q->scale + c0, m, j->q, yp + c0);
          else
            _mm_mask_storeu_epi8 (yp + c0, m, _mm512_cvtepi32_epi8 (r));
        }
    }
}
#endif

#ifdef HAVE_X86_AVX512
/* 16 sums of dw_block_vnni to int32 lanes in y's range (sc: their scales in its lane order). */
static inline __attribute__ ((always_inline)) VNNI512 __m512i
dw_requant_vnni (const DwJob *j, __m512i acc, const float *sc, __m512 yzp, __m512 lo, __m512 hi)
{
  if (j->narrow)
    return owb_qrequant16_narrow_avx512 (acc, _mm512_load_ps (sc), yzp, lo, hi);
  __mmask16 wide;
  __m512i r = owb_qrequant16_avx512 (acc, _mm512_load_ps (sc), yzp, lo, hi, &wide);
  if (__builtin_expect (wide != 0, 0))
    {
      /* a sum past 2^24 (a large bias): the reference's double arithmetic */
      int32_t a[16], o[16];
      _mm512_storeu_si512 ((void *) a, acc);
      for (int l = 0; l < 16; l++)
        o[l] = j->q->y_unsigned ? (int32_t) requant_one (a[l], sc[l], j->q)
                                : (int32_t) (int8_t) requant_one (a[l], sc[l], j->q);
      r = _mm512_loadu_si512 ((const void *) o);
    }
  return r;
}

/* The four sums of a 64-channel block (lane (l, i) of acc v is channel 16 l + 4 v + i) to bytes in
 * channel order: each is clamped to y's range, so the two saturating packs, which work within
 * 128-bit lanes, are exact and put lane l's four groups of four side by side, channel order. */
static inline __attribute__ ((always_inline)) VNNI512 void
dw_store_vnni (const DwJob *j, __m512i acc0, __m512i acc1, __m512i acc2, __m512i acc3, const float *sc, __m512 yzp,
               __m512 lo, __m512 hi, uint8_t *yp, __mmask64 m)
{
  __m512i r0, r1, r2, r3;
  if (j->pack_clamps)
    {
      /* owb_qrequant16_round_avx512 with one test for the four vectors' ties (p on a half-integer,
       * rare): those redo it, the others round p to nearest even */
      enum { rnd = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC };
      const __m512 half = _mm512_set1_ps (0.5f), sign = _mm512_set1_ps (-0.0f);
      __m512 p0 = _mm512_mul_round_ps (_mm512_cvtepi32_ps (acc0), _mm512_load_ps (sc), rnd);
      __m512 p1 = _mm512_mul_round_ps (_mm512_cvtepi32_ps (acc1), _mm512_load_ps (sc + 16), rnd);
      __m512 p2 = _mm512_mul_round_ps (_mm512_cvtepi32_ps (acc2), _mm512_load_ps (sc + 32), rnd);
      __m512 p3 = _mm512_mul_round_ps (_mm512_cvtepi32_ps (acc3), _mm512_load_ps (sc + 48), rnd);
      __m512 q0 = _mm512_roundscale_ps (p0, rnd), q1 = _mm512_roundscale_ps (p1, rnd);
      __m512 q2 = _mm512_roundscale_ps (p2, rnd), q3 = _mm512_roundscale_ps (p3, rnd);
      __mmask16 t = _mm512_cmp_ps_mask (_mm512_andnot_ps (sign, _mm512_sub_ps (p0, q0)), half, _CMP_EQ_OQ)
                    | _mm512_cmp_ps_mask (_mm512_andnot_ps (sign, _mm512_sub_ps (p1, q1)), half, _CMP_EQ_OQ)
                    | _mm512_cmp_ps_mask (_mm512_andnot_ps (sign, _mm512_sub_ps (p2, q2)), half, _CMP_EQ_OQ)
                    | _mm512_cmp_ps_mask (_mm512_andnot_ps (sign, _mm512_sub_ps (p3, q3)), half, _CMP_EQ_OQ);
      if (__builtin_expect (t != 0, 0))
        {
          q0 = owb_qrequant16_round_avx512 (acc0, _mm512_load_ps (sc));
          q1 = owb_qrequant16_round_avx512 (acc1, _mm512_load_ps (sc + 16));
          q2 = owb_qrequant16_round_avx512 (acc2, _mm512_load_ps (sc + 32));
          q3 = owb_qrequant16_round_avx512 (acc3, _mm512_load_ps (sc + 48));
        }
      r0 = _mm512_cvtps_epi32 (_mm512_add_ps (q0, yzp));
      r1 = _mm512_cvtps_epi32 (_mm512_add_ps (q1, yzp));
      r2 = _mm512_cvtps_epi32 (_mm512_add_ps (q2, yzp));
      r3 = _mm512_cvtps_epi32 (_mm512_add_ps (q3, yzp));
    }
  else
    {
      r0 = dw_requant_vnni (j, acc0, sc, yzp, lo, hi), r1 = dw_requant_vnni (j, acc1, sc + 16, yzp, lo, hi);
      r2 = dw_requant_vnni (j, acc2, sc + 32, yzp, lo, hi), r3 = dw_requant_vnni (j, acc3, sc + 48, yzp, lo, hi);
    }
  __m512i p01 = _mm512_packs_epi32 (r0, r1), p23 = _mm512_packs_epi32 (r2, r3);
  __m512i out = j->q->y_unsigned ? _mm512_packus_epi16 (p01, p23) : _mm512_packs_epi16 (p01, p23);
  _mm512_mask_storeu_epi8 (yp, m, out);
}

/* The tap loop of dw_block_vnni and dw_rest_interior, once for both vector widths (VEC, the
 * intrinsics' prefix PFX and the aligned load LOAD): ng groups of four taps, each interleaved
 * into acc0..acc3 against s->dw8's weights at wb. Reads m, ks, tp, pix, c0 and zxv of the caller;
 * four named loads, not an array: GCC kept an array of them on the stack. */
#define DW_TAPS_VNNI(VEC, PFX, LOAD)                                                                                   \
  _Pragma ("GCC unroll 8") for (int64_t q = 0; q < ng; q++)                                                            \
  {                                                                                                                    \
    VEC t0 = DW_TAP (PFX, q * 4), t1 = DW_TAP (PFX, q * 4 + 1);                                                        \
    VEC t2 = DW_TAP (PFX, q * 4 + 2), t3 = DW_TAP (PFX, q * 4 + 3);                                                    \
    const int8_t *w = wb + q * 256;                                                                                    \
    VEC a_lo = PFX##_unpacklo_epi8 (t0, t1), a_hi = PFX##_unpackhi_epi8 (t0, t1);                                      \
    VEC b_lo = PFX##_unpacklo_epi8 (t2, t3), b_hi = PFX##_unpackhi_epi8 (t2, t3);                                      \
    acc0 = PFX##_dpbusd_epi32 (acc0, PFX##_unpacklo_epi16 (a_lo, b_lo), LOAD ((const void *) w));                      \
    acc1 = PFX##_dpbusd_epi32 (acc1, PFX##_unpackhi_epi16 (a_lo, b_lo), LOAD ((const void *) (w + 64)));               \
    acc2 = PFX##_dpbusd_epi32 (acc2, PFX##_unpacklo_epi16 (a_hi, b_hi), LOAD ((const void *) (w + 128)));              \
    acc3 = PFX##_dpbusd_epi32 (acc3, PFX##_unpackhi_epi16 (a_hi, b_hi), LOAD ((const void *) (w + 192)));              \
  }
/* tap k's bytes, or the constant zx for a tap past the last (k >= ks) */
#define DW_TAP(PFX, k) ((k) < ks ? PFX##_maskz_loadu_epi8 (m, tp[k] + pix + c0) : zxv)

/* Four taps of 64 channels a vpdpbusd each: the rows of X at the taps are interleaved bytewise,
 * then wordwise, so that each int32 lane holds one channel's four tap bytes (lane (l, i) of
 * vector v is channel 16 l + 4 v + i: unpacks work within 128-bit lanes), against s->dw8 in that
 * order. A tap in the padding reads zx (tp[k] in j->zrow), one past the last (tap index ks and
 * on) the constant zx, and the sum starts at bias - zx sum (w - zw), which makes it sum (x - zx)
 * (w - zw) exactly. Tap k of the block reads tp[k] + pix + c0, with ks and ng constants where the
 * caller is specialised, so that no tap is tested at run time. */
static inline __attribute__ ((always_inline)) VNNI512 void
dw_block_vnni (const DwJob *j, const uint8_t *const *tp, int64_t pix, int64_t ks, int64_t ng, int64_t blk,
               __mmask64 m, __m512i zxv, __m512 yzp, __m512 lo, __m512 hi, uint8_t *yp)
{
  const int64_t c0 = blk * 64;
  const int32_t *init = j->init + blk * 64;
  __m512i acc0 = _mm512_load_si512 ((const void *) init), acc1 = _mm512_load_si512 ((const void *) (init + 16));
  __m512i acc2 = _mm512_load_si512 ((const void *) (init + 32)), acc3 = _mm512_load_si512 ((const void *) (init + 48));
  const int8_t *wb = j->s->dw8 + blk * ng * 256;
  DW_TAPS_VNNI (__m512i, _mm512, _mm512_load_si512);
  dw_store_vnni (j, acc0, acc1, acc2, acc3, j->scale + blk * 64, yzp, lo, hi, yp + c0, m);
}

/* The channels from c0 on (16 or fewer) of one interior pixel: dw_block_vnni on 128-bit vectors,
 * the first lane of each of its four (channels c0 + 4 v + i, whose weights and starting sums are
 * the first 16 bytes of s->dw8's and init's vector v), which side by side are the 16 channels in
 * order. Measured on MobileNetV3's 72-channel 3x3 (8 left over) against a vpmaddwd a tap. */
static inline __attribute__ ((always_inline)) VNNI512 void
dw_rest_interior (const DwJob *j, const uint8_t *const *tp, int64_t pix, int64_t ks, int64_t ng, int64_t c0,
                  __mmask16 m, __m128i zxv, __m512 yzp, __m512 lo, __m512 hi, uint8_t *yp)
{
  const int64_t blk = c0 / 64;
  const int32_t *init = j->init + blk * 64;
  __m128i acc0 = _mm_load_si128 ((const void *) init), acc1 = _mm_load_si128 ((const void *) (init + 16));
  __m128i acc2 = _mm_load_si128 ((const void *) (init + 32)), acc3 = _mm_load_si128 ((const void *) (init + 48));
  const int8_t *wb = j->s->dw8 + blk * ng * 256;
  DW_TAPS_VNNI (__m128i, _mm, _mm_load_si128);
  __m512i acc = _mm512_inserti32x4 (_mm512_castsi128_si512 (acc0), acc1, 1);
  acc = _mm512_inserti32x4 (acc, acc2, 2);
  acc = _mm512_inserti32x4 (acc, acc3, 3);
  __m512 sc = _mm512_maskz_loadu_ps (m, j->q->scale + c0);
  if (j->narrow)
    {
      _mm_mask_storeu_epi8 (yp + c0, m, _mm512_cvtepi32_epi8 (owb_qrequant16_narrow_avx512 (acc, sc, yzp, lo, hi)));
      return;
    }
  __mmask16 wide;
  __m512i r = owb_qrequant16_avx512 (acc, sc, yzp, lo, hi, &wide);
  if (__builtin_expect ((wide & m) != 0, 0))
    requant16 (acc, j->q->scale + c0, m, j->q, yp + c0);
  else
    _mm_mask_storeu_epi8 (yp + c0, m, _mm512_cvtepi32_epi8 (r));
}

/* Pixels [ow0, ow1) of a row whose every tap lies inside X's row or in a padding row: tap k of
 * the pixel at ow reads tb[k] + (ow sw - pw) C (tb[k] in X's row, or in j->zrow for a padding
 * row), no bounds tested; ow1 - ow0 is a multiple of dw_rep, whose pixels share a vector. */
static inline __attribute__ ((always_inline)) VNNI512 void
dw_interior_vnni (const DwJob *j, const uint8_t *const *tb, int64_t ks, int64_t ng, int64_t ow0, int64_t ow1,
                  uint8_t *yrow)
{
  const Geom *g = j->g;
  const int64_t C = g->C, rep = j->s->dw_rep, step = g->sw * C * rep;
  const __m512i zxv = _mm512_set1_epi8 ((char) j->zx);
  const __m512 yzp = _mm512_set1_ps ((float) j->q->yzp);
  const __m512 lo = _mm512_set1_ps (j->q->y_unsigned ? 0.0f : -128.0f);
  const __m512 hi = _mm512_set1_ps (j->q->y_unsigned ? 255.0f : 127.0f);
  const int64_t c_rest = j->vnni_blocks * 64;
  const __mmask16 m_rest = C - c_rest >= 16 ? 0xFFFF : (__mmask16) ((1u << MAX (C - c_rest, 0)) - 1);
  const __m128i zx4 = _mm_set1_epi8 ((char) j->zx);
  int64_t pix = (ow0 * g->sw - g->pw) * C;
  for (int64_t ow = ow0; ow < ow1; ow += rep, pix += step)
    {
      for (int64_t blk = 0; blk < j->vnni_blocks; blk++)
        {
          int64_t left = rep > 1 ? rep * C : C - blk * 64;
          __mmask64 m = left >= 64 ? ~(__mmask64) 0 : (((__mmask64) 1 << left) - 1);
          dw_block_vnni (j, tb, pix, ks, ng, blk, m, zxv, yzp, lo, hi, yrow + ow * C);
        }
      if (c_rest < C)
        dw_rest_interior (j, tb, pix, ks, ng, c_rest, m_rest, zx4, yzp, lo, hi, yrow + ow * C);
    }
}

static VNNI512 void
dw_interior_vnni_3x3 (const DwJob *j, const uint8_t *const *tb, int64_t ow0, int64_t ow1, uint8_t *yrow)
{
  dw_interior_vnni (j, tb, 9, 3, ow0, ow1, yrow);
}

static VNNI512 void
dw_interior_vnni_5x5 (const DwJob *j, const uint8_t *const *tb, int64_t ow0, int64_t ow1, uint8_t *yrow)
{
  dw_interior_vnni (j, tb, 25, 7, ow0, ow1, yrow);
}

static VNNI512 void
dw_interior_vnni_any (const DwJob *j, const uint8_t *const *tb, int64_t ow0, int64_t ow1, uint8_t *yrow)
{
  dw_interior_vnni (j, tb, j->s->KH * j->s->KW, j->s->ngroups4, ow0, ow1, yrow);
}

/* Pixels [ow_begin, ow_end) of a row, any of whose taps may fall in the padding: where each tap
 * reads is worked out per pixel. */
static VNNI512 void
dw_edge_vnni (const DwJob *j, int64_t n, int64_t oh, int64_t ow_begin, int64_t ow_end)
{
  const Geom *g = j->g;
  const OwbQconv *s = j->s;
  const int64_t C = g->C, KH = s->KH, KW = s->KW, ks = KH * KW, ng = s->ngroups4;
  const __m512i zxv = _mm512_set1_epi8 ((char) j->zx);
  const __m512 yzp = _mm512_set1_ps ((float) j->q->yzp);
  const __m512 lo = _mm512_set1_ps (j->q->y_unsigned ? 0.0f : -128.0f);
  const __m512 hi = _mm512_set1_ps (j->q->y_unsigned ? 255.0f : 127.0f);
  const uint8_t *tp[DW_VNNI_MAX_TAPS];
  g_assert (ng * 4 <= DW_VNNI_MAX_TAPS);
  const int64_t rep = s->dw_rep;
  for (int64_t ow = ow_begin, npix = 1; ow < ow_end; ow += npix)
    {
      /* a stride-1 run of rep pixels whose taps all lie inside the row: one vector for all */
      npix = rep > 1 && ow + rep <= ow_end && ow - g->pw >= 0 && ow + rep - 1 - g->pw + (KW - 1) * g->dw < g->W ? rep : 1;
      /* where each tap reads, j->zrow in the padding */
      for (int64_t kh = 0, k = 0; kh < KH; kh++)
        {
          int64_t ih = oh * g->sh - g->ph + kh * g->dh;
          gboolean row_in = ih >= 0 && ih < g->H;
          const uint8_t *xr = j->x + (n * g->H + ih) * g->W * C;
          for (int64_t kw = 0, iw = ow * g->sw - g->pw; kw < KW; kw++, k++, iw += g->dw)
            tp[k] = row_in && iw >= 0 && iw < g->W ? xr + iw * C : j->zrow;
        }
      uint8_t *yp = j->y + ((n * g->OH + oh) * g->OW + ow) * C;
      for (int64_t blk = 0; blk < j->vnni_blocks; blk++)
        {
          int64_t left = rep > 1 ? npix * C : C - blk * 64;
          __mmask64 m = left >= 64 ? ~(__mmask64) 0 : (((__mmask64) 1 << left) - 1);
          dw_block_vnni (j, tp, 0, ks, ng, blk, m, zxv, yzp, lo, hi, yp);
        }
    }
}

/* A row: the pixels whose taps all lie inside X's rows or in padding rows run the interior kernel
 * (3x3 and 5x5 specialised), the rest dw_edge_vnni. Measured on EfficientNet-B1's 144 x 56 x 56
 * 3x3 depthwise: per-pixel tap bounds and tests were about a third of its time. */
static VNNI512 void
dw_row_vnni (const DwJob *j, int64_t n, int64_t oh)
{
  const Geom *g = j->g;
  const OwbQconv *s = j->s;
  const int64_t C = g->C, KH = s->KH, KW = s->KW, rep = s->dw_rep;
  int64_t a = g->OW, b = g->OW;
  if (rep == 1 || g->sw == 1)
    {
      /* ow sw - pw >= 0 and ow sw - pw + (KW - 1) dw < W */
      a = MIN ((g->pw + g->sw - 1) / g->sw, g->OW);
      int64_t last = g->W - 1 - (KW - 1) * g->dw + g->pw;
      b = last < 0 ? a : MIN (last / g->sw + 1, g->OW);
      b = MAX (b, a);
      b = a + (b - a) / rep * rep;
    }
  if (a < b)
    {
      const uint8_t *tb[DW_VNNI_MAX_TAPS];
      for (int64_t kh = 0, k = 0; kh < KH; kh++)
        {
          int64_t ih = oh * g->sh - g->ph + kh * g->dh;
          const uint8_t *xr = ih >= 0 && ih < g->H ? j->x + (n * g->H + ih) * g->W * C : j->zrow;
          for (int64_t kw = 0; kw < KW; kw++, k++)
            tb[k] = xr + kw * g->dw * C;
        }
      uint8_t *yrow = j->y + (n * g->OH + oh) * g->OW * C;
      dw_edge_vnni (j, n, oh, 0, a);
      if (j->vnni_blocks * 64 < C)
        {
          dw_row_avx512 (j, n, oh, j->vnni_blocks * 64, 0, a);
          dw_row_avx512 (j, n, oh, j->vnni_blocks * 64, b, g->OW);
        }
      if (KH * KW == 9)
        dw_interior_vnni_3x3 (j, tb, a, b, yrow);
      else if (KH * KW == 25)
        dw_interior_vnni_5x5 (j, tb, a, b, yrow);
      else
        dw_interior_vnni_any (j, tb, a, b, yrow);
      dw_edge_vnni (j, n, oh, b, g->OW);
    }
  else
    {
      dw_edge_vnni (j, n, oh, 0, g->OW);
      if (j->vnni_blocks * 64 < C)
        dw_row_avx512 (j, n, oh, j->vnni_blocks * 64, 0, g->OW);
    }
}
#endif

#ifdef HAVE_X86_AVX512
#define AVX2_DW __attribute__ ((target ("avx2,fma")))

/* 8 sums requantized as requant_one does, to 8 int16: where every sum is below 2^24 (narrow, or
 * found so in this vector) the product in float, in double only for a vector with a product on a
 * half-integer (the float rounds as the double then: see epilogue_avx2 in cpu-qgemm.c), else in
 * double: the product rounded half to even, the zero point added, clamped. */
static inline __attribute__ ((always_inline)) AVX2_DW __m128i
dw_requant_avx2 (__m256i acc, const float *scale, gboolean narrow, const Requant *q)
{
  enum { rnd = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC };
  const float flo = q->y_unsigned ? 0 : -128, fhi = q->y_unsigned ? 255 : 127;
  /* a sum of 2^24 or more (|INT32_MIN| too) has a bit in its magnitude's top byte */
  if (narrow || _mm256_testz_si256 (_mm256_abs_epi32 (acc), _mm256_set1_epi32 ((int) 0xFF000000u)))
    {
      __m256 pf = _mm256_mul_ps (_mm256_cvtepi32_ps (acc), _mm256_loadu_ps (scale));
      __m256 rf = _mm256_round_ps (pf, rnd);
      __m256 frac = _mm256_and_ps (_mm256_sub_ps (pf, rf), _mm256_castsi256_ps (_mm256_set1_epi32 (0x7FFFFFFF)));
      if (__builtin_expect (!_mm256_movemask_ps (_mm256_cmp_ps (frac, _mm256_set1_ps (0.5f), _CMP_EQ_OQ)), 1))
        {
          __m256 v = _mm256_add_ps (rf, _mm256_set1_ps ((float) q->yzp));
          v = _mm256_min_ps (_mm256_set1_ps (fhi), _mm256_max_ps (_mm256_set1_ps (flo), v));
          __m256i y = _mm256_cvtps_epi32 (v);
          return _mm_packs_epi32 (_mm256_castsi256_si128 (y), _mm256_extracti128_si256 (y, 1));
        }
    }
  const __m256d yzp = _mm256_set1_pd (q->yzp), lo = _mm256_set1_pd (flo), hi = _mm256_set1_pd (fhi);
  __m256d d0 = _mm256_mul_pd (_mm256_cvtepi32_pd (_mm256_castsi256_si128 (acc)), _mm256_cvtps_pd (_mm_loadu_ps (scale)));
  __m256d d1 = _mm256_mul_pd (_mm256_cvtepi32_pd (_mm256_extracti128_si256 (acc, 1)),
                              _mm256_cvtps_pd (_mm_loadu_ps (scale + 4)));
  d0 = _mm256_min_pd (hi, _mm256_max_pd (lo, _mm256_add_pd (_mm256_round_pd (d0, rnd), yzp)));
  d1 = _mm256_min_pd (hi, _mm256_max_pd (lo, _mm256_add_pd (_mm256_round_pd (d1, rnd), yzp)));
  /* in range already: the saturating packs only narrow */
  return _mm_packs_epi32 (_mm256_cvtpd_epi32 (d0), _mm256_cvtpd_epi32 (d1));
}

/* 16 sums requantized as dw_requant_avx2 does, where j->pack_clamps (sums below 2^24, scales
 * below 64: each rounded float product fits int32) as epilogue_avx2's integer clamp in cpu-qgemm.c:
 * the CPU's round-half-even conversion, the zero point added in int32, the saturating packs as the
 * clamp; FALSE (nothing written) where a product lies on a half-integer, which the double decides. */
static inline __attribute__ ((always_inline)) AVX2_DW gboolean
dw_requant16_packs_avx2 (__m256i a0, __m256i a1, const float *scale, int32_t yzp, gboolean u8, __m128i *out)
{
  const __m256 absmask = _mm256_castsi256_ps (_mm256_set1_epi32 (0x7FFFFFFF)), half = _mm256_set1_ps (0.5f);
  __m256 p0 = _mm256_mul_ps (_mm256_cvtepi32_ps (a0), _mm256_loadu_ps (scale));
  __m256 p1 = _mm256_mul_ps (_mm256_cvtepi32_ps (a1), _mm256_loadu_ps (scale + 8));
  __m256i y0 = _mm256_cvtps_epi32 (p0), y1 = _mm256_cvtps_epi32 (p1);
  __m256 f0 = _mm256_and_ps (_mm256_sub_ps (_mm256_cvtepi32_ps (y0), p0), absmask);
  __m256 f1 = _mm256_and_ps (_mm256_sub_ps (_mm256_cvtepi32_ps (y1), p1), absmask);
  if (__builtin_expect (
        _mm256_movemask_ps (_mm256_or_ps (_mm256_cmp_ps (f0, half, _CMP_EQ_OQ), _mm256_cmp_ps (f1, half, _CMP_EQ_OQ))), 0))
    return FALSE;
  const __m256i yz = _mm256_set1_epi32 (yzp);
  __m256i w = _mm256_permute4x64_epi64 (_mm256_packs_epi32 (_mm256_add_epi32 (y0, yz), _mm256_add_epi32 (y1, yz)), 0xD8);
  __m128i lo = _mm256_castsi256_si128 (w), hi = _mm256_extracti128_si256 (w, 1);
  *out = u8 ? _mm_packus_epi16 (lo, hi) : _mm_packs_epi16 (lo, hi);
  return TRUE;
}

/* Taps of the widest kernel dw_row_avx2 pairs (9x9) */
#define DW_AVX2_MAX_TAPS 81

/* Channels [0, C / 8 * 8) of an interior pixel (every tap inside X; px its first tap, off[t] tap t's
 * offset from it), two taps a vpmaddwd: the taps' bytes interleaved and widened to int16 against
 * s->dwp's pairs, from bias - zx sum (w - zw) (so x - zx is never formed): 16 products in 6
 * vector operations, where a tap at a time took 5 for 8. Returns the channels done. */
static inline __attribute__ ((always_inline)) AVX2_DW int64_t
dw_pixel_pairs_avx2 (const DwJob *j, const uint8_t *px, const int64_t *off, const uint8_t *const *tp, int64_t ntaps,
                     uint8_t *yp)
{
  /* tap t's bytes: px + off[t] inside X, or tp[t] (an edge pixel's taps, those in the padding on a
   * row of zx, whose products the init's - zx sum (w - zw) cancels); tp is a constant NULL at the
   * inside pixels' call */
#define TAP(t) (tp ? tp[t] : px + off[t])
  const OwbQconv *s = j->s;
  const int64_t C = j->g->C, cpad = s->cpad, full = ntaps / 2;
  const gboolean u8 = j->q->y_unsigned;
  int64_t c0 = 0;
  for (; c0 + 16 <= C; c0 += 16)
    {
      __m256i a0 = _mm256_loadu_si256 ((const __m256i *) (j->avx2_init + c0));
      __m256i a1 = _mm256_loadu_si256 ((const __m256i *) (j->avx2_init + c0 + 8));
      const int16_t *wp = s->dwp + c0 * 2;
      int64_t p = 0;
      for (; p < full; p++, wp += cpad * 2)
        {
          __m128i u = _mm_loadu_si128 ((const __m128i *) (TAP (2 * p) + c0));
          __m128i v = _mm_loadu_si128 ((const __m128i *) (TAP (2 * p + 1) + c0));
          a0 = _mm256_add_epi32 (a0, _mm256_madd_epi16 (_mm256_cvtepu8_epi16 (_mm_unpacklo_epi8 (u, v)),
                                                        _mm256_loadu_si256 ((const __m256i *) wp)));
          a1 = _mm256_add_epi32 (a1, _mm256_madd_epi16 (_mm256_cvtepu8_epi16 (_mm_unpackhi_epi8 (u, v)),
                                                        _mm256_loadu_si256 ((const __m256i *) (wp + 16))));
        }
      if (ntaps % 2)
        {
          /* the last tap against its pair's zero */
          __m128i u = _mm_loadu_si128 ((const __m128i *) (TAP (ntaps - 1) + c0)), z = _mm_setzero_si128 ();
          a0 = _mm256_add_epi32 (a0, _mm256_madd_epi16 (_mm256_cvtepu8_epi16 (_mm_unpacklo_epi8 (u, z)),
                                                        _mm256_loadu_si256 ((const __m256i *) wp)));
          a1 = _mm256_add_epi32 (a1, _mm256_madd_epi16 (_mm256_cvtepu8_epi16 (_mm_unpackhi_epi8 (u, z)),
                                                        _mm256_loadu_si256 ((const __m256i *) (wp + 16))));
        }
      __m128i out;
      if (!j->pack_clamps || !dw_requant16_packs_avx2 (a0, a1, j->q->scale + c0, j->q->yzp, u8, &out))
        {
          __m128i w0 = dw_requant_avx2 (a0, j->q->scale + c0, j->narrow, j->q);
          __m128i w1 = dw_requant_avx2 (a1, j->q->scale + c0 + 8, j->narrow, j->q);
          out = u8 ? _mm_packus_epi16 (w0, w1) : _mm_packs_epi16 (w0, w1);
        }
      _mm_storeu_si128 ((__m128i *) (yp + c0), out);
    }
  if (c0 + 8 <= C)
    {
      __m256i a0 = _mm256_loadu_si256 ((const __m256i *) (j->avx2_init + c0));
      const int16_t *wp = s->dwp + c0 * 2;
      for (int64_t t = 0; t < ntaps; t += 2, wp += cpad * 2)
        {
          __m128i u = _mm_loadl_epi64 ((const __m128i *) (TAP (t) + c0));
          __m128i v = t + 1 < ntaps ? _mm_loadl_epi64 ((const __m128i *) (TAP (t + 1) + c0)) : _mm_setzero_si128 ();
          a0 = _mm256_add_epi32 (a0, _mm256_madd_epi16 (_mm256_cvtepu8_epi16 (_mm_unpacklo_epi8 (u, v)),
                                                        _mm256_loadu_si256 ((const __m256i *) wp)));
        }
      __m128i w0 = dw_requant_avx2 (a0, j->q->scale + c0, j->narrow, j->q);
      _mm_storel_epi64 ((__m128i *) (yp + c0), u8 ? _mm_packus_epi16 (w0, w0) : _mm_packs_epi16 (w0, w0));
      c0 += 8;
    }
#undef TAP
  return c0;
}

/* dw_row_avx512 with AVX2 (the CPUs without AVX-512, or OWB_CPU_NO_AVX512): interior pixels by
 * dw_pixel_pairs_avx2, and so are the edge pixels, their taps in the padding reading j->zrow's zx
 * (a 7x7 map's 5x5 has 9 inside pixels of 49: 7x7x960 took 0.088 ms with its edges tap by tap,
 * 0.069 so); kernels of more than DW_AVX2_MAX_TAPS taps 8 channels a vector, (x - zx) (w - zw) by vpmaddwd on s->dw's
 * int16 weights a tap at a time; requantized as the reference (dw_requant_avx2); the last C % 8
 * channels of a pixel as dw_row_portable does them. */
static AVX2_DW void
dw_row_avx2 (const DwJob *job, int64_t n, int64_t oh)
{
  /* the job, its requantization and geometry copied into locals that nothing else can reach: y's
   * byte stores may alias the originals, whose fields were read again after every store */
  const Requant ql = *job->q;
  const Geom gl = *job->g;
  DwJob jl = *job;
  jl.q = &ql;
  jl.g = &gl;
  const DwJob *j = &jl;
  const Geom *g = &gl;
  const OwbQconv *s = j->s;
  const int64_t C = g->C, KW = s->KW, cpad = s->cpad, C8 = C / 8 * 8, ntaps = s->KH * KW;
  const gboolean u8 = j->q->y_unsigned;
  const __m256i zx = _mm256_set1_epi32 (j->zx);
  int64_t kh0, kh1;
  dw_taps_inside (oh * g->sh - g->ph, g->dh, g->H, s->KH, &kh0, &kh1);
  /* a row whose kernel rows all lie inside X: its interior pixels' taps at fixed offsets */
  gboolean pairs = j->avx2_init && kh0 == 0 && kh1 == s->KH && ntaps <= DW_AVX2_MAX_TAPS;
  /* the edge pixels by pairs too, their padded taps on j->zrow */
  const gboolean edge_pairs = j->avx2_init && j->zrow && ntaps <= DW_AVX2_MAX_TAPS;
  int64_t off[DW_AVX2_MAX_TAPS];
  const uint8_t *tp[DW_AVX2_MAX_TAPS];
  for (int64_t t = 0; pairs && t < ntaps; t++)
    off[t] = ((t / KW) * g->dh * g->W + (t % KW) * g->dw) * C;
  /* the inside columns [owa, owb) of such a row in one loop, pixel pointers stepped (whole vectors
   * of channels only: no scalar tail) */
  int64_t owa = (g->pw + g->sw - 1) / g->sw, last = g->W - 1 - (KW - 1) * g->dw + g->pw;
  int64_t owb = last >= 0 ? last / g->sw + 1 : 0;
  owa = MIN (owa, g->OW);
  owb = pairs && C % 8 == 0 ? MIN (MAX (owb, owa), g->OW) : owa;
  for (int64_t ow = 0; ow < g->OW; ow++)
    {
      if (ow == owa && owb > owa)
        {
          const uint8_t *px = j->x + ((n * g->H + oh * g->sh - g->ph) * g->W + owa * g->sw - g->pw) * C;
          uint8_t *yp = j->y + ((n * g->OH + oh) * g->OW + owa) * C;
          for (; ow < owb; ow++, px += g->sw * C, yp += C)
            dw_pixel_pairs_avx2 (j, px, off, NULL, ntaps, yp);
          ow--;
          continue;
        }
      int64_t kw0, kw1, iw0 = ow * g->sw - g->pw;
      dw_taps_inside (iw0, g->dw, g->W, KW, &kw0, &kw1);
      uint8_t *yp = j->y + ((n * g->OH + oh) * g->OW + ow) * C;
      int64_t cv = C8;
      if (pairs && kw0 == 0 && kw1 == KW)
        cv = dw_pixel_pairs_avx2 (j, j->x + ((n * g->H + oh * g->sh - g->ph) * g->W + iw0) * C, off, NULL, ntaps, yp);
      else if (edge_pairs)
        {
          for (int64_t t = 0; t < ntaps; t++)
            {
              int64_t ih = oh * g->sh - g->ph + (t / KW) * g->dh, iw = iw0 + (t % KW) * g->dw;
              tp[t] = ih >= 0 && ih < g->H && iw >= 0 && iw < g->W ? j->x + ((n * g->H + ih) * g->W + iw) * C : j->zrow;
            }
          cv = dw_pixel_pairs_avx2 (j, NULL, NULL, tp, ntaps, yp);
        }
      else
        for (int64_t c0 = 0; c0 < C8; c0 += 8)
          {
            __m256i acc = j->q->bias ? _mm256_loadu_si256 ((const __m256i *) (j->q->bias + c0)) : _mm256_setzero_si256 ();
            for (int64_t kh = kh0; kh < kh1; kh++)
              {
                int64_t ih = oh * g->sh - g->ph + kh * g->dh;
                const uint8_t *xr = j->x + ((n * g->H + ih) * g->W) * C + c0;
                const int32_t *wr = s->dw + kh * KW * cpad + c0;
                for (int64_t kw = kw0; kw < kw1; kw++)
                  {
                    __m256i xv = _mm256_cvtepu8_epi32 (_mm_loadl_epi64 ((const __m128i *) (xr + (iw0 + kw * g->dw) * C)));
                    xv = _mm256_sub_epi32 (xv, zx);
                    acc = _mm256_add_epi32 (acc, _mm256_madd_epi16 (xv, _mm256_loadu_si256 ((const __m256i *) (wr + kw * cpad))));
                  }
              }
            __m128i w = dw_requant_avx2 (acc, j->q->scale + c0, j->narrow, j->q);
            _mm_storel_epi64 ((__m128i *) (yp + c0), u8 ? _mm_packus_epi16 (w, w) : _mm_packs_epi16 (w, w));
          }
      for (int64_t c = cv; c < C; c++)
        {
          int32_t acc = j->q->bias ? j->q->bias[c] : 0;
          for (int64_t kh = kh0; kh < kh1; kh++)
            {
              int64_t ih = oh * g->sh - g->ph + kh * g->dh;
              for (int64_t kw = kw0; kw < kw1; kw++)
                acc += ((int32_t) j->x[((n * g->H + ih) * g->W + iw0 + kw * g->dw) * C + c] - j->zx)
                       * (int32_t) (int16_t) (uint16_t) s->dw[(kh * KW + kw) * cpad + c];
            }
          yp[c] = requant_one (acc, j->q->scale[c], j->q);
        }
    }
}
#endif

/* One output row (n, oh) of the depthwise convolution on the path the CPU takes. */
static inline void
dw_row (const DwJob *j, int vec, int64_t n, int64_t oh)
{
#ifdef HAVE_X86_AVX512
  if (vec == 2)
    {
      dw_row_avx2 (j, n, oh);
      return;
    }
  if (vec && j->init)
    {
      dw_row_vnni (j, n, oh);
      return;
    }
  if (vec)
    {
      dw_row_avx512 (j, n, oh, 0, 0, j->g->OW);
      return;
    }
#endif
  (void) vec;
  dw_row_portable (j, n, oh);
}

static void
dw_rows (int64_t begin, int64_t end, gpointer data)
{
  const DwJob *j = data;
  int vec = 0; /* 1: the AVX-512 kernels, 2: dw_row_avx2 */
#ifdef HAVE_X86_AVX512
  vec = _owb_qgemm_uses_vnni () ? 1 : _owb_qgemm_uses_avx2 () ? 2 : 0;
#endif
  int64_t row_bytes = j->g->OW * j->g->M;
  for (int64_t r = begin; r < end; r++)
    {
      dw_row (j, vec, r / j->g->OH, r % j->g->OH);
      /* the fused lookup a row late, while that row is in L1 and its stores are done (see
       * LookupLag in cpu-qgemm.c) */
      if (j->q->table && r > begin)
        _owb_qgemm_lookup_rows (j->q->table, j->y + (r - 1) * row_bytes, row_bytes, 1, row_bytes);
    }
  if (j->q->table && end > begin)
    _owb_qgemm_lookup_rows (j->q->table, j->y + (end - 1) * row_bytes, row_bytes, 1, row_bytes);
}

#ifdef HAVE_X86_AVX512
/* ---- Winograd F(2x2, 3x3) on the AVX2 integer GEMM ----
 * Without VNNI an integer product costs about what a float FMA does (vpmaddwd + vpaddd per 16
 * against 2 FMAs), and the FP32 kernels run 3x3 stride-1 layers as Winograd, 2.25 times fewer
 * products. The integer transform is exact: V = B^T (x - zx) B adds 4 differences (|V| <= 1020),
 * U' = G' (w - zw) G'^T with G' = 2G integral (|U'| <= 2295), both int16 for vpmaddwd; the 16
 * products V U' summed over C, and Y' = A^T M A, are wrapping int32 sums, exact modulo 2^32, and
 * Y' = 4 Y where |4 Y| <= 4 9 C 255^2 < 2^31 for C <= 512, so that Y = Y' >> 2 is the reference's
 * sum to the bit. The tiles of 2x2 output pixels, of all rows and images in one list, go in chunks
 * (WinoJob.tb of them) whose V stays in L2 while each position's U' passes over it once: a
 * chunk a row of tiles streamed the 16 U' of a 7x7x512 layer (8 MiB) four times. */
#define WINO_MAX_C 512
/* Tiles of a chunk at most, and the bytes of its V */
#define WINO_MAX_TILES 96
#define WINO_V_BYTES (384 * 1024)
#define AVX2_WINO AVX2_DW

/* Whether node is a convolution the Winograd path takes on this geometry class (3x3, stride and
 * dilation 1, one group, C <= WINO_MAX_C, C and M multiples of 8), on a CPU where the AVX2 GEMM runs. */
static gboolean
wino_node_fits (const OwbQconv *s, const OwbNode *node)
{
  int n = 0;
  const int64_t *v;
  if (s->group != 1 || s->KH != 3 || s->KW != 3 || s->Cg > WINO_MAX_C || s->Cg % 8 || s->M % 8)
    return FALSE;
  if ((v = owb_node_get_ints (node, "strides", &n)) && (n != 2 || v[0] != 1 || v[1] != 1))
    return FALSE;
  if ((v = owb_node_get_ints (node, "dilations", &n)) && (n != 2 || v[0] != 1 || v[1] != 1))
    return FALSE;
  return !getenv ("OWB_QCONV_NO_WINOGRAD") && !_owb_qgemm_uses_vnni () && _owb_qgemm_uses_avx2 ();
}

static void
wino_pack (OwbQconv *s, const OwbNode *node, const void *w, gboolean wu8, const int32_t *zw)
{
  if (!wino_node_fits (s, node))
    return;
  static const int G2[4][3] = { { 2, 0, 0 }, { 1, 1, 1 }, { 1, -1, 1 }, { 0, 0, 2 } };
  const int64_t C = s->Cg, M = s->M, cpad = (C + 3) / 4 * 4, np = (M + 15) / 16;
  size_t bytes = (size_t) (16 * np * cpad * 16) * sizeof (int16_t);
  if (posix_memalign ((void **) &s->wino, 64, bytes) != 0)
    g_error ("out of memory packing a convolution weight");
  memset (s->wino, 0, bytes);
  s->wino_cpad = cpad;
  /* the GEMM's own int16 copy would stay unread: a run on another path (VNNI, portable) reads
   * B's bytes */
  _owb_qgemm_packed_drop_wide (s->packs[0]);
  for (int64_t m = 0; m < M; m++)
    for (int64_t c = 0; c < C; c++)
      {
        int gw[3][3], t[4][3];
        for (int k = 0; k < 9; k++)
          gw[k / 3][k % 3] = (wu8 ? (int) ((const uint8_t *) w)[(m * C + c) * 9 + k]
                                  : ((const int8_t *) w)[(m * C + c) * 9 + k]) - zw[m];
        for (int i = 0; i < 4; i++)
          for (int j = 0; j < 3; j++)
            t[i][j] = G2[i][0] * gw[0][j] + G2[i][1] * gw[1][j] + G2[i][2] * gw[2][j];
        for (int i = 0; i < 4; i++)
          for (int l = 0; l < 4; l++)
            {
              int u = t[i][0] * G2[l][0] + t[i][1] * G2[l][1] + t[i][2] * G2[l][2];
              s->wino[(((i * 4 + l) * np + m / 16) * (cpad / 2) + c / 2) * 32 + m % 16 / 8 * 16 + m % 8 * 2 + c % 2]
                = (int16_t) u;
            }
      }
}

typedef struct {
  const OwbQconv *s;
  const Geom *g;
  const uint8_t *x, *zrow; /* zrow: C bytes of zx, a tap in the padding */
  int32_t zx;
  uint8_t *y;
  const Requant *q;
  gboolean narrow; /* every sum below 2^24 (9 C 255^2 + the largest bias) */
  int64_t THn, TW; /* tile rows an image, tiles a row: ceil (OH / 2), ceil (OW / 2) */
  int64_t ntiles, tb, nchunks; /* tiles in all, a chunk's, chunks */
  int64_t mblock, nmb;         /* columns of a unit (a multiple of 64), units a chunk */
} WinoJob;

/* Image, tile row and tile of tile T in the list. */
static inline void
wino_tile (const WinoJob *j, int64_t T, int64_t *n, int64_t *th, int64_t *tw)
{
  *n = T / (j->THn * j->TW);
  *th = T / j->TW % j->THn;
  *tw = T % j->TW;
}

/* V[xi][t][c] (j->tb tiles apart) of tiles [T0, T0 + nt): B^T (x - zx) B of each 4x4 patch, 16
 * channels a step (8 at the end). */
static AVX2_WINO void
wino_input (const WinoJob *j, int64_t T0, int64_t nt, int16_t *V)
{
  const Geom *g = j->g;
  const int64_t C = g->C, cpad = j->s->wino_cpad, tb = j->tb;
  const __m256i z16 = _mm256_set1_epi16 ((short) j->zx);
  for (int64_t t = 0; t < nt; t++)
    {
      int64_t n, th, tw;
      wino_tile (j, T0 + t, &n, &th, &tw);
      const uint8_t *p[4][4];
      for (int i = 0; i < 4; i++)
        for (int l = 0; l < 4; l++)
          {
            int64_t ih = 2 * th - g->ph + i, iw = 2 * tw - g->pw + l;
            p[i][l] = ih < 0 || ih >= g->H || iw < 0 || iw >= g->W ? j->zrow : j->x + ((n * g->H + ih) * g->W + iw) * C;
          }
      int16_t *vt = V + t * cpad;
      for (int64_t c0 = 0; c0 < C; c0 += 16)
        {
          const gboolean half = c0 + 16 > C; /* the last 8 channels */
          __m256i d[4][4], r[4][4];
          for (int i = 0; i < 4; i++)
            for (int l = 0; l < 4; l++)
              {
                __m128i b = half ? _mm_loadl_epi64 ((const __m128i *) (p[i][l] + c0))
                                 : _mm_loadu_si128 ((const __m128i *) (p[i][l] + c0));
                d[i][l] = _mm256_sub_epi16 (_mm256_cvtepu8_epi16 (b), z16);
              }
          /* B^T on the rows, then B on the columns: (d0 - d2, d1 + d2, d2 - d1, d1 - d3) */
          for (int l = 0; l < 4; l++)
            {
              r[0][l] = _mm256_sub_epi16 (d[0][l], d[2][l]);
              r[1][l] = _mm256_add_epi16 (d[1][l], d[2][l]);
              r[2][l] = _mm256_sub_epi16 (d[2][l], d[1][l]);
              r[3][l] = _mm256_sub_epi16 (d[1][l], d[3][l]);
            }
          for (int i = 0; i < 4; i++)
            {
              __m256i v[4] = { _mm256_sub_epi16 (r[i][0], r[i][2]), _mm256_add_epi16 (r[i][1], r[i][2]),
                               _mm256_sub_epi16 (r[i][2], r[i][1]), _mm256_sub_epi16 (r[i][1], r[i][3]) };
              for (int l = 0; l < 4; l++)
                {
                  int16_t *o = vt + (i * 4 + l) * tb * cpad + c0;
                  if (half)
                    _mm_storeu_si128 ((__m128i *) o, _mm256_castsi256_si128 (v[l]));
                  else
                    _mm256_storeu_si256 ((__m256i *) o, v[l]);
                }
            }
        }
      for (int xi = 0; xi < 16; xi++) /* depths past C: zero (U' is zero there too) */
        for (int64_t c = C; c < cpad; c++)
          vt[xi * tb * cpad + c] = 0;
    }
}

/* Output pixels of tiles [T0, T0 + nt), channels [m0, m0 + 64) (those below M), from the 16
 * products Mb[xi][t][64] (j->tb tiles apart): A^T Mb A / 4 + bias, requantized; and looked up in
 * a fused table. */
static AVX2_WINO void
wino_output (const WinoJob *j, int64_t T0, int64_t nt, int64_t m0, const int32_t *Mb)
{
  const Geom *g = j->g;
  const Requant *q = j->q;
  const int64_t M = g->M, mn = MIN (64, M - m0);
  const gboolean u8 = q->y_unsigned;
  for (int64_t t = 0; t < nt; t++)
    {
      int64_t n, th, tw;
      wino_tile (j, T0 + t, &n, &th, &tw);
      for (int64_t c = 0; c < mn; c += 8)
        {
          __m256i m[4][4], a[2][4];
          for (int xi = 0; xi < 16; xi++)
            m[xi / 4][xi % 4] = _mm256_load_si256 ((const __m256i *) (Mb + (xi * j->tb + t) * 64 + c));
          /* A^T = (1 1 1 0; 0 1 -1 -1) on the rows, then on the columns */
          for (int l = 0; l < 4; l++)
            {
              a[0][l] = _mm256_add_epi32 (_mm256_add_epi32 (m[0][l], m[1][l]), m[2][l]);
              a[1][l] = _mm256_sub_epi32 (_mm256_sub_epi32 (m[1][l], m[2][l]), m[3][l]);
            }
          __m256i bias = q->bias ? _mm256_loadu_si256 ((const __m256i *) (q->bias + m0 + c)) : _mm256_setzero_si256 ();
          for (int i = 0; i < 2; i++)
            {
              int64_t oh = 2 * th + i;
              if (oh >= g->OH)
                break;
              __m256i yv[2] = { _mm256_add_epi32 (_mm256_add_epi32 (a[i][0], a[i][1]), a[i][2]),
                                _mm256_sub_epi32 (_mm256_sub_epi32 (a[i][1], a[i][2]), a[i][3]) };
              for (int k = 0; k < 2; k++)
                {
                  int64_t ow = 2 * tw + k;
                  if (ow >= g->OW)
                    break;
                  /* exactly 4 Y: the shift divides; the bias wraps as the reference adds it */
                  __m256i acc = _mm256_add_epi32 (_mm256_srai_epi32 (yv[k], 2), bias);
                  __m128i w = dw_requant_avx2 (acc, q->scale + m0 + c, j->narrow, q);
                  _mm_storel_epi64 ((__m128i *) (j->y + ((n * g->OH + oh) * g->OW + ow) * M + m0 + c),
                                    u8 ? _mm_packus_epi16 (w, w) : _mm_packs_epi16 (w, w));
                }
            }
        }
      for (int i = 0; q->table && i < 2 && 2 * th + i < g->OH; i++)
        for (int k = 0; k < 2 && 2 * tw + k < g->OW; k++)
          _owb_qgemm_lookup_rows (q->table, j->y + ((n * g->OH + 2 * th + i) * g->OW + 2 * tw + k) * M + m0, M, 1, mn);
    }
}

/* Units: chunk u / nmb of the tiles, columns [u % nmb mblock, + mblock). */
static void
wino_units (int64_t begin, int64_t end, gpointer data)
{
  const WinoJob *j = data;
  const Geom *g = j->g;
  const OwbQconv *s = j->s;
  const int64_t cpad = s->wino_cpad, np = (g->M + 15) / 16, G = cpad / 4, tb = j->tb;
  int16_t *V = NULL;
  int32_t *Mb = NULL;
  if (posix_memalign ((void **) &V, 64, (size_t) (16 * tb * cpad) * sizeof (int16_t)) != 0
      || posix_memalign ((void **) &Mb, 64, (size_t) (16 * tb * 64) * sizeof (int32_t)) != 0)
    g_error ("out of memory in an integer convolution");
  int64_t built = -1;
  for (int64_t u = begin; u < end; u++)
    {
      int64_t chunk = u / j->nmb, T0 = chunk * tb, nt = MIN (tb, j->ntiles - T0);
      int64_t mb0 = u % j->nmb * j->mblock, mb1 = MIN (g->M, mb0 + j->mblock);
      if (chunk != built)
        wino_input (j, T0, nt, V);
      built = chunk;
      for (int64_t m0 = mb0; m0 < mb1; m0 += 64)
        {
          for (int xi = 0; xi < 16; xi++)
            for (int64_t p = m0 / 16; p < MIN (np, m0 / 16 + 4); p++)
              {
                const int16_t *bp = s->wino + ((xi * np + p) * (cpad / 2)) * 32;
                for (int64_t r0 = 0; r0 < nt; r0 += 6)
                  _owb_qgemm_wide_rows_avx2 ((int) MIN (6, nt - r0), (const uint32_t *) (V + (xi * tb + r0) * cpad),
                                             cpad / 2, G, bp, Mb + (xi * tb + r0) * 64 + (p - m0 / 16) * 16);
              }
          wino_output (j, T0, nt, m0, Mb);
        }
    }
  free (V);
  free (Mb);
}

/* Y of a convolution wino_pack took, when this run's geometry is its (the pads any); FALSE
 * otherwise, or where another path than AVX2's runs now. */
static gboolean
wino_run (OwbThreadPool *pool, const OwbQconv *s, const Geom *g, const uint8_t *x, int32_t zx, uint8_t *y,
          const Requant *q)
{
  if (!s->wino || g->sh != 1 || g->sw != 1 || g->dh != 1 || g->dw != 1 || _owb_qgemm_uses_vnni ()
      || !_owb_qgemm_uses_avx2 ())
    return FALSE;
  WinoJob j = { .s = s, .g = g, .x = x, .zx = zx, .y = y, .q = q, .THn = (g->OH + 1) / 2, .TW = (g->OW + 1) / 2 };
  j.ntiles = g->N * j.THn * j.TW;
  /* chunks of whole strips of 6 tiles, V within WINO_V_BYTES, as even as they come */
  int64_t tmax = MAX (6, MIN (WINO_MAX_TILES, WINO_V_BYTES / (32 * s->wino_cpad)) / 6 * 6);
  j.nchunks = (j.ntiles + tmax - 1) / tmax;
  j.tb = MIN (tmax, ((j.ntiles + j.nchunks - 1) / j.nchunks + 5) / 6 * 6);
  j.nchunks = (j.ntiles + j.tb - 1) / j.tb;
  /* about four units a thread: columns split where the chunks are fewer */
  int threads = pool ? MAX (owb_thread_pool_get_n_threads (pool), 1) : 1;
  int64_t nm64 = (g->M + 63) / 64;
  j.nmb = threads > 1 ? MIN (nm64, MAX (1, (4 * threads + j.nchunks - 1) / j.nchunks)) : 1;
  j.mblock = (nm64 + j.nmb - 1) / j.nmb * 64;
  j.nmb = (g->M + j.mblock - 1) / j.mblock;
  int64_t bound = 9 * g->C * 255 * 255;
  for (int64_t c = 0; q->bias && c < g->M && bound < (1 << 24); c++)
    bound = MAX (bound, 9 * g->C * 255 * 255 + (q->bias[c] < 0 ? -(int64_t) q->bias[c] : q->bias[c]));
  j.narrow = bound < (1 << 24);
  uint8_t *zrow = g_malloc ((gsize) g->C + 16);
  memset (zrow, (int) (uint8_t) zx, (size_t) g->C + 16);
  j.zrow = zrow;
  owb_parallel_for (pool, j.nchunks * j.nmb, 1, wino_units, &j);
  g_free (zrow);
  return TRUE;
}
#else
static void
wino_pack (OwbQconv *s, const OwbNode *node, const void *w, gboolean wu8, const int32_t *zw)
{
}

static gboolean
wino_run (OwbThreadPool *pool, const OwbQconv *s, const Geom *g, const uint8_t *x, int32_t zx, uint8_t *y,
          const Requant *q)
{
  return FALSE;
}
#endif

/* ---- GEMM convolutions ---- */

typedef struct {
  const OwbQconv *s;
  const Geom *g;
  const uint8_t *x, *x_end; /* x_end: past X's last byte (im2col's chunked copies stop short of it) */
  int32_t zx;
  uint8_t *y;
  const Requant *q;
  int64_t K, rows, row_block, nrb, col_block, ncb;
  gboolean indirect; /* interior pixels read X in place (direct_rows) */
  uint8_t *a;        /* qconv_gathered's rows */
} GemmJob;

/* dst[0..n) = src[0..n): n of a few bytes (a 3-channel stem's kernel row is 9 or 21) as two
 * overlapping loads and stores, instead of a call to memcpy per kernel row */
static inline void
copy_small (uint8_t *dst, const uint8_t *src, int64_t n)
{
  if (n > 16 && n <= 32)
    {
      uint64_t a[2], b[2];
      memcpy (a, src, 16);
      memcpy (b, src + n - 16, 16);
      memcpy (dst, a, 16);
      memcpy (dst + n - 16, b, 16);
    }
  else if (n >= 8 && n <= 16)
    {
      uint64_t a, b;
      memcpy (&a, src, 8);
      memcpy (&b, src + n - 8, 8);
      memcpy (dst, &a, 8);
      memcpy (dst + n - 8, &b, 8);
    }
  else if (n >= 4 && n < 8)
    {
      uint32_t a, b;
      memcpy (&a, src, 4);
      memcpy (&b, src + n - 4, 4);
      memcpy (dst, &a, 4);
      memcpy (dst + n - 4, &b, 4);
    }
  else
    memcpy (dst, src, (size_t) n);
}

/* Row (n, oh, ow) of group grp's gathered operand, at ar: tap by tap, the group's C/group input
 * channels at that tap, or zx where the tap falls in the padding. */
static void
im2col_row (const GemmJob *j, int64_t grp, int64_t n, int64_t oh, int64_t ow, uint8_t *ar)
{
  const Geom *g = j->g;
  const OwbQconv *s = j->s;
  int64_t Cg = s->Cg, C = g->C;
  if (s->group == 1 && g->dw == 1)
    {
      /* a kernel row's taps are one run of KW C bytes of X: one copy, padding on its sides
       * (a 3-channel stem otherwise made 49 calls of 3 bytes a row) */
      int64_t iw0 = ow * g->sw - g->pw, kw0 = MAX (0, -iw0), kw1 = MIN (s->KW, g->W - iw0);
      kw1 = MAX (kw1, kw0);
      for (int64_t kh = 0; kh < s->KH; kh++, ar += s->KW * C)
        {
          int64_t ih = oh * g->sh - g->ph + kh * g->dh;
          if (ih < 0 || ih >= g->H || kw0 == kw1)
            {
              memset (ar, j->zx, (size_t) (s->KW * C));
              continue;
            }
          if (kw0 > 0)
            memset (ar, j->zx, (size_t) (kw0 * C));
          copy_small (ar + kw0 * C, j->x + ((n * g->H + ih) * g->W + iw0 + kw0) * C, (kw1 - kw0) * C);
          if (kw1 < s->KW)
            memset (ar + kw1 * C, j->zx, (size_t) ((s->KW - kw1) * C));
        }
      return;
    }
  for (int64_t kh = 0; kh < s->KH; kh++)
    {
      int64_t ih = oh * g->sh - g->ph + kh * g->dh;
      for (int64_t kw = 0; kw < s->KW; kw++, ar += Cg)
        {
          int64_t iw = ow * g->sw - g->pw + kw * g->dw;
          if (ih < 0 || ih >= g->H || iw < 0 || iw >= g->W)
            memset (ar, j->zx, (size_t) Cg);
          else
            copy_small (ar, j->x + ((n * g->H + ih) * g->W + iw) * C + grp * Cg, Cg);
        }
    }
}

/* im2col of an ungrouped convolution without width dilation whose kernel rows are at most 32
 * bytes (a 3-channel stem: 9 bytes for 3x3, 21 for 7x7): a pixel whose taps all lie inside X
 * copies each kernel row as whole 16-byte chunks, which may spill past the row's end into the
 * next row's start, written after it; the other pixels, and the call's last row (its spill would
 * reach rows another thread gathers: qconv_gathered shares one buffer), by im2col_row. The geometry is held in locals: a's byte stores may alias j's and g's fields, which
 * were read again after every copy (the 3x3 stem spent 30 cycles a row). */
static void
im2col_short (const GemmJob *j, int64_t r0, int64_t rn, uint8_t *a)
{
  const Geom *g = j->g;
  const OwbQconv *s = j->s;
  const int64_t C = g->C, H = g->H, W = g->W, OH = g->OH, OW = g->OW, KH = s->KH, KW = s->KW, K = j->K;
  const int64_t sh = g->sh, sw = g->sw, ph = g->ph, pw = g->pw, dh = g->dh, seg = KW * C, step = dh * W * C;
  const int64_t span = (KH - 1) * step + (seg > 16 ? 32 : 16);
  const uint8_t *x = j->x, *x_end = j->x_end;
  /* the output columns whose kernel rows lie inside X's width: [owa, owb) */
  int64_t owa = (pw + sw - 1) / sw, owb = W + pw - KW >= 0 ? (W + pw - KW) / sw + 1 : 0;
  owa = MIN (owa, OW);
  owb = MIN (MAX (owb, owa), OW);
  int64_t ohw = OH * OW, n = r0 / ohw, oh = r0 % ohw / OW, ow = r0 % OW;
  for (int64_t r = 0; r < rn;)
    {
      int64_t ih0 = oh * sh - ph, end = MIN (OW, ow + (rn - r));
      gboolean rows_in = ih0 >= 0 && ih0 + (KH - 1) * dh < H;
      int64_t ia = rows_in ? MIN (MAX (ow, owa), end) : end, ib = rows_in ? MAX (MIN (end, owb), ia) : end;
      for (; ow < ia; ow++, r++)
        im2col_row (j, 0, n, oh, ow, a + r * K);
      const uint8_t *xp = ow < ib ? x + ((n * H + ih0) * W + ow * sw - pw) * C : x;
      for (; ow < ib && xp + span <= x_end && r + 1 < rn; ow++, r++, xp += sw * C)
        {
          uint8_t *ar = a + r * K;
          const uint8_t *xr = xp;
          for (int64_t kh = 0; kh < KH; kh++, ar += seg, xr += step)
            {
              uint64_t c[4];
              memcpy (c, xr, 16);
              memcpy (ar, c, 16);
              if (seg > 16)
                {
                  memcpy (c + 2, xr + 16, 16);
                  memcpy (ar + 16, c + 2, 16);
                }
            }
        }
      for (; ow < end; ow++, r++)
        im2col_row (j, 0, n, oh, ow, a + r * K);
      if (ow == OW)
        {
          ow = 0;
          if (++oh == OH)
            oh = 0, n++;
        }
    }
}

/* Rows [r0, r0 + rn) of group grp's gathered operand (im2col_row's). */
static void
im2col (const GemmJob *j, int64_t grp, int64_t r0, int64_t rn, uint8_t *a)
{
  const Geom *g = j->g;
  const OwbQconv *s = j->s;
  if (s->group == 1 && g->dw == 1 && s->KW * g->C <= 32)
    {
      im2col_short (j, r0, rn, a);
      return;
    }
  int64_t ohw = g->OH * g->OW;
  /* (n, oh, ow) of row r0, then stepped: no division per row */
  int64_t n = r0 / ohw, oh = r0 % ohw / g->OW, ow = r0 % g->OW;
  for (int64_t r = 0; r < rn; r++, ow++)
    {
      if (ow == g->OW)
        {
          ow = 0;
          if (++oh == g->OH)
            oh = 0, n++;
        }
      im2col_row (j, grp, n, oh, ow, a + r * j->K);
    }
}

/* Pixels [r0, r0 + rn) of an ungrouped convolution without width dilation, columns [n0, n1):
 * along an output row, the pixels whose window lies inside X's width (stride sw) read kernel row
 * kh's KW C bytes where they lie in X, sw C bytes apart (or a row of zx where kh falls in the
 * vertical padding): the GEMM on X itself, segment by segment, with no copy. The few pixels at
 * the rows' ends are gathered (into a) for one GEMM of the unit, whose rows (in edge_y) are
 * then copied to their pixels. */
static void
direct_rows (const GemmJob *j, int64_t r0, int64_t rn, int64_t n0, int64_t n1, uint8_t *a, const uint8_t *zrow,
             int64_t *edge, uint8_t *edge_y, const OwbQgemmEpilogue *ep)
{
  int64_t nedge = 0;
  const Geom *g = j->g;
  const OwbQconv *s = j->s;
  int64_t C = g->C, M = g->M, ohw = g->OH * g->OW, seglen = s->KW * C;
  /* interior: 0 <= ow sw - pw and ow sw - pw + KW <= W */
  int64_t owa = (g->pw + g->sw - 1) / g->sw, owb = g->W + g->pw - s->KW >= 0 ? (g->W + g->pw - s->KW) / g->sw + 1 : 0;
  owa = MIN (owa, g->OW);
  owb = MIN (MAX (owb, owa), g->OW);
  const uint8_t *seg[64];
  int64_t seg_lda[64];
  for (int64_t p = r0; p < r0 + rn;)
    {
      int64_t n = p / ohw, oh = p % ohw / g->OW, ow0 = p % g->OW, ow1 = MIN (g->OW, ow0 + (r0 + rn - p));
      int64_t row = p - ow0; /* pixel (n, oh, 0) */
      int64_t ia = MAX (ow0, owa), ib = MIN (ow1, owb);
      if (ib > ia)
        {
          for (int64_t kh = 0; kh < s->KH; kh++)
            {
              int64_t ih = oh * g->sh - g->ph + kh * g->dh;
              if (ih < 0 || ih >= g->H)
                {
                  seg[kh] = zrow;
                  seg_lda[kh] = 0;
                }
              else
                {
                  seg[kh] = j->x + ((n * g->H + ih) * g->W + ia * g->sw - g->pw) * C;
                  seg_lda[kh] = g->sw * C;
                }
            }
          _owb_qgemm_packed_run_segments (s->packs[0], ib - ia, (int) s->KH, seg, seg_lda, seglen, j->zx, n0, n1,
                                          j->y + (row + ia) * M, M, ep);
        }
      else
        ia = ib = ow1;
      /* the ends, [ow0, ia) and [ib, ow1), gathered for one GEMM over all of them */
      int64_t ends[2][2] = { { ow0, ia }, { ib, ow1 } };
      for (int e = 0; e < 2; e++)
        for (int64_t ow = ends[e][0]; ow < ends[e][1]; ow++)
          {
            im2col (j, 0, row + ow, 1, a + nedge * j->K);
            edge[nedge++] = row + ow;
          }
      p = row + ow1;
    }
  if (nedge == 0)
    return;
  /* into edge_y's rows, then each to its pixel */
  _owb_qgemm_packed_run (s->packs[0], nedge, a, j->K, j->zx, n0, n1, edge_y, M, ep);
  for (int64_t i = 0; i < nedge; i++)
    memcpy (j->y + edge[i] * M + n0, edge_y + i * M + n0, (size_t) (n1 - n0));
}

static void
gemm_units (int64_t begin, int64_t end, gpointer data)
{
  const GemmJob *j = data;
  uint8_t *a = NULL;
  if (posix_memalign ((void **) &a, 64, (size_t) MAX (j->row_block * j->K, 64)) != 0)
    g_error ("out of memory in an integer convolution");
  uint8_t *zrow = NULL, *edge_y = NULL;
  int64_t *edge = NULL;
  if (j->indirect)
    {
      zrow = g_malloc (j->s->KW * j->g->C);
      memset (zrow, j->zx, j->s->KW * j->g->C);
      edge = g_new (int64_t, j->row_block);
      edge_y = g_malloc (j->row_block * j->g->M);
    }
  int64_t built_grp = -1, built_r0 = -1;
  for (int64_t u = begin; u < end; u++)
    {
      /* unit u: column block fastest, so that consecutive units reuse the gathered rows */
      int64_t cb = u % j->ncb, rest = u / j->ncb, rb = rest % j->nrb, grp = rest / j->nrb;
      int64_t r0 = rb * j->row_block, rn = MIN (j->row_block, j->rows - r0);
      if (j->indirect)
        {
          int64_t n0 = cb * j->col_block, n1 = MIN (j->s->Mg, n0 + j->col_block);
          OwbQgemmEpilogue ep = { .output = j->q->y_unsigned ? OWB_QGEMM_OUT_UINT8 : OWB_QGEMM_OUT_INT8,
                                  .bias = j->q->bias, .scale = j->q->scale, .y_zero_point = j->q->yzp,
                                  .table = j->q->table };
          direct_rows (j, r0, rn, n0, n1, a, zrow, edge, edge_y, &ep);
          continue;
        }
      if (grp != built_grp || r0 != built_r0)
        {
          im2col (j, grp, r0, rn, a);
          built_grp = grp;
          built_r0 = r0;
        }
      int64_t Mg = j->s->Mg, n0 = cb * j->col_block, n1 = MIN (Mg, n0 + j->col_block);
      OwbQgemmEpilogue ep = { .output = j->q->y_unsigned ? OWB_QGEMM_OUT_UINT8 : OWB_QGEMM_OUT_INT8,
                              .bias = j->q->bias ? j->q->bias + grp * Mg : NULL,
                              .scale = j->q->scale + grp * Mg,
                              .y_zero_point = j->q->yzp,
                              .table = j->q->table };
      _owb_qgemm_packed_run (j->s->packs[grp], rn, a, j->K, j->zx, n0, n1, j->y + r0 * j->g->M + grp * Mg, j->g->M,
                             &ep);
    }
  free (a);
  g_free (zrow);
  g_free (edge);
  g_free (edge_y);
}

static void
gather_units (int64_t begin, int64_t end, gpointer data)
{
  const GemmJob *j = data;
  int64_t r0 = begin * j->row_block, r1 = MIN (j->rows, end * j->row_block);
  im2col (j, 0, r0, r1 - r0, j->a + r0 * j->K);
}

/* An ungrouped convolution of few output rows on several threads: every row gathered once (the
 * threads share the rows out), then the packed GEMM on them, whose split gives each thread its
 * own columns. In row-block units each thread read all of B (2.3 MB at ResNet-18's 7x7x512) and
 * gathered its rows again for every column block. */
static void
qconv_gathered (OwbThreadPool *pool, GemmJob *j)
{
  const OwbQconv *s = j->s;
  const Requant *q = j->q;
  uint8_t *a = NULL;
  if (posix_memalign ((void **) &a, 64, (size_t) MAX (j->rows * j->K, 64)) != 0)
    g_error ("out of memory in an integer convolution");
  j->a = a;
  j->row_block = 8;
  owb_parallel_for (pool, (j->rows + j->row_block - 1) / j->row_block, 1, gather_units, j);
  OwbQgemmEpilogue ep = { .output = q->y_unsigned ? OWB_QGEMM_OUT_UINT8 : OWB_QGEMM_OUT_INT8,
                          .bias = q->bias, .scale = q->scale, .y_zero_point = q->yzp, .table = q->table };
  _owb_qgemm_packed (pool, s->packs[0], j->rows, a, j->K, j->zx, j->y, j->g->M, &ep);
  free (a);
}

/* Y (NHWC) of X (NHWC, unsigned, zero point zx). */
static void
qconv_nhwc (OwbThreadPool *pool, const OwbQconv *s, const Geom *g, const uint8_t *x, int32_t zx, uint8_t *y,
            const Requant *q)
{
  int threads = pool ? MAX (owb_thread_pool_get_n_threads (pool), 1) : 1;
  int64_t rows = g->N * g->OH * g->OW;
  if (rows == 0)
    return;
  if (s->dw)
    {
      DwJob j = { s, g, x, zx, y, q, NULL, NULL, 0, FALSE };
      int64_t bound = s->KH * s->KW * 255 * 255;
      for (int64_t c = 0; q->bias && c < s->M && bound < (1 << 24); c++)
        bound = MAX (bound, s->KH * s->KW * 255 * 255 + (q->bias[c] < 0 ? -(int64_t) q->bias[c] : q->bias[c]));
      j.narrow = bound < (1 << 24);
      j.pack_clamps = j.narrow;
      for (int64_t c = 0; c < s->M && j.pack_clamps; c++)
        j.pack_clamps = fabsf (q->scale[c]) < 64.0f;
      int32_t *init = NULL;
      float *scale = NULL;
      uint8_t *zrow = NULL;
      /* a 64-channel block for fewer channels wastes more lanes than the taps save (measured: 3
       * times slower than dw_row_avx512 at 16 channels, 1.7 times faster at 120 and 5x5), unless
       * the lanes hold several pixels (16 or 32 channels, stride 1) */
      if (s->dw8 && (g->C >= 64 || (s->dw_rep > 1 && g->sw == 1)) && (s->KH * s->KW + 3) / 4 * 4 <= DW_VNNI_MAX_TAPS
          && _owb_qgemm_uses_vnni ())
        {
          size_t nl = (size_t) (s->nblocks64 * 64);
          if (posix_memalign ((void **) &init, 64, nl * sizeof (int32_t)) != 0
              || posix_memalign ((void **) &scale, 64, nl * sizeof (float)) != 0)
            g_error ("out of memory in an integer depthwise convolution");
          for (int64_t blk = 0; blk < s->nblocks64; blk++)
            for (int v = 0; v < 4; v++)
              for (int lane = 0; lane < 16; lane++)
                {
                  int64_t c = dw8_channel (s, blk, v, lane), i = blk * 64 + v * 16 + lane;
                  int32_t b = c < s->M && q->bias ? q->bias[c] : 0;
                  init[i] = (int32_t) ((uint32_t) b - (uint32_t) zx * (uint32_t) s->dwsum[i]);
                  scale[i] = c < s->M ? q->scale[c] : 0.0f;
                }
          j.init = init;
          j.scale = scale;
          j.vnni_blocks = s->dw_rep > 1 || g->C % 64 == 0 || g->C % 64 > 16 ? s->nblocks64 : g->C / 64;
          zrow = g_malloc ((gsize) (g->W * g->C + 64));
          memset (zrow, (int) (uint8_t) zx, (size_t) (g->W * g->C + 64));
          j.zrow = zrow;
        }
      else if (!_owb_qgemm_uses_vnni () && _owb_qgemm_uses_avx2 ())
        {
          if (posix_memalign ((void **) &init, 64, (size_t) s->cpad * sizeof (int32_t)) != 0)
            g_error ("out of memory in an integer depthwise convolution");
          for (int64_t c = 0; c < s->cpad; c++)
            init[c] = (int32_t) ((uint32_t) (c < s->M && q->bias ? q->bias[c] : 0)
                                 - (uint32_t) zx * (uint32_t) s->dwpsum[c]);
          j.avx2_init = init;
          /* what dw_row_avx2's edge pixels read for their taps in the padding */
          zrow = g_malloc ((gsize) (g->C + 64));
          memset (zrow, (int) (uint8_t) zx, (size_t) (g->C + 64));
          j.zrow = zrow;
        }
      owb_parallel_for (pool, g->N * g->OH, 1, dw_rows, &j);
      free (init);
      free (scale);
      g_free (zrow);
      return;
    }
  if (s->group == 1 && s->KH == 1 && s->KW == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0
      && g->OH == g->H && g->OW == g->W)
    {
      /* X itself is the GEMM's A [N H W, C] */
      OwbQgemmEpilogue ep = { .output = q->y_unsigned ? OWB_QGEMM_OUT_UINT8 : OWB_QGEMM_OUT_INT8,
                              .bias = q->bias, .scale = q->scale, .y_zero_point = q->yzp, .table = q->table };
      _owb_qgemm_packed (pool, s->packs[0], rows, x, g->C, zx, y, g->M, &ep);
      return;
    }
  if (wino_run (pool, s, g, x, zx, y, q))
    return;
  GemmJob j = { .s = s, .g = g, .x = x, .x_end = x + g->N * g->H * g->W * g->C, .zx = zx, .y = y, .q = q,
                .K = s->KH * s->KW * s->Cg, .rows = rows };
  /* the indirect GEMM when rows have enough interior pixels to fill the register tiles (AMX
   * keeps the gathered rows: its tiles read 16 rows at one stride) */
  j.indirect = s->group == 1 && g->dw == 1 && (s->KW * g->C) % 4 == 0 && s->KH <= 64 && g->OW >= INDIRECT_MIN_OW
               && !_owb_qgemm_uses_amx () && !getenv ("OWB_QCONV_NO_INDIRECT");
  if (threads > 1 && s->group == 1 && !j.indirect && rows < FEW_ROWS * threads
      && rows * j.K <= FEW_ROWS_BYTES)
    {
      qconv_gathered (pool, &j);
      return;
    }
  /* rows in blocks of whole 32-row AMX blocks, small enough to stay in L2, and enough units
   * (row blocks x groups x column blocks) for about four a thread */
  int64_t rb = MAX (32, IM2COL_BLOCK_BYTES / MAX (j.K, 1) / 32 * 32);
  int64_t want = 4 * threads;
  if (threads > 1)
    rb = MIN (rb, MAX (32, ((rows + want - 1) / want + 31) / 32 * 32));
  j.row_block = MIN (rb, rows);
  j.nrb = (rows + j.row_block - 1) / j.row_block;
  /* Without AMX, a multiple of the threads of blocks of equal rows: the pool hands a thread whole
   * units, and 32-row rounding left ResNet-18's 56x56 layers (3136 rows) with 1664 rows on one
   * thread and 1472 on the other, and its 28x28 ones with 7 blocks, too uneven for the other
   * thread to take a unit over */
  if (threads > 1 && !_owb_qgemm_uses_amx () && j.nrb > 1)
    {
      int64_t nrb = MIN (rows, (j.nrb + threads - 1) / threads * threads);
      j.row_block = (rows + nrb - 1) / nrb;
      j.nrb = (rows + j.row_block - 1) / j.row_block;
    }
  int64_t ntiles = (s->Mg + 63) / 64, ncb = 1;
  if (threads > 1 && j.nrb * s->group < want)
    ncb = MIN (ntiles, (want + j.nrb * s->group - 1) / (j.nrb * s->group));
  j.col_block = (ntiles + ncb - 1) / ncb * 64;
  j.ncb = (s->Mg + j.col_block - 1) / j.col_block;
  owb_parallel_for (pool, j.nrb * s->group * j.ncb, 1, gemm_units, &j);
}

/* ---- NCHW <-> NHWC of 8-bit tensors ---- */

typedef struct {
  const uint8_t *src;
  uint8_t *dst;
  int64_t C, HW, ntiles;
  uint8_t flip; /* XORed into each byte: 0x80 turns int8 into uint8 shifted by 128 */
  gboolean to_nhwc;
} TransposeJob;

#define TILE 64

static void
transpose_units (int64_t begin, int64_t end, gpointer data)
{
  const TransposeJob *j = data;
  for (int64_t u = begin; u < end; u++)
    {
      int64_t n = u / j->ntiles, p0 = u % j->ntiles * TILE, pn = MIN (TILE, j->HW - p0);
      const uint8_t *src = j->src + n * j->C * j->HW;
      uint8_t *dst = j->dst + n * j->C * j->HW;
      if (j->to_nhwc)
        for (int64_t c = 0; c < j->C; c++)
          for (int64_t p = 0; p < pn; p++)
            dst[(p0 + p) * j->C + c] = src[c * j->HW + p0 + p] ^ j->flip;
      else
        for (int64_t c = 0; c < j->C; c++)
          for (int64_t p = 0; p < pn; p++)
            dst[c * j->HW + p0 + p] = src[(p0 + p) * j->C + c] ^ j->flip;
    }
}

static void
transpose8 (OwbThreadPool *pool, const uint8_t *src, uint8_t *dst, int64_t N, int64_t C, int64_t HW, uint8_t flip,
            gboolean to_nhwc)
{
  TransposeJob j = { src, dst, C, HW, (HW + TILE - 1) / TILE, flip, to_nhwc };
  owb_parallel_for (pool, N * j.ntiles, MAX (1, 4096 / MAX (C * TILE, 1)), transpose_units, &j);
}

typedef struct {
  const uint8_t *src;
  uint8_t *dst;
} FlipJob;

static void
flip_units (int64_t begin, int64_t end, gpointer data)
{
  const FlipJob *j = data;
  for (int64_t i = begin; i < end; i++)
    j->dst[i] = j->src[i] ^ 0x80;
}

/* ---- the op ---- */

gboolean
_owb_cpu_qconv_run (OwbKernelContext *ctx)
{
  const OwbQconv *s = ctx->state;
  if (!s || ctx->n_inputs < 8 || ctx->n_outputs < 1)
    return FALSE;
  const OwbTensor *x = ctx->inputs[0], *xs = ctx->inputs[1], *xzp = ctx->inputs[2];
  const OwbTensor *w = ctx->inputs[3], *ws = ctx->inputs[4];
  const OwbTensor *ys = ctx->inputs[6], *yzp = ctx->inputs[7];
  const OwbTensor *bias = ctx->n_inputs > 8 ? ctx->inputs[8] : NULL;
  OwbTensor *y = ctx->outputs[0];
  Geom g;
  if (w != s->w || !x || !y || !xs || !xzp || !ws || !ys || !yzp || !_owb_cpu_q_is_8bit (y->dtype)
      || x->dtype != (s->x_unsigned ? OWB_TYPE_UINT8 : OWB_TYPE_INT8) || !geometry (s, ctx->node, x, y, &g))
    return FALSE;
  if (xs->dtype != OWB_TYPE_FLOAT || ws->dtype != OWB_TYPE_FLOAT || ys->dtype != OWB_TYPE_FLOAT
      || xs->nelems != 1 || xzp->nelems != 1 || ys->nelems != 1 || yzp->nelems != 1
      || (ws->nelems != 1 && ws->nelems != s->M) || xzp->dtype != x->dtype || yzp->dtype != y->dtype)
    return FALSE;
  if (bias && (bias->dtype != OWB_TYPE_INT32 || bias->nelems != s->M))
    return FALSE;
  /* NhwcQLinearConv's Table (a QLinearLookup fused into it): 256 bytes of Y's type */
  const OwbTensor *table = s->nhwc && ctx->n_inputs > 9 ? ctx->inputs[9] : NULL;
  if (table && (table->nelems != 256 || table->dtype != y->dtype))
    return FALSE;
  if (y->nelems == 0)
    return TRUE;
  float xsf = ((const float *) xs->data)[0], ysf = ((const float *) ys->data)[0];
  const float *wsf = ws->data;
  float *scale = g_new (float, s->M + 16);
  /* as the reference: (x_scale w_scale) rounded to float, divided by y_scale, rounded to float */
  for (int64_t m = 0; m < s->M; m++)
    scale[m] = (float) ((double) (float) ((double) xsf * wsf[ws->nelems == 1 ? 0 : m]) / ysf);
  Requant q = { .scale = scale, .bias = bias ? bias->data : NULL, .yzp = (int32_t) owb_tensor_get_double (yzp, 0),
                .y_unsigned = y->dtype == OWB_TYPE_UINT8, .table = table ? table->data : NULL };
  int32_t zx = (int32_t) owb_tensor_get_double (xzp, 0);
  uint8_t flip = s->x_unsigned ? 0 : 0x80;
  if (flip)
    zx += 128;
  int64_t HW = g.H * g.W, OHW = g.OH * g.OW;
  const uint8_t *xu = x->data;
  uint8_t *xcopy = NULL, *ycopy = NULL;
  if (!s->nhwc && g.C > 1 && HW > 1)
    {
      xcopy = g_malloc (MAX (x->nelems, 1));
      transpose8 (ctx->pool, x->data, xcopy, g.N, g.C, HW, flip, TRUE);
      xu = xcopy;
    }
  else if (flip)
    {
      xcopy = g_malloc (MAX (x->nelems, 1));
      FlipJob fj = { x->data, xcopy };
      owb_parallel_for (ctx->pool, x->nelems, 65536, flip_units, &fj);
      xu = xcopy;
    }
  uint8_t *yu = y->data;
  gboolean y_transpose = !s->nhwc && g.M > 1 && OHW > 1;
  if (y_transpose)
    yu = ycopy = g_malloc (MAX (y->nelems, 1));
  qconv_nhwc (ctx->pool, s, &g, xu, zx, yu, &q);
  if (y_transpose)
    transpose8 (ctx->pool, ycopy, y->data, g.N, g.M, OHW, 0, FALSE);
  g_free (xcopy);
  g_free (ycopy);
  g_free (scale);
  return TRUE;
}
