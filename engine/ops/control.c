/* control.c: schemas and shape inference of the control op family. */
#include "owb-ops-private.h"

const OwbOpSchema _owb_ops_control[] = {
  { NULL }
};
