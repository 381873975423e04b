/* cpu-kernels-private.h: the CPU provider's kernel tables, one per op family, and helpers
 * shared by the kernels. Each table ends with a row whose op_type is NULL. */
#pragma once

#include <owb/owb-provider.h>
#include <owb/owb-error.h>

extern const OwbKernelDef _owb_cpu_kernels_elementwise[];
extern const OwbKernelDef _owb_cpu_kernels_nn[];
extern const OwbKernelDef _owb_cpu_kernels_tensor[];
extern const OwbKernelDef _owb_cpu_kernels_reduce[];
extern const OwbKernelDef _owb_cpu_kernels_resize[];
extern const OwbKernelDef _owb_cpu_kernels_rnn[];
extern const OwbKernelDef _owb_cpu_kernels_norm[];
extern const OwbKernelDef _owb_cpu_kernels_fused_transformer[];
extern const OwbKernelDef _owb_cpu_kernels_fused[];
extern const OwbKernelDef _owb_cpu_kernels_ml[];
extern const OwbKernelDef _owb_cpu_kernels_control[];
extern const OwbKernelDef _owb_cpu_kernels_signal[];
extern const OwbKernelDef _owb_cpu_kernels_image_decoder[];
extern const OwbKernelDef _owb_cpu_kernels_quant[];
extern const OwbKernelDef _owb_cpu_kernels_misc[];
extern const OwbKernelDef _owb_cpu_kernels_transformer[];
extern const OwbKernelDef _owb_cpu_kernels_layout[];
extern const OwbKernelDef _owb_cpu_kernels_layout_deconv[];

/* One axis of a Resize as resize.c resolves it: per output index n_taps input indices and weights
 * (weight NULL for nearest), outside (NULL unless cropping) marking extrapolated ones; index NULL
 * when the axis is not resized. */
typedef struct {
  int n_taps;
  const int64_t *index;
  const double *weight;
  const guint8 *outside;
} OwbCpuResizeAxis;

/* Resize of X [N, H, W, C] (N and C not resized) over runs of contiguous channels, in the general
 * kernel's pass order (h_first: H before W). nearest: 1/2/4/8-byte elements, `fill` one element;
 * otherwise float. FALSE (nothing done) for what it does not handle. kernels/layout-deconv.c. */
gboolean _owb_cpu_resize_channels_last (OwbThreadPool *pool, const OwbTensor *x, OwbTensor *y, gboolean nearest,
                                        const OwbCpuResizeAxis *h, const OwbCpuResizeAxis *w, gboolean h_first,
                                        const void *fill, double fill_value);

/* Element offsets for numpy-style broadcasting of `in` (rank in_rank, right-aligned) against an
 * output shape: strides of length out_rank with 0 on broadcast axes. */
void _owb_cpu_broadcast_strides (int in_rank, const int64_t *in_dims, int out_rank, const int64_t *out_dims,
                                 int64_t *strides);
/* The batch of a broadcast matrix product (MatMul, FusedMatMul, QLinearMatMul): A's a_rank and
 * B's b_rank leading dims broadcast, numpy style, to the output's first `rank` dims. Whether they
 * do; *batch gets the product of those output dims. */
gboolean _owb_cpu_matmul_batch_check (int a_rank, const int64_t *a_dims, int b_rank, const int64_t *b_dims, int rank,
                                      const int64_t *dims, int64_t *batch);
/* For each of the `batch` output matrices, the element offset of the A matrix it reads (its index
 * times a_size) in a_off and of the B matrix in b_off. */
void _owb_cpu_matmul_batch_offsets (int a_rank, const int64_t *a_dims, int b_rank, const int64_t *b_dims, int rank,
                                    const int64_t *dims, int64_t batch, int64_t a_size, int64_t b_size,
                                    int64_t *a_off, int64_t *b_off);
/* A 16-byte GCC vector of T (SSE/NEON), vec_NAME, with its lane count LANES_NAME and unaligned
 * vload_NAME / vstore_NAME: the base of the per-type vector helpers a kernel file stamps with
 * OWB_CPU_FOR_FLOATS (the build's -O2 does not vectorize loops with a remainder by itself). */
#define OWB_CPU_DEFINE_VEC16(T, NAME)                                                                  \
  typedef T vec_##NAME __attribute__ ((vector_size (16)));                                             \
  enum { LANES_##NAME = 16 / sizeof (T) };                                                             \
  static inline vec_##NAME vload_##NAME (const T *p)                                                   \
  {                                                                                                    \
    vec_##NAME v;                                                                                      \
    memcpy (&v, p, sizeof v);                                                                          \
    return v;                                                                                          \
  }                                                                                                    \
  static inline void vstore_##NAME (T *p, vec_##NAME v)                                                \
  {                                                                                                    \
    memcpy (p, &v, sizeof v);                                                                          \
  }

/* Bytes per element as the kernels hold it: a pointer for strings, one byte for the sub-byte
 * types (unpacked, one element per byte). */
static inline gsize
_owb_cpu_elem_size (OwbDataType t)
{
  if (t == OWB_TYPE_STRING)
    return sizeof (char *);
  gsize s = owb_data_type_size (t);
  return s ? s : 1;
}
/* Copies n elements of es bytes; with `strings`, n string pointers whose strings are duplicated
 * (a NULL one as ""), the destination's old strings freed, so that each tensor owns its own. */
void _owb_cpu_copy_elements (void *dst, const void *src, int64_t n, gsize es, gboolean strings);
/* Row-major strides of a shape. */
void _owb_cpu_strides (int rank, const int64_t *dims, int64_t *strides);
/* The product of dims[from..to): the element count of those axes. */
static inline int64_t
_owb_cpu_product (const int64_t *dims, int from, int to)
{
  int64_t p = 1;
  for (int d = from; d < to; d++)
    p *= dims[d];
  return p;
}
/* A normalization's parameter t (Scale, B, gamma...) broadcast, right-aligned with 1s repeating,
 * over the `rank` trailing dims `dims` of X: their `count` values in a new buffer of dtype (float
 * or double). NULL without an error when t is NULL; NULL with an OWB_ERROR_SHAPE naming `what` and
 * t's shape when t does not broadcast. */
void *_owb_cpu_expand_parameter (OwbKernelContext *ctx, const OwbTensor *t, int rank, const int64_t *dims, int64_t count,
                                 OwbDataType dtype, const char *what, GError **error);
/* LayerNormalization of one contiguous row of len elements: y = (x - mean) * inv * scale + bias
 * (bias may be NULL; y may be x), inv = 1 / sqrt(var + eps), with the mean and inv in double. The
 * one row normalization of the ONNX op and of the engine's fused LayerNormalization and
 * SkipLayerNormalization (norm.c). */
void _owb_cpu_layer_norm_row_FLOAT (const float *x, float *y, int64_t len, double eps, const float *scale,
                                    const float *bias, double *mean, double *inv);
void _owb_cpu_layer_norm_row_DOUBLE (const double *x, double *y, int64_t len, double eps, const double *scale,
                                     const double *bias, double *mean, double *inv);
/* The LayerNormalization kernel (norm.c), registered for the ONNX op and the engine's own. */
gboolean _owb_cpu_layer_normalization_compute (OwbKernelContext *ctx, GError **error);
/* An axis attribute or input in [-rank, rank) made non-negative into *out; otherwise an
 * OWB_ERROR_INVALID_MODEL naming the axis and the rank. */
gboolean _owb_cpu_normalize_axis (OwbKernelContext *ctx, int64_t axis, int rank, int *out, GError **error);
/* An error naming the node (for prepare, which has no kernel context yet); returns FALSE, for
 * `return _owb_cpu_node_error (...)`. */
gboolean _owb_cpu_node_error (const OwbNode *node, GError **error, int code, const char *format, ...)
  G_GNUC_PRINTF (4, 5);
/* Scratch of `count` elements of `size` bytes whose size the model decides (an attribute, a dim
 * beside a zero-length one): checked against the session's memory limit with the run's tensors
 * and allocated with g_try_malloc, so an absurd size fails the node with OWB_ERROR_NOMEM instead
 * of aborting the process. At least one byte; free with g_free. */
void *_owb_cpu_scratch_new (OwbKernelContext *ctx, int64_t count, gsize size, const char *what, GError **error);
/* An OWB_ERROR_UNSUPPORTED_OP "type T is not supported" for a dtype the kernel has no instance of;
 * returns FALSE. */
gboolean _owb_cpu_unsupported_type (OwbKernelContext *ctx, OwbDataType t, GError **error);
/* The threads a parallel_for on `pool` runs on: 1 without a pool. */
static inline int
_owb_cpu_pool_threads (OwbThreadPool *pool)
{
  return pool ? MAX (owb_thread_pool_get_n_threads (pool), 1) : 1;
}
/* Work items per parallel chunk so that a chunk holds at least 16384 elements (fewer are not
 * worth a thread's wake-up). */
static inline int64_t
_owb_cpu_grain_for (int64_t elements_per_item)
{
  return MAX (1, 16384 / MAX (1, elements_per_item));
}
/* TRUE when the CPU runs AVX2 and FMA, the kernels' hand-vectorised paths (checked once). */
gboolean _owb_cpu_has_avx2_fma (void);
/* AVX-512 F, VL, DQ and BW, with the OS saving their registers. */
gboolean _owb_cpu_has_avx512 (void);

/* Per-dtype kernels come from these lists, not copies: X (ctype, OWB_TYPE suffix).
 * Example: #define ADD(T, N) case OWB_TYPE_##N: add_##N (...); break;  then OWB_CPU_FOR_NUMERIC (ADD)
 * float16/bfloat16 are not listed: the provider runs them through the float32 kernel. */
#define OWB_CPU_FOR_FLOATS(X) X (float, FLOAT) X (double, DOUBLE)
#define OWB_CPU_FOR_SIGNED(X) X (int8_t, INT8) X (int16_t, INT16) X (int32_t, INT32) X (int64_t, INT64)
#define OWB_CPU_FOR_UNSIGNED(X) X (uint8_t, UINT8) X (uint16_t, UINT16) X (uint32_t, UINT32) X (uint64_t, UINT64)
#define OWB_CPU_FOR_INTS(X) OWB_CPU_FOR_SIGNED (X) OWB_CPU_FOR_UNSIGNED (X)
#define OWB_CPU_FOR_NUMERIC(X) OWB_CPU_FOR_FLOATS (X) OWB_CPU_FOR_INTS (X)
#define OWB_CPU_FOR_ALL(X) OWB_CPU_FOR_NUMERIC (X) X (gboolean_u8, BOOL)
/* Calls fn_FLOAT or fn_DOUBLE, the two instances OWB_CPU_FOR_FLOATS made of a kernel, for dtype;
 * the caller has checked that dtype is one of them (another one is a bug). */
#define OWB_CPU_CALL_FLOATS(dtype, fn, ...)                                                          \
  G_STMT_START                                                                                     \
  {                                                                                                \
    if ((dtype) == OWB_TYPE_DOUBLE)                                                                \
      fn##_DOUBLE (__VA_ARGS__);                                                                   \
    else if ((dtype) == OWB_TYPE_FLOAT)                                                            \
      fn##_FLOAT (__VA_ARGS__);                                                                    \
    else                                                                                           \
      g_assert_not_reached ();                                                                     \
  }                                                                                                \
  G_STMT_END
/* bool tensors store one byte per element. */
typedef uint8_t gboolean_u8;

#define OWB_CPU_TYPES_FLOATS (OWB_TYPE_BIT (OWB_TYPE_FLOAT) | OWB_TYPE_BIT (OWB_TYPE_DOUBLE))
#define OWB_CPU_TYPES_NUMERIC (OWB_CPU_TYPES_FLOATS | OWB_TYPES_INT)
#define OWB_CPU_TYPES_ALL (OWB_CPU_TYPES_NUMERIC | OWB_TYPE_BIT (OWB_TYPE_BOOL))
