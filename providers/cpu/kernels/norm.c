/* norm.c: CPU kernels of the norm op family. */
#include "../cpu-kernels-private.h"

const OwbKernelDef _owb_cpu_kernels_norm[] = {
  { NULL }
};
