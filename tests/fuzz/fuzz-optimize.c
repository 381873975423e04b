/* fuzz-optimize.c: the optimizer at every level (and portable) on each model the bytes hold,
 * then a save of the result: passes must refuse what they cannot rewrite, never crash. */
#include "fuzz-common.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  OwbModel *model = fuzz_load_model (data, size);
  if (!model)
    return 0;
  GError *error = NULL;
  GPtrArray *providers = owb_providers_new_from_list ("cpu", NULL);
  /* Graphs past a few thousand nodes (function expansions within their budget) get the top
   * level only: eight optimizer runs of 20,000 nodes under the sanitizers take over 10 s, a
   * libFuzzer timeout that is the harness's cost, not a defect. */
  gboolean big = model->graph->nodes->len > FUZZ_MAX_NODES;
  for (int level = big ? OWB_OPTIMIZE_ALL : OWB_OPTIMIZE_BASIC; level <= OWB_OPTIMIZE_ALL; level++)
    for (int portable = 0; portable <= (big ? 0 : 1); portable++)
      {
        OwbModel *copy = owb_model_dup (model);
        OwbOptimizeOptions options;
        owb_optimize_options_init (&options);
        options.level = (OwbOptimizeLevel) level;
        options.portable = portable;
        options.providers = providers;
        OwbOptimizeReport *report = NULL;
        if (owb_model_optimize (copy, &options, &report, &error))
          {
            GBytes *bytes = owb_model_save_to_bytes (copy, NULL);
            if (bytes)
              g_bytes_unref (bytes);
          }
        else
          g_clear_error (&error);
        owb_optimize_report_free (report);
        owb_model_unref (copy);
      }
  g_ptr_array_unref (providers);
  owb_model_unref (model);
  return 0;
}
