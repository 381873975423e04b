/* fused-transformer.c: CPU kernels of the engine's own fused ops (domain ai.onnx.workbench). */
#include "../cpu-kernels-private.h"

const OwbKernelDef _owb_cpu_kernels_fused_transformer[] = {
  { NULL }
};
