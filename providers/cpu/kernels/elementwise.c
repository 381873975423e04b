/* elementwise.c: CPU kernels of the elementwise op family. */
#include "../cpu-kernels-private.h"

const OwbKernelDef _owb_cpu_kernels_elementwise[] = {
  { NULL }
};
