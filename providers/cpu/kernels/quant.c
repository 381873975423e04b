/* quant.c: CPU kernels of the quant op family. */
#include "../cpu-kernels-private.h"

const OwbKernelDef _owb_cpu_kernels_quant[] = {
  { NULL }
};
