/* owb-quant-session.c: how the quantizer runs models and passes: sessions at level disabled (the
 * file's tensor names are what calibration, comparison and the fallback match on) and its passes
 * over a copy, standard ops only. */
#include "owb-quant-private.h"

GPtrArray *
_owb_quant_dup_providers (const OwbQuantOptions *options, GError **error)
{
  if (options && options->providers)
    return g_ptr_array_ref (options->providers);
  return owb_providers_new_from_list ("cpu", error);
}

OwbSession *
_owb_quant_session_new (OwbModel *model, int n_threads, GError **error)
{
  g_autoptr (GPtrArray) providers = owb_providers_new_from_list ("cpu", error);
  if (providers == NULL)
    return NULL;
  OwbSessionOptions so;
  owb_session_options_init (&so);
  so.providers = providers;
  so.n_threads = n_threads;
  so.optimize = OWB_OPTIMIZE_DISABLED;
  return owb_session_new (model, &so, error);
}

OwbModel *
_owb_quant_run_passes (OwbModel *model, const OwbPass *const *passes, guint n_passes, const OwbQuantOptions *options,
                       OwbOptimizeReport **report, GError **error)
{
  g_autoptr (GPtrArray) providers = _owb_quant_dup_providers (options, error);
  if (providers == NULL)
    return NULL;
  OwbOptimizeOptions oo;
  owb_optimize_options_init (&oo);
  oo.portable = TRUE;
  oo.providers = providers;
  g_autoptr (OwbModel) copy = owb_model_dup (model);
  if (!owb_model_run_passes (copy, passes, n_passes, &oo, report, error))
    return NULL;
  if (!owb_model_validate (copy, error))
    {
      g_prefix_error (error, "the quantized model is not valid: ");
      return NULL;
    }
  return g_steal_pointer (&copy);
}
