/* cpu-depthwise.c: direct depthwise convolution (one input channel per group, 1-D or 2-D) for Conv
 * and FusedConv, with AVX2+FMA code chosen at run time and a portable 16-byte fallback. */
#include "cpu-conv-private.h"

#include <string.h>

/* Each output plane first copies its input plane into a zero-bordered scratch plane, so that every
 * tap of every output, edges included, reads in bounds: the row loops need no edge cases, and a
 * partial last vector of a row may read (and compute) past the row's end into the border. */

typedef struct {
  const OwbCpuConvGeom *g;
  OwbDataType dtype;
  const void *x, *w, *bias;
  void *y;
  OwbCpuRowEpilogue epilogue;
  gconstpointer epilogue_data;
  int64_t PH, PW; /* scratch plane rows and row length */
  int lanes;      /* of the vector code in use: rows are computed in multiples of it */
  gboolean avx2;
} Job;

gboolean
_owb_cpu_conv_is_depthwise (const OwbCpuConvGeom *g)
{
  return g->nsp >= 1 && g->nsp <= 2 && g->Cg == 1;
}

/* The scratch plane of output plane `plane`: rows [0, PH) are input rows [-ph, PH - ph), columns
 * [0, PW) input columns [-pw, PW - pw), zero outside the input. */
#define DEFINE_PAD(T, NAME)                                                                                     \
  static void pad_plane_##NAME (const Job *j, const T *xp, T *pad)                                           \
  {                                                                                                          \
    const OwbCpuConvGeom *g = j->g;                                                                          \
    gboolean two = g->nsp == 2;                                                                              \
    int64_t IH = two ? g->in[0] : 1, IW = g->in[g->nsp - 1];                                                 \
    int64_t ph = two ? g->pad[0] : 0, pw = g->pad[g->nsp - 1];                                               \
    int64_t PW = j->PW, c0 = MIN (pw, PW), c1 = CLAMP (pw + IW, c0, PW);                                     \
    for (int64_t r = 0; r < j->PH; r++)                                                                      \
      {                                                                                                      \
        T *dst = pad + r * PW;                                                                               \
        int64_t ir = r - ph;                                                                                 \
        if (ir < 0 || ir >= IH)                                                                              \
          {                                                                                                  \
            memset (dst, 0, PW * sizeof (T));                                                                \
            continue;                                                                                        \
          }                                                                                                  \
        memset (dst, 0, c0 * sizeof (T));                                                                    \
        if (c1 > c0)                                                                                         \
          memcpy (dst + c0, xp + ir * IW + (c0 - pw), (c1 - c0) * sizeof (T));                               \
        memset (dst + c1, 0, (PW - c1) * sizeof (T));                                                        \
      }                                                                                                      \
  }

OWB_CPU_FOR_FLOATS (DEFINE_PAD)

/* Row kernels over the scratch plane, stamped per type and per vector width (SFX): `out` receives
 * ceil(OW / L) * L values of the output row whose first tap row is `p`. Inlined with constant
 * kernel sizes, the 3x3 (and 5x5) cases keep their weights in registers. */
/* Lanes of two vectors picked by an index vector: GCC's __builtin_shuffle; clang (the fuzzing
 * build) has only constant-index shuffles, so lane by lane there. */
#if defined(__clang__)
#define SHUFFLE2(V, L, lo, hi, mask)                                                                               \
  ({                                                                                                               \
    V shuffled_;                                                                                                   \
    for (int lane_ = 0; lane_ < (L); lane_++)                                                                      \
      shuffled_[lane_] = (mask)[lane_] < (L) ? (lo)[(mask)[lane_]] : (hi)[(mask)[lane_] - (L)];                    \
    shuffled_;                                                                                                     \
  })
#else
#define SHUFFLE2(V, L, lo, hi, mask) __builtin_shuffle ((lo), (hi), (mask))
#endif

#define DEFINE_ROWS(T, NAME, IT, VB, SFX, ATTR)                                                                    \
  typedef T v_##NAME##SFX __attribute__ ((vector_size (VB)));                                                     \
  typedef IT vi_##NAME##SFX __attribute__ ((vector_size (VB)));                                                   \
  enum { L_##NAME##SFX = VB / sizeof (T) };                                                                       \
                                                                                                                   \
  ATTR static inline v_##NAME##SFX load_##NAME##SFX (const T *p)                                                  \
  {                                                                                                                \
    v_##NAME##SFX v;                                                                                               \
    memcpy (&v, p, sizeof v);                                                                                      \
    return v;                                                                                                      \
  }                                                                                                                \
                                                                                                                   \
  /* stride 1, any kernel and dilation; two vectors per step so that two FMA chains overlap */                    \
  ATTR static inline __attribute__ ((always_inline)) void row_s1_##NAME##SFX (                                    \
    const T *p, int64_t PW, const T *w, int KH, int KW, int64_t dh, int64_t dw, T b0, T *out, int64_t OWr)         \
  {                                                                                                                \
    enum { L = L_##NAME##SFX };                                                                                    \
    int64_t ow = 0;                                                                                                \
    for (; ow + 2 * L <= OWr; ow += 2 * L)                                                                         \
      {                                                                                                            \
        v_##NAME##SFX a0 = (v_##NAME##SFX) {} + b0, a1 = a0;                                                       \
        for (int kh = 0; kh < KH; kh++)                                                                            \
          {                                                                                                        \
            const T *r = p + kh * dh * PW + ow;                                                                    \
            for (int kw = 0; kw < KW; kw++)                                                                        \
              {                                                                                                    \
                T wt = w[kh * KW + kw];                                                                            \
                a0 += wt * load_##NAME##SFX (r + kw * dw);                                                         \
                a1 += wt * load_##NAME##SFX (r + kw * dw + L);                                                     \
              }                                                                                                    \
          }                                                                                                        \
        memcpy (out + ow, &a0, sizeof a0);                                                                         \
        memcpy (out + ow + L, &a1, sizeof a1);                                                                     \
      }                                                                                                            \
    for (; ow < OWr; ow += L)                                                                                      \
      {                                                                                                            \
        v_##NAME##SFX a0 = (v_##NAME##SFX) {} + b0;                                                                \
        for (int kh = 0; kh < KH; kh++)                                                                            \
          for (int kw = 0; kw < KW; kw++)                                                                          \
            a0 += w[kh * KW + kw] * load_##NAME##SFX (p + kh * dh * PW + ow + kw * dw);                            \
        memcpy (out + ow, &a0, sizeof a0);                                                                         \
      }                                                                                                            \
  }                                                                                                                \
                                                                                                                   \
  /* stride 2, dilation 1: output lanes read every other input, split out of two loads into even and              \
   * odd lanes (tap kw is the even or odd half of the pair loaded at 2 ow + (kw & ~1)) */                         \
  ATTR static inline __attribute__ ((always_inline)) void row_s2_##NAME##SFX (                                    \
    const T *p, int64_t PW, const T *w, int KH, int KW, int64_t dh, T b0, T *out, int64_t OWr)                     \
  {                                                                                                                \
    enum { L = L_##NAME##SFX };                                                                                    \
    vi_##NAME##SFX even, odd;                                                                                      \
    for (int i = 0; i < L; i++)                                                                                    \
      {                                                                                                            \
        even[i] = 2 * i;                                                                                           \
        odd[i] = 2 * i + 1;                                                                                        \
      }                                                                                                            \
    for (int64_t ow = 0; ow < OWr; ow += L)                                                                        \
      {                                                                                                            \
        v_##NAME##SFX acc = (v_##NAME##SFX) {} + b0;                                                               \
        for (int kh = 0; kh < KH; kh++)                                                                            \
          {                                                                                                        \
            const T *r = p + kh * dh * PW + 2 * ow;                                                                \
            for (int kw = 0; kw < KW; kw += 2)                                                                     \
              {                                                                                                    \
                v_##NAME##SFX lo = load_##NAME##SFX (r + kw), hi = load_##NAME##SFX (r + kw + L);                  \
                acc += w[kh * KW + kw] * SHUFFLE2 (v_##NAME##SFX, L, lo, hi, even);                                \
                if (kw + 1 < KW)                                                                                   \
                  acc += w[kh * KW + kw + 1] * SHUFFLE2 (v_##NAME##SFX, L, lo, hi, odd);                           \
              }                                                                                                    \
          }                                                                                                        \
        memcpy (out + ow, &acc, sizeof acc);                                                                       \
      }                                                                                                            \
  }                                                                                                                \
                                                                                                                   \
  /* One output plane; `tmp` holds a row when the row length is not a multiple of the vector. */                 \
  ATTR static void plane_##NAME##SFX (const Job *j, int64_t plane, T *pad, T *tmp)                                \
  {                                                                                                                \
    enum { L = L_##NAME##SFX };                                                                                    \
    const OwbCpuConvGeom *g = j->g;                                                                                \
    gboolean two = g->nsp == 2;                                                                                    \
    int64_t OH = two ? g->out[0] : 1, OW = g->out[g->nsp - 1];                                                     \
    int KH = (int) (two ? g->k[0] : 1), KW = (int) g->k[g->nsp - 1];                                               \
    int64_t sh = two ? g->s[0] : 1, sw = g->s[g->nsp - 1];                                                         \
    int64_t dh = two ? g->d[0] : 1, dw = g->d[g->nsp - 1];                                                         \
    int64_t PW = j->PW, OWr = (OW + L - 1) / L * L;                                                                \
    int64_t n = plane / g->M, m = plane % g->M;                                                                    \
    const T *xp = (const T *) j->x + (n * g->C + m / g->Mg) * g->in_size;                                          \
    const T *w = (const T *) j->w + m * g->ksize;                                                                   \
    T b0 = j->bias ? ((const T *) j->bias)[m] : (T) 0;                                                             \
    T *yp = (T *) j->y + plane * g->out_size;                                                                      \
    pad_plane_##NAME (j, xp, pad);                                                                                 \
    int64_t pending = 0; /* first row not yet through the epilogue */                                             \
    for (int64_t oh = 0; oh < OH; oh++)                                                                            \
      {                                                                                                            \
        const T *p = pad + oh * sh * PW;                                                                           \
        T *yrow = yp + oh * OW, *out = OW == OWr ? yrow : tmp;                                                     \
        if (sw == 1 && KH == 3 && KW == 3 && dw == 1)                                                              \
          row_s1_##NAME##SFX (p, PW, w, 3, 3, dh, 1, b0, out, OWr);                                                \
        else if (sw == 1 && KH == 5 && KW == 5 && dw == 1)                                                         \
          row_s1_##NAME##SFX (p, PW, w, 5, 5, dh, 1, b0, out, OWr);                                                \
        else if (sw == 1)                                                                                          \
          row_s1_##NAME##SFX (p, PW, w, KH, KW, dh, dw, b0, out, OWr);                                             \
        else if (sw == 2 && dw == 1 && KH == 3 && KW == 3)                                                         \
          row_s2_##NAME##SFX (p, PW, w, 3, 3, dh, b0, out, OWr);                                                   \
        else if (sw == 2 && dw == 1 && KH == 5 && KW == 5)                                                         \
          row_s2_##NAME##SFX (p, PW, w, 5, 5, dh, b0, out, OWr);                                                   \
        else if (sw == 2 && dw == 1)                                                                               \
          row_s2_##NAME##SFX (p, PW, w, KH, KW, dh, b0, out, OWr);                                                 \
        else                                                                                                       \
          {                                                                                                        \
            out = yrow;                                                                                            \
            for (int64_t ow = 0; ow < OW; ow++)                                                                    \
              {                                                                                                    \
                T acc = b0;                                                                                        \
                for (int kh = 0; kh < KH; kh++)                                                                    \
                  for (int kw = 0; kw < KW; kw++)                                                                  \
                    acc += w[kh * KW + kw] * p[kh * dh * PW + ow * sw + kw * dw];                                  \
                yrow[ow] = acc;                                                                                    \
              }                                                                                                    \
          }                                                                                                        \
        if (out != yrow)                                                                                           \
          memcpy (yrow, out, OW * sizeof (T));                                                                     \
        /* the epilogue over runs of rows (contiguous in Y) of about 2K values, still in cache */              \
        if (j->epilogue && (oh + 1 == OH || (oh + 1 - pending) * OW >= 2048))                                      \
          {                                                                                                        \
            j->epilogue (yp + pending * OW, plane * g->out_size + pending * OW, (oh + 1 - pending) * OW,            \
                         j->epilogue_data);                                                                        \
            pending = oh + 1;                                                                                      \
          }                                                                                                        \
      }                                                                                                            \
  }

#define TARGET_AVX2 __attribute__ ((target ("avx2,fma")))
#if defined(__x86_64__) || defined(__i386__)
#define HAVE_AVX2_CODE 1
DEFINE_ROWS (float, FLOAT, int32_t, 32, _avx2, TARGET_AVX2)
DEFINE_ROWS (double, DOUBLE, int64_t, 32, _avx2, TARGET_AVX2)
#endif
DEFINE_ROWS (float, FLOAT, int32_t, 16, _base, )
DEFINE_ROWS (double, DOUBLE, int64_t, 16, _base, )

static void
planes_chunk (int64_t begin, int64_t end, gpointer data)
{
  const Job *j = data;
  gsize es = owb_data_type_size (j->dtype);
  /* scratch plane, then one row (with a vector of slack) */
  char *scratch = g_malloc ((j->PH * j->PW + j->PW + 8) * es);
  void *pad = scratch, *tmp = scratch + j->PH * j->PW * es;
  for (int64_t plane = begin; plane < end; plane++)
    {
      gboolean dbl = j->dtype == OWB_TYPE_DOUBLE;
#ifdef HAVE_AVX2_CODE
      if (j->avx2)
        {
          if (dbl)
            plane_DOUBLE_avx2 (j, plane, pad, tmp);
          else
            plane_FLOAT_avx2 (j, plane, pad, tmp);
          continue;
        }
#endif
      if (dbl)
        plane_DOUBLE_base (j, plane, pad, tmp);
      else
        plane_FLOAT_base (j, plane, pad, tmp);
    }
  g_free (scratch);
}

void
_owb_cpu_depthwise_conv (OwbThreadPool *pool, const OwbCpuConvGeom *g, OwbDataType dtype, const void *x,
                         const void *w, const void *bias, void *y, OwbCpuRowEpilogue epilogue,
                         gconstpointer epilogue_data)
{
  g_return_if_fail (_owb_cpu_conv_is_depthwise (g) && (dtype == OWB_TYPE_FLOAT || dtype == OWB_TYPE_DOUBLE));
  if (g->N == 0 || g->M == 0 || g->out_size == 0)
    return;
  Job j = { g, dtype, x, w, bias, y, epilogue, epilogue_data, 0, 0, 0, FALSE };
#ifdef HAVE_AVX2_CODE
  j.avx2 = _owb_cpu_has_avx2_fma ();
#endif
  j.lanes = (j.avx2 ? 32 : 16) / (int) owb_data_type_size (dtype);
  gboolean two = g->nsp == 2;
  int64_t OH = two ? g->out[0] : 1, OW = g->out[g->nsp - 1];
  int64_t KH = two ? g->k[0] : 1, KW = g->k[g->nsp - 1];
  int64_t sh = two ? g->s[0] : 1, sw = g->s[g->nsp - 1];
  int64_t dh = two ? g->d[0] : 1, dw = g->d[g->nsp - 1];
  int64_t OWr = (OW + j.lanes - 1) / j.lanes * j.lanes;
  j.PH = (OH - 1) * sh + (KH - 1) * dh + 1;
  /* the rightmost vector reads up to two vectors past its first tap (stride 2 loads pairs) */
  j.PW = (OWr - 1) * sw + (KW - 1) * dw + 1 + 2 * j.lanes;
  owb_parallel_for (pool, g->N * g->M, 1, planes_chunk, &j);
}
