/* signal.c: CPU kernels of the signal op family. */
#include "../cpu-kernels-private.h"

const OwbKernelDef _owb_cpu_kernels_signal[] = {
  { NULL }
};
