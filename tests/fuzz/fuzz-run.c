/* fuzz-run.c: a session on the model the bytes hold, then one run on small seeded inputs, with a
 * memory limit and a time limit (a watchdog thread cancels a run that takes too long). */
#include "fuzz-common.h"

#include <string.h>

static GMutex watch_lock;
static GCancellable *watched; /* the run in progress, if any */
static gint64 watch_deadline;

static gpointer
watchdog (gpointer data)
{
  for (;;)
    {
      g_usleep (50000);
      g_mutex_lock (&watch_lock);
      if (watched && g_get_monotonic_time () > watch_deadline)
        g_cancellable_cancel (watched);
      g_mutex_unlock (&watch_lock);
    }
  return NULL;
}

static OwbTensor *
input_for (const OwbValueInfo *info, GRand *rand)
{
  const OwbValueType *type = &info->type;
  if (type->kind != OWB_VALUE_TENSOR || type->rank < 0 || type->dtype == OWB_TYPE_STRING)
    return NULL;
  int64_t dims[OWB_MAX_RANK];
  int64_t n = 1;
  for (int d = 0; d < type->rank; d++)
    {
      dims[d] = owb_dim_is_known (type->dims[d]) ? type->dims[d].value : 1;
      if (dims[d] > FUZZ_MAX_INPUT_ELEMENTS || (dims[d] && n > FUZZ_MAX_INPUT_ELEMENTS / dims[d]))
        return NULL;
      n *= dims[d];
    }
  OwbTensor *t = owb_tensor_new (type->dtype, type->rank, dims, NULL);
  if (!t)
    return NULL;
  for (int64_t i = 0; i < t->nelems; i++)
    owb_tensor_set_double (t, i, (double) g_rand_int_range (rand, -3, 4));
  return t;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static GThread *thread;
  if (!thread)
    thread = g_thread_new ("fuzz-watchdog", watchdog, NULL);

  /* The node limit of fuzz-quantize: a function expansion within its budget (2.7 KB to 20,480
   * Relus) took 0.3-0.8 s to optimize and run here unsanitized but over 12 s under ASan on the
   * loaded machine, a libFuzzer timeout at each restart that is the harness's cost, not a defect;
   * such graphs are loaded (fuzz-model) and optimized (fuzz-optimize) by the other harnesses. */
  OwbModel *model = fuzz_load_small_model (data, size);
  if (!model)
    return 0;
  GError *error = NULL;
  OwbSessionOptions options;
  owb_session_options_init (&options);
  options.providers = owb_providers_new_from_list ("cpu", NULL);
  options.n_threads = 1;
  options.memory_limit = FUZZ_MEMORY_LIMIT;
  OwbSession *session = owb_session_new_take (model, &options, &error);
  g_ptr_array_unref (options.providers);
  if (!session)
    {
      g_error_free (error);
      return 0;
    }
  guint n_in = owb_session_get_n_inputs (session), n_out = owb_session_get_n_outputs (session);
  if (n_in > 64 || n_out > 64)
    {
      owb_session_free (session);
      return 0;
    }
  GRand *rand = g_rand_new_with_seed ((guint32) size);
  OwbTensor *inputs[64] = { NULL }, *outputs[64] = { NULL };
  const char *names[64];
  gboolean fed = TRUE;
  for (guint i = 0; i < n_in && fed; i++)
    {
      const OwbValueInfo *info = owb_session_get_input (session, i);
      names[i] = info->name;
      inputs[i] = input_for (info, rand);
      fed = inputs[i] != NULL;
    }
  if (fed)
    {
      GCancellable *cancellable = g_cancellable_new ();
      g_mutex_lock (&watch_lock);
      watched = cancellable;
      watch_deadline = g_get_monotonic_time () + FUZZ_RUN_SECONDS * G_USEC_PER_SEC;
      g_mutex_unlock (&watch_lock);
      if (owb_session_run (session, n_in, names, inputs, n_out, NULL, outputs, NULL, cancellable, &error))
        for (guint i = 0; i < n_out; i++)
          owb_tensor_unref (outputs[i]);
      else
        g_clear_error (&error);
      g_mutex_lock (&watch_lock);
      watched = NULL;
      g_mutex_unlock (&watch_lock);
      g_object_unref (cancellable);
    }
  for (guint i = 0; i < n_in; i++)
    owb_tensor_unref (inputs[i]);
  g_rand_free (rand);
  owb_session_free (session);
  return 0;
}
