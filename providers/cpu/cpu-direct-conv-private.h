/* cpu-direct-conv-private.h: 2-D float convolutions with few input channels (an image's RGB stem)
 * computed straight from X, without an im2col matrix: X may be NHWC or NCHW, Y is NHWC. */
#pragma once

#include "cpu-conv-private.h"
#include "cpu-sgemm-private.h"

/* Input and output channels up to which the direct kernel runs an NHWC convolution in place of
 * im2col + GEMM. With more input channels im2col copies long contiguous runs; with more output
 * channels its cost is small beside the GEMM's, and the GEMM splits columns over the threads where
 * the direct kernel splits output rows: vit_b_32's 32x32 stride-32 patch embedding (3 -> 768, 7 rows
 * of 7 pixels) ran 2.8 ms direct against 1.8 through im2col at 2 threads. */
#define OWB_DIRECT_CONV_MAX_C 4
#define OWB_DIRECT_CONV_MAX_M 64

/* TRUE when `w` (NhwcConv's weight [kH, kW, C, M] packed as a [kH kW C, M] GEMM operand) fits the
 * convolution g: one group, 2-D, K and N matching. */
gboolean _owb_direct_conv_suits (const OwbCpuConvGeom *g, const OwbSgemmPacked *w);

/* Y [N, OH, OW, M] = conv (X, W) + bias + z, X [N, H, W, C] or, when x_nchw, [N, C, H, W]; bias and
 * z may be NULL; rows_fn (may be NULL) runs on each output row once its values are final. Output rows
 * are split over the pool. */
void _owb_direct_conv_run (OwbThreadPool *pool, const OwbSgemmPacked *w, const OwbCpuConvGeom *g, const float *x,
                           gboolean x_nchw, const float *bias, const float *z, float *y, OwbSgemmRowsFunc rows_fn,
                           gconstpointer rows_data);
