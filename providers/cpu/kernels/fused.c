/* fused.c: CPU kernels of the engine's own fused ops (domain ai.onnx.workbench): FusedConv,
 * FusedMatMul and FusedGemm. Each computes its output tile by tile (GEMM through OpenBLAS, or a
 * direct kernel for depthwise convolutions, cpu-depthwise.c): bias and residual fill the tile before
 * the GEMM accumulates onto it, and the activation runs over the tile right after, while it is
 * still in cache. The passes over memory that separate Add and activation nodes make are what
 * fusion saves. */
#include "../cpu-activation-private.h"
#include "../cpu-conv-private.h"
#include "../cpu-gemv-private.h"
#include "../cpu-sgemm-private.h"
#include "conv-im2col-private.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#define MAX_SP OWB_MAX_RANK
/* Elements of one im2col tile: large enough for an efficient GEMM, small enough for the outer caches. */
#define COL_BUDGET (G_GINT64_CONSTANT (1) << 19)
/* Elements of one output tile: a quarter of a 1 MiB L2 in float, so the epilogue reads it from cache. */
#define OUT_BUDGET (G_GINT64_CONSTANT (1) << 16)
#define MIN_TILE 64
/* Below this many multiply-adds a product is not worth splitting over threads. */
#define PARALLEL_WORK (G_GINT64_CONSTANT (1) << 21)

/* ---- activations ---- */

/* ---- typed building blocks, stamped per float type ---- */

#define BLAS_GEMM_FLOAT cblas_sgemm
#define BLAS_GEMM_DOUBLE cblas_dgemm

/* 16-byte GCC vectors (SSE/NEON): the build's -O2 does not vectorize the epilogue loops by itself. */
#define DEFINE_VECTORS(T, NAME)                                                                                    \
  OWB_CPU_DEFINE_VEC16 (T, NAME)                                                                                   \
  typedef __typeof__ ((vec_##NAME){} < (vec_##NAME){}) mask_##NAME;                                                \
  /* m ? a : b, lane by lane */                                                                                    \
  static inline vec_##NAME vselect_##NAME (mask_##NAME m, vec_##NAME a, vec_##NAME b)                              \
  {                                                                                                                \
    return (vec_##NAME) ((m & (mask_##NAME) a) | (~m & (mask_##NAME) b));                                         \
  }                                                                                                                \
  static inline T clamp01_##NAME (T x)                                                                             \
  {                                                                                                                \
    return x < 0 ? (T) 0 : (x > 1 ? (T) 1 : x);                                                                    \
  }                                                                                                                \
  static inline vec_##NAME vclamp01_##NAME (vec_##NAME x)                                                          \
  {                                                                                                                \
    vec_##NAME zero = (vec_##NAME){}, one = zero + 1;                                                              \
    x = vselect_##NAME (x < zero, zero, x);                                                                        \
    return vselect_##NAME (x > one, one, x);                                                                       \
  }

OWB_CPU_FOR_FLOATS (DEFINE_VECTORS)

/* exp over float vectors (Cephes' expf: x = n ln 2 + r, |r| <= ln 2 / 2, a degree-6 polynomial for
 * e^r, 2^n put in the exponent bits); within 2 ulp of expf, clamped to [-87, 88] so that 2^n stays a
 * normal number. Stamped for 16-byte vectors and, on x86-64, for 32-byte AVX2+FMA and 64-byte
 * AVX-512 ones chosen at run time: Swish, Sigmoid and GELU epilogues are bound by this arithmetic, not by memory. */
#define DEFINE_VEXP(V, VI, SFX, ATTR)                                                                              \
  ATTR static inline V vexp##SFX (V x)                                                                             \
  {                                                                                                                \
    const V zero = (V){}, magic = zero + 12582912.0f; /* 1.5 * 2^23: rounds to an integer */                       \
    VI lo = x < zero - 87.0f, hi = x > zero + 88.0f;                                                               \
    x = (V) ((lo & (VI) (zero - 87.0f)) | (~lo & (VI) x));                                                         \
    x = (V) ((hi & (VI) (zero + 88.0f)) | (~hi & (VI) x));                                                         \
    V n = (x * 1.44269504088896341f + magic) - magic;                                                              \
    V r = x - n * 0.693359375f + n * 2.12194440e-4f;                                                               \
    V p = zero + 1.9875691500e-4f;                                                                                 \
    p = p * r + 1.3981999507e-3f;                                                                                  \
    p = p * r + 8.3334519073e-3f;                                                                                  \
    p = p * r + 4.1665795894e-2f;                                                                                  \
    p = p * r + 1.6666665459e-1f;                                                                                  \
    p = p * r + 5.0000001201e-1f;                                                                                  \
    p = p * r * r + r + 1.0f;                                                                                      \
    VI e = (__builtin_convertvector (n, VI) + 127) << 23;                                                          \
    return p * (V) e;                                                                                              \
  }                                                                                                                \
                                                                                                                   \
  /* y = y / (1 + e^-y) (Swish) or 1 / (1 + e^-y) (Sigmoid) over whole vectors; returns the count done */        \
  ATTR static int64_t logistic##SFX (float *y, int64_t n, gboolean swish)                                          \
  {                                                                                                                \
    enum { L = sizeof (V) / sizeof (float) };                                                                      \
    const V one = (V){} + 1.0f;                                                                                    \
    int64_t j = 0;                                                                                                 \
    for (; j + L <= n; j += L)                                                                                     \
      {                                                                                                            \
        V x;                                                                                                       \
        memcpy (&x, y + j, sizeof x);                                                                              \
        V r = (swish ? x : one) / (one + vexp##SFX (-x));                                                          \
        memcpy (y + j, &r, sizeof r);                                                                              \
      }                                                                                                            \
    return j;                                                                                                      \
  }                                                                                                                \
                                                                                                                   \
  /* GELU over whole vectors (see gelu_FLOAT); returns the count done */                                          \
  ATTR static int64_t gelu##SFX (float *y, int64_t n, gboolean tanh_form)                                          \
  {                                                                                                                \
    enum { L = sizeof (V) / sizeof (float) };                                                                      \
    const V zero = (V){}, one = zero + 1.0f;                                                                       \
    const VI abs_bits = (VI){} + 0x7fffffff;                                                                       \
    int64_t j = 0;                                                                                                 \
    for (; j + L <= n; j += L)                                                                                     \
      {                                                                                                            \
        V x, r;                                                                                                    \
        memcpy (&x, y + j, sizeof x);                                                                              \
        if (tanh_form)                                                                                             \
          r = x / (one + vexp##SFX (x * (-1.5957691216057308f + -0.0713548162726f * x * x)));                      \
        else                                                                                                       \
          {                                                                                                        \
            V z = (V) ((VI) x & abs_bits) * 0.70710678118654752440f;                                               \
            V t = one / (one + 0.3275911f * z);                                                                    \
            V p = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f)))); \
            V e = one - p * vexp##SFX (-z * z);                                                                    \
            VI neg = x < zero;                                                                                     \
            r = 0.5f * x * (one + (V) ((neg & (VI) -e) | (~neg & (VI) e)));                                        \
          }                                                                                                        \
        memcpy (y + j, &r, sizeof r);                                                                              \
      }                                                                                                            \
    return j;                                                                                                      \
  }

typedef int32_t vint_FLOAT __attribute__ ((vector_size (16)));
DEFINE_VEXP (vec_FLOAT, vint_FLOAT, _FLOAT_, )
#if defined(__x86_64__)
#define HAVE_AVX2_CODE 1
typedef float v8f __attribute__ ((vector_size (32)));
typedef int32_t v8i __attribute__ ((vector_size (32)));
DEFINE_VEXP (v8f, v8i, _avx2, __attribute__ ((target ("avx2,fma"))))
/* and 64-byte ones where the CPU has AVX-512: GELU went from 3.8% to 2.5% of bert_small at one thread */
typedef float v16f __attribute__ ((vector_size (64)));
typedef int32_t v16i __attribute__ ((vector_size (64)));
DEFINE_VEXP (v16f, v16i, _avx512, __attribute__ ((target ("avx512f,avx512vl,avx512dq,avx512bw,fma"))))
#endif

/* y = y / (1 + e^-y) (Swish) or 1 / (1 + e^-y) (Sigmoid), in place. */
static void
logistic_FLOAT (float *y, int64_t n, gboolean swish)
{
  int64_t j = 0;
#ifdef HAVE_AVX2_CODE
  if (_owb_cpu_has_avx512 ())
    j = logistic_avx512 (y, n, swish);
  else if (_owb_cpu_has_avx2_fma ())
    j = logistic_avx2 (y, n, swish);
#endif
  j += logistic_FLOAT_ (y + j, n - j, swish);
  /* the tail through the vector code too (short rows are common: 7x7 planes) */
  if (j < n)
    {
      float tail[LANES_FLOAT] = { 0 };
      memcpy (tail, y + j, (n - j) * sizeof (float));
      logistic_FLOAT_ (tail, LANES_FLOAT, swish);
      memcpy (y + j, tail, (n - j) * sizeof (float));
    }
}

static void
logistic_DOUBLE (double *y, int64_t n, gboolean swish)
{
  for (int64_t j = 0; j < n; j++)
    y[j] = (swish ? y[j] : 1.0) / (1.0 + exp (-y[j]));
}

/* GELU, 0.5 x (1 + erf (x / sqrt 2)), with erf from Abramowitz and Stegun 7.1.26 (absolute error
 * below 1.5e-7), in place; the tanh form is x * sigmoid (2 sqrt (2 / pi) (x + 0.044715 x^3)), the
 * same function without tanh's cancellation. */
static void
gelu_FLOAT (float *y, int64_t n, gboolean tanh_form)
{
  int64_t j = 0;
#ifdef HAVE_AVX2_CODE
  if (_owb_cpu_has_avx512 ())
    j = gelu_avx512 (y, n, tanh_form);
  else if (_owb_cpu_has_avx2_fma ())
    j = gelu_avx2 (y, n, tanh_form);
#endif
  j += gelu_FLOAT_ (y + j, n - j, tanh_form);
  if (j < n)
    {
      float tail[LANES_FLOAT] = { 0 };
      memcpy (tail, y + j, (n - j) * sizeof (float));
      gelu_FLOAT_ (tail, LANES_FLOAT, tanh_form);
      memcpy (y + j, tail, (n - j) * sizeof (float));
    }
}

static void
gelu_DOUBLE (double *y, int64_t n, gboolean tanh_form)
{
  for (int64_t j = 0; j < n; j++)
    {
      double x = y[j];
      y[j] = tanh_form ? 0.5 * x * (1 + tanh (0.7978845608028654 * (x + 0.044715 * x * x * x)))
                       : 0.5 * x * (1 + erf (x * 0.70710678118654752440));
    }
}

static inline float
tanh_FLOAT (float x)
{
  return tanhf (x);
}

static inline double
tanh_DOUBLE (double x)
{
  return tanh (x);
}

/* The epilogue applies y = act (y + s + vs * v[j]) over a row; the activation's switch sits outside
 * the loops. Comparisons are written so that NaN passes through like the standalone ops. */
#define DEFINE_BLOCKS(T, NAME)                                                                                     \
  /* y[j] = act (y[j] + s + vs * v[j]) for j < n; v may be NULL. */                                               \
  static void epilogue_##NAME (T *restrict y, int64_t n, T s, const T *restrict v, T vs, const OwbCpuActivation *act)   \
  {                                                                                                                \
    enum { L = LANES_##NAME };                                                                                     \
    const vec_##NAME zero = (vec_##NAME){}, sv = zero + s, vsv = zero + vs;                                        \
    const T p0 = (T) act->p0, p1 = (T) act->p1;                                                                    \
    const vec_##NAME p0v = zero + p0, p1v = zero + p1;                                                             \
    (void) p0v;                                                                                                    \
    (void) p1v;                                                                                                    \
    int64_t j = 0;                                                                                                 \
    EPILOGUE_LOOPS (T, NAME)                                                                                       \
  }

/* The loops of epilogue_##NAME, one pair per activation. */
#define EPILOGUE_LOOP(T, NAME, VEXPR, SEXPR)                                                                       \
  do                                                                                                               \
    {                                                                                                              \
      if (v)                                                                                                       \
        for (; j + L <= n; j += L)                                                                                 \
          {                                                                                                        \
            vec_##NAME x = vload_##NAME (y + j) + sv + vsv * vload_##NAME (v + j);                                 \
            vstore_##NAME (y + j, (VEXPR));                                                                        \
          }                                                                                                        \
      else                                                                                                         \
        for (; j + L <= n; j += L)                                                                                 \
          {                                                                                                        \
            vec_##NAME x = vload_##NAME (y + j) + sv;                                                              \
            vstore_##NAME (y + j, (VEXPR));                                                                        \
          }                                                                                                        \
      for (; j < n; j++)                                                                                           \
        {                                                                                                          \
          T x = y[j] + s + (v ? vs * v[j] : (T) 0);                                                                \
          y[j] = (SEXPR);                                                                                          \
        }                                                                                                          \
    }                                                                                                              \
  while (0)

/* The transcendental activations take a second pass over the row, still in L1: vector exp for float
 * (logistic_, gelu_), libm for Tanh and for double. */
#define EPILOGUE_LOOPS(T, NAME)                                                                                    \
  switch (act->kind)                                                                                               \
    {                                                                                                              \
    case OWB_CPU_ACT_NONE:                                                                                                 \
      EPILOGUE_LOOP (T, NAME, x, x);                                                                               \
      break;                                                                                                       \
    case OWB_CPU_ACT_RELU:                                                                                                 \
      EPILOGUE_LOOP (T, NAME, vselect_##NAME (x < zero, zero, x), x < 0 ? (T) 0 : x);                              \
      break;                                                                                                       \
    case OWB_CPU_ACT_LEAKY_RELU:                                                                                           \
      EPILOGUE_LOOP (T, NAME, vselect_##NAME (x < zero, x * p0v, x), x < 0 ? x * p0 : x);                          \
      break;                                                                                                       \
    case OWB_CPU_ACT_CLIP:                                                                                                 \
      EPILOGUE_LOOP (T, NAME, vselect_##NAME (x > p1v, p1v, vselect_##NAME (x < p0v, p0v, x)),                     \
                     x < p0 ? p0 : (x > p1 ? p1 : x));                                                             \
      break;                                                                                                       \
    case OWB_CPU_ACT_HARD_SIGMOID:                                                                                         \
      EPILOGUE_LOOP (T, NAME, vclamp01_##NAME (x * p0v + p1v), clamp01_##NAME (x * p0 + p1));                      \
      break;                                                                                                       \
    case OWB_CPU_ACT_HARD_SWISH:                                                                                           \
      EPILOGUE_LOOP (T, NAME, x * vclamp01_##NAME (x * p0v + p1v), x * clamp01_##NAME (x * p0 + p1));              \
      break;                                                                                                       \
    case OWB_CPU_ACT_SIGMOID:                                                                                              \
      EPILOGUE_LOOP (T, NAME, x, x);                                                                               \
      logistic_##NAME (y, n, FALSE);                                                                               \
      break;                                                                                                       \
    case OWB_CPU_ACT_TANH:                                                                                                 \
      EPILOGUE_LOOP (T, NAME, x, x);                                                                               \
      for (int64_t i = 0; i < n; i++)                                                                              \
        y[i] = tanh_##NAME (y[i]);                                                                                 \
      break;                                                                                                       \
    case OWB_CPU_ACT_SWISH:                                                                                                \
      EPILOGUE_LOOP (T, NAME, x, x);                                                                               \
      logistic_##NAME (y, n, TRUE);                                                                                \
      break;                                                                                                       \
    case OWB_CPU_ACT_GELU:                                                                                                 \
    case OWB_CPU_ACT_FAST_GELU:                                                                                            \
      EPILOGUE_LOOP (T, NAME, x, x);                                                                               \
      gelu_##NAME (y, n, act->kind == OWB_CPU_ACT_FAST_GELU);                                                              \
      break;                                                                                                       \
    }

OWB_CPU_FOR_FLOATS (DEFINE_BLOCKS)

/* C = alpha op(A) op(B) + beta C through BLAS (beta 0 or 1); handles the degenerate sizes BLAS
 * rejects. The fused kernels pre-fill C with bias (and residual) and pass beta 1: OpenBLAS applies
 * any other beta, 0 included, in a separate pass over C. */
#define DEFINE_GEMM(T, NAME)                                                                                       \
  static void gemm_##NAME (gboolean ta, gboolean tb, int64_t m, int64_t n, int64_t k, T alpha, const T *a,         \
                           int64_t lda, const T *b, int64_t ldb, T beta, T *c, int64_t ldc)                        \
  {                                                                                                                \
    if (m <= 0 || n <= 0)                                                                                          \
      return;                                                                                                      \
    if (k <= 0)                                                                                                    \
      {                                                                                                            \
        if (beta == 0)                                                                                             \
          for (int64_t i = 0; i < m; i++)                                                                          \
            memset (c + i * ldc, 0, n * sizeof (T));                                                               \
        return;                                                                                                    \
      }                                                                                                            \
    BLAS_GEMM_##NAME (CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int) m,       \
                      (int) n, (int) k, alpha, a, (int) MAX (lda, 1), b, (int) MAX (ldb, 1), beta, c,              \
                      (int) MAX (ldc, 1));                                                                         \
  }                                                                                                                \
                                                                                                                   \
  /* y[j] = s + vs * v[j] (v may be NULL): what the GEMM then accumulates onto */                                 \
  static void prefill_##NAME (T *restrict y, int64_t n, T s, const T *restrict v, T vs)                            \
  {                                                                                                                \
    enum { L = LANES_##NAME };                                                                                     \
    const vec_##NAME sv = (vec_##NAME){} + s, vsv = (vec_##NAME){} + vs;                                           \
    int64_t j = 0;                                                                                                 \
    if (v)                                                                                                         \
      {                                                                                                            \
        for (; j + L <= n; j += L)                                                                                 \
          vstore_##NAME (y + j, sv + vsv * vload_##NAME (v + j));                                                  \
        for (; j < n; j++)                                                                                         \
          y[j] = s + vs * v[j];                                                                                    \
      }                                                                                                            \
    else                                                                                                           \
      {                                                                                                            \
        for (; j + L <= n; j += L)                                                                                 \
          vstore_##NAME (y + j, sv);                                                                               \
        for (; j < n; j++)                                                                                         \
          y[j] = s;                                                                                                \
      }                                                                                                            \
  }

OWB_CPU_FOR_FLOATS (DEFINE_GEMM)

/* ---- FusedConv ---- */

/* FusedConv: a Conv's attributes plus the activation applied in the epilogue. */
typedef struct {
  OwbCpuConvParams conv;
  OwbCpuActivation act;
} ConvParams;
typedef OwbCpuConvGeom ConvGeom;


static gboolean
fused_conv_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                    GError **error)
{
  ConvParams *p = g_new (ConvParams, 1);
  if (!_owb_cpu_conv_params_parse (node, &p->conv, error) || !_owb_cpu_activation_parse (node, &p->act, error))
    {
      g_free (p);
      return FALSE;
    }
  *state = p;
  return TRUE;
}




typedef struct {
  const ConvGeom *g;
  const OwbCpuActivation *act;
  OwbDataType dtype;
  const void *x, *w, *bias, *z;
  void *y;
  gboolean direct; /* 1x1, stride 1, no padding: X itself is the GEMM operand */
  int64_t tile, ntiles;   /* output positions per unit */
  int64_t mblock, nmblocks; /* output channels (of a group) per unit */
} ConvJob;

#define DEFINE_CONV(T, NAME)                                                                                       \
  static void conv_tiles_##NAME (const ConvJob *job, int64_t begin, int64_t end)                                   \
  {                                                                                                                \
    const ConvGeom *g = job->g;                                                                                    \
    int64_t rows = g->Cg * g->ksize;                                                                               \
    const T *bias = job->bias, *z = job->z;                                                                        \
    T *col = job->direct ? NULL : g_new (T, MAX (rows * job->tile, 1));                                            \
    int64_t col_of = -1; /* the tile whose patches col holds */                                                   \
    for (int64_t u = begin; u < end; u++)                                                                          \
      {                                                                                                            \
        int64_t tu = u / job->nmblocks, mb = u % job->nmblocks;                                                    \
        int64_t n = tu / (g->group * job->ntiles), gi = tu / job->ntiles % g->group, t = tu % job->ntiles;         \
        int64_t m0 = mb * job->mblock, mn = MIN (job->mblock, g->Mg - m0);                                         \
        const T *xg = (const T *) job->x + (n * g->C + gi * g->Cg) * g->in_size;                                   \
        const T *wg = (const T *) job->w + (gi * g->Mg + m0) * rows;                                               \
        int64_t yoff = (n * g->M + gi * g->Mg + m0) * g->out_size;                                                 \
        T *yg = (T *) job->y + yoff;                                                                               \
        int64_t p0 = t * job->tile, len = MIN (job->tile, g->out_size - p0);                                       \
        /* bias and residual first, so that the GEMM accumulates onto them (beta 1) */                            \
        T beta = 0;                                                                                                \
        if (bias || z)                                                                                             \
          {                                                                                                        \
            for (int64_t m = 0; m < mn; m++)                                                                       \
              prefill_##NAME (yg + m * g->out_size + p0, len, bias ? bias[gi * g->Mg + m0 + m] : (T) 0,            \
                              z ? z + yoff + m * g->out_size + p0 : NULL, 1);                                      \
            beta = 1;                                                                                              \
          }                                                                                                        \
        if (job->direct)                                                                                           \
          gemm_##NAME (FALSE, FALSE, mn, len, rows, 1, wg, rows, xg + p0, g->in_size, beta, yg + p0, g->out_size); \
        else                                                                                                       \
          {                                                                                                        \
            if (col_of != tu)                                                                                      \
              im2col_##NAME (g, xg, p0, len, col);                                                                 \
            col_of = tu;                                                                                           \
            gemm_##NAME (FALSE, FALSE, mn, len, rows, 1, wg, rows, col, len, beta, yg + p0, g->out_size);          \
          }                                                                                                        \
        /* the tile is in cache now: the activation in one pass over it */                                        \
        if (job->act->kind != OWB_CPU_ACT_NONE)                                                                            \
          for (int64_t m = 0; m < mn; m++)                                                                         \
            epilogue_##NAME (yg + m * g->out_size + p0, len, 0, NULL, 0, job->act);                                \
      }                                                                                                            \
    g_free (col);                                                                                                  \
  }                                                                                                                \

OWB_CPU_FOR_FLOATS (OWB_CPU_DEFINE_IM2COL)
OWB_CPU_FOR_FLOATS (DEFINE_CONV)

static void
conv_tiles_chunk (int64_t begin, int64_t end, gpointer data)
{
  const ConvJob *job = data;
  if (job->dtype == OWB_TYPE_DOUBLE)
    conv_tiles_DOUBLE (job, begin, end);
  else
    conv_tiles_FLOAT (job, begin, end);
}

/* The depthwise kernel's row epilogue: residual and activation (the bias is already in). */
typedef struct {
  const OwbCpuActivation *act;
  OwbDataType dtype;
  const void *z;
} DepthwiseEpilogue;

static void
depthwise_epilogue (void *row, int64_t offset, int64_t n, gconstpointer data)
{
  const DepthwiseEpilogue *e = data;
  if (e->dtype == OWB_TYPE_DOUBLE)
    epilogue_DOUBLE (row, n, 0, e->z ? (const double *) e->z + offset : NULL, 1, e->act);
  else
    epilogue_FLOAT (row, n, 0, e->z ? (const float *) e->z + offset : NULL, 1, e->act);
}

static gboolean
compute_fused_conv (OwbKernelContext *ctx, GError **error)
{
  const ConvParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  const OwbTensor *b = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  const OwbTensor *z = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  OwbTensor *y = ctx->outputs[0];
  ConvGeom g;
  if (w->dtype != x->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "X and W must have one type");
      return FALSE;
    }
  if (!_owb_cpu_conv_geometry (ctx, &p->conv, x, w, y, FALSE, &g, error))
    return FALSE;
  if (!_owb_cpu_conv_check_bias (ctx, b, &g, x->dtype, error))
    return FALSE;
  if (z && (!owb_tensor_same_shape (z, y) || z->dtype != y->dtype))
    {
      char *zs = owb_tensor_shape_to_string (z), *ys = owb_tensor_shape_to_string (y);
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "residual Z %s must have the output's shape %s and type", zs,
                            ys);
      g_free (zs);
      g_free (ys);
      return FALSE;
    }
  if (y->nelems == 0)
    return TRUE;
  ConvJob job = { .g = &g, .act = &p->act, .dtype = x->dtype, .x = x->data, .w = w->data,
                  .bias = b ? b->data : NULL, .z = z ? z->data : NULL, .y = y->data };
  if (_owb_cpu_conv_is_depthwise (&g))
    {
      DepthwiseEpilogue e = { &p->act, x->dtype, job.z };
      gboolean needed = job.z || p->act.kind != OWB_CPU_ACT_NONE;
      _owb_cpu_depthwise_conv (ctx->pool, &g, x->dtype, job.x, job.w, job.bias, job.y,
                               needed ? depthwise_epilogue : NULL, &e);
      return TRUE;
    }
  job.direct = TRUE;
  for (int i = 0; i < g.nsp; i++)
    if (g.k[i] != 1 || g.s[i] != 1 || g.pad[i] != 0 || g.out[i] != g.in[i])
      job.direct = FALSE;
  int64_t rows = MAX (g.Cg * g.ksize, 1);
  int64_t tile = g.out_size;
  if (!job.direct)
    tile = MIN (tile, MAX (COL_BUDGET / rows, MIN_TILE));
  tile = MIN (tile, MAX (OUT_BUDGET / MAX (g.Mg, 1), MIN_TILE));
  /* Enough units for every thread: split the output columns further when batch x groups is small. */
  int threads = _owb_cpu_pool_threads (ctx->pool);
  int64_t images = g.N * g.group;
  if (threads > 1 && images * ((g.out_size + tile - 1) / tile) < 2 * threads)
    {
      int64_t want = (2 * threads + images - 1) / images;
      tile = MIN (tile, MAX ((g.out_size + want - 1) / want, MIN_TILE));
    }
  job.tile = tile;
  job.ntiles = (g.out_size + tile - 1) / tile;
  /* Small images (the 7x7 end of a CNN) give fewer tiles than threads: split the output channels
   * too, in blocks of 16 or more (each block gathers its tile's patches again). */
  job.mblock = g.Mg;
  job.nmblocks = 1;
  int64_t units = images * job.ntiles;
  if (threads > 1 && units < 2 * threads && g.Mg >= 32 && g.Mg * rows * g.out_size * g.N >= PARALLEL_WORK)
    {
      job.nmblocks = MIN ((2 * threads + units - 1) / units, g.Mg / 16);
      job.mblock = (g.Mg + job.nmblocks - 1) / job.nmblocks;
      job.nmblocks = (g.Mg + job.mblock - 1) / job.mblock;
    }
  owb_parallel_for (ctx->pool, units * job.nmblocks, 1, conv_tiles_chunk, &job);
  return TRUE;
}

/* ---- FusedMatMul and FusedGemm ---- */

/* Y = act (alpha op(A) op(B) + beta C) over `batch` products of op(A) [m, k] by op(B) [k, n]: A of
 * batch i at a + a_off[i], B at b + b_off[i] (elements), Y at y + i m n. C broadcasts into [m, n] with
 * element strides c_row, c_col (c_col 0 or 1). Work units are blocks of rows (or of columns when m is
 * small) of one product: each unit's GEMM is followed by the epilogue on its block. */
typedef struct {
  OwbDataType dtype;
  gboolean ta, tb, split_rows;
  int64_t batch, m, n, k, lda, ldb;
  int64_t *a_off, *b_off;
  double alpha, beta;
  const void *a, *b, *c;
  int64_t c_row, c_col;
  void *y;
  OwbCpuActivation act;
  int64_t block, nblocks;
} GemmJob;

/* A product of at most OWB_CPU_GEMV_MAX_M rows (batch-1 Linear layers) in float: the GEMV kernels
 * read B once where sgemm would pack all of it first (alexnet's 9216x4096 classifier: 4x faster). */
static gboolean
small_gemm_FLOAT (gboolean ta, gboolean tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
                  const float *b, int64_t ldb, gboolean accumulate, float *c, int64_t ldc)
{
  if (m > OWB_CPU_GEMV_MAX_M)
    return FALSE;
  _owb_cpu_gemv (tb, m, n, k, alpha, a, ta ? 1 : lda, ta ? lda : 1, b, ldb, accumulate, c, ldc);
  return TRUE;
}

static gboolean
small_gemm_DOUBLE (gboolean ta, gboolean tb, int64_t m, int64_t n, int64_t k, double alpha, const double *a,
                   int64_t lda, const double *b, int64_t ldb, gboolean accumulate, double *c, int64_t ldc)
{
  return FALSE;
}

#define DEFINE_GEMM_UNITS(T, NAME)                                                                                 \
  static void gemm_units_##NAME (const GemmJob *j, int64_t begin, int64_t end)                                     \
  {                                                                                                                \
    const T *c = j->c;                                                                                             \
    T beta = (T) j->beta;                                                                                          \
    for (int64_t u = begin; u < end; u++)                                                                          \
      {                                                                                                            \
        int64_t bi = u / j->nblocks, lo = u % j->nblocks * j->block;                                               \
        const T *a = (const T *) j->a + j->a_off[bi], *b = (const T *) j->b + j->b_off[bi];                        \
        T *y = (T *) j->y + bi * j->m * j->n;                                                                      \
        int64_t r0 = 0, r1 = j->m, c0 = 0, c1 = j->n;                                                              \
        if (j->split_rows)                                                                                         \
          {                                                                                                        \
            r0 = lo;                                                                                               \
            r1 = MIN (lo + j->block, j->m);                                                                        \
            a += j->ta ? r0 : r0 * j->lda;                                                                         \
          }                                                                                                        \
        else                                                                                                       \
          {                                                                                                        \
            c0 = lo;                                                                                               \
            c1 = MIN (lo + j->block, j->n);                                                                        \
            b += j->tb ? c0 * j->ldb : c0;                                                                         \
          }                                                                                                        \
        T *yb = y + r0 * j->n + c0;                                                                                \
        if (c)                                                                                                     \
          for (int64_t i = r0; i < r1; i++)                                                                        \
            {                                                                                                      \
              const T *ci = c + i * j->c_row;                                                                      \
              if (j->c_col)                                                                                        \
                prefill_##NAME (y + i * j->n + c0, c1 - c0, 0, ci + c0, beta);                                     \
              else                                                                                                 \
                prefill_##NAME (y + i * j->n + c0, c1 - c0, beta * ci[0], NULL, 0);                                \
            }                                                                                                      \
        if (!small_gemm_##NAME (j->ta, j->tb, r1 - r0, c1 - c0, j->k, (T) j->alpha, a, j->lda, b, j->ldb,          \
                                c != NULL, yb, j->n))                                                              \
          gemm_##NAME (j->ta, j->tb, r1 - r0, c1 - c0, j->k, (T) j->alpha, a, j->lda, b, j->ldb, c ? 1 : 0, yb,    \
                       j->n);                                                                                      \
        if (j->act.kind != OWB_CPU_ACT_NONE)                                                                               \
          for (int64_t i = r0; i < r1; i++)                                                                        \
            epilogue_##NAME (y + i * j->n + c0, c1 - c0, 0, NULL, 0, &j->act);                                     \
      }                                                                                                            \
  }

OWB_CPU_FOR_FLOATS (DEFINE_GEMM_UNITS)

static void
gemm_units_chunk (int64_t begin, int64_t end, gpointer data)
{
  const GemmJob *j = data;
  if (j->dtype == OWB_TYPE_DOUBLE)
    gemm_units_DOUBLE (j, begin, end);
  else
    gemm_units_FLOAT (j, begin, end);
}

/* Splits the products into units: blocks whose output fits OUT_BUDGET, but of at least 64 rows (256
 * columns), since every GEMM call packs the whole other operand again; and one unit per thread at
 * least when the work is worth splitting. The split runs along the longer side: a block of rows
 * packs all of B again, a block of columns all of A (vit's [50, 768] x [768, 3072] split by rows
 * made each thread pack the 9 MB B). */
static void
gemm_job_run (OwbThreadPool *pool, GemmJob *j)
{
  if (j->batch * j->m * j->n == 0)
    return;
  int threads = _owb_cpu_pool_threads (pool);
  j->split_rows = j->m >= j->n;
  gboolean gemv = j->dtype == OWB_TYPE_FLOAT && !j->split_rows && j->m <= OWB_CPU_GEMV_MAX_M;
  gboolean parallel = threads > 1
                      && j->batch * j->m * j->n * MAX (j->k, 1) >= (gemv ? OWB_CPU_GEMV_PARALLEL_WORK : PARALLEL_WORK);
  int64_t len = j->split_rows ? j->m : j->n, other = j->split_rows ? j->n : j->m;
  int64_t align = j->split_rows ? 4 : 16;
  int64_t block = MAX (OUT_BUDGET / MAX (other, 1), j->split_rows ? 64 : 256);
  if (parallel && j->batch * ((len + block - 1) / block) < threads)
    {
      int64_t want = (threads + j->batch - 1) / j->batch;
      block = MIN (block, MAX ((len + want - 1) / want, 16));
    }
  block = MIN ((block + align - 1) / align * align, len);
  if (parallel && j->batch == 1)
    {
      /* A whole number of blocks per thread: 3 blocks on 2 threads leave one idle for a third. */
      int64_t nblocks = (len + block - 1) / block;
      nblocks = (nblocks + threads - 1) / threads * threads;
      block = (len + nblocks - 1) / nblocks;
      block = MIN ((block + align - 1) / align * align, len);
    }
  if (gemv)
    block = _owb_cpu_gemv_block (j->tb, len, j->k, parallel ? threads : 1);
  j->block = block;
  j->nblocks = (len + block - 1) / block;
  int64_t units = j->batch * j->nblocks;
  if (parallel)
    owb_parallel_for (pool, units, 1, gemm_units_chunk, j);
  else
    gemm_units_chunk (0, units, j);
}

/* A constant float B (an initializer) is packed once for cpu-sgemm.c, transB resolved and alpha folded
 * in; runs of more than OWB_CPU_GEMV_MAX_M rows use the pack while B is that very tensor (a reference
 * is held, so the address cannot be reused). `act` comes first: compute reads the state as an OwbCpuActivation. */
typedef struct {
  OwbCpuActivation act;
  OwbTensor *b;
  OwbSgemmPacked *pack;
  gboolean holds; /* a FusedMatMul with an A of rank 2 or more: every run takes the pack (see nn.c) */
} GemmParams;

static void
fused_gemm_free (gpointer data)
{
  GemmParams *p = data;
  if (p->pack)
    _owb_sgemm_packed_free (p->pack);
  if (p->b)
    owb_tensor_unref (p->b);
  g_free (p);
}

static gboolean
fused_gemm_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                    GError **error)
{
  GemmParams *p = g_new0 (GemmParams, 1);
  if (!_owb_cpu_activation_parse (node, &p->act, error))
    {
      g_free (p);
      return FALSE;
    }
  p->pack = _owb_sgemm_pack_constant_b (node, input_types, strcmp (node->op_type, "FusedGemm") == 0,
                                        owb_node_get_int (node, "transA", 0) != 0,
                                        owb_node_get_int (node, "transB", 0) != 0,
                                        owb_node_get_float (node, "alpha", 1.0f), &p->b);
  p->holds = p->pack && strcmp (node->op_type, "FusedMatMul") == 0 && input_types && input_types[0]
             && input_types[0]->rank >= 2;
  *state = p;
  return TRUE;
}

static gboolean
fused_gemm_holds (const void *state, int input)
{
  const GemmParams *p = state;
  return p && p->holds && input == 1;
}

static void
activation_rows (float *c, int64_t rows, int64_t cols, int64_t ldc, gconstpointer data)
{
  for (int64_t r = 0; r < rows; r++)
    epilogue_FLOAT (c + r * ldc, cols, 0, NULL, 0, data);
}

/* Y = A B' + bias or z (beta folded by the caller), activation in the kernel's registers where it
 * has it, on B's pack; FALSE when the pack does not apply and the generic path must run. */
static gboolean
run_packed (OwbThreadPool *pool, const GemmParams *p, const OwbTensor *b, const GemmJob *j, const float *bias,
            const float *z)
{
  /* (a B whose storage the session freed has only the pack, whatever the rows) */
  if (!p->pack || b != p->b || j->dtype != OWB_TYPE_FLOAT || j->ta || j->batch != 1
      || (j->m <= OWB_CPU_GEMV_MAX_M && b->data) || _owb_sgemm_packed_k (p->pack) != j->k
      || _owb_sgemm_packed_n (p->pack) != j->n)
    return FALSE;
  OwbSgemmEpilogue ep = { .bias = bias, .z = z, .ldz = j->n };
  _owb_sgemm_epilogue_set_activation (&ep, &p->act, activation_rows);
  _owb_sgemm_packed (pool, p->pack, j->m, j->a, j->lda, j->y, j->n, &ep);
  return TRUE;
}

static gboolean
check_blas_size (OwbKernelContext *ctx, int64_t m, int64_t n, int64_t k, GError **error)
{
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "matrix is too large for 32-bit BLAS indices");
      return FALSE;
    }
  return TRUE;
}

/* numpy.matmul of op(A) and op(B) (op: transposition of the last two axes); 1-D operands act as a
 * row (A) or a column (B). Fills the job's sizes and batch offsets and checks the output's shape. */
static gboolean
matmul_plan (OwbKernelContext *ctx, const OwbTensor *a, const OwbTensor *b, const OwbTensor *y, GemmJob *j,
             GError **error)
{
  int ra = a->rank, rb = b->rank;
  if (ra < 1 || rb < 1 || (j->ta && ra < 2) || (j->tb && rb < 2))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "operands of ranks %d and %d do not fit transA=%d transB=%d",
                            ra, rb, j->ta, j->tb);
      return FALSE;
    }
  j->m = ra >= 2 ? a->dims[ra - (j->ta ? 1 : 2)] : 1;
  j->k = a->dims[ra - (ra >= 2 && j->ta ? 2 : 1)];
  int64_t kb = rb >= 2 ? b->dims[rb - (j->tb ? 1 : 2)] : b->dims[0];
  j->n = rb >= 2 ? b->dims[rb - (j->tb ? 2 : 1)] : 1;
  j->lda = a->dims[ra - 1];
  j->ldb = rb >= 2 ? b->dims[rb - 1] : 1;
  int abr = MAX (ra - 2, 0), bbr = MAX (rb - 2, 0);
  int br = y->rank - (ra >= 2) - (rb >= 2);
  int64_t batch;
  gboolean ok = kb == j->k && _owb_cpu_matmul_batch_check (abr, a->dims, bbr, b->dims, br, y->dims, &batch);
  if (ok && ra >= 2)
    ok = y->dims[br] == j->m;
  if (ok && rb >= 2)
    ok = y->dims[y->rank - 1] == j->n;
  if (!ok)
    {
      char *as = owb_tensor_shape_to_string (a), *bs = owb_tensor_shape_to_string (b), *ys = owb_tensor_shape_to_string (y);
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "%s x %s (transA=%d, transB=%d) does not give %s", as, bs, j->ta,
                            j->tb, ys);
      g_free (as);
      g_free (bs);
      g_free (ys);
      return FALSE;
    }
  /* B without batch axes: the batch folds into the rows of one product (A's rows are contiguous). */
  if (bbr == 0 && !j->ta && j->m * batch <= INT_MAX)
    {
      j->m *= batch;
      batch = 1;
    }
  if (!check_blas_size (ctx, j->m, j->n, j->k, error))
    return FALSE;
  j->batch = batch;
  j->a_off = g_new0 (int64_t, MAX (batch, 1));
  j->b_off = g_new0 (int64_t, MAX (batch, 1));
  if (batch > 1)
    _owb_cpu_matmul_batch_offsets (abr, a->dims, bbr, b->dims, br, y->dims, batch, j->m * j->k, j->k * j->n,
                                   j->a_off, j->b_off);
  return TRUE;
}

static gboolean
compute_fused_matmul (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  const OwbTensor *bias = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  OwbTensor *y = ctx->outputs[0];
  GemmJob j = { .dtype = a->dtype, .alpha = owb_node_get_float (ctx->node, "alpha", 1.0f), .beta = 1 };
  j.ta = owb_node_get_int (ctx->node, "transA", 0) != 0;
  j.tb = owb_node_get_int (ctx->node, "transB", 0) != 0;
  j.act = *(const OwbCpuActivation *) ctx->state;
  if (b->dtype != a->dtype || (bias && bias->dtype != a->dtype))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "A, B and bias must have one type");
      return FALSE;
    }
  if (!matmul_plan (ctx, a, b, y, &j, error))
    return FALSE;
  if (bias && (bias->rank != 1 || bias->dims[0] != j.n))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "bias must be a vector of %" G_GINT64_FORMAT " values", j.n);
      g_free (j.a_off);
      g_free (j.b_off);
      return FALSE;
    }
  j.a = a->data;
  j.b = b->data;
  j.y = y->data;
  if (run_packed (ctx->pool, ctx->state, b, &j, bias ? bias->data : NULL, NULL))
    {
      g_free (j.a_off);
      g_free (j.b_off);
      return TRUE;
    }
  if (!b->data && b->nelems > 0)
    {
      g_free (j.a_off);
      g_free (j.b_off);
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,
                            "B's values are held only packed, for a float A of rank 2 or more");
      return FALSE;
    }
  if (bias)
    {
      j.c = bias->data;
      j.c_row = 0;
      j.c_col = 1;
    }
  gemm_job_run (ctx->pool, &j);
  g_free (j.a_off);
  g_free (j.b_off);
  return TRUE;
}

static gboolean
compute_fused_gemm (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  const OwbTensor *c = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  OwbTensor *y = ctx->outputs[0];
  int64_t zero = 0;
  GemmJob j = { .dtype = a->dtype, .batch = 1, .a_off = &zero, .b_off = &zero };
  j.ta = owb_node_get_int (ctx->node, "transA", 0) != 0;
  j.tb = owb_node_get_int (ctx->node, "transB", 0) != 0;
  j.alpha = owb_node_get_float (ctx->node, "alpha", 1.0f);
  j.beta = owb_node_get_float (ctx->node, "beta", 1.0f);
  j.act = *(const OwbCpuActivation *) ctx->state;
  if (a->rank != 2 || b->rank != 2 || y->rank != 2 || b->dtype != a->dtype || (c && c->dtype != a->dtype))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "A and B must be 2-D tensors of one type");
      return FALSE;
    }
  j.m = j.ta ? a->dims[1] : a->dims[0];
  j.k = j.ta ? a->dims[0] : a->dims[1];
  int64_t kb = j.tb ? b->dims[1] : b->dims[0];
  j.n = j.tb ? b->dims[0] : b->dims[1];
  j.lda = a->dims[1];
  j.ldb = b->dims[1];
  if (j.k != kb || y->dims[0] != j.m || y->dims[1] != j.n)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "A'(%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT ") and B'(%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                            ") do not multiply",
                            j.m, j.k, kb, j.n);
      return FALSE;
    }
  if (!check_blas_size (ctx, j.m, j.n, j.k, error))
    return FALSE;
  if (c && j.beta != 0)
    {
      gboolean ok = c->rank <= 2;
      for (int i = 0; ok && i < c->rank; i++)
        ok = c->dims[i] == 1 || c->dims[i] == y->dims[2 - c->rank + i];
      if (!ok)
        {
          char *s = owb_tensor_shape_to_string (c);
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                                "C %s does not broadcast to [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]", s, j.m, j.n);
          g_free (s);
          return FALSE;
        }
      int64_t cs[2];
      _owb_cpu_broadcast_strides (c->rank, c->dims, 2, y->dims, cs);
      j.c = c->data;
      j.c_row = cs[0];
      j.c_col = cs[1];
    }
  j.a = a->data;
  j.b = b->data;
  j.y = y->data;
  /* the pack takes C as a bias row or a full [m, n] addend, beta 1 */
  const float *pbias = NULL, *pz = NULL;
  gboolean packable = !j.c || (j.beta == 1 && j.c_col == 1 && (j.c_row == 0 || j.c_row == j.n));
  if (j.c && packable)
    {
      if (j.c_row == 0)
        pbias = j.c;
      else
        pz = j.c;
    }
  if (packable && run_packed (ctx->pool, ctx->state, b, &j, pbias, pz))
    return TRUE;
  gemm_job_run (ctx->pool, &j);
  return TRUE;
}

#define FLOATS OWB_CPU_TYPES_FLOATS

const OwbKernelDef _owb_cpu_kernels_fused[] = {
  { "FusedConv", OWB_DOMAIN, 1, 0, FLOATS, 0, fused_conv_prepare, g_free, compute_fused_conv },
  { "FusedMatMul", OWB_DOMAIN, 1, 0, FLOATS, 0, fused_gemm_prepare, fused_gemm_free, compute_fused_matmul,
    fused_gemm_holds },
  { "FusedGemm", OWB_DOMAIN, 1, 0, FLOATS, 0, fused_gemm_prepare, fused_gemm_free, compute_fused_gemm },
  { NULL }
};
