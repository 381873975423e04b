/* cuda-helpers.c: what the CUDA kernels share: the context of the device a kernel runs on, status
 * codes as errors naming the node, outputs, the workspace and broadcasting. */
#include "cuda-private.h"
#include "../../engine/ops/owb-fused-activation-private.h"

#include <math.h>
#include <string.h>

OwbCudaContext *
_owb_cuda_context (OwbKernelContext *ctx, GError **error)
{
  if (!ctx->device || !ctx->device->priv)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_DEVICE, "a CUDA kernel was run without its CUDA device");
      return NULL;
    }
  return ctx->device->priv;
}

gboolean
_owb_cuda_check (OwbKernelContext *ctx, GError **error, cudaError_t status, const char *what)
{
  if (status == cudaSuccess)
    return TRUE;
  owb_kernel_set_error (ctx, error, status == cudaErrorMemoryAllocation ? OWB_ERROR_NOMEM : OWB_ERROR_DEVICE,
                        "%s: CUDA error %s (%s)", what, cudaGetErrorName (status), cudaGetErrorString (status));
  return FALSE;
}

gboolean
_owb_cuda_check_blas (OwbKernelContext *ctx, GError **error, cublasStatus_t status, const char *what)
{
  if (status == CUBLAS_STATUS_SUCCESS)
    return TRUE;
  owb_kernel_set_error (ctx, error, status == CUBLAS_STATUS_ALLOC_FAILED ? OWB_ERROR_NOMEM : OWB_ERROR_DEVICE,
                        "%s: cuBLAS status %d", what, (int) status);
  return FALSE;
}

gboolean
_owb_cuda_check_dnn (OwbKernelContext *ctx, GError **error, cudnnStatus_t status, const char *what)
{
  if (status == CUDNN_STATUS_SUCCESS)
    return TRUE;
  owb_kernel_set_error (ctx, error, OWB_ERROR_DEVICE, "%s: cuDNN error %s", what, cudnnGetErrorString (status));
  return FALSE;
}

gboolean
_owb_cuda_float_type (OwbKernelContext *ctx, OwbDataType dtype, OwbCudaFloat *t, GError **error)
{
  if (dtype == OWB_TYPE_FLOAT)
    *t = OWB_CUDA_F32;
  else if (dtype == OWB_TYPE_FLOAT16)
    *t = OWB_CUDA_F16;
  else
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "the CUDA kernel takes float and float16, not %s",
                            owb_data_type_name (dtype));
      return FALSE;
    }
  return TRUE;
}

gboolean
_owb_cuda_axis (OwbKernelContext *ctx, int64_t axis, int rank, int *out, GError **error)
{
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "axis out of range for rank %d", rank);
      return FALSE;
    }
  *out = (int) axis;
  return TRUE;
}

OwbTensor *
_owb_cuda_output (OwbKernelContext *ctx, int i, OwbDataType dtype, int rank, const int64_t *dims, GError **error)
{
  OwbDevice *where = (ctx->host_outputs & (G_GUINT64_CONSTANT (1) << i)) ? NULL : ctx->device;
  OwbTensor *have = ctx->outputs[i];
  if (have && have->kind == OWB_VALUE_TENSOR && have->dtype == dtype && have->rank == rank && have->device == where
      && (rank == 0 || memcmp (have->dims, dims, sizeof (int64_t) * rank) == 0))
    return have;
  return owb_kernel_context_new_output (ctx, i, dtype, rank, dims, error);
}

void *
_owb_cuda_workspace (OwbCudaContext *cx, gsize size, GError **error)
{
  if (size <= cx->workspace_size && cx->workspace)
    return cx->workspace;
  /* Work already queued may still use the old buffer: let it finish before freeing it. */
  if (cx->workspace)
    {
      cudaStreamSynchronize (cx->stream);
      cudaFree (cx->workspace);
      cx->workspace = NULL;
      cx->workspace_size = 0;
    }
  gsize want = MAX (size, (gsize) 32 << 20);
  cudaError_t st = cudaMalloc (&cx->workspace, want);
  if (st != cudaSuccess)
    {
      cx->workspace = NULL;
      g_set_error (error, OWB_ERROR, OWB_ERROR_NOMEM, "cannot allocate a CUDA workspace of %" G_GSIZE_FORMAT " bytes: %s",
                   want, cudaGetErrorString (st));
      return NULL;
    }
  cx->workspace_size = want;
  return cx->workspace;
}

gboolean
_owb_cuda_copy_device (OwbKernelContext *ctx, OwbCudaContext *cx, void *dst, const void *src, gsize n, GError **error)
{
  if (n == 0 || dst == src)
    return TRUE;
  return _owb_cuda_check (ctx, error, cudaMemcpyAsync (dst, src, n, cudaMemcpyDeviceToDevice, cx->stream), "copy");
}

gboolean
_owb_cuda_broadcast_map (int out_rank, const int64_t *out_dims, int n_inputs, const OwbTensor *const *inputs,
                         OwbCudaBroadcast *map)
{
  memset (map, 0, sizeof *map);
  /* Axes of size 1 in the output move nothing: drop them, so that ranks up to 16 with unit axes fit. */
  int keep[OWB_MAX_RANK], n_keep = 0;
  for (int d = 0; d < out_rank; d++)
    if (out_dims[d] != 1)
      keep[n_keep++] = d;
  if (n_keep > OWB_CUDA_MAX_RANK)
    return FALSE;
  map->rank = MAX (n_keep, 1);
  map->dims[0] = 1;
  for (int k = 0; k < n_keep; k++)
    map->dims[k] = out_dims[keep[k]];
  for (int i = 0; i < n_inputs; i++)
    {
      const OwbTensor *t = inputs[i];
      int64_t stride = 1;
      int64_t strides[OWB_MAX_RANK] = { 0 };
      for (int d = t->rank - 1; d >= 0; d--)
        {
          int od = out_rank - t->rank + d;
          strides[od] = t->dims[d] == 1 ? 0 : stride;
          stride *= t->dims[d];
        }
      for (int k = 0; k < n_keep; k++)
        map->strides[i][k] = strides[keep[k]];
    }
  return TRUE;
}

gboolean
_owb_cuda_broadcast_shape (OwbKernelContext *ctx, int n_inputs, const OwbTensor *const *inputs, int *rank,
                           int64_t *dims, GError **error)
{
  int r = 0;
  for (int i = 0; i < n_inputs; i++)
    r = MAX (r, inputs[i]->rank);
  for (int d = 0; d < r; d++)
    dims[d] = 1;
  for (int i = 0; i < n_inputs; i++)
    for (int d = 0; d < inputs[i]->rank; d++)
      {
        int od = r - inputs[i]->rank + d;
        int64_t v = inputs[i]->dims[d];
        if (v == dims[od] || v == 1)
          continue;
        if (dims[od] == 1)
          {
            dims[od] = v;
            continue;
          }
        owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "inputs do not broadcast: axis %d has %" G_GINT64_FORMAT
                              " and %" G_GINT64_FORMAT, od, dims[od], v);
        return FALSE;
      }
  *rank = r;
  return TRUE;
}

gboolean
_owb_cuda_activation (const OwbNode *node, OwbCudaUnaryOp *kind, float *p0, float *p1, char **why)
{
  /* OwbCudaUnaryOp of each OwbFusedActivation */
  static const OwbCudaUnaryOp kinds[OWB_FUSED_ACT_N] = {
    [OWB_FUSED_ACT_RELU] = OWB_CUDA_UNARY_RELU,
    [OWB_FUSED_ACT_LEAKY_RELU] = OWB_CUDA_UNARY_LEAKY_RELU,
    [OWB_FUSED_ACT_CLIP] = OWB_CUDA_UNARY_CLIP,
    [OWB_FUSED_ACT_SIGMOID] = OWB_CUDA_UNARY_SIGMOID,
    [OWB_FUSED_ACT_TANH] = OWB_CUDA_UNARY_TANH,
    [OWB_FUSED_ACT_HARD_SIGMOID] = OWB_CUDA_UNARY_HARD_SIGMOID,
    [OWB_FUSED_ACT_HARD_SWISH] = OWB_CUDA_UNARY_HARD_SWISH,
    [OWB_FUSED_ACT_SWISH] = OWB_CUDA_UNARY_SWISH,
    [OWB_FUSED_ACT_GELU] = OWB_CUDA_UNARY_GELU,
    [OWB_FUSED_ACT_FAST_GELU] = OWB_CUDA_UNARY_GELU_TANH,
  };
  *kind = OWB_CUDA_UNARY_IDENTITY;
  *p0 = *p1 = 0;
  const char *name = owb_node_get_string (node, "activation", NULL);
  if (!name)
    return TRUE;
  int n = 0;
  const float *params = owb_node_get_floats (node, "activation_params", &n);
  int i = _owb_fused_activation_find (name);
  if (i >= 0 && !(params && n != _owb_fused_activations[i].n_params))
    {
      *kind = kinds[i];
      *p0 = (float) (params && n > 0 ? params[0] : _owb_fused_activations[i].p0);
      *p1 = (float) (params && n > 1 ? params[1] : _owb_fused_activations[i].p1);
      return TRUE;
    }
  if (why)
    *why = g_strdup_printf ("the CUDA %s has no activation '%s' with these parameters", node->op_type, name);
  return FALSE;
}
