/* tensor.c: CPU kernels of the tensor op family. */
#include "../cpu-kernels-private.h"

const OwbKernelDef _owb_cpu_kernels_tensor[] = {
  { NULL }
};
