/* cpu-depthwise-avx512.c: one output row of a channels-last depthwise convolution in 16-lane
 * AVX-512 vectors, the activation applied in registers as each vector is stored.
 *
 * The 8-lane kernels of layout.c run everywhere; where the CPU has AVX-512 this row runs instead.
 * Channels go in blocks of 32 (two vectors) or 16, and the last partial block (24, 40, 72, 120...
 * channels) is one masked vector: masked loads neither fault nor read past it, so no channel is
 * left to a scalar loop. Interior pixels go four at a time, each weight vector loaded once for
 * the four; with stride 1 and 3 or 5 taps the four slide over KW + 3 input vectors per tap row.
 * Border pixels too go four at a time, their loads from outside the row reading zeros. */
#include "cpu-depthwise-avx512-private.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "cpu-avx512-private.h"

#define AI OWB_AVX512_INLINE

typedef struct {
  const float *first; /* the input row under tap row kh0 */
  int64_t rstep;      /* floats from one tap row's input row to the next */
  const float *w, *bias;
  int64_t C, IW, KW, dw, kh0, kh1;
  float p0, p1;
} Row;

/* The activation of y; comparisons ordered so that NaN passes through (max/min return their second
 * operand when either is NaN). */
AI __m512
act512 (__m512 y, const OwbCpuActivationKind KIND, float p0, float p1)
{
  const __m512 zero = _mm512_setzero_ps (), one = _mm512_set1_ps (1.0f);
  __m512 t;
  switch (KIND)
    {
    case OWB_CPU_ACT_RELU:
      return _mm512_max_ps (zero, y);
    case OWB_CPU_ACT_LEAKY_RELU:
      return _mm512_mask_mul_ps (y, _mm512_cmp_ps_mask (y, zero, _CMP_LT_OQ), y, _mm512_set1_ps (p0));
    case OWB_CPU_ACT_CLIP:
      return _mm512_min_ps (_mm512_set1_ps (p1), _mm512_max_ps (_mm512_set1_ps (p0), y));
    case OWB_CPU_ACT_HARD_SIGMOID:
    case OWB_CPU_ACT_HARD_SWISH:
      t = _mm512_fmadd_ps (y, _mm512_set1_ps (p0), _mm512_set1_ps (p1));
      t = _mm512_min_ps (one, _mm512_max_ps (zero, t));
      return KIND == OWB_CPU_ACT_HARD_SWISH ? _mm512_mul_ps (y, t) : t;
    case OWB_CPU_ACT_SIGMOID:
    case OWB_CPU_ACT_SWISH:
      return owb_sigmoid512 (y, KIND == OWB_CPU_ACT_SWISH);
    default:
      return y;
    }
}

AI __m512
ld (const float *p, __mmask16 m)
{
  return _mm512_maskz_loadu_ps (m, p);
}

AI const float *
tap_row (const Row *d, int64_t kh)
{
  return d->first + (kh - d->kh0) * d->rstep;
}

/* Zeros that a load from outside the row reads instead (two vectors' worth). */
static const float zeros[32] __attribute__ ((aligned (64)));

/* Where a load from input column col (at p) reads: p inside the row, the zeros outside it, where
 * EDGE says a group may reach past the row's ends. (Masked-off loads at p, which read nothing,
 * made 20 5x5 depthwise layers on 7x7 x 576 take 0.333 ms instead of 0.308 at one thread.) */
AI const float *
col_src (const int EDGE, const float *p, int64_t col, int64_t IW)
{
  return EDGE && (uint64_t) col >= (uint64_t) IW ? zeros : p;
}

/* Accumulators of four pixels x NV vectors of channels from c0 start at the bias. */
AI void
acc_init (__m512 acc[4][2], const Row *d, int64_t c0, const int NV, const __mmask16 *mv)
{
#pragma GCC unroll 2
  for (int v = 0; v < NV; v++)
    {
      __m512 b = d->bias ? ld (d->bias + c0 + v * 16, mv[v]) : _mm512_setzero_ps ();
#pragma GCC unroll 4
      for (int p = 0; p < 4; p++)
        acc[p][v] = b;
    }
}

/* Stores the first np of the four pixels (all four unless EDGE), activated. */
AI void
acc_store (__m512 acc[4][2], const Row *d, float *yp, int64_t c0, const int NV, const __mmask16 *mv, int64_t np,
           const OwbCpuActivationKind KIND, const int EDGE)
{
#pragma GCC unroll 4
  for (int p = 0; p < 4; p++)
#pragma GCC unroll 2
    for (int v = 0; v < NV; v++)
      _mm512_mask_storeu_ps (yp + p * d->C + c0 + v * 16, EDGE && p >= np ? 0 : mv[v],
                             act512 (acc[p][v], KIND, d->p0, d->p1));
}

/* Four adjacent pixels (the first one's first tap at input column iw0; only the first np stored),
 * NV (1 or 2) vectors of channels from c0 (the second, or the only one, under mask m): each
 * weight vector serves the four. */
AI void
four_pixels (const Row *d, float *yp, int64_t iw0, int64_t sw, int64_t np, int64_t c0, const int64_t KW,
             const int NV, __mmask16 m, const OwbCpuActivationKind KIND, const int EDGE)
{
  const int64_t C = d->C, dw = d->dw, IW = d->IW;
  const __mmask16 mv[2] = { NV == 2 ? 0xffff : m, m };
  __m512 acc[4][2];
  acc_init (acc, d, c0, NV, mv);
  for (int64_t kh = d->kh0; kh < d->kh1; kh++)
    {
      const float *xr = tap_row (d, kh) + iw0 * C + c0, *wr = d->w + kh * KW * C + c0;
#pragma GCC unroll 5
      for (int64_t kw = 0; kw < KW; kw++)
        {
          const float *xp = xr + kw * dw * C;
#pragma GCC unroll 2
          for (int v = 0; v < NV; v++)
            {
              __m512 wv = ld (wr + kw * C + v * 16, mv[v]);
#pragma GCC unroll 4
              for (int p = 0; p < 4; p++)
                {
                  const float *src = col_src (EDGE, xp + p * sw * C, iw0 + p * sw + kw * dw, IW);
                  acc[p][v] = _mm512_fmadd_ps (ld (src + v * 16, mv[v]), wv, acc[p][v]);
                }
            }
        }
    }
  acc_store (acc, d, yp, c0, NV, mv, np, KIND, EDGE);
}

/* Stride and dilation 1, KW of 3 or 5: the four pixels read KW + 3 adjacent input vectors per tap
 * row, each loaded once and used by up to KW of them. */
AI void
four_pixels_s1 (const Row *d, float *yp, int64_t iw0, int64_t np, int64_t c0, const int KW, const int NV,
                __mmask16 m, const OwbCpuActivationKind KIND, const int EDGE)
{
  const int64_t C = d->C, IW = d->IW;
  const __mmask16 mv[2] = { NV == 2 ? 0xffff : m, m };
  __m512 acc[4][2];
  acc_init (acc, d, c0, NV, mv);
  for (int64_t kh = d->kh0; kh < d->kh1; kh++)
    {
      const float *xr = tap_row (d, kh) + iw0 * C + c0, *wr = d->w + kh * KW * C + c0;
#pragma GCC unroll 2
      for (int v = 0; v < NV; v++)
        {
          __m512 x[8];
#pragma GCC unroll 8
          for (int i = 0; i < KW + 3; i++)
            x[i] = ld (col_src (EDGE, xr + i * C, iw0 + i, IW) + v * 16, mv[v]);
#pragma GCC unroll 5
          for (int kw = 0; kw < KW; kw++)
            {
              __m512 wv = ld (wr + kw * C + v * 16, mv[v]);
#pragma GCC unroll 4
              for (int p = 0; p < 4; p++)
                acc[p][v] = _mm512_fmadd_ps (x[p + kw], wv, acc[p][v]);
            }
        }
    }
  acc_store (acc, d, yp, c0, NV, mv, np, KIND, EDGE);
}

/* Four pixels from yp (np of them stored), NV vectors of channels from c0 (the last under mask m);
 * EDGE where their taps may reach past the row's ends. */
AI void
four_group (const Row *d, float *yp, int64_t iw0, int64_t sw, int64_t np, int64_t c0, const int NV, __mmask16 m,
            const OwbCpuActivationKind KIND, const int EDGE)
{
  const int64_t KW = d->KW;
  if (sw == 1 && d->dw == 1 && KW == 3)
    four_pixels_s1 (d, yp, iw0, np, c0, 3, NV, m, KIND, EDGE);
  else if (sw == 1 && d->dw == 1 && KW == 5)
    four_pixels_s1 (d, yp, iw0, np, c0, 5, NV, m, KIND, EDGE);
  else if (KW == 3)
    four_pixels (d, yp, iw0, sw, np, c0, 3, NV, m, KIND, EDGE);
  else if (KW == 5)
    four_pixels (d, yp, iw0, sw, np, c0, 5, NV, m, KIND, EDGE);
  else
    four_pixels (d, yp, iw0, sw, np, c0, KW, NV, m, KIND, EDGE);
}

/* The row's pixels from yrow, four at a time, over channels [c0, c0 + 16 NV) (the last vector
 * under m). */
AI void
channel_block (const Row *d, float *yrow, int64_t OW, int64_t sw, int64_t pw, int64_t span, int64_t c0,
               const int NV, __mmask16 m, const OwbCpuActivationKind KIND)
{
  const int64_t C = d->C, IW = d->IW;
  for (int64_t ow = 0; ow < OW; ow += 4)
    {
      int64_t iw0 = ow * sw - pw, np = MIN (4, OW - ow);
      if (np == 4 && iw0 >= 0 && iw0 + span <= IW)
        four_group (d, yrow + ow * C, iw0, sw, 4, c0, NV, m, KIND, 0);
      else
        four_group (d, yrow + ow * C, iw0, sw, np, c0, NV, m, KIND, 1);
    }
}

/* Output pixels go four at a time. In a group whose taps reach past the row's ends (or that has
 * fewer than four pixels, at the row's end) the loads from columns outside the row read zeros, as
 * the padding would (col_src): taken one pixel at a time, every tap cost
 * two loads, and on a 7x7 image with 5x5 taps no pixel is interior (mnasnet's last stages ran at
 * 2.5x ORT's time).
 *
 * Where the input under a group (tap rows x columns x channels) fits L1 easily, a group runs over
 * all its channels, its outputs stored contiguously; where it does not (5x5 taps over 240 or 576
 * channels), channel blocks are the outer loop, so that one block's columns stay in L1 from one
 * group to the next. Each order was 10-30% slower on the other's layers (56x56x144 3x3,
 * 14x14x240 and 7x7x576 5x5). */
AI void
output_row (const OwbCpuConvGeom *g, const Row *d, float *yrow, const OwbCpuActivationKind KIND)
{
  const int64_t OW = g->out[1], KW = g->k[1], C = g->C, sw = g->s[1], dw = g->d[1], pw = g->pad[1];
  const int64_t span = 3 * sw + (KW - 1) * dw + 1; /* input columns under four pixels */
  gboolean blocks_outer = (d->kh1 - d->kh0) * span * C * (int64_t) sizeof (float) > 16 * 1024;
  if (blocks_outer)
    {
      for (int64_t c0 = 0; c0 < C;)
        {
          int64_t left = C - c0;
          if (left >= 32)
            channel_block (d, yrow, OW, sw, pw, span, c0, 2, 0xffff, KIND);
          else
            channel_block (d, yrow, OW, sw, pw, span, c0, 1,
                           left >= 16 ? 0xffff : (__mmask16) ((1u << left) - 1), KIND);
          c0 += left >= 32 ? 32 : 16;
        }
      return;
    }
  for (int64_t ow = 0; ow < OW; ow += 4)
    {
      int64_t iw0 = ow * sw - pw, np = MIN (4, OW - ow);
      const int edge = !(np == 4 && iw0 >= 0 && iw0 + span <= d->IW);
      for (int64_t c0 = 0; c0 < C;)
        {
          int64_t left = C - c0;
          __mmask16 m = left >= 16 ? 0xffff : (__mmask16) ((1u << left) - 1);
          if (left >= 32 && !edge)
            four_group (d, yrow + ow * C, iw0, sw, 4, c0, 2, 0xffff, KIND, 0);
          else if (left >= 32)
            four_group (d, yrow + ow * C, iw0, sw, np, c0, 2, 0xffff, KIND, 1);
          else if (!edge)
            four_group (d, yrow + ow * C, iw0, sw, 4, c0, 1, m, KIND, 0);
          else
            four_group (d, yrow + ow * C, iw0, sw, np, c0, 1, m, KIND, 1);
          c0 += left >= 32 ? 32 : 16;
        }
    }
}

/* CALL with the activation kind as a constant. */
#define FOR_KIND(CALL)                                                                                            \
  switch (kind)                                                                                                   \
    {                                                                                                             \
    case OWB_CPU_ACT_RELU: CALL (OWB_CPU_ACT_RELU); break;                                                        \
    case OWB_CPU_ACT_LEAKY_RELU: CALL (OWB_CPU_ACT_LEAKY_RELU); break;                                            \
    case OWB_CPU_ACT_CLIP: CALL (OWB_CPU_ACT_CLIP); break;                                                        \
    case OWB_CPU_ACT_HARD_SIGMOID: CALL (OWB_CPU_ACT_HARD_SIGMOID); break;                                        \
    case OWB_CPU_ACT_HARD_SWISH: CALL (OWB_CPU_ACT_HARD_SWISH); break;                                            \
    case OWB_CPU_ACT_SIGMOID: CALL (OWB_CPU_ACT_SIGMOID); break;                                                   \
    case OWB_CPU_ACT_SWISH: CALL (OWB_CPU_ACT_SWISH); break;                                                      \
    default: CALL (OWB_CPU_ACT_NONE); break;                                                                      \
    }

static OWB_AVX512 void
row_avx512 (const OwbCpuConvGeom *g, const Row *d, OwbCpuActivationKind kind, float *yrow)
{
#define ROW(K) output_row (g, d, yrow, K)
  FOR_KIND (ROW)
#undef ROW
}

#endif

static int force_off;

gboolean
_owb_cpu_dw_avx512_usable (void)
{
#if defined(__x86_64__) && defined(__GNUC__)
  return !g_atomic_int_get (&force_off) && _owb_cpu_has_avx512 ();
#else
  return FALSE;
#endif
}

void
_owb_cpu_dw_avx512_force_off (gboolean off)
{
  g_atomic_int_set (&force_off, off ? 1 : 0);
}

gboolean
_owb_cpu_dw_avx512_in_register (OwbCpuActivationKind kind)
{
  switch (kind)
    {
    case OWB_CPU_ACT_NONE:
    case OWB_CPU_ACT_RELU:
    case OWB_CPU_ACT_LEAKY_RELU:
    case OWB_CPU_ACT_CLIP:
    case OWB_CPU_ACT_HARD_SIGMOID:
    case OWB_CPU_ACT_HARD_SWISH:
    case OWB_CPU_ACT_SIGMOID:
    case OWB_CPU_ACT_SWISH:
      return TRUE;
    default:
      return FALSE;
    }
}

void
_owb_cpu_dw_row_avx512 (const OwbCpuConvGeom *g, const float *w, const float *bias, const OwbCpuActivation *act,
                        OwbCpuActivationKind kind, const float *first, int64_t rstep, int64_t kh0, int64_t kh1,
                        float *yrow)
{
#if defined(__x86_64__) && defined(__GNUC__)
  Row d = { .first = first, .rstep = rstep, .w = w, .bias = bias, .C = g->C, .IW = g->in[1], .KW = g->k[1],
            .dw = g->d[1], .kh0 = kh0, .kh1 = kh1, .p0 = act ? act->p0 : 0, .p1 = act ? act->p1 : 0 };
  row_avx512 (g, &d, _owb_cpu_dw_avx512_in_register (kind) ? kind : OWB_CPU_ACT_NONE, yrow);
#else
  (void) g, (void) w, (void) bias, (void) act, (void) kind, (void) first, (void) rstep, (void) kh0, (void) kh1,
    (void) yrow;
  g_return_if_reached ();
#endif
}

