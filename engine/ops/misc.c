/* misc.c: schemas and shape inference of the misc op family: losses, CumProd, Unique, Compress,
 * ReverseSequence, EyeLike, random generators, BitCast, Det, MaxUnpool, CenterCropPad, Col2Im. */
#include "owb-ops-private.h"

#include <owb/owb-error.h>

#include <math.h>
#include <string.h>

/* ---- helpers ---- */

static const OwbTensor *
in_value (OwbInferContext *ctx, int i)
{
  owb_infer_note_value_read (ctx, i);
  if (i >= ctx->n_inputs || !ctx->input_values || !ctx->inputs[i])
    return NULL;
  return ctx->input_values[i];
}

static const OwbValueType *
in_type (OwbInferContext *ctx, int i)
{
  return i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}

/* Numeric or bool: what EyeLike and Bernoulli may produce. */
static gboolean
is_plain_type (OwbDataType t)
{
  return _owb_data_type_is_float (t) || t == OWB_TYPE_BOOL || t == OWB_TYPE_INT8 || t == OWB_TYPE_INT16 || t == OWB_TYPE_INT32
         || t == OWB_TYPE_INT64 || t == OWB_TYPE_UINT8 || t == OWB_TYPE_UINT16 || t == OWB_TYPE_UINT32
         || t == OWB_TYPE_UINT64;
}

static gboolean
is_index_type (OwbDataType t)
{
  return t == OWB_TYPE_INT32 || t == OWB_TYPE_INT64;
}

static gboolean
is_int64 (OwbDataType t)
{
  return t == OWB_TYPE_INT64;
}

static gboolean
is_bool (OwbDataType t)
{
  return t == OWB_TYPE_BOOL;
}

static gboolean
not_string (OwbDataType t)
{
  return t != OWB_TYPE_STRING;
}

static gboolean
check_rank_of (OwbInferContext *ctx, int i, int rank, GError **error)
{
  const OwbValueType *t = in_type (ctx, i);
  if (!t || t->rank < 0 || t->rank == rank)
    return TRUE;
  owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %d must have rank %d, not %d", i, rank, t->rank);
  return FALSE;
}

static OwbDim
prefer_known (OwbDim a, OwbDim b)
{
  if (owb_dim_is_known (a) || a.param)
    return a;
  return b;
}

/* A dtype attribute: *out keeps its value when absent. */
static gboolean
get_dtype_attr (OwbInferContext *ctx, const char *name, gboolean (*ok) (OwbDataType), OwbDataType *out,
                GError **error)
{
  const OwbAttribute *a = owb_node_get_attribute (ctx->node, name);
  if (!a)
    return TRUE;
  if (a->type != OWB_ATTR_INT || !owb_data_type_is_valid ((int) a->i) || !ok ((OwbDataType) a->i))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute %s=%" G_GINT64_FORMAT " is not an allowed type",
                           name, a->type == OWB_ATTR_INT ? a->i : (int64_t) -1);
      return FALSE;
    }
  *out = (OwbDataType) a->i;
  return TRUE;
}

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ---- */

static gboolean
infer_loss (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0], *t = ctx->inputs[1], *w = in_type (ctx, 2);
  const char *reduction = owb_node_get_string (ctx->node, "reduction", "mean");
  if (strcmp (reduction, "none") != 0 && strcmp (reduction, "sum") != 0 && strcmp (reduction, "mean") != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "reduction '%s' is not none, sum or mean", reduction);
      return FALSE;
    }
  if (!_owb_infer_check_input_type (ctx, 0, _owb_data_type_is_float, "a float type", error)
      || !_owb_infer_check_input_type (ctx, 1, is_index_type, "int32 or int64", error))
    return FALSE;
  if (w && w->dtype != OWB_TYPE_UNDEFINED && x->dtype != OWB_TYPE_UNDEFINED && w->dtype != x->dtype)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "weights are %s but the input is %s",
                           owb_data_type_name (w->dtype), owb_data_type_name (x->dtype));
      return FALSE;
    }
  if (x->rank >= 0 && x->rank < 2)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have rank >= 2 (N, C, ...), not %d", x->rank);
      return FALSE;
    }
  if (x->rank >= 0 && t->rank >= 0 && t->rank != x->rank - 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "target must have rank %d, not %d", x->rank - 1, t->rank);
      return FALSE;
    }
  if (!check_rank_of (ctx, 2, 1, error))
    return FALSE;
  if (x->rank >= 0 && t->rank >= 0)
    for (int i = 0; i < t->rank; i++)
      if (!_owb_infer_check_same_dim (ctx, x->dims[i == 0 ? 0 : i + 1], t->dims[i],
                                      "input and target dimensions", error))
        return FALSE;
  if (x->rank >= 0 && w && w->rank == 1 && !_owb_infer_check_same_dim (ctx, x->dims[1], w->dims[0],
                                                                       "classes and weights", error))
    return FALSE;

  OwbValueType *out = &ctx->outputs[0];
  if (strcmp (reduction, "none") == 0)
    {
      int rank = t->rank >= 0 ? t->rank : (x->rank >= 0 ? x->rank - 1 : -1);
      _owb_infer_set_tensor (out, x->dtype, rank);
      for (int i = 0; i < rank; i++)
        {
          OwbDim from_x = x->rank >= 0 ? x->dims[i == 0 ? 0 : i + 1] : OWB_DIM_UNKNOWN;
          out->dims[i] = t->rank >= 0 ? prefer_known (t->dims[i], from_x) : from_x;
        }
    }
  else
    _owb_infer_set_tensor (out, x->dtype, 0);
  if (ctx->n_outputs > 1)
    owb_infer_copy (ctx, 1, 0);
  return TRUE;
}

/* ---- CumProd ---- */

static gboolean
is_cumprod_type (OwbDataType t)
{
  return _owb_data_type_is_float (t) || t == OWB_TYPE_INT32 || t == OWB_TYPE_INT64 || t == OWB_TYPE_UINT32
         || t == OWB_TYPE_UINT64;
}

static gboolean
infer_cumprod (OwbInferContext *ctx, GError **error)
{
  if (!_owb_infer_check_input_type (ctx, 0, is_cumprod_type, "a float or 32/64-bit integer type", error)
      || !_owb_infer_check_input_type (ctx, 1, is_index_type, "int32 or int64", error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0], *axis = ctx->inputs[1];
  if (axis->rank > 1 || (axis->rank == 1 && owb_dim_is_known (axis->dims[0]) && axis->dims[0].value != 1))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "axis must be a scalar");
      return FALSE;
    }
  const OwbTensor *v = in_value (ctx, 1);
  if (v && x->rank >= 0)
    {
      int a;
      if (v->nelems != 1)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "axis must be a scalar");
          return FALSE;
        }
      if (!owb_infer_axis (ctx, owb_tensor_get_int64 (v, 0), MAX (x->rank, 1), &a, error))
        return FALSE;
    }
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

/* ---- Unique ---- */

static gboolean
infer_unique (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  const OwbAttribute *axis_attr = owb_node_get_attribute (ctx->node, "axis");
  OwbDim numel = _owb_infer_element_count (x);
  OwbValueType *y = &ctx->outputs[0];
  OwbDim inverse_len = numel;
  if (axis_attr)
    {
      if (axis_attr->type != OWB_ATTR_INT)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "axis must be an int");
          return FALSE;
        }
      if (x->rank >= 0)
        {
          int a;
          if (x->rank == 0)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "a scalar has no axis %" G_GINT64_FORMAT, axis_attr->i);
              return FALSE;
            }
          if (!owb_infer_axis (ctx, axis_attr->i, x->rank, &a, error))
            return FALSE;
          *y = *x;
          y->dims[a] = OWB_DIM_UNKNOWN;
          inverse_len = x->dims[a];
        }
      else
        {
          _owb_infer_set_tensor (y, x->dtype, -1);
          inverse_len = OWB_DIM_UNKNOWN;
        }
    }
  else
    _owb_infer_set_tensor (y, x->dtype, 1);
  for (int o = 1; o < ctx->n_outputs; o++)
    _owb_infer_set_tensor (&ctx->outputs[o], OWB_TYPE_INT64, 1);
  if (ctx->n_outputs > 2)
    ctx->outputs[2].dims[0] = inverse_len;
  return TRUE;
}

/* ---- Compress ---- */

static gboolean
infer_compress (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0], *cond = ctx->inputs[1];
  if (!_owb_infer_check_input_type (ctx, 1, is_bool, "bool", error) || !check_rank_of (ctx, 1, 1, error))
    return FALSE;
  const OwbAttribute *axis_attr = owb_node_get_attribute (ctx->node, "axis");
  OwbValueType *out = &ctx->outputs[0];
  int a = -1;
  OwbDim len = OWB_DIM_UNKNOWN;
  if (axis_attr)
    {
      if (axis_attr->type != OWB_ATTR_INT)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "axis must be an int");
          return FALSE;
        }
      if (x->rank < 0)
        {
          _owb_infer_set_tensor (out, x->dtype, -1);
          return TRUE;
        }
      /* Axis -1 is not valid before opset 11, but accepting it costs nothing. */
      if (x->rank == 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "a scalar has no axis to compress");
          return FALSE;
        }
      if (!owb_infer_axis (ctx, axis_attr->i, x->rank, &a, error))
        return FALSE;
      *out = *x;
      len = x->dims[a];
    }
  else
    {
      _owb_infer_set_tensor (out, x->dtype, 1);
      if (x->rank >= 0)
        {
          int64_t n = 1;
          for (int i = 0; i < x->rank && n >= 0; i++)
            n = owb_dim_is_known (x->dims[i]) && (x->dims[i].value == 0 || n <= G_MAXINT64 / x->dims[i].value)
                  ? n * x->dims[i].value
                  : -1;
          if (n >= 0)
            len = OWB_DIM_VALUE (n);
        }
    }
  OwbDim count = OWB_DIM_UNKNOWN;
  const OwbTensor *c = in_value (ctx, 1);
  if (c && c->dtype == OWB_TYPE_BOOL)
    {
      const uint8_t *b = c->data;
      int64_t k = 0;
      for (int64_t i = 0; i < c->nelems; i++)
        {
          if (!b[i])
            continue;
          if (owb_dim_is_known (len) && i >= len.value)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                                   "condition is true at %" G_GINT64_FORMAT ", past the %" G_GINT64_FORMAT
                                   " entries it selects from", i, len.value);
              return FALSE;
            }
          k++;
        }
      count = OWB_DIM_VALUE (k);
    }
  else if (cond->rank == 1 && owb_dim_is_known (cond->dims[0]) && cond->dims[0].value == 0)
    count = OWB_DIM_VALUE (0);
  out->dims[a < 0 ? 0 : a] = count;
  return TRUE;
}

/* ---- ReverseSequence ---- */

static gboolean
infer_reverse_sequence (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0], *lens = ctx->inputs[1];
  int64_t b = owb_node_get_int (ctx->node, "batch_axis", 1), t = owb_node_get_int (ctx->node, "time_axis", 0);
  if ((b != 0 && b != 1) || (t != 0 && t != 1) || b == t)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "batch_axis %" G_GINT64_FORMAT " and time_axis %" G_GINT64_FORMAT " must be 0 and 1", b, t);
      return FALSE;
    }
  if (!_owb_infer_check_input_type (ctx, 1, is_index_type, "int64", error) || !check_rank_of (ctx, 1, 1, error))
    return FALSE;
  if (x->rank >= 0 && x->rank < 2)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have rank >= 2, not %d", x->rank);
      return FALSE;
    }
  if (x->rank >= 0 && lens->rank == 1 && !_owb_infer_check_same_dim (ctx, x->dims[b], lens->dims[0],
                                                                     "batch and sequence_lens", error))
    return FALSE;
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

/* ---- EyeLike ---- */

static gboolean
infer_eye_like (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  OwbDataType dtype = x->dtype;
  if (!get_dtype_attr (ctx, "dtype", is_plain_type, &dtype, error))
    return FALSE;
  if (dtype != OWB_TYPE_UNDEFINED && !is_plain_type (dtype))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "cannot make an identity of type %s", owb_data_type_name (dtype));
      return FALSE;
    }
  if (!check_rank_of (ctx, 0, 2, error))
    return FALSE;
  ctx->outputs[0] = *x;
  ctx->outputs[0].dtype = dtype;
  if (x->rank < 0)
    _owb_infer_set_tensor (&ctx->outputs[0], dtype, 2);
  return TRUE;
}

/* ---- random generators ---- */

static gboolean
check_seed (OwbInferContext *ctx, GError **error)
{
  const OwbAttribute *seed = owb_node_get_attribute (ctx->node, "seed");
  if (seed && (seed->type != OWB_ATTR_FLOAT || !isfinite (seed->f)))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "seed must be a finite float");
      return FALSE;
    }
  return TRUE;
}

static gboolean
infer_random (OwbInferContext *ctx, GError **error)
{
  OwbDataType dtype = OWB_TYPE_FLOAT;
  if (!check_seed (ctx, error) || !get_dtype_attr (ctx, "dtype", _owb_data_type_is_float, &dtype, error))
    return FALSE;
  int n;
  const int64_t *shape = owb_node_get_ints (ctx->node, "shape", &n);
  if (!owb_node_get_attribute (ctx->node, "shape") || n > OWB_MAX_RANK)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "needs a shape attribute of at most %d dims",
                           OWB_MAX_RANK);
      return FALSE;
    }
  _owb_infer_set_tensor (&ctx->outputs[0], dtype, n);
  for (int i = 0; i < n; i++)
    {
      if (shape[i] < 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "shape[%d] = %" G_GINT64_FORMAT " is negative", i,
                               shape[i]);
          return FALSE;
        }
      ctx->outputs[0].dims[i] = OWB_DIM_VALUE (shape[i]);
    }
  return TRUE;
}

/* RandomUniformLike, RandomNormalLike: the input's shape; dtype from the attribute or the input. */
static gboolean
infer_random_like (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  OwbDataType dtype = x->dtype;
  if (!check_seed (ctx, error) || !get_dtype_attr (ctx, "dtype", _owb_data_type_is_float, &dtype, error))
    return FALSE;
  if (dtype != OWB_TYPE_UNDEFINED && !_owb_data_type_is_float (dtype))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input is %s: give a float dtype attribute",
                           owb_data_type_name (dtype));
      return FALSE;
    }
  ctx->outputs[0] = *x;
  ctx->outputs[0].dtype = dtype;
  return TRUE;
}

static gboolean
infer_bernoulli (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  OwbDataType dtype = x->dtype;
  if (!check_seed (ctx, error) || !_owb_infer_check_input_type (ctx, 0, _owb_data_type_is_float, "a float type", error)
      || !get_dtype_attr (ctx, "dtype", is_plain_type, &dtype, error))
    return FALSE;
  ctx->outputs[0] = *x;
  ctx->outputs[0].dtype = dtype;
  return TRUE;
}

static gboolean
is_int32_or_64 (OwbDataType t)
{
  return is_index_type (t);
}

static gboolean
infer_multinomial (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  OwbDataType dtype = OWB_TYPE_INT32;
  if (!check_seed (ctx, error) || !_owb_infer_check_input_type (ctx, 0, _owb_data_type_is_float, "a float type", error)
      || !get_dtype_attr (ctx, "dtype", is_int32_or_64, &dtype, error) || !check_rank_of (ctx, 0, 2, error))
    return FALSE;
  int64_t samples = owb_node_get_int (ctx->node, "sample_size", 1);
  if (samples < 1 || samples > G_MAXINT32)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "sample_size %" G_GINT64_FORMAT " is invalid", samples);
      return FALSE;
    }
  _owb_infer_set_tensor (&ctx->outputs[0], dtype, 2);
  if (x->rank == 2)
    ctx->outputs[0].dims[0] = x->dims[0];
  ctx->outputs[0].dims[1] = OWB_DIM_VALUE (samples);
  return TRUE;
}

/* ---- BitCast ---- */

/* Bits per element (sub-byte types held one per byte still count their packed width); 0 for strings. */
static int
type_bits (OwbDataType t)
{
  int packed = owb_data_type_packed_bits (t);
  return packed ? packed : (int) owb_data_type_size (t) * 8;
}

static gboolean
infer_bitcast (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  const OwbAttribute *to = owb_node_get_attribute (ctx->node, "to");
  if (!to || to->type != OWB_ATTR_INT || !owb_data_type_is_valid ((int) to->i) || to->i == OWB_TYPE_STRING)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "needs a 'to' attribute naming a non-string type");
      return FALSE;
    }
  if (!_owb_infer_check_input_type (ctx, 0, not_string, "a non-string type", error))
    return FALSE;
  OwbDataType dtype = (OwbDataType) to->i;
  if (x->dtype != OWB_TYPE_UNDEFINED && type_bits (x->dtype) != type_bits (dtype))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "cannot reinterpret %s (%d bits) as %s (%d bits)",
                           owb_data_type_name (x->dtype), type_bits (x->dtype), owb_data_type_name (dtype),
                           type_bits (dtype));
      return FALSE;
    }
  ctx->outputs[0] = *x;
  ctx->outputs[0].dtype = dtype;
  return TRUE;
}

/* ---- Det ---- */

static gboolean
infer_det (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  if (!_owb_infer_check_input_type (ctx, 0, _owb_data_type_is_float, "a float type", error))
    return FALSE;
  if (x->rank < 0)
    {
      _owb_infer_set_tensor (&ctx->outputs[0], x->dtype, -1);
      return TRUE;
    }
  if (x->rank < 2)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have rank >= 2, not %d", x->rank);
      return FALSE;
    }
  if (!_owb_infer_check_same_dim (ctx, x->dims[x->rank - 2], x->dims[x->rank - 1], "matrices must be square", error))
    return FALSE;
  _owb_infer_set_tensor (&ctx->outputs[0], x->dtype, x->rank - 2);
  for (int i = 0; i < x->rank - 2; i++)
    ctx->outputs[0].dims[i] = x->dims[i];
  return TRUE;
}

/* ---- MaxUnpool ---- */

/* Reads kernel_shape/strides/pads for n spatial dims; pads default 0, strides 1. */
static gboolean
pool_attrs (OwbInferContext *ctx, int n, int64_t *kernel, int64_t *strides, int64_t *pads, GError **error)
{
  int nk, ns, np;
  const int64_t *k = owb_node_get_ints (ctx->node, "kernel_shape", &nk);
  const int64_t *s = owb_node_get_ints (ctx->node, "strides", &ns);
  const int64_t *p = owb_node_get_ints (ctx->node, "pads", &np);
  if (nk != n || (s && ns != n) || (p && np != 2 * n))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "kernel_shape (%d), strides (%d) and pads (%d) do not fit %d spatial dims", nk, ns, np, n);
      return FALSE;
    }
  for (int i = 0; i < n; i++)
    {
      kernel[i] = k[i];
      strides[i] = s ? s[i] : 1;
      pads[i] = p ? p[i] : 0;
      pads[i + n] = p ? p[i + n] : 0;
      if (kernel[i] < 1 || strides[i] < 1 || pads[i] < 0 || pads[i + n] < 0 || kernel[i] > G_MAXINT32
          || strides[i] > G_MAXINT32 || pads[i] > G_MAXINT32 || pads[i + n] > G_MAXINT32)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "kernel, stride or pad of axis %d is invalid", i);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
infer_max_unpool (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0], *ind = ctx->inputs[1];
  const OwbValueType *shape = ctx->opset >= 11 ? in_type (ctx, 2) : NULL;
  if (!_owb_infer_check_input_type (ctx, 0, _owb_data_type_is_float, "a float type", error) || !_owb_infer_check_input_type (ctx, 1, is_int64, "int64", error))
    return FALSE;
  int nk;
  owb_node_get_ints (ctx->node, "kernel_shape", &nk);
  int rank = x->rank >= 0 ? x->rank : ind->rank >= 0 ? ind->rank : nk + 2;
  if (rank < 3 || rank > OWB_MAX_RANK)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have rank >= 3 (N, C, spatial...), not %d", rank);
      return FALSE;
    }
  int n = rank - 2;
  int64_t kernel[OWB_MAX_RANK], strides[OWB_MAX_RANK], pads[2 * OWB_MAX_RANK];
  if (!pool_attrs (ctx, n, kernel, strides, pads, error))
    return FALSE;
  if (x->rank >= 0 && ind->rank >= 0)
    {
      if (x->rank != ind->rank)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "indices must have the shape of the input");
          return FALSE;
        }
      for (int i = 0; i < rank; i++)
        if (!_owb_infer_check_same_dim (ctx, x->dims[i], ind->dims[i], "input and indices dimensions", error))
          return FALSE;
    }
  OwbValueType *out = &ctx->outputs[0];
  _owb_infer_set_tensor (out, x->dtype, rank);
  if (shape)
    {
      if (!_owb_infer_check_input_type (ctx, 2, is_int64, "int64", error) || !check_rank_of (ctx, 2, 1, error))
        return FALSE;
      int64_t *v = NULL, len = 0;
      if (owb_infer_get_ints (ctx, 2, &v, &len))
        {
          gboolean bad = len != rank;
          for (int64_t i = 0; !bad && i < len; i++)
            bad = v[i] < 0;
          if (bad)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "output_shape must hold %d non-negative dims", rank);
              g_free (v);
              return FALSE;
            }
          for (int i = 0; i < rank; i++)
            out->dims[i] = OWB_DIM_VALUE (v[i]);
          g_free (v);
        }
      else if (shape->rank == 1 && owb_dim_is_known (shape->dims[0]) && shape->dims[0].value != rank)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "output_shape must hold %d dims", rank);
          return FALSE;
        }
      return TRUE;
    }
  if (x->rank < 0)
    return TRUE;
  out->dims[0] = x->dims[0];
  out->dims[1] = x->dims[1];
  for (int i = 0; i < n; i++)
    {
      OwbDim d = x->dims[i + 2];
      if (!owb_dim_is_known (d))
        continue;
      if (d.value > G_MAXINT32)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "spatial dim %" G_GINT64_FORMAT " is too large", d.value);
          return FALSE;
        }
      int64_t v = (d.value - 1) * strides[i] - pads[i] - pads[i + n] + kernel[i];
      if (d.value == 0 || v < 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "spatial axis %d gives an empty output", i);
          return FALSE;
        }
      out->dims[i + 2] = OWB_DIM_VALUE (v);
    }
  return TRUE;
}

/* ---- CenterCropPad ---- */

static gboolean
infer_center_crop_pad (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0], *shape = ctx->inputs[1];
  if (!_owb_infer_check_input_type (ctx, 1, is_index_type, "int32 or int64", error) || !check_rank_of (ctx, 1, 1, error))
    return FALSE;
  OwbValueType *out = &ctx->outputs[0];
  if (x->rank < 0)
    {
      _owb_infer_set_tensor (out, x->dtype, -1);
      return TRUE;
    }
  int r = x->rank, n;
  int axes[OWB_MAX_RANK];
  const int64_t *axes_attr = owb_node_get_ints (ctx->node, "axes", &n);
  if (!axes_attr)
    {
      n = r;
      for (int i = 0; i < r; i++)
        axes[i] = i;
    }
  else
    {
      if (n > r)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%d axes for rank %d", n, r);
          return FALSE;
        }
      for (int i = 0; i < n; i++)
        {
          if (!owb_infer_axis (ctx, axes_attr[i], r, &axes[i], error))
            return FALSE;
          for (int j = 0; j < i; j++)
            if (axes[j] == axes[i])
              {
                owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "axis %d is repeated", axes[i]);
                return FALSE;
              }
        }
    }
  if (shape->rank == 1 && owb_dim_is_known (shape->dims[0]) && shape->dims[0].value != n)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "shape has %" G_GINT64_FORMAT " values for %d axes",
                           shape->dims[0].value, n);
      return FALSE;
    }
  *out = *x;
  int64_t *v = NULL, len = 0;
  gboolean known = owb_infer_get_ints (ctx, 1, &v, &len);
  if (known && len != n)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "shape has %" G_GINT64_FORMAT " values for %d axes", len, n);
      g_free (v);
      return FALSE;
    }
  for (int i = 0; i < n; i++)
    {
      if (known && v[i] < 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "shape[%d] = %" G_GINT64_FORMAT " is negative", i, v[i]);
          g_free (v);
          return FALSE;
        }
      out->dims[axes[i]] = known ? OWB_DIM_VALUE (v[i]) : OWB_DIM_UNKNOWN;
    }
  g_free (v);
  return TRUE;
}

/* ---- Col2Im ---- */

static gboolean
infer_col2im (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0], *img = ctx->inputs[1], *blk = ctx->inputs[2];
  if (!_owb_infer_check_input_type (ctx, 1, is_int64, "int64", error) || !_owb_infer_check_input_type (ctx, 2, is_int64, "int64", error)
      || !check_rank_of (ctx, 0, 3, error) || !check_rank_of (ctx, 1, 1, error) || !check_rank_of (ctx, 2, 1, error))
    return FALSE;
  int n = -1;
  if (img->rank == 1 && owb_dim_is_known (img->dims[0]))
    n = (int) MIN (img->dims[0].value, G_MAXINT32);
  if (blk->rank == 1 && owb_dim_is_known (blk->dims[0]))
    {
      if (n >= 0 && n != blk->dims[0].value)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "image_shape and block_shape differ in length");
          return FALSE;
        }
      n = (int) MIN (blk->dims[0].value, G_MAXINT32);
    }
  OwbValueType *out = &ctx->outputs[0];
  if (n < 0)
    {
      _owb_infer_set_tensor (out, x->dtype, -1);
      return TRUE;
    }
  if (n < 1 || n + 2 > OWB_MAX_RANK)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "%d spatial dims are not supported", n);
      return FALSE;
    }
  int nd, np, ns;
  const int64_t *dil = owb_node_get_ints (ctx->node, "dilations", &nd);
  const int64_t *pads = owb_node_get_ints (ctx->node, "pads", &np);
  const int64_t *str = owb_node_get_ints (ctx->node, "strides", &ns);
  if ((dil && nd != n) || (pads && np != 2 * n) || (str && ns != n))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "dilations, pads and strides must fit %d spatial dims", n);
      return FALSE;
    }
  for (int i = 0; i < n; i++)
    if ((dil && (dil[i] < 1 || dil[i] > G_MAXINT32)) || (str && (str[i] < 1 || str[i] > G_MAXINT32))
        || (pads && (pads[i] < 0 || pads[i + n] < 0 || pads[i] > G_MAXINT32 || pads[i + n] > G_MAXINT32)))
      {
        owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "dilation, stride or pad of axis %d is invalid", i);
        return FALSE;
      }
  _owb_infer_set_tensor (out, x->dtype, n + 2);
  if (x->rank == 3)
    out->dims[0] = x->dims[0];
  int64_t *image = NULL, *block = NULL, ni = 0, nb = 0;
  gboolean have_image = owb_infer_get_ints (ctx, 1, &image, &ni);
  gboolean have_block = owb_infer_get_ints (ctx, 2, &block, &nb);
  gboolean ok = TRUE;
  if ((have_image && ni != n) || (have_block && nb != n))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "image_shape and block_shape differ in length");
      ok = FALSE;
    }
  int64_t kernel = 1, blocks = 1;
  for (int i = 0; ok && i < n; i++)
    {
      if ((have_image && (image[i] < 1 || image[i] > G_MAXINT32)) || (have_block && (block[i] < 1 || block[i] > G_MAXINT32)))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "image or block size of axis %d is invalid", i);
          ok = FALSE;
          break;
        }
      if (have_image)
        out->dims[i + 2] = OWB_DIM_VALUE (image[i]);
      if (have_block)
        kernel = kernel > G_MAXINT32 ? kernel : kernel * block[i];
      if (have_image && have_block)
        {
          int64_t d = dil ? dil[i] : 1, s = str ? str[i] : 1;
          int64_t span = image[i] + (pads ? pads[i] + pads[i + n] : 0) - (d * (block[i] - 1) + 1);
          if (span < 0)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "block of axis %d does not fit the image", i);
              ok = FALSE;
              break;
            }
          blocks = blocks > G_MAXINT32 ? blocks : blocks * (span / s + 1);
        }
    }
  if (ok && have_block && kernel > G_MAXINT32)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "block is too large");
      ok = FALSE;
    }
  if (ok && have_block && x->rank == 3 && owb_dim_is_known (x->dims[1]))
    {
      if (x->dims[1].value % kernel != 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "input dim 1 (%" G_GINT64_FORMAT ") is not a multiple of the block size %" G_GINT64_FORMAT,
                               x->dims[1].value, kernel);
          ok = FALSE;
        }
      else
        out->dims[1] = OWB_DIM_VALUE (x->dims[1].value / kernel);
    }
  if (ok && have_image && have_block && x->rank == 3 && owb_dim_is_known (x->dims[2]) && x->dims[2].value != blocks)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "input has %" G_GINT64_FORMAT " blocks where the shapes give %" G_GINT64_FORMAT,
                           x->dims[2].value, blocks);
      ok = FALSE;
    }
  g_free (image);
  g_free (block);
  return ok;
}

const OwbOpSchema _owb_ops_misc[] = {
  { "NegativeLogLikelihoodLoss", "", 12, 2, 3, 1, 1, infer_loss },
  { "SoftmaxCrossEntropyLoss", "", 12, 2, 3, 1, 2, infer_loss },
  { "CumProd", "", 26, 2, 2, 1, 1, infer_cumprod },
  { "Unique", "", 11, 1, 1, 1, 4, infer_unique },
  { "Compress", "", 9, 2, 2, 1, 1, infer_compress },
  { "ReverseSequence", "", 10, 2, 2, 1, 1, infer_reverse_sequence },
  { "EyeLike", "", 9, 1, 1, 1, 1, infer_eye_like },
  { "RandomUniform", "", 1, 0, 0, 1, 1, infer_random },
  { "RandomNormal", "", 1, 0, 0, 1, 1, infer_random },
  { "RandomUniformLike", "", 1, 1, 1, 1, 1, infer_random_like },
  { "RandomNormalLike", "", 1, 1, 1, 1, 1, infer_random_like },
  { "Bernoulli", "", 15, 1, 1, 1, 1, infer_bernoulli },
  { "Multinomial", "", 7, 1, 1, 1, 1, infer_multinomial },
  { "BitCast", "", 26, 1, 1, 1, 1, infer_bitcast },
  { "Det", "", 11, 1, 1, 1, 1, infer_det },
  { "MaxUnpool", "", 9, 2, 2, 1, 1, infer_max_unpool },
  { "MaxUnpool", "", 11, 2, 3, 1, 1, infer_max_unpool },
  { "CenterCropPad", "", 18, 2, 2, 1, 1, infer_center_crop_pad },
  { "Col2Im", "", 18, 3, 3, 1, 1, infer_col2im },
  { NULL }
};
