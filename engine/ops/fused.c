/* fused.c: schemas and shape inference of the engine's own fused ops (domain ai.onnx.workbench):
 * FusedConv, FusedMatMul and FusedGemm, which the optimizer makes from a Conv/MatMul/Gemm and the
 * bias, residual Add and activation that follow it. Shapes are those of the standard op. */
#include "owb-ops-private.h"
#include "owb-fused-activation-private.h"
#include <owb/owb-error.h>

#include <string.h>

static gboolean
check_activation (OwbInferContext *ctx, GError **error)
{
  const OwbAttribute *attr = owb_node_get_attribute (ctx->node, "activation");
  int n = 0;
  const float *params = owb_node_get_floats (ctx->node, "activation_params", &n);
  if (!attr)
    {
      if (params && n > 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "activation_params given without an activation");
          return FALSE;
        }
      return TRUE;
    }
  if (attr->type != OWB_ATTR_STRING)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute activation must be a string");
      return FALSE;
    }
  int i = _owb_fused_activation_find (attr->s);
  if (i < 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "activation '%s' is not one of " OWB_FUSED_ACTIVATION_NAMES,
                           attr->s);
      return FALSE;
    }
  if (params && n != _owb_fused_activations[i].n_params)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "activation %s takes %d activation_params, got %d",
                           attr->s, _owb_fused_activations[i].n_params, n);
      return FALSE;
    }
  return TRUE;
}

/* Runs the inference of a standard op on (part of) this node's inputs. */
static gboolean
infer_as (OwbInferContext *ctx, const char *op_type, int opset, int n_inputs, const OwbValueType *const *inputs,
          GError **error)
{
  const OwbOpSchema *schema = owb_op_schema_lookup ("", op_type, opset);
  g_assert (schema && schema->infer);
  const OwbTensor *values[3] = { NULL, NULL, NULL };
  OwbInferContext sub = *ctx;
  sub.n_inputs = n_inputs;
  sub.inputs = inputs;
  /* The standard ops' shapes never depend on input values; values of transposed inputs would lie. */
  sub.input_values = values;
  sub.input_data = NULL;
  return schema->infer (&sub, error);
}

static gboolean
same_dim (OwbDim a, OwbDim b)
{
  if (owb_dim_is_known (a) && owb_dim_is_known (b))
    return a.value == b.value;
  return TRUE;
}

/* FusedConv (X, W, B?, Z?): Y = activation (Conv (X, W, B) + Z), Z of Y's exact shape. */
static gboolean
infer_fused_conv (OwbInferContext *ctx, GError **error)
{
  if (!check_activation (ctx, error))
    return FALSE;
  if (!infer_as (ctx, "Conv", 11, MIN (ctx->n_inputs, 3), ctx->inputs, error))
    return FALSE;
  return _owb_infer_check_residual (ctx, ctx->n_inputs > 3 ? ctx->inputs[3] : NULL, &ctx->outputs[0], error);
}

/* The type of a MatMul operand after the optional transposition of its last two axes. */
static void
transposed (const OwbValueType *in, gboolean trans, OwbValueType *out)
{
  *out = *in;
  if (trans && in->rank >= 2)
    {
      out->dims[in->rank - 2] = in->dims[in->rank - 1];
      out->dims[in->rank - 1] = in->dims[in->rank - 2];
    }
}

/* FusedMatMul (A, B, bias?): Y = activation (alpha * op(A) op(B) + bias), numpy.matmul batching;
 * op transposes the last two axes when transA/transB is set; bias has shape [N]. */
static gboolean
infer_fused_matmul (OwbInferContext *ctx, GError **error)
{
  if (!check_activation (ctx, error))
    return FALSE;
  gboolean ta = owb_node_get_int (ctx->node, "transA", 0) != 0;
  gboolean tb = owb_node_get_int (ctx->node, "transB", 0) != 0;
  OwbValueType a, b;
  transposed (ctx->inputs[0], ta, &a);
  transposed (ctx->inputs[1], tb, &b);
  if ((ta && a.rank == 1) || (tb && b.rank == 1))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "transA/transB need an operand of rank >= 2");
      return FALSE;
    }
  const OwbValueType *ab[2] = { &a, &b };
  if (!infer_as (ctx, "MatMul", 13, 2, ab, error))
    return FALSE;
  const OwbValueType *bias = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  if (!bias)
    return TRUE;
  const OwbValueType *y = &ctx->outputs[0];
  if (bias->dtype != OWB_TYPE_UNDEFINED && y->dtype != OWB_TYPE_UNDEFINED && bias->dtype != y->dtype)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "bias is %s but the product is %s",
                           owb_data_type_name (bias->dtype), owb_data_type_name (y->dtype));
      return FALSE;
    }
  if (bias->rank >= 0 && bias->rank != 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "bias must have rank 1 ([N]), got rank %d", bias->rank);
      return FALSE;
    }
  if (bias->rank == 1 && y->rank >= 1 && !same_dim (bias->dims[0], y->dims[y->rank - 1]))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "bias has %" G_GINT64_FORMAT " values for %" G_GINT64_FORMAT " output columns",
                           bias->dims[0].value, y->dims[y->rank - 1].value);
      return FALSE;
    }
  return TRUE;
}

/* FusedGemm: Y = activation (Gemm (A, B, C)) with Gemm's attributes. */
static gboolean
infer_fused_gemm (OwbInferContext *ctx, GError **error)
{
  if (!check_activation (ctx, error))
    return FALSE;
  return infer_as (ctx, "Gemm", 13, ctx->n_inputs, ctx->inputs, error);
}

const OwbOpSchema _owb_ops_fused[] = {
  { "FusedConv", OWB_DOMAIN, 1, 2, 4, 1, 1, infer_fused_conv },
  { "FusedMatMul", OWB_DOMAIN, 1, 2, 3, 1, 1, infer_fused_matmul },
  { "FusedGemm", OWB_DOMAIN, 1, 2, 3, 1, 1, infer_fused_gemm },
  { NULL }
};
