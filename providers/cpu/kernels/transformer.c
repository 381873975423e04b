/* transformer.c: CPU kernels of the transformer op family. */
#include "../cpu-kernels-private.h"

const OwbKernelDef _owb_cpu_kernels_transformer[] = {
  { NULL }
};
