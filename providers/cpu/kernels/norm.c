/* norm.c: CPU kernels of pooling, normalization, softmax-like ops and Dropout. */
#include "../cpu-kernels-private.h"
#include "../cpu-random-private.h"
#include "../cpu-simd-private.h"
#include "../../engine/ops/owb-norm-private.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

static gboolean
has_output (OwbKernelContext *ctx, int i)
{
  return i < ctx->n_outputs && ctx->outputs[i] != NULL;
}

/* A parameter tensor's values as doubles (parameters are small: one per channel or group). */
static double *
dup_doubles (const OwbTensor *t)
{
  double *v = g_new (double, MAX (t->nelems, 1));
  for (int64_t i = 0; i < t->nelems; i++)
    v[i] = owb_tensor_get_double (t, i);
  return v;
}

/* Writes a statistic into an output of any floating type (Mean/InvStdDev follow stash_type). */
static void
store_double (OwbTensor *t, int64_t i, double v)
{
  if (t->dtype == OWB_TYPE_FLOAT)
    ((float *) t->data)[i] = (float) v;
  else if (t->dtype == OWB_TYPE_DOUBLE)
    ((double *) t->data)[i] = v;
  else
    owb_tensor_set_double (t, i, v);
}

/* ---- row helpers ------------------------------------------------------------------------------ */

/* Float rows are processed with the 16-byte vectors of cpu-simd-private.h, 8 floats per step for
 * instruction parallelism, with a scalar tail. double and the integer types use plain loops. On
 * x86-64 the hot float loops also get an AVX2/FMA build (SIMD_CLONES), chosen at load time: about
 * twice as fast for exp. */

/* e^x on 4 lanes: Cephes' expf (range reduction by ln 2, degree-5 polynomial, about 1.3 ulp), with
 * the 2^n scaling done on the exponent bits. Inputs below -87.3 give 0; above 88 are clamped. */
static inline v4f
exp4 (v4f x)
{
  const v4f lo = splat4 (-87.33654f), hi = splat4 (88.0f), magic = splat4 (12582912.0f);
  v4i under = x < lo;
  x = select4 (x > hi, hi, x);
  x = select4 (under, lo, x);
  /* Adding 1.5 * 2^23 rounds x / ln 2 to an integer held in the low mantissa bits. */
  v4f t = x * splat4 (1.44269504088896341f) + magic;
  v4f n = t - magic;
  v4f r = x - n * splat4 (0.693359375f) - n * splat4 (-2.12194440e-4f);
  v4f p = splat4 (1.9875691500e-4f);
  p = p * r + splat4 (1.3981999507e-3f);
  p = p * r + splat4 (8.3334519073e-3f);
  p = p * r + splat4 (4.1665795894e-2f);
  p = p * r + splat4 (1.6666665459e-1f);
  p = p * r + splat4 (5.0000001201e-1f);
  p = p * r * r + r + splat4 (1.0f);
  v4i scale = ((v4i) t - (v4i) magic) << 23;
  return (v4f) (((v4i) p + scale) & ~under);
}

/* Float sums run in float lanes over blocks of this many elements, each block then added in
 * double: the rounding error stays that of a short sum whatever the row length. */
#define SUM_BLOCK 512

#define DEFINE_SCALAR_ACC_MAX(T, N)                                                                     \
  static inline void acc_max_##N (T *y, const T *x, int64_t n)                                          \
  {                                                                                                     \
    for (int64_t i = 0; i < n; i++)                                                                     \
      y[i] = x[i] > y[i] ? x[i] : y[i];                                                                 \
  }

DEFINE_SCALAR_ACC_MAX (double, DOUBLE)
DEFINE_SCALAR_ACC_MAX (int8_t, INT8)
DEFINE_SCALAR_ACC_MAX (uint8_t, UINT8)

static inline void
acc_add_DOUBLE (double *y, const double *x, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] += x[i];
}

static inline void
acc_max_FLOAT (float *y, const float *x, int64_t n)
{
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    {
      v4f a = load4 (x + i), b = load4 (y + i);
      store4 (y + i, select4 (a > b, a, b));
    }
  for (; i < n; i++)
    y[i] = x[i] > y[i] ? x[i] : y[i];
}

static inline void
acc_add_FLOAT (float *y, const float *x, int64_t n)
{
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    store4 (y + i, load4 (y + i) + load4 (x + i));
  for (; i < n; i++)
    y[i] += x[i];
}

/* Largest element, NaNs skipped (all NaN: -inf). */
SIMD_CLONES static float
row_max_FLOAT (const float *x, int64_t n)
{
  v4f m0 = splat4 (-INFINITY), m1 = m0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    {
      v4f a = load4 (x + i), b = load4 (x + i + 4);
      m0 = select4 (a > m0, a, m0);
      m1 = select4 (b > m1, b, m1);
    }
  m0 = select4 (m1 > m0, m1, m0);
  float best = -INFINITY;
  for (int k = 0; k < 4; k++)
    best = m0[k] > best ? m0[k] : best;
  for (; i < n; i++)
    best = x[i] > best ? x[i] : best;
  return best;
}

static double
row_max_DOUBLE (const double *x, int64_t n)
{
  double best = -INFINITY;
  for (int64_t i = 0; i < n; i++)
    best = x[i] > best ? x[i] : best;
  return best;
}

/* Sum of e^(x - shift); the exponentials are stored in y unless y is NULL. */
SIMD_CLONES static double
exp_sum_FLOAT (const float *x, float *y, int64_t n, float shift)
{
  const v4f s = splat4 (shift);
  double sum = 0;
  int64_t i = 0;
  while (i + 8 <= n)
    {
      v4f a0 = splat4 (0), a1 = a0;
      for (int64_t stop = MIN (n, i + SUM_BLOCK); i + 8 <= stop; i += 8)
        {
          v4f e0 = exp4 (load4 (x + i) - s), e1 = exp4 (load4 (x + i + 4) - s);
          if (y)
            {
              store4 (y + i, e0);
              store4 (y + i + 4, e1);
            }
          a0 += e0;
          a1 += e1;
        }
      sum += hsum4 (a0 + a1);
    }
  for (; i < n; i++)
    {
      float e = expf (x[i] - shift);
      if (y)
        y[i] = e;
      sum += e;
    }
  return sum;
}

static double
exp_sum_DOUBLE (const double *x, double *y, int64_t n, double shift)
{
  double sum = 0;
  for (int64_t i = 0; i < n; i++)
    {
      double e = exp (x[i] - shift);
      if (y)
        y[i] = e;
      sum += e;
    }
  return sum;
}

SIMD_CLONES static double
row_sum_FLOAT (const float *x, int64_t n)
{
  double sum = 0;
  int64_t i = 0;
  while (i + 8 <= n)
    {
      v4f a0 = splat4 (0), a1 = a0;
      for (int64_t stop = MIN (n, i + SUM_BLOCK); i + 8 <= stop; i += 8)
        {
          a0 += load4 (x + i);
          a1 += load4 (x + i + 4);
        }
      sum += hsum4 (a0 + a1);
    }
  for (; i < n; i++)
    sum += x[i];
  return sum;
}

static double
row_sum_DOUBLE (const double *x, int64_t n)
{
  double sum = 0;
  for (int64_t i = 0; i < n; i++)
    sum += x[i];
  return sum;
}

/* Sum of (x - mean)^2. */
SIMD_CLONES static double
row_sq_dev_FLOAT (const float *x, int64_t n, double mean)
{
  const float mf = (float) mean;
  const v4f m = splat4 (mf);
  double sum = 0;
  int64_t i = 0;
  while (i + 8 <= n)
    {
      v4f a0 = splat4 (0), a1 = a0;
      for (int64_t stop = MIN (n, i + SUM_BLOCK); i + 8 <= stop; i += 8)
        {
          v4f d0 = load4 (x + i) - m, d1 = load4 (x + i + 4) - m;
          a0 += d0 * d0;
          a1 += d1 * d1;
        }
      sum += hsum4 (a0 + a1);
    }
  for (; i < n; i++)
    sum += (double) (x[i] - mf) * (x[i] - mf);
  /* The deviations were taken from the rounded mean: remove the n * (mean - mf)^2 that adds. */
  double delta = mean - mf;
  return MAX (0.0, sum - (double) n * delta * delta);
}

static double
row_sq_dev_DOUBLE (const double *x, int64_t n, double mean)
{
  double sum = 0;
  for (int64_t i = 0; i < n; i++)
    sum += (x[i] - mean) * (x[i] - mean);
  return sum;
}

/* y = (x - m) * a + b. Subtracting m first keeps precision when |m| is large against the spread. */
SIMD_CLONES static void
row_affine_FLOAT (const float *x, float *y, int64_t n, float m, float a, float b)
{
  const v4f vm = splat4 (m), va = splat4 (a), vb = splat4 (b);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    {
      v4f r0 = (load4 (x + i) - vm) * va + vb, r1 = (load4 (x + i + 4) - vm) * va + vb;
      store4 (y + i, r0);
      store4 (y + i + 4, r1);
    }
  for (; i < n; i++)
    y[i] = (x[i] - m) * a + b;
}

static void
row_affine_DOUBLE (const double *x, double *y, int64_t n, double m, double a, double b)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = (x[i] - m) * a + b;
}

/* y = (x - m) * a * scale[i] + bias[i] (bias may be NULL). */
SIMD_CLONES static void
row_scale_FLOAT (const float *x, float *y, int64_t n, float m, float a, const float *scale, const float *bias)
{
  const v4f vm = splat4 (m), va = splat4 (a);
  int64_t i = 0;
  if (bias)
    for (; i + 4 <= n; i += 4)
      store4 (y + i, (load4 (x + i) - vm) * va * load4 (scale + i) + load4 (bias + i));
  else
    for (; i + 4 <= n; i += 4)
      store4 (y + i, (load4 (x + i) - vm) * va * load4 (scale + i));
  for (; i < n; i++)
    y[i] = (x[i] - m) * a * scale[i] + (bias ? bias[i] : 0.0f);
}

static void
row_scale_DOUBLE (const double *x, double *y, int64_t n, double m, double a, const double *scale,
                  const double *bias)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = (x[i] - m) * a * scale[i] + (bias ? bias[i] : 0.0);
}

/* For softmax along a strided axis, one row of `inner` lanes at a time: e = e^(x - shift[i]),
 * stored in y unless NULL, and added to acc[i]. */
SIMD_CLONES static void
exp_acc_FLOAT (const float *x, const float *shift, float *y, float *acc, int64_t n)
{
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    {
      v4f e = exp4 (load4 (x + i) - load4 (shift + i));
      if (y)
        store4 (y + i, e);
      store4 (acc + i, load4 (acc + i) + e);
    }
  for (; i < n; i++)
    {
      float e = expf (x[i] - shift[i]);
      if (y)
        y[i] = e;
      acc[i] += e;
    }
}

static void
exp_acc_DOUBLE (const double *x, const double *shift, double *y, double *acc, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    {
      double e = exp (x[i] - shift[i]);
      if (y)
        y[i] = e;
      acc[i] += e;
    }
}

/* y[i] = x[i] * a[i] + b[i] (b may be NULL). */
#define DEFINE_ROW_MUL_ADD(T, N)                                                                        \
  static void row_mul_add_##N (const T *x, T *y, int64_t n, const T *a, const T *b)                     \
  {                                                                                                     \
    if (b)                                                                                              \
      for (int64_t i = 0; i < n; i++)                                                                   \
        y[i] = x[i] * a[i] + b[i];                                                                      \
    else                                                                                                \
      for (int64_t i = 0; i < n; i++)                                                                   \
        y[i] = x[i] * a[i];                                                                             \
  }

OWB_CPU_FOR_FLOATS (DEFINE_ROW_MUL_ADD)


/* ---- pooling ---------------------------------------------------------------------------------- */

typedef enum { AUTO_PAD_NOTSET, AUTO_PAD_SAME_UPPER, AUTO_PAD_SAME_LOWER, AUTO_PAD_VALID } AutoPad;

/* The kernel walks 3 spatial axes; 1D and 2D pools get leading axes of length 1. */
#define POOL_AXES 3

typedef struct {
  OwbPoolKind kind;
  int n;
  int64_t kernel[POOL_AXES], strides[POOL_AXES], dilations[POOL_AXES], pads[2 * POOL_AXES];
  AutoPad auto_pad;
  gboolean count_include_pad;
  int storage_order;
  double p;
} PoolParams;

static gboolean
read_ints (const OwbNode *node, const char *name, int n, int64_t lo, int64_t fill, int64_t *out, GError **error)
{
  int len = 0;
  const int64_t *v = owb_node_get_ints (node, name, &len);
  for (int i = 0; i < n; i++)
    out[i] = fill;
  if (!v || len == 0)
    return TRUE;
  if (len != n)
    {
      _owb_cpu_node_error (node, error, OWB_ERROR_INVALID_MODEL, "attribute %s has %d values, expected %d", name, len, n);
      return FALSE;
    }
  for (int i = 0; i < n; i++)
    {
      if (v[i] < lo || v[i] >= (G_GINT64_CONSTANT (1) << 31))
        {
          _owb_cpu_node_error (node, error, OWB_ERROR_INVALID_MODEL, "attribute %s[%d] = %" G_GINT64_FORMAT " is out of range",
                      name, i, v[i]);
          return FALSE;
        }
      out[i] = v[i];
    }
  return TRUE;
}

static gboolean
pool_prepare (const OwbNode *node, int opset, OwbPoolKind kind, void **state, GError **error)
{
  g_autofree PoolParams *pp = g_new0 (PoolParams, 1);
  pp->kind = kind;
  int len = 0;
  owb_node_get_ints (node, "kernel_shape", &len);
  if (len == 0)
    {
      _owb_cpu_node_error (node, error, OWB_ERROR_INVALID_MODEL, "attribute kernel_shape is required");
      return FALSE;
    }
  if (len > POOL_AXES)
    {
      _owb_cpu_node_error (node, error, OWB_ERROR_UNSUPPORTED_OP, "pooling supports at most %d spatial axes; this node has %d",
                  POOL_AXES, len);
      return FALSE;
    }
  pp->n = len;
  gboolean has_dilations = _owb_pool_has_dilations (kind, opset);
  if (!read_ints (node, "kernel_shape", len, 1, 1, pp->kernel, error)
      || !read_ints (node, "strides", len, 1, 1, pp->strides, error)
      || !read_ints (node, "pads", 2 * len, 0, 0, pp->pads, error))
    return FALSE;
  /* Older versions have no dilations attribute: one there is not part of the op and is ignored. */
  if (has_dilations && !read_ints (node, "dilations", len, 1, 1, pp->dilations, error))
    return FALSE;
  if (!has_dilations)
    for (int i = 0; i < len; i++)
      pp->dilations[i] = 1;
  const char *auto_pad = owb_node_get_string (node, "auto_pad", "NOTSET");
  if (!auto_pad[0] || strcmp (auto_pad, "NOTSET") == 0)
    pp->auto_pad = AUTO_PAD_NOTSET;
  else if (strcmp (auto_pad, "SAME_UPPER") == 0)
    pp->auto_pad = AUTO_PAD_SAME_UPPER;
  else if (strcmp (auto_pad, "SAME_LOWER") == 0)
    pp->auto_pad = AUTO_PAD_SAME_LOWER;
  else if (strcmp (auto_pad, "VALID") == 0)
    pp->auto_pad = AUTO_PAD_VALID;
  else
    {
      _owb_cpu_node_error (node, error, OWB_ERROR_INVALID_MODEL, "unknown auto_pad value '%s'", auto_pad);
      return FALSE;
    }
  pp->count_include_pad = kind == OWB_POOL_AVERAGE && opset >= 7 && owb_node_get_int (node, "count_include_pad", 0) != 0;
  pp->storage_order = 0;
  if (kind == OWB_POOL_MAX && opset >= 8 && !owb_node_get_int32 (node, "storage_order", 0, 0, 1, &pp->storage_order, error))
    return FALSE;
  if (pp->storage_order != 0 && pp->storage_order != 1)
    {
      _owb_cpu_node_error (node, error, OWB_ERROR_INVALID_MODEL, "storage_order must be 0 or 1");
      return FALSE;
    }
  pp->p = opset < 2 ? owb_node_get_float (node, "p", 2.0f) : (double) owb_node_get_int (node, "p", 2);
  if (kind == OWB_POOL_LP && (!(pp->p > 0) || !isfinite (pp->p)))
    {
      _owb_cpu_node_error (node, error, OWB_ERROR_INVALID_MODEL, "p must be positive, not %g", pp->p);
      return FALSE;
    }
  *state = g_steal_pointer (&pp);
  return TRUE;
}

static gboolean
max_pool_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                  GError **error)
{
  return pool_prepare (node, opset, OWB_POOL_MAX, state, error);
}

static gboolean
average_pool_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                      GError **error)
{
  return pool_prepare (node, opset, OWB_POOL_AVERAGE, state, error);
}

static gboolean
lp_pool_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                 GError **error)
{
  return pool_prepare (node, opset, OWB_POOL_LP, state, error);
}

/* Geometry of one run. For each axis and output position, geom holds 4 numbers: the first and
 * past-the-last kernel tap that falls inside the input, the input position of tap 0, and how many
 * taps fall inside input + padding (the count_include_pad divisor). */
typedef struct {
  const void *x;
  void *y;
  int64_t *indices;
  int64_t in[POOL_AXES], out[POOL_AXES], dil[POOL_AXES];
  const int64_t *geom[POOL_AXES];
  int64_t in_plane, out_plane;
  gboolean count_include_pad;
  int storage_order;
  double p;
  /* For the row-wise walk along the last axis: kernel width, stride, and for each tap tw the
   * input offset of output 0 (tw * dilation - pad) and the outputs [w_lo, w_hi) it reaches. */
  int64_t kw, sw;
  const int64_t *w_off, *w_lo, *w_hi;
} PoolJob;

/* Input position (row-major within a plane) of the first in-input tap of a window. */
static inline int64_t
first_tap (const PoolJob *j, const int64_t *gd, const int64_t *gh, const int64_t *gw)
{
  return ((gd[2] + gd[0] * j->dil[0]) * j->in[1] + gh[2] + gh[0] * j->dil[1]) * j->in[2] + gw[2] + gw[0] * j->dil[2];
}

/* Indices are flat over N x C x spatial; storage_order 1 makes the spatial part column-major. */
static inline int64_t
pool_index (const PoolJob *j, int64_t plane, int64_t at)
{
  if (at < 0)
    return -1;
  if (j->storage_order == 1)
    {
      int64_t w = at % j->in[2], h = (at / j->in[2]) % j->in[1], d = at / (j->in[2] * j->in[1]);
      at = d + h * j->in[0] + w * j->in[0] * j->in[1];
    }
  return plane * j->in_plane + at;
}

/* The project builds with -fno-strict-aliasing, so every output store would make the compiler reload
 * fields of the job: the pool loops read them into locals first. */
#define POOL_LOCALS                                                                                     \
  const int64_t in1 = j->in[1], in2 = j->in[2], d0 = j->dil[0], d1 = j->dil[1], d2 = j->dil[2];         \
  const int64_t out0 = j->out[0], out1 = j->out[1], out2 = j->out[2];                                   \
  const int64_t *const g0 = j->geom[0], *const g1 = j->geom[1], *const g2 = j->geom[2]

/* The window loops shared by the pool kinds: BODY sees `v` (one in-input element) and `at` (its
 * position in the plane). */
#define POOL_WINDOW_LOOPS(T, BODY)                                                                      \
  for (int64_t td = gd[0]; td < gd[1]; td++)                                                            \
    {                                                                                                   \
      const int64_t zd = gd[2] + td * d0;                                                               \
      for (int64_t th = gh[0]; th < gh[1]; th++)                                                        \
        {                                                                                               \
          const int64_t row = (zd * in1 + gh[2] + th * d1) * in2 + gw[2];                               \
          for (int64_t tw = gw[0]; tw < gw[1]; tw++)                                                    \
            {                                                                                           \
              const int64_t at = row + tw * d2;                                                         \
              const T v = xp[at];                                                                       \
              BODY;                                                                                     \
            }                                                                                           \
        }                                                                                               \
    }

#define POOL_OUTPUT_LOOPS(BODY)                                                                         \
  int64_t o = 0;                                                                                        \
  for (int64_t od = 0; od < out0; od++)                                                                 \
    {                                                                                                   \
      const int64_t *gd = g0 + 4 * od;                                                                  \
      for (int64_t oh = 0; oh < out1; oh++)                                                             \
        {                                                                                               \
          const int64_t *gh = g1 + 4 * oh;                                                              \
          for (int64_t ow = 0; ow < out2; ow++, o++)                                                    \
            {                                                                                           \
              const int64_t *gw = g2 + 4 * ow;                                                          \
              BODY;                                                                                     \
            }                                                                                           \
        }                                                                                               \
    }

/* Max with Indices: per output, tracking where the maximum is. */
#define DEFINE_MAX_POOL(T, N, LOWEST)                                                                   \
  static void max_pool_##N (int64_t begin, int64_t end, gpointer data)                                  \
  {                                                                                                     \
    const PoolJob *j = data;                                                                            \
    POOL_LOCALS;                                                                                        \
    for (int64_t plane = begin; plane < end; plane++)                                                   \
      {                                                                                                 \
        const T *xp = (const T *) j->x + plane * j->in_plane;                                           \
        T *yp = (T *) j->y + plane * j->out_plane;                                                      \
        int64_t *ip = j->indices + plane * j->out_plane;                                                \
        POOL_OUTPUT_LOOPS ({                                                                            \
          T best = LOWEST;                                                                              \
          int64_t best_at = -1;                                                                         \
          POOL_WINDOW_LOOPS (T, if (v > best) {                                                         \
            best = v;                                                                                   \
            best_at = at;                                                                               \
          });                                                                                           \
          /* Nothing beat LOWEST (all NaN or all lowest): report the first element. */                  \
          if (best_at < 0 && gd[1] > gd[0] && gh[1] > gh[0] && gw[1] > gw[0])                           \
            {                                                                                           \
              best_at = first_tap (j, gd, gh, gw);                                                      \
              best = xp[best_at];                                                                       \
            }                                                                                           \
          yp[o] = best;                                                                                 \
          ip[o] = pool_index (j, plane, best_at);                                                       \
        });                                                                                             \
      }                                                                                                 \
  }

/* Max and average without Indices walk a whole output row per kernel tap: the outputs of a row are
 * independent, so there is no serial dependency between taps and, at stride 1, the inner loop is a
 * contiguous ROW helper. STEP (acc, v) folds v into the accumulator for other strides. */
#define DEFINE_ROW_POOL(NAME, T, N, INIT, STEP, AVERAGE, ROW)                                   \
  static void NAME##_rows_##N (int64_t begin, int64_t end, gpointer data)                               \
  {                                                                                                     \
    const PoolJob *j = data;                                                                            \
    POOL_LOCALS;                                                                                        \
    const int64_t kw = j->kw, sw = j->sw;                                                               \
    const int64_t *w_off = j->w_off, *w_lo = j->w_lo, *w_hi = j->w_hi;                                  \
    (void) g2;                                                                                          \
    (void) d2;                                                                                          \
    for (int64_t plane = begin; plane < end; plane++)                                                   \
      {                                                                                                 \
        const T *xp = (const T *) j->x + plane * j->in_plane;                                           \
        T *yp = (T *) j->y + plane * j->out_plane;                                                      \
        for (int64_t od = 0; od < out0; od++)                                                           \
          {                                                                                             \
            const int64_t *gd = g0 + 4 * od;                                                            \
            for (int64_t oh = 0; oh < out1; oh++)                                                       \
              {                                                                                         \
                const int64_t *gh = g1 + 4 * oh;                                                        \
                T *yrow = yp + (od * out1 + oh) * out2;                                                 \
                for (int64_t ow = 0; ow < out2; ow++)                                                   \
                  yrow[ow] = INIT;                                                                      \
                for (int64_t td = gd[0]; td < gd[1]; td++)                                              \
                  for (int64_t th = gh[0]; th < gh[1]; th++)                                            \
                    {                                                                                   \
                      const T *xrow = xp + ((gd[2] + td * d0) * in1 + gh[2] + th * d1) * in2;           \
                      for (int64_t tw = 0; tw < kw; tw++)                                               \
                        {                                                                               \
                          const T *src = xrow + w_off[tw];                                              \
                          const int64_t hi = w_hi[tw];                                                  \
                          if (sw == 1)                                                                  \
                            ROW##_##N (yrow + w_lo[tw], src + w_lo[tw], hi - w_lo[tw]);                 \
                          else                                                                          \
                            for (int64_t ow = w_lo[tw]; ow < hi; ow++)                                  \
                              STEP (yrow[ow], src[ow * sw]);                                            \
                        }                                                                               \
                    }                                                                                   \
                if (AVERAGE)                                                                            \
                  {                                                                                     \
                    const int64_t *gw = g2;                                                             \
                    for (int64_t ow = 0; ow < out2; ow++, gw += 4)                                      \
                      {                                                                                 \
                        int64_t count = j->count_include_pad ? gd[3] * gh[3] * gw[3]                    \
                                                             : (gd[1] - gd[0]) * (gh[1] - gh[0])        \
                                                                   * (gw[1] - gw[0]);                   \
                        yrow[ow] = count > 0 ? yrow[ow] / (T) count : (T) 0;                            \
                      }                                                                                 \
                  }                                                                                     \
              }                                                                                         \
          }                                                                                             \
      }                                                                                                 \
  }

#define MAX_STEP(acc, v)                                                                                \
  do                                                                                                    \
    {                                                                                                   \
      const __typeof__ (acc) v_ = (v);                                                                  \
      (acc) = v_ > (acc) ? v_ : (acc);                                                                  \
    }                                                                                                   \
  while (0)
#define SUM_STEP(acc, v) ((acc) += (v))

DEFINE_ROW_POOL (max, float, FLOAT, -INFINITY, MAX_STEP, 0, acc_max)
DEFINE_ROW_POOL (max, double, DOUBLE, -INFINITY, MAX_STEP, 0, acc_max)
DEFINE_ROW_POOL (max, int8_t, INT8, INT8_MIN, MAX_STEP, 0, acc_max)
DEFINE_ROW_POOL (max, uint8_t, UINT8, 0, MAX_STEP, 0, acc_max)
DEFINE_ROW_POOL (average, float, FLOAT, 0, SUM_STEP, 1, acc_add)
DEFINE_ROW_POOL (average, double, DOUBLE, 0, SUM_STEP, 1, acc_add)

DEFINE_MAX_POOL (float, FLOAT, -INFINITY)
DEFINE_MAX_POOL (double, DOUBLE, -INFINITY)
DEFINE_MAX_POOL (int8_t, INT8, INT8_MIN)
DEFINE_MAX_POOL (uint8_t, UINT8, 0)

#define DEFINE_LP_POOL(T, N)                                                                            \
  static void lp_pool_##N (int64_t begin, int64_t end, gpointer data)                                   \
  {                                                                                                     \
    const PoolJob *j = data;                                                                            \
    POOL_LOCALS;                                                                                        \
    const double p = j->p;                                                                              \
    for (int64_t plane = begin; plane < end; plane++)                                                   \
      {                                                                                                 \
        const T *xp = (const T *) j->x + plane * j->in_plane;                                           \
        T *yp = (T *) j->y + plane * j->out_plane;                                                      \
        POOL_OUTPUT_LOOPS ({                                                                            \
          double acc = 0;                                                                               \
          if (p == 2.0)                                                                                 \
            {                                                                                           \
              POOL_WINDOW_LOOPS (T, acc += (double) v * v);                                             \
              yp[o] = (T) sqrt (acc);                                                                   \
            }                                                                                           \
          else if (p == 1.0)                                                                            \
            {                                                                                           \
              POOL_WINDOW_LOOPS (T, acc += fabs ((double) v));                                          \
              yp[o] = (T) acc;                                                                          \
            }                                                                                           \
          else                                                                                          \
            {                                                                                           \
              POOL_WINDOW_LOOPS (T, acc += pow (fabs ((double) v), p));                                 \
              yp[o] = (T) pow (acc, 1.0 / p);                                                           \
            }                                                                                           \
        });                                                                                             \
      }                                                                                                 \
  }

OWB_CPU_FOR_FLOATS (DEFINE_LP_POOL)

static gboolean
pool_compute (OwbKernelContext *ctx, GError **error)
{
  const PoolParams *pp = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = ctx->outputs[0];
  /* An Indices output nobody reads (named "") is not worth the slower tracking loop. */
  OwbTensor *indices = pp->kind == OWB_POOL_MAX && has_output (ctx, 1)
                               && (!ctx->output_wanted || ctx->output_wanted[1])
                           ? ctx->outputs[1]
                           : NULL;
  if (x->rank != pp->n + 2 || y->rank != x->rank)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input rank %d does not match kernel_shape (%d axes)", x->rank,
                            pp->n);
      return FALSE;
    }
  if (y->nelems == 0)
    return TRUE;
  PoolJob job = { .x = x->data, .y = y->data, .indices = indices ? indices->data : NULL,
                  .count_include_pad = pp->count_include_pad, .storage_order = pp->storage_order, .p = pp->p };
  int64_t k[POOL_AXES], s[POOL_AXES], pad_begin[POOL_AXES], pad_end[POOL_AXES];
  int off = POOL_AXES - pp->n;
  for (int a = 0; a < POOL_AXES; a++)
    {
      job.in[a] = job.out[a] = job.dil[a] = k[a] = s[a] = 1;
      pad_begin[a] = pad_end[a] = 0;
    }
  for (int i = 0; i < pp->n; i++)
    {
      int a = off + i;
      job.in[a] = x->dims[2 + i];
      job.out[a] = y->dims[2 + i];
      job.dil[a] = pp->dilations[i];
      k[a] = pp->kernel[i];
      s[a] = pp->strides[i];
      if (pp->auto_pad == AUTO_PAD_SAME_UPPER || pp->auto_pad == AUTO_PAD_SAME_LOWER)
        {
          int64_t total = MAX (0, (job.out[a] - 1) * s[a] + (k[a] - 1) * job.dil[a] + 1 - job.in[a]);
          pad_begin[a] = pp->auto_pad == AUTO_PAD_SAME_UPPER ? total / 2 : total - total / 2;
          pad_end[a] = total - pad_begin[a];
        }
      else if (pp->auto_pad == AUTO_PAD_NOTSET)
        {
          pad_begin[a] = pp->pads[i];
          pad_end[a] = pp->pads[i + pp->n];
        }
    }
  job.in_plane = _owb_cpu_product (job.in, 0, POOL_AXES);
  job.out_plane = _owb_cpu_product (job.out, 0, POOL_AXES);
  g_autofree int64_t *geom = g_new (int64_t, 4 * (job.out[0] + job.out[1] + job.out[2]));
  int64_t *g = geom;
  for (int a = 0; a < POOL_AXES; a++)
    {
      job.geom[a] = g;
      int64_t in = job.in[a], d = job.dil[a];
      for (int64_t o = 0; o < job.out[a]; o++, g += 4)
        {
          int64_t start = o * s[a] - pad_begin[a];
          int64_t lo = start >= 0 ? 0 : (-start + d - 1) / d;
          int64_t hi = in - start > 0 ? MIN (k[a], (in - start + d - 1) / d) : 0;
          int64_t padded = in + pad_end[a] - start > 0 ? MIN (k[a], (in + pad_end[a] - start + d - 1) / d) : 0;
          g[0] = MIN (lo, k[a]);
          g[1] = MAX (hi, g[0]);
          g[2] = start;
          g[3] = padded;
        }
    }
  int64_t kw = k[POOL_AXES - 1], sw = s[POOL_AXES - 1], dw = job.dil[POOL_AXES - 1], inw = job.in[POOL_AXES - 1];
  /* kernel_shape is the model's: a window 2^31 wide over a padded row of 5 is valid and its table
   * would take 48 GB */
  g_autofree int64_t *w_tables
    = _owb_cpu_scratch_new (ctx, kw > G_MAXINT64 / 3 ? -1 : 3 * kw, sizeof (int64_t), "pooling window's tap table", error);
  if (!w_tables)
    return FALSE;
  for (int64_t tw = 0; tw < kw; tw++)
    {
      int64_t first = tw * dw - pad_begin[POOL_AXES - 1];
      int64_t lo = first >= 0 ? 0 : (-first + sw - 1) / sw;
      int64_t hi = inw - first > 0 ? MIN (job.out[POOL_AXES - 1], (inw - first + sw - 1) / sw) : 0;
      w_tables[tw] = first;
      w_tables[kw + tw] = MIN (lo, job.out[POOL_AXES - 1]);
      w_tables[2 * kw + tw] = MAX (hi, w_tables[kw + tw]);
    }
  job.kw = kw;
  job.sw = sw;
  job.w_off = w_tables;
  job.w_lo = w_tables + kw;
  job.w_hi = w_tables + 2 * kw;
  int64_t planes = x->dims[0] * x->dims[1];
  int64_t grain = _owb_cpu_grain_for (job.out_plane * pp->kernel[0] * (pp->n > 1 ? pp->kernel[1] : 1));
  OwbParallelFunc fn = NULL;
  switch (pp->kind)
    {
    case OWB_POOL_MAX:
      if (indices)
        fn = x->dtype == OWB_TYPE_FLOAT    ? max_pool_FLOAT
             : x->dtype == OWB_TYPE_DOUBLE ? max_pool_DOUBLE
             : x->dtype == OWB_TYPE_INT8   ? max_pool_INT8
             : x->dtype == OWB_TYPE_UINT8  ? max_pool_UINT8
                                           : NULL;
      else
        fn = x->dtype == OWB_TYPE_FLOAT    ? max_rows_FLOAT
             : x->dtype == OWB_TYPE_DOUBLE ? max_rows_DOUBLE
             : x->dtype == OWB_TYPE_INT8   ? max_rows_INT8
             : x->dtype == OWB_TYPE_UINT8  ? max_rows_UINT8
                                           : NULL;
      break;
    case OWB_POOL_AVERAGE:
      fn = x->dtype == OWB_TYPE_FLOAT ? average_rows_FLOAT : x->dtype == OWB_TYPE_DOUBLE ? average_rows_DOUBLE : NULL;
      break;
    case OWB_POOL_LP:
      fn = x->dtype == OWB_TYPE_FLOAT ? lp_pool_FLOAT : x->dtype == OWB_TYPE_DOUBLE ? lp_pool_DOUBLE : NULL;
      break;
    }
  if (!fn)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "element type %s is not supported",
                            owb_data_type_name (x->dtype));
      return FALSE;
    }
  owb_parallel_for (ctx->pool, planes, grain, fn, &job);
  return TRUE;
}

/* ---- global pooling --------------------------------------------------------------------------- */

typedef struct {
  const void *x;
  void *y;
  int64_t size; /* elements per plane */
  double p;
} GlobalJob;

#define DEFINE_GLOBAL_POOLS(T, N)                                                                       \
  static void global_max_pool_##N (int64_t begin, int64_t end, gpointer data)                           \
  {                                                                                                     \
    const GlobalJob *j = data;                                                                          \
    for (int64_t plane = begin; plane < end; plane++)                                                   \
      ((T *) j->y)[plane] = row_max_##N ((const T *) j->x + plane * j->size, j->size);                  \
  }                                                                                                     \
  static void global_average_pool_##N (int64_t begin, int64_t end, gpointer data)                       \
  {                                                                                                     \
    const GlobalJob *j = data;                                                                          \
    for (int64_t plane = begin; plane < end; plane++)                                                   \
      {                                                                                                 \
        double sum = row_sum_##N ((const T *) j->x + plane * j->size, j->size);                         \
        ((T *) j->y)[plane] = (T) (j->size > 0 ? sum / (double) j->size : NAN);                         \
      }                                                                                                 \
  }                                                                                                     \
  static void global_lp_pool_##N (int64_t begin, int64_t end, gpointer data)                            \
  {                                                                                                     \
    const GlobalJob *j = data;                                                                          \
    for (int64_t plane = begin; plane < end; plane++)                                                   \
      {                                                                                                 \
        const T *xp = (const T *) j->x + plane * j->size;                                               \
        double acc = 0;                                                                                 \
        if (j->p == 2.0)                                                                                \
          {                                                                                             \
            for (int64_t i = 0; i < j->size; i++)                                                       \
              acc += (double) xp[i] * xp[i];                                                            \
            acc = sqrt (acc);                                                                           \
          }                                                                                             \
        else                                                                                            \
          {                                                                                             \
            for (int64_t i = 0; i < j->size; i++)                                                       \
              acc += pow (fabs ((double) xp[i]), j->p);                                                 \
            acc = pow (acc, 1.0 / j->p);                                                                \
          }                                                                                             \
        ((T *) j->y)[plane] = (T) acc;                                                                  \
      }                                                                                                 \
  }

OWB_CPU_FOR_FLOATS (DEFINE_GLOBAL_POOLS)

static gboolean
global_pool_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = ctx->outputs[0];
  if (x->rank < 2)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have rank 2 or more, not %d", x->rank);
      return FALSE;
    }
  GlobalJob job = { .x = x->data, .y = y->data, .size = _owb_cpu_product (x->dims, 2, x->rank) };
  const char *op = ctx->node->op_type;
  gboolean is_double = x->dtype == OWB_TYPE_DOUBLE;
  OwbParallelFunc fn;
  if (strcmp (op, "GlobalMaxPool") == 0)
    fn = is_double ? global_max_pool_DOUBLE : global_max_pool_FLOAT;
  else if (strcmp (op, "GlobalAveragePool") == 0)
    fn = is_double ? global_average_pool_DOUBLE : global_average_pool_FLOAT;
  else
    {
      fn = is_double ? global_lp_pool_DOUBLE : global_lp_pool_FLOAT;
      job.p = ctx->opset < 2 ? owb_node_get_float (ctx->node, "p", 2.0f) : (double) owb_node_get_int (ctx->node, "p", 2);
      if (!(job.p > 0) || !isfinite (job.p))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "p must be positive, not %g", job.p);
          return FALSE;
        }
    }
  owb_parallel_for (ctx->pool, x->dims[0] * x->dims[1], _owb_cpu_grain_for (job.size), fn, &job);
  return TRUE;
}

/* ---- affine normalizations: y = (x - m[row]) * a[row] + b[row] over contiguous rows ------------ */

/* Row r covers x[r * len, (r + 1) * len) and uses entry r % n_params of m, a and b. */
typedef struct {
  const void *x;
  void *y;
  int64_t len;
  int64_t n_params;
  const double *m, *a, *b;
} AffineJob;

#define DEFINE_AFFINE(T, N)                                                                             \
  static void affine_rows_##N (int64_t begin, int64_t end, gpointer data)                               \
  {                                                                                                     \
    const AffineJob *j = data;                                                                          \
    const int64_t len = j->len;                                                                         \
    for (int64_t r = begin; r < end; r++)                                                               \
      {                                                                                                 \
        int64_t k = r % j->n_params;                                                                    \
        row_affine_##N ((const T *) j->x + r * len, (T *) j->y + r * len, len, (T) j->m[k], (T) j->a[k], \
                        (T) j->b[k]);                                                                   \
      }                                                                                                 \
  }

OWB_CPU_FOR_FLOATS (DEFINE_AFFINE)

static void
run_affine (OwbKernelContext *ctx, const OwbTensor *x, OwbTensor *y, int64_t rows, int64_t len, int64_t n_params,
            const double *m, const double *a, const double *b)
{
  AffineJob job = { x->data, y->data, len, n_params, m, a, b };
  owb_parallel_for (ctx->pool, rows, _owb_cpu_grain_for (len), x->dtype == OWB_TYPE_DOUBLE ? affine_rows_DOUBLE : affine_rows_FLOAT,
                    &job);
}

/* Mean and population variance of each row (two passes, accumulated in double). */
typedef struct {
  const void *x;
  int64_t len;
  double *mean, *var;
} StatsJob;

#define DEFINE_ROW_STATS(T, N)                                                                          \
  static void row_stats_##N (int64_t begin, int64_t end, gpointer data)                                 \
  {                                                                                                     \
    const StatsJob *j = data;                                                                           \
    const int64_t len = j->len;                                                                         \
    for (int64_t r = begin; r < end; r++)                                                               \
      {                                                                                                 \
        const T *xp = (const T *) j->x + r * len;                                                       \
        double mean = len > 0 ? row_sum_##N (xp, len) / (double) len : 0;                               \
        j->mean[r] = mean;                                                                              \
        j->var[r] = len > 0 ? row_sq_dev_##N (xp, len, mean) / (double) len : 0;                       \
      }                                                                                                 \
  }

OWB_CPU_FOR_FLOATS (DEFINE_ROW_STATS)

static void
run_row_stats (OwbKernelContext *ctx, const OwbTensor *x, int64_t rows, int64_t len, double *mean, double *var)
{
  StatsJob job = { x->data, len, mean, var };
  owb_parallel_for (ctx->pool, rows, _owb_cpu_grain_for (len), x->dtype == OWB_TYPE_DOUBLE ? row_stats_DOUBLE : row_stats_FLOAT,
                    &job);
}

static gboolean
check_count (OwbKernelContext *ctx, const OwbTensor *t, int64_t want, const char *what, GError **error)
{
  if (t->nelems != want)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "%s has %" G_GINT64_FORMAT " elements, expected %" G_GINT64_FORMAT, what, t->nelems, want);
      return FALSE;
    }
  return TRUE;
}

static gboolean
batch_normalization_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = ctx->outputs[0];
  int64_t n = x->rank >= 1 ? x->dims[0] : 1, c = x->rank >= 2 ? x->dims[1] : 1, s = _owb_cpu_product (x->dims, 2, x->rank);
  /* Before opset 9, spatial = 0 keeps one statistic per element of a sample: seen as C*S groups of 1. */
  gboolean spatial = ctx->opset >= 9 || owb_node_get_int (ctx->node, "spatial", 1) != 0;
  int64_t groups = spatial ? c : c * s, len = spatial ? s : 1;
  static const char *const names[] = { "scale", "B", "input_mean", "input_var" };
  for (int i = 1; i < 5; i++)
    if (!check_count (ctx, ctx->inputs[i], groups, names[i - 1], error))
      return FALSE;
  double eps = owb_node_get_float (ctx->node, "epsilon", 1e-5f);
  double momentum = owb_node_get_float (ctx->node, "momentum", 0.9f);
  gboolean extra_outputs = FALSE;
  for (int i = 1; i < ctx->n_outputs; i++)
    extra_outputs |= has_output (ctx, i);
  /* Opset 14 made training an attribute; before, asking for the statistics outputs meant training
   * (and before opset 7 so did is_test = 0, which we only honour when those outputs exist). */
  gboolean training;
  if (ctx->opset >= 14)
    training = owb_node_get_int (ctx->node, "training_mode", 0) != 0;
  else
    training = extra_outputs && (ctx->opset >= 7 || owb_node_get_int (ctx->node, "is_test", 0) == 0);

  g_autofree double *scale = dup_doubles (ctx->inputs[1]);
  g_autofree double *bias = dup_doubles (ctx->inputs[2]);
  g_autofree double *mean = dup_doubles (ctx->inputs[3]);
  g_autofree double *var = dup_doubles (ctx->inputs[4]);
  g_autofree double *batch_mean = NULL, *batch_var = NULL;
  if (training)
    {
      /* Per-(n, group) row stats combine into per-group stats: rows have equal length. */
      g_autofree double *row_mean = g_new (double, MAX (n * groups, 1));
      g_autofree double *row_var = g_new (double, MAX (n * groups, 1));
      run_row_stats (ctx, x, n * groups, len, row_mean, row_var);
      batch_mean = g_new0 (double, MAX (groups, 1));
      batch_var = g_new0 (double, MAX (groups, 1));
      for (int64_t g = 0; g < groups; g++)
        {
          double m = 0, v = 0;
          for (int64_t b = 0; b < n; b++)
            m += row_mean[b * groups + g];
          m = n > 0 ? m / (double) n : 0;
          for (int64_t b = 0; b < n; b++)
            {
              double d = row_mean[b * groups + g] - m;
              v += row_var[b * groups + g] + d * d;
            }
          batch_mean[g] = m;
          batch_var[g] = n > 0 ? v / (double) n : 0;
        }
    }
  const double *use_mean = training ? batch_mean : mean, *use_var = training ? batch_var : var;
  g_autofree double *a = g_new (double, MAX (groups, 1));
  for (int64_t g = 0; g < groups; g++)
    a[g] = scale[g] / sqrt (use_var[g] + eps);
  run_affine (ctx, x, y, n * groups, len, groups, use_mean, a, bias);

  /* Outputs 1, 2: running mean/var; before opset 14 also 3, 4: the batch mean/var. */
  for (int i = 1; i < ctx->n_outputs && i < 5; i++)
    {
      if (!has_output (ctx, i))
        continue;
      OwbTensor *out = ctx->outputs[i];
      if (out->nelems != groups)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output %d has %" G_GINT64_FORMAT " elements, expected %"
                                G_GINT64_FORMAT, i, out->nelems, groups);
          return FALSE;
        }
      gboolean is_mean = i % 2 == 1;
      const double *given = is_mean ? mean : var;
      const double *batch = is_mean ? batch_mean : batch_var;
      for (int64_t g = 0; g < groups; g++)
        {
          double v = given[g];
          if (training)
            v = i <= 2 ? given[g] * momentum + batch[g] * (1.0 - momentum) : batch[g];
          store_double (out, g, v);
        }
    }
  return TRUE;
}

static gboolean
instance_normalization_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  if (x->rank < 2)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have rank 2 or more, not %d", x->rank);
      return FALSE;
    }
  int64_t c = x->dims[1], rows = x->dims[0] * c, len = _owb_cpu_product (x->dims, 2, x->rank);
  if (!check_count (ctx, ctx->inputs[1], c, "scale", error) || !check_count (ctx, ctx->inputs[2], c, "B", error))
    return FALSE;
  double eps = owb_node_get_float (ctx->node, "epsilon", 1e-5f);
  if (x->nelems == 0)
    return TRUE; /* rows of length 0 ([1, 2^28, 0, 4096]) would still take 3 doubles each */
  g_autofree double *scale = dup_doubles (ctx->inputs[1]);
  g_autofree double *bias = dup_doubles (ctx->inputs[2]);
  g_autofree double *mean = _owb_cpu_scratch_new (ctx, rows, sizeof (double), "per-channel statistics", error);
  g_autofree double *a = mean ? _owb_cpu_scratch_new (ctx, rows, sizeof (double), "per-channel scales", error) : NULL;
  g_autofree double *b = a ? _owb_cpu_scratch_new (ctx, rows, sizeof (double), "per-channel shifts", error) : NULL;
  if (!b)
    return FALSE;
  run_row_stats (ctx, x, rows, len, mean, a);
  for (int64_t r = 0; r < rows; r++)
    {
      a[r] = scale[r % c] / sqrt (a[r] + eps);
      b[r] = bias[r % c];
    }
  run_affine (ctx, x, ctx->outputs[0], rows, len, rows, mean, a, b);
  return TRUE;
}

static gboolean
group_normalization_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  int64_t groups = owb_node_get_int (ctx->node, "num_groups", 0);
  if (x->rank < 2 || groups < 1 || x->dims[1] % groups != 0)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "cannot split the channels of the input into %" G_GINT64_FORMAT
                            " groups", groups);
      return FALSE;
    }
  int64_t n = x->dims[0], c = x->dims[1], per_group = c / groups, s = _owb_cpu_product (x->dims, 2, x->rank);
  /* Opset 18 has one scale/bias per group, opset 21 one per channel. */
  int64_t n_params = ctx->opset >= 21 ? c : groups;
  if (!check_count (ctx, ctx->inputs[1], n_params, "scale", error)
      || !check_count (ctx, ctx->inputs[2], n_params, "bias", error))
    return FALSE;
  double eps = owb_node_get_float (ctx->node, "epsilon", 1e-5f);
  if (x->nelems == 0)
    return TRUE;
  g_autofree double *scale = dup_doubles (ctx->inputs[1]);
  g_autofree double *bias = dup_doubles (ctx->inputs[2]);
  g_autofree double *mean = _owb_cpu_scratch_new (ctx, 2 * n * groups, sizeof (double), "per-group statistics", error);
  if (!mean)
    return FALSE;
  double *var = mean + n * groups;
  run_row_stats (ctx, x, n * groups, per_group * s, mean, var);
  g_autofree double *m = _owb_cpu_scratch_new (ctx, 3 * n * c, sizeof (double), "per-channel affine terms", error);
  if (!m)
    return FALSE;
  double *a = m + n * c, *b = a + n * c;
  for (int64_t r = 0; r < n * c; r++)
    {
      int64_t ch = r % c, row = (r / c) * groups + ch / per_group;
      int64_t param = ctx->opset >= 21 ? ch : ch / per_group;
      m[r] = mean[row];
      a[r] = scale[param] / sqrt (var[row] + eps);
      b[r] = bias[param];
    }
  run_affine (ctx, x, ctx->outputs[0], n * c, s, n * c, m, a, b);
  return TRUE;
}

/* ---- LayerNormalization ----------------------------------------------------------------------- */

#define DEFINE_LAYER_NORM_ROW(T, N)                                                                     \
  void _owb_cpu_layer_norm_row_##N (const T *x, T *y, int64_t len, double eps, const T *scale,        \
                                    const T *bias, double *mean_out, double *inv_out)                 \
  {                                                                                                     \
    double mean = row_sum_##N (x, len) / (double) len;                                                  \
    double inv = 1.0 / sqrt (row_sq_dev_##N (x, len, mean) / (double) len + eps);                       \
    row_scale_##N (x, y, len, (T) mean, (T) inv, scale, bias);                                          \
    *mean_out = mean;                                                                                   \
    *inv_out = inv;                                                                                     \
  }

OWB_CPU_FOR_FLOATS (DEFINE_LAYER_NORM_ROW)

typedef struct {
  const void *x;
  void *y;
  int64_t len;
  double eps;
  const void *scale, *bias; /* of the element type; bias may be NULL */
  double *mean, *inv_std;
} LayerNormJob;

#define DEFINE_LAYER_NORM(T, N)                                                                         \
  static void layer_norm_##N (int64_t begin, int64_t end, gpointer data)                                \
  {                                                                                                     \
    const LayerNormJob *j = data;                                                                       \
    const int64_t len = j->len;                                                                         \
    for (int64_t r = begin; r < end; r++)                                                               \
      _owb_cpu_layer_norm_row_##N ((const T *) j->x + r * len, (T *) j->y + r * len, len, j->eps,       \
                                   j->scale, j->bias, &j->mean[r], &j->inv_std[r]);                     \
  }

OWB_CPU_FOR_FLOATS (DEFINE_LAYER_NORM)

gboolean
_owb_cpu_layer_normalization_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  int axis;
  if (!_owb_cpu_normalize_axis (ctx, owb_node_get_int (ctx->node, "axis", -1), x->rank, &axis, error))
    return FALSE;
  int64_t rows = _owb_cpu_product (x->dims, 0, (int) axis), len = _owb_cpu_product (x->dims, (int) axis, x->rank);
  int tail = x->rank - (int) axis;
  const OwbTensor *bias_t = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  g_autofree void *scale
    = _owb_cpu_expand_parameter (ctx, ctx->inputs[1], tail, x->dims + axis, len, x->dtype, "Scale", error);
  if (!scale)
    return FALSE;
  g_autofree void *bias = NULL;
  if (bias_t && !(bias = _owb_cpu_expand_parameter (ctx, bias_t, tail, x->dims + axis, len, x->dtype, "B", error)))
    return FALSE;
  if (rows * len == 0)
    return TRUE;
  g_autofree double *mean = g_new (double, rows);
  g_autofree double *inv_std = g_new (double, rows);
  LayerNormJob job = { x->data, ctx->outputs[0]->data, len, owb_node_get_float (ctx->node, "epsilon", 1e-5f),
                       scale, bias, mean, inv_std };
  owb_parallel_for (ctx->pool, rows, _owb_cpu_grain_for (len), x->dtype == OWB_TYPE_DOUBLE ? layer_norm_DOUBLE : layer_norm_FLOAT,
                    &job);
  for (int i = 1; i < 3; i++)
    if (has_output (ctx, i))
      {
        OwbTensor *out = ctx->outputs[i];
        if (out->nelems != rows)
          {
            owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output %d has the wrong size", i);
            return FALSE;
          }
        for (int64_t r = 0; r < rows; r++)
          store_double (out, r, i == 1 ? mean[r] : inv_std[r]);
      }
  return TRUE;
}

/* ---- MeanVarianceNormalization ---------------------------------------------------------------- */

/* Walks x in order, rows of the last axis at a time, tracking the offset of the current row in
 * the reduced (keepdims) statistics array. */
typedef struct {
  int rank;
  const int64_t *dims;
  int64_t rstride[OWB_MAX_RANK];
  int64_t idx[OWB_MAX_RANK];
  int64_t offset;
} ReducedWalk;

static void
walk_next_row (ReducedWalk *w)
{
  for (int k = w->rank - 2; k >= 0; k--)
    {
      w->offset += w->rstride[k];
      if (++w->idx[k] < w->dims[k])
        return;
      w->offset -= w->rstride[k] * w->dims[k];
      w->idx[k] = 0;
    }
}

#define DEFINE_MVN(T, N)                                                                                \
  static void mvn_##N (const OwbTensor *x, OwbTensor *y, ReducedWalk *proto, int64_t n_stats,           \
                       int64_t per_stat)                                                                \
  {                                                                                                     \
    const T *xp = x->data;                                                                              \
    T *yp = y->data;                                                                                    \
    int64_t last = x->dims[x->rank - 1], rows = x->nelems / last, step = proto->rstride[x->rank - 1];   \
    double *mean = g_new0 (double, n_stats), *sq = g_new0 (double, n_stats);                            \
    ReducedWalk w = *proto;                                                                             \
    for (int64_t r = 0; r < rows; r++, walk_next_row (&w))                                              \
      for (int64_t i = 0; i < last; i++)                                                                \
        mean[w.offset + i * step] += xp[r * last + i];                                                  \
    for (int64_t s = 0; s < n_stats; s++)                                                               \
      mean[s] /= (double) per_stat;                                                                     \
    w = *proto;                                                                                         \
    for (int64_t r = 0; r < rows; r++, walk_next_row (&w))                                              \
      for (int64_t i = 0; i < last; i++)                                                                \
        {                                                                                               \
          double d = xp[r * last + i] - mean[w.offset + i * step];                                      \
          sq[w.offset + i * step] += d * d;                                                             \
        }                                                                                               \
    /* As the ONNX function body: divide by the standard deviation plus 1e-9. */                        \
    for (int64_t s = 0; s < n_stats; s++)                                                               \
      sq[s] = 1.0 / (sqrt (sq[s] / (double) per_stat) + 1e-9);                                          \
    w = *proto;                                                                                         \
    for (int64_t r = 0; r < rows; r++, walk_next_row (&w))                                              \
      for (int64_t i = 0; i < last; i++)                                                                \
        {                                                                                               \
          int64_t s = w.offset + i * step;                                                              \
          yp[r * last + i] = (T) ((xp[r * last + i] - mean[s]) * sq[s]);                                \
        }                                                                                               \
    g_free (mean);                                                                                      \
    g_free (sq);                                                                                        \
  }

OWB_CPU_FOR_FLOATS (DEFINE_MVN)

static gboolean
mean_variance_normalization_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  int n = 0;
  const int64_t *axes = _owb_mvn_axes (ctx->node, &n);
  gboolean reduced[OWB_MAX_RANK] = { FALSE };
  for (int i = 0; i < n; i++)
    {
      int64_t a = axes[i] < 0 ? axes[i] + x->rank : axes[i];
      if (a < 0 || a >= x->rank)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "axis %" G_GINT64_FORMAT
                                " is out of range for rank %d", axes[i], x->rank);
          return FALSE;
        }
      reduced[a] = TRUE;
    }
  if (x->rank == 0)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have rank 1 or more");
      return FALSE;
    }
  if (x->nelems == 0)
    return TRUE;
  ReducedWalk walk = { .rank = x->rank, .dims = x->dims };
  int64_t n_stats = 1;
  for (int k = x->rank - 1; k >= 0; k--)
    {
      walk.rstride[k] = reduced[k] ? 0 : n_stats;
      if (!reduced[k])
        n_stats *= x->dims[k];
    }
  if (x->dtype == OWB_TYPE_DOUBLE)
    mvn_DOUBLE (x, ctx->outputs[0], &walk, n_stats, x->nelems / n_stats);
  else
    mvn_FLOAT (x, ctx->outputs[0], &walk, n_stats, x->nelems / n_stats);
  return TRUE;
}

/* ---- ops along one axis: x seen as [outer, n, inner] ------------------------------------------ */

typedef enum { ALONG_SOFTMAX, ALONG_LOG_SOFTMAX, ALONG_HARDMAX, ALONG_LP_NORM } AlongOp;

typedef struct {
  const void *x;
  void *y;
  int64_t n, inner;
  AlongOp op;
  int p; /* LpNormalization */
} AlongJob;

/* One vector of n elements at stride 1 (inner == 1: the common, contiguous case). */
#define DEFINE_ALONG(T, N)                                                                              \
  static void along_contiguous_##N (int64_t begin, int64_t end, gpointer data)                          \
  {                                                                                                     \
    const AlongJob *j = data;                                                                           \
    const int64_t n = j->n;                                                                             \
    for (int64_t r = begin; r < end; r++)                                                               \
      {                                                                                                 \
        const T *xp = (const T *) j->x + r * n;                                                         \
        T *yp = (T *) j->y + r * n;                                                                     \
        if (j->op == ALONG_LP_NORM)                                                                     \
          {                                                                                             \
            double norm = 0;                                                                            \
            if (j->p == 1)                                                                              \
              for (int64_t i = 0; i < n; i++)                                                           \
                norm += fabs ((double) xp[i]);                                                          \
            else                                                                                        \
              {                                                                                         \
                for (int64_t i = 0; i < n; i++)                                                         \
                  norm += (double) xp[i] * xp[i];                                                       \
                norm = sqrt (norm);                                                                     \
              }                                                                                         \
            /* A zero vector stays zero instead of becoming NaN. */                                     \
            T inv = (T) (norm != 0 ? 1.0 / norm : 0.0);                                                 \
            for (int64_t i = 0; i < n; i++)                                                             \
              yp[i] = xp[i] * inv;                                                                      \
            continue;                                                                                   \
          }                                                                                             \
        if (j->op == ALONG_HARDMAX)                                                                     \
          {                                                                                             \
            T max = xp[0];                                                                              \
            int64_t arg = 0;                                                                            \
            for (int64_t i = 1; i < n; i++)                                                             \
              if (xp[i] > max)                                                                          \
                {                                                                                       \
                  max = xp[i];                                                                          \
                  arg = i;                                                                              \
                }                                                                                       \
            for (int64_t i = 0; i < n; i++)                                                             \
              yp[i] = 0;                                                                                \
            yp[arg] = 1;                                                                                \
            continue;                                                                                   \
          }                                                                                             \
        /* Subtracting the maximum keeps exp from overflowing. */                                       \
        T max = row_max_##N (xp, n);                                                                    \
        if (j->op == ALONG_SOFTMAX)                                                                     \
          {                                                                                             \
            double sum = exp_sum_##N (xp, yp, n, max);                                                  \
            row_affine_##N (yp, yp, n, 0, (T) (1.0 / sum), 0);                                          \
          }                                                                                             \
        else                                                                                            \
          {                                                                                             \
            double sum = exp_sum_##N (xp, NULL, n, max);                                                \
            row_affine_##N (xp, yp, n, (T) (max + log (sum)), 1, 0);                                    \
          }                                                                                             \
      }                                                                                                 \
  }                                                                                                     \
  /* One [n, inner] block per item: the loops run over inner (contiguous) for each of the n. */         \
  static void along_strided_##N (int64_t begin, int64_t end, gpointer data)                             \
  {                                                                                                     \
    const AlongJob *j = data;                                                                           \
    const int64_t n = j->n, inner = j->inner;                                                           \
    double *acc = g_new (double, inner);                                                                \
    T *best = g_new (T, inner), *sums = g_new (T, inner);                                               \
    int64_t *arg = g_new (int64_t, inner);                                                              \
    for (int64_t r = begin; r < end; r++)                                                               \
      {                                                                                                 \
        const T *xp = (const T *) j->x + r * n * inner;                                                 \
        T *yp = (T *) j->y + r * n * inner;                                                             \
        if (j->op == ALONG_LP_NORM)                                                                     \
          {                                                                                             \
            for (int64_t i = 0; i < inner; i++)                                                         \
              acc[i] = 0;                                                                               \
            for (int64_t k = 0; k < n; k++)                                                             \
              for (int64_t i = 0; i < inner; i++)                                                       \
                {                                                                                       \
                  double v = xp[k * inner + i];                                                         \
                  acc[i] += j->p == 1 ? fabs (v) : v * v;                                               \
                }                                                                                       \
            for (int64_t i = 0; i < inner; i++)                                                         \
              {                                                                                         \
                double norm = j->p == 1 ? acc[i] : sqrt (acc[i]);                                       \
                acc[i] = norm != 0 ? 1.0 / norm : 0.0;                                                  \
              }                                                                                         \
            for (int64_t k = 0; k < n; k++)                                                             \
              for (int64_t i = 0; i < inner; i++)                                                       \
                yp[k * inner + i] = (T) (xp[k * inner + i] * acc[i]);                                   \
            continue;                                                                                   \
          }                                                                                             \
        if (j->op == ALONG_HARDMAX)                                                                     \
          {                                                                                             \
            for (int64_t i = 0; i < inner; i++)                                                         \
              {                                                                                         \
                best[i] = xp[i];                                                                        \
                arg[i] = 0;                                                                             \
              }                                                                                         \
            for (int64_t k = 1; k < n; k++)                                                             \
              for (int64_t i = 0; i < inner; i++)                                                       \
                if (xp[k * inner + i] > best[i])                                                        \
                  {                                                                                     \
                    best[i] = xp[k * inner + i];                                                        \
                    arg[i] = k;                                                                         \
                  }                                                                                     \
            for (int64_t k = 0; k < n; k++)                                                             \
              for (int64_t i = 0; i < inner; i++)                                                       \
                yp[k * inner + i] = arg[i] == k ? 1 : 0;                                                \
            continue;                                                                                   \
          }                                                                                             \
        /* Per lane: maximum, then sum of e^(x - max) over the n rows, all rows contiguous. */          \
        for (int64_t i = 0; i < inner; i++)                                                             \
          {                                                                                             \
            best[i] = -INFINITY;                                                                        \
            sums[i] = 0;                                                                                \
          }                                                                                             \
        for (int64_t k = 0; k < n; k++)                                                                 \
          acc_max_##N (best, xp + k * inner, inner);                                                    \
        for (int64_t k = 0; k < n; k++)                                                                 \
          exp_acc_##N (xp + k * inner, best, j->op == ALONG_SOFTMAX ? yp + k * inner : NULL, sums,       \
                       inner);                                                                          \
        if (j->op == ALONG_SOFTMAX)                                                                     \
          {                                                                                             \
            for (int64_t i = 0; i < inner; i++)                                                         \
              sums[i] = (T) 1 / sums[i];                                                                \
            for (int64_t k = 0; k < n; k++)                                                             \
              row_mul_add_##N (yp + k * inner, yp + k * inner, inner, sums, NULL);                      \
          }                                                                                             \
        else                                                                                            \
          {                                                                                             \
            /* y = x - (max + log sum) = x * 1 + shift. */                                              \
            for (int64_t i = 0; i < inner; i++)                                                         \
              {                                                                                         \
                best[i] = -(best[i] + (T) log (sums[i]));                                               \
                sums[i] = 1;                                                                            \
              }                                                                                         \
            for (int64_t k = 0; k < n; k++)                                                             \
              row_mul_add_##N (xp + k * inner, yp + k * inner, inner, sums, best);                      \
          }                                                                                             \
      }                                                                                                 \
    g_free (sums);                                                                                      \
    g_free (acc);                                                                                       \
    g_free (best);                                                                                      \
    g_free (arg);                                                                                       \
  }

OWB_CPU_FOR_FLOATS (DEFINE_ALONG)

static gboolean
along_compute (OwbKernelContext *ctx, AlongOp op, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  int rank = x->rank;
  int64_t outer, n, inner;
  gboolean coerce_2d = op != ALONG_LP_NORM && ctx->opset < 13;
  int64_t axis = owb_node_get_int (ctx->node, "axis", coerce_2d ? 1 : -1);
  /* Before opset 13 softmax-like ops flatten x to 2D at axis (which may equal the rank). */
  if (axis < -rank || axis > rank || (!coerce_2d && axis == rank))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "axis %" G_GINT64_FORMAT " is out of range for rank %d",
                            axis, rank);
      return FALSE;
    }
  if (axis < 0)
    axis += rank;
  if (coerce_2d)
    {
      outer = _owb_cpu_product (x->dims, 0, (int) axis);
      n = _owb_cpu_product (x->dims, (int) axis, rank);
      inner = 1;
    }
  else
    {
      outer = _owb_cpu_product (x->dims, 0, (int) axis);
      n = x->dims[axis];
      inner = _owb_cpu_product (x->dims, (int) axis + 1, rank);
    }
  if (x->nelems == 0)
    return TRUE;
  AlongJob job = { x->data, ctx->outputs[0]->data, n, inner, op, 2 };
  if (op == ALONG_LP_NORM)
    {
      if (!owb_node_get_int32 (ctx->node, "p", 2, 1, 2, &job.p, error))
        return FALSE;
      if (job.p != 1 && job.p != 2)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "p must be 1 or 2");
          return FALSE;
        }
    }
  gboolean is_double = x->dtype == OWB_TYPE_DOUBLE;
  OwbParallelFunc fn = inner == 1 ? (is_double ? along_contiguous_DOUBLE : along_contiguous_FLOAT)
                                  : (is_double ? along_strided_DOUBLE : along_strided_FLOAT);
  owb_parallel_for (ctx->pool, outer, _owb_cpu_grain_for (n * inner), fn, &job);
  return TRUE;
}

static gboolean
softmax_compute (OwbKernelContext *ctx, GError **error)
{
  return along_compute (ctx, ALONG_SOFTMAX, error);
}

static gboolean
log_softmax_compute (OwbKernelContext *ctx, GError **error)
{
  return along_compute (ctx, ALONG_LOG_SOFTMAX, error);
}

static gboolean
hardmax_compute (OwbKernelContext *ctx, GError **error)
{
  return along_compute (ctx, ALONG_HARDMAX, error);
}

static gboolean
lp_normalization_compute (OwbKernelContext *ctx, GError **error)
{
  return along_compute (ctx, ALONG_LP_NORM, error);
}

/* ---- LRN -------------------------------------------------------------------------------------- */

typedef struct {
  const void *x;
  void *y;
  int64_t c, s;
  int64_t before, after; /* channels summed before and after each channel */
  double alpha_over_size, beta, bias;
} LrnJob;

#define DEFINE_LRN(T, N)                                                                                \
  static void lrn_##N (int64_t begin, int64_t end, gpointer data)                                       \
  {                                                                                                     \
    const LrnJob *j = data;                                                                             \
    double *sq = g_new (double, j->s);                                                                  \
    for (int64_t r = begin; r < end; r++)                                                               \
      {                                                                                                 \
        int64_t b = r / j->c, ch = r % j->c;                                                            \
        const T *base = (const T *) j->x + b * j->c * j->s;                                             \
        int64_t lo = MAX (0, ch - j->before), hi = MIN (j->c - 1, ch + j->after);                       \
        for (int64_t i = 0; i < j->s; i++)                                                              \
          sq[i] = 0;                                                                                    \
        for (int64_t k = lo; k <= hi; k++)                                                              \
          {                                                                                             \
            const T *xp = base + k * j->s;                                                              \
            for (int64_t i = 0; i < j->s; i++)                                                          \
              sq[i] += (double) xp[i] * xp[i];                                                          \
          }                                                                                             \
        const T *xp = base + ch * j->s;                                                                 \
        T *yp = (T *) j->y + r * j->s;                                                                  \
        for (int64_t i = 0; i < j->s; i++)                                                              \
          yp[i] = (T) (xp[i] / pow (j->bias + j->alpha_over_size * sq[i], j->beta));                    \
      }                                                                                                 \
    g_free (sq);                                                                                        \
  }

OWB_CPU_FOR_FLOATS (DEFINE_LRN)

static gboolean
lrn_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  int64_t size = owb_node_get_int (ctx->node, "size", 0);
  if (size < 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute size must be positive");
      return FALSE;
    }
  if (x->rank < 2)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have rank 2 or more, not %d", x->rank);
      return FALSE;
    }
  if (x->nelems == 0)
    return TRUE;
  LrnJob job = { x->data, ctx->outputs[0]->data, x->dims[1], _owb_cpu_product (x->dims, 2, x->rank),
                 (size - 1) / 2, size / 2, /* floor((size-1)/2) and ceil((size-1)/2) */
                 owb_node_get_float (ctx->node, "alpha", 1e-4f) / (double) size,
                 owb_node_get_float (ctx->node, "beta", 0.75f), owb_node_get_float (ctx->node, "bias", 1.0f) };
  owb_parallel_for (ctx->pool, x->dims[0] * job.c, _owb_cpu_grain_for (job.s * size), x->dtype == OWB_TYPE_DOUBLE ? lrn_DOUBLE : lrn_FLOAT,
                    &job);
  return TRUE;
}

/* ---- Dropout ---------------------------------------------------------------------------------- */

/* A seeded Dropout draws numpy's RandomState(seed).uniform (cpu-random-private.h), so it drops the
 * same elements as the ONNX reference implementation. */
#define DEFINE_DROPOUT(T, N)                                                                            \
  static void dropout_train_##N (const T *x, T *y, uint8_t *mask, int64_t count, double ratio,          \
                                 OwbCpuMt19937 *rng)                                                    \
  {                                                                                                     \
    const T scale = (T) (1.0 / (1.0 - ratio));                                                          \
    for (int64_t i = 0; i < count; i++)                                                                 \
      {                                                                                                 \
        gboolean keep = _owb_cpu_mt_double (rng) >= ratio;                                              \
        y[i] = keep ? x[i] * scale : (T) 0;                                                             \
        if (mask)                                                                                       \
          mask[i] = keep;                                                                               \
      }                                                                                                 \
  }

OWB_CPU_FOR_FLOATS (DEFINE_DROPOUT)

static gboolean
dropout_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = ctx->outputs[0];
  OwbTensor *mask = has_output (ctx, 1) ? ctx->outputs[1] : NULL;
  double ratio = 0.5;
  gboolean training = FALSE;
  /* Before opset 12 Dropout is an identity at inference; is_test (opsets 1-6) is not honoured. */
  if (ctx->opset >= 12)
    {
      if (ctx->n_inputs > 1 && ctx->inputs[1])
        {
          if (ctx->inputs[1]->nelems != 1)
            {
              owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "ratio must hold one value");
              return FALSE;
            }
          ratio = owb_tensor_get_double (ctx->inputs[1], 0);
        }
      if (ctx->n_inputs > 2 && ctx->inputs[2])
        {
          if (ctx->inputs[2]->nelems != 1)
            {
              owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "training_mode must hold one value");
              return FALSE;
            }
          training = owb_tensor_get_int64 (ctx->inputs[2], 0) != 0;
        }
    }
  if (training && !(ratio >= 0.0 && ratio < 1.0))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT, "ratio must be in [0, 1), not %g", ratio);
      return FALSE;
    }
  if (mask && mask->dtype != OWB_TYPE_BOOL && mask->dtype != x->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "unexpected mask type %s", owb_data_type_name (mask->dtype));
      return FALSE;
    }
  if (!training || ratio == 0.0)
    {
      if (y->data != x->data && x->nbytes > 0)
        memcpy (y->data, x->data, x->nbytes);
      if (mask && mask->dtype == OWB_TYPE_BOOL)
        memset (mask->data, 1, mask->nelems);
      else if (mask)
        for (int64_t i = 0; i < mask->nelems; i++)
          store_double (mask, i, 1.0);
      return TRUE;
    }
  /* Training is only reachable from opset 12, where the mask is bool. */
  OwbCpuMt19937 *rng = g_new (OwbCpuMt19937, 1);
  const OwbAttribute *seed = owb_node_get_attribute (ctx->node, "seed");
  _owb_cpu_mt_seed (rng, seed && seed->type == OWB_ATTR_INT ? (uint32_t) seed->i : g_random_int ());
  uint8_t *mask_data = mask ? mask->data : NULL;
  if (x->dtype == OWB_TYPE_DOUBLE)
    dropout_train_DOUBLE (x->data, y->data, mask_data, x->nelems, ratio, rng);
  else
    dropout_train_FLOAT (x->data, y->data, mask_data, x->nelems, ratio, rng);
  g_free (rng);
  return TRUE;
}

#define FLOATS OWB_CPU_TYPES_FLOATS

const OwbKernelDef _owb_cpu_kernels_norm[] = {
  { "MaxPool", "", 1, 0, FLOATS | OWB_TYPE_BIT (OWB_TYPE_INT8) | OWB_TYPE_BIT (OWB_TYPE_UINT8), 0, max_pool_prepare,
    g_free, pool_compute },
  { "AveragePool", "", 1, 0, FLOATS, 0, average_pool_prepare, g_free, pool_compute },
  { "LpPool", "", 1, 0, FLOATS, 0, lp_pool_prepare, g_free, pool_compute },
  { "GlobalMaxPool", "", 1, 0, FLOATS, 0, NULL, NULL, global_pool_compute },
  { "GlobalAveragePool", "", 1, 0, FLOATS, 0, NULL, NULL, global_pool_compute },
  { "GlobalLpPool", "", 1, 0, FLOATS, 0, NULL, NULL, global_pool_compute },
  { "BatchNormalization", "", 1, 0, FLOATS, 0, NULL, NULL, batch_normalization_compute },
  { "InstanceNormalization", "", 1, 0, FLOATS, 0, NULL, NULL, instance_normalization_compute },
  { "LayerNormalization", "", 17, 0, FLOATS, 0, NULL, NULL, _owb_cpu_layer_normalization_compute },
  { "GroupNormalization", "", 18, 0, FLOATS, 0, NULL, NULL, group_normalization_compute },
  { "MeanVarianceNormalization", "", 9, 0, FLOATS, 0, NULL, NULL, mean_variance_normalization_compute },
  { "LpNormalization", "", 1, 0, FLOATS, 0, NULL, NULL, lp_normalization_compute },
  { "LRN", "", 1, 0, FLOATS, 0, NULL, NULL, lrn_compute },
  { "Softmax", "", 1, 0, FLOATS, 0, NULL, NULL, softmax_compute },
  { "LogSoftmax", "", 1, 0, FLOATS, 0, NULL, NULL, log_softmax_compute },
  { "Hardmax", "", 1, 0, FLOATS, 0, NULL, NULL, hardmax_compute },
  { "Dropout", "", 1, 0, FLOATS, 0, NULL, NULL, dropout_compute },
  { NULL }
};
