/* reduce.c: CPU kernels of the reduce op family. */
#include "../cpu-kernels-private.h"

const OwbKernelDef _owb_cpu_kernels_reduce[] = {
  { NULL }
};
