/* fuzz-model.c: model load (protobuf, IR conversion, function expansion, validation) and shape
 * inference on arbitrary bytes. Any result is fine; a crash, a leak or a hang is not. */
#include "fuzz-common.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  GError *error = NULL;
  OwbModel *model = owb_model_load_from_data (data, size, NULL, &error);
  if (!model)
    {
      g_assert (error != NULL && error->domain == OWB_ERROR);
      g_error_free (error);
      return 0;
    }
  if (!owb_model_infer_shapes (model, &error))
    {
      g_assert (error != NULL);
      g_error_free (error);
    }
  owb_model_unref (model);
  return 0;
}
