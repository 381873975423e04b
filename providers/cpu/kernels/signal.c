/* signal.c: CPU kernels of the signal and image op family: DFT and STFT over an O(n log n) FFT
 * (mixed radix, Bluestein for large prime factors, half-length complex FFTs for real signals), the
 * window generators, MelWeightMatrix, GridSample, AffineGrid, RoiAlign, NonMaxSuppression and
 * DeformConv. ImageDecoder is in image-decoder.c. */
#include "../cpu-kernels-private.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZE (G_GINT64_CONSTANT (1) << 31)

/* ---- conversions of computed doubles into output element types ---- */

#define DEFINE_TO_INT(T, N, MINV, MAXV)                                                                               \
  static inline T to_##N (double v)                                                                                 \
  {                                                                                                                  \
    if (v != v)                                                                                                      \
      return 0;                                                                                                      \
    if (v <= (double) (MINV))                                                                                        \
      return MINV;                                                                                                   \
    if (v >= (double) (MAXV))                                                                                        \
      return MAXV;                                                                                                   \
    return (T) v;                                                                                                    \
  }
DEFINE_TO_INT (int8_t, INT8, INT8_MIN, INT8_MAX)
DEFINE_TO_INT (int16_t, INT16, INT16_MIN, INT16_MAX)
DEFINE_TO_INT (int32_t, INT32, INT32_MIN, INT32_MAX)
DEFINE_TO_INT (int64_t, INT64, INT64_MIN, INT64_MAX)
DEFINE_TO_INT (uint8_t, UINT8, 0, UINT8_MAX)
DEFINE_TO_INT (uint16_t, UINT16, 0, UINT16_MAX)
DEFINE_TO_INT (uint32_t, UINT32, 0, UINT32_MAX)
DEFINE_TO_INT (uint64_t, UINT64, 0, UINT64_MAX)
static inline float to_FLOAT (double v) { return (float) v; }
static inline double to_DOUBLE (double v) { return v; }

/* Writes n doubles into a numeric tensor (integers truncated toward zero, saturating). */
static void
store_doubles (OwbTensor *t, const double *v, int64_t n)
{
  switch (t->dtype)
    {
#define STORE(T, N)                                                                                                  \
  case OWB_TYPE_##N:                                                                                                 \
    for (int64_t i = 0; i < n; i++)                                                                                  \
      ((T *) t->data)[i] = to_##N (v[i]);                                                                            \
    break;
      OWB_CPU_FOR_NUMERIC (STORE)
#undef STORE
    default:
      for (int64_t i = 0; i < n; i++)
        owb_tensor_set_double (t, i, v[i]);
      break;
    }
}

/* Reads a scalar-like input (one element); FALSE with an error otherwise. */
static gboolean
read_scalar_int (OwbKernelContext *ctx, int i, const char *name, int64_t *out, GError **error)
{
  const OwbTensor *t = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
  if (!t || t->nelems != 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input %s must hold exactly one value", name);
      return FALSE;
    }
  *out = owb_tensor_get_int64 (t, 0);
  return TRUE;
}

static gboolean
read_scalar_double (OwbKernelContext *ctx, int i, const char *name, double *out, GError **error)
{
  const OwbTensor *t = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
  if (!t || t->nelems != 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input %s must hold exactly one value", name);
      return FALSE;
    }
  *out = owb_tensor_get_double (t, 0);
  return TRUE;
}

/* ==== FFT ==== */

typedef struct {
  double re, im;
} Cpx;

static inline Cpx
cmul (Cpx a, Cpx b)
{
  return (Cpx){ a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re };
}

static inline Cpx
cadd (Cpx a, Cpx b)
{
  return (Cpx){ a.re + b.re, a.im + b.im };
}

static inline Cpx
csub (Cpx a, Cpx b)
{
  return (Cpx){ a.re - b.re, a.im - b.im };
}

static inline Cpx
cconj (Cpx a)
{
  return (Cpx){ a.re, -a.im };
}

/* Radices above this use Bluestein's algorithm: the generic butterfly costs O(radix^2). */
#define MAX_GENERIC_RADIX 31
#define MAX_FACTORS 64

typedef struct FftPlan FftPlan;
struct FftPlan {
  int64_t n;
  int64_t factors[2 * MAX_FACTORS]; /* (radix, remaining length) pairs, outermost first */
  Cpx *tw;                          /* exp(-2 pi i k / n), k < n */
  /* Bluestein: a circular convolution of power-of-two length m >= 2n - 1. */
  FftPlan *sub;
  int64_t m;
  Cpx *chirp; /* exp(-i pi k^2 / n), k < n */
  Cpx *bfft;  /* FFT of the conjugated chirp, scaled by 1/m */
  int64_t scratch; /* Cpx elements of scratch that a transform needs */
};

static void
fft_plan_free (FftPlan *p)
{
  if (!p)
    return;
  fft_plan_free (p->sub);
  g_free (p->tw);
  g_free (p->chirp);
  g_free (p->bfft);
  g_free (p);
}

static void fft_forward (const FftPlan *p, Cpx *data, Cpx *scratch);

static void
fill_twiddles (Cpx *tw, int64_t n)
{
  for (int64_t k = 0; k < n; k++)
    {
      double a = -2.0 * G_PI * (double) k / (double) n;
      tw[k] = (Cpx){ cos (a), sin (a) };
    }
}

/* NULL when memory runs out (lengths come from the model and can be huge). */
static FftPlan *
fft_plan_new (int64_t n)
{
  FftPlan *p = g_new0 (FftPlan, 1);
  p->n = n;
  int64_t rest = n, nf = 0;
  gboolean large_prime = FALSE;
  while (rest > 1)
    {
      int64_t f;
      if (rest % 4 == 0)
        f = 4;
      else if (rest % 2 == 0)
        f = 2;
      else
        {
          f = rest;
          for (int64_t d = 3; d * d <= rest; d += 2)
            if (rest % d == 0)
              {
                f = d;
                break;
              }
        }
      if (f > MAX_GENERIC_RADIX)
        large_prime = TRUE;
      rest /= f;
      p->factors[2 * nf] = f;
      p->factors[2 * nf + 1] = rest;
      nf++;
    }
  if (!large_prime)
    {
      p->tw = g_try_new (Cpx, MAX (n, 1));
      if (!p->tw)
        goto fail;
      fill_twiddles (p->tw, n);
      p->scratch = n;
      return p;
    }
  int64_t m = 1;
  while (m < 2 * n - 1)
    m <<= 1;
  p->m = m;
  p->sub = fft_plan_new (m);
  p->chirp = g_try_new (Cpx, n);
  p->bfft = g_try_new0 (Cpx, m);
  Cpx *tmp = g_try_new (Cpx, MAX (p->sub ? p->sub->scratch : 0, 1));
  if (!p->sub || !p->chirp || !p->bfft || !tmp)
    {
      g_free (tmp);
      goto fail;
    }
  for (int64_t k = 0; k < n; k++)
    {
      /* k^2 mod 2n keeps the angle small, so large k lose no precision. */
      uint64_t k2 = ((unsigned __int128) k * (unsigned __int128) k) % (unsigned __int128) (2 * n);
      double a = -G_PI * (double) k2 / (double) n;
      p->chirp[k] = (Cpx){ cos (a), sin (a) };
    }
  p->bfft[0] = cconj (p->chirp[0]);
  for (int64_t k = 1; k < n; k++)
    p->bfft[k] = p->bfft[m - k] = cconj (p->chirp[k]);
  fft_forward (p->sub, p->bfft, tmp);
  g_free (tmp);
  for (int64_t k = 0; k < m; k++)
    {
      p->bfft[k].re /= (double) m;
      p->bfft[k].im /= (double) m;
    }
  p->scratch = m + p->sub->scratch;
  return p;
fail:
  fft_plan_free (p);
  return NULL;
}

static void
bfly2 (Cpx *f, int64_t fstride, const Cpx *tw, int64_t m)
{
  for (int64_t k = 0; k < m; k++)
    {
      Cpx t = cmul (f[m + k], tw[k * fstride]);
      f[m + k] = csub (f[k], t);
      f[k] = cadd (f[k], t);
    }
}

static void
bfly4 (Cpx *f, int64_t fstride, const Cpx *tw, int64_t m)
{
  for (int64_t k = 0; k < m; k++)
    {
      Cpx s0 = cmul (f[k + m], tw[k * fstride]);
      Cpx s1 = cmul (f[k + 2 * m], tw[2 * k * fstride]);
      Cpx s2 = cmul (f[k + 3 * m], tw[3 * k * fstride]);
      Cpx s5 = csub (f[k], s1);
      Cpx a = cadd (f[k], s1);
      Cpx s3 = cadd (s0, s2), s4 = csub (s0, s2);
      f[k + 2 * m] = csub (a, s3);
      f[k] = cadd (a, s3);
      f[k + m] = (Cpx){ s5.re + s4.im, s5.im - s4.re };
      f[k + 3 * m] = (Cpx){ s5.re - s4.im, s5.im + s4.re };
    }
}

/* Any radix: the twiddle of the decimation and the radix-p DFT fold into one table lookup. */
static void
bfly_generic (Cpx *f, int64_t fstride, const Cpx *tw, int64_t n, int64_t m, int64_t p)
{
  Cpx s[MAX_GENERIC_RADIX];
  for (int64_t u = 0; u < m; u++)
    {
      for (int64_t q = 0; q < p; q++)
        s[q] = f[u + q * m];
      for (int64_t q1 = 0; q1 < p; q1++)
        {
          int64_t k = u + q1 * m, step = fstride * k % n, idx = 0;
          Cpx acc = s[0];
          for (int64_t q = 1; q < p; q++)
            {
              idx += step;
              if (idx >= n)
                idx -= n;
              acc = cadd (acc, cmul (s[q], tw[idx]));
            }
          f[k] = acc;
        }
    }
}

/* Decimation in time: out receives the DFT of in[0], in[fstride], ... (radix * m values). */
static void
fft_work (const FftPlan *p, Cpx *out, const Cpx *in, int64_t fstride, const int64_t *factors)
{
  int64_t radix = factors[0], m = factors[1];
  if (m == 1)
    for (int64_t q = 0; q < radix; q++)
      out[q] = in[q * fstride];
  else
    for (int64_t q = 0; q < radix; q++)
      fft_work (p, out + q * m, in + q * fstride, fstride * radix, factors + 2);
  switch (radix)
    {
    case 2:
      bfly2 (out, fstride, p->tw, m);
      break;
    case 4:
      bfly4 (out, fstride, p->tw, m);
      break;
    default:
      bfly_generic (out, fstride, p->tw, p->n, m, radix);
      break;
    }
}

/* In-place forward transform (unscaled); scratch holds p->scratch values. */
static void
fft_forward (const FftPlan *p, Cpx *data, Cpx *scratch)
{
  if (p->n <= 1)
    return;
  if (!p->sub)
    {
      memcpy (scratch, data, sizeof (Cpx) * p->n);
      fft_work (p, data, scratch, 1, p->factors);
      return;
    }
  int64_t n = p->n, m = p->m;
  Cpx *a = scratch;
  for (int64_t k = 0; k < n; k++)
    a[k] = cmul (data[k], p->chirp[k]);
  memset (a + n, 0, sizeof (Cpx) * (m - n));
  fft_forward (p->sub, a, scratch + m);
  /* The inverse transform of the product, as conj (FFT (conj (.))); bfft carries the 1/m. */
  for (int64_t k = 0; k < m; k++)
    a[k] = cconj (cmul (a[k], p->bfft[k]));
  fft_forward (p->sub, a, scratch + m);
  for (int64_t k = 0; k < n; k++)
    data[k] = cmul (cconj (a[k]), p->chirp[k]);
}

/* In-place inverse transform without the 1/n factor. */
static void
fft_inverse (const FftPlan *p, Cpx *data, Cpx *scratch)
{
  for (int64_t k = 0; k < p->n; k++)
    data[k].im = -data[k].im;
  fft_forward (p, data, scratch);
  for (int64_t k = 0; k < p->n; k++)
    data[k].im = -data[k].im;
}

/* Real transforms: an even length n runs as a complex FFT of n/2 points, odd lengths as a full one. */
typedef struct {
  int64_t n;
  FftPlan *half; /* even n */
  Cpx *rtw;      /* even n: exp(-2 pi i k / n), k <= n/2 */
  FftPlan *full; /* odd n */
  int64_t scratch;
} RfftPlan;

static void
rfft_plan_free (RfftPlan *r)
{
  if (!r)
    return;
  fft_plan_free (r->half);
  fft_plan_free (r->full);
  g_free (r->rtw);
  g_free (r);
}

static RfftPlan *
rfft_plan_new (int64_t n)
{
  RfftPlan *r = g_new0 (RfftPlan, 1);
  r->n = n;
  if (n % 2 == 0)
    {
      int64_t h = n / 2;
      r->half = fft_plan_new (h);
      r->rtw = g_try_new (Cpx, h + 1);
      if (!r->half || !r->rtw)
        goto fail;
      for (int64_t k = 0; k <= h; k++)
        {
          double a = -2.0 * G_PI * (double) k / (double) n;
          r->rtw[k] = (Cpx){ cos (a), sin (a) };
        }
      r->scratch = h + r->half->scratch;
    }
  else
    {
      r->full = fft_plan_new (n);
      if (!r->full)
        goto fail;
      r->scratch = n + r->full->scratch;
    }
  return r;
fail:
  rfft_plan_free (r);
  return NULL;
}

/* x: n reals; out: n/2 + 1 values (the non-redundant half of the spectrum). */
static void
rfft_forward (const RfftPlan *r, const double *x, Cpx *out, Cpx *scratch)
{
  int64_t n = r->n;
  if (n % 2 != 0)
    {
      Cpx *z = scratch;
      for (int64_t k = 0; k < n; k++)
        z[k] = (Cpx){ x[k], 0 };
      fft_forward (r->full, z, scratch + n);
      memcpy (out, z, sizeof (Cpx) * (n / 2 + 1));
      return;
    }
  int64_t h = n / 2;
  Cpx *z = out;
  for (int64_t k = 0; k < h; k++)
    z[k] = (Cpx){ x[2 * k], x[2 * k + 1] };
  fft_forward (r->half, z, scratch);
  /* Z = E + iO, where E and O are the spectra of the even and odd samples; X_k = E_k + w^k O_k. */
  Cpx z0 = z[0];
  out[0] = (Cpx){ z0.re + z0.im, 0 };
  out[h] = (Cpx){ z0.re - z0.im, 0 };
  for (int64_t k = 1; k <= h / 2; k++)
    {
      int64_t j = h - k;
      Cpx zk = z[k], zj = z[j];
      Cpx e = { 0.5 * (zk.re + zj.re), 0.5 * (zk.im - zj.im) };
      Cpx d = { zk.re - zj.re, zk.im + zj.im }; /* zk - conj (zj) */
      Cpx o = { 0.5 * d.im, -0.5 * d.re };      /* d / 2i */
      out[k] = cadd (e, cmul (r->rtw[k], o));
      out[j] = cadd (cconj (e), cmul (r->rtw[j], cconj (o)));
    }
}

/* spec: n/2 + 1 values of a Hermitian spectrum (the imaginary parts of the values that must be real
 * are ignored); x: n reals, the inverse transform including its 1/n. */
static void
rfft_inverse (const RfftPlan *r, const Cpx *spec, double *x, Cpx *scratch)
{
  int64_t n = r->n;
  if (n % 2 != 0)
    {
      Cpx *y = scratch;
      y[0] = (Cpx){ spec[0].re, 0 };
      for (int64_t k = 1; k <= n / 2; k++)
        {
          y[k] = spec[k];
          y[n - k] = cconj (spec[k]);
        }
      fft_inverse (r->full, y, scratch + n);
      for (int64_t k = 0; k < n; k++)
        x[k] = y[k].re / (double) n;
      return;
    }
  int64_t h = n / 2;
  Cpx *z = scratch;
  for (int64_t k = 0; k < h; k++)
    {
      Cpx a = spec[k], b = cconj (spec[h - k]);
      if (k == 0)
        {
          a.im = 0;
          b.im = 0;
        }
      Cpx e = { 0.5 * (a.re + b.re), 0.5 * (a.im + b.im) };
      Cpx o = cmul ((Cpx){ 0.5 * (a.re - b.re), 0.5 * (a.im - b.im) }, cconj (r->rtw[k]));
      z[k] = (Cpx){ e.re - o.im, e.im + o.re }; /* e + i o */
    }
  fft_inverse (r->half, z, scratch + h);
  for (int64_t k = 0; k < h; k++)
    {
      x[2 * k] = z[k].re / (double) h;
      x[2 * k + 1] = z[k].im / (double) h;
    }
}

/* ==== DFT ==== */

/* Lines of a tensor along one axis: element j, component c of line (o, i) is at
 * o * outer_stride + i * comps + j * stride + c. */
#define DEFINE_LINE_IO(T, N)                                                                                         \
  static void gather_##N (const void *base, int64_t off, int64_t stride, int64_t count, int comps, double *dst)      \
  {                                                                                                                  \
    const T *p = (const T *) base + off;                                                                             \
    if (comps == 1)                                                                                                  \
      for (int64_t j = 0; j < count; j++)                                                                            \
        dst[j] = p[j * stride];                                                                                      \
    else                                                                                                             \
      for (int64_t j = 0; j < count; j++)                                                                            \
        {                                                                                                            \
          dst[2 * j] = p[j * stride];                                                                                \
          dst[2 * j + 1] = p[j * stride + 1];                                                                        \
        }                                                                                                            \
  }                                                                                                                  \
  static void scatter_##N (void *base, int64_t off, int64_t stride, int64_t count, int comps, const double *src)    \
  {                                                                                                                  \
    T *p = (T *) base + off;                                                                                         \
    if (comps == 1)                                                                                                  \
      for (int64_t j = 0; j < count; j++)                                                                            \
        p[j * stride] = (T) src[j];                                                                                  \
    else                                                                                                             \
      for (int64_t j = 0; j < count; j++)                                                                            \
        {                                                                                                            \
          p[j * stride] = (T) src[2 * j];                                                                            \
          p[j * stride + 1] = (T) src[2 * j + 1];                                                                    \
        }                                                                                                            \
  }
OWB_CPU_FOR_FLOATS (DEFINE_LINE_IO)

typedef void (*GatherFunc) (const void *, int64_t, int64_t, int64_t, int, double *);
typedef void (*ScatterFunc) (void *, int64_t, int64_t, int64_t, int, const double *);

typedef enum { XFORM_RFFT, XFORM_CFFT, XFORM_CIFFT, XFORM_IRFFT } XformKind;

/* One transform applied to many lines. */
typedef struct {
  XformKind kind;
  int64_t n;        /* transform length */
  int64_t in_len;   /* entries of the input line */
  int64_t out_len;  /* entries of the output line */
  gboolean onesided;
  FftPlan *plan;
  RfftPlan *rplan;
} Xform;

static gboolean
xform_init (Xform *x, XformKind kind, int64_t n, int64_t in_len, int64_t out_len, gboolean onesided)
{
  memset (x, 0, sizeof *x);
  x->kind = kind;
  x->n = n;
  x->in_len = in_len;
  x->out_len = out_len;
  x->onesided = onesided;
  if (kind == XFORM_RFFT || kind == XFORM_IRFFT)
    x->rplan = rfft_plan_new (n);
  else
    x->plan = fft_plan_new (n);
  return x->plan || x->rplan;
}

static void
xform_clear (Xform *x)
{
  fft_plan_free (x->plan);
  rfft_plan_free (x->rplan);
}

/* Work memory of one thread, in doubles. */
static int64_t
xform_work_size (const Xform *x)
{
  int64_t s = x->plan ? x->plan->scratch : x->rplan->scratch;
  return 2 * (x->n + 2) + (x->n + 2) + 2 * MAX (x->in_len, 1) + 2 * s;
}

/* in: in_len values (real, or interleaved complex when in_complex); out: out_len values (interleaved
 * complex, or real for IRFFT). work: xform_work_size doubles. */
static void
xform_run (const Xform *x, const double *in, gboolean in_complex, double *out, double *work)
{
  int64_t n = x->n;
  Cpx *c = (Cpx *) work;                 /* n + 2 */
  double *r = work + 2 * (n + 2);        /* n + 2 */
  Cpx *scratch = (Cpx *) (r + (n + 2) + 2 * MAX (x->in_len, 1));
  int64_t take;
  switch (x->kind)
    {
    case XFORM_RFFT:
      take = MIN (x->in_len, n);
      for (int64_t j = 0; j < take; j++)
        r[j] = in_complex ? in[2 * j] : in[j];
      memset (r + take, 0, sizeof (double) * (n - take));
      rfft_forward (x->rplan, r, c, scratch);
      {
        Cpx *o = (Cpx *) out;
        int64_t h = n / 2;
        for (int64_t k = 0; k <= h && k < x->out_len; k++)
          o[k] = c[k];
        for (int64_t k = h + 1; k < x->out_len; k++)
          o[k] = cconj (c[n - k]);
      }
      break;
    case XFORM_CFFT:
    case XFORM_CIFFT:
      take = MIN (x->in_len, n);
      for (int64_t j = 0; j < take; j++)
        c[j] = in_complex ? (Cpx){ in[2 * j], in[2 * j + 1] } : (Cpx){ in[j], 0 };
      memset (c + take, 0, sizeof (Cpx) * (n - take));
      if (x->kind == XFORM_CFFT)
        fft_forward (x->plan, c, scratch);
      else
        {
          fft_inverse (x->plan, c, scratch);
          for (int64_t k = 0; k < n; k++)
            {
              c[k].re /= (double) n;
              c[k].im /= (double) n;
            }
        }
      memcpy (out, c, sizeof (Cpx) * x->out_len);
      break;
    case XFORM_IRFFT:
      take = MIN (x->in_len, n / 2 + 1);
      for (int64_t j = 0; j < take; j++)
        c[j] = in_complex ? (Cpx){ in[2 * j], in[2 * j + 1] } : (Cpx){ in[j], 0 };
      for (int64_t j = take; j <= n / 2; j++)
        c[j] = (Cpx){ 0, 0 };
      rfft_inverse (x->rplan, c, out, scratch);
      break;
    }
}

typedef struct {
  const Xform *x;
  const void *in;
  void *out;
  int64_t inner, in_comps, out_comps;
  GatherFunc gather;
  ScatterFunc scatter;
  gboolean failed;
} DftJob;

static void
dft_lines (int64_t begin, int64_t end, gpointer data)
{
  DftJob *job = data;
  const Xform *x = job->x;
  double *work = g_try_new (double, xform_work_size (x));
  if (!work)
    {
      job->failed = TRUE;
      return;
    }
  double *in_line = work + 2 * (x->n + 2) + (x->n + 2);
  double *out_buf = g_try_new (double, 2 * MAX (x->out_len, 1));
  if (!out_buf)
    {
      g_free (work);
      job->failed = TRUE;
      return;
    }
  int64_t inner = job->inner;
  for (int64_t li = begin; li < end; li++)
    {
      int64_t o = li / inner, i = li % inner;
      int64_t in_off = o * x->in_len * inner * job->in_comps + i * job->in_comps;
      int64_t out_off = o * x->out_len * inner * job->out_comps + i * job->out_comps;
      job->gather (job->in, in_off, inner * job->in_comps, x->in_len, (int) job->in_comps, in_line);
      xform_run (x, in_line, job->in_comps == 2, out_buf, work);
      job->scatter (job->out, out_off, inner * job->out_comps, x->out_len, (int) job->out_comps, out_buf);
    }
  g_free (out_buf);
  g_free (work);
}

static gboolean
compute_dft (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *xt = ctx->inputs[0];
  OwbTensor *y = ctx->outputs[0];
  int r = xt->rank;
  gboolean inverse = owb_node_get_int (ctx->node, "inverse", 0) != 0;
  gboolean onesided = owb_node_get_int (ctx->node, "onesided", 0) != 0;
  int64_t axis = ctx->opset >= 20 ? -2 : owb_node_get_int (ctx->node, "axis", 1);
  if (ctx->opset >= 20 && ctx->n_inputs > 2 && ctx->inputs[2] && !read_scalar_int (ctx, 2, "axis", &axis, error))
    return FALSE;
  if (r < 2 || axis < -r || axis > r - 2 || (axis < 0 && axis + r == r - 1))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "axis %" G_GINT64_FORMAT " is invalid for rank %d",
                            axis, r);
      return FALSE;
    }
  if (axis < 0)
    axis += r;
  int64_t in_comps = xt->dims[r - 1];
  if (in_comps != 1 && in_comps != 2)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "the last input axis must be 1 or 2, got %" G_GINT64_FORMAT,
                            in_comps);
      return FALSE;
    }
  int64_t in_len = xt->dims[axis], n;
  if (ctx->n_inputs > 1 && ctx->inputs[1])
    {
      if (!read_scalar_int (ctx, 1, "dft_length", &n, error))
        return FALSE;
    }
  else
    n = inverse && onesided ? 2 * (in_len - 1) : in_len;
  if (n < 1 || n > MAX_SIZE)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "the DFT length %" G_GINT64_FORMAT " is out of range",
                            n);
      return FALSE;
    }
  XformKind kind;
  int64_t out_len = n, out_comps = 2;
  if (inverse && onesided)
    {
      kind = XFORM_IRFFT;
      out_comps = 1;
    }
  else if (inverse)
    kind = XFORM_CIFFT;
  else
    {
      kind = in_comps == 1 ? XFORM_RFFT : XFORM_CFFT;
      if (onesided)
        out_len = n / 2 + 1;
    }
  if (y->rank != r || y->dims[axis] != out_len || y->dims[r - 1] != out_comps)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "the output shape does not match the transform");
      return FALSE;
    }
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; i++)
    outer *= xt->dims[i];
  for (int i = (int) axis + 1; i < r - 1; i++)
    inner *= xt->dims[i];
  if (y->nelems == 0 || outer * inner == 0)
    {
      if (y->nelems)
        memset (y->data, 0, y->nbytes);
      return TRUE;
    }
  Xform x;
  if (!xform_init (&x, kind, n, in_len, out_len, onesided))
    {
      xform_clear (&x);
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "out of memory for a DFT of length %" G_GINT64_FORMAT, n);
      return FALSE;
    }
  DftJob job = { &x, xt->data, y->data, inner, in_comps, out_comps, NULL, NULL, FALSE };
  if (xt->dtype == OWB_TYPE_DOUBLE)
    {
      job.gather = gather_DOUBLE;
      job.scatter = scatter_DOUBLE;
    }
  else
    {
      job.gather = gather_FLOAT;
      job.scatter = scatter_FLOAT;
    }
  int64_t grain = MAX (1, (G_GINT64_CONSTANT (1) << 14) / MAX (n, 1));
  owb_parallel_for (ctx->pool, outer * inner, grain, dft_lines, &job);
  xform_clear (&x);
  if (job.failed)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "out of memory for a DFT of length %" G_GINT64_FORMAT, n);
      return FALSE;
    }
  return TRUE;
}

/* ==== STFT ==== */

typedef struct {
  const Xform *x;
  const void *in;
  void *out;
  OwbDataType dtype;
  int64_t frames, step, len, comps;
  const double *window;
  gboolean failed;
} StftJob;

static void
stft_frames (int64_t begin, int64_t end, gpointer data)
{
  StftJob *job = data;
  const Xform *x = job->x;
  double *work = g_try_new (double, xform_work_size (x));
  double *frame = g_try_new (double, 2 * x->n);
  double *out_buf = g_try_new (double, 2 * x->out_len);
  if (!work || !frame || !out_buf)
    {
      job->failed = TRUE;
      goto out;
    }
  GatherFunc gather = job->dtype == OWB_TYPE_DOUBLE ? gather_DOUBLE : gather_FLOAT;
  ScatterFunc scatter = job->dtype == OWB_TYPE_DOUBLE ? scatter_DOUBLE : scatter_FLOAT;
  for (int64_t u = begin; u < end; u++)
    {
      int64_t b = u / job->frames, f = u % job->frames;
      int64_t off = (b * job->len + f * job->step) * job->comps;
      gather (job->in, off, job->comps, x->n, (int) job->comps, frame);
      for (int64_t j = 0; j < x->n; j++)
        for (int64_t c = 0; c < job->comps; c++)
          frame[j * job->comps + c] *= job->window[j];
      xform_run (x, frame, job->comps == 2, out_buf, work);
      scatter (job->out, u * x->out_len * 2, 2, x->out_len, 2, out_buf);
    }
out:
  g_free (work);
  g_free (frame);
  g_free (out_buf);
}

static gboolean
compute_stft (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *sig = ctx->inputs[0];
  const OwbTensor *win = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  OwbTensor *y = ctx->outputs[0];
  gboolean onesided = owb_node_get_int (ctx->node, "onesided", 1) != 0;
  int64_t step, fl;
  if (!read_scalar_int (ctx, 1, "frame_step", &step, error))
    return FALSE;
  if (ctx->n_inputs > 3 && ctx->inputs[3])
    {
      if (!read_scalar_int (ctx, 3, "frame_length", &fl, error))
        return FALSE;
    }
  else
    fl = win ? win->dims[0] : sig->dims[1];
  if (sig->rank != 3 || step < 1 || fl < 1 || fl > sig->dims[1] || (win && (win->rank != 1 || win->dims[0] != fl)))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "invalid STFT: frame_step %" G_GINT64_FORMAT ", frame length %" G_GINT64_FORMAT
                            ", signal of %" G_GINT64_FORMAT " samples",
                            step, fl, sig->rank == 3 ? sig->dims[1] : -1);
      return FALSE;
    }
  int64_t comps = sig->dims[2], batch = sig->dims[0];
  int64_t frames = (sig->dims[1] - fl) / step + 1;
  int64_t bins = onesided ? fl / 2 + 1 : fl;
  if (y->rank != 4 || y->dims[0] != batch || y->dims[1] != frames || y->dims[2] != bins || y->dims[3] != 2)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "the output shape does not match the STFT");
      return FALSE;
    }
  if (y->nelems == 0)
    return TRUE;
  double *window = g_try_new (double, fl);
  if (!window)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "out of memory");
      return FALSE;
    }
  for (int64_t j = 0; j < fl; j++)
    window[j] = win ? owb_tensor_get_double (win, j) : 1.0;
  Xform x;
  if (!xform_init (&x, comps == 1 ? XFORM_RFFT : XFORM_CFFT, fl, fl, bins, onesided))
    {
      xform_clear (&x);
      g_free (window);
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "out of memory for an FFT of length %" G_GINT64_FORMAT, fl);
      return FALSE;
    }
  StftJob job = { &x, sig->data, y->data, sig->dtype, frames, step, sig->dims[1], comps, window, FALSE };
  owb_parallel_for (ctx->pool, batch * frames, MAX (1, 4096 / fl), stft_frames, &job);
  xform_clear (&x);
  g_free (window);
  if (job.failed)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "out of memory for an FFT of length %" G_GINT64_FORMAT, fl);
      return FALSE;
    }
  return TRUE;
}

/* ==== window generators and MelWeightMatrix ==== */

typedef enum { WINDOW_HANN, WINDOW_HAMMING, WINDOW_BLACKMAN } WindowKind;

/* The expressions follow the reference's order of operations, so that values that should be
 * exactly 1 stay 1 when truncated to an integer output type. N = size (periodic) or size - 1. */
static gboolean
compute_window (OwbKernelContext *ctx, WindowKind kind, GError **error)
{
  OwbTensor *y = ctx->outputs[0];
  int64_t size;
  if (!read_scalar_int (ctx, 0, "size", &size, error))
    return FALSE;
  if (size < 0 || y->nelems != size)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "window size %" G_GINT64_FORMAT " is invalid", size);
      return FALSE;
    }
  gboolean periodic = owb_node_get_int (ctx->node, "periodic", 1) != 0;
  double N = periodic ? (double) size : (double) (size - 1);
  double *v = g_try_new (double, MAX (size, 1));
  if (!v)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "out of memory");
      return FALSE;
    }
  const double alpha = 25.0 / 46.0;
  for (int64_t k = 0; k < size; k++)
    {
      double kd = (double) k;
      if (N <= 0)
        v[k] = 1.0; /* a symmetric window of one point is its peak */
      else if (kind == WINDOW_HANN)
        {
          double s = sin (kd * G_PI / N);
          v[k] = s * s;
        }
      else if (kind == WINDOW_HAMMING)
        v[k] = alpha - cos (kd * G_PI * 2 / N) * (1 - alpha);
      else
        v[k] = cos (kd * (G_PI * 2) / N) * -0.5 + cos (kd * (G_PI * 4) / N) * 0.08 + 0.42;
    }
  store_doubles (y, v, size);
  g_free (v);
  return TRUE;
}

static gboolean
compute_hann (OwbKernelContext *ctx, GError **error)
{
  return compute_window (ctx, WINDOW_HANN, error);
}

static gboolean
compute_hamming (OwbKernelContext *ctx, GError **error)
{
  return compute_window (ctx, WINDOW_HAMMING, error);
}

static gboolean
compute_blackman (OwbKernelContext *ctx, GError **error)
{
  return compute_window (ctx, WINDOW_BLACKMAN, error);
}

static gboolean
compute_mel_weight_matrix (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *y = ctx->outputs[0];
  int64_t bins, dft_length, rate;
  double lo, hi;
  if (!read_scalar_int (ctx, 0, "num_mel_bins", &bins, error) || !read_scalar_int (ctx, 1, "dft_length", &dft_length, error)
      || !read_scalar_int (ctx, 2, "sample_rate", &rate, error)
      || !read_scalar_double (ctx, 3, "lower_edge_hertz", &lo, error)
      || !read_scalar_double (ctx, 4, "upper_edge_hertz", &hi, error))
    return FALSE;
  if (bins < 1 || dft_length < 1 || rate < 1 || !isfinite (lo) || !isfinite (hi))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "MelWeightMatrix needs positive sizes and finite edges");
      return FALSE;
    }
  int64_t spec_bins = dft_length / 2 + 1;
  if (y->rank != 2 || y->dims[0] != spec_bins || y->dims[1] != bins)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "the output shape does not match the inputs");
      return FALSE;
    }
  double *w = g_try_new0 (double, MAX (y->nelems, 1));
  int64_t *edges = g_try_new (int64_t, bins + 2);
  if (!w || !edges)
    {
      g_free (w);
      g_free (edges);
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "out of memory");
      return FALSE;
    }
  /* Band edges equally spaced on the mel scale, as spectrogram bin indices. The step divides the mel
   * range into num_mel_bins + 2 parts, as the ONNX reference does. */
  double lo_mel = 2595.0 * log10 (1.0 + lo / 700.0), hi_mel = 2595.0 * log10 (1.0 + hi / 700.0);
  double step = (hi_mel - lo_mel) / (double) (bins + 2);
  for (int64_t i = 0; i < bins + 2; i++)
    {
      double hz = 700.0 * (pow (10.0, ((double) i * step + lo_mel) / 2595.0) - 1.0);
      double e = floor ((double) (dft_length + 1) * hz / (double) rate);
      if (e != e)
        e = -1;
      edges[i] = (int64_t) CLAMP (e, -1e15, 1e15);
    }
  for (int64_t i = 0; i < bins; i++)
    {
      int64_t l = edges[i], c = edges[i + 1], h = edges[i + 2];
      if (c == l)
        {
          if (c >= 0 && c < spec_bins)
            w[c * bins + i] = 1.0;
        }
      else
        for (int64_t j = MAX (l, 0); j <= c && j < spec_bins; j++)
          w[j * bins + i] = (double) (j - l) / (double) (c - l);
      if (h > c)
        for (int64_t j = MAX (c, 0); j < h && j < spec_bins; j++)
          w[j * bins + i] = (double) (h - j) / (double) (h - c);
    }
  store_doubles (y, w, y->nelems);
  g_free (w);
  g_free (edges);
  return TRUE;
}

/* ==== GridSample ==== */

typedef enum { GS_NEAREST, GS_LINEAR, GS_CUBIC } GsMode;
typedef enum { GS_ZEROS, GS_BORDER, GS_REFLECTION } GsPad;

typedef struct {
  GsMode mode;
  GsPad pad;
  gboolean align_corners;
} GsParams;

static gboolean
grid_sample_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                     GError **error)
{
  GsParams *p = g_new0 (GsParams, 1);
  const char *mode = owb_node_get_string (node, "mode", opset >= 20 ? "linear" : "bilinear");
  const char *pad = owb_node_get_string (node, "padding_mode", "zeros");
  if (strcmp (mode, "nearest") == 0)
    p->mode = GS_NEAREST;
  else if (strcmp (mode, "bilinear") == 0 || strcmp (mode, "linear") == 0)
    p->mode = GS_LINEAR;
  else if (strcmp (mode, "bicubic") == 0 || strcmp (mode, "cubic") == 0)
    p->mode = GS_CUBIC;
  else
    {
      char *who = owb_node_describe (node);
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "%s: unknown mode '%s'", who, mode);
      g_free (who);
      g_free (p);
      return FALSE;
    }
  if (strcmp (pad, "border") == 0)
    p->pad = GS_BORDER;
  else if (strcmp (pad, "reflection") == 0)
    p->pad = GS_REFLECTION;
  else if (strcmp (pad, "zeros") == 0)
    p->pad = GS_ZEROS;
  else
    {
      char *who = owb_node_describe (node);
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "%s: unknown padding_mode '%s'", who, pad);
      g_free (who);
      g_free (p);
      return FALSE;
    }
  p->align_corners = owb_node_get_int (node, "align_corners", 0) != 0;
  *state = p;
  return TRUE;
}

/* Reflects x into [lo, hi] by folding at the borders as many times as needed. */
static double
gs_reflect (double x, double lo, double hi)
{
  double range = hi - lo;
  if (range <= 0)
    return lo;
  if (x < lo)
    {
      double dx = lo - x, folds = floor (dx / range), r = dx - folds * range;
      return fmod (folds, 2.0) == 0 ? lo + r : hi - r;
    }
  if (x > hi)
    {
      double dx = x - hi, folds = floor (dx / range), r = dx - folds * range;
      return fmod (folds, 2.0) == 0 ? hi - r : lo + r;
    }
  return x;
}

/* An integer tap position resolved by the padding mode; -1 reads as zero. */
static inline int64_t
gs_index (int64_t i, int64_t d, GsPad pad, double lo, double hi)
{
  if (i >= 0 && i < d)
    return i;
  switch (pad)
    {
    case GS_BORDER:
      return i < 0 ? 0 : d - 1;
    case GS_REFLECTION:
      {
        int64_t r = (int64_t) gs_reflect ((double) i, lo, hi);
        return CLAMP (r, 0, d - 1);
      }
    default:
      return -1;
    }
}

/* Keys' cubic convolution weights (A = -0.75) for the taps at -1, 0, 1, 2 around a fraction t. */
static void
cubic_coeffs (double t, double *c)
{
  const double A = -0.75;
  double x = t + 1;
  c[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
  x = 1 - t;
  c[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
  x = 2 - t;
  c[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}

#define GS_CHUNK 256
#define GS_MAX_TAPS 4096

typedef struct {
  const GsParams *p;
  int nsp;
  int64_t N, C;
  int64_t in_dims[OWB_MAX_RANK], in_strides[OWB_MAX_RANK];
  int64_t in_size, out_size, taps_per_dim, taps;
  const double *grid; /* [N, out_size, nsp], innermost coordinate first */
  const void *x;
  void *y;
  OwbDataType dtype;
  gboolean failed;
} GsJob;

#define DEFINE_GS_APPLY(T, N)                                                                                        \
  static void gs_apply_##N (const GsJob *job, int64_t n, int64_t p0, int64_t np, const int64_t *ti,                 \
                            const double *tw)                                                                        \
  {                                                                                                                  \
    int64_t taps = job->taps;                                                                                        \
    for (int64_t c = 0; c < job->C; c++)                                                                             \
      {                                                                                                              \
        const T *xc = (const T *) job->x + (n * job->C + c) * job->in_size;                                          \
        T *yc = (T *) job->y + (n * job->C + c) * job->out_size + p0;                                                \
        for (int64_t q = 0; q < np; q++)                                                                             \
          {                                                                                                          \
            const int64_t *qi = ti + q * taps;                                                                       \
            const double *qw = tw + q * taps;                                                                        \
            double acc = 0;                                                                                          \
            for (int64_t t = 0; t < taps; t++)                                                                       \
              if (qi[t] >= 0)                                                                                        \
                acc += qw[t] * (double) xc[qi[t]];                                                                   \
            yc[q] = to_##N (acc);                                                                                    \
          }                                                                                                          \
      }                                                                                                              \
  }
OWB_CPU_FOR_NUMERIC (DEFINE_GS_APPLY)

static void
gs_chunks (int64_t begin, int64_t end, gpointer data)
{
  GsJob *job = data;
  const GsParams *p = job->p;
  int nsp = job->nsp;
  int64_t tpd = job->taps_per_dim, taps = job->taps;
  int shift = tpd == 1 ? 0 : tpd == 2 ? 1 : 2; /* taps per axis are 1, 2 or 4 */
  int64_t *ti = g_try_new (int64_t, GS_CHUNK * taps);
  double *tw = g_try_new (double, GS_CHUNK * taps);
  if (!ti || !tw)
    {
      job->failed = TRUE;
      g_free (ti);
      g_free (tw);
      return;
    }
  int64_t nchunks = (job->out_size + GS_CHUNK - 1) / GS_CHUNK;
  int64_t didx[OWB_MAX_RANK][4];
  double dw[OWB_MAX_RANK][4];
  for (int64_t u = begin; u < end; u++)
    {
      int64_t n = u / nchunks, p0 = (u % nchunks) * GS_CHUNK;
      int64_t np = MIN (GS_CHUNK, job->out_size - p0);
      for (int64_t q = 0; q < np; q++)
        {
          const double *g = job->grid + ((n * job->out_size) + p0 + q) * nsp;
          for (int d = 0; d < nsp; d++)
            {
              int64_t size = job->in_dims[d];
              /* The grid lists the innermost axis first. */
              double gv = g[nsp - 1 - d];
              double lo = p->align_corners ? 0.0 : -0.5, hi = p->align_corners ? (double) size - 1 : (double) size - 0.5;
              double x = p->align_corners ? (gv + 1) / 2 * (double) (size - 1) : ((gv + 1) * (double) size - 1) / 2;
              if (p->mode == GS_NEAREST)
                x = nearbyint (x);
              if (x != x)
                x = -1e15;
              if (x < lo || x > hi)
                {
                  if (p->pad == GS_BORDER)
                    x = CLAMP (x, 0.0, (double) size - 1);
                  else if (p->pad == GS_REFLECTION)
                    x = gs_reflect (x, lo, hi);
                }
              x = CLAMP (x, -1e15, 1e15);
              if (p->mode == GS_NEAREST)
                {
                  didx[d][0] = gs_index ((int64_t) x, size, p->pad, lo, hi);
                  dw[d][0] = 1.0;
                }
              else
                {
                  double x0 = floor (x), t = x - x0;
                  int64_t i0 = (int64_t) x0;
                  if (p->mode == GS_LINEAR)
                    {
                      didx[d][0] = gs_index (i0, size, p->pad, lo, hi);
                      didx[d][1] = gs_index (i0 + 1, size, p->pad, lo, hi);
                      dw[d][0] = 1 - t;
                      dw[d][1] = t;
                    }
                  else
                    {
                      cubic_coeffs (t, dw[d]);
                      for (int k = 0; k < 4; k++)
                        didx[d][k] = gs_index (i0 - 1 + k, size, p->pad, lo, hi);
                    }
                }
            }
          int64_t *qi = ti + q * taps;
          double *qw = tw + q * taps;
          for (int64_t t = 0; t < taps; t++)
            {
              int64_t rem = t, idx = 0;
              double w = 1;
              for (int d = nsp - 1; d >= 0; d--)
                {
                  int64_t k = rem & (tpd - 1);
                  rem >>= shift;
                  if (didx[d][k] < 0)
                    {
                      idx = -1;
                      break;
                    }
                  idx += didx[d][k] * job->in_strides[d];
                  w *= dw[d][k];
                }
              qi[t] = idx;
              qw[t] = w;
            }
        }
      switch (job->dtype)
        {
#define CASE(T, N)                                                                                                   \
  case OWB_TYPE_##N:                                                                                                 \
    gs_apply_##N (job, n, p0, np, ti, tw);                                                                           \
    break;
          OWB_CPU_FOR_NUMERIC (CASE)
#undef CASE
        default:
          break;
        }
    }
  g_free (ti);
  g_free (tw);
}

/* A float tensor as doubles (the grid may be float16 while X is float32). */
static double *
tensor_to_doubles (const OwbTensor *t)
{
  double *v = g_try_new (double, MAX (t->nelems, 1));
  if (!v)
    return NULL;
  if (t->dtype == OWB_TYPE_FLOAT)
    for (int64_t i = 0; i < t->nelems; i++)
      v[i] = ((const float *) t->data)[i];
  else if (t->dtype == OWB_TYPE_DOUBLE)
    memcpy (v, t->data, sizeof (double) * t->nelems);
  else
    for (int64_t i = 0; i < t->nelems; i++)
      v[i] = owb_tensor_get_double (t, i);
  return v;
}

static gboolean
compute_grid_sample (OwbKernelContext *ctx, GError **error)
{
  const GsParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0], *grid = ctx->inputs[1];
  OwbTensor *y = ctx->outputs[0];
  int r = x->rank, nsp = r - 2;
  if (r < 3 || grid->rank != r || grid->dims[r - 1] != nsp || grid->dims[0] != x->dims[0])
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "grid must be [N, out..., %d] for X of rank %d", nsp, r);
      return FALSE;
    }
  GsJob job = { .p = p, .nsp = nsp, .N = x->dims[0], .C = x->dims[1], .x = x->data, .y = y->data,
                .dtype = x->dtype };
  job.taps_per_dim = p->mode == GS_NEAREST ? 1 : p->mode == GS_LINEAR ? 2 : 4;
  job.taps = 1;
  for (int d = 0; d < nsp; d++)
    {
      job.taps *= job.taps_per_dim;
      if (job.taps > GS_MAX_TAPS)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_UNSUPPORTED_OP,
                                "%d spatial axes need too many interpolation taps in this mode", nsp);
          return FALSE;
        }
    }
  job.in_size = 1;
  for (int d = nsp - 1; d >= 0; d--)
    {
      job.in_dims[d] = x->dims[2 + d];
      job.in_strides[d] = job.in_size;
      job.in_size *= x->dims[2 + d];
    }
  job.out_size = 1;
  for (int d = 0; d < nsp; d++)
    job.out_size *= grid->dims[1 + d];
  if (y->nelems == 0)
    return TRUE;
  if (job.in_size == 0)
    {
      /* Nothing to sample from: every tap is outside the input. */
      double zero = 0;
      for (int64_t i = 0; i < y->nelems; i++)
        owb_tensor_set_double (y, i, zero);
      return TRUE;
    }
  double *g = tensor_to_doubles (grid);
  if (!g)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "out of memory");
      return FALSE;
    }
  job.grid = g;
  int64_t nchunks = (job.out_size + GS_CHUNK - 1) / GS_CHUNK;
  owb_parallel_for (ctx->pool, job.N * nchunks, 1, gs_chunks, &job);
  g_free (g);
  if (job.failed)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "out of memory");
      return FALSE;
    }
  return TRUE;
}

/* ==== AffineGrid ==== */

#define DEFINE_AFFINE(T, N)                                                                                          \
  static void affine_grid_##N (const T *theta, T *out, int64_t batch, int nsp, const int64_t *sizes,                \
                               double *const *base)                                                                  \
  {                                                                                                                  \
    int64_t npos = 1;                                                                                                \
    for (int d = 0; d < nsp; d++)                                                                                    \
      npos *= sizes[d];                                                                                              \
    for (int64_t n = 0; n < batch; n++)                                                                              \
      {                                                                                                              \
        const T *th = theta + n * nsp * (nsp + 1);                                                                   \
        T *o = out + n * npos * nsp;                                                                                 \
        for (int64_t q = 0; q < npos; q++)                                                                           \
          {                                                                                                          \
            /* Homogeneous position, innermost axis first: (x, y[, z], 1). */                                        \
            double pos[4];                                                                                           \
            int64_t rem = q;                                                                                         \
            for (int d = nsp - 1; d >= 0; d--)                                                                       \
              {                                                                                                      \
                pos[nsp - 1 - d] = base[d][rem % sizes[d]];                                                          \
                rem /= sizes[d];                                                                                     \
              }                                                                                                      \
            pos[nsp] = 1.0;                                                                                          \
            for (int i = 0; i < nsp; i++)                                                                            \
              {                                                                                                      \
                double acc = 0;                                                                                      \
                for (int j = 0; j <= nsp; j++)                                                                       \
                  acc += (double) th[i * (nsp + 1) + j] * pos[j];                                                    \
                o[q * nsp + i] = (T) acc;                                                                            \
              }                                                                                                      \
          }                                                                                                          \
      }                                                                                                              \
  }
OWB_CPU_FOR_FLOATS (DEFINE_AFFINE)

static gboolean
compute_affine_grid (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *theta = ctx->inputs[0], *size = ctx->inputs[1];
  OwbTensor *y = ctx->outputs[0];
  gboolean align = owb_node_get_int (ctx->node, "align_corners", 0) != 0;
  int nsp = theta->rank == 3 ? (int) theta->dims[1] : -1;
  if ((nsp != 2 && nsp != 3) || theta->dims[2] != nsp + 1 || size->nelems != nsp + 2 || size->dtype != OWB_TYPE_INT64)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "theta must be [N, 2, 3] or [N, 3, 4] with a matching size");
      return FALSE;
    }
  const int64_t *sv = size->data;
  int64_t batch = theta->dims[0];
  if (sv[0] != batch || y->rank != nsp + 2 || y->dims[0] != batch || y->dims[nsp + 1] != nsp)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "size does not match theta or the output");
      return FALSE;
    }
  int64_t sizes[3];
  for (int d = 0; d < nsp; d++)
    {
      sizes[d] = sv[2 + d];
      if (sizes[d] != y->dims[1 + d])
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "size does not match the output");
          return FALSE;
        }
    }
  if (y->nelems == 0)
    return TRUE;
  double *base[3] = { NULL, NULL, NULL };
  gboolean ok = TRUE;
  for (int d = 0; d < nsp; d++)
    {
      int64_t s = sizes[d];
      base[d] = g_try_new (double, s);
      if (!base[d])
        {
          ok = FALSE;
          break;
        }
      for (int64_t i = 0; i < s; i++)
        {
          if (align)
            base[d][i] = s > 1 ? -1.0 + 2.0 * (double) i / (double) (s - 1) : -1.0;
          else
            base[d][i] = -1.0 + (2.0 * (double) i + 1.0) / (double) s;
        }
    }
  if (ok)
    {
      if (theta->dtype == OWB_TYPE_DOUBLE)
        affine_grid_DOUBLE (theta->data, y->data, batch, nsp, sizes, base);
      else
        affine_grid_FLOAT (theta->data, y->data, batch, nsp, sizes, base);
    }
  else
    owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "out of memory");
  for (int d = 0; d < nsp; d++)
    g_free (base[d]);
  return ok;
}

/* ==== RoiAlign ==== */

typedef struct {
  gboolean max_mode, half_pixel;
  int64_t oh, ow, sampling_ratio;
  float spatial_scale;
} RoiParams;

static gboolean
roi_align_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                   GError **error)
{
  RoiParams *p = g_new0 (RoiParams, 1);
  p->max_mode = strcmp (owb_node_get_string (node, "mode", "avg"), "max") == 0;
  /* Before opset 16 the input coordinates were not shifted by half a pixel. */
  p->half_pixel = opset >= 16
                  && strcmp (owb_node_get_string (node, "coordinate_transformation_mode", "half_pixel"), "half_pixel")
                       == 0;
  p->oh = owb_node_get_int (node, "output_height", 1);
  p->ow = owb_node_get_int (node, "output_width", 1);
  p->sampling_ratio = owb_node_get_int (node, "sampling_ratio", 0);
  p->spatial_scale = owb_node_get_float (node, "spatial_scale", 1.0f);
  if (p->oh < 1 || p->ow < 1 || p->oh > MAX_SIZE || p->ow > MAX_SIZE || p->sampling_ratio < 0
      || p->sampling_ratio > 65536)
    {
      char *who = owb_node_describe (node);
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   "%s: output_height/output_width must be >= 1 and sampling_ratio in 0..65536", who);
      g_free (who);
      g_free (p);
      return FALSE;
    }
  *state = p;
  return TRUE;
}

/* Bilinear sample positions along one axis for every (output cell, sample) pair. A position outside
 * [-1, size] gets zero weights (and index 0), so it adds nothing. */
typedef struct {
  int64_t lo, hi;
  double wlo, whi;
} RoiTap;

static void
roi_axis_taps (RoiTap *taps, int64_t cells, int64_t grid, double start, double bin, int64_t size)
{
  for (int64_t c = 0; c < cells; c++)
    for (int64_t i = 0; i < grid; i++)
      {
        RoiTap *t = &taps[c * grid + i];
        double v = start + (double) c * bin + ((double) i + 0.5) * bin / (double) grid;
        if (v < -1.0 || v > (double) size)
          {
            *t = (RoiTap){ 0, 0, 0, 0 };
            continue;
          }
        if (v < 0)
          v = 0;
        int64_t lo = (int64_t) v, hi;
        if (lo >= size - 1)
          {
            hi = lo = size - 1;
            v = (double) lo;
          }
        else
          hi = lo + 1;
        double l = v - (double) lo;
        *t = (RoiTap){ lo, hi, 1.0 - l, l };
      }
}

typedef struct {
  const RoiParams *p;
  const void *x, *rois;
  const int64_t *batch;
  void *y;
  OwbDataType dtype;
  int64_t C, H, W;
  gboolean failed;
} RoiJob;

#define DEFINE_ROI(T, N)                                                                                             \
  static void roi_channel_##N (const RoiJob *job, const T *xc, T *yc, const RoiTap *ty, const RoiTap *tx,           \
                               int64_t gh, int64_t gw)                                                               \
  {                                                                                                                  \
    const RoiParams *p = job->p;                                                                                     \
    int64_t W = job->W;                                                                                              \
    double count = (double) MAX (gh * gw, 1);                                                                        \
    for (int64_t ph = 0; ph < p->oh; ph++)                                                                           \
      for (int64_t pw = 0; pw < p->ow; pw++)                                                                         \
        {                                                                                                            \
          const RoiTap *bx = &tx[pw * gw];                                                                           \
          double acc = 0;                                                                                            \
          if (!p->max_mode)                                                                                          \
            {                                                                                                        \
              for (int64_t iy = 0; iy < gh; iy++)                                                                    \
                {                                                                                                    \
                  const RoiTap *a = &ty[ph * gh + iy];                                                               \
                  const T *r0 = xc + a->lo * W, *r1 = xc + a->hi * W;                                                \
                  double s0 = 0, s1 = 0;                                                                             \
                  for (int64_t ix = 0; ix < gw; ix++)                                                                \
                    {                                                                                                \
                      const RoiTap *b = &bx[ix];                                                                     \
                      s0 += b->wlo * (double) r0[b->lo] + b->whi * (double) r0[b->hi];                               \
                      s1 += b->wlo * (double) r1[b->lo] + b->whi * (double) r1[b->hi];                               \
                    }                                                                                                \
                  acc += a->wlo * s0 + a->whi * s1;                                                                  \
                }                                                                                                    \
              acc /= count;                                                                                          \
            }                                                                                                        \
          else                                                                                                       \
            {                                                                                                        \
              /* Max mode takes the largest weighted corner of each sample, as the reference does. */               \
              gboolean first = TRUE;                                                                                 \
              for (int64_t iy = 0; iy < gh; iy++)                                                                    \
                {                                                                                                    \
                  const RoiTap *a = &ty[ph * gh + iy];                                                               \
                  const T *r0 = xc + a->lo * W, *r1 = xc + a->hi * W;                                                \
                  for (int64_t ix = 0; ix < gw; ix++)                                                                \
                    {                                                                                                \
                      const RoiTap *b = &bx[ix];                                                                     \
                      double v1 = a->wlo * b->wlo * (double) r0[b->lo], v2 = a->wlo * b->whi * (double) r0[b->hi];   \
                      double v3 = a->whi * b->wlo * (double) r1[b->lo], v4 = a->whi * b->whi * (double) r1[b->hi];   \
                      double v = MAX (MAX (v1, v2), MAX (v3, v4));                                                   \
                      acc = first ? v : MAX (acc, v);                                                                \
                      first = FALSE;                                                                                 \
                    }                                                                                                \
                }                                                                                                    \
            }                                                                                                        \
          yc[ph * p->ow + pw] = (T) acc;                                                                             \
        }                                                                                                            \
  }                                                                                                                  \
  static void roi_coords_##N (const void *rois, int64_t r, double *c)                                               \
  {                                                                                                                  \
    for (int i = 0; i < 4; i++)                                                                                      \
      c[i] = (double) ((const T *) rois)[r * 4 + i];                                                                 \
  }
OWB_CPU_FOR_FLOATS (DEFINE_ROI)

static void
roi_units (int64_t begin, int64_t end, gpointer data)
{
  RoiJob *job = data;
  const RoiParams *p = job->p;
  int64_t cur = -1, gh = 0, gw = 0;
  RoiTap *ty = NULL, *tx = NULL;
  for (int64_t u = begin; u < end && !job->failed; u++)
    {
      int64_t r = u / job->C, c = u % job->C;
      if (r != cur)
        {
          cur = r;
          double rc[4];
          if (job->dtype == OWB_TYPE_DOUBLE)
            roi_coords_DOUBLE (job->rois, r, rc);
          else
            roi_coords_FLOAT (job->rois, r, rc);
          double off = p->half_pixel ? 0.5 : 0.0, scale = p->spatial_scale;
          double sw = rc[0] * scale - off, sh = rc[1] * scale - off;
          double rw = rc[2] * scale - off - sw, rh = rc[3] * scale - off - sh;
          if (!p->half_pixel)
            {
              rw = MAX (rw, 1.0);
              rh = MAX (rh, 1.0);
            }
          double bh = rh / (double) p->oh, bw = rw / (double) p->ow;
          double fgh = p->sampling_ratio > 0 ? (double) p->sampling_ratio : ceil (bh);
          double fgw = p->sampling_ratio > 0 ? (double) p->sampling_ratio : ceil (bw);
          /* Validated in compute: finite, and not absurdly many samples. */
          gh = (int64_t) MAX (fgh, 0.0);
          gw = (int64_t) MAX (fgw, 0.0);
          g_free (ty);
          g_free (tx);
          ty = g_try_new (RoiTap, MAX (p->oh * gh, 1));
          tx = g_try_new (RoiTap, MAX (p->ow * gw, 1));
          if (!ty || !tx)
            {
              job->failed = TRUE;
              break;
            }
          roi_axis_taps (ty, p->oh, gh, sh, bh, job->H);
          roi_axis_taps (tx, p->ow, gw, sw, bw, job->W);
        }
      int64_t b = job->batch[r];
      int64_t plane = job->H * job->W, oplane = p->oh * p->ow;
      if (job->dtype == OWB_TYPE_DOUBLE)
        roi_channel_DOUBLE (job, (const double *) job->x + (b * job->C + c) * plane,
                            (double *) job->y + (r * job->C + c) * oplane, ty, tx, gh, gw);
      else
        roi_channel_FLOAT (job, (const float *) job->x + (b * job->C + c) * plane,
                           (float *) job->y + (r * job->C + c) * oplane, ty, tx, gh, gw);
    }
  g_free (ty);
  g_free (tx);
}

static gboolean
compute_roi_align (OwbKernelContext *ctx, GError **error)
{
  const RoiParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0], *rois = ctx->inputs[1], *bi = ctx->inputs[2];
  OwbTensor *y = ctx->outputs[0];
  if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 4 || bi->nelems != rois->dims[0]
      || rois->dtype != x->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "RoiAlign needs X [N, C, H, W], rois [R, 4], batch_indices [R]");
      return FALSE;
    }
  int64_t R = rois->dims[0], N = x->dims[0];
  int64_t *batch = g_new (int64_t, MAX (R, 1));
  for (int64_t r = 0; r < R; r++)
    {
      batch[r] = owb_tensor_get_int64 (bi, r);
      gboolean bad = batch[r] < 0 || batch[r] >= N;
      double big = 0;
      for (int i = 0; i < 4 && !bad; i++)
        {
          double v = owb_tensor_get_double (rois, r * 4 + i) * p->spatial_scale;
          bad = !isfinite (v);
          big = MAX (big, fabs (v));
        }
      /* Adaptive sampling takes about roi_size / output_size samples per cell and axis. */
      if (!bad && p->sampling_ratio == 0 && 2 * big / (double) MIN (p->oh, p->ow) > 65536)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                                "RoI %" G_GINT64_FORMAT " is too large for adaptive sampling", r);
          g_free (batch);
          return FALSE;
        }
      if (bad)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                                "RoI %" G_GINT64_FORMAT " has batch index %" G_GINT64_FORMAT
                                " (batch size %" G_GINT64_FORMAT ") or non-finite coordinates",
                                r, batch[r], N);
          g_free (batch);
          return FALSE;
        }
    }
  if (y->nelems > 0 && (x->dims[2] == 0 || x->dims[3] == 0))
    memset (y->data, 0, y->nbytes);
  else if (y->nelems > 0)
    {
      RoiJob job = { p, x->data, rois->data, batch, y->data, x->dtype, x->dims[1], x->dims[2], x->dims[3], FALSE };
      owb_parallel_for (ctx->pool, R * job.C, 1, roi_units, &job);
      if (job.failed)
        {
          g_free (batch);
          owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "out of memory");
          return FALSE;
        }
    }
  g_free (batch);
  return TRUE;
}

/* ==== NonMaxSuppression ==== */

typedef struct {
  float score;
  int64_t idx;
} NmsCand;

/* Higher score first; equal scores in box order. */
static inline gboolean
nms_better (const NmsCand *a, const NmsCand *b)
{
  return a->score > b->score || (a->score == b->score && a->idx < b->idx);
}

static void
nms_sift_down (NmsCand *h, int64_t n, int64_t i)
{
  for (;;)
    {
      int64_t best = i, l = 2 * i + 1, r = l + 1;
      if (l < n && nms_better (&h[l], &h[best]))
        best = l;
      if (r < n && nms_better (&h[r], &h[best]))
        best = r;
      if (best == i)
        return;
      NmsCand t = h[i];
      h[i] = h[best];
      h[best] = t;
      i = best;
    }
}

typedef struct {
  float ymin, xmin, ymax, xmax;
} NmsBox;

/* IoU strictly above the threshold; the arithmetic follows the reference in float. */
static gboolean
nms_suppress (const NmsBox *a, const NmsBox *b, float threshold)
{
  float ix0 = MAX (a->xmin, b->xmin), ix1 = MIN (a->xmax, b->xmax);
  if (ix1 <= ix0)
    return FALSE;
  float iy0 = MAX (a->ymin, b->ymin), iy1 = MIN (a->ymax, b->ymax);
  if (iy1 <= iy0)
    return FALSE;
  float inter = (ix1 - ix0) * (iy1 - iy0);
  if (inter <= 0)
    return FALSE;
  float a1 = (a->xmax - a->xmin) * (a->ymax - a->ymin);
  float a2 = (b->xmax - b->xmin) * (b->ymax - b->ymin);
  float uni = a1 + a2 - inter;
  if (a1 <= 0 || a2 <= 0 || uni <= 0)
    return FALSE;
  return inter / uni > threshold;
}

typedef struct {
  const NmsBox *boxes;  /* [B, S] */
  const float *scores;  /* [B, C, S] */
  int64_t B, C, S, max_out;
  float iou, score_threshold;
  gboolean has_score_threshold;
  int64_t *selected;    /* [B * C, min (S, max_out)] box indices */
  int64_t *counts;      /* [B * C] */
  gboolean failed;
} NmsJob;

static void
nms_pairs (int64_t begin, int64_t end, gpointer data)
{
  NmsJob *job = data;
  int64_t S = job->S, cap = MIN (S, job->max_out);
  NmsCand *cand = g_try_new (NmsCand, MAX (S, 1));
  if (!cand)
    {
      job->failed = TRUE;
      return;
    }
  for (int64_t u = begin; u < end; u++)
    {
      int64_t b = u / job->C;
      const float *sc = job->scores + u * S;
      const NmsBox *boxes = job->boxes + b * S;
      int64_t nc = 0;
      for (int64_t i = 0; i < S; i++)
        if (!job->has_score_threshold || sc[i] > job->score_threshold)
          cand[nc++] = (NmsCand){ sc[i], i };
      /* A heap orders only the candidates that are looked at: selection usually stops early. */
      for (int64_t i = nc / 2 - 1; i >= 0; i--)
        nms_sift_down (cand, nc, i);
      int64_t *sel = job->selected + u * cap, ns = 0;
      while (nc > 0 && ns < cap)
        {
          int64_t idx = cand[0].idx;
          cand[0] = cand[--nc];
          nms_sift_down (cand, nc, 0);
          const NmsBox *bx = &boxes[idx];
          gboolean keep = TRUE;
          for (int64_t j = 0; j < ns && keep; j++)
            if (nms_suppress (bx, &boxes[sel[j]], job->iou))
              keep = FALSE;
          if (keep)
            sel[ns++] = idx;
        }
      job->counts[u] = ns;
    }
  g_free (cand);
}

static gboolean
compute_nms (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *boxes = ctx->inputs[0], *scores = ctx->inputs[1];
  const OwbTensor *mt = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  const OwbTensor *it = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  const OwbTensor *st = ctx->n_inputs > 4 ? ctx->inputs[4] : NULL;
  gboolean center = owb_node_get_int (ctx->node, "center_point_box", 0) != 0;
  if (boxes->rank != 3 || boxes->dims[2] != 4 || scores->rank != 3 || scores->dims[0] != boxes->dims[0]
      || scores->dims[2] != boxes->dims[1] || boxes->dtype != OWB_TYPE_FLOAT || scores->dtype != OWB_TYPE_FLOAT)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "boxes must be float [batches, boxes, 4] and scores float [batches, classes, boxes]");
      return FALSE;
    }
  NmsJob job = { 0 };
  job.B = boxes->dims[0];
  job.S = boxes->dims[1];
  job.C = scores->dims[1];
  job.max_out = mt && mt->nelems > 0 ? MAX (owb_tensor_get_int64 (mt, 0), 0) : 0;
  job.iou = it && it->nelems > 0 ? (float) owb_tensor_get_double (it, 0) : 0.0f;
  job.has_score_threshold = st && st->nelems > 0;
  job.score_threshold = job.has_score_threshold ? (float) owb_tensor_get_double (st, 0) : 0.0f;
  if (!(job.iou >= 0.0f && job.iou <= 1.0f))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "iou_threshold %g must be in [0, 1]", job.iou);
      return FALSE;
    }
  int64_t cap = MIN (job.S, job.max_out), pairs = job.B * job.C;
  int64_t count = 0;
  if (cap > 0 && pairs > 0)
    {
      NmsBox *nb = g_try_new (NmsBox, MAX (job.B * job.S, 1));
      job.selected = g_try_new (int64_t, pairs * cap);
      job.counts = g_try_new0 (int64_t, pairs);
      if (!nb || !job.selected || !job.counts)
        {
          g_free (nb);
          g_free (job.selected);
          g_free (job.counts);
          owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "out of memory");
          return FALSE;
        }
      const float *bv = boxes->data;
      for (int64_t i = 0; i < job.B * job.S; i++)
        {
          const float *b = bv + i * 4;
          if (center)
            {
              float hw = b[2] / 2, hh = b[3] / 2;
              nb[i] = (NmsBox){ b[1] - hh, b[0] - hw, b[1] + hh, b[0] + hw };
            }
          else
            nb[i] = (NmsBox){ MIN (b[0], b[2]), MIN (b[1], b[3]), MAX (b[0], b[2]), MAX (b[1], b[3]) };
        }
      job.boxes = nb;
      job.scores = scores->data;
      owb_parallel_for (ctx->pool, pairs, 1, nms_pairs, &job);
      g_free (nb);
      if (job.failed)
        {
          g_free (job.selected);
          g_free (job.counts);
          owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "out of memory");
          return FALSE;
        }
      for (int64_t u = 0; u < pairs; u++)
        count += job.counts[u];
    }
  int64_t dims[2] = { count, 3 };
  OwbTensor *y = owb_kernel_context_new_output (ctx, 0, OWB_TYPE_INT64, 2, dims, error);
  if (!y)
    {
      g_free (job.selected);
      g_free (job.counts);
      return FALSE;
    }
  int64_t *o = y->data, k = 0;
  for (int64_t u = 0; u < pairs && count > 0; u++)
    for (int64_t j = 0; j < job.counts[u]; j++, k++)
      {
        o[3 * k] = u / job.C;
        o[3 * k + 1] = u % job.C;
        o[3 * k + 2] = job.selected[u * cap + j];
      }
  g_free (job.selected);
  g_free (job.counts);
  return TRUE;
}

/* ==== DeformConv ==== */

/* Elements of one column tile: enough for an efficient GEMM, bounded memory on large inputs. */
#define DEFORM_COL_BUDGET (G_GINT64_CONSTANT (1) << 20)

typedef struct {
  int nsp;
  int64_t N, C, M, group, og, Cg, Mg, Cog, K, L;
  int64_t in[OWB_MAX_RANK], out[OWB_MAX_RANK], k[OWB_MAX_RANK], s[OWB_MAX_RANK], d[OWB_MAX_RANK],
    pad[OWB_MAX_RANK];
  int64_t in_size, tile, ntiles;
  const void *x, *w, *offset, *mask, *bias;
  void *y;
  gboolean failed;
} DeformJob;

/* Fills col[(c - c0) * K + kk][l - l0] for the channels of one group, sampling X bilinearly at the
 * offset kernel positions (zero outside the input) and applying the mask. */
#define DEFINE_DEFORM(T, N, GEMM)                                                                                    \
  static void deform_unit_##N (DeformJob *j, int64_t n, int64_t g, int64_t l0, int64_t lt, T *col, int64_t *ci,     \
                               double *cw)                                                                           \
  {                                                                                                                  \
    int nsp = j->nsp;                                                                                                \
    int64_t K = j->K, L = j->L, c0 = g * j->Cg, c1 = c0 + j->Cg;                                                     \
    const T *x = (const T *) j->x + n * j->C * j->in_size;                                                           \
    const T *off = (const T *) j->offset + n * j->og * K * nsp * L;                                                  \
    const T *mask = j->mask ? (const T *) j->mask + n * j->og * K * L : NULL;                                        \
    int64_t in_strides[OWB_MAX_RANK];                                                                                \
    int64_t st = 1;                                                                                                  \
    for (int d = nsp - 1; d >= 0; d--)                                                                               \
      {                                                                                                              \
        in_strides[d] = st;                                                                                          \
        st *= j->in[d];                                                                                              \
      }                                                                                                              \
    for (int64_t og = c0 / j->Cog; og * j->Cog < c1; og++)                                                          \
      {                                                                                                              \
        int64_t cb = MAX (c0, og * j->Cog), ce = MIN (c1, (og + 1) * j->Cog);                                        \
        for (int64_t kk = 0; kk < K; kk++)                                                                           \
          {                                                                                                          \
            int64_t kpos[OWB_MAX_RANK], rem = kk;                                                                    \
            for (int d = nsp - 1; d >= 0; d--)                                                                       \
              {                                                                                                      \
                kpos[d] = rem % j->k[d];                                                                             \
                rem /= j->k[d];                                                                                      \
              }                                                                                                      \
            const T *offk = off + (og * K + kk) * nsp * L;                                                           \
            const T *mk = mask ? mask + (og * K + kk) * L : NULL;                                                    \
            for (int64_t l = l0; l < l0 + lt; l++)                                                                   \
              {                                                                                                      \
                int64_t opos[OWB_MAX_RANK];                                                                          \
                rem = l;                                                                                             \
                for (int d = nsp - 1; d >= 0; d--)                                                                   \
                  {                                                                                                  \
                    opos[d] = rem % j->out[d];                                                                       \
                    rem /= j->out[d];                                                                                \
                  }                                                                                                  \
                int64_t lo[OWB_MAX_RANK];                                                                            \
                double fr[OWB_MAX_RANK];                                                                             \
                gboolean inside = TRUE;                                                                              \
                for (int d = 0; d < nsp && inside; d++)                                                              \
                  {                                                                                                  \
                    double p = (double) (opos[d] * j->s[d] - j->pad[d] + kpos[d] * j->d[d])                          \
                               + (double) offk[d * L + l];                                                           \
                    if (!(p > -1.0 && p < (double) j->in[d]))                                                        \
                      inside = FALSE;                                                                                \
                    else                                                                                             \
                      {                                                                                              \
                        double f = floor (p);                                                                        \
                        lo[d] = (int64_t) f;                                                                         \
                        fr[d] = p - f;                                                                               \
                      }                                                                                              \
                  }                                                                                                  \
                int nc = 0;                                                                                          \
                double m = mk ? (double) mk[l] : 1.0;                                                                \
                if (inside)                                                                                          \
                  for (int64_t corner = 0; corner < (G_GINT64_CONSTANT (1) << nsp); corner++)                        \
                    {                                                                                                \
                      int64_t idx = 0;                                                                               \
                      double wt = m;                                                                                 \
                      gboolean ok = TRUE;                                                                            \
                      for (int d = 0; d < nsp; d++)                                                                  \
                        {                                                                                            \
                          int hi = (corner >> (nsp - 1 - d)) & 1;                                                    \
                          int64_t i = lo[d] + hi;                                                                    \
                          if (i < 0 || i >= j->in[d])                                                                \
                            {                                                                                        \
                              ok = FALSE;                                                                            \
                              break;                                                                                 \
                            }                                                                                        \
                          idx += i * in_strides[d];                                                                  \
                          wt *= hi ? fr[d] : 1.0 - fr[d];                                                            \
                        }                                                                                            \
                      if (ok)                                                                                        \
                        {                                                                                            \
                          ci[nc] = idx;                                                                              \
                          cw[nc++] = wt;                                                                             \
                        }                                                                                            \
                    }                                                                                                \
                for (int64_t c = cb; c < ce; c++)                                                                    \
                  {                                                                                                  \
                    const T *xc = x + c * j->in_size;                                                                \
                    double v = 0;                                                                                    \
                    for (int q = 0; q < nc; q++)                                                                     \
                      v += cw[q] * (double) xc[ci[q]];                                                               \
                    col[((c - c0) * K + kk) * lt + (l - l0)] = (T) v;                                                \
                  }                                                                                                  \
              }                                                                                                      \
          }                                                                                                          \
      }                                                                                                              \
    T *y = (T *) j->y + (n * j->M + g * j->Mg) * L + l0;                                                             \
    const T *w = (const T *) j->w + g * j->Mg * j->Cg * K;                                                           \
    GEMM (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) j->Mg, (int) lt, (int) (j->Cg * K), 1, w,                 \
          (int) (j->Cg * K), col, (int) lt, 0, y, (int) L);                                                          \
    if (j->bias)                                                                                                     \
      for (int64_t mo = 0; mo < j->Mg; mo++)                                                                         \
        {                                                                                                            \
          T b = ((const T *) j->bias)[g * j->Mg + mo];                                                               \
          for (int64_t l = 0; l < lt; l++)                                                                           \
            y[mo * L + l] += b;                                                                                      \
        }                                                                                                            \
  }                                                                                                                  \
  static void deform_units_##N (int64_t begin, int64_t end, gpointer data)                                          \
  {                                                                                                                  \
    DeformJob *j = data;                                                                                             \
    T *col = g_try_new (T, j->Cg * j->K * j->tile);                                                                  \
    int64_t *ci = g_try_new (int64_t, G_GINT64_CONSTANT (1) << j->nsp);                                              \
    double *cw = g_try_new (double, G_GINT64_CONSTANT (1) << j->nsp);                                                \
    if (!col || !ci || !cw)                                                                                          \
      j->failed = TRUE;                                                                                              \
    else                                                                                                             \
      for (int64_t u = begin; u < end; u++)                                                                          \
        {                                                                                                            \
          int64_t t = u % j->ntiles, g = (u / j->ntiles) % j->group, n = u / (j->ntiles * j->group);                 \
          int64_t l0 = t * j->tile;                                                                                  \
          deform_unit_##N (j, n, g, l0, MIN (j->tile, j->L - l0), col, ci, cw);                                      \
        }                                                                                                            \
    g_free (col);                                                                                                    \
    g_free (ci);                                                                                                     \
    g_free (cw);                                                                                                     \
  }
DEFINE_DEFORM (float, FLOAT, cblas_sgemm)
DEFINE_DEFORM (double, DOUBLE, cblas_dgemm)

static gboolean
deform_ints (OwbKernelContext *ctx, const char *name, int want, int64_t def, int64_t lo, int64_t *out, gboolean *present,
             GError **error)
{
  int n = 0;
  const int64_t *v = owb_node_get_ints (ctx->node, name, &n);
  if (present)
    *present = v != NULL;
  for (int i = 0; i < want; i++)
    out[i] = def;
  if (!v)
    return TRUE;
  if (n != want)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute %s has %d values, expected %d", name, n,
                            want);
      return FALSE;
    }
  for (int i = 0; i < n; i++)
    {
      if (v[i] < lo || v[i] > MAX_SIZE)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute %s[%d] = %" G_GINT64_FORMAT
                                " is out of range", name, i, v[i]);
          return FALSE;
        }
      out[i] = v[i];
    }
  return TRUE;
}

static gboolean
compute_deform_conv (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0], *w = ctx->inputs[1], *off = ctx->inputs[2];
  const OwbTensor *b = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  const OwbTensor *mask = ctx->n_inputs > 4 ? ctx->inputs[4] : NULL;
  OwbTensor *y = ctx->outputs[0];
  int r = x->rank, nsp = r - 2;
  if (r < 3 || w->rank != r || off->rank != r || (mask && mask->rank != r) || y->rank != r)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "X, W, offset and mask must have the same rank >= 3");
      return FALSE;
    }
  DeformJob j = { 0 };
  j.nsp = nsp;
  j.N = x->dims[0];
  j.C = x->dims[1];
  j.M = w->dims[0];
  j.group = owb_node_get_int (ctx->node, "group", 1);
  j.og = owb_node_get_int (ctx->node, "offset_group", 1);
  int64_t pads[2 * OWB_MAX_RANK];
  gboolean have_kernel;
  if (!deform_ints (ctx, "kernel_shape", nsp, 1, 1, j.k, &have_kernel, error)
      || !deform_ints (ctx, "strides", nsp, 1, 1, j.s, NULL, error)
      || !deform_ints (ctx, "dilations", nsp, 1, 1, j.d, NULL, error)
      || !deform_ints (ctx, "pads", 2 * nsp, 0, 0, pads, NULL, error))
    return FALSE;
  if (j.group < 1 || j.og < 1 || j.C % j.group != 0 || j.C % j.og != 0 || j.M % j.group != 0
      || w->dims[1] * j.group != j.C)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "channels (X %" G_GINT64_FORMAT ", W %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT
                            ") do not fit group %" G_GINT64_FORMAT " and offset_group %" G_GINT64_FORMAT,
                            j.C, w->dims[0], w->dims[1], j.group, j.og);
      return FALSE;
    }
  j.Cg = j.C / j.group;
  j.Mg = j.M / j.group;
  j.Cog = j.C / j.og;
  j.K = 1;
  j.L = 1;
  j.in_size = 1;
  for (int i = 0; i < nsp; i++)
    {
      if (have_kernel && j.k[i] != w->dims[2 + i])
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "kernel_shape does not match W");
          return FALSE;
        }
      j.k[i] = w->dims[2 + i];
      j.in[i] = x->dims[2 + i];
      j.pad[i] = pads[i];
      int64_t dk = (j.k[i] - 1) * j.d[i] + 1, padded = j.in[i] + pads[i] + pads[nsp + i];
      j.out[i] = padded >= dk ? (padded - dk) / j.s[i] + 1 : 0;
      if (padded < dk || y->dims[2 + i] != j.out[i] || off->dims[2 + i] != j.out[i]
          || (mask && mask->dims[2 + i] != j.out[i]))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                                "spatial axis %d: the offset, mask and output sizes must be %" G_GINT64_FORMAT, i,
                                j.out[i]);
          return FALSE;
        }
      j.K *= j.k[i];
      j.L *= j.out[i];
      j.in_size *= j.in[i];
    }
  if (off->dims[0] != j.N || off->dims[1] != j.og * j.K * nsp || (mask && (mask->dims[0] != j.N || mask->dims[1] != j.og * j.K))
      || (b && b->nelems != j.M) || y->dims[0] != j.N || y->dims[1] != j.M)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "offset must be [N, %" G_GINT64_FORMAT ", ...], mask [N, %" G_GINT64_FORMAT
                            ", ...] and B [%" G_GINT64_FORMAT "]",
                            j.og * j.K * nsp, j.og * j.K, j.M);
      return FALSE;
    }
  if (y->nelems == 0)
    return TRUE;
  if (j.Cg * j.K > G_MAXINT || j.L > G_MAXINT)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "DeformConv is too large");
      return FALSE;
    }
  j.tile = MAX (1, MIN (j.L, DEFORM_COL_BUDGET / MAX (j.Cg * j.K, 1)));
  j.ntiles = (j.L + j.tile - 1) / j.tile;
  j.x = x->data;
  j.w = w->data;
  j.offset = off->data;
  j.mask = mask ? mask->data : NULL;
  j.bias = b ? b->data : NULL;
  j.y = y->data;
  if (j.Cg * j.K == 0)
    {
      memset (y->data, 0, y->nbytes);
      if (b)
        for (int64_t i = 0; i < y->nelems; i++)
          owb_tensor_set_double (y, i, owb_tensor_get_double (b, (i / j.L) % j.M));
      return TRUE;
    }
  int64_t units = j.N * j.group * j.ntiles;
  if (x->dtype == OWB_TYPE_DOUBLE)
    owb_parallel_for (ctx->pool, units, 1, deform_units_DOUBLE, &j);
  else
    owb_parallel_for (ctx->pool, units, 1, deform_units_FLOAT, &j);
  if (j.failed)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "out of memory");
      return FALSE;
    }
  return TRUE;
}

/* ==== the table ==== */

#define FLOATS OWB_CPU_TYPES_FLOATS

const OwbKernelDef _owb_cpu_kernels_signal[] = {
  { "DFT", "", 17, 0, FLOATS, 0, NULL, NULL, compute_dft },
  { "STFT", "", 17, 0, FLOATS, 0, NULL, NULL, compute_stft },
  { "HannWindow", "", 17, 0, OWB_CPU_TYPES_NUMERIC, -1, NULL, NULL, compute_hann },
  { "HammingWindow", "", 17, 0, OWB_CPU_TYPES_NUMERIC, -1, NULL, NULL, compute_hamming },
  { "BlackmanWindow", "", 17, 0, OWB_CPU_TYPES_NUMERIC, -1, NULL, NULL, compute_blackman },
  { "MelWeightMatrix", "", 17, 0, OWB_CPU_TYPES_NUMERIC, -1, NULL, NULL, compute_mel_weight_matrix },
  { "GridSample", "", 16, 0, OWB_CPU_TYPES_NUMERIC, 0, grid_sample_prepare, g_free, compute_grid_sample },
  { "AffineGrid", "", 20, 0, FLOATS, 0, NULL, NULL, compute_affine_grid },
  { "RoiAlign", "", 10, 0, FLOATS, 0, roi_align_prepare, g_free, compute_roi_align },
  { "NonMaxSuppression", "", 10, 0, OWB_TYPE_BIT (OWB_TYPE_FLOAT), 0, NULL, NULL, compute_nms },
  { "DeformConv", "", 19, 0, FLOATS, 0, NULL, NULL, compute_deform_conv },
  { NULL }
};
