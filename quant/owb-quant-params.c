/* owb-quant-params.c: scale and zero-point arithmetic, and quantizing weights and biases. */
#include "owb-quant-private.h"

#include <math.h>

gboolean
_owb_quant_type_range (OwbDataType type, gboolean symmetric, int *qmin, int *qmax)
{
  switch (type)
    {
    case OWB_TYPE_UINT8: *qmin = 0, *qmax = 255; return TRUE;
    case OWB_TYPE_INT8: *qmin = symmetric ? -127 : -128, *qmax = 127; return TRUE;
    case OWB_TYPE_UINT16: *qmin = 0, *qmax = 65535; return TRUE;
    case OWB_TYPE_INT16: *qmin = symmetric ? -32767 : -32768, *qmax = 32767; return TRUE;
    default: return FALSE;
    }
}

void
_owb_quant_compute_params (double lo, double hi, OwbDataType type, gboolean symmetric, float *scale, int *zero_point)
{
  int qmin, qmax;
  if (!_owb_quant_type_range (type, symmetric, &qmin, &qmax))
    g_assert_not_reached ();
  lo = MIN (lo, 0.0);
  hi = MAX (hi, 0.0);
  if (symmetric)
    {
      double absmax = MAX (-lo, hi);
      gboolean is_signed = qmin < 0;
      /* Unsigned symmetric: the middle is the zero point, half the levels on each side. */
      int half = is_signed ? qmax : (qmax - qmin) / 2;
      *zero_point = is_signed ? 0 : (qmax - qmin + 1) / 2;
      *scale = absmax > 0 ? (float) (absmax / half) : 1.0f;
      return;
    }
  if (hi - lo <= 0)
    {
      *scale = 1.0f;
      *zero_point = qmin < 0 ? 0 : qmin;
      return;
    }
  double s = (hi - lo) / (qmax - qmin);
  double zp = nearbyint (qmin - lo / s);
  *scale = (float) s;
  *zero_point = (int) CLAMP (zp, qmin, qmax);
}

static gboolean
is_wide (OwbDataType t)
{
  return t == OWB_TYPE_UINT16 || t == OWB_TYPE_INT16;
}

int64_t
_owb_quant_required_opset (const OwbQuantOptions *options)
{
  gboolean wide = is_wide (options->activation_type);
  if (options->overrides)
    {
      GHashTableIter it;
      gpointer value;
      g_hash_table_iter_init (&it, options->overrides);
      while (g_hash_table_iter_next (&it, NULL, &value))
        wide |= is_wide (((OwbQuantOverride *) value)->type);
    }
  return wide ? 21 : options->per_channel ? 13 : 10;
}

OwbTensor *
_owb_quant_scalar (OwbDataType type, int v)
{
  OwbTensor *t = owb_tensor_new (type, 0, NULL, NULL);
  owb_tensor_set_double (t, 0, v);
  return t;
}

gboolean
_owb_quant_is_float_tensor (const OwbValueType *type)
{
  return type && type->kind == OWB_VALUE_TENSOR && type->dtype == OWB_TYPE_FLOAT;
}

static int
quantize_one (float x, float scale, int zp, int qmin, int qmax)
{
  double q = nearbyint (x / scale) + zp;
  /* A NaN weight has no integer (converting NaN is undefined in C): it stores as the zero point */
  if (isnan (q))
    return CLAMP (zp, qmin, qmax);
  return (int) CLAMP (q, qmin, qmax);
}

gboolean
_owb_quant_quantize_weight (const OwbTensor *w, int axis, OwbDataType type, gboolean symmetric, OwbTensor **q,
                            OwbTensor **scale, OwbTensor **zero_point, GError **error)
{
  g_return_val_if_fail (w->dtype == OWB_TYPE_FLOAT && w->kind == OWB_VALUE_TENSOR, FALSE);
  int qmin, qmax;
  if (!_owb_quant_type_range (type, symmetric, &qmin, &qmax))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "weights cannot be quantized to %s",
                   owb_data_type_name (type));
      return FALSE;
    }
  if (axis >= w->rank)
    axis = -1;
  int64_t channels = axis < 0 ? 1 : w->dims[axis];
  int64_t inner = 1;
  for (int d = axis + 1; axis >= 0 && d < w->rank; d++)
    inner *= w->dims[d];
  g_autoptr (OwbTensor) qt = owb_tensor_new (type, w->rank, w->dims, error);
  if (qt == NULL)
    return FALSE;
  int64_t sdims[1] = { channels };
  g_autoptr (OwbTensor) st = owb_tensor_new (OWB_TYPE_FLOAT, axis < 0 ? 0 : 1, sdims, error);
  g_autoptr (OwbTensor) zt = owb_tensor_new (type, axis < 0 ? 0 : 1, sdims, error);
  if (st == NULL || zt == NULL)
    return FALSE;
  const float *x = w->data;
  g_autofree double *lo = g_new (double, channels);
  g_autofree double *hi = g_new (double, channels);
  for (int64_t c = 0; c < channels; c++)
    lo[c] = 0, hi[c] = 0;
  for (int64_t i = 0; i < w->nelems; i++)
    {
      int64_t c = axis < 0 ? 0 : (i / inner) % channels;
      if (isfinite (x[i]))
        {
          lo[c] = MIN (lo[c], x[i]);
          hi[c] = MAX (hi[c], x[i]);
        }
    }
  g_autofree float *s = g_new (float, channels);
  g_autofree int *z = g_new (int, channels);
  for (int64_t c = 0; c < channels; c++)
    {
      _owb_quant_compute_params (lo[c], hi[c], type, symmetric, &s[c], &z[c]);
      ((float *) st->data)[c] = s[c];
      owb_tensor_set_double (zt, c, z[c]);
    }
  for (int64_t i = 0; i < w->nelems; i++)
    {
      int64_t c = axis < 0 ? 0 : (i / inner) % channels;
      owb_tensor_set_double (qt, i, quantize_one (x[i], s[c], z[c], qmin, qmax));
    }
  *q = g_steal_pointer (&qt);
  *scale = g_steal_pointer (&st);
  *zero_point = g_steal_pointer (&zt);
  return TRUE;
}

gboolean
_owb_quant_quantize_bias (const OwbTensor *bias, float input_scale, const OwbTensor *weight_scale, OwbTensor **q,
                          OwbTensor **scale, OwbTensor **zero_point, GError **error)
{
  g_return_val_if_fail (bias->dtype == OWB_TYPE_FLOAT && bias->rank == 1, FALSE);
  int64_t n = bias->dims[0];
  gboolean per_channel = weight_scale->nelems == n && n > 1;
  g_autoptr (OwbTensor) qt = owb_tensor_new (OWB_TYPE_INT32, 1, bias->dims, error);
  int64_t sdims[1] = { n };
  g_autoptr (OwbTensor) st = owb_tensor_new (OWB_TYPE_FLOAT, per_channel ? 1 : 0, sdims, error);
  g_autoptr (OwbTensor) zt = owb_tensor_new (OWB_TYPE_INT32, per_channel ? 1 : 0, sdims, error);
  if (qt == NULL || st == NULL || zt == NULL)
    return FALSE;
  const float *b = bias->data;
  const float *ws = weight_scale->data;
  for (int64_t c = 0; c < n; c++)
    {
      float s = input_scale * ws[per_channel ? c : 0];
      if (!(s > 0) || !isfinite (s))
        s = 1.0f;
      if (per_channel || c == 0)
        ((float *) st->data)[per_channel ? c : 0] = s;
      float sc = ((float *) st->data)[per_channel ? c : 0];
      double v = nearbyint (b[c] / sc);
      ((int32_t *) qt->data)[c] = isnan (v) ? 0 : (int32_t) CLAMP (v, -2147483647.0, 2147483647.0);
    }
  *q = g_steal_pointer (&qt);
  *scale = g_steal_pointer (&st);
  *zero_point = g_steal_pointer (&zt);
  return TRUE;
}
