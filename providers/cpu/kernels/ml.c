/* ml.c: CPU kernels of the ml op family. */
#include "../cpu-kernels-private.h"

const OwbKernelDef _owb_cpu_kernels_ml[] = {
  { NULL }
};
