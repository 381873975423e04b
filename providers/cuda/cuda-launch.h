/* cuda-launch.h: the device code's interface (kernels/ *-device.cu). Plain C on both sides: the
 * .cu files see no GLib and no OwbTensor, only pointers, counts and index maps, so nvcc compiles
 * small files and the host code (kernels/ *.c, compiled by cc) keeps every shape check and error
 * message. Every launcher enqueues on `stream` and returns the launch's cudaError_t. */
#pragma once

#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OWB_CUDA_MAX_RANK 8

/* Element types the math kernels take (stored type; they compute in float). */
typedef enum {
  OWB_CUDA_F32,
  OWB_CUDA_F16,
} OwbCudaFloat;

/* Element types Cast converts between. */
typedef enum {
  OWB_CUDA_CAST_F32,
  OWB_CUDA_CAST_F16,
  OWB_CUDA_CAST_F64,
  OWB_CUDA_CAST_I8,
  OWB_CUDA_CAST_U8,
  OWB_CUDA_CAST_I32,
  OWB_CUDA_CAST_I64,
  OWB_CUDA_CAST_BOOL,
} OwbCudaCastType;

/* An iteration over `dims` (row-major, rank <= OWB_CUDA_MAX_RANK) reading element
 * src_offset + sum(i_k * src_strides[k]) and writing dst_offset + sum(i_k * dst_strides[k]).
 * Strides are in elements and may be 0 (broadcast) or negative (Slice with a negative step). */
typedef struct {
  int rank;
  int64_t dims[OWB_CUDA_MAX_RANK];
  int64_t src_strides[OWB_CUDA_MAX_RANK];
  int64_t dst_strides[OWB_CUDA_MAX_RANK];
  int64_t src_offset;
  int64_t dst_offset;
} OwbCudaCopyMap;

/* Input strides of a broadcast over the output shape (row-major output, contiguous). */
typedef struct {
  int rank;
  int64_t dims[OWB_CUDA_MAX_RANK];
  int64_t strides[3][OWB_CUDA_MAX_RANK]; /* per input (up to three: Where) */
} OwbCudaBroadcast;

typedef enum {
  OWB_CUDA_UNARY_IDENTITY,
  OWB_CUDA_UNARY_RELU,
  OWB_CUDA_UNARY_LEAKY_RELU,  /* p0 alpha */
  OWB_CUDA_UNARY_CLIP,        /* p0 min, p1 max */
  OWB_CUDA_UNARY_SIGMOID,
  OWB_CUDA_UNARY_TANH,
  OWB_CUDA_UNARY_HARD_SIGMOID, /* p0 alpha, p1 beta */
  OWB_CUDA_UNARY_HARD_SWISH,   /* p0 alpha, p1 beta: x * HardSigmoid (x) */
  OWB_CUDA_UNARY_SWISH,        /* x * sigmoid (p0 x) */
  OWB_CUDA_UNARY_GELU,         /* erf form */
  OWB_CUDA_UNARY_GELU_TANH,    /* tanh approximation (FastGelu, Gelu approximate="tanh") */
  OWB_CUDA_UNARY_ELU,          /* p0 alpha */
  OWB_CUDA_UNARY_SELU,         /* p0 alpha, p1 gamma */
  OWB_CUDA_UNARY_CELU,         /* p0 alpha */
  OWB_CUDA_UNARY_SOFTPLUS,
  OWB_CUDA_UNARY_SOFTSIGN,
  OWB_CUDA_UNARY_MISH,
  OWB_CUDA_UNARY_THRESHOLDED_RELU, /* p0 alpha */
  OWB_CUDA_UNARY_EXP,
  OWB_CUDA_UNARY_LOG,
  OWB_CUDA_UNARY_SQRT,
  OWB_CUDA_UNARY_RECIPROCAL,
  OWB_CUDA_UNARY_ABS,
  OWB_CUDA_UNARY_NEG,
  OWB_CUDA_UNARY_ERF,
  OWB_CUDA_UNARY_FLOOR,
  OWB_CUDA_UNARY_CEIL,
  OWB_CUDA_UNARY_ROUND, /* half to even */
  OWB_CUDA_UNARY_SIGN,
  OWB_CUDA_UNARY_SIN,
  OWB_CUDA_UNARY_COS,
} OwbCudaUnaryOp;

typedef enum {
  OWB_CUDA_BINARY_ADD,
  OWB_CUDA_BINARY_SUB,
  OWB_CUDA_BINARY_MUL,
  OWB_CUDA_BINARY_DIV,
  OWB_CUDA_BINARY_POW,
  OWB_CUDA_BINARY_MAX,
  OWB_CUDA_BINARY_MIN,
  OWB_CUDA_BINARY_PRELU, /* a < 0 ? a * b : a */
  /* comparisons: the output is bool (one byte) */
  OWB_CUDA_BINARY_EQUAL,
  OWB_CUDA_BINARY_LESS,
  OWB_CUDA_BINARY_LESS_OR_EQUAL,
  OWB_CUDA_BINARY_GREATER,
  OWB_CUDA_BINARY_GREATER_OR_EQUAL,
} OwbCudaBinaryOp;

/* y[i] = op (x[i]) over n elements. */
cudaError_t _owb_cuda_unary (OwbCudaFloat t, OwbCudaUnaryOp op, float p0, float p1, const void *x, void *y, int64_t n,
                             cudaStream_t stream);
/* y = op (a, b) with numpy broadcasting: map NULL when both are contiguous of n elements. */
cudaError_t _owb_cuda_binary (OwbCudaFloat t, OwbCudaBinaryOp op, const void *a, const void *b, void *y, int64_t n,
                              const OwbCudaBroadcast *map, cudaStream_t stream);
/* y[i] = act (y[i] + bias[(i / inner) % channels] + z[i]) in place; bias and z may be NULL. The
 * epilogue of Conv (inner = spatial size) and MatMul (inner = 1, channels = N). */
cudaError_t _owb_cuda_bias_activation (OwbCudaFloat t, OwbCudaUnaryOp act, float p0, float p1, void *y,
                                       const void *bias, const void *z, int64_t n, int64_t channels, int64_t inner,
                                       cudaStream_t stream);
/* out = cond ? x : y over the broadcast map (inputs 0 cond, 1 x, 2 y), elements of elem_size bytes. */
cudaError_t _owb_cuda_where (int elem_size, const uint8_t *cond, const void *x, const void *y, void *out, int64_t n,
                             const OwbCudaBroadcast *map, cudaStream_t stream);
cudaError_t _owb_cuda_cast (OwbCudaCastType from, OwbCudaCastType to, const void *x, void *y, int64_t n,
                            cudaStream_t stream);

/* The strided copy (Transpose, Slice, Expand, Concat, Split): map->dims elements of elem_size. */
cudaError_t _owb_cuda_copy_strided (int elem_size, const void *src, void *dst, const OwbCudaCopyMap *map,
                                    cudaStream_t stream);
/* out[o, j, i] = data[o, idx[j], i] for o < outer, j < n_idx, i < inner; indices (int32 or int64)
 * may be negative (counted from the end); out-of-range ones write zeros and set *bad_index (a
 * device int, may be NULL) to 1. */
cudaError_t _owb_cuda_gather (int elem_size, const void *data, const void *idx, int idx_is_64, void *out,
                              int64_t outer, int64_t axis_dim, int64_t inner, int64_t n_idx, int *bad_index,
                              cudaStream_t stream);

typedef enum {
  OWB_CUDA_REDUCE_SUM,
  OWB_CUDA_REDUCE_MEAN,
  OWB_CUDA_REDUCE_MAX,
  OWB_CUDA_REDUCE_MIN,
  OWB_CUDA_REDUCE_PROD,
  OWB_CUDA_REDUCE_SUM_SQUARE,
  OWB_CUDA_REDUCE_L1,
  OWB_CUDA_REDUCE_L2,
  OWB_CUDA_REDUCE_LOG_SUM,
  OWB_CUDA_REDUCE_LOG_SUM_EXP,
} OwbCudaReduceOp;

/* One output per element of the kept axes: y[k] = reduce over r of x[keep_offset (k) +
 * red_offset (r)]. keep_*: the kept axes (output order) with their input strides; red_*: the
 * reduced axes. n_red 0 gives the op's identity. */
typedef struct {
  int keep_rank, red_rank;
  int64_t keep_dims[OWB_CUDA_MAX_RANK], keep_strides[OWB_CUDA_MAX_RANK];
  int64_t red_dims[OWB_CUDA_MAX_RANK], red_strides[OWB_CUDA_MAX_RANK];
} OwbCudaReduceMap;
cudaError_t _owb_cuda_reduce (OwbCudaFloat t, OwbCudaReduceOp op, const void *x, void *y, int64_t n_out,
                              int64_t n_red, const OwbCudaReduceMap *map, cudaStream_t stream);

/* Softmax / LogSoftmax of x viewed as [outer, len, inner] along the middle axis. */
cudaError_t _owb_cuda_softmax (OwbCudaFloat t, int log, const void *x, void *y, int64_t outer, int64_t len,
                               int64_t inner, cudaStream_t stream);
/* Row normalisation over `cols` for `rows` rows: s = x (+ skip (+ bias)); y = (s - mean) * inv_std
 * * gamma + beta, or (simplified, RMSNorm) y = s * inv_rms * gamma. skip/bias/beta may be NULL.
 * skip has skip_rows rows (broadcast over the rows when fewer). mean / inv_std (float, one per
 * row) and sum (the type of x) are written when not NULL. */
cudaError_t _owb_cuda_layer_norm (OwbCudaFloat t, int simplified, const void *x, const void *skip, int64_t skip_rows,
                                  const void *bias, const void *gamma, const void *beta, void *y, float *mean,
                                  float *inv_std, void *sum, int64_t rows, int64_t cols, float epsilon,
                                  cudaStream_t stream);
/* Inference batch normalisation of x [n, channels, inner]; parameters have `channels` values. */
cudaError_t _owb_cuda_batch_norm (OwbCudaFloat t, const void *x, const void *scale, const void *bias,
                                  const void *mean, const void *var, void *y, int64_t n, int64_t channels,
                                  int64_t inner, float epsilon, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#ifdef __cplusplus
extern "C" {
#endif
/* Resize of the last two axes: y[p, oy, ox] = sum over a, b < 2 of hw[2 oy + a] ww[2 ox + b]
 * x[p, hi[2 oy + a], wi[2 ox + b]] for p < planes (nearest: weights 1 and 0). The tables are
 * device memory the host computed (resize.c), so CUDA resamples exactly where the CPU does. */
cudaError_t _owb_cuda_resize2d (OwbCudaFloat t, const void *x, void *y, int64_t planes, int64_t ih, int64_t iw,
                                int64_t oh, int64_t ow, const int64_t *hi, const float *hw, const int64_t *wi,
                                const float *ww, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
