/* norm.c: the CUDA provider's normalisations: LayerNormalization (ai.onnx and the engine's),
 * SkipLayerNormalization, RMSNormalization and inference BatchNormalization. */
#include "../cuda-private.h"

#include <string.h>

static gboolean
same_type (OwbKernelContext *ctx, const OwbTensor *x, const OwbTensor *p, const char *what, int64_t n, GError **error)
{
  if (!p)
    return TRUE;
  if (p->dtype != x->dtype || p->nelems != n)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "%s must be %s with %" G_GINT64_FORMAT " values (has %s, %" G_GINT64_FORMAT ")",
                            what, owb_data_type_name (x->dtype), n, owb_data_type_name (p->dtype), p->nelems);
      return FALSE;
    }
  return TRUE;
}

/* Output i when wanted: float statistics of shape [leading..., 1...] (LayerNormalization) */
static gboolean
stats_output (OwbKernelContext *ctx, int i, const OwbTensor *x, int axis, float **data, GError **error)
{
  *data = NULL;
  if (i >= ctx->n_outputs || !ctx->output_wanted || !ctx->output_wanted[i])
    return TRUE;
  int64_t dims[OWB_MAX_RANK];
  for (int d = 0; d < x->rank; d++)
    dims[d] = d < axis ? x->dims[d] : 1;
  OwbTensor *t = _owb_cuda_output (ctx, i, OWB_TYPE_FLOAT, x->rank, dims, error);
  if (!t)
    return FALSE;
  *data = t->data;
  return TRUE;
}

/* LayerNormalization (X, Scale, B?) over axes [axis, rank); RMSNormalization (X, scale) the same
 * without the mean. */
static gboolean
compute_layer_norm (OwbKernelContext *ctx, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const OwbTensor *x = ctx->inputs[0], *scale = ctx->inputs[1];
  const OwbTensor *bias = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  OwbCudaFloat t;
  gboolean rms = strcmp (ctx->node->op_type, "RMSNormalization") == 0;
  if (!cx || !_owb_cuda_float_type (ctx, x->dtype, &t, error))
    return FALSE;
  int axis;
  if (!_owb_cuda_axis (ctx, owb_node_get_int (ctx->node, "axis", -1), x->rank, &axis, error))
    return FALSE;
  int64_t rows = 1, cols = 1;
  for (int d = 0; d < x->rank; d++)
    {
      if (d < axis)
        rows *= x->dims[d];
      else
        cols *= x->dims[d];
    }
  if (!same_type (ctx, x, scale, "Scale", cols, error) || !same_type (ctx, x, bias, "B", cols, error))
    return FALSE;
  float epsilon = owb_node_get_float (ctx->node, "epsilon", 1e-5f);
  OwbTensor *y = _owb_cuda_output (ctx, 0, x->dtype, x->rank, x->dims, error);
  float *mean = NULL, *inv = NULL;
  if (!y || (!rms && (!stats_output (ctx, 1, x, (int) axis, &mean, error) || !stats_output (ctx, 2, x, (int) axis, &inv, error))))
    return FALSE;
  return _owb_cuda_check (ctx, error,
                          _owb_cuda_layer_norm (t, rms, x->data, NULL, 0, NULL, scale->data, bias ? bias->data : NULL,
                                                y->data, mean, inv, NULL, rows, cols, epsilon, cx->stream),
                          "layer normalisation kernel");
}

/* SkipLayerNormalization (input, skip, gamma, beta?, bias?) over the last axis: outputs output,
 * mean, inv_std_var, input_skip_bias_sum. */
static gboolean
compute_skip_layer_norm (OwbKernelContext *ctx, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const OwbTensor *x = ctx->inputs[0], *skip = ctx->inputs[1], *gamma = ctx->inputs[2];
  const OwbTensor *beta = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  const OwbTensor *bias = ctx->n_inputs > 4 ? ctx->inputs[4] : NULL;
  OwbCudaFloat t;
  if (!cx || !_owb_cuda_float_type (ctx, x->dtype, &t, error))
    return FALSE;
  if (x->rank < 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have rank >= 1");
      return FALSE;
    }
  int64_t cols = x->dims[x->rank - 1], rows = cols ? x->nelems / cols : 0;
  if (!same_type (ctx, x, gamma, "gamma", cols, error) || !same_type (ctx, x, beta, "beta", cols, error)
      || !same_type (ctx, x, bias, "bias", cols, error))
    return FALSE;
  if (skip->dtype != x->dtype || skip->nelems == 0 || cols == 0 || skip->nelems % cols != 0
      || rows % (skip->nelems / cols) != 0)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "skip must be rows of input's last axis that repeat over input");
      return FALSE;
    }
  float epsilon = owb_node_get_float (ctx->node, "epsilon", 1e-5f);
  OwbTensor *y = _owb_cuda_output (ctx, 0, x->dtype, x->rank, x->dims, error);
  float *mean = NULL, *inv = NULL;
  void *sum = NULL;
  if (!y || !stats_output (ctx, 1, x, x->rank - 1, &mean, error) || !stats_output (ctx, 2, x, x->rank - 1, &inv, error))
    return FALSE;
  if (ctx->n_outputs > 3 && ctx->output_wanted && ctx->output_wanted[3])
    {
      OwbTensor *s = _owb_cuda_output (ctx, 3, x->dtype, x->rank, x->dims, error);
      if (!s)
        return FALSE;
      sum = s->data;
    }
  return _owb_cuda_check (ctx, error,
                          _owb_cuda_layer_norm (t, FALSE, x->data, skip->data, skip->nelems / cols,
                                                bias ? bias->data : NULL, gamma->data, beta ? beta->data : NULL,
                                                y->data, mean, inv, sum, rows, cols, epsilon, cx->stream),
                          "skip layer normalisation kernel");
}

static gboolean
compute_batch_norm (OwbKernelContext *ctx, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const OwbTensor *x = ctx->inputs[0];
  OwbCudaFloat t;
  if (!cx || !_owb_cuda_float_type (ctx, x->dtype, &t, error))
    return FALSE;
  if (x->rank < 2)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "X must be [N, C, ...], got rank %d", x->rank);
      return FALSE;
    }
  int64_t c = x->dims[1], inner = 1;
  for (int d = 2; d < x->rank; d++)
    inner *= x->dims[d];
  static const char *const names[] = { "scale", "B", "input_mean", "input_var" };
  for (int i = 1; i <= 4; i++)
    if (!same_type (ctx, x, ctx->inputs[i], names[i - 1], c, error))
      return FALSE;
  float epsilon = owb_node_get_float (ctx->node, "epsilon", 1e-5f);
  OwbTensor *y = _owb_cuda_output (ctx, 0, x->dtype, x->rank, x->dims, error);
  return y && _owb_cuda_check (ctx, error,
                               _owb_cuda_batch_norm (t, x->data, ctx->inputs[1]->data, ctx->inputs[2]->data,
                                                     ctx->inputs[3]->data, ctx->inputs[4]->data, y->data, x->dims[0],
                                                     c, inner, epsilon, cx->stream),
                               "batch normalisation kernel");
}

char *
_owb_cuda_norm_check (const OwbNode *node, int opset, const OwbValueType *const *in, const OwbValueType *out)
{
  const char *op = node->op_type;
  if (strcmp (op, "BatchNormalization") == 0)
    {
      if (owb_node_get_int (node, "training_mode", 0) != 0)
        return g_strdup ("the CUDA BatchNormalization is for inference (training_mode=0)");
      for (int i = 1; i < 5 && i < node->n_inputs; i++)
        if (in[i] && in[0] && in[i]->dtype != in[0]->dtype)
          return g_strdup ("the CUDA BatchNormalization needs parameters of X's type");
      return NULL;
    }
  if ((strcmp (op, "LayerNormalization") == 0 || strcmp (op, "RMSNormalization") == 0) && node->n_inputs > 1 && in[0]
      && in[1] && in[1]->dtype != in[0]->dtype)
    return g_strdup_printf ("the CUDA %s needs a scale of X's type", op);
  if (strcmp (op, "LayerNormalization") == 0 && owb_node_get_int (node, "stash_type", 1) != 1)
    return g_strdup ("the CUDA LayerNormalization computes in float (stash_type=1)");
  return NULL;
}

#define FLOATS OWB_CUDA_TYPES_FLOAT

const OwbKernelDef _owb_cuda_kernels_norm[] = {
  { "LayerNormalization", "", 17, 0, FLOATS, 0, NULL, NULL, compute_layer_norm },
  { "LayerNormalization", OWB_DOMAIN, 1, 0, FLOATS, 0, NULL, NULL, compute_layer_norm },
  { "RMSNormalization", "", 23, 0, FLOATS, 0, NULL, NULL, compute_layer_norm },
  { "SkipLayerNormalization", OWB_DOMAIN, 1, 0, FLOATS, 0, NULL, NULL, compute_skip_layer_norm },
  { "BatchNormalization", "", 9, 0, FLOATS, 0, NULL, NULL, compute_batch_norm },
  { NULL }
};
