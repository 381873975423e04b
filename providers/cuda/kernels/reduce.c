/* reduce.c: the CUDA provider's reductions: the Reduce* family over any axes, Softmax and
 * LogSoftmax, and GlobalAveragePool / GlobalMaxPool as reductions over the spatial axes. */
#include "../cuda-private.h"

#include <string.h>

typedef struct {
  const char *op;
  OwbCudaReduceOp kind;
  int axes_input_since; /* opset from which axes come from input 1 */
} ReduceInfo;

static const ReduceInfo reduce_ops[] = {
  { "ReduceSum", OWB_CUDA_REDUCE_SUM, 13 },
  { "ReduceMean", OWB_CUDA_REDUCE_MEAN, 18 },
  { "ReduceMax", OWB_CUDA_REDUCE_MAX, 18 },
  { "ReduceMin", OWB_CUDA_REDUCE_MIN, 18 },
  { "ReduceProd", OWB_CUDA_REDUCE_PROD, 18 },
  { "ReduceSumSquare", OWB_CUDA_REDUCE_SUM_SQUARE, 18 },
  { "ReduceL1", OWB_CUDA_REDUCE_L1, 18 },
  { "ReduceL2", OWB_CUDA_REDUCE_L2, 18 },
  { "ReduceLogSum", OWB_CUDA_REDUCE_LOG_SUM, 18 },
  { "ReduceLogSumExp", OWB_CUDA_REDUCE_LOG_SUM_EXP, 18 },
};

static const ReduceInfo *
reduce_info (const char *op)
{
  for (guint i = 0; i < G_N_ELEMENTS (reduce_ops); i++)
    if (strcmp (reduce_ops[i].op, op) == 0)
      return &reduce_ops[i];
  return NULL;
}

/* Reduces x over the axes marked in `reduce` into output 0 (kept axes of size 1 when keepdims). */
static gboolean
run_reduce (OwbKernelContext *ctx, OwbCudaReduceOp kind, const gboolean *reduce, gboolean keepdims, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const OwbTensor *x = ctx->inputs[0];
  OwbCudaFloat t;
  if (!cx || !_owb_cuda_float_type (ctx, x->dtype, &t, error))
    return FALSE;
  int64_t strides[OWB_MAX_RANK], s = 1;
  for (int d = x->rank - 1; d >= 0; d--)
    {
      strides[d] = s;
      s *= x->dims[d];
    }
  OwbCudaReduceMap map = { 0 };
  int64_t dims[OWB_MAX_RANK], n_out = 1, n_red = 1;
  int rank = 0;
  for (int d = 0; d < x->rank; d++)
    {
      if (reduce[d])
        {
          if (keepdims)
            dims[rank++] = 1;
          n_red *= x->dims[d];
          if (x->dims[d] != 1)
            {
              if (map.red_rank == OWB_CUDA_MAX_RANK)
                goto too_many;
              map.red_dims[map.red_rank] = x->dims[d];
              map.red_strides[map.red_rank++] = strides[d];
            }
        }
      else
        {
          dims[rank++] = x->dims[d];
          n_out *= x->dims[d];
          if (x->dims[d] != 1)
            {
              if (map.keep_rank == OWB_CUDA_MAX_RANK)
                goto too_many;
              map.keep_dims[map.keep_rank] = x->dims[d];
              map.keep_strides[map.keep_rank++] = strides[d];
            }
        }
    }
  OwbTensor *y = _owb_cuda_output (ctx, 0, x->dtype, rank, dims, error);
  if (!y)
    return FALSE;
  return _owb_cuda_check (ctx, error, _owb_cuda_reduce (t, kind, x->data, y->data, n_out, n_red, &map, cx->stream),
                          "reduce kernel");
too_many:
  owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "the CUDA reduction handles at most %d axes", OWB_CUDA_MAX_RANK);
  return FALSE;
}

static gboolean
compute_reduce (OwbKernelContext *ctx, GError **error)
{
  const ReduceInfo *info = reduce_info (ctx->node->op_type);
  const OwbTensor *x = ctx->inputs[0];
  gboolean keepdims = owb_node_get_int (ctx->node, "keepdims", 1) != 0;
  g_autofree int64_t *axes = NULL;
  int64_t n = 0;
  if (ctx->opset >= info->axes_input_since)
    {
      const OwbTensor *a = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
      if (a)
        {
          if (a->device || a->dtype != OWB_TYPE_INT64)
            {
              owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "axes must be int64 in host memory");
              return FALSE;
            }
          n = a->nelems;
          axes = g_memdup2 (a->data, sizeof (int64_t) * MAX (n, 1));
        }
    }
  else
    {
      int na = 0;
      const int64_t *a = owb_node_get_ints (ctx->node, "axes", &na);
      if (a)
        {
          axes = g_memdup2 (a, sizeof (int64_t) * na);
          n = na;
        }
    }
  gboolean reduce[OWB_MAX_RANK] = { FALSE };
  if (n == 0)
    {
      if (ctx->opset >= info->axes_input_since && owb_node_get_int (ctx->node, "noop_with_empty_axes", 0) != 0)
        {
          OwbCudaContext *cx = _owb_cuda_context (ctx, error);
          OwbTensor *y = cx ? _owb_cuda_output (ctx, 0, x->dtype, x->rank, x->dims, error) : NULL;
          return y && _owb_cuda_copy_device (ctx, cx, y->data, x->data, x->nbytes, error);
        }
      for (int d = 0; d < x->rank; d++)
        reduce[d] = TRUE;
    }
  for (int64_t k = 0; k < n; k++)
    {
      int64_t a = axes[k] < 0 ? axes[k] + x->rank : axes[k];
      if (a < 0 || a >= x->rank)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "axis %" G_GINT64_FORMAT " out of range for rank %d",
                                axes[k], x->rank);
          return FALSE;
        }
      reduce[a] = TRUE;
    }
  return run_reduce (ctx, info->kind, reduce, keepdims, error);
}

static gboolean
compute_global_pool (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  if (x->rank < 3)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "X must be [N, C, spatial...], got rank %d", x->rank);
      return FALSE;
    }
  gboolean reduce[OWB_MAX_RANK] = { FALSE };
  for (int d = 2; d < x->rank; d++)
    reduce[d] = TRUE;
  gboolean is_max = strcmp (ctx->node->op_type, "GlobalMaxPool") == 0;
  return run_reduce (ctx, is_max ? OWB_CUDA_REDUCE_MAX : OWB_CUDA_REDUCE_MEAN, reduce, TRUE, error);
}

static gboolean
compute_softmax (OwbKernelContext *ctx, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const OwbTensor *x = ctx->inputs[0];
  OwbCudaFloat t;
  if (!cx || !_owb_cuda_float_type (ctx, x->dtype, &t, error))
    return FALSE;
  gboolean old = ctx->opset < 13;
  int64_t axis = owb_node_get_int (ctx->node, "axis", old ? 1 : -1);
  if (axis < 0)
    axis += x->rank;
  if (x->rank == 0 ? axis != 0 && axis != -1 : (axis < 0 || axis >= x->rank))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "axis out of range for rank %d", x->rank);
      return FALSE;
    }
  int64_t outer = 1, len = 1, inner = 1;
  for (int d = 0; d < x->rank; d++)
    {
      if (d < axis)
        outer *= x->dims[d];
      else if (d == axis || old)
        len *= x->dims[d];
      else
        inner *= x->dims[d];
    }
  OwbTensor *y = _owb_cuda_output (ctx, 0, x->dtype, x->rank, x->dims, error);
  gboolean log_form = strcmp (ctx->node->op_type, "LogSoftmax") == 0;
  return y && _owb_cuda_check (ctx, error,
                               _owb_cuda_softmax (t, log_form, x->data, y->data, outer, len, inner, cx->stream),
                               "softmax kernel");
}

char *
_owb_cuda_reduce_check (const OwbNode *node, int opset, const OwbValueType *const *in, const OwbValueType *out)
{
  const ReduceInfo *info = reduce_info (node->op_type);
  if (info && in[0] && in[0]->rank > OWB_MAX_RANK)
    return g_strdup ("rank too high");
  return NULL;
}

#define FLOATS OWB_CUDA_TYPES_FLOAT
#define REDUCE(name) { name, "", 1, 0, FLOATS, 0, NULL, NULL, compute_reduce }

const OwbKernelDef _owb_cuda_kernels_reduce[] = {
  REDUCE ("ReduceSum"), REDUCE ("ReduceMean"), REDUCE ("ReduceMax"), REDUCE ("ReduceMin"), REDUCE ("ReduceProd"),
  REDUCE ("ReduceSumSquare"), REDUCE ("ReduceL1"), REDUCE ("ReduceL2"), REDUCE ("ReduceLogSum"),
  REDUCE ("ReduceLogSumExp"),
  { "GlobalAveragePool", "", 1, 0, FLOATS, 0, NULL, NULL, compute_global_pool },
  { "GlobalMaxPool", "", 1, 0, FLOATS, 0, NULL, NULL, compute_global_pool },
  { "Softmax", "", 1, 0, FLOATS, 0, NULL, NULL, compute_softmax },
  { "LogSoftmax", "", 1, 0, FLOATS, 0, NULL, NULL, compute_softmax },
  { NULL }
};
