/* cuda-private.h: what the CUDA provider's host code shares: the per-device context (stream,
 * library handles, workspace), the kernel tables, and helpers that turn CUDA, cuBLAS and cuDNN
 * status codes into GErrors naming the node. */
#pragma once

#include <owb/owb-provider.h>
#include <owb/owb-device.h>
#include <owb/owb-error.h>

#include <cublas_v2.h>
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "cuda-launch.h"

G_BEGIN_DECLS

/* One per provider: the OwbDevice the session sees (first member) and what kernels need. */
typedef struct {
  OwbDevice device;
  int ordinal;
  char name[32];
  cudaStream_t stream;
  cublasLtHandle_t lt;
  cublasHandle_t blas; /* classic cuBLAS: products cuBLASLt has no algorithm for */
  cudnnHandle_t cudnn;
  /* caching allocator: freed buffers by rounded size, reused in stream order */
  GMutex alloc_lock;
  GHashTable *cache; /* gsize (rounded) -> GSList of void * */
  gsize cached_bytes;
  /* pinned staging buffers for host copies, used in turn */
  GMutex copy_lock;
  void *staging[2];
  cudaEvent_t staging_free[2];
  /* scratch memory for cuBLASLt and cuDNN; held under workspace_lock while work that uses it is
   * enqueued */
  GMutex workspace_lock;
  void *workspace;
  gsize workspace_size;
  /* a device int for kernels that report bad indices */
  int *flag;
} OwbCudaContext;

/* The families' tables, each ending with a row whose op_type is NULL. */
extern const OwbKernelDef _owb_cuda_kernels_elementwise[];
extern const OwbKernelDef _owb_cuda_kernels_tensor[];
extern const OwbKernelDef _owb_cuda_kernels_reduce[];
extern const OwbKernelDef _owb_cuda_kernels_norm[];
extern const OwbKernelDef _owb_cuda_kernels_matmul[];
extern const OwbKernelDef _owb_cuda_kernels_conv[];
extern const OwbKernelDef _owb_cuda_kernels_attention[];
extern const OwbKernelDef _owb_cuda_kernels_resize[];

/* What a table row cannot say (attributes, ranks, input dtypes beyond the checked one): each
 * family's check returns why its kernel for the node would decline, newly allocated, or NULL when
 * it takes it (or the op is not the family's). Query only. */
typedef char *(*OwbCudaCheckFunc) (const OwbNode *node, int opset, const OwbValueType *const *input_types,
                                   const OwbValueType *output_types);
char *_owb_cuda_elementwise_check (const OwbNode *node, int opset, const OwbValueType *const *input_types,
                                   const OwbValueType *output_types);
char *_owb_cuda_tensor_check (const OwbNode *node, int opset, const OwbValueType *const *input_types,
                              const OwbValueType *output_types);
char *_owb_cuda_reduce_check (const OwbNode *node, int opset, const OwbValueType *const *input_types,
                              const OwbValueType *output_types);
char *_owb_cuda_norm_check (const OwbNode *node, int opset, const OwbValueType *const *input_types,
                            const OwbValueType *output_types);
char *_owb_cuda_matmul_check (const OwbNode *node, int opset, const OwbValueType *const *input_types,
                              const OwbValueType *output_types);
char *_owb_cuda_resize_check (const OwbNode *node, int opset, const OwbValueType *const *input_types,
                              const OwbValueType *output_types);
char *_owb_cuda_attention_check (const OwbNode *node, int opset, const OwbValueType *const *input_types,
                                 const OwbValueType *output_types);
char *_owb_cuda_conv_check (const OwbNode *node, int opset, const OwbValueType *const *input_types,
                            const OwbValueType *output_types);

/* Every table of this build, for the provider and for tests that list what CUDA claims. */
const OwbKernelDef *const *_owb_cuda_get_tables (guint *n_tables);

#define OWB_CUDA_TYPES_FLOAT (OWB_TYPE_BIT (OWB_TYPE_FLOAT) | OWB_TYPE_BIT (OWB_TYPE_FLOAT16))
/* fixed-size types the data-movement kernels take (1, 2, 4 and 8-byte words) */
#define OWB_CUDA_TYPES_COPY                                                                                      \
  (OWB_CUDA_TYPES_FLOAT | OWB_TYPE_BIT (OWB_TYPE_DOUBLE) | OWB_TYPES_INT | OWB_TYPE_BIT (OWB_TYPE_BOOL)          \
   | OWB_TYPE_BIT (OWB_TYPE_BFLOAT16))

/* The context of the device the kernel runs on; NULL with an error when the kernel was given no
 * CUDA device (a session bug). */
OwbCudaContext *_owb_cuda_context (OwbKernelContext *ctx, GError **error);
/* FALSE with an OWB_ERROR_DEVICE error naming the node and `what` unless status is success. */
gboolean _owb_cuda_check (OwbKernelContext *ctx, GError **error, cudaError_t status, const char *what);
gboolean _owb_cuda_check_blas (OwbKernelContext *ctx, GError **error, cublasStatus_t status, const char *what);
gboolean _owb_cuda_check_dnn (OwbKernelContext *ctx, GError **error, cudnnStatus_t status, const char *what);
/* Output i with this shape: the tensor the session allocated when it has that dtype and shape (and
 * lives where the kernel writes), otherwise a new one on the kernel's device (host memory when the
 * row's host_outputs names it). */
OwbTensor *_owb_cuda_output (OwbKernelContext *ctx, int i, OwbDataType dtype, int rank, const int64_t *dims,
                             GError **error);
/* OWB_CUDA_F32 / F16 for float / float16 (FALSE with an error for others). */
gboolean _owb_cuda_float_type (OwbKernelContext *ctx, OwbDataType dtype, OwbCudaFloat *t, GError **error);
/* An axis attribute in [-rank, rank) made non-negative into *out; an OWB_ERROR_SHAPE otherwise. */
gboolean _owb_cuda_axis (OwbKernelContext *ctx, int64_t axis, int rank, int *out, GError **error);
/* Scratch of at least `size` bytes; call with cx->workspace_lock held, until the work that uses it
 * is enqueued. */
void *_owb_cuda_workspace (OwbCudaContext *cx, gsize size, GError **error);
/* Device to device copy of n bytes on the stream. */
gboolean _owb_cuda_copy_device (OwbKernelContext *ctx, OwbCudaContext *cx, void *dst, const void *src, gsize n,
                                GError **error);
/* Broadcast map of up to three inputs over the output shape `dims` (numpy rules; the caller checked
 * the shapes broadcast). FALSE when the rank exceeds OWB_CUDA_MAX_RANK. */
gboolean _owb_cuda_broadcast_map (int out_rank, const int64_t *out_dims, int n_inputs, const OwbTensor *const *inputs,
                                  OwbCudaBroadcast *map);
/* Broadcast output shape of the inputs; FALSE with an error naming the node when they do not. */
gboolean _owb_cuda_broadcast_shape (OwbKernelContext *ctx, int n_inputs, const OwbTensor *const *inputs, int *rank,
                                    int64_t *dims, GError **error);

G_END_DECLS

G_BEGIN_DECLS
/* The activation of the engine's fused ops (FusedConv, FusedGemm, FusedMatMul): `activation` and
 * `activation_params` as the CPU reads them. FALSE with *why for names the CUDA kernels lack. */
gboolean _owb_cuda_activation (const OwbNode *node, OwbCudaUnaryOp *kind, float *p0, float *p1, char **why);
G_END_DECLS

G_BEGIN_DECLS
/* Row-major Y [M, N] = alpha op(A) [M, K] op(B) [K, N] (+ beta Y), on cuBLASLt (matmul.c). */
typedef struct {
  gboolean trans_a, trans_b;
  int64_t m, n, k;
  int64_t batch, stride_a, stride_b, stride_y; /* strided batch; batch 1 when none */
  float alpha, beta;   /* beta != 0: Y holds C already */
  const void *bias;    /* N values, or NULL */
  gboolean relu;       /* fused in the epilogue */
} OwbCudaProduct;
gboolean _owb_cuda_gemm (OwbKernelContext *ctx, OwbCudaContext *cx, OwbDataType dtype, const void *a, const void *b,
                         void *y, const OwbCudaProduct *p, GError **error);
G_END_DECLS
