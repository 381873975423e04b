/* fuzz-quantize.c: the quantizer's model rewriting on each model the bytes hold: pre-processing
 * (opset conversion, folding), the QDQ plan and passes (weights; with no calibration samples the
 * activations stay float, so nothing runs) and dynamic quantization, then a save of each result:
 * a model it cannot quantize is an error, never a crash. */
#include "fuzz-common.h"

#include <owb/owb-quant.h>

static void
save_and_free (OwbModel *model)
{
  if (!model)
    return;
  GBytes *bytes = owb_model_save_to_bytes (model, NULL);
  if (bytes)
    g_bytes_unref (bytes);
  owb_model_unref (model);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* A node limit, as fuzz-optimize has: a graph past a few thousand nodes (a function expansion
   * within its budget: 2.7 KB expand to 20,480 Relus) is loaded but not quantized. Under ASan on
   * the loaded 2-core machine its load took 4.7 s, the two modes' preparation and quantization
   * 17-29 s more and even one preparation 5 s more: a libFuzzer timeout that is the harness's
   * cost, not a defect. Loading such graphs is fuzz-model's, optimizing them fuzz-optimize's, and
   * the quantizer's per-node rewriting is the same on a small graph. */
  OwbModel *model = fuzz_load_small_model (data, size);
  if (!model)
    return 0;
  GError *error = NULL;
  for (int per_channel = 0; per_channel <= 1; per_channel++)
    {
      OwbQuantOptions options;
      owb_quant_options_init (&options);
      options.per_channel = per_channel;
      OwbModel *prepared = owb_quant_prepare (model, &options, NULL, &error);
      if (!prepared)
        {
          g_clear_error (&error);
          continue;
        }
      char **tensors = owb_quant_plan_tensors (prepared, &options, &error);
      if (tensors)
        {
          OwbQuantDataset *none = owb_quant_dataset_new_random (0, 0);
          OwbQuantCalibrateOptions co;
          owb_quant_calibrate_options_init (&co);
          co.tensors = (const char *const *) tensors;
          OwbQuantCalibration *cal = owb_quant_calibrate (prepared, none, &co, &error);
          if (cal)
            save_and_free (owb_quant_quantize_static (prepared, cal, &options, NULL, &error));
          g_clear_error (&error);
          owb_quant_calibration_free (cal);
          owb_quant_dataset_free (none);
          g_strfreev (tensors);
        }
      g_clear_error (&error);
      save_and_free (owb_quant_quantize_dynamic (prepared, &options, NULL, &error));
      g_clear_error (&error);
      owb_model_unref (prepared);
    }
  owb_model_unref (model);
  return 0;
}
