/* transformer.c: schemas and shape inference of the transformer op family. */
#include "owb-ops-private.h"

const OwbOpSchema _owb_ops_transformer[] = {
  { NULL }
};
