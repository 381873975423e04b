/* device.c: the ops a session inserts where a value moves between host and device memory
 * (owb-provider.h). They copy their input unchanged; they exist so that the session's graph, the
 * claim map and the profiler show every crossing, as ONNX Runtime's MemcpyToHost/MemcpyFromHost. */
#include "owb-ops-private.h"
#include <owb/owb-op.h>

static gboolean
infer_memcpy (OwbInferContext *ctx, GError **error)
{
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

const OwbOpSchema _owb_ops_device[] = {
  { "MemcpyFromHost", OWB_DOMAIN, 1, 1, 1, 1, 1, infer_memcpy },
  { "MemcpyToHost", OWB_DOMAIN, 1, 1, 1, 1, 1, infer_memcpy },
  { NULL }
};
