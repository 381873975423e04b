/* nn.c: schemas and shape inference of the nn op family: Conv, ConvTranspose, ConvInteger, MatMul,
 * MatMulInteger and Gemm. */
#include "owb-ops-private.h"
#include <owb/owb-error.h>

#include <string.h>

/* Attribute values beyond this are refused: no real model needs them, and the bound keeps the
 * output-size arithmetic far from int64 overflow. */
#define MAX_CONV_ATTR (G_GINT64_CONSTANT (1) << 31)

typedef enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID } AutoPad;

typedef struct {
  int nsp; /* spatial axes */
  int64_t group;
  AutoPad auto_pad;
  gboolean have_kernel, have_output_shape;
  int64_t kernel[OWB_MAX_RANK];
  int64_t strides[OWB_MAX_RANK];
  int64_t dilations[OWB_MAX_RANK];
  int64_t pads[2 * OWB_MAX_RANK]; /* begins, then ends */
  int64_t output_padding[OWB_MAX_RANK];
  int64_t output_shape[OWB_MAX_RANK];
} ConvAttrs;


static gboolean
parse_conv_attrs (OwbInferContext *ctx, int nsp, gboolean transpose, ConvAttrs *a, GError **error)
{
  memset (a, 0, sizeof *a);
  a->nsp = nsp;
  a->group = owb_node_get_int (ctx->node, "group", 1);
  if (a->group < 1 || a->group > MAX_CONV_ATTR)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute group = %" G_GINT64_FORMAT " must be >= 1",
                           a->group);
      return FALSE;
    }
  const char *ap = owb_node_get_string (ctx->node, "auto_pad", "NOTSET");
  if (strcmp (ap, "NOTSET") == 0 || ap[0] == '\0')
    a->auto_pad = PAD_NOTSET;
  else if (strcmp (ap, "SAME_UPPER") == 0)
    a->auto_pad = PAD_SAME_UPPER;
  else if (strcmp (ap, "SAME_LOWER") == 0)
    a->auto_pad = PAD_SAME_LOWER;
  else if (strcmp (ap, "VALID") == 0)
    a->auto_pad = PAD_VALID;
  else
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "attribute auto_pad = '%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", ap);
      return FALSE;
    }
  if (!_owb_infer_get_conv_ints (ctx, "kernel_shape", nsp, 0, 1, a->kernel, &a->have_kernel, error)
      || !_owb_infer_get_conv_ints (ctx, "strides", nsp, 1, 1, a->strides, NULL, error)
      || !_owb_infer_get_conv_ints (ctx, "dilations", nsp, 1, 1, a->dilations, NULL, error)
      || !_owb_infer_get_conv_ints (ctx, "pads", 2 * nsp, 0, 0, a->pads, NULL, error))
    return FALSE;
  if (a->auto_pad != PAD_NOTSET)
    memset (a->pads, 0, sizeof a->pads);
  if (!transpose)
    return TRUE;
  if (!_owb_infer_get_conv_ints (ctx, "output_padding", nsp, 0, 0, a->output_padding, NULL, error))
    return FALSE;
  for (int i = 0; i < nsp; i++)
    if (a->output_padding[i] >= a->strides[i] && a->output_padding[i] >= a->dilations[i])
      {
        owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                             "output_padding[%d] = %" G_GINT64_FORMAT " must be less than the stride (%" G_GINT64_FORMAT
                             ") or the dilation (%" G_GINT64_FORMAT ")",
                             i, a->output_padding[i], a->strides[i], a->dilations[i]);
        return FALSE;
      }
  /* output_shape may also be written with the batch and channel dims in front (older exporters). */
  int n = 0;
  const int64_t *os = owb_node_get_ints (ctx->node, "output_shape", &n);
  if (os)
    {
      if (n != nsp && n != nsp + 2)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute output_shape has %d values, expected %d",
                               n, nsp);
          return FALSE;
        }
      for (int i = 0; i < nsp; i++)
        {
          int64_t v = os[n - nsp + i];
          if (v < 1 || v > MAX_CONV_ATTR)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                                   "attribute output_shape has an out-of-range value %" G_GINT64_FORMAT, v);
              return FALSE;
            }
          a->output_shape[i] = v;
        }
      a->have_output_shape = TRUE;
    }
  return TRUE;
}

/* Shared by Conv, ConvInteger and ConvTranspose. Input 0 is X, input 1 is W, bias_input the
 * optional bias (-1 for none). */
/* Shared (owb-ops-private.h): QLinearConv's shapes follow Conv's rules. */
gboolean
_owb_infer_conv_like (OwbInferContext *ctx, int x_input, int w_input, int bias_input, gboolean transpose,
                      OwbDataType out_dtype, GError **error)
{
  const OwbValueType *x = ctx->inputs[x_input], *w = ctx->inputs[w_input];
  OwbValueType *y = &ctx->outputs[0];
  owb_value_type_init_unknown (y);
  y->kind = OWB_VALUE_TENSOR;
  y->dtype = out_dtype;

  int rank = x->rank >= 0 ? x->rank : w->rank;
  if (rank < 0)
    return TRUE;
  if (rank < 3)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "input X must have rank >= 3 (batch, channels, spatial axes...), got rank %d", rank);
      return FALSE;
    }
  if (x->rank >= 0 && w->rank >= 0 && x->rank != w->rank)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "weight W has rank %d but input X has rank %d", w->rank,
                           x->rank);
      return FALSE;
    }
  int nsp = rank - 2;
  ConvAttrs a;
  if (!parse_conv_attrs (ctx, nsp, transpose, &a, error))
    return FALSE;

  /* Kernel size per axis: W's dims, checked against kernel_shape when both are given. */
  int64_t kernel[OWB_MAX_RANK];
  for (int i = 0; i < nsp; i++)
    {
      OwbDim kd = _owb_infer_dim (w, 2 + i);
      if (a.have_kernel && owb_dim_is_known (kd) && kd.value != a.kernel[i])
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "kernel_shape[%d] = %" G_GINT64_FORMAT " does not match weight dim %" G_GINT64_FORMAT,
                               i, a.kernel[i], kd.value);
          return FALSE;
        }
      kernel[i] = a.have_kernel ? a.kernel[i] : (owb_dim_is_known (kd) ? kd.value : -1);
      if (kernel[i] == 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "weight W has an empty kernel axis %d", 2 + i);
          return FALSE;
        }
    }

  OwbDim c = _owb_infer_dim (x, 1), wc0 = _owb_infer_dim (w, 0), wc1 = _owb_infer_dim (w, 1);
  OwbDim out_channels;
  if (!transpose)
    {
      /* W: [M, C/group, k...] */
      if (owb_dim_is_known (c) && c.value % a.group != 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "input channels %" G_GINT64_FORMAT " are not divisible by group %" G_GINT64_FORMAT,
                               c.value, a.group);
          return FALSE;
        }
      if (owb_dim_is_known (c) && owb_dim_is_known (wc1) && c.value != wc1.value * a.group)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "input has %" G_GINT64_FORMAT " channels but weight expects %" G_GINT64_FORMAT
                               " x group %" G_GINT64_FORMAT,
                               c.value, wc1.value, a.group);
          return FALSE;
        }
      if (owb_dim_is_known (wc0) && wc0.value % a.group != 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "output channels %" G_GINT64_FORMAT " are not divisible by group %" G_GINT64_FORMAT,
                               wc0.value, a.group);
          return FALSE;
        }
      out_channels = wc0;
    }
  else
    {
      /* W: [C, M/group, k...] */
      if (owb_dim_is_known (c) && c.value % a.group != 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "input channels %" G_GINT64_FORMAT " are not divisible by group %" G_GINT64_FORMAT,
                               c.value, a.group);
          return FALSE;
        }
      if (owb_dim_is_known (c) && owb_dim_is_known (wc0) && c.value != wc0.value)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "input has %" G_GINT64_FORMAT " channels but weight dim 0 is %" G_GINT64_FORMAT, c.value,
                               wc0.value);
          return FALSE;
        }
      if (owb_dim_is_known (wc1))
        out_channels = OWB_DIM_VALUE (wc1.value * a.group);
      else
        out_channels = a.group == 1 ? wc1 : OWB_DIM_UNKNOWN;
    }

  if (bias_input >= 0 && bias_input < ctx->n_inputs && ctx->inputs[bias_input])
    {
      const OwbValueType *b = ctx->inputs[bias_input];
      if (b->rank >= 0 && b->rank != 1)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "bias B must have rank 1, got rank %d", b->rank);
          return FALSE;
        }
      OwbDim bd = _owb_infer_dim (b, 0);
      if (owb_dim_is_known (bd) && owb_dim_is_known (out_channels) && bd.value != out_channels.value)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "bias B has %" G_GINT64_FORMAT " values for %" G_GINT64_FORMAT " output channels",
                               bd.value, out_channels.value);
          return FALSE;
        }
    }

  y->rank = rank;
  y->dims[0] = _owb_infer_dim (x, 0);
  y->dims[1] = out_channels;
  for (int i = 0; i < nsp; i++)
    {
      OwbDim in = _owb_infer_dim (x, 2 + i);
      int64_t s = a.strides[i];
      OwbDim out = OWB_DIM_UNKNOWN;
      if (owb_dim_is_known (in) && in.value > G_MAXINT64 / 4 / s)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input size %" G_GINT64_FORMAT " on spatial axis %d is too large",
                               in.value, i);
          return FALSE;
        }
      if (transpose && a.have_output_shape)
        out = OWB_DIM_VALUE (a.output_shape[i]);
      else if (a.auto_pad == PAD_SAME_UPPER || a.auto_pad == PAD_SAME_LOWER)
        {
          /* Same padding does not depend on the kernel; with stride 1 a symbolic size passes through. */
          if (owb_dim_is_known (in))
            out = OWB_DIM_VALUE (transpose ? in.value * s : (in.value + s - 1) / s);
          else if (s == 1)
            out = in;
        }
      else if (kernel[i] > 0)
        {
          int64_t dk = (kernel[i] - 1) * a.dilations[i] + 1;
          int64_t pad = a.pads[i] + a.pads[nsp + i];
          if (owb_dim_is_known (in))
            {
              int64_t v;
              if (!transpose)
                {
                  if (in.value + pad < dk)
                    {
                      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                                           "kernel extent %" G_GINT64_FORMAT " on spatial axis %d is larger than the "
                                           "padded input (%" G_GINT64_FORMAT ")",
                                           dk, i, in.value + pad);
                      return FALSE;
                    }
                  v = (in.value + pad - dk) / s + 1;
                }
              else
                {
                  v = s * (in.value > 0 ? in.value - 1 : 0) + a.output_padding[i] + dk - pad;
                  if (in.value == 0)
                    v = 0;
                  if (v < 0)
                    {
                      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                                           "output size on spatial axis %d would be negative (%" G_GINT64_FORMAT
                                           "): pads are larger than the output",
                                           i, v);
                      return FALSE;
                    }
                }
              out = OWB_DIM_VALUE (v);
            }
          else if (!transpose && s == 1 && dk == 1 + pad)
            out = in;
        }
      y->dims[2 + i] = out;
    }
  return TRUE;
}

static gboolean
check_same_dtype (OwbInferContext *ctx, int i, int j, GError **error)
{
  if (ctx->inputs[i]->dtype != ctx->inputs[j]->dtype && ctx->inputs[i]->dtype != OWB_TYPE_UNDEFINED
      && ctx->inputs[j]->dtype != OWB_TYPE_UNDEFINED)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d is %s but input %d is %s", i,
                           owb_data_type_name (ctx->inputs[i]->dtype), j, owb_data_type_name (ctx->inputs[j]->dtype));
      return FALSE;
    }
  return TRUE;
}

static gboolean
infer_conv (OwbInferContext *ctx, GError **error)
{
  if (!check_same_dtype (ctx, 0, 1, error))
    return FALSE;
  if (ctx->n_inputs > 2 && ctx->inputs[2] && !check_same_dtype (ctx, 0, 2, error))
    return FALSE;
  return _owb_infer_conv_like (ctx, 0, 1, 2, FALSE, ctx->inputs[0]->dtype, error);
}

static gboolean
infer_conv_transpose (OwbInferContext *ctx, GError **error)
{
  if (!check_same_dtype (ctx, 0, 1, error))
    return FALSE;
  if (ctx->n_inputs > 2 && ctx->inputs[2] && !check_same_dtype (ctx, 0, 2, error))
    return FALSE;
  return _owb_infer_conv_like (ctx, 0, 1, 2, TRUE, ctx->inputs[0]->dtype, error);
}

static gboolean
is_8bit (OwbDataType t)
{
  return t == OWB_TYPE_UINT8 || t == OWB_TYPE_INT8 || t == OWB_TYPE_UNDEFINED;
}

/* Integer ops take uint8/int8 data and zero points of the same type as their data input. */
static gboolean
check_integer_inputs (OwbInferContext *ctx, GError **error)
{
  for (int i = 0; i < 2; i++)
    if (!is_8bit (ctx->inputs[i]->dtype))
      {
        owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d must be uint8 or int8, got %s", i,
                             owb_data_type_name (ctx->inputs[i]->dtype));
        return FALSE;
      }
  for (int i = 2; i < ctx->n_inputs && i < 4; i++)
    if (ctx->inputs[i] && !check_same_dtype (ctx, i - 2, i, error))
      return FALSE;
  return TRUE;
}

static gboolean
infer_conv_integer (OwbInferContext *ctx, GError **error)
{
  if (!check_integer_inputs (ctx, error))
    return FALSE;
  if (ctx->n_inputs > 2 && ctx->inputs[2] && ctx->inputs[2]->rank > 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "x_zero_point must be a scalar, got rank %d",
                           ctx->inputs[2]->rank);
      return FALSE;
    }
  return _owb_infer_conv_like (ctx, 0, 1, -1, FALSE, OWB_TYPE_INT32, error);
}

/* numpy.matmul shapes: 1-D operands gain (and then lose) a unit axis; batch axes broadcast. */
static gboolean
infer_matmul_shape (OwbInferContext *ctx, OwbDataType out_dtype, GError **error)
{
  const OwbValueType *a = ctx->inputs[0], *b = ctx->inputs[1];
  OwbValueType *y = &ctx->outputs[0];
  owb_value_type_init_unknown (y);
  y->kind = OWB_VALUE_TENSOR;
  y->dtype = out_dtype;
  if (a->rank == 0 || b->rank == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "MatMul operands must have rank >= 1, got ranks %d and %d",
                           a->rank, b->rank);
      return FALSE;
    }
  if (a->rank < 0 || b->rank < 0)
    return TRUE;
  OwbDim ak = a->dims[a->rank - 1];
  OwbDim bk = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
  if (owb_dim_is_known (ak) && owb_dim_is_known (bk) && ak.value != bk.value)
    {
      char *sa = owb_value_type_to_string (a), *sb = owb_value_type_to_string (b);
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "inner dimensions differ: %s x %s", sa, sb);
      g_free (sa);
      g_free (sb);
      return FALSE;
    }
  OwbValueType ba, bb, bo;
  owb_value_type_init_unknown (&ba);
  owb_value_type_init_unknown (&bb);
  ba.rank = MAX (a->rank - 2, 0);
  bb.rank = MAX (b->rank - 2, 0);
  for (int i = 0; i < ba.rank; i++)
    ba.dims[i] = a->dims[i];
  for (int i = 0; i < bb.rank; i++)
    bb.dims[i] = b->dims[i];
  const OwbValueType *batch[2] = { &ba, &bb };
  if (!owb_infer_broadcast (ctx, 2, batch, &bo, error))
    return FALSE;
  int rank = bo.rank;
  for (int i = 0; i < bo.rank; i++)
    y->dims[i] = bo.dims[i];
  if (a->rank >= 2)
    y->dims[rank++] = a->dims[a->rank - 2];
  if (b->rank >= 2)
    y->dims[rank++] = b->dims[b->rank - 1];
  y->rank = rank;
  return TRUE;
}

static gboolean
infer_matmul (OwbInferContext *ctx, GError **error)
{
  if (!check_same_dtype (ctx, 0, 1, error))
    return FALSE;
  return infer_matmul_shape (ctx, ctx->inputs[0]->dtype, error);
}

static gboolean
infer_matmul_integer (OwbInferContext *ctx, GError **error)
{
  if (!check_integer_inputs (ctx, error))
    return FALSE;
  return infer_matmul_shape (ctx, OWB_TYPE_INT32, error);
}

static gboolean
infer_gemm (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *a = ctx->inputs[0], *b = ctx->inputs[1];
  const OwbValueType *c = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  OwbValueType *y = &ctx->outputs[0];
  if (!check_same_dtype (ctx, 0, 1, error) || (c && !check_same_dtype (ctx, 0, 2, error)))
    return FALSE;
  owb_value_type_init_unknown (y);
  y->kind = OWB_VALUE_TENSOR;
  y->dtype = a->dtype;
  y->rank = 2;
  if ((a->rank >= 0 && a->rank != 2) || (b->rank >= 0 && b->rank != 2))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "A and B must be 2-D, got ranks %d and %d", a->rank, b->rank);
      return FALSE;
    }
  gboolean ta = owb_node_get_int (ctx->node, "transA", 0) != 0;
  gboolean tb = owb_node_get_int (ctx->node, "transB", 0) != 0;
  OwbDim m = _owb_infer_dim (a, ta ? 1 : 0), ka = _owb_infer_dim (a, ta ? 0 : 1);
  OwbDim kb = _owb_infer_dim (b, tb ? 1 : 0), n = _owb_infer_dim (b, tb ? 0 : 1);
  if (owb_dim_is_known (ka) && owb_dim_is_known (kb) && ka.value != kb.value)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "inner dimensions differ: A gives K = %" G_GINT64_FORMAT ", B gives K = %" G_GINT64_FORMAT
                           " (transA=%d, transB=%d)",
                           ka.value, kb.value, ta, tb);
      return FALSE;
    }
  y->dims[0] = m;
  y->dims[1] = n;
  if (c && c->rank >= 0)
    {
      /* C broadcasts one way into [M, N]. */
      if (c->rank > 2)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "C must have rank <= 2, got %d", c->rank);
          return FALSE;
        }
      for (int i = 0; i < c->rank; i++)
        {
          OwbDim cd = c->dims[i], od = y->dims[2 - c->rank + i];
          if (owb_dim_is_known (cd) && cd.value != 1 && owb_dim_is_known (od) && cd.value != od.value)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                                   "C dim %d (%" G_GINT64_FORMAT ") does not broadcast to %" G_GINT64_FORMAT, i,
                                   cd.value, od.value);
              return FALSE;
            }
        }
    }
  return TRUE;
}

/* Gemm before opset 11 requires C; the kernel is the same. */
const OwbOpSchema _owb_ops_nn[] = {
  { "Conv", "", 1, 2, 3, 1, 1, infer_conv },
  { "ConvTranspose", "", 1, 2, 3, 1, 1, infer_conv_transpose },
  { "ConvInteger", "", 10, 2, 4, 1, 1, infer_conv_integer },
  { "MatMul", "", 1, 2, 2, 1, 1, infer_matmul },
  { "MatMulInteger", "", 10, 2, 4, 1, 1, infer_matmul_integer },
  { "Gemm", "", 1, 3, 3, 1, 1, infer_gemm },
  { "Gemm", "", 11, 2, 3, 1, 1, infer_gemm },
  { NULL }
};
