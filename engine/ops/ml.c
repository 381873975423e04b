/* ml.c: schemas and shape inference of the ml op family. */
#include "owb-ops-private.h"

const OwbOpSchema _owb_ops_ml[] = {
  { NULL }
};
