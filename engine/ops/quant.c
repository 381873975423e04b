/* quant.c: schemas and shape inference of the quantization ops: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, QLinearMatMul and QLinearConv (MatMulInteger and ConvInteger live in nn.c). */
#include "owb-ops-private.h"
#include <owb/owb-error.h>

#include <string.h>

/* Attribute values beyond this are refused: no real model needs them, and the bound keeps the
 * output-size arithmetic far from int64 overflow. */
#define MAX_ATTR (G_GINT64_CONSTANT (1) << 31)

static gboolean
is_quantized_type (OwbDataType t)
{
  switch (t)
    {
    case OWB_TYPE_UINT8:
    case OWB_TYPE_INT8:
    case OWB_TYPE_UINT16:
    case OWB_TYPE_INT16:
    case OWB_TYPE_UINT4:
    case OWB_TYPE_INT4:
    case OWB_TYPE_UINT2:
    case OWB_TYPE_INT2:
    case OWB_TYPE_FLOAT8E4M3FN:
    case OWB_TYPE_FLOAT8E4M3FNUZ:
    case OWB_TYPE_FLOAT8E5M2:
    case OWB_TYPE_FLOAT8E5M2FNUZ:
    case OWB_TYPE_FLOAT4E2M1:
    case OWB_TYPE_FLOAT6E2M3:
    case OWB_TYPE_FLOAT6E3M2:
      return TRUE;
    default:
      return FALSE;
    }
}

static gboolean
is_float8 (OwbDataType t)
{
  return t == OWB_TYPE_FLOAT8E4M3FN || t == OWB_TYPE_FLOAT8E4M3FNUZ || t == OWB_TYPE_FLOAT8E5M2
         || t == OWB_TYPE_FLOAT8E5M2FNUZ;
}

static gboolean
is_real_type (OwbDataType t)
{
  return t == OWB_TYPE_FLOAT || t == OWB_TYPE_FLOAT16 || t == OWB_TYPE_BFLOAT16;
}

/* Required inputs may still be written as "" in a model; refuse that instead of reading NULL. */
static gboolean
require_inputs (OwbInferContext *ctx, int n, GError **error)
{
  for (int i = 0; i < n; i++)
    if (i >= ctx->n_inputs || !ctx->inputs[i])
      {
        owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "input %d is required", i);
        return FALSE;
      }
  return TRUE;
}

/* Element count of a shape, -1 if any dim (or the rank) is unknown. */
static int64_t
known_count (const OwbValueType *t)
{
  if (t->rank < 0)
    return -1;
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++)
    {
      if (!owb_dim_is_known (t->dims[i]))
        return -1;
      n = t->dims[i].value > 0 && n > G_MAXINT64 / t->dims[i].value ? G_MAXINT64 : n * t->dims[i].value;
    }
  return n;
}

static void
set_tensor_like (OwbValueType *out, OwbDataType dtype, const OwbValueType *shape_of)
{
  owb_value_type_init_unknown (out);
  out->kind = OWB_VALUE_TENSOR;
  out->dtype = dtype;
  if (shape_of)
    {
      out->rank = shape_of->rank;
      for (int i = 0; i < shape_of->rank; i++)
        out->dims[i] = shape_of->dims[i];
    }
}

static void
set_scalar (OwbValueType *out, OwbDataType dtype)
{
  owb_value_type_init_tensor (out, dtype, 0, NULL);
}

/* The granularity of QuantizeLinear/DequantizeLinear is decided by the scale's shape: one value
 * (per tensor), a vector along `axis` (per axis), or the input's shape with `axis` divided into
 * blocks of block_size (blocked). The zero point, when given, must have the scale's shape. */
static gboolean
check_quant_params (OwbInferContext *ctx, const char *scale_name, const char *zp_name, GError **error)
{
  const OwbValueType *x = ctx->inputs[0], *scale = ctx->inputs[1];
  const OwbValueType *zp = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  int64_t block = ctx->opset >= 21 ? owb_node_get_int (ctx->node, "block_size", 0) : 0;
  int64_t axis = ctx->opset >= 13 ? owb_node_get_int (ctx->node, "axis", 1) : 1;

  if (block < 0 || block > MAX_ATTR)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "attribute block_size = %" G_GINT64_FORMAT " must be a positive number", block);
      return FALSE;
    }
  if (zp && zp->rank >= 0 && scale->rank >= 0)
    {
      gboolean same = zp->rank == scale->rank;
      for (int i = 0; same && i < zp->rank; i++)
        if (owb_dim_is_known (zp->dims[i]) && owb_dim_is_known (scale->dims[i])
            && zp->dims[i].value != scale->dims[i].value)
          same = FALSE;
      /* A one-element tensor and a scalar both mean per-tensor; allow mixing them. */
      if (!same && !(known_count (zp) == 1 && known_count (scale) == 1))
        {
          g_autofree char *zs = owb_value_type_to_string (zp);
          g_autofree char *ss = owb_value_type_to_string (scale);
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "%s %s must have the shape of %s %s", zp_name, zs,
                               scale_name, ss);
          return FALSE;
        }
    }
  if (scale->rank < 0 || scale->rank == 0 || known_count (scale) == 1)
    return TRUE; /* per tensor, or not known yet */
  if (x->rank < 0)
    return TRUE;
  if (ctx->opset < 13)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "%s must be a scalar before opset 13, got rank %d", scale_name,
                           scale->rank);
      return FALSE;
    }
  int ax;
  if (!owb_infer_axis (ctx, axis, x->rank, &ax, error))
    return FALSE;
  if (block == 0)
    {
      if (scale->rank != 1)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "%s must be a scalar or a 1-D tensor (per axis) without block_size, got rank %d",
                               scale_name, scale->rank);
          return FALSE;
        }
      OwbDim sd = scale->dims[0], xd = x->dims[ax];
      if (owb_dim_is_known (sd) && owb_dim_is_known (xd) && sd.value != xd.value)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "%s has %" G_GINT64_FORMAT " values but axis %d has size %" G_GINT64_FORMAT, scale_name,
                               sd.value, ax, xd.value);
          return FALSE;
        }
      return TRUE;
    }
  if (scale->rank != x->rank)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "blocked quantization needs %s of the input's rank %d, got rank %d", scale_name, x->rank,
                           scale->rank);
      return FALSE;
    }
  for (int i = 0; i < x->rank; i++)
    {
      OwbDim sd = scale->dims[i], xd = x->dims[i];
      if (!owb_dim_is_known (sd) || !owb_dim_is_known (xd))
        continue;
      int64_t want = i == ax ? (xd.value + block - 1) / block : xd.value;
      if (sd.value != want)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "%s dim %d is %" G_GINT64_FORMAT ", expected %" G_GINT64_FORMAT
                               " for input dim %" G_GINT64_FORMAT " and block_size %" G_GINT64_FORMAT,
                               scale_name, i, sd.value, want, xd.value, block);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
infer_quantize_linear (OwbInferContext *ctx, GError **error)
{
  if (!require_inputs (ctx, 2, error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0], *scale = ctx->inputs[1];
  const OwbValueType *zp = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  int64_t out_attr = ctx->opset >= 21 ? owb_node_get_int (ctx->node, "output_dtype", 0) : 0;
  OwbDataType out = OWB_TYPE_UINT8;

  if (x->dtype != OWB_TYPE_UNDEFINED && !is_real_type (x->dtype) && x->dtype != OWB_TYPE_INT32)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input x of type %s is not float, float16, bfloat16 or int32",
                           owb_data_type_name (x->dtype));
      return FALSE;
    }
  if (scale->dtype != OWB_TYPE_UNDEFINED && !is_real_type (scale->dtype) && scale->dtype != OWB_TYPE_INT32
      && scale->dtype != OWB_TYPE_FLOAT8E8M0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "y_scale of type %s is not a scale type",
                           owb_data_type_name (scale->dtype));
      return FALSE;
    }
  if (out_attr != 0 && !(owb_data_type_is_valid ((int) out_attr) && is_quantized_type ((OwbDataType) out_attr)))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "attribute output_dtype = %" G_GINT64_FORMAT " is not a quantized type", out_attr);
      return FALSE;
    }
  if (ctx->opset >= 23)
    {
      int64_t precision = owb_node_get_int (ctx->node, "precision", 0);
      if (precision != 0 && precision != OWB_TYPE_FLOAT && precision != OWB_TYPE_FLOAT16
          && precision != OWB_TYPE_BFLOAT16 && precision != OWB_TYPE_DOUBLE)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                               "attribute precision = %" G_GINT64_FORMAT " is not a floating-point type", precision);
          return FALSE;
        }
    }
  if (zp && zp->dtype != OWB_TYPE_UNDEFINED)
    {
      if (out_attr != 0 && out_attr != zp->dtype)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "output_dtype %s differs from y_zero_point's type %s",
                               owb_data_type_name ((OwbDataType) out_attr), owb_data_type_name (zp->dtype));
          return FALSE;
        }
      out = zp->dtype;
    }
  else if (out_attr != 0)
    out = (OwbDataType) out_attr;
  if (!is_quantized_type (out))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "cannot quantize to %s", owb_data_type_name (out));
      return FALSE;
    }
  if (!check_quant_params (ctx, "y_scale", "y_zero_point", error))
    return FALSE;
  set_tensor_like (&ctx->outputs[0], out, x);
  return TRUE;
}

static gboolean
infer_dequantize_linear (OwbInferContext *ctx, GError **error)
{
  if (!require_inputs (ctx, 2, error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0], *scale = ctx->inputs[1];
  const OwbValueType *zp = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  int64_t out_attr = ctx->opset >= 23 ? owb_node_get_int (ctx->node, "output_dtype", 0) : 0;

  if (x->dtype != OWB_TYPE_UNDEFINED && !is_quantized_type (x->dtype) && x->dtype != OWB_TYPE_INT32)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input x of type %s is not a quantized type",
                           owb_data_type_name (x->dtype));
      return FALSE;
    }
  if (zp && zp->dtype != OWB_TYPE_UNDEFINED && x->dtype != OWB_TYPE_UNDEFINED && zp->dtype != x->dtype)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "x_zero_point of type %s must have x's type %s",
                           owb_data_type_name (zp->dtype), owb_data_type_name (x->dtype));
      return FALSE;
    }
  if (scale->dtype != OWB_TYPE_UNDEFINED && !is_real_type (scale->dtype) && scale->dtype != OWB_TYPE_FLOAT8E8M0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "x_scale of type %s is not float, float16, bfloat16 or float8e8m0",
                           owb_data_type_name (scale->dtype));
      return FALSE;
    }
  OwbDataType out = scale->dtype;
  if (out_attr != 0)
    {
      if (!owb_data_type_is_valid ((int) out_attr) || !is_real_type ((OwbDataType) out_attr))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                               "attribute output_dtype = %" G_GINT64_FORMAT " is not float, float16 or bfloat16",
                               out_attr);
          return FALSE;
        }
      out = (OwbDataType) out_attr;
    }
  else if (out == OWB_TYPE_FLOAT8E8M0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "x_scale of type float8e8m0 needs the output_dtype attribute");
      return FALSE;
    }
  if (!check_quant_params (ctx, "x_scale", "x_zero_point", error))
    return FALSE;
  set_tensor_like (&ctx->outputs[0], out, x);
  return TRUE;
}

static gboolean
infer_dynamic_quantize_linear (OwbInferContext *ctx, GError **error)
{
  if (!require_inputs (ctx, 1, error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0];
  if (x->dtype != OWB_TYPE_UNDEFINED && !is_real_type (x->dtype))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input x of type %s is not float",
                           owb_data_type_name (x->dtype));
      return FALSE;
    }
  set_tensor_like (&ctx->outputs[0], OWB_TYPE_UINT8, x);
  if (ctx->n_outputs > 1)
    set_scalar (&ctx->outputs[1], OWB_TYPE_FLOAT);
  if (ctx->n_outputs > 2)
    set_scalar (&ctx->outputs[2], OWB_TYPE_UINT8);
  return TRUE;
}

/* Checks the (scale, zero point) pair at inputs si, si + 1 of the QLinear ops: scales real, the
 * zero point of the type of the quantized data at input `data` (-1: none, as for y). */
static gboolean
check_qlinear_pair (OwbInferContext *ctx, int data, int si, const char *what, GError **error)
{
  const OwbValueType *d = data >= 0 ? ctx->inputs[data] : NULL, *s = ctx->inputs[si];
  const OwbValueType *z = si + 1 < ctx->n_inputs ? ctx->inputs[si + 1] : NULL;
  gboolean real_ok = ctx->opset >= 21 ? is_real_type (s->dtype) : s->dtype == OWB_TYPE_FLOAT;
  if (s->dtype != OWB_TYPE_UNDEFINED && !real_ok)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "%s_scale has type %s", what, owb_data_type_name (s->dtype));
      return FALSE;
    }
  if (d && z && d->dtype != OWB_TYPE_UNDEFINED && z->dtype != OWB_TYPE_UNDEFINED && d->dtype != z->dtype)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "%s_zero_point of type %s must have %s's type %s", what,
                           owb_data_type_name (z->dtype), what, owb_data_type_name (d->dtype));
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_qlinear_data_type (OwbInferContext *ctx, OwbDataType t, const char *what, gboolean allow_float8, GError **error)
{
  if (t == OWB_TYPE_UNDEFINED || t == OWB_TYPE_INT8 || t == OWB_TYPE_UINT8 || (allow_float8 && is_float8 (t)))
    return TRUE;
  owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "%s of type %s is not int8 or uint8%s", what,
                       owb_data_type_name (t), allow_float8 ? " or float8" : "");
  return FALSE;
}

/* Broadcasts two batch dims the numpy way. */
static gboolean
broadcast_dim (OwbInferContext *ctx, OwbDim a, OwbDim b, OwbDim *out, GError **error)
{
  if (owb_dim_is_known (a) && owb_dim_is_known (b))
    {
      if (a.value != b.value && a.value != 1 && b.value != 1)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "batch dims %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT " do not broadcast", a.value,
                               b.value);
          return FALSE;
        }
      *out = a.value == 1 ? b : a;
    }
  else if (owb_dim_is_known (a))
    *out = a.value == 1 ? b : a;
  else if (owb_dim_is_known (b))
    *out = b.value == 1 ? a : b;
  else if (a.param && a.param == b.param)
    *out = a;
  else
    *out = OWB_DIM_UNKNOWN;
  return TRUE;
}

static gboolean
infer_qlinear_matmul (OwbInferContext *ctx, GError **error)
{
  if (!require_inputs (ctx, 8, error))
    return FALSE;
  const OwbValueType *a = ctx->inputs[0], *b = ctx->inputs[3], *yzp = ctx->inputs[7];
  OwbValueType *y = &ctx->outputs[0];
  gboolean f8 = ctx->opset >= 21;

  if (!check_qlinear_data_type (ctx, a->dtype, "a", f8, error) || !check_qlinear_data_type (ctx, b->dtype, "b", f8, error)
      || !check_qlinear_data_type (ctx, yzp->dtype, "y_zero_point", f8, error)
      || !check_qlinear_pair (ctx, 0, 1, "a", error) || !check_qlinear_pair (ctx, 3, 4, "b", error)
      || !check_qlinear_pair (ctx, -1, 6, "y", error))
    return FALSE;
  set_tensor_like (y, yzp->dtype, NULL);
  if (a->rank < 0 || b->rank < 0)
    return TRUE;
  if (a->rank == 0 || b->rank == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "inputs of a matrix product cannot be scalars");
      return FALSE;
    }
  OwbDim ka = a->dims[a->rank - 1], kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
  if (owb_dim_is_known (ka) && owb_dim_is_known (kb) && ka.value != kb.value)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "a has %" G_GINT64_FORMAT " columns but b has %" G_GINT64_FORMAT " rows", ka.value, kb.value);
      return FALSE;
    }
  int ba = MAX (a->rank - 2, 0), bb = MAX (b->rank - 2, 0), nb = MAX (ba, bb);
  int rank = nb + (a->rank >= 2) + (b->rank >= 2);
  if (rank > OWB_MAX_RANK)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "result rank %d is too large", rank);
      return FALSE;
    }
  for (int i = 0; i < nb; i++)
    {
      int ia = i - (nb - ba), ib = i - (nb - bb);
      OwbDim da = ia >= 0 ? a->dims[ia] : OWB_DIM_VALUE (1), db = ib >= 0 ? b->dims[ib] : OWB_DIM_VALUE (1);
      if (!broadcast_dim (ctx, da, db, &y->dims[i], error))
        return FALSE;
    }
  int r = nb;
  if (a->rank >= 2)
    y->dims[r++] = a->dims[a->rank - 2];
  if (b->rank >= 2)
    y->dims[r++] = b->dims[b->rank - 1];
  y->rank = rank;
  return TRUE;
}

static gboolean
infer_qlinear_conv (OwbInferContext *ctx, GError **error)
{
  if (!require_inputs (ctx, 8, error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0], *w = ctx->inputs[3], *yzp = ctx->inputs[7];
  const OwbValueType *bias = ctx->n_inputs > 8 ? ctx->inputs[8] : NULL;

  if (!check_qlinear_data_type (ctx, x->dtype, "x", FALSE, error)
      || !check_qlinear_data_type (ctx, w->dtype, "w", FALSE, error)
      || !check_qlinear_data_type (ctx, yzp->dtype, "y_zero_point", FALSE, error)
      || !check_qlinear_pair (ctx, 0, 1, "x", error) || !check_qlinear_pair (ctx, 3, 4, "w", error)
      || !check_qlinear_pair (ctx, -1, 6, "y", error))
    return FALSE;
  if (bias && bias->dtype != OWB_TYPE_UNDEFINED && bias->dtype != OWB_TYPE_INT32)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "bias B of type %s is not int32", owb_data_type_name (bias->dtype));
      return FALSE;
    }
  return _owb_infer_conv_like (ctx, 0, 3, 8, FALSE, yzp->dtype, error);
}

/* QLinearLookup (X uint8/int8, Table [256] uint8/int8) of the engine's domain: Y[i] = Table[X[i]'s
 * byte], Y of Table's type and X's shape. fuse_qdq_lookup makes it of DequantizeLinear -> an
 * elementwise op -> QuantizeLinear, the table computed by those very kernels. */
static gboolean
infer_qlinear_lookup (OwbInferContext *ctx, GError **error)
{
  if (!require_inputs (ctx, 2, error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0], *t = ctx->inputs[1];
  gboolean x_ok = x->dtype == OWB_TYPE_UNDEFINED || x->dtype == OWB_TYPE_UINT8 || x->dtype == OWB_TYPE_INT8;
  gboolean t_ok = t->dtype == OWB_TYPE_UINT8 || t->dtype == OWB_TYPE_INT8;
  if (!x_ok || !t_ok)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "X (%s) and Table (%s) must be uint8 or int8",
                           owb_data_type_name (x->dtype), owb_data_type_name (t->dtype));
      return FALSE;
    }
  if (t->rank >= 0 && (t->rank != 1 || (owb_dim_is_known (t->dims[0]) && t->dims[0].value != 256)))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "Table must hold 256 values, one per byte of X");
      return FALSE;
    }
  set_tensor_like (&ctx->outputs[0], t->dtype, x);
  return TRUE;
}

/* QLinearBinaryLookup (A, B uint8/int8, Table [65536] uint8/int8) of the engine's domain:
 * Y = Table[256 a + b] for the bytes a, b of A and B broadcast together (numpy rules), Y of Table's
 * type. fuse_qdq_binary makes it of DequantizeLinear (A), DequantizeLinear (B) -> Add/Mul ->
 * QuantizeLinear, the table computed by those very kernels. */
static gboolean
infer_qlinear_binary_lookup (OwbInferContext *ctx, GError **error)
{
  if (!require_inputs (ctx, 3, error))
    return FALSE;
  const OwbValueType *a = ctx->inputs[0], *b = ctx->inputs[1], *t = ctx->inputs[2];
  gboolean ok = t->dtype == OWB_TYPE_UINT8 || t->dtype == OWB_TYPE_INT8;
  for (int i = 0; i < 2; i++)
    {
      OwbDataType d = ctx->inputs[i]->dtype;
      ok = ok && (d == OWB_TYPE_UNDEFINED || d == OWB_TYPE_UINT8 || d == OWB_TYPE_INT8);
    }
  if (!ok)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "A (%s), B (%s) and Table (%s) must be uint8 or int8",
                           owb_data_type_name (a->dtype), owb_data_type_name (b->dtype), owb_data_type_name (t->dtype));
      return FALSE;
    }
  if (t->rank >= 0 && (t->rank != 1 || (owb_dim_is_known (t->dims[0]) && t->dims[0].value != 65536)))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "Table must hold 65536 values, one per pair of bytes");
      return FALSE;
    }
  OwbValueType va = *a, vb = *b;
  va.dtype = vb.dtype = t->dtype;
  const OwbValueType *both[2] = { &va, &vb };
  if (!owb_infer_broadcast (ctx, 2, both, &ctx->outputs[0], error))
    return FALSE;
  ctx->outputs[0].dtype = t->dtype;
  return TRUE;
}

/* QLinearBinary (A, a_scale, a_zero_point, B, b_scale, b_zero_point, y_scale, y_zero_point) of the
 * engine's domain, attribute op = "Add" or "Mul": Y = QuantizeLinear (DequantizeLinear (A) op
 * DequantizeLinear (B)), A and B broadcast together, every parameter one value (float32 scales),
 * computed in float32 exactly as those three ops compute it. fuse_qdq_lookup makes it. */
static gboolean
infer_qlinear_binary (OwbInferContext *ctx, GError **error)
{
  if (!require_inputs (ctx, 8, error))
    return FALSE;
  const char *op = owb_node_get_string (ctx->node, "op", "");
  if (strcmp (op, "Add") != 0 && strcmp (op, "Mul") != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute op must be Add or Mul, got '%s'", op);
      return FALSE;
    }
  const OwbValueType *a = ctx->inputs[0], *b = ctx->inputs[3], *yz = ctx->inputs[7];
  if (!check_qlinear_data_type (ctx, a->dtype, "A", FALSE, error) || !check_qlinear_data_type (ctx, b->dtype, "B", FALSE, error)
      || !check_qlinear_data_type (ctx, yz->dtype, "y_zero_point", FALSE, error))
    return FALSE;
  OwbValueType va = *a, vb = *b;
  va.dtype = vb.dtype = yz->dtype;
  const OwbValueType *both[2] = { &va, &vb };
  if (!owb_infer_broadcast (ctx, 2, both, &ctx->outputs[0], error))
    return FALSE;
  ctx->outputs[0].dtype = yz->dtype;
  return TRUE;
}

/* QLinearGlobalAveragePool (X, x_scale, x_zero_point, y_scale, y_zero_point) of the engine's
 * domain, attribute channels_last (0: X is [N, C, spatial...], 1: [N, spatial..., C]): Y =
 * saturate (nearbyint (S x_scale / (n y_scale)) + y_zero_point), S the integer sum of X - x_zero_point
 * over the n spatial positions of a channel, every parameter one value (float32 scales); Y of
 * y_zero_point's type, its spatial dims 1. The exact mean of what DequantizeLinear ->
 * GlobalAveragePool -> QuantizeLinear computes in float32 (fuse_qdq_lookup makes it of them). */
static gboolean
infer_qlinear_global_average_pool (OwbInferContext *ctx, GError **error)
{
  if (!require_inputs (ctx, 5, error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0], *yz = ctx->inputs[4];
  if (!check_qlinear_data_type (ctx, x->dtype, "X", FALSE, error)
      || !check_qlinear_data_type (ctx, yz->dtype, "y_zero_point", FALSE, error))
    return FALSE;
  int64_t last;
  if (!_owb_infer_get_flag (ctx, "channels_last", 0, &last, error))
    return FALSE;
  if (x->rank >= 0 && x->rank < 3)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "X must have rank 3 or more (N, C and spatial dims), not %d",
                           x->rank);
      return FALSE;
    }
  set_tensor_like (&ctx->outputs[0], yz->dtype, x);
  OwbValueType *y = &ctx->outputs[0];
  for (int i = last ? 1 : 2; i < (last ? y->rank - 1 : y->rank); i++)
    y->dims[i] = OWB_DIM_VALUE (1);
  return TRUE;
}

/* DynamicQuantizeMatMul (A, B, b_scale, b_zero_point?, bias?) of the engine's domain: A (float32,
 * [..., K]) quantized to uint8 per tensor as DynamicQuantizeLinear does, MatMulInteger with B
 * (int8/uint8 [K, N]), the int32 product cast to float32 and multiplied by (a_scale b_scale), bias
 * [N] added: Y float32 [..., N]. b_scale and b_zero_point hold one value or one per column.
 * fuse_dynamic_quant_matmul makes it of what onnxruntime's quantize_dynamic writes. */
static gboolean
infer_dynamic_quantize_matmul (OwbInferContext *ctx, GError **error)
{
  if (!require_inputs (ctx, 3, error))
    return FALSE;
  const OwbValueType *a = ctx->inputs[0], *b = ctx->inputs[1], *s = ctx->inputs[2];
  const OwbValueType *z = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL, *bias = ctx->n_inputs > 4 ? ctx->inputs[4] : NULL;
  if ((a->dtype != OWB_TYPE_UNDEFINED && a->dtype != OWB_TYPE_FLOAT) || (s->dtype != OWB_TYPE_UNDEFINED && s->dtype != OWB_TYPE_FLOAT)
      || (bias && bias->dtype != OWB_TYPE_UNDEFINED && bias->dtype != OWB_TYPE_FLOAT))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "A (%s), b_scale (%s) and bias must be float32",
                           owb_data_type_name (a->dtype), owb_data_type_name (s->dtype));
      return FALSE;
    }
  if (!check_qlinear_data_type (ctx, b->dtype, "B", FALSE, error))
    return FALSE;
  if (z && z->dtype != OWB_TYPE_UNDEFINED && b->dtype != OWB_TYPE_UNDEFINED && z->dtype != b->dtype)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "b_zero_point (%s) must be of B's type (%s)",
                           owb_data_type_name (z->dtype), owb_data_type_name (b->dtype));
      return FALSE;
    }
  if (b->rank >= 0 && b->rank != 2)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "B must be a matrix [K, N], got rank %d", b->rank);
      return FALSE;
    }
  if (a->rank == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "A must have rank >= 1");
      return FALSE;
    }
  OwbDim k = _owb_infer_dim (b, 0), n = _owb_infer_dim (b, 1), ka = a->rank > 0 ? a->dims[a->rank - 1] : OWB_DIM_UNKNOWN;
  if (owb_dim_is_known (ka) && owb_dim_is_known (k) && ka.value != k.value)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "A has %" G_GINT64_FORMAT " columns but B has %" G_GINT64_FORMAT " rows", ka.value, k.value);
      return FALSE;
    }
  /* one value, or one per column of B */
  const OwbValueType *per_column[3] = { s, z, bias };
  for (int i = 0; i < 3; i++)
    {
      int64_t c = per_column[i] ? known_count (per_column[i]) : -1;
      if (c > 1 && per_column[i]->rank != 1)
        c = 0;
      if (c >= 0 && c != 1 && !(owb_dim_is_known (n) && c == n.value) && !(c > 1 && !owb_dim_is_known (n)))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "%s must hold one value or one per column of B",
                               i == 0 ? "b_scale" : i == 1 ? "b_zero_point" : "bias");
          return FALSE;
        }
    }
  set_tensor_like (&ctx->outputs[0], OWB_TYPE_FLOAT, a);
  if (a->rank > 0)
    ctx->outputs[0].dims[a->rank - 1] = n;
  return TRUE;
}

const OwbOpSchema _owb_ops_quant[] = {
  { "DynamicQuantizeMatMul", OWB_DOMAIN, 1, 3, 5, 1, 1, infer_dynamic_quantize_matmul },
  { "QLinearBinary", OWB_DOMAIN, 1, 8, 8, 1, 1, infer_qlinear_binary },
  { "QLinearBinaryLookup", OWB_DOMAIN, 1, 3, 3, 1, 1, infer_qlinear_binary_lookup },
  { "QLinearLookup", OWB_DOMAIN, 1, 2, 2, 1, 1, infer_qlinear_lookup },
  { "QLinearGlobalAveragePool", OWB_DOMAIN, 1, 5, 5, 1, 1, infer_qlinear_global_average_pool },
  { "QuantizeLinear", "", 10, 2, 3, 1, 1, infer_quantize_linear },
  { "DequantizeLinear", "", 10, 2, 3, 1, 1, infer_dequantize_linear },
  { "DynamicQuantizeLinear", "", 11, 1, 1, 3, 3, infer_dynamic_quantize_linear },
  { "QLinearMatMul", "", 10, 8, 8, 1, 1, infer_qlinear_matmul },
  { "QLinearConv", "", 10, 8, 9, 1, 1, infer_qlinear_conv },
  { NULL }
};
