/* signal.c: schemas and shape inference of the signal op family. */
#include "owb-ops-private.h"

const OwbOpSchema _owb_ops_signal[] = {
  { NULL }
};
