/* control.c: CPU kernels of the control op family. */
#include "../cpu-kernels-private.h"

const OwbKernelDef _owb_cpu_kernels_control[] = {
  { NULL }
};
