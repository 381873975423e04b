/* image-decoder.c: schema and shape inference of ImageDecoder (opset 20): an encoded image stream
 * to an [H, W, C] uint8 tensor. The kernel is providers/cpu/kernels/image-decoder.c. */
#include "owb-ops-private.h"
#include <owb/owb-error.h>

#include <string.h>

static gboolean
infer_image_decoder (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  const char *fmt = owb_node_get_string (ctx->node, "pixel_format", "RGB");
  if (strcmp (fmt, "RGB") != 0 && strcmp (fmt, "BGR") != 0 && strcmp (fmt, "Grayscale") != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute pixel_format = '%s' is not RGB, BGR or "
                           "Grayscale", fmt);
      return FALSE;
    }
  if (x->dtype != OWB_TYPE_UINT8 && x->dtype != OWB_TYPE_UNDEFINED)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input encoded_stream must be uint8, got %s",
                           owb_data_type_name (x->dtype));
      return FALSE;
    }
  if (x->rank >= 0 && x->rank != 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input encoded_stream must have rank 1, got rank %d", x->rank);
      return FALSE;
    }
  /* Height and width come from the decoded stream, so they stay unknown even at run time. */
  OwbValueType *y = &ctx->outputs[0];
  owb_value_type_init_unknown (y);
  y->kind = OWB_VALUE_TENSOR;
  y->dtype = OWB_TYPE_UINT8;
  y->rank = 3;
  y->dims[0] = y->dims[1] = OWB_DIM_UNKNOWN;
  y->dims[2] = OWB_DIM_VALUE (strcmp (fmt, "Grayscale") == 0 ? 1 : 3);
  return TRUE;
}

const OwbOpSchema _owb_ops_image_decoder[] = {
  { "ImageDecoder", "", 20, 1, 1, 1, 1, infer_image_decoder },
  { NULL }
};
