/* owb-tensor-stats.c: min/max/mean/std, NaN/Inf counts, histograms and top-k of tensors. */
#include <owb/owb-tensor-stats.h>
#include <owb/owb-error.h>

#include <math.h>
#include <string.h>

/* The small float formats the engine stores but does not convert (owb_tensor_get_double returns
 * NaN for them), decoded here so the inspector can summarise quantized weights too. */
static double
decode_minifloat (guint8 bits, int exp_bits, int mant_bits, int bias)
{
  int sign = (bits >> (exp_bits + mant_bits)) & 1;
  int e = (bits >> mant_bits) & ((1 << exp_bits) - 1);
  int m = bits & ((1 << mant_bits) - 1);
  double v;
  if (e == 0)
    v = ldexp ((double) m / (1 << mant_bits), 1 - bias);
  else
    v = ldexp (1.0 + (double) m / (1 << mant_bits), e - bias);
  return sign ? -v : v;
}

static double
decode_byte_element (OwbDataType dtype, guint8 b)
{
  switch (dtype)
    {
    case OWB_TYPE_FLOAT8E4M3FN:
      if ((b & 0x7f) == 0x7f)
        return NAN;
      return decode_minifloat (b, 4, 3, 7);
    case OWB_TYPE_FLOAT8E4M3FNUZ:
      if (b == 0x80)
        return NAN;
      return decode_minifloat (b, 4, 3, 8);
    case OWB_TYPE_FLOAT8E5M2:
      if ((b & 0x7c) == 0x7c)
        return (b & 0x03) ? NAN : (b & 0x80) ? -INFINITY : INFINITY;
      return decode_minifloat (b, 5, 2, 15);
    case OWB_TYPE_FLOAT8E5M2FNUZ:
      if (b == 0x80)
        return NAN;
      return decode_minifloat (b, 5, 2, 16);
    case OWB_TYPE_FLOAT8E8M0:
      return b == 0xff ? NAN : ldexp (1.0, (int) b - 127);
    case OWB_TYPE_FLOAT4E2M1:
      return decode_minifloat (b & 0x0f, 2, 1, 1);
    case OWB_TYPE_FLOAT6E2M3:
      return decode_minifloat (b & 0x3f, 2, 3, 1);
    case OWB_TYPE_FLOAT6E3M2:
      return decode_minifloat (b & 0x3f, 3, 2, 3);
    case OWB_TYPE_INT4:
    case OWB_TYPE_INT2:
      return (gint8) b; /* sign-extended when unpacked */
    case OWB_TYPE_UINT4:
    case OWB_TYPE_UINT2:
      return b;
    default:
      return NAN;
    }
}

static gboolean
is_byte_decoded (OwbDataType dtype)
{
  switch (dtype)
    {
    case OWB_TYPE_FLOAT8E4M3FN:
    case OWB_TYPE_FLOAT8E4M3FNUZ:
    case OWB_TYPE_FLOAT8E5M2:
    case OWB_TYPE_FLOAT8E5M2FNUZ:
    case OWB_TYPE_FLOAT8E8M0:
    case OWB_TYPE_FLOAT4E2M1:
    case OWB_TYPE_FLOAT6E2M3:
    case OWB_TYPE_FLOAT6E3M2:
    case OWB_TYPE_INT4:
    case OWB_TYPE_INT2:
    case OWB_TYPE_UINT4:
    case OWB_TYPE_UINT2:
      return TRUE;
    default:
      return FALSE;
    }
}

static gboolean
is_numeric (const OwbTensor *t)
{
  if (t->kind != OWB_VALUE_TENSOR)
    return FALSE;
  switch (t->dtype)
    {
    case OWB_TYPE_FLOAT:
    case OWB_TYPE_DOUBLE:
    case OWB_TYPE_FLOAT16:
    case OWB_TYPE_BFLOAT16:
    case OWB_TYPE_INT8:
    case OWB_TYPE_UINT8:
    case OWB_TYPE_BOOL:
    case OWB_TYPE_INT16:
    case OWB_TYPE_UINT16:
    case OWB_TYPE_INT32:
    case OWB_TYPE_UINT32:
    case OWB_TYPE_INT64:
    case OWB_TYPE_UINT64:
      return TRUE;
    default:
      return is_byte_decoded (t->dtype);
    }
}

static inline double
element (const OwbTensor *t, int64_t i)
{
  if (is_byte_decoded (t->dtype))
    return decode_byte_element (t->dtype, ((const guint8 *) t->data)[i]);
  return owb_tensor_get_double (t, i);
}

typedef struct {
  guint64 n_finite, n_nan, n_inf;
  double min, max, sum;
} Pass1;

/* Pass 1: counts, extremes and the sum; pass 2: squared deviations from the mean (numerically
 * steadier than a one-pass sum of squares) and the histogram. The float32 and float64 loops are
 * typed because weights are nearly always those and the generic reader costs a switch per
 * element; integers cannot be NaN or Inf, so their loops skip the checks. */
#define PASS1_FLOAT(T)                                                                             \
  do {                                                                                             \
    const T *d = t->data;                                                                          \
    for (int64_t i = 0; i < n; i++)                                                                \
      {                                                                                            \
        double v = d[i];                                                                           \
        if (G_UNLIKELY (!isfinite (v)))                                                            \
          {                                                                                        \
            if (isnan (v)) p->n_nan++; else p->n_inf++;                                            \
            continue;                                                                              \
          }                                                                                        \
        if (v < p->min) p->min = v;                                                                \
        if (v > p->max) p->max = v;                                                                \
        p->sum += v;                                                                               \
        p->n_finite++;                                                                             \
      }                                                                                            \
  } while (0)

#define PASS1_INT(T)                                                                               \
  do {                                                                                             \
    const T *d = t->data;                                                                          \
    for (int64_t i = 0; i < n; i++)                                                                \
      {                                                                                            \
        double v = (double) d[i];                                                                  \
        if (v < p->min) p->min = v;                                                                \
        if (v > p->max) p->max = v;                                                                \
        p->sum += v;                                                                               \
      }                                                                                            \
    p->n_finite = (guint64) n;                                                                     \
  } while (0)

static void
pass1 (const OwbTensor *t, Pass1 *p)
{
  int64_t n = t->nelems;
  p->n_finite = p->n_nan = p->n_inf = 0;
  p->min = INFINITY;
  p->max = -INFINITY;
  p->sum = 0;
  switch (t->dtype)
    {
    case OWB_TYPE_FLOAT: PASS1_FLOAT (float); break;
    case OWB_TYPE_DOUBLE: PASS1_FLOAT (double); break;
    case OWB_TYPE_INT8: PASS1_INT (int8_t); break;
    case OWB_TYPE_UINT8: PASS1_INT (uint8_t); break;
    case OWB_TYPE_INT16: PASS1_INT (int16_t); break;
    case OWB_TYPE_UINT16: PASS1_INT (uint16_t); break;
    case OWB_TYPE_INT32: PASS1_INT (int32_t); break;
    case OWB_TYPE_UINT32: PASS1_INT (uint32_t); break;
    case OWB_TYPE_INT64: PASS1_INT (int64_t); break;
    case OWB_TYPE_UINT64: PASS1_INT (uint64_t); break;
    default:
      for (int64_t i = 0; i < n; i++)
        {
          double v = element (t, i);
          if (!isfinite (v))
            {
              if (isnan (v))
                p->n_nan++;
              else
                p->n_inf++;
              continue;
            }
          if (v < p->min)
            p->min = v;
          if (v > p->max)
            p->max = v;
          p->sum += v;
          p->n_finite++;
        }
      break;
    }
}

typedef struct {
  double mean, min, scale; /* scale = n_bins / (max - min), 0 when max == min */
  guint n_bins;
  guint64 *bins;
  double ss;
} Pass2;

static inline void
pass2_add (Pass2 *p, double v)
{
  double dv = v - p->mean;
  p->ss += dv * dv;
  if (p->n_bins)
    {
      double pos = (v - p->min) * p->scale;
      guint b = pos <= 0 ? 0 : pos >= p->n_bins ? p->n_bins - 1 : (guint) pos;
      p->bins[b]++;
    }
}

#define PASS2_TYPED(T, CHECK)                                                                      \
  do {                                                                                             \
    const T *d = t->data;                                                                          \
    for (int64_t i = 0; i < n; i++)                                                                \
      {                                                                                            \
        double v = (double) d[i];                                                                  \
        if (CHECK && G_UNLIKELY (!isfinite (v)))                                                   \
          continue;                                                                                \
        pass2_add (p, v);                                                                          \
      }                                                                                            \
  } while (0)

static void
pass2 (const OwbTensor *t, Pass2 *p)
{
  int64_t n = t->nelems;
  switch (t->dtype)
    {
    case OWB_TYPE_FLOAT: PASS2_TYPED (float, 1); break;
    case OWB_TYPE_DOUBLE: PASS2_TYPED (double, 1); break;
    case OWB_TYPE_INT8: PASS2_TYPED (int8_t, 0); break;
    case OWB_TYPE_UINT8: PASS2_TYPED (uint8_t, 0); break;
    case OWB_TYPE_INT16: PASS2_TYPED (int16_t, 0); break;
    case OWB_TYPE_UINT16: PASS2_TYPED (uint16_t, 0); break;
    case OWB_TYPE_INT32: PASS2_TYPED (int32_t, 0); break;
    case OWB_TYPE_UINT32: PASS2_TYPED (uint32_t, 0); break;
    case OWB_TYPE_INT64: PASS2_TYPED (int64_t, 0); break;
    case OWB_TYPE_UINT64: PASS2_TYPED (uint64_t, 0); break;
    default:
      for (int64_t i = 0; i < n; i++)
        {
          double v = element (t, i);
          if (isfinite (v))
            pass2_add (p, v);
        }
      break;
    }
}

gboolean
owb_tensor_stats_compute (const OwbTensor *tensor, OwbTensorStats *stats, guint n_bins, guint64 *bins,
                          GError **error)
{
  g_return_val_if_fail (tensor != NULL, FALSE);
  g_return_val_if_fail (stats != NULL, FALSE);
  g_return_val_if_fail (n_bins == 0 || bins != NULL, FALSE);

  if (!is_numeric (tensor))
    {
      if (tensor->kind != OWB_VALUE_TENSOR)
        g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "Statistics need a tensor, not a sequence or map");
      else
        g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "No statistics for tensors of type %s",
                     owb_data_type_name (tensor->dtype));
      return FALSE;
    }

  Pass1 p1;
  pass1 (tensor, &p1);

  memset (stats, 0, sizeof *stats);
  stats->count = (guint64) tensor->nelems;
  stats->n_nan = p1.n_nan;
  stats->n_inf = p1.n_inf;
  if (n_bins)
    memset (bins, 0, n_bins * sizeof *bins);
  if (p1.n_finite == 0)
    {
      /* Nothing finite to summarise: NaN says "no value" rather than a misleading 0. */
      stats->min = stats->max = stats->mean = stats->std = NAN;
      return TRUE;
    }

  Pass2 p2 = {
    .mean = p1.sum / (double) p1.n_finite,
    .min = p1.min,
    .scale = p1.max > p1.min ? n_bins / (p1.max - p1.min) : 0,
    .n_bins = n_bins,
    .bins = bins,
  };
  pass2 (tensor, &p2);

  stats->min = p1.min;
  stats->max = p1.max;
  stats->mean = p2.mean;
  stats->std = sqrt (p2.ss / (double) p1.n_finite); /* population std, as numpy's default */
  return TRUE;
}

guint
owb_tensor_top_k (const OwbTensor *tensor, guint k, int64_t *indices, double *values)
{
  g_return_val_if_fail (tensor != NULL, 0);
  if (k == 0 || !is_numeric (tensor) || tensor->nelems == 0)
    return 0;
  g_return_val_if_fail (indices != NULL && values != NULL, 0);

  int64_t row = tensor->rank > 0 ? tensor->dims[tensor->rank - 1] : 1;
  guint n = 0;
  /* Insertion into a sorted list of at most k: k is small (5, 10) and rows are class counts, so
   * this beats sorting the row. Strict > keeps the lower index first among equal scores. */
  for (int64_t i = 0; i < row; i++)
    {
      double v = element (tensor, i);
      if (isnan (v))
        continue;
      if (n == k && !(v > values[n - 1]))
        continue;
      guint pos = n < k ? n : k - 1;
      while (pos > 0 && v > values[pos - 1])
        {
          values[pos] = values[pos - 1];
          indices[pos] = indices[pos - 1];
          pos--;
        }
      values[pos] = v;
      indices[pos] = i;
      if (n < k)
        n++;
    }
  return n;
}

/* ---- Quantiles of plain values ---- */

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

void
owb_stats_sort_doubles (double *values, guint n)
{
  g_return_if_fail (values != NULL || n == 0);
  if (n > 1)
    qsort (values, n, sizeof *values, compare_doubles);
}

double
owb_stats_quantile (const double *sorted, guint n, double q)
{
  g_return_val_if_fail (sorted != NULL || n == 0, 0);
  if (n == 0)
    return 0;
  double pos = CLAMP (q, 0, 1) * (n - 1);
  guint lo = (guint) floor (pos), hi = MIN (lo + 1, n - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}
