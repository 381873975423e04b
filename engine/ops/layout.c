/* layout.c: schemas of the engine's channels-last ops (domain ai.onnx.workbench), which the layout
 * optimization level puts between NCHW<->NHWC Transposes: NhwcConv, NhwcConvTranspose, NhwcMaxPool,
 * NhwcAveragePool, NhwcGlobalAveragePool, NhwcPointwiseDepthwise and NhwcQLinearConv. Each infers through the standard op on the NCHW view of its input. */
#include "owb-ops-private.h"
#include "owb-fused-activation-private.h"
#include <owb/owb-error.h>

#include <string.h>

/* NHWC -> NCHW and back, on 4-D types. */
static void
to_nchw (const OwbValueType *in, OwbValueType *out)
{
  *out = *in;
  out->dims[1] = in->dims[3];
  out->dims[2] = in->dims[1];
  out->dims[3] = in->dims[2];
}

static void
to_nhwc (OwbValueType *t)
{
  if (t->rank != 4)
    return;
  OwbDim c = t->dims[1];
  t->dims[1] = t->dims[2];
  t->dims[2] = t->dims[3];
  t->dims[3] = c;
}

static gboolean
check_rank4 (OwbInferContext *ctx, int i, const char *what, GError **error)
{
  const OwbValueType *t = ctx->inputs[i];
  if (t && t->rank >= 0 && t->rank != 4)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "%s must have rank 4 (NHWC), got rank %d", what, t->rank);
      return FALSE;
    }
  return TRUE;
}

/* Input 9, Table, when present: a QLinearLookup fused into the node (fuse_qconv_lookup), 256
 * values of the output's type. Checked once the output's type is known. */
static gboolean
check_table (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *table = ctx->n_inputs > 9 ? ctx->inputs[9] : NULL;
  if (!table || table->dtype == OWB_TYPE_UNDEFINED)
    return TRUE;
  gboolean shape_ok = table->rank < 0
                      || (table->rank == 1 && (!owb_dim_is_known (table->dims[0]) || table->dims[0].value == 256));
  if (table->dtype != ctx->outputs[0].dtype || !shape_ok)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "Table must hold 256 values of Y's type %s (got %s)",
                           owb_data_type_name (ctx->outputs[0].dtype), owb_data_type_name (table->dtype));
      return FALSE;
    }
  return TRUE;
}

/* W's NCHW view for Conv ([kH, kW, C/group, M] viewed as [M, C/group, kH, kW]) and for
 * ConvTranspose ([C, kH, kW, M/group] viewed as [C, M/group, kH, kW]): view dim i is W's dim perm[i]. */
static const int conv_w_view[4] = { 3, 2, 0, 1 };
static const int conv_transpose_w_view[4] = { 0, 3, 1, 2 };

/* Infers as the standard op `op_type` on NCHW views of the first n inputs (W's through w_view; X
 * as it is when x_nchw), then returns the output to NHWC. */
static gboolean
infer_via (OwbInferContext *ctx, const char *op_type, int opset, int n, const int *w_view, gboolean x_nchw,
           GError **error)
{
  const OwbOpSchema *schema = owb_op_schema_lookup ("", op_type, opset);
  g_assert (schema && schema->infer);
  /* Up to X, W and B: Conv's three inputs (B, of rank 1, passes through unchanged). */
  OwbValueType views[3];
  const OwbValueType *ins[3] = { NULL, NULL, NULL };
  const OwbTensor *values[3] = { NULL, NULL, NULL };
  g_assert (n <= 3);
  for (int i = 0; i < n; i++)
    {
      const OwbValueType *t = ctx->inputs[i];
      if (!t || t->rank != 4)
        {
          ins[i] = t;
          continue;
        }
      if (i == 0 && x_nchw)
        views[i] = *t;
      else if (i == 0)
        to_nchw (t, &views[i]);
      else
        {
          views[i] = *t;
          for (int d = 0; d < 4; d++)
            views[i].dims[d] = t->dims[w_view[d]];
        }
      ins[i] = &views[i];
    }
  OwbInferContext sub = *ctx;
  sub.opset = opset; /* the standard op's rules at that version, not our domain's version 1 */
  sub.n_inputs = n;
  sub.inputs = ins;
  /* Shapes never depend on the values here, and the values are in the other layout. */
  sub.input_values = values;
  sub.input_data = NULL;
  if (!schema->infer (&sub, error))
    return FALSE;
  if (!check_table (ctx, error))
    return FALSE;
  to_nhwc (&ctx->outputs[0]);
  return TRUE;
}

/* The activation named by attribute `attr`, if any, is one the fused ops know. */
static gboolean
check_activation (OwbInferContext *ctx, const char *attr, GError **error)
{
  const char *act = owb_node_get_string (ctx->node, attr, NULL);
  if (!act)
    return TRUE;
  if (_owb_fused_activation_find (act) >= 0)
    return TRUE;
  owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%s '%s' is not supported", attr, act);
  return FALSE;
}

/* NhwcConv (X [N, H, W, C], W [kH, kW, C/group, M], B [M]?, Z [N, OH, OW, M]?):
 * Y = activation (Conv (X, W, B) + Z) in NHWC, with Conv's and FusedConv's attributes. With
 * nchw_input = 1, X is [N, C, H, W] (an image read in place); Y is NHWC all the same. */
static gboolean
infer_nhwc_conv (OwbInferContext *ctx, GError **error)
{
  int64_t nchw_input;
  if (!_owb_infer_get_flag (ctx, "nchw_input", 0, &nchw_input, error))
    return FALSE;
  if (!check_rank4 (ctx, 0, "X", error) || !check_rank4 (ctx, 1, "W", error)
      || !check_activation (ctx, "activation", error))
    return FALSE;
  if (!infer_via (ctx, "Conv", 11, MIN (ctx->n_inputs, 3), conv_w_view, nchw_input, error))
    return FALSE;
  return _owb_infer_check_residual (ctx, ctx->n_inputs > 3 ? ctx->inputs[3] : NULL, &ctx->outputs[0], error);
}

/* NhwcPointwiseDepthwise (X [N, H, W, C], W1 [1, 1, C, E], B1 [E]?, W2 [kH, kW, 1, E], B2 [E]?):
 * a 1x1 convolution (bias B1, pointwise_activation) feeding a depthwise one (Conv's attributes with
 * group = E, bias B2, activation), in NHWC; inferred as that Conv on X with E channels. */
static gboolean
infer_nhwc_pointwise_depthwise (OwbInferContext *ctx, GError **error)
{
  if (ctx->n_inputs < 4 || !ctx->node->inputs[3][0])
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "input 3 (W2, the depthwise weight) is required");
      return FALSE;
    }
  if (!check_rank4 (ctx, 0, "X", error) || !check_rank4 (ctx, 1, "W1", error) || !check_rank4 (ctx, 3, "W2", error)
      || !check_activation (ctx, "activation", error) || !check_activation (ctx, "pointwise_activation", error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0], *w1 = ctx->inputs[1];
  if (x && w1 && x->rank == 4 && w1->rank == 4 && owb_dim_is_known (x->dims[3]) && owb_dim_is_known (w1->dims[2])
      && (x->dims[3].value != w1->dims[2].value || (owb_dim_is_known (w1->dims[0]) && w1->dims[0].value != 1)
          || (owb_dim_is_known (w1->dims[1]) && w1->dims[1].value != 1)))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "W1 must be [1, 1, %" G_GINT64_FORMAT ", E] for X's channels",
                           x->dims[3].value);
      return FALSE;
    }
  /* the pointwise output: X with W1's E channels */
  OwbValueType mid;
  const OwbValueType *ins[3] = { NULL, ctx->inputs[3], ctx->n_inputs > 4 ? ctx->inputs[4] : NULL };
  if (x && x->rank == 4)
    {
      mid = *x;
      mid.dims[3] = w1 && w1->rank == 4 ? w1->dims[3] : OWB_DIM_UNKNOWN;
      ins[0] = &mid;
    }
  else
    ins[0] = x;
  OwbInferContext sub = *ctx;
  sub.n_inputs = 3;
  sub.inputs = ins;
  return infer_via (&sub, "Conv", 11, 3, conv_w_view, FALSE, error);
}

static gboolean
infer_nhwc_pool (OwbInferContext *ctx, const char *op_type, GError **error)
{
  if (!check_rank4 (ctx, 0, "X", error))
    return FALSE;
  if (ctx->n_outputs > 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "has no Indices output");
      return FALSE;
    }
  return infer_via (ctx, op_type, 22, 1, NULL, FALSE, error);
}

static gboolean
infer_nhwc_max_pool (OwbInferContext *ctx, GError **error)
{
  return infer_nhwc_pool (ctx, "MaxPool", error);
}

static gboolean
infer_nhwc_average_pool (OwbInferContext *ctx, GError **error)
{
  return infer_nhwc_pool (ctx, "AveragePool", error);
}

/* [N, H, W, C] -> [N, 1, 1, C] */
static gboolean
infer_nhwc_global_average_pool (OwbInferContext *ctx, GError **error)
{
  if (!check_rank4 (ctx, 0, "X", error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0];
  OwbValueType *y = &ctx->outputs[0];
  *y = *x;
  if (x->rank == 4)
    {
      y->dims[1] = (OwbDim){ .value = 1 };
      y->dims[2] = (OwbDim){ .value = 1 };
    }
  return TRUE;
}

/* NhwcConvTranspose (X [N, H, W, C], W [C, kH, kW, M/group], B [M]?): ConvTranspose in NHWC, with
 * its attributes; inferred as ConvTranspose on the NCHW views (W as [C, M/group, kH, kW]). */
static gboolean
infer_nhwc_conv_transpose (OwbInferContext *ctx, GError **error)
{
  if (!check_rank4 (ctx, 0, "X", error) || !check_rank4 (ctx, 1, "W", error))
    return FALSE;
  return infer_via (ctx, "ConvTranspose", 11, MIN (ctx->n_inputs, 3), conv_transpose_w_view, FALSE, error);
}

/* NhwcQLinearConv (X [N, H, W, C], x_scale, x_zero_point, W [M, C/group, kH, kW], w_scale,
 * w_zero_point, y_scale, y_zero_point, B [M]?, Table [256]?): QLinearConv with X and Y
 * channels-last; W stays in QLinearConv's layout (the kernel packs it once). Infers as QLinearConv
 * on X's NCHW view. Table (of y_zero_point's type) is a QLinearLookup fused into the convolution
 * (fuse_qconv_lookup): each output byte y becomes Table[y]. */
static gboolean
infer_nhwc_qlinear_conv (OwbInferContext *ctx, GError **error)
{
  if (!check_rank4 (ctx, 0, "X", error))
    return FALSE;
  const OwbOpSchema *schema = owb_op_schema_lookup ("", "QLinearConv", 10);
  g_assert (schema && schema->infer);
  const OwbValueType *ins[9];
  const OwbTensor *values[9];
  int n = MIN (ctx->n_inputs, 9);
  OwbValueType xv;
  for (int i = 0; i < n; i++)
    {
      ins[i] = ctx->inputs[i];
      values[i] = ctx->input_values ? ctx->input_values[i] : NULL;
    }
  if (ins[0] && ins[0]->rank == 4)
    {
      to_nchw (ins[0], &xv);
      ins[0] = &xv;
    }
  values[0] = NULL;
  OwbInferContext sub = *ctx;
  sub.opset = 10;
  sub.n_inputs = n;
  sub.inputs = ins;
  sub.input_values = values;
  gboolean sub_ok = schema->infer (&sub, error);
  /* the inputs keep their indices: what the standard op read is what this node read */
  ctx->values_read |= sub.values_read;
  ctx->values_read_inputs |= sub.values_read_inputs;
  if (!sub_ok)
    return FALSE;
  if (!check_table (ctx, error))
    return FALSE;
  to_nhwc (&ctx->outputs[0]);
  return TRUE;
}

const OwbOpSchema _owb_ops_layout[] = {
  { "NhwcConv", OWB_DOMAIN, 1, 2, 4, 1, 1, infer_nhwc_conv },
  { "NhwcMaxPool", OWB_DOMAIN, 1, 1, 1, 1, 1, infer_nhwc_max_pool },
  { "NhwcAveragePool", OWB_DOMAIN, 1, 1, 1, 1, 1, infer_nhwc_average_pool },
  { "NhwcGlobalAveragePool", OWB_DOMAIN, 1, 1, 1, 1, 1, infer_nhwc_global_average_pool },
  { "NhwcConvTranspose", OWB_DOMAIN, 1, 2, 3, 1, 1, infer_nhwc_conv_transpose },
  { "NhwcQLinearConv", OWB_DOMAIN, 1, 8, 10, 1, 1, infer_nhwc_qlinear_conv },
  /* B1 may be "": the schema requires X and W1, inference W2 */
  { "NhwcPointwiseDepthwise", OWB_DOMAIN, 1, 2, 5, 1, 1, infer_nhwc_pointwise_depthwise },
  { NULL }
};
