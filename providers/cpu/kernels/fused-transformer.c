/* fused-transformer.c: CPU kernels of the engine's own fused transformer ops (domain ai.onnx.workbench):
 * Gelu, BiasGelu, SkipLayerNormalization and MultiHeadAttention. LayerNormalization is the ONNX
 * op's kernel (norm.c), and SkipLayerNormalization normalizes its rows with the same row function,
 * so a fused LayerNorm rounds exactly as the op it replaces. */
#include "../cpu-kernels-private.h"
#include "../cpu-simd-private.h"
#include "../cpu-sgemm-private.h"

#include <float.h>
#include <math.h>
#include <string.h>

static OwbTensor *
output (OwbKernelContext *ctx, int i)
{
  return i < ctx->n_outputs ? ctx->outputs[i] : NULL;
}

static const OwbTensor *
input (OwbKernelContext *ctx, int i)
{
  return i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}

static void
store_statistic (OwbTensor *t, int64_t i, double v)
{
  if (!t)
    return;
  if (t->dtype == OWB_TYPE_DOUBLE)
    ((double *) t->data)[i] = v;
  else
    ((float *) t->data)[i] = (float) v;
}

/* ---- SkipLayerNormalization ------------------------------------------------------------------- */

typedef struct {
  const void *x, *skip;
  int64_t skip_rows; /* skip repeats every skip_rows rows */
  void *y, *sum;     /* sum may be NULL */
  int64_t len;
  double eps;
  const void *gamma, *beta, *bias;
  OwbTensor *mean, *inv_std;
} SkipNormJob;

#define DEFINE_SKIP_NORM(T, N)                                                                          \
  static void skip_norm_##N (int64_t begin, int64_t end, gpointer data)                                 \
  {                                                                                                     \
    const SkipNormJob *j = data;                                                                        \
    const int64_t len = j->len;                                                                         \
    const T *bias = j->bias;                                                                            \
    for (int64_t r = begin; r < end; r++)                                                               \
      {                                                                                                 \
        const T *restrict xp = (const T *) j->x + r * len;                                              \
        const T *restrict sp = (const T *) j->skip + (r % j->skip_rows) * len;                          \
        T *y = (T *) j->y + r * len;                                                                    \
        /* The sum goes to the sum output when wanted, else into y, normalized in place. */           \
        T *s = j->sum ? (T *) j->sum + r * len : y;                                                     \
        if (bias)                                                                                       \
          for (int64_t i = 0; i < len; i++)                                                             \
            s[i] = xp[i] + sp[i] + bias[i];                                                             \
        else                                                                                            \
          for (int64_t i = 0; i < len; i++)                                                             \
            s[i] = xp[i] + sp[i];                                                                       \
        double mean, inv;                                                                               \
        _owb_cpu_layer_norm_row_##N (s, y, len, j->eps, j->gamma, j->beta, &mean, &inv);                \
        store_statistic (j->mean, r, mean);                                                             \
        store_statistic (j->inv_std, r, inv);                                                           \
      }                                                                                                 \
  }

OWB_CPU_FOR_FLOATS (DEFINE_SKIP_NORM)

static gboolean
skip_layer_normalization_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0], *skip = ctx->inputs[1];
  if (x->rank < 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have rank 1 or more");
      return FALSE;
    }
  int64_t len = x->dims[x->rank - 1], rows = _owb_cpu_product (x->dims, 0, x->rank - 1);
  /* skip: the input's trailing dims, with leading 1s allowed. */
  int lead = 0;
  while (lead < skip->rank - 1 && skip->dims[lead] == 1)
    lead++;
  gboolean ok = skip->rank - lead <= x->rank && skip->rank >= 1;
  for (int k = lead; ok && k < skip->rank; k++)
    ok = skip->dims[k] == x->dims[x->rank - skip->rank + k];
  if (!ok)
    {
      char *a = owb_tensor_shape_to_string (x), *b = owb_tensor_shape_to_string (skip);
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "skip %s does not match input %s", b, a);
      g_free (a);
      g_free (b);
      return FALSE;
    }
  if (rows * len == 0)
    return TRUE;
  int64_t dims1[1] = { len };
  static const char *const names[] = { "gamma", "beta", "bias" };
  void *params[3] = { NULL, NULL, NULL };
  for (int i = 2; i < 5; i++)
    {
      const OwbTensor *t = input (ctx, i);
      if (t && t->nelems != len)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "%s has %" G_GINT64_FORMAT " elements, not %" G_GINT64_FORMAT,
                                names[i - 2], t->nelems, len);
          for (int k = 0; k < 3; k++)
            g_free (params[k]);
          return FALSE;
        }
      /* A 1-D view of the parameter for _owb_cpu_expand_parameter, which wants its rank <= 1 here. */
      if (t)
        {
          OwbTensor flat = *t;
          flat.rank = 1;
          flat.dims[0] = len;
          params[i - 2] = _owb_cpu_expand_parameter (ctx, &flat, 1, dims1, len, x->dtype, names[i - 2], error);
        }
    }
  OwbTensor *sum = output (ctx, 3);
  SkipNormJob job = { x->data, skip->data, MAX (1, skip->nelems / len), ctx->outputs[0]->data,
                      sum ? sum->data : NULL, len, owb_node_get_float (ctx->node, "epsilon", 1e-5f),
                      params[0], params[1], params[2], output (ctx, 1), output (ctx, 2) };
  owb_parallel_for (ctx->pool, rows, _owb_cpu_grain_for (len), x->dtype == OWB_TYPE_DOUBLE ? skip_norm_DOUBLE : skip_norm_FLOAT,
                    &job);
  for (int k = 0; k < 3; k++)
    g_free (params[k]);
  return TRUE;
}

/* ---- Float math that vectorises ------------------------------------------------------------ */

/* Float bits, for the selects and sign games below: GCC vectorises integer masks where it would
 * not if-convert float comparisons. */
static inline int32_t
float_bits (float f)
{
  int32_t i;
  memcpy (&i, &f, sizeof i);
  return i;
}

static inline float
bits_float (int32_t i)
{
  float f;
  memcpy (&f, &i, sizeof f);
  return f;
}

/* e^x as 2^n * e^r, |r| <= ln2/2, with a degree-6 Taylor polynomial: relative error below 3e-7.
 * Inputs (infinities included) are clamped to [-87.3, 88.3], where results are finite and normal;
 * NaN stays NaN. */
static inline float
fast_exp (float x)
{
  int32_t xi = float_bits (x), ai = xi & 0x7fffffff;
  int32_t not_nan = ai <= 0x7f800000;
  int32_t low = (ai > 0x42ae999a) & not_nan & (xi < 0);   /* below -87.3 */
  int32_t high = (ai > 0x42b0999a) & not_nan & (xi >= 0); /* above 88.3 */
  xi = (xi & ~(-low)) | ((int32_t) 0xc2ae999a & -low);
  xi = (xi & ~(-high)) | ((int32_t) 0x42b0999a & -high);
  x = bits_float (xi);
  /* Adding 1.5 * 2^23 rounds to an integer, left in the low mantissa bits. */
  const float shifter = 12582912.0f;
  float t = x * 1.44269504088896341f + shifter;
  float n = t - shifter;
  float r = x - n * 0.693145751953125f; /* ln 2 in two parts, so that r stays exact */
  r = r - n * 1.428606765330187e-06f;
  float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
  return p * bits_float ((float_bits (t) - 0x4b400000 + 127) << 23);
}

/* erf by Abramowitz and Stegun 7.1.26: absolute error below 6e-7 with float rounding. */
static inline float
fast_erf (float x)
{
  int32_t xi = float_bits (x);
  float a = bits_float (xi & 0x7fffffff);
  float t = 1.0f / (1.0f + 0.3275911f * a);
  float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  float v = 1.0f - poly * fast_exp (-a * a);
  return bits_float (float_bits (v) | (xi & (int32_t) 0x80000000));
}

/* tanh (y) = 1 - 2 / (e^2y + 1): absolute error about 1e-7. */
static inline float
fast_tanh (float y)
{
  return 1.0f - 2.0f / (fast_exp (2.0f * y) + 1.0f);
}

/* ---- Gelu and BiasGelu ------------------------------------------------------------------------ */

#if defined(__x86_64__) && defined(__GNUC__)
#include "../cpu-avx512-private.h"

/* gelu_erf_FLOAT / gelu_tanh_FLOAT 16 lanes at a time (the same formulas, e^x by owb_exp512): the
 * scalar loops do not vectorise for the baseline x86-64 target, and took 8.6 ns an element (a
 * quarter of a dynamically quantized BERT's time). */
static OWB_AVX512 void
gelu_row_avx512 (const float *x, const float *bias, float *y, int64_t n, gboolean tanh_form)
{
  const __m512 one = _mm512_set1_ps (1.0f), half = _mm512_set1_ps (0.5f);
  for (int64_t i = 0; i < n; i += 16)
    {
      __mmask16 m = n - i >= 16 ? 0xFFFF : (__mmask16) ((1u << (n - i)) - 1);
      __m512 v = _mm512_maskz_loadu_ps (m, x + i);
      if (bias)
        v = _mm512_add_ps (v, _mm512_maskz_loadu_ps (m, bias + i));
      __m512 g;
      if (tanh_form)
        {
          __m512 v3 = _mm512_mul_ps (_mm512_mul_ps (v, v), v);
          __m512 u = _mm512_mul_ps (_mm512_set1_ps (0.7978845608028654f),
                                    _mm512_fmadd_ps (_mm512_set1_ps (0.044715f), v3, v));
          __m512 e = owb_exp512 (_mm512_add_ps (u, u));
          g = _mm512_sub_ps (one, _mm512_div_ps (_mm512_set1_ps (2.0f), _mm512_add_ps (e, one)));
        }
      else
        {
          __m512 z = _mm512_mul_ps (v, _mm512_set1_ps ((float) M_SQRT1_2));
          __m512 a = _mm512_abs_ps (z);
          __m512 t = _mm512_div_ps (one, _mm512_fmadd_ps (_mm512_set1_ps (0.3275911f), a, one));
          __m512 p = _mm512_set1_ps (1.061405429f);
          p = _mm512_fmadd_ps (p, t, _mm512_set1_ps (-1.453152027f));
          p = _mm512_fmadd_ps (p, t, _mm512_set1_ps (1.421413741f));
          p = _mm512_fmadd_ps (p, t, _mm512_set1_ps (-0.284496736f));
          p = _mm512_fmadd_ps (p, t, _mm512_set1_ps (0.254829592f));
          p = _mm512_mul_ps (p, t);
          __m512 e = owb_exp512 (_mm512_sub_ps (_mm512_setzero_ps (), _mm512_mul_ps (a, a)));
          __m512 erf_abs = _mm512_fnmadd_ps (p, e, one);
          /* the sign of z back on |erf| */
          g = _mm512_or_ps (erf_abs, _mm512_and_ps (z, _mm512_set1_ps (-0.0f)));
        }
      _mm512_mask_storeu_ps (y + i, m, _mm512_mul_ps (_mm512_mul_ps (half, v), _mm512_add_ps (one, g)));
    }
}
#endif

/* TRUE when a vector kernel did the row. */
static inline gboolean
gelu_row_fast_FLOAT (const float *x, const float *bias, float *y, int64_t n, gboolean tanh_form)
{
#if defined(__x86_64__) && defined(__GNUC__)
  if (_owb_cpu_has_avx512 ())
    {
      gelu_row_avx512 (x, bias, y, n, tanh_form);
      return TRUE;
    }
#endif
  (void) x, (void) bias, (void) y, (void) n, (void) tanh_form;
  return FALSE;
}

static inline gboolean
gelu_row_fast_DOUBLE (const double *x, const double *bias, double *y, int64_t n, gboolean tanh_form)
{
  (void) x, (void) bias, (void) y, (void) n, (void) tanh_form;
  return FALSE;
}

typedef struct {
  const void *x, *bias; /* bias (BiasGelu) repeats every len elements; may be NULL */
  void *y;
  int64_t len;          /* row length (bias size), or a chunk of the tensor for Gelu */
  gboolean tanh_form;
} GeluJob;

static inline float gelu_erf_FLOAT (float v) { return 0.5f * v * (1.0f + fast_erf (v * (float) M_SQRT1_2)); }
static inline double gelu_erf_DOUBLE (double v) { return 0.5 * v * (1.0 + erf (v * M_SQRT1_2)); }
static inline float gelu_tanh_FLOAT (float v)
{
  return 0.5f * v * (1.0f + fast_tanh (0.7978845608028654f * (v + 0.044715f * v * v * v)));
}
static inline double gelu_tanh_DOUBLE (double v)
{
  return 0.5 * v * (1.0 + tanh (0.7978845608028654 * (v + 0.044715 * v * v * v)));
}

/* 0.5 * x * (1 + erf (x / sqrt 2)), or with tanh (sqrt (2 / pi) * (x + 0.044715 x^3)) for erf; one loop
 * per case so that each vectorises. */
#define DEFINE_GELU(T, N)                                                                               \
  static void gelu_row_##N (const T *restrict x, const T *restrict bias, T *restrict y, int64_t n,      \
                            gboolean tanh_form)                                                         \
  {                                                                                                     \
    if (gelu_row_fast_##N (x, bias, y, n, tanh_form))                                                   \
      return;                                                                                           \
    if (tanh_form && bias)                                                                              \
      for (int64_t i = 0; i < n; i++)                                                                   \
        y[i] = gelu_tanh_##N (x[i] + bias[i]);                                                          \
    else if (tanh_form)                                                                                 \
      for (int64_t i = 0; i < n; i++)                                                                   \
        y[i] = gelu_tanh_##N (x[i]);                                                                    \
    else if (bias)                                                                                      \
      for (int64_t i = 0; i < n; i++)                                                                   \
        y[i] = gelu_erf_##N (x[i] + bias[i]);                                                           \
    else                                                                                                \
      for (int64_t i = 0; i < n; i++)                                                                   \
        y[i] = gelu_erf_##N (x[i]);                                                                     \
  }                                                                                                     \
                                                                                                        \
  static void gelu_##N (int64_t begin, int64_t end, gpointer data)                                      \
  {                                                                                                     \
    const GeluJob *j = data;                                                                            \
    for (int64_t r = begin; r < end; r++)                                                               \
      gelu_row_##N ((const T *) j->x + r * j->len, j->bias, (T *) j->y + r * j->len, j->len,            \
                    j->tanh_form);                                                                      \
  }

OWB_CPU_FOR_FLOATS (DEFINE_GELU)

static gboolean
approximate_is_tanh (OwbKernelContext *ctx, gboolean *tanh_form, GError **error)
{
  const char *approximate = owb_node_get_string (ctx->node, "approximate", "none");
  *tanh_form = strcmp (approximate, "tanh") == 0;
  if (!*tanh_form && strcmp (approximate, "none") != 0)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "approximate must be \"none\" or \"tanh\", not \"%s\"",
                            approximate);
      return FALSE;
    }
  return TRUE;
}

static gboolean
gelu_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  GeluJob job = { x->data, NULL, ctx->outputs[0]->data, 1, FALSE };
  if (!approximate_is_tanh (ctx, &job.tanh_form, error))
    return FALSE;
  /* Rows of a fixed size keep chunks contiguous whatever the shape. */
  const int64_t row = 4096;
  int64_t n = x->nelems, full = n / row;
  job.len = row;
  owb_parallel_for (ctx->pool, full, _owb_cpu_grain_for (row), x->dtype == OWB_TYPE_DOUBLE ? gelu_DOUBLE : gelu_FLOAT, &job);
  if (n % row)
    {
      if (x->dtype == OWB_TYPE_DOUBLE)
        gelu_row_DOUBLE ((const double *) x->data + full * row, NULL, (double *) job.y + full * row, n % row,
                         job.tanh_form);
      else
        gelu_row_FLOAT ((const float *) x->data + full * row, NULL, (float *) job.y + full * row, n % row,
                        job.tanh_form);
    }
  return TRUE;
}

static gboolean
bias_gelu_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0], *bias = ctx->inputs[1];
  if (x->rank < 1 || bias->rank != 1 || bias->dims[0] != x->dims[x->rank - 1])
    {
      char *a = owb_tensor_shape_to_string (x), *b = owb_tensor_shape_to_string (bias);
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "bias %s must be a vector of the last dim of %s", b, a);
      g_free (a);
      g_free (b);
      return FALSE;
    }
  GeluJob job = { x->data, bias->data, ctx->outputs[0]->data, bias->dims[0], FALSE };
  if (!approximate_is_tanh (ctx, &job.tanh_form, error))
    return FALSE;
  if (x->nelems == 0)
    return TRUE;
  owb_parallel_for (ctx->pool, x->nelems / job.len, _owb_cpu_grain_for (job.len),
                    x->dtype == OWB_TYPE_DOUBLE ? gelu_DOUBLE : gelu_FLOAT, &job);
  return TRUE;
}

/* ---- MultiHeadAttention ----------------------------------------------------------------------- */

typedef struct {
  const float *q, *k, *v;
  float *o;
  int64_t ldq, ldk, ldv, ldo;   /* row (sequence step) strides */
  int64_t bq, bk, bv, bo;       /* batch strides */
  int64_t heads, s, l, d, dv;
  float scale;
  const float *bias;
  int64_t bias_strides[4];      /* over [batch, head, q_seq, kv_seq]; 0 where it broadcasts */
  gint out_of_memory;
} AttentionJob;

/* ---- MultiHeadAttention ---- */

/* The softmax rows run in vectors (cpu-simd-private.h): the scalar loops ran as SSE at best and
 * their max and sum not at all, about a third of bert_small's attention time. */

/* fast_exp on 8 lanes: the same clamps, reduction and polynomial (comparisons give all-ones lanes
 * where the scalar form negates 0/1). */
static inline __attribute__ ((always_inline)) vf
fast_exp_vector (vf x)
{
  const vi zero = (vi){};
  vi xi = (vi) x, ai = xi & 0x7fffffff;
  vi not_nan = ai <= 0x7f800000;
  vi low = (ai > 0x42ae999a) & not_nan & (xi < zero);
  vi high = (ai > 0x42b0999a) & not_nan & (xi >= zero);
  xi = (xi & ~low) | ((zero + (int32_t) 0xc2ae999a) & low);
  xi = (xi & ~high) | ((zero + 0x42b0999a) & high);
  x = (vf) xi;
  const vf shifter = (vf){} + 12582912.0f;
  vf t = x * 1.44269504088896341f + shifter;
  vf n = t - shifter;
  vf r = x - n * 0.693145751953125f;
  r = r - n * 1.428606765330187e-06f;
  vf p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
  return p * (vf) ((((vi) t) - 0x4b400000 + 127) << 23);
}

/* row = softmax (row + bias) over L values; bias NULL, one value (bias_step 0) or L values. NaN
 * handling as the scalar max: a NaN score never becomes the max (unless it is the first). */
SIMD_CLONES static void
softmax_row (float *restrict row, int64_t L, const float *restrict bias, int64_t bias_step)
{
  int64_t t;
  if (bias && bias_step)
    {
      for (t = 0; t + 8 <= L; t += 8)
        vstore (row + t, vload (row + t) + vload (bias + t));
      for (; t < L; t++)
        row[t] += bias[t];
    }
  else if (bias)
    for (t = 0; t < L; t++)
      row[t] += bias[0];
  float max = row[0];
  t = 0;
  if (L >= 8)
    {
      vf m = (vf){} + row[0];
      for (; t + 8 <= L; t += 8)
        {
          vf v = vload (row + t);
          m = (vf) (((vi) v & (v > m)) | ((vi) m & ~(v > m)));
        }
      for (int k = 0; k < 8; k++)
        max = m[k] > max ? m[k] : max;
    }
  for (; t < L; t++)
    max = row[t] > max ? row[t] : max;
  vf vsum = (vf){};
  for (t = 0; t + 8 <= L; t += 8)
    {
      vf e = fast_exp_vector (vload (row + t) - max);
      vstore (row + t, e);
      vsum += e;
    }
  float sum = 0;
  for (; t < L; t++)
    {
      row[t] = fast_exp (row[t] - max);
      sum += row[t];
    }
  for (int k = 0; k < 8; k++)
    sum += vsum[k];
  /* Probabilities below FLT_MIN are stored as 0: e^-87 / sum is a denormal, and each denormal
   * that the product with V then reads costs the FMA a microcode assist on Intel cores. With about
   * one score in nine that small, bert_small's P V products ran at 8 GFLOP/s instead of ~250. */
  float inv = 1.0f / sum;
  for (t = 0; t + 8 <= L; t += 8)
    {
      vf p = vload (row + t) * inv;
      vi tiny = ((vi) p & 0x7fffffff) < 0x00800000;
      vstore (row + t, (vf) ((vi) p & ~tiny));
    }
  for (; t < L; t++)
    {
      float p = row[t] * inv;
      row[t] = fabsf (p) < FLT_MIN ? 0.0f : p;
    }
}

/* Per head: scores = scale Q K^T, softmax over each row, O = scores V, both products through the
 * packed SGEMM with K^T and V packed per head into storage the thread reuses. OpenBLAS's sgemm on
 * these 128 x 128 x 64 products ran at ~30 GFLOP/s (bert_small's attention: 1.44 ms a layer at 2
 * threads, against ORT's ~0.5). */
static void
attention_heads (int64_t begin, int64_t end, gpointer data)
{
  AttentionJob *j = data;
  const int64_t S = j->s, L = j->l;
  float *scores = g_try_malloc (MAX (S * L, 1) * sizeof (float));
  if (!scores)
    {
      g_atomic_int_set (&j->out_of_memory, 1);
      return;
    }
  OwbSgemmPacked *kt = NULL, *vp = NULL;
  for (int64_t bh = begin; bh < end; bh++)
    {
      int64_t b = bh / j->heads, h = bh % j->heads;
      const float *q = j->q + b * j->bq + h * j->d;
      const float *k = j->k + b * j->bk + h * j->d;
      const float *v = j->v + b * j->bv + h * j->dv;
      float *o = j->o + b * j->bo + h * j->dv;
      kt = _owb_sgemm_repack_transposed (kt, j->d, L, k, j->ldk, j->scale);
      _owb_sgemm_packed_run (kt, S, q, j->ldq, 0, L, scores, L, NULL);
      for (int64_t s = 0; s < S; s++)
        {
          const float *bias = j->bias ? j->bias + b * j->bias_strides[0] + h * j->bias_strides[1]
                                          + s * j->bias_strides[2]
                                      : NULL;
          softmax_row (scores + s * L, L, bias, j->bias_strides[3]);
        }
      vp = _owb_sgemm_repack (vp, L, j->dv, v, j->ldv);
      _owb_sgemm_packed_run (vp, S, scores, L, 0, j->dv, o, j->ldo, NULL);
    }
  _owb_sgemm_packed_free (kt);
  _owb_sgemm_packed_free (vp);
  g_free (scores);
}

static gboolean
multi_head_attention_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *q = ctx->inputs[0], *k = input (ctx, 1), *v = input (ctx, 2), *bias = input (ctx, 3);
  OwbTensor *out = ctx->outputs[0];
  int64_t heads = owb_node_get_int (ctx->node, "num_heads", 0);
  gboolean seq_first = owb_node_get_int (ctx->node, "seq_first", 0) != 0;
  if (heads < 1 || q->rank != 3 || (k && k->rank != 3) || (v && v->rank != 3) || (!k) != (!v))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "needs num_heads >= 1 and rank-3 query, key and value");
      return FALSE;
    }
  int b_axis = seq_first ? 1 : 0, s_axis = seq_first ? 0 : 1;
  int64_t B = q->dims[b_axis], S = q->dims[s_axis];
  AttentionJob job = { 0 };
  job.heads = heads;
  job.s = S;
  if (!k)
    {
      /* Packed: Q, K and V side by side in each row of query. */
      int64_t width = q->dims[2];
      if (width % (3 * heads))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "packed query width %" G_GINT64_FORMAT " is not 3 * num_heads * head_size",
                                width);
          return FALSE;
        }
      int64_t hidden = width / 3;
      job.q = q->data;
      job.k = (const float *) q->data + hidden;
      job.v = (const float *) q->data + 2 * hidden;
      job.ldq = job.ldk = job.ldv = seq_first ? B * width : width;
      job.bq = job.bk = job.bv = seq_first ? width : S * width;
      job.l = S;
      job.d = job.dv = hidden / heads;
    }
  else
    {
      int64_t L = k->dims[s_axis];
      if (k->dims[b_axis] != B || v->dims[b_axis] != B || v->dims[s_axis] != L || k->dims[2] != q->dims[2]
          || q->dims[2] % heads || v->dims[2] % heads)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "query, key and value shapes do not agree");
          return FALSE;
        }
      job.q = q->data;
      job.k = k->data;
      job.v = v->data;
      job.ldq = seq_first ? B * q->dims[2] : q->dims[2];
      job.ldk = seq_first ? B * k->dims[2] : k->dims[2];
      job.ldv = seq_first ? B * v->dims[2] : v->dims[2];
      job.bq = seq_first ? q->dims[2] : S * q->dims[2];
      job.bk = seq_first ? k->dims[2] : L * k->dims[2];
      job.bv = seq_first ? v->dims[2] : L * v->dims[2];
      job.l = L;
      job.d = q->dims[2] / heads;
      job.dv = v->dims[2] / heads;
    }
  int64_t hidden_v = job.dv * heads;
  job.o = out->data;
  job.ldo = seq_first ? B * hidden_v : hidden_v;
  job.bo = seq_first ? hidden_v : S * hidden_v;
  job.scale = owb_node_get_float (ctx->node, "scale", (float) (1.0 / sqrt ((double) MAX (job.d, 1))));
  if (bias)
    {
      const int64_t want[4] = { B, heads, S, job.l };
      int64_t stride = 1;
      gboolean ok = bias->rank <= 4;
      for (int d = 3; ok && d >= 0; d--)
        {
          int bd = d - (4 - bias->rank);
          int64_t n = bd >= 0 ? bias->dims[bd] : 1;
          ok = n == 1 || n == want[d];
          job.bias_strides[d] = n == 1 ? 0 : stride;
          stride *= n;
        }
      if (!ok)
        {
          char *s = owb_tensor_shape_to_string (bias);
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "attention_bias %s does not broadcast to [%" G_GINT64_FORMAT
                                ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                                s, B, heads, S, job.l);
          g_free (s);
          return FALSE;
        }
      job.bias = bias->data;
    }
  if (B * S * hidden_v == 0)
    return TRUE;
  if (job.l == 0)
    {
      /* No keys: a softmax over nothing; the exported graph would give NaN rows too. */
      float *o = out->data;
      for (int64_t i = 0; i < out->nelems; i++)
        o[i] = NAN;
      return TRUE;
    }
  owb_parallel_for (ctx->pool, B * heads, 1, attention_heads, &job);
  if (g_atomic_int_get (&job.out_of_memory))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "no memory for %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT " scores",
                            S, job.l);
      return FALSE;
    }
  return TRUE;
}

#define FLOATS OWB_CPU_TYPES_FLOATS

const OwbKernelDef _owb_cpu_kernels_fused_transformer[] = {
  { "LayerNormalization", OWB_DOMAIN, 1, 0, FLOATS, 0, NULL, NULL, _owb_cpu_layer_normalization_compute },
  { "Gelu", OWB_DOMAIN, 1, 0, FLOATS, 0, NULL, NULL, gelu_compute },
  { "BiasGelu", OWB_DOMAIN, 1, 0, FLOATS, 0, NULL, NULL, bias_gelu_compute },
  { "SkipLayerNormalization", OWB_DOMAIN, 1, 0, FLOATS, 0, NULL, NULL, skip_layer_normalization_compute },
  { "MultiHeadAttention", OWB_DOMAIN, 1, 0, OWB_TYPE_BIT (OWB_TYPE_FLOAT), 0, NULL, NULL, multi_head_attention_compute },
  { NULL }
};
