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

/* A group of nodes one provider runs as one kernel (owb-provider.h, claim_group); its body attribute
 * holds them. The kernel makes its outputs: their shapes are the body's business. */
static gboolean
infer_device_group (OwbInferContext *ctx, GError **error)
{
  return TRUE;
}

const OwbOpSchema _owb_ops_device[] = {
  { "DeviceGroup", OWB_DOMAIN, 1, 0, -1, 1, -1, infer_device_group },
  { "MemcpyFromHost", OWB_DOMAIN, 1, 1, 1, 1, 1, infer_memcpy },
  { "MemcpyToHost", OWB_DOMAIN, 1, 1, 1, 1, 1, infer_memcpy },
  { NULL }
};
