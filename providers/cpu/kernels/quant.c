/* quant.c: CPU kernels of the quantization ops (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
 * QLinearMatMul, QLinearConv), with their own codecs for the float8/float6/float4/e8m0 element types. */
#include "../cpu-kernels-private.h"
#include "../cpu-qgemm-private.h"

#include <math.h>
#include <string.h>

/* Elements handled per work item: large enough to amortise the per-segment setup, small enough
 * for the staging buffer to stay in L1. */
#define CHUNK 1024

/* ---- small float formats ---- */

typedef enum {
  SPECIALS_NONE, /* float4/float6: every code is finite */
  SPECIALS_FN,   /* all-ones magnitude is NaN, no infinity (e4m3fn) */
  SPECIALS_FNUZ, /* 0x80 is the only NaN, no -0, no infinity */
  SPECIALS_IEEE, /* all-ones exponent: infinity and NaNs (e5m2) */
} Specials;

typedef struct {
  int ebits, mbits, bias;
  Specials specials;
  int max_code; /* magnitude code of the largest finite value */
} MiniFloat;

static const MiniFloat mf_e4m3fn = { 4, 3, 7, SPECIALS_FN, 0x7E };
static const MiniFloat mf_e4m3fnuz = { 4, 3, 8, SPECIALS_FNUZ, 0x7F };
static const MiniFloat mf_e5m2 = { 5, 2, 15, SPECIALS_IEEE, 0x7B };
static const MiniFloat mf_e5m2fnuz = { 5, 2, 16, SPECIALS_FNUZ, 0x7F };
static const MiniFloat mf_e2m1 = { 2, 1, 1, SPECIALS_NONE, 0x7 };
static const MiniFloat mf_e2m3 = { 2, 3, 1, SPECIALS_NONE, 0x1F };
static const MiniFloat mf_e3m2 = { 3, 2, 3, SPECIALS_NONE, 0x1F };

static const MiniFloat *
minifloat_of (OwbDataType t)
{
  switch (t)
    {
    case OWB_TYPE_FLOAT8E4M3FN: return &mf_e4m3fn;
    case OWB_TYPE_FLOAT8E4M3FNUZ: return &mf_e4m3fnuz;
    case OWB_TYPE_FLOAT8E5M2: return &mf_e5m2;
    case OWB_TYPE_FLOAT8E5M2FNUZ: return &mf_e5m2fnuz;
    case OWB_TYPE_FLOAT4E2M1: return &mf_e2m1;
    case OWB_TYPE_FLOAT6E2M3: return &mf_e2m3;
    case OWB_TYPE_FLOAT6E3M2: return &mf_e3m2;
    default: return NULL;
    }
}

static double
mf_decode (uint8_t v, const MiniFloat *f)
{
  int nbits = f->ebits + f->mbits;
  int mag = v & ((1 << nbits) - 1);
  gboolean neg = (v >> nbits) & 1;
  int e = mag >> f->mbits, m = mag & ((1 << f->mbits) - 1);
  if (f->specials == SPECIALS_FNUZ && v == 0x80)
    return NAN;
  if (f->specials == SPECIALS_FN && mag == (1 << nbits) - 1)
    return NAN;
  if (f->specials == SPECIALS_IEEE && e == (1 << f->ebits) - 1)
    return m ? NAN : (neg ? -INFINITY : INFINITY);
  double val = e == 0 ? ldexp (m, 1 - f->bias - f->mbits) : ldexp ((1 << f->mbits) + m, e - f->bias - f->mbits);
  return neg ? -val : val;
}

/* Round to nearest even. Out-of-range values (and infinities) become the largest finite value when
 * saturating; otherwise what the format has for them: infinity (e5m2) or NaN. Formats without
 * NaN or infinity always saturate, and take NaN as +0. */
static uint8_t
mf_encode (double x, const MiniFloat *f, gboolean saturate)
{
  int nbits = f->ebits + f->mbits;
  uint8_t sign = signbit (x) ? (uint8_t) (1 << nbits) : 0;
  uint8_t nan_code = f->specials == SPECIALS_FNUZ ? 0x80 : (uint8_t) (sign | ((1 << nbits) - 1));
  uint8_t overflow = sign | f->max_code;
  if (!saturate)
    {
      if (f->specials == SPECIALS_FN || f->specials == SPECIALS_FNUZ)
        overflow = nan_code;
      else if (f->specials == SPECIALS_IEEE)
        overflow = sign | (uint8_t) (((1 << f->ebits) - 1) << f->mbits);
    }
  if (isnan (x))
    return f->specials == SPECIALS_NONE ? 0 : (f->specials == SPECIALS_IEEE ? nan_code - 1 : nan_code);
  double a = fabs (x);
  if (isinf (a))
    return overflow;
  int64_t code = 0;
  if (a > 0)
    {
      int e;
      frexp (a, &e); /* a in [2^(e-1), 2^e) */
      int biased = e - 1 + f->bias;
      if (biased < 1)
        code = (int64_t) nearbyint (ldexp (a, f->bias - 1 + f->mbits));
      else
        code = ((int64_t) biased << f->mbits) + (int64_t) nearbyint (ldexp (a, f->mbits - (e - 1)))
               - (1 << f->mbits);
    }
  if (code > f->max_code)
    return overflow;
  if (code == 0 && f->specials == SPECIALS_FNUZ)
    return 0;
  return sign | (uint8_t) code;
}

static double
e8m0_decode (uint8_t v)
{
  return v == 0xFF ? NAN : ldexp (1.0, (int) v - 127);
}

/* Reads n elements of t from element `off` as doubles. */
static void
load_doubles (const OwbTensor *t, int64_t off, int64_t n, double *dst)
{
  switch (t->dtype)
    {
#define LOAD(T, NAME)                                                                                        \
  case OWB_TYPE_##NAME:                                                                                      \
    {                                                                                                        \
      const T *s = (const T *) t->data + off;                                                               \
      for (int64_t i = 0; i < n; i++)                                                                        \
        dst[i] = (double) s[i];                                                                              \
    }                                                                                                        \
    break;
      OWB_CPU_FOR_NUMERIC (LOAD)
      LOAD (int8_t, INT4)
      LOAD (int8_t, INT2)
      LOAD (uint8_t, UINT4)
      LOAD (uint8_t, UINT2)
#undef LOAD
    case OWB_TYPE_FLOAT16:
      {
        const uint16_t *s = (const uint16_t *) t->data + off;
        for (int64_t i = 0; i < n; i++)
          dst[i] = owb_half_to_float (s[i]);
      }
      break;
    case OWB_TYPE_BFLOAT16:
      {
        const uint16_t *s = (const uint16_t *) t->data + off;
        for (int64_t i = 0; i < n; i++)
          dst[i] = owb_bfloat16_to_float (s[i]);
      }
      break;
    case OWB_TYPE_FLOAT8E8M0:
      {
        const uint8_t *s = (const uint8_t *) t->data + off;
        for (int64_t i = 0; i < n; i++)
          dst[i] = e8m0_decode (s[i]);
      }
      break;
    default:
      {
        const MiniFloat *f = minifloat_of (t->dtype);
        const uint8_t *s = (const uint8_t *) t->data + off;
        for (int64_t i = 0; i < n; i++)
          dst[i] = f ? mf_decode (s[i], f) : 0;
      }
      break;
    }
}

/* A whole (small) tensor as doubles: scales and zero points. NULL t gives NULL. */
static double *
dup_doubles (const OwbTensor *t)
{
  if (!t)
    return NULL;
  double *d = g_new (double, MAX (t->nelems, 1));
  load_doubles (t, 0, t->nelems, d);
  return d;
}

/* v rounded to the type the spec computes in. */
static inline double
round_to (double v, OwbDataType precision)
{
  switch (precision)
    {
    case OWB_TYPE_FLOAT: return (float) v;
    case OWB_TYPE_FLOAT16: return owb_half_to_float (owb_float_to_half ((float) v));
    case OWB_TYPE_BFLOAT16: return owb_bfloat16_to_float (owb_float_to_bfloat16 ((float) v));
    default: return v;
    }
}

static void
round_all_to (double *v, int64_t n, OwbDataType precision)
{
  switch (precision)
    {
    case OWB_TYPE_FLOAT:
      for (int64_t i = 0; i < n; i++)
        v[i] = (float) v[i];
      break;
    case OWB_TYPE_FLOAT16:
    case OWB_TYPE_BFLOAT16:
      for (int64_t i = 0; i < n; i++)
        v[i] = round_to (v[i], precision);
      break;
    default:
      break;
    }
}

/* The range of an integer quantized type; FALSE for the float ones. */
static gboolean
int_range (OwbDataType t, double *lo, double *hi)
{
  switch (t)
    {
    case OWB_TYPE_UINT8: *lo = 0, *hi = 255; return TRUE;
    case OWB_TYPE_INT8: *lo = -128, *hi = 127; return TRUE;
    case OWB_TYPE_UINT16: *lo = 0, *hi = 65535; return TRUE;
    case OWB_TYPE_INT16: *lo = -32768, *hi = 32767; return TRUE;
    case OWB_TYPE_UINT4: *lo = 0, *hi = 15; return TRUE;
    case OWB_TYPE_INT4: *lo = -8, *hi = 7; return TRUE;
    case OWB_TYPE_UINT2: *lo = 0, *hi = 3; return TRUE;
    case OWB_TYPE_INT2: *lo = -2, *hi = 1; return TRUE;
    default: return FALSE;
    }
}

/* Stores n values into `out` from element `off`: integer types take values already rounded and
 * clamp them (NaN to the low end), small floats are encoded. */
static void
store_quantized (OwbTensor *out, int64_t off, int64_t n, const double *v, double lo, double hi, gboolean saturate)
{
  switch (out->dtype)
    {
#define STORE(T, NAME)                                                                                       \
  case OWB_TYPE_##NAME:                                                                                      \
    {                                                                                                        \
      T *d = (T *) out->data + off;                                                                          \
      for (int64_t i = 0; i < n; i++)                                                                        \
        {                                                                                                    \
          double x = v[i];                                                                                   \
          x = !(x >= lo) ? lo : (x > hi ? hi : x);                                                           \
          d[i] = (T) x;                                                                                      \
        }                                                                                                    \
    }                                                                                                        \
    break;
      STORE (uint8_t, UINT8)
      STORE (int8_t, INT8)
      STORE (uint16_t, UINT16)
      STORE (int16_t, INT16)
      STORE (uint8_t, UINT4)
      STORE (int8_t, INT4)
      STORE (uint8_t, UINT2)
      STORE (int8_t, INT2)
#undef STORE
    default:
      {
        const MiniFloat *f = minifloat_of (out->dtype);
        uint8_t *d = (uint8_t *) out->data + off;
        for (int64_t i = 0; i < n; i++)
          d[i] = mf_encode (v[i], f, saturate);
      }
      break;
    }
}

static void
store_reals (OwbTensor *out, int64_t off, int64_t n, const float *v)
{
  switch (out->dtype)
    {
    case OWB_TYPE_FLOAT:
      memcpy ((float *) out->data + off, v, n * sizeof (float));
      break;
    case OWB_TYPE_DOUBLE:
      for (int64_t i = 0; i < n; i++)
        ((double *) out->data)[off + i] = v[i];
      break;
    case OWB_TYPE_FLOAT16:
      for (int64_t i = 0; i < n; i++)
        ((uint16_t *) out->data)[off + i] = owb_float_to_half (v[i]);
      break;
    case OWB_TYPE_BFLOAT16:
      for (int64_t i = 0; i < n; i++)
        ((uint16_t *) out->data)[off + i] = owb_float_to_bfloat16 (v[i]);
      break;
    default:
      break;
    }
}

/* ---- QuantizeLinear / DequantizeLinear ---- */

typedef enum { GRAIN_TENSOR, GRAIN_AXIS, GRAIN_BLOCKED } Granularity;

/* x seen as [pre, D, post] around the quantization axis; scale (and zero point) hold one value
 * (tensor), D values (axis), or [pre, ceil(D / block), post] values (blocked). */
typedef struct {
  Granularity grain;
  int64_t pre, D, post, block, nb;
} QuantLayout;

static gboolean
quant_layout (OwbKernelContext *ctx, const OwbTensor *x, const OwbTensor *scale, const OwbTensor *zp,
              QuantLayout *q, GError **error)
{
  int64_t block = ctx->opset >= 21 ? owb_node_get_int (ctx->node, "block_size", 0) : 0;
  int64_t axis = ctx->opset >= 13 ? owb_node_get_int (ctx->node, "axis", 1) : 1;
  memset (q, 0, sizeof *q);
  q->pre = q->D = 1;
  q->post = x->nelems;
  q->grain = GRAIN_TENSOR;
  if (zp && zp->nelems != scale->nelems)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "the zero point has %" G_GINT64_FORMAT
                            " values but the scale has %" G_GINT64_FORMAT, zp->nelems, scale->nelems);
      return FALSE;
    }
  if (scale->nelems == 1)
    return TRUE;
  if (axis < -x->rank || axis >= x->rank || block < 0)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "axis %" G_GINT64_FORMAT " or block_size %"
                            G_GINT64_FORMAT " is out of range for rank %d", axis, block, x->rank);
      return FALSE;
    }
  int ax = (int) (axis < 0 ? axis + x->rank : axis);
  q->D = x->dims[ax];
  for (int i = 0; i < ax; i++)
    q->pre *= x->dims[i];
  q->post = 1;
  for (int i = ax + 1; i < x->rank; i++)
    q->post *= x->dims[i];
  gboolean ok;
  if (block == 0)
    {
      q->grain = GRAIN_AXIS;
      ok = scale->rank == 1 && scale->nelems == q->D;
    }
  else
    {
      q->grain = GRAIN_BLOCKED;
      q->block = block;
      q->nb = (q->D + block - 1) / block;
      ok = scale->rank == x->rank;
      for (int i = 0; ok && i < x->rank; i++)
        ok = scale->dims[i] == (i == ax ? q->nb : x->dims[i]);
    }
  if (!ok)
    {
      g_autofree char *ss = owb_tensor_shape_to_string (scale);
      g_autofree char *xs = owb_tensor_shape_to_string (x);
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "scale shape %s does not fit input shape %s", ss, xs);
      return FALSE;
    }
  return TRUE;
}

/* The scale index of flat element idx, the stride of that index along the contiguous run, and the
 * run's length (up to `end`). */
static inline int64_t
quant_segment (const QuantLayout *q, int64_t idx, int64_t end, int64_t *sstride, int64_t *len)
{
  int64_t row = idx / q->post, i = idx - row * q->post;
  *len = MIN (end, (row + 1) * q->post) - idx;
  switch (q->grain)
    {
    case GRAIN_TENSOR:
      *sstride = 0;
      return 0;
    case GRAIN_AXIS:
      *sstride = 0;
      return row % q->D;
    default:
      {
        int64_t p = row / q->D, d = row - p * q->D;
        *sstride = 1;
        return (p * q->nb + d / q->block) * q->post + i;
      }
    }
}

typedef struct {
  QuantLayout layout;
  const OwbTensor *x;
  OwbTensor *y;
  const double *scale, *zp; /* zp NULL: zero */
  OwbDataType precision;
  gboolean is_int, saturate;
  /* float8 outputs skip a zero zero point so that -0 stays -0, as the reference keeps it. */
  gboolean is_float8, zp_all_zero;
  double lo, hi;
} QuantizeJob;

static void
quantize_range (int64_t begin, int64_t end, gpointer data)
{
  const QuantizeJob *j = data;
  double buf[CHUNK];
  int64_t stop = MIN (end * CHUNK, j->x->nelems);
  for (int64_t idx = begin * CHUNK; idx < stop;)
    {
      int64_t ss, len;
      int64_t si = quant_segment (&j->layout, idx, MIN (stop, idx + CHUNK), &ss, &len);
      const double *s = j->scale + si, *z = j->zp ? j->zp + si : NULL;
      load_doubles (j->x, idx, len, buf);
      round_all_to (buf, len, j->precision);
      for (int64_t i = 0; i < len; i++)
        buf[i] = buf[i] / s[i * ss];
      round_all_to (buf, len, j->precision);
      if (j->is_int)
        {
          if (z)
            for (int64_t i = 0; i < len; i++)
              buf[i] = nearbyint (buf[i]) + z[i * ss];
          else
            for (int64_t i = 0; i < len; i++)
              buf[i] = nearbyint (buf[i]);
        }
      else if (z && (!j->is_float8 || !j->zp_all_zero))
        for (int64_t i = 0; i < len; i++)
          buf[i] += z[i * ss];
      store_quantized (j->y, idx, len, buf, j->lo, j->hi, j->saturate);
      idx += len;
    }
}

/* The zero point, when given, has the type of the quantized tensor q (called `name`: x or y). */
static gboolean
check_zero_point (OwbKernelContext *ctx, const OwbTensor *zp, const OwbTensor *q, const char *name, GError **error)
{
  if (zp && zp->dtype != q->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "%s_zero_point has type %s but %s has %s", name,
                            owb_data_type_name (zp->dtype), name, owb_data_type_name (q->dtype));
      return FALSE;
    }
  return TRUE;
}

/* The inputs QuantizeLinear and DequantizeLinear share: the scale and the optional zero point, laid
 * out over X in *layout, the zero point's type checked against the 8-bit side (Y when quantizing,
 * X when not). FALSE, with the error set, when they do not fit. */
static gboolean
quant_inputs (OwbKernelContext *ctx, gboolean quantize, const OwbTensor **scale, const OwbTensor **zp,
              QuantLayout *layout, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  *scale = ctx->inputs[1];
  *zp = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  return quant_layout (ctx, x, *scale, *zp, layout, error)
         && check_zero_point (ctx, *zp, quantize ? ctx->outputs[0] : x, quantize ? "y" : "x", error);
}

/* Runs range over X in chunks of CHUNK elements on the pool, then frees s and z, the copies of
 * the scale and zero point that the job read. */
static gboolean
run_chunks_take_params (OwbKernelContext *ctx, const OwbTensor *x, OwbParallelFunc range, gpointer job, double *s,
                        double *z)
{
  owb_parallel_for (ctx->pool, (x->nelems + CHUNK - 1) / CHUNK, 16, range, job);
  g_free (s);
  g_free (z);
  return TRUE;
}

/* QuantizeLinear past the fast path, its inputs unpacked by quant_linear_compute. */
static gboolean
quantize_run (OwbKernelContext *ctx, const QuantLayout *layout, const OwbTensor *scale, const OwbTensor *zp,
              GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = ctx->outputs[0];
  QuantizeJob j = { .layout = *layout, .x = x, .y = y };
  j.is_int = int_range (y->dtype, &j.lo, &j.hi);
  if (!j.is_int && !minifloat_of (y->dtype))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "cannot quantize to %s", owb_data_type_name (y->dtype));
      return FALSE;
    }
  /* The division runs in the scale's type unless `precision` says otherwise; int32 and e8m0 scales
   * divide exactly. */
  j.precision = ctx->opset >= 23 ? (OwbDataType) owb_node_get_int (ctx->node, "precision", 0) : OWB_TYPE_UNDEFINED;
  if (j.precision == OWB_TYPE_UNDEFINED)
    j.precision = scale->dtype == OWB_TYPE_FLOAT8E8M0 ? OWB_TYPE_DOUBLE : scale->dtype;
  j.saturate = ctx->opset >= 19 ? owb_node_get_int (ctx->node, "saturate", 1) != 0 : TRUE;
  double *s = dup_doubles (scale), *z = dup_doubles (zp);
  /* Both operands of the division are taken in that precision too. */
  round_all_to (s, scale->nelems, j.precision);
  j.scale = s;
  j.zp = z;
  j.is_float8 = y->dtype >= OWB_TYPE_FLOAT8E4M3FN && y->dtype <= OWB_TYPE_FLOAT8E5M2FNUZ;
  j.zp_all_zero = TRUE;
  for (int64_t i = 0; z && i < zp->nelems; i++)
    j.zp_all_zero = j.zp_all_zero && z[i] == 0;
  return run_chunks_take_params (ctx, x, quantize_range, &j, s, z);
}

typedef struct {
  QuantLayout layout;
  const OwbTensor *x;
  OwbTensor *y;
  const double *scale, *zp;
} DequantizeJob;

static void
dequantize_range (int64_t begin, int64_t end, gpointer data)
{
  const DequantizeJob *j = data;
  double buf[CHUNK];
  float out[CHUNK];
  int64_t stop = MIN (end * CHUNK, j->x->nelems);
  for (int64_t idx = begin * CHUNK; idx < stop;)
    {
      int64_t ss, len;
      int64_t si = quant_segment (&j->layout, idx, MIN (stop, idx + CHUNK), &ss, &len);
      const double *s = j->scale + si, *z = j->zp ? j->zp + si : NULL;
      load_doubles (j->x, idx, len, buf);
      if (z)
        for (int64_t i = 0; i < len; i++)
          buf[i] -= z[i * ss];
      /* The product is taken in float32 whatever the output type, as the reference does. */
      for (int64_t i = 0; i < len; i++)
        out[i] = (float) buf[i] * (float) s[i * ss];
      store_reals (j->y, idx, len, out);
      idx += len;
    }
}

/* DequantizeLinear past the fast path, its inputs unpacked by quant_linear_compute. */
static gboolean
dequantize_run (OwbKernelContext *ctx, const QuantLayout *layout, const OwbTensor *scale, const OwbTensor *zp,
                GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = ctx->outputs[0];
  DequantizeJob j = { .layout = *layout, .x = x, .y = y };
  if (y->dtype != OWB_TYPE_FLOAT && y->dtype != OWB_TYPE_FLOAT16 && y->dtype != OWB_TYPE_BFLOAT16
      && y->dtype != OWB_TYPE_DOUBLE)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "cannot dequantize to %s", owb_data_type_name (y->dtype));
      return FALSE;
    }
  double *s = dup_doubles (scale), *z = dup_doubles (zp);
  j.scale = s;
  j.zp = z;
  return run_chunks_take_params (ctx, x, dequantize_range, &j, s, z);
}

typedef gboolean (*QuantRunFunc) (OwbKernelContext *ctx, const QuantLayout *layout, const OwbTensor *scale,
                                  const OwbTensor *zp, GError **error);

/* QuantizeLinear and DequantizeLinear: per tensor between float32 and 8 bits, cpu-quantize-fast.c;
 * else the scale and zero point unpacked and checked by quant_inputs, and `run` for the rest. */
static gboolean
quant_linear_compute (OwbKernelContext *ctx, gboolean quantize, QuantRunFunc run, GError **error)
{
  if (quantize ? _owb_cpu_quantize_linear_fast (ctx) : _owb_cpu_dequantize_linear_fast (ctx))
    return TRUE;
  const OwbTensor *scale, *zp;
  QuantLayout layout;
  return quant_inputs (ctx, quantize, &scale, &zp, &layout, error) && run (ctx, &layout, scale, zp, error);
}

static gboolean
compute_quantize_linear (OwbKernelContext *ctx, GError **error)
{
  return quant_linear_compute (ctx, TRUE, quantize_run, error);
}

static gboolean
compute_dequantize_linear (OwbKernelContext *ctx, GError **error)
{
  return quant_linear_compute (ctx, FALSE, dequantize_run, error);
}

/* ---- DynamicQuantizeLinear ---- */

static gboolean
compute_dynamic_quantize_linear (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  const float *xd = x->data;
  /* The range always includes 0 so that 0 is exactly representable. */
  float lo, hi;
  _owb_cpu_float_range (ctx->pool, xd, x->nelems, &lo, &hi);
  float scale;
  int32_t zp;
  _owb_cpu_dynamic_quant_params (lo, hi, &scale, &zp);
  if (ctx->outputs[0])
    _owb_cpu_quantize_u8 (ctx->pool, xd, ctx->outputs[0]->data, x->nelems, scale, zp);
  if (ctx->n_outputs > 1 && ctx->outputs[1])
    ((float *) ctx->outputs[1]->data)[0] = scale;
  if (ctx->n_outputs > 2 && ctx->outputs[2])
    ((uint8_t *) ctx->outputs[2]->data)[0] = (uint8_t) zp;
  return TRUE;
}

/* ---- QLinearMatMul / QLinearConv ---- */

static gboolean
is_int8 (OwbDataType t)
{
  return t == OWB_TYPE_INT8 || t == OWB_TYPE_UINT8;
}

/* (t - zero point) as int16, the zero point taken per row: element i uses zp[(i / period) % nzp]. */
static int16_t *
to_int16_minus_zp (const OwbTensor *t, const double *zp, int64_t nzp, int64_t period)
{
  int16_t *out = g_new (int16_t, MAX (t->nelems, 1));
  int64_t rows = period ? t->nelems / period : 0;
  for (int64_t r = 0; r < rows; r++)
    {
      int16_t z = (int16_t) zp[r % nzp];
      int16_t *o = out + r * period;
      if (t->dtype == OWB_TYPE_INT8)
        {
          const int8_t *s = (const int8_t *) t->data + r * period;
          for (int64_t i = 0; i < period; i++)
            o[i] = (int16_t) (s[i] - z);
        }
      else
        {
          const uint8_t *s = (const uint8_t *) t->data + r * period;
          for (int64_t i = 0; i < period; i++)
            o[i] = (int16_t) (s[i] - z);
        }
    }
  return out;
}

typedef struct {
  /* sizes */
  int64_t M, K, N;
  const int64_t *a_off, *b_off; /* matrix index of a and b per output batch */
  /* int path */
  const int16_t *a16, *b16;
  /* float8 path */
  const double *ad, *bd;
  /* requantization: multiplier per (a row param, b column param) */
  const double *as, *bs;
  int64_t nas, nbs; /* 1, M or a_batches * M; 1, N or b_batches * N */
  double ys, yzp;
  OwbDataType precision;
  OwbTensor *y;
  gboolean int_out; /* FALSE: y is a float8 type, taken unrounded */
  double lo, hi;
} QMatMulJob;

static inline int64_t
param_index (int64_t count, int64_t batch, int64_t per, int64_t i)
{
  return count == 1 ? 0 : (count == per ? i : batch * per + i);
}

static void
qmatmul_rows (int64_t begin, int64_t end, gpointer data)
{
  const QMatMulJob *j = data;
  int64_t N = j->N, K = j->K, M = j->M;
  int32_t *acc = g_new (int32_t, MAX (N, 1));
  double *accd = j->ad ? g_new (double, MAX (N, 1)) : NULL;
  double *v = g_new (double, MAX (N, 1));
  for (int64_t r = begin; r < end; r++)
    {
      int64_t bt = r / M, m = r - bt * M;
      int64_t am = j->a_off[bt], bm = j->b_off[bt];
      if (accd)
        {
          memset (accd, 0, N * sizeof (double));
          const double *arow = j->ad + (am * M + m) * K;
          for (int64_t k = 0; k < K; k++)
            {
              double av = arow[k];
              const double *brow = j->bd + (bm * K + k) * N;
              for (int64_t n = 0; n < N; n++)
                accd[n] += av * brow[n];
            }
        }
      else
        {
          memset (acc, 0, N * sizeof (int32_t));
          const int16_t *arow = j->a16 + (am * M + m) * K;
          for (int64_t k = 0; k < K; k++)
            {
              int32_t av = arow[k];
              if (av == 0)
                continue;
              const int16_t *brow = j->b16 + (bm * K + k) * N;
              for (int64_t n = 0; n < N; n++)
                acc[n] += av * brow[n];
            }
        }
      double as = j->as[param_index (j->nas, am, M, m)];
      for (int64_t n = 0; n < N; n++)
        {
          double bs = j->bs[param_index (j->nbs, bm, N, n)];
          double mult = round_to (round_to (as * bs, j->precision) / j->ys, j->precision);
          double x = (accd ? accd[n] : (double) acc[n]) * mult;
          v[n] = j->int_out ? nearbyint (x) + j->yzp : x + j->yzp;
        }
      store_quantized (j->y, r * N, N, v, j->lo, j->hi, TRUE);
    }
  g_free (acc);
  g_free (accd);
  g_free (v);
}

/* Per-row parameters of a: 1 value, M values, or one per row of every a matrix; per-column ones of b likewise. */
static gboolean
check_param_count (OwbKernelContext *ctx, const OwbTensor *t, int64_t per, int64_t mats, const char *name,
                   GError **error)
{
  if (t->nelems == 1 || t->nelems == per || t->nelems == per * mats)
    return TRUE;
  g_autofree char *s = owb_tensor_shape_to_string (t);
  owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "%s of shape %s is neither per tensor nor per %s", name, s,
                        name[0] == 'a' ? "row" : "column");
  return FALSE;
}

static double *
dequantize_all (const OwbTensor *t, const double *zp, int64_t nzp, int64_t period)
{
  double *d = dup_doubles (t);
  int64_t rows = period ? t->nelems / period : 0;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t i = 0; i < period; i++)
      d[r * period + i] -= zp[r % nzp];
  return d;
}

static gboolean
compute_qlinear_matmul (OwbKernelContext *ctx, GError **error)
{
  /* B packed at prepare: the integer GEMM core (cpu-qgemm-matmul.c) */
  if (_owb_cpu_qgemm_matmul_run (ctx))
    return TRUE;
  const OwbTensor *a = ctx->inputs[0], *as = ctx->inputs[1], *azp = ctx->inputs[2];
  const OwbTensor *b = ctx->inputs[3], *bs = ctx->inputs[4], *bzp = ctx->inputs[5];
  const OwbTensor *ys = ctx->inputs[6], *yzp = ctx->inputs[7];
  OwbTensor *y = ctx->outputs[0];

  int64_t K = a->dims[a->rank - 1];
  int64_t M = a->rank >= 2 ? a->dims[a->rank - 2] : 1, N = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
  int64_t a_mats = a->nelems / MAX (M * K, 1), b_mats = b->nelems / MAX (K * N, 1);
  if (!check_param_count (ctx, as, M, a_mats, "a_scale", error) || !check_param_count (ctx, azp, M, a_mats, "a_zero_point", error)
      || !check_param_count (ctx, bs, N, b_mats, "b_scale", error)
      || !check_param_count (ctx, bzp, N, b_mats, "b_zero_point", error))
    return FALSE;
  if (ys->nelems != 1 || yzp->nelems != 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "y_scale and y_zero_point must hold one value");
      return FALSE;
    }
  if (azp->dtype != a->dtype || bzp->dtype != b->dtype || yzp->dtype != y->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "each zero point must have the type of its tensor");
      return FALSE;
    }

  /* Batch offsets: y's leading dims broadcast a's and b's. */
  int nb = y->rank - (a->rank >= 2) - (b->rank >= 2);
  int a_nb = MAX (a->rank - 2, 0), b_nb = MAX (b->rank - 2, 0);
  int64_t batches = 1;
  for (int i = 0; i < nb; i++)
    batches *= y->dims[i];
  int64_t *a_off = g_new0 (int64_t, MAX (batches, 1)), *b_off = g_new0 (int64_t, MAX (batches, 1));
  _owb_cpu_matmul_batch_offsets (a_nb, a->dims, b_nb, b->dims, nb, y->dims, batches, 1, 1, a_off, b_off);

  double *asd = dup_doubles (as), *bsd = dup_doubles (bs), *azd = dup_doubles (azp), *bzd = dup_doubles (bzp);
  double ysd, yzd;
  load_doubles (ys, 0, 1, &ysd);
  load_doubles (yzp, 0, 1, &yzd);
  QMatMulJob j = {
    .M = M, .K = K, .N = N, .a_off = a_off, .b_off = b_off,
    .as = asd, .bs = bsd, .nas = as->nelems, .nbs = bs->nelems, .ys = ysd, .yzp = yzd,
    .precision = as->dtype, .y = y, .lo = 0, .hi = 0,
  };
  int16_t *a16 = NULL, *b16 = NULL;
  double *ad = NULL, *bd = NULL;
  if (is_int8 (a->dtype) && is_int8 (b->dtype))
    {
      /* a's zero point changes per row (period K); b's per column, so subtract it on a transposed walk. */
      a16 = to_int16_minus_zp (a, azd, azp->nelems, K ? K : 1);
      b16 = to_int16_minus_zp (b, (double[]) { 0 }, 1, MAX (b->nelems, 1));
      for (int64_t i = 0; i < b->nelems; i++)
        {
          int64_t col = i % N, mat = i / MAX (K * N, 1);
          b16[i] = (int16_t) (b16[i] - (int16_t) bzd[param_index (bzp->nelems, mat, N, col)]);
        }
      j.a16 = a16;
      j.b16 = b16;
    }
  else
    {
      ad = dequantize_all (a, azd, azp->nelems, K ? K : 1);
      bd = dup_doubles (b);
      for (int64_t i = 0; i < b->nelems; i++)
        {
          int64_t col = i % N, mat = i / MAX (K * N, 1);
          bd[i] -= bzd[param_index (bzp->nelems, mat, N, col)];
        }
      j.ad = ad;
      j.bd = bd;
    }
  j.int_out = int_range (y->dtype, &j.lo, &j.hi);
  if (y->nelems > 0)
    owb_parallel_for (ctx->pool, batches * M, MAX (1, 4096 / MAX (N * K, 1)), qmatmul_rows, &j);
  g_free (a16);
  g_free (b16);
  g_free (ad);
  g_free (bd);
  g_free (asd);
  g_free (bsd);
  g_free (azd);
  g_free (bzd);
  g_free (a_off);
  g_free (b_off);
  return TRUE;
}

/* Convolution geometry, from the attributes and the concrete shapes. */
typedef struct {
  int nsp;
  int64_t N, C, M, group, Cg, Mg;
  int64_t in[OWB_MAX_RANK], out[OWB_MAX_RANK], kernel[OWB_MAX_RANK];
  int64_t strides[OWB_MAX_RANK], dilations[OWB_MAX_RANK], pad_begin[OWB_MAX_RANK];
  int64_t ksize, in_size, out_size; /* products over the spatial axes */
} ConvGeom;

static void
get_ints_or (const OwbNode *node, const char *name, int n, int64_t def, int64_t *out)
{
  int got = 0;
  const int64_t *v = owb_node_get_ints (node, name, &got);
  for (int i = 0; i < n; i++)
    out[i] = v && i < got ? v[i] : def;
}

static gboolean
conv_geometry (OwbKernelContext *ctx, const OwbTensor *x, const OwbTensor *w, const OwbTensor *y, ConvGeom *g,
               GError **error)
{
  memset (g, 0, sizeof *g);
  if (x->rank < 3 || w->rank != x->rank || y->rank != x->rank)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "x and w must have the same rank >= 3");
      return FALSE;
    }
  g->nsp = x->rank - 2;
  g->N = x->dims[0];
  g->C = x->dims[1];
  g->M = w->dims[0];
  g->group = owb_node_get_int (ctx->node, "group", 1);
  if (g->group < 1 || g->C % g->group || g->M % g->group || w->dims[1] * g->group != g->C || y->dims[1] != g->M)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "channels do not match group %" G_GINT64_FORMAT, g->group);
      return FALSE;
    }
  g->Cg = g->C / g->group;
  g->Mg = g->M / g->group;
  int64_t pads[2 * OWB_MAX_RANK];
  get_ints_or (ctx->node, "strides", g->nsp, 1, g->strides);
  get_ints_or (ctx->node, "dilations", g->nsp, 1, g->dilations);
  get_ints_or (ctx->node, "pads", 2 * g->nsp, 0, pads);
  const char *ap = owb_node_get_string (ctx->node, "auto_pad", "NOTSET");
  gboolean upper = strcmp (ap, "SAME_UPPER") == 0, lower = strcmp (ap, "SAME_LOWER") == 0;
  gboolean valid = strcmp (ap, "VALID") == 0;
  g->ksize = g->in_size = g->out_size = 1;
  for (int i = 0; i < g->nsp; i++)
    {
      g->in[i] = x->dims[2 + i];
      g->out[i] = y->dims[2 + i];
      g->kernel[i] = w->dims[2 + i];
      if (g->strides[i] < 1 || g->dilations[i] < 1)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "strides and dilations must be positive");
          return FALSE;
        }
      int64_t dk = (g->kernel[i] - 1) * g->dilations[i] + 1;
      if (upper || lower)
        {
          int64_t total = MAX ((g->out[i] - 1) * g->strides[i] + dk - g->in[i], 0);
          g->pad_begin[i] = upper ? total / 2 : total - total / 2;
        }
      else
        g->pad_begin[i] = valid ? 0 : pads[i];
      g->ksize *= g->kernel[i];
      g->in_size *= g->in[i];
      g->out_size *= g->out[i];
    }
  return TRUE;
}

typedef struct {
  const ConvGeom *g;
  const int16_t *x16; /* the current image and group: [Cg, in...] */
  int16_t *col;       /* [Cg * ksize, out_size] */
} Im2ColJob;

/* One row of the column matrix: channel c at kernel offset kidx, over every output position;
 * positions that fall in the padding read 0 (the zero point, once subtracted). */
static void
im2col_rows (int64_t begin, int64_t end, gpointer data)
{
  const Im2ColJob *j = data;
  const ConvGeom *g = j->g;
  int nsp = g->nsp, last = nsp - 1;
  for (int64_t r = begin; r < end; r++)
    {
      int64_t c = r / g->ksize, kidx = r - c * g->ksize;
      int64_t koff[OWB_MAX_RANK];
      for (int i = nsp - 1; i >= 0; i--)
        {
          koff[i] = (kidx % g->kernel[i]) * g->dilations[i] - g->pad_begin[i];
          kidx /= g->kernel[i];
        }
      const int16_t *src = j->x16 + c * g->in_size;
      int16_t *dst = j->col + r * g->out_size;
      int64_t outer = g->out[last] ? g->out_size / g->out[last] : 0;
      int64_t coord[OWB_MAX_RANK] = { 0 };
      for (int64_t o = 0; o < outer; o++)
        {
          /* Offset of the row in the input, or -1 when an outer axis falls in the padding. */
          int64_t base = 0;
          gboolean inside = TRUE;
          for (int i = 0; i < last; i++)
            {
              int64_t p = coord[i] * g->strides[i] + koff[i];
              inside = inside && p >= 0 && p < g->in[i];
              base = base * g->in[i] + p;
            }
          int64_t n_last = g->out[last];
          int16_t *d = dst + o * n_last;
          if (!inside)
            memset (d, 0, n_last * sizeof (int16_t));
          else
            {
              const int16_t *row = src + base * g->in[last];
              int64_t s = g->strides[last], k0 = koff[last], in_last = g->in[last];
              for (int64_t q = 0; q < n_last; q++)
                {
                  int64_t p = q * s + k0;
                  d[q] = p >= 0 && p < in_last ? row[p] : 0;
                }
            }
          for (int i = last - 1; i >= 0; i--)
            if (++coord[i] < g->out[i])
              break;
            else
              coord[i] = 0;
        }
    }
}

typedef struct {
  const ConvGeom *g;
  const int16_t *col, *w16; /* w16: [M, Cg * ksize] */
  const int32_t *bias;
  const double *mult;       /* per output channel */
  double yzp, lo, hi;
  int64_t n, group;
  OwbTensor *y;
} QConvJob;

static void
qconv_channels (int64_t begin, int64_t end, gpointer data)
{
  const QConvJob *j = data;
  const ConvGeom *g = j->g;
  int64_t S = g->out_size, R = g->Cg * g->ksize;
  int32_t *acc = g_new (int32_t, MAX (S, 1));
  double *v = g_new (double, MAX (S, 1));
  for (int64_t mi = begin; mi < end; mi++)
    {
      int64_t m = j->group * g->Mg + mi;
      int32_t b0 = j->bias ? j->bias[m] : 0;
      for (int64_t s = 0; s < S; s++)
        acc[s] = b0;
      const int16_t *wrow = j->w16 + m * R;
      for (int64_t r = 0; r < R; r++)
        {
          int32_t wv = wrow[r];
          if (wv == 0)
            continue;
          const int16_t *crow = j->col + r * S;
          for (int64_t s = 0; s < S; s++)
            acc[s] += wv * crow[s];
        }
      double mult = j->mult[m];
      for (int64_t s = 0; s < S; s++)
        v[s] = nearbyint (acc[s] * mult) + j->yzp;
      store_quantized (j->y, (j->n * g->M + m) * S, S, v, j->lo, j->hi, TRUE);
    }
  g_free (acc);
  g_free (v);
}

static gboolean
compute_qlinear_conv (OwbKernelContext *ctx, GError **error)
{
  /* W packed at prepare: the integer GEMM core, channels-last (cpu-qconv.c) */
  if (_owb_cpu_qconv_run (ctx))
    return TRUE;
  const OwbTensor *x = ctx->inputs[0], *xs = ctx->inputs[1], *xzp = ctx->inputs[2];
  const OwbTensor *w = ctx->inputs[3], *ws = ctx->inputs[4], *wzp = ctx->inputs[5];
  const OwbTensor *ys = ctx->inputs[6], *yzp = ctx->inputs[7];
  const OwbTensor *bias = ctx->n_inputs > 8 ? ctx->inputs[8] : NULL;
  OwbTensor *y = ctx->outputs[0];
  ConvGeom g;

  if (!conv_geometry (ctx, x, w, y, &g, error))
    return FALSE;
  if (!is_int8 (w->dtype) || !is_int8 (y->dtype) || xzp->dtype != x->dtype || wzp->dtype != w->dtype
      || yzp->dtype != y->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "x, w, y must be int8 or uint8, each zero point of its tensor's type");
      return FALSE;
    }
  if (xs->nelems != 1 || xzp->nelems != 1 || ys->nelems != 1 || yzp->nelems != 1
      || (ws->nelems != 1 && ws->nelems != g.M) || (wzp->nelems != 1 && wzp->nelems != g.M))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "x and y scales and zero points must be scalars, w's scalars or one per output channel");
      return FALSE;
    }
  if (bias && (bias->dtype != OWB_TYPE_INT32 || bias->nelems != g.M))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "bias B must hold one int32 per output channel");
      return FALSE;
    }
  if (y->nelems == 0)
    return TRUE;

  double xsd, xzd, ysd, yzd;
  load_doubles (xs, 0, 1, &xsd);
  load_doubles (xzp, 0, 1, &xzd);
  load_doubles (ys, 0, 1, &ysd);
  load_doubles (yzp, 0, 1, &yzd);
  double *wsd = dup_doubles (ws), *wzd = dup_doubles (wzp);
  double *mult = g_new (double, g.M);
  for (int64_t m = 0; m < g.M; m++)
    mult[m] = round_to (round_to (xsd * wsd[ws->nelems == 1 ? 0 : m], xs->dtype) / ysd, xs->dtype);
  int16_t *x16 = to_int16_minus_zp (x, &xzd, 1, MAX (x->nelems, 1));
  int16_t *w16 = to_int16_minus_zp (w, wzd, wzp->nelems, MAX (g.Cg * g.ksize, 1));
  int64_t rows = g.Cg * g.ksize;
  int16_t *col = g_new (int16_t, MAX (rows * g.out_size, 1));
  QConvJob cj = { .g = &g, .col = col, .w16 = w16, .bias = bias ? bias->data : NULL, .mult = mult, .yzp = yzd, .y = y };
  int_range (y->dtype, &cj.lo, &cj.hi);
  for (int64_t n = 0; n < g.N; n++)
    for (int64_t grp = 0; grp < g.group; grp++)
      {
        Im2ColJob ij = { &g, x16 + (n * g.C + grp * g.Cg) * g.in_size, col };
        owb_parallel_for (ctx->pool, rows, MAX (1, 16384 / MAX (g.out_size, 1)), im2col_rows, &ij);
        cj.n = n;
        cj.group = grp;
        owb_parallel_for (ctx->pool, g.Mg, 1, qconv_channels, &cj);
      }
  g_free (col);
  g_free (x16);
  g_free (w16);
  g_free (mult);
  g_free (wsd);
  g_free (wzd);
  return TRUE;
}

/* ---- QLinearLookup (ai.onnx.workbench) ---- */

typedef struct {
  const uint8_t *x, *table;
  uint8_t *y;
} LookupJob;

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* GCC 12's AVX-512 intrinsics pass _mm512_undefined_* () values that it then warns about */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define VBMI __attribute__ ((target ("avx512f,avx512bw,avx512vbmi")))
/* 64 bytes a step: two vpermi2b look each byte up in the table's halves (its low 7 bits), the
 * byte's top bit picks the half. */
static VBMI void
lookup_vbmi (const uint8_t *x, const uint8_t *table, uint8_t *y, int64_t n)
{
  __m512i t0 = _mm512_loadu_si512 ((const void *) table), t1 = _mm512_loadu_si512 ((const void *) (table + 64));
  __m512i t2 = _mm512_loadu_si512 ((const void *) (table + 128)), t3 = _mm512_loadu_si512 ((const void *) (table + 192));
  for (int64_t i = 0; i < n; i += 64)
    {
      __mmask64 m = n - i >= 64 ? ~(__mmask64) 0 : (((__mmask64) 1 << (n - i)) - 1);
      __m512i v = _mm512_maskz_loadu_epi8 (m, x + i);
      __m512i lo = _mm512_permutex2var_epi8 (t0, v, t1), hi = _mm512_permutex2var_epi8 (t2, v, t3);
      _mm512_mask_storeu_epi8 (y + i, m, _mm512_mask_blend_epi8 (_mm512_movepi8_mask (v), lo, hi));
    }
}

static gboolean
has_vbmi (void)
{
  static int have = -1;
  if (g_atomic_int_get (&have) < 0)
    {
      __builtin_cpu_init ();
      g_atomic_int_set (&have, _owb_cpu_has_avx512 () && __builtin_cpu_supports ("avx512vbmi"));
    }
  /* OWB_QGEMM_PORTABLE (and the tests' switch) turns every 8-bit vector path off */
  return g_atomic_int_get (&have) && _owb_qgemm_uses_vnni ();
}
#endif

static void
lookup_range (int64_t begin, int64_t end, gpointer data)
{
  const LookupJob *j = data;
#if defined(__x86_64__) && defined(__GNUC__)
  if (has_vbmi ())
    {
      lookup_vbmi (j->x + begin, j->table, j->y + begin, end - begin);
      return;
    }
#endif
  for (int64_t i = begin; i < end; i++)
    j->y[i] = j->table[j->x[i]];
}

static gboolean
compute_qlinear_lookup (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0], *t = ctx->inputs[1];
  OwbTensor *y = ctx->outputs[0];
  if (t->nelems != 256 || !is_int8 (t->dtype) || y->dtype != t->dtype || y->nelems != x->nelems)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "Table must hold 256 uint8 or int8 values of Y's type");
      return FALSE;
    }
  LookupJob j = { x->data, t->data, y->data };
  owb_parallel_for (ctx->pool, x->nelems, 65536, lookup_range, &j);
  return TRUE;
}

/* Merges neighbouring dims that both operands walk alike (each contiguous across them, or each
 * broadcast along both) into one, in place; returns the new rank. Y's NHWC [1, 112, 112, 16]
 * with A and B of its shape becomes one row of 200704, not 12544 rows of 16 whose offsets each
 * cost divisions. */
static int
coalesce_dims (int r, int64_t *dims, int64_t *sa, int64_t *sb)
{
  int n = 0;
  for (int d = 0; d < r; d++)
    {
      if (dims[d] == 1)
        continue; /* adds nothing */
      if (n > 0 && sa[n - 1] == sa[d] * dims[d] && sb[n - 1] == sb[d] * dims[d])
        {
          dims[n - 1] *= dims[d];
          sa[n - 1] = sa[d];
          sb[n - 1] = sb[d];
          continue;
        }
      dims[n] = dims[d], sa[n] = sa[d], sb[n] = sb[d];
      n++;
    }
  if (n == 0)
    {
      dims[0] = 1, sa[0] = sb[0] = 0;
      n = 1;
    }
  /* a long last run in pieces for the threads: [inner / c, c], walked alike */
  int64_t inner = dims[n - 1];
  if (inner > 16384 && n < OWB_MAX_RANK)
    for (int64_t k = 2; k <= 256; k++)
      if (inner % k == 0 && inner / k <= 8192)
        {
          int64_t c = inner / k;
          dims[n - 1] = k, sa[n] = sa[n - 1], sb[n] = sb[n - 1];
          sa[n - 1] *= c, sb[n - 1] *= c, dims[n] = c;
          n++;
          break;
        }
  return n;
}

/* The offsets into A and B of row `row` (all of Y's dims but the last, row-major). */
static inline void
row_offsets (int r, const int64_t *dims, const int64_t *sa, const int64_t *sb, int64_t row, int64_t *oa, int64_t *ob,
             int64_t *idx)
{
  *oa = *ob = 0;
  for (int d = r - 2; d >= 0; d--)
    {
      idx[d] = row % dims[d];
      row /= dims[d];
      *oa += idx[d] * sa[d];
      *ob += idx[d] * sb[d];
    }
}

/* Steps idx (and the offsets) to the next row. */
static inline void
row_next (int r, const int64_t *dims, const int64_t *sa, const int64_t *sb, int64_t *oa, int64_t *ob, int64_t *idx)
{
  for (int d = r - 2; d >= 0; d--)
    {
      *oa += sa[d];
      *ob += sb[d];
      if (++idx[d] < dims[d])
        return;
      *oa -= idx[d] * sa[d];
      *ob -= idx[d] * sb[d];
      idx[d] = 0;
    }
}

/* The bytes of A and B broadcast to Y's shape, walked by rows of Y (all its dims but the last),
 * each a run of the last dim: the two 8-bit binary ops below. */
typedef struct {
  const uint8_t *a, *b;
  uint8_t *y;
  int rank;
  int64_t dims[OWB_MAX_RANK], sa[OWB_MAX_RANK], sb[OWB_MAX_RANK]; /* Y's dims; A's and B's strides (0: broadcast) */
} ByteRows;

/* One row: inner outputs at y from a and b, read with steps ia and ib. */
typedef void (*ByteRowFunc) (gconstpointer job, const uint8_t *a, const uint8_t *b, uint8_t *y, int64_t inner,
                             int64_t ia, int64_t ib);

/* Rows begin..end of w, each handed to row; inlined, so that row is a direct call. */
static inline __attribute__ ((always_inline)) void
byte_rows_walk (const ByteRows *w, int64_t begin, int64_t end, ByteRowFunc row, gconstpointer job)
{
  int r = w->rank;
  int64_t inner = r ? w->dims[r - 1] : 1, ia = r ? w->sa[r - 1] : 0, ib = r ? w->sb[r - 1] : 0;
  int64_t idx[OWB_MAX_RANK], oa, ob;
  row_offsets (r, w->dims, w->sa, w->sb, begin, &oa, &ob, idx);
  for (int64_t i = begin; i < end; i++, row_next (r, w->dims, w->sa, w->sb, &oa, &ob, idx))
    row (job, w->a + oa, w->b + ob, w->y + i * inner, inner, ia, ib);
}

/* ---- QLinearBinaryLookup (ai.onnx.workbench) ---- */

typedef struct {
  ByteRows rows;
  const uint8_t *table;
} BinaryLookupJob;

static void
binary_lookup_row (gconstpointer job, const uint8_t *a, const uint8_t *b, uint8_t *y, int64_t inner, int64_t ia,
                   int64_t ib)
{
  const uint8_t *t = ((const BinaryLookupJob *) job)->table;
  /* the common runs without stride arithmetic: same shapes, and B one value along the row */
  if (ia == 1 && ib == 1)
    for (int64_t k = 0; k < inner; k++)
      y[k] = t[(unsigned) a[k] << 8 | b[k]];
  else if (ia == 1 && ib == 0)
    {
      const uint8_t *tb = t + b[0];
      for (int64_t k = 0; k < inner; k++)
        y[k] = tb[(unsigned) a[k] << 8];
    }
  else
    for (int64_t k = 0; k < inner; k++)
      y[k] = t[(unsigned) a[k * ia] << 8 | b[k * ib]];
}

static void
binary_lookup_rows (int64_t begin, int64_t end, gpointer data)
{
  const BinaryLookupJob *j = data;
  byte_rows_walk (&j->rows, begin, end, binary_lookup_row, j);
}

/* Strides of t (rank tr) read as Y's rank-r shape, 0 along broadcast dims. */
static gboolean
broadcast_strides (const OwbTensor *t, int r, const int64_t *dims, int64_t *st)
{
  int64_t s = 1;
  for (int d = r - 1; d >= 0; d--)
    {
      int td = d - (r - t->rank);
      int64_t n = td >= 0 ? t->dims[td] : 1;
      if (n != 1 && n != dims[d])
        return FALSE;
      st[d] = n == 1 ? 0 : s;
      s *= n;
    }
  return TRUE;
}

/* Lays A and B over Y's shape in w (coalesced) and runs `rows` over Y's rows on the pool; FALSE,
 * with the error set, when A or B do not broadcast to Y. */
static gboolean
byte_rows_run (OwbKernelContext *ctx, const OwbTensor *a, const OwbTensor *b, const OwbTensor *y, ByteRows *w,
               OwbParallelFunc rows, gpointer job, GError **error)
{
  w->rank = y->rank;
  memcpy (w->dims, y->dims, sizeof (int64_t) * y->rank);
  if (!broadcast_strides (a, y->rank, w->dims, w->sa) || !broadcast_strides (b, y->rank, w->dims, w->sb))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "A and B do not broadcast to Y");
      return FALSE;
    }
  if (y->nelems == 0)
    return TRUE;
  w->rank = coalesce_dims (w->rank, w->dims, w->sa, w->sb);
  int64_t inner = w->rank ? w->dims[w->rank - 1] : 1;
  owb_parallel_for (ctx->pool, y->nelems / inner, MAX (1, 16384 / inner), rows, job);
  return TRUE;
}

static gboolean
compute_qlinear_binary_lookup (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *a = ctx->inputs[0], *b = ctx->inputs[1], *t = ctx->inputs[2];
  OwbTensor *y = ctx->outputs[0];
  BinaryLookupJob j = { { a->data, b->data, y->data }, t->data };
  if (t->nelems != 65536 || !is_int8 (t->dtype) || y->dtype != t->dtype || a->rank > y->rank || b->rank > y->rank)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "Table must hold 65536 uint8 or int8 values of Y's type");
      return FALSE;
    }
  return byte_rows_run (ctx, a, b, y, &j.rows, binary_lookup_rows, &j, error);
}

/* ---- QLinearBinary (ai.onnx.workbench) ---- */

/* Exactly the float32 arithmetic of DequantizeLinear, Add/Mul and QuantizeLinear one after the
 * other (cpu-quantize-fast.c and the elementwise rows): a = (float) (qa - za) * sa, the same for b,
 * v = a + b or a b, y = saturate (nearbyint (v / sy) + zy), NaN low; one pass over the bytes
 * instead of four over floats. */
typedef struct {
  ByteRows rows;
  gboolean a_signed, b_signed, y_signed, mul, vector, avx2; /* vector: AVX-512; avx2: AVX2 */
  float sa, sb, sy;
  int32_t za, zb, zy;
  /* A (B) dequantized once, (float) (qa - za) sa per byte of A, where A is small and broadcast (a
   * squeeze-excitation's per-channel scale, read again for every pixel); NULL otherwise */
  const float *af, *bf;
} QBinaryJob;

static inline float
qbinary_one (const QBinaryJob *j, uint8_t qa, uint8_t qb)
{
  int32_t ia = j->a_signed ? (int8_t) qa : qa, ib = j->b_signed ? (int8_t) qb : qb;
  float a = (float) (ia - j->za) * j->sa, b = (float) (ib - j->zb) * j->sb;
  float v = j->mul ? a * b : a + b;
  float lo = j->y_signed ? -128.0f : 0.0f, hi = j->y_signed ? 127.0f : 255.0f;
  float q = nearbyintf (v / j->sy) + (float) j->zy;
  return !(q >= lo) ? lo : (q > hi ? hi : q);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define QB_AVX512 __attribute__ ((target ("avx512f,avx512bw,avx512vl")))
static inline __attribute__ ((always_inline)) QB_AVX512 __m512
qbinary_load (const uint8_t *p, __mmask16 m, gboolean is_signed, __m512i z, __m512 s)
{
  enum { rnd = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }; /* a constant expression: clang wants one */
  __m128i v = _mm_maskz_loadu_epi8 (m, p);
  __m512i w = is_signed ? _mm512_cvtepi8_epi32 (v) : _mm512_cvtepu8_epi32 (v);
  return _mm512_mul_round_ps (_mm512_cvtepi32_ps (_mm512_sub_epi32 (w, z)), s, rnd);
}

/* nrows rows of n outputs (y's rows n apart, a's and b's a_rs and b_rs apart); b_step 0: B is one
 * value along a row. Many rows a call: a squeeze-excitation's Mul has rows of 16 or 32 channels. */
static QB_AVX512 void
qbinary_avx512 (const QBinaryJob *j, const uint8_t *a, int64_t a_rs, const uint8_t *b, int64_t b_rs, int b_step,
                uint8_t *y, int64_t n, int64_t nrows)
{
  enum { rnd = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }; /* a constant expression: clang wants one */
  const __m512 sa = _mm512_set1_ps (j->sa), sb = _mm512_set1_ps (j->sb), sy = _mm512_set1_ps (j->sy);
  const __m512i za = _mm512_set1_epi32 (j->za), zb = _mm512_set1_epi32 (j->zb);
  const __m512 zy = _mm512_set1_ps ((float) j->zy);
  const __m512 lo = _mm512_set1_ps (j->y_signed ? -128.0f : 0.0f), hi = _mm512_set1_ps (j->y_signed ? 127.0f : 255.0f);
  for (int64_t r = 0; r < nrows; r++, a += a_rs, b += b_rs, y += n)
    {
      /* the same products as qbinary_load's, made once */
      const float *af = j->af ? j->af + (a - j->rows.a) : NULL, *bf = j->bf && b_step ? j->bf + (b - j->rows.b) : NULL;
      /* one IEEE product, as the vector lanes compute it */
      const __m512 bconst = _mm512_set1_ps ((float) ((j->b_signed ? (int8_t) b[0] : b[0]) - j->zb) * j->sb);
      for (int64_t i = 0; i < n; i += 16)
        {
          __mmask16 m = n - i >= 16 ? 0xFFFF : (__mmask16) ((1u << (n - i)) - 1);
          __m512 av = af ? _mm512_maskz_loadu_ps (m, af + i) : qbinary_load (a + i, m, j->a_signed, za, sa);
          __m512 bv = bf ? _mm512_maskz_loadu_ps (m, bf + i)
                         : b_step ? qbinary_load (b + i, m, j->b_signed, zb, sb) : bconst;
          __m512 v = j->mul ? _mm512_mul_round_ps (av, bv, rnd) : _mm512_add_round_ps (av, bv, rnd);
          v = _mm512_div_round_ps (v, sy, rnd);
          v = _mm512_add_round_ps (_mm512_roundscale_ps (v, rnd), zy, rnd);
          v = _mm512_min_ps (_mm512_max_ps (v, lo), hi);
          _mm_mask_storeu_epi8 (y + i, m, _mm512_cvtepi32_epi8 (_mm512_cvtps_epi32 (v)));
        }
    }
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#define QB_AVX2 __attribute__ ((target ("avx2")))
static inline __attribute__ ((always_inline)) QB_AVX2 __m256
qbinary_load8 (const uint8_t *p, gboolean is_signed, __m256i z, __m256 s)
{
  __m128i v = _mm_loadl_epi64 ((const __m128i *) p);
  __m256i w = is_signed ? _mm256_cvtepi8_epi32 (v) : _mm256_cvtepu8_epi32 (v);
  return _mm256_mul_ps (_mm256_cvtepi32_ps (_mm256_sub_epi32 (w, z)), s);
}

/* qbinary_avx512 with AVX2, 8 outputs a vector (no FMA in the target: each product and sum rounds
 * alone, as qbinary_one's); a row's last n % 8 outputs by qbinary_one. The job's flags are held in
 * locals and the loop made once per combination of them (qbinary_avx2_rows): y's byte stores may
 * alias the job, which was read again, flag by flag, for every 8 outputs. */
static inline __attribute__ ((always_inline)) QB_AVX2 void
qbinary_avx2_rows (const QBinaryJob *j, const gboolean a_signed, const gboolean b_signed, const gboolean y_signed,
                   const gboolean mul, const uint8_t *a, int64_t a_rs, const uint8_t *b, int64_t b_rs, int b_step,
                   uint8_t *y, int64_t n, int64_t nrows)
{
  const __m256 sa = _mm256_set1_ps (j->sa), sb = _mm256_set1_ps (j->sb), sy = _mm256_set1_ps (j->sy);
  const __m256i za = _mm256_set1_epi32 (j->za), zb = _mm256_set1_epi32 (j->zb);
  const __m256 zy = _mm256_set1_ps ((float) j->zy);
  const __m256 lo = _mm256_set1_ps (y_signed ? -128.0f : 0.0f), hi = _mm256_set1_ps (y_signed ? 127.0f : 255.0f);
  const int64_t n8 = n / 8 * 8;
  const float *const af0 = j->af, *const bf0 = j->bf;
  const uint8_t *const ra = j->rows.a, *const rb = j->rows.b;
  const int32_t zbs = j->zb;
  const float sbs = j->sb;
  for (int64_t r = 0; r < nrows; r++, a += a_rs, b += b_rs, y += n)
    {
      const float *af = af0 ? af0 + (a - ra) : NULL, *bf = bf0 && b_step ? bf0 + (b - rb) : NULL;
      const __m256 bconst = _mm256_set1_ps ((float) ((b_signed ? (int8_t) b[0] : b[0]) - zbs) * sbs);
      for (int64_t i = 0; i < n8; i += 8)
        {
          __m256 av = af ? _mm256_loadu_ps (af + i) : qbinary_load8 (a + i, a_signed, za, sa);
          __m256 bv = bf ? _mm256_loadu_ps (bf + i) : b_step ? qbinary_load8 (b + i, b_signed, zb, sb) : bconst;
          __m256 v = mul ? _mm256_mul_ps (av, bv) : _mm256_add_ps (av, bv);
          v = _mm256_div_ps (v, sy);
          v = _mm256_add_ps (_mm256_round_ps (v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zy);
          v = _mm256_min_ps (_mm256_max_ps (v, lo), hi);
          __m256i q = _mm256_cvtps_epi32 (v);
          /* in range already: the saturating packs only narrow */
          __m128i w = _mm_packs_epi32 (_mm256_castsi256_si128 (q), _mm256_extracti128_si256 (q, 1));
          _mm_storel_epi64 ((__m128i *) (y + i), y_signed ? _mm_packs_epi16 (w, w) : _mm_packus_epi16 (w, w));
        }
      for (int64_t i = n8; i < n; i++)
        {
          float q = qbinary_one (j, a[i], b[b_step ? i : 0]);
          y[i] = y_signed ? (uint8_t) (int8_t) q : (uint8_t) q;
        }
    }
}

static QB_AVX2 void
qbinary_avx2 (const QBinaryJob *j, const uint8_t *a, int64_t a_rs, const uint8_t *b, int64_t b_rs, int b_step,
              uint8_t *y, int64_t n, int64_t nrows)
{
  /* the common unsigned cases as their own loops; any other through the general one */
  if (!j->a_signed && !j->b_signed && !j->y_signed)
    {
      if (j->mul)
        qbinary_avx2_rows (j, FALSE, FALSE, FALSE, TRUE, a, a_rs, b, b_rs, b_step, y, n, nrows);
      else
        qbinary_avx2_rows (j, FALSE, FALSE, FALSE, FALSE, a, a_rs, b, b_rs, b_step, y, n, nrows);
    }
  else
    qbinary_avx2_rows (j, j->a_signed, j->b_signed, j->y_signed, j->mul, a, a_rs, b, b_rs, b_step, y, n, nrows);
}
#endif

static void
qbinary_row (gconstpointer job, const uint8_t *a, const uint8_t *b, uint8_t *y, int64_t inner, int64_t ia, int64_t ib)
{
  const QBinaryJob *j = job;
#if defined(__x86_64__) && defined(__GNUC__)
  if (j->vector && ia == 1 && ib <= 1)
    {
      qbinary_avx512 (j, a, 0, b, 0, (int) ib, y, inner, 1);
      return;
    }
  if (j->avx2 && ia == 1 && ib <= 1)
    {
      qbinary_avx2 (j, a, 0, b, 0, (int) ib, y, inner, 1);
      return;
    }
#endif
  for (int64_t k = 0; k < inner; k++)
    {
      float q = qbinary_one (j, a[k * ia], b[k * ib]);
      y[k] = j->y_signed ? (uint8_t) (int8_t) q : (uint8_t) q;
    }
}

static void
qbinary_rows (int64_t begin, int64_t end, gpointer data)
{
  const QBinaryJob *j = data;
#if defined(__x86_64__) && defined(__GNUC__)
  /* [rows, inner] after coalescing: the rows in one call */
  const ByteRows *w = &j->rows;
  if ((j->vector || j->avx2) && w->rank == 2 && w->sa[1] == 1 && w->sb[1] <= 1)
    {
      (j->vector ? qbinary_avx512 : qbinary_avx2) (j, w->a + begin * w->sa[0], w->sa[0], w->b + begin * w->sb[0],
                                                   w->sb[0], (int) w->sb[1], w->y + begin * w->dims[1], w->dims[1],
                                                   end - begin);
      return;
    }
#endif
  byte_rows_walk (&j->rows, begin, end, qbinary_row, j);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* t's bytes dequantized as qbinary_load does, when t is small and broadcast over y (read again
 * and again); NULL otherwise. */
static float *
small_dequantized (const OwbTensor *t, const OwbTensor *y, gboolean is_signed, int32_t z, float s)
{
  if (t->nelems > 16384 || t->nelems * 8 > y->nelems)
    return NULL;
  float *f = g_new (float, MAX (t->nelems, 1));
  for (int64_t i = 0; i < t->nelems; i++)
    {
      uint8_t q = ((const uint8_t *) t->data)[i];
      f[i] = (float) ((is_signed ? (int8_t) q : q) - z) * s;
    }
  return f;
}
#endif

static gboolean
compute_qlinear_binary (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *a = ctx->inputs[0], *b = ctx->inputs[3];
  OwbTensor *y = ctx->outputs[0];
  static const int params[] = { 1, 2, 4, 5, 6, 7 };
  for (guint i = 0; i < G_N_ELEMENTS (params); i++)
    {
      const OwbTensor *p = ctx->inputs[params[i]];
      gboolean scale = params[i] == 1 || params[i] == 4 || params[i] == 6;
      if (!p || p->nelems != 1 || (scale ? p->dtype != OWB_TYPE_FLOAT : !is_int8 (p->dtype)))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE,
                                "scales must be one float32 value and zero points one 8-bit value (input %d)", params[i]);
          return FALSE;
        }
    }
  if (!is_int8 (a->dtype) || !is_int8 (b->dtype) || !is_int8 (y->dtype) || a->rank > y->rank || b->rank > y->rank)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "A, B and Y must be 8-bit tensors");
      return FALSE;
    }
  QBinaryJob j = { { a->data, b->data, y->data }, a->dtype == OWB_TYPE_INT8, b->dtype == OWB_TYPE_INT8,
                   y->dtype == OWB_TYPE_INT8, strcmp (owb_node_get_string (ctx->node, "op", ""), "Mul") == 0 };
  j.sa = ((const float *) ctx->inputs[1]->data)[0];
  j.sb = ((const float *) ctx->inputs[4]->data)[0];
  j.sy = ((const float *) ctx->inputs[6]->data)[0];
  j.za = (int32_t) owb_tensor_get_double (ctx->inputs[2], 0);
  j.zb = (int32_t) owb_tensor_get_double (ctx->inputs[5], 0);
  j.zy = (int32_t) owb_tensor_get_double (ctx->inputs[7], 0);
  float *af = NULL, *bf = NULL;
#if defined(__x86_64__) && defined(__GNUC__)
  j.vector = _owb_cpu_has_avx512 () && _owb_qgemm_uses_vnni ();
  j.avx2 = !j.vector && _owb_qgemm_uses_avx2 ();
  if (j.vector || j.avx2)
    {
      j.af = af = small_dequantized (a, y, j.a_signed, j.za, j.sa);
      j.bf = bf = small_dequantized (b, y, j.b_signed, j.zb, j.sb);
    }
#endif
  gboolean ok = byte_rows_run (ctx, a, b, y, &j.rows, qbinary_rows, &j, error);
  g_free (af);
  g_free (bf);
  return ok;
}

/* ---- QLinearGlobalAveragePool (ai.onnx.workbench) ---- */

/* Each channel's bytes summed as integers (exact: n 255 < 2^31 for the n < 2^23 spatial positions
 * the kernel takes), then one double product and division rounded half to even, instead of
 * DequantizeLinear's float tensor, a float mean and QuantizeLinear. */
typedef struct {
  const uint8_t *x;
  uint8_t *y;
  gboolean x_signed, y_signed, last, vector;
  int64_t C, HW, cblock, ncb;
  int32_t zx, zy;
  double xs, ys;
} QGapJob;

#define QGAP_CBLOCK 256

static inline uint8_t
qgap_one (const QGapJob *j, int64_t sum)
{
  double lo = j->y_signed ? -128 : 0, hi = j->y_signed ? 127 : 255;
  double v = nearbyint ((double) (sum - j->HW * j->zx) * j->xs / ((double) j->HW * j->ys)) + j->zy;
  v = v < lo ? lo : (v > hi ? hi : v);
  return j->y_signed ? (uint8_t) (int8_t) v : (uint8_t) v;
}


#if defined(__x86_64__) && defined(__GNUC__)
/* 64 byte lanes summed over `count` rows `stride` bytes apart (the first `lanes` lanes of each),
 * into sum[64] (int32, added to): 16-bit sums for up to 256 rows at a time (256 x 255 < 2^16),
 * then widened. Bytes are read as unsigned (int8 data XORed with 0x80, the 128s taken off later). */
static QB_AVX512 void
qgap_lanes_avx512 (const uint8_t *x, int64_t count, int64_t stride, int lanes, gboolean flip, int32_t *sum)
{
  const __mmask64 m = lanes >= 64 ? ~(__mmask64) 0 : (((__mmask64) 1 << lanes) - 1);
  const __m512i f = _mm512_set1_epi8 (flip ? (char) 0x80 : 0);
  __m512i s32[4];
  for (int v = 0; v < 4; v++)
    s32[v] = _mm512_loadu_si512 ((const void *) (sum + 16 * v));
  for (int64_t r0 = 0; r0 < count; r0 += 256)
    {
      int64_t rn = MIN (256, count - r0);
      __m512i lo = _mm512_setzero_si512 (), hi = _mm512_setzero_si512 ();
      const uint8_t *p = x + r0 * stride;
      for (int64_t r = 0; r < rn; r++, p += stride)
        {
          __m512i b = _mm512_xor_si512 (_mm512_maskz_loadu_epi8 (m, p), f);
          b = _mm512_maskz_mov_epi8 (m, b);
          lo = _mm512_add_epi16 (lo, _mm512_cvtepu8_epi16 (_mm512_castsi512_si256 (b)));
          hi = _mm512_add_epi16 (hi, _mm512_cvtepu8_epi16 (_mm512_extracti64x4_epi64 (b, 1)));
        }
      s32[0] = _mm512_add_epi32 (s32[0], _mm512_cvtepu16_epi32 (_mm512_castsi512_si256 (lo)));
      s32[1] = _mm512_add_epi32 (s32[1], _mm512_cvtepu16_epi32 (_mm512_extracti64x4_epi64 (lo, 1)));
      s32[2] = _mm512_add_epi32 (s32[2], _mm512_cvtepu16_epi32 (_mm512_castsi512_si256 (hi)));
      s32[3] = _mm512_add_epi32 (s32[3], _mm512_cvtepu16_epi32 (_mm512_extracti64x4_epi64 (hi, 1)));
    }
  for (int v = 0; v < 4; v++)
    _mm512_storeu_si512 ((void *) (sum + 16 * v), s32[v]);
}
#endif

/* unit u: channels-first, channel u of the batch; channels-last, block u % ncb of image u / ncb */
static void
qgap_units (int64_t begin, int64_t end, gpointer data)
{
  const QGapJob *j = data;
  int32_t acc[QGAP_CBLOCK];
  for (int64_t u = begin; u < end; u++)
    {
      if (!j->last)
        {
          const uint8_t *x = j->x + u * j->HW;
          int32_t sum = 0;
          if (j->x_signed)
            for (int64_t i = 0; i < j->HW; i++)
              sum += (int8_t) x[i];
          else
            for (int64_t i = 0; i < j->HW; i++)
              sum += x[i];
          j->y[u] = qgap_one (j, sum);
          continue;
        }
      int64_t n = u / j->ncb, c0 = u % j->ncb * j->cblock, cn = MIN (j->cblock, j->C - c0);
      const uint8_t *x = j->x + n * j->HW * j->C + c0;
      memset (acc, 0, sizeof acc);
#if defined(__x86_64__) && defined(__GNUC__)
      if (j->vector)
        {
          int64_t bias = j->x_signed ? 128 * j->HW : 0;
          if (64 % j->C == 0)
            {
              /* C divides 64: the image's bytes as rows of 64, lane l holding channel l % C (the
               * last row partial) */
              int64_t total = j->HW * j->C, full = total / 64;
              qgap_lanes_avx512 (x, full, 64, 64, j->x_signed, acc);
              if (total % 64)
                qgap_lanes_avx512 (x + full * 64, 1, 64, (int) (total % 64), j->x_signed, acc);
              for (int64_t c = 0; c < j->C; c++)
                {
                  int64_t sum = 0;
                  for (int64_t l = c; l < 64; l += j->C)
                    sum += acc[l];
                  j->y[n * j->C + c] = qgap_one (j, sum - bias);
                }
              continue;
            }
          qgap_lanes_avx512 (x, j->HW, j->C, (int) cn, j->x_signed, acc);
          for (int64_t c = 0; c < cn; c++)
            j->y[n * j->C + c0 + c] = qgap_one (j, acc[c] - bias);
          continue;
        }
#endif
      for (int64_t p = 0; p < j->HW; p++, x += j->C)
        {
          if (j->x_signed)
            for (int64_t c = 0; c < cn; c++)
              acc[c] += (int8_t) x[c];
          else
            for (int64_t c = 0; c < cn; c++)
              acc[c] += x[c];
        }
      for (int64_t c = 0; c < cn; c++)
        j->y[n * j->C + c0 + c] = qgap_one (j, acc[c]);
    }
}

static gboolean
compute_qlinear_global_average_pool (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = ctx->outputs[0];
  for (int i = 1; i < 5; i++)
    {
      const OwbTensor *p = ctx->inputs[i];
      gboolean scale = i == 1 || i == 3;
      if (!p || p->nelems != 1 || (scale ? p->dtype != OWB_TYPE_FLOAT : !is_int8 (p->dtype)))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE,
                                "scales must be one float32 value and zero points one 8-bit value (input %d)", i);
          return FALSE;
        }
    }
  if (!is_int8 (x->dtype) || !is_int8 (y->dtype) || x->rank < 3)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "X and Y must be 8-bit tensors, X of rank 3 or more");
      return FALSE;
    }
  gboolean last = owb_node_get_int (ctx->node, "channels_last", 0) != 0;
  QGapJob j = { x->data, y->data, x->dtype == OWB_TYPE_INT8, y->dtype == OWB_TYPE_INT8, last };
  j.C = last ? x->dims[x->rank - 1] : x->dims[1];
  j.HW = 1;
  for (int i = last ? 1 : 2; i < (last ? x->rank - 1 : x->rank); i++)
    j.HW *= x->dims[i];
  if (j.HW >= (1 << 23))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "X has %" G_GINT64_FORMAT " positions a channel; at most 8388607 are summed exactly", j.HW);
      return FALSE;
    }
  if (y->nelems == 0)
    return TRUE;
  if (j.HW == 0)
    {
      /* the mean of nothing: as GlobalAveragePool's NaN, which QuantizeLinear saturates low */
      memset (y->data, j.y_signed ? 0x80 : 0, (size_t) y->nelems);
      return TRUE;
    }
  j.xs = ((const float *) ctx->inputs[1]->data)[0];
  j.ys = ((const float *) ctx->inputs[3]->data)[0];
  j.zx = (int32_t) owb_tensor_get_double (ctx->inputs[2], 0);
  j.zy = (int32_t) owb_tensor_get_double (ctx->inputs[4], 0);
  int64_t N = x->dims[0];
#if defined(__x86_64__) && defined(__GNUC__)
  j.vector = _owb_cpu_has_avx512 () && _owb_qgemm_uses_vnni ();
#endif
  if (last)
    {
      /* the vector path: 64 channels a unit (or the whole image where C divides 64) */
      j.cblock = !j.vector ? QGAP_CBLOCK : (64 % j.C == 0 ? j.C : 64);
      j.ncb = (j.C + j.cblock - 1) / j.cblock;
      owb_parallel_for (ctx->pool, N * j.ncb, 1, qgap_units, &j);
    }
  else
    owb_parallel_for (ctx->pool, N * j.C, MAX (1, 16384 / j.HW), qgap_units, &j);
  return TRUE;
}

#define REALS (OWB_TYPE_BIT (OWB_TYPE_FLOAT) | OWB_TYPE_BIT (OWB_TYPE_FLOAT16) | OWB_TYPE_BIT (OWB_TYPE_BFLOAT16))
#define INT8S (OWB_TYPE_BIT (OWB_TYPE_UINT8) | OWB_TYPE_BIT (OWB_TYPE_INT8))
#define FLOAT8S                                                                                              \
  (OWB_TYPE_BIT (OWB_TYPE_FLOAT8E4M3FN) | OWB_TYPE_BIT (OWB_TYPE_FLOAT8E4M3FNUZ) | OWB_TYPE_BIT (OWB_TYPE_FLOAT8E5M2) \
   | OWB_TYPE_BIT (OWB_TYPE_FLOAT8E5M2FNUZ))
#define QUANTIZED                                                                                            \
  (INT8S | FLOAT8S | OWB_TYPE_BIT (OWB_TYPE_UINT16) | OWB_TYPE_BIT (OWB_TYPE_INT16) | OWB_TYPE_BIT (OWB_TYPE_UINT4)   \
   | OWB_TYPE_BIT (OWB_TYPE_INT4) | OWB_TYPE_BIT (OWB_TYPE_UINT2) | OWB_TYPE_BIT (OWB_TYPE_INT2)                  \
   | OWB_TYPE_BIT (OWB_TYPE_FLOAT4E2M1) | OWB_TYPE_BIT (OWB_TYPE_FLOAT6E2M3) | OWB_TYPE_BIT (OWB_TYPE_FLOAT6E3M2))

/* float16/bfloat16 scales and data are handled natively: the spec rounds intermediate results to
 * those types, which a float32 run would not. */
const OwbKernelDef _owb_cpu_kernels_quant[] = {
  { "QuantizeLinear", "", 10, 0, REALS | OWB_TYPE_BIT (OWB_TYPE_INT32), 0, NULL, NULL, compute_quantize_linear },
  { "DequantizeLinear", "", 10, 0, QUANTIZED | OWB_TYPE_BIT (OWB_TYPE_INT32), 0, NULL, NULL, compute_dequantize_linear },
  { "DynamicQuantizeLinear", "", 11, 0, OWB_TYPE_BIT (OWB_TYPE_FLOAT), 0, NULL, NULL, compute_dynamic_quantize_linear },
  { "QLinearMatMul", "", 10, 0, INT8S | FLOAT8S, 0, _owb_cpu_qgemm_matmul_prepare, _owb_cpu_qgemm_matmul_free,
    compute_qlinear_matmul },
  { "QLinearConv", "", 10, 0, INT8S, 0, _owb_cpu_qconv_prepare, _owb_cpu_qconv_free, compute_qlinear_conv },
  { "QLinearLookup", OWB_DOMAIN, 1, 0, INT8S, 0, NULL, NULL, compute_qlinear_lookup },
  { "QLinearBinaryLookup", OWB_DOMAIN, 1, 0, INT8S, 0, NULL, NULL, compute_qlinear_binary_lookup },
  { "QLinearBinary", OWB_DOMAIN, 1, 0, INT8S, 0, NULL, NULL, compute_qlinear_binary },
  { "QLinearGlobalAveragePool", OWB_DOMAIN, 1, 0, INT8S, 0, NULL, NULL, compute_qlinear_global_average_pool },
  { "DynamicQuantizeMatMul", OWB_DOMAIN, 1, 0, OWB_TYPE_BIT (OWB_TYPE_FLOAT), 0, _owb_cpu_qgemm_matmul_prepare,
    _owb_cpu_qgemm_matmul_free, _owb_cpu_dynamic_quantize_matmul },
  { NULL }
};
