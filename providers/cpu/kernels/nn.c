/* nn.c: CPU kernels of the nn op family. */
#include "../cpu-kernels-private.h"

const OwbKernelDef _owb_cpu_kernels_nn[] = {
  { NULL }
};
