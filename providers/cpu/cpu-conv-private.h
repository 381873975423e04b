/* cpu-conv-private.h: the Conv-family attributes and geometry shared by the CPU kernels of Conv,
 * ConvTranspose, ConvInteger (nn.c) and FusedConv (fused.c), so every one validates and sizes a
 * convolution the same way. */
#pragma once

#include "cpu-kernels-private.h"

typedef enum { OWB_CPU_PAD_NOTSET, OWB_CPU_PAD_SAME_UPPER, OWB_CPU_PAD_SAME_LOWER, OWB_CPU_PAD_VALID } OwbCpuAutoPad;

/* Conv-family attributes, parsed once by prepare; lengths are checked against the rank at run time. */
typedef struct {
  int64_t group;
  OwbCpuAutoPad auto_pad;
  int n_strides, n_dilations, n_pads, n_output_padding, n_output_shape, n_kernel;
  int64_t kernel[OWB_MAX_RANK];
  int64_t strides[OWB_MAX_RANK];
  int64_t dilations[OWB_MAX_RANK];
  int64_t pads[2 * OWB_MAX_RANK];
  int64_t output_padding[OWB_MAX_RANK];
  int64_t output_shape[OWB_MAX_RANK + 2];
} OwbCpuConvParams;

/* A convolution resolved for concrete shapes. For ConvTranspose `in` is X's spatial size and `out`
 * Y's, like for Conv; pad holds the begin padding (may be negative for ConvTranspose). */
typedef struct {
  int nsp;
  int64_t N, C, M, group, Cg, Mg;
  int64_t in[OWB_MAX_RANK], out[OWB_MAX_RANK], k[OWB_MAX_RANK], s[OWB_MAX_RANK], d[OWB_MAX_RANK], pad[OWB_MAX_RANK];
  int64_t in_size, out_size, ksize;
} OwbCpuConvGeom;

/* Parses group, auto_pad, kernel_shape, strides, dilations, pads, output_padding and output_shape,
 * refusing out-of-range values with an error naming the node. */
gboolean _owb_cpu_conv_params_parse (const OwbNode *node, OwbCpuConvParams *p, GError **error);
/* Resolves the geometry of a Conv (transpose FALSE) or ConvTranspose from the actual shapes, and
 * checks it against the output that inference allocated. */
gboolean _owb_cpu_conv_geometry (OwbKernelContext *ctx, const OwbCpuConvParams *p, const OwbTensor *x,
                                 const OwbTensor *w, const OwbTensor *y, gboolean transpose, OwbCpuConvGeom *g,
                                 GError **error);
/* A Conv's optional bias B (NULL passes): a vector of g->M values of type dtype; otherwise an
 * OWB_ERROR_SHAPE. */
gboolean _owb_cpu_conv_check_bias (OwbKernelContext *ctx, const OwbTensor *b, const OwbCpuConvGeom *g, OwbDataType dtype,
                                   GError **error);
/* The NCHW view of a rank-4 NHWC tensor header (dims only; data untouched), so the channels-last
 * kernels share the Conv geometry above. */
OwbTensor _owb_cpu_conv_nchw_view (const OwbTensor *t);
/* [lo, hi): the positions j in [0, n) with 0 <= j * s + off < limit. */
void _owb_cpu_conv_valid_range (int64_t off, int64_t s, int64_t limit, int64_t n, int64_t *lo, int64_t *hi);

/* Called on the output rows of a depthwise convolution right after they are computed (bias
 * included), while they are in cache: `row` holds `n` values at element `offset` of Y (one or more
 * whole rows of one plane). */
typedef void (*OwbCpuRowEpilogue) (void *row, int64_t offset, int64_t n, gconstpointer data);

/* TRUE when the direct depthwise kernel runs this convolution: 1-D or 2-D, one input channel per
 * group (group == C; any number of output channels per group). */
gboolean _owb_cpu_conv_is_depthwise (const OwbCpuConvGeom *g);
/* Y = conv (X, W) + bias for float or double buffers, planes split over the pool; bias and
 * epilogue may be NULL. cpu-depthwise.c. */
void _owb_cpu_depthwise_conv (OwbThreadPool *pool, const OwbCpuConvGeom *g, OwbDataType dtype, const void *x,
                              const void *w, const void *bias, void *y, OwbCpuRowEpilogue epilogue,
                              gconstpointer epilogue_data);
