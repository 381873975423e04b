/* owb-passes.c: every optimizer pass, in the order they run. Basic passes come first, with
 * shape_simplify right after folding so that Reshape targets it makes constant are seen by
 * eliminate_noops. Among the extended ones, weight folds run before fusions and activation fusion
 * runs last, so that Conv + Add + Relu ends as one node. */
#include "owb-optimizer-private.h"

extern const OwbPass _owb_pass_constant_folding;
extern const OwbPass _owb_pass_eliminate_noops;
extern const OwbPass _owb_pass_shape_simplify;
extern const OwbPass _owb_pass_common_subexpression;
extern const OwbPass _owb_pass_constant_sharing;
extern const OwbPass _owb_pass_dead_code;
extern const OwbPass _owb_pass_fuse_conv_bn;
extern const OwbPass _owb_pass_batchnorm_to_conv;
extern const OwbPass _owb_pass_fuse_conv_mul;
extern const OwbPass _owb_pass_fuse_conv_add;
extern const OwbPass _owb_pass_fuse_qdq_matmul;
extern const OwbPass _owb_pass_fuse_qdq_conv;
extern const OwbPass _owb_pass_fuse_qdq_lookup;
extern const OwbPass _owb_pass_fuse_dynamic_quant_matmul;
extern const OwbPass _owb_pass_fuse_matmul_scale;
extern const OwbPass _owb_pass_fuse_transpose_matmul;
extern const OwbPass _owb_pass_fuse_matmul_add;
extern const OwbPass _owb_pass_fuse_layernorm;
extern const OwbPass _owb_pass_fuse_gelu;
extern const OwbPass _owb_pass_fuse_bias_gelu;
extern const OwbPass _owb_pass_fuse_skip_layernorm;
extern const OwbPass _owb_pass_fuse_attention;
extern const OwbPass _owb_pass_fuse_activation;
extern const OwbPass _owb_pass_fold_dequantized_weights;
extern const OwbPass _owb_pass_layout_nhwc;
extern const OwbPass _owb_pass_fuse_pointwise_depthwise;
extern const OwbPass _owb_pass_fuse_qconv_lookup;

const OwbPass *const _owb_passes[] = {
  &_owb_pass_constant_folding,
  &_owb_pass_shape_simplify,
  &_owb_pass_eliminate_noops,
  &_owb_pass_constant_sharing,
  &_owb_pass_common_subexpression,
  &_owb_pass_dead_code,
  &_owb_pass_fuse_conv_bn,
  &_owb_pass_batchnorm_to_conv,
  &_owb_pass_fuse_conv_mul,
  &_owb_pass_fuse_conv_add,
  &_owb_pass_fuse_qdq_matmul,
  &_owb_pass_fuse_qdq_conv,
  &_owb_pass_fuse_qdq_lookup,
  &_owb_pass_fuse_dynamic_quant_matmul,
  &_owb_pass_fuse_matmul_scale,
  &_owb_pass_fuse_transpose_matmul,
  &_owb_pass_fuse_matmul_add,
  &_owb_pass_fuse_layernorm,
  &_owb_pass_fuse_gelu,
  &_owb_pass_fuse_bias_gelu,
  &_owb_pass_fuse_skip_layernorm,
  &_owb_pass_fuse_attention,
  &_owb_pass_fuse_activation,
  &_owb_pass_fold_dequantized_weights,
  &_owb_pass_layout_nhwc,
  &_owb_pass_fuse_pointwise_depthwise,
  &_owb_pass_fuse_qconv_lookup,
};

const guint _owb_n_passes = G_N_ELEMENTS (_owb_passes);
