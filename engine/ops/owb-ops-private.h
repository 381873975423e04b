/* owb-ops-private.h: the schema tables of each op family, gathered by owb-op-registry.c. Each
 * table ends with a row whose op_type is NULL. */
#pragma once

#include <owb/owb-op.h>

#include "../owb-tensor-private.h"

extern const OwbOpSchema _owb_ops_elementwise[];
extern const OwbOpSchema _owb_ops_nn[];
extern const OwbOpSchema _owb_ops_tensor[];
extern const OwbOpSchema _owb_ops_reduce[];
extern const OwbOpSchema _owb_ops_resize[];
extern const OwbOpSchema _owb_ops_rnn[];
extern const OwbOpSchema _owb_ops_norm[];
extern const OwbOpSchema _owb_ops_fused_transformer[];
extern const OwbOpSchema _owb_ops_fused[];
extern const OwbOpSchema _owb_ops_ml[];
extern const OwbOpSchema _owb_ops_control[];
extern const OwbOpSchema _owb_ops_signal[];
extern const OwbOpSchema _owb_ops_image_decoder[];
extern const OwbOpSchema _owb_ops_quant[];
extern const OwbOpSchema _owb_ops_misc[];
extern const OwbOpSchema _owb_ops_transformer[];
extern const OwbOpSchema _owb_ops_layout[];
extern const OwbOpSchema _owb_ops_device[];

/* Helpers shared by the schemas of more than one family (owb-infer-helpers.c). */

/* Reads the known value of input i as integers into vals (at most max); FALSE if the value is not
 * known. *n receives the element count; more than max elements is an error. */
gboolean _owb_infer_read_input_ints (OwbInferContext *ctx, int i, int64_t *vals, int max, int *n, gboolean *known,
                                     GError **error);
/* Normalises axes into [0, rank) and marks them in mask; errors on out-of-range or repeated axes. */
gboolean _owb_infer_axes_to_mask (OwbInferContext *ctx, const int64_t *axes, int n, int rank, gboolean *mask,
                                  GError **error);
/* Reads a convolution's ints attribute (kernel_shape, strides, pads...) of exactly `want` values,
 * each in [lo, 2^31], or fills `out` with def when it is absent (*present, when given, says which);
 * an error names the attribute otherwise. Conv, QLinearConv and DeformConv read theirs alike. */
gboolean _owb_infer_get_conv_ints (OwbInferContext *ctx, const char *name, int want, int64_t def, int64_t lo,
                                   int64_t *out, gboolean *present, GError **error);
/* Conv's shape inference (nn.c) over inputs x_input (X), w_input (W) and bias_input (B, -1 for
 * none): ranks, kernel_shape against W, groups and channels, bias length, and the output
 * [N, M, spatial...] of type out_dtype. Conv, ConvTranspose, ConvInteger and QLinearConv. */
gboolean _owb_infer_conv_like (OwbInferContext *ctx, int x_input, int w_input, int bias_input, gboolean transpose,
                               OwbDataType out_dtype, GError **error);

/* Whether input i's element type is one `ok` accepts (skipped while the input or its type is
 * unknown); otherwise an OWB_ERROR_TYPE "input i must be <what>, not <type>". */
gboolean _owb_infer_check_input_type (OwbInferContext *ctx, int i, gboolean (*ok) (OwbDataType), const char *what,
                                      GError **error);
/* Two dims that must agree: FALSE with an OWB_ERROR_SHAPE "<what>: A and B differ" when both are
 * known and differ (an unknown one passes). */
gboolean _owb_infer_check_same_dim (OwbInferContext *ctx, OwbDim a, OwbDim b, const char *what, GError **error);
/* A flag attribute (default def) is 0 or 1; an OWB_ERROR_INVALID_MODEL "NAME must be 0 or 1, not V"
 * otherwise. *out (when not NULL) gets it. */
gboolean _owb_infer_get_flag (OwbInferContext *ctx, const char *name, int64_t def, int64_t *out, GError **error);
/* The normalizations' epsilon attribute (default 1e-5) is a finite number >= 0; an
 * OWB_ERROR_INVALID_MODEL otherwise. */
gboolean _owb_infer_check_epsilon (OwbInferContext *ctx, GError **error);
/* The element count of a tensor type: known when every dim is (and the product fits an int64),
 * the one dim itself (perhaps symbolic) at rank 1, else unknown. */
OwbDim _owb_infer_element_count (const OwbValueType *t);
/* t becomes a tensor of dtype and rank `rank`, its dims unknown. */
void _owb_infer_set_tensor (OwbValueType *t, OwbDataType dtype, int rank);
/* A fused convolution's residual Z (NULL: none) against its output y: the same element type
 * (an OWB_ERROR_TYPE otherwise) and shape where both are known (OWB_ERROR_SHAPE); y then takes
 * the dims only Z knows (a symbolic batch size). FusedConv and its NHWC form. */
gboolean _owb_infer_check_residual (OwbInferContext *ctx, const OwbValueType *z, OwbValueType *y, GError **error);
/* Dim i of a tensor type; unknown where the rank is unknown or too small (or t is NULL). */
OwbDim _owb_infer_dim (const OwbValueType *t, int i);
