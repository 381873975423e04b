/* fused.c: schemas and shape inference of the engine's own fused ops (domain ai.onnx.workbench). */
#include "owb-ops-private.h"

const OwbOpSchema _owb_ops_fused[] = {
  { NULL }
};
