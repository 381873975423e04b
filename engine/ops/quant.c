/* quant.c: schemas and shape inference of the quant op family. */
#include "owb-ops-private.h"

const OwbOpSchema _owb_ops_quant[] = {
  { NULL }
};
