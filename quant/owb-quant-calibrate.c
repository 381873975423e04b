/* owb-quant-calibrate.c: runs the float model over the calibration samples and streams the
 * statistics of every tensor quantization needs (min, max, their moving averages, a histogram) out
 * of the session's per-run hooks; no tensor is kept past the node that made it. */
#include "owb-quant-private.h"

#include <math.h>
#include <string.h>

typedef struct {
  double min, max;          /* over all samples */
  double avg_min, avg_max;  /* moving averages of the per-sample min and max */
  guint n_samples;          /* samples the tensor was seen in */
  OwbQuantHistogram hist;
} TensorStats;

struct _OwbQuantCalibration {
  GHashTable *stats; /* name -> TensorStats * */
  guint n_samples;
  double averaging_constant; /* the moving averages are kept for this weight */
};

static void
stats_free (TensorStats *s)
{
  _owb_quant_histogram_clear (&s->hist);
  g_free (s);
}

void
owb_quant_calibrate_options_init (OwbQuantCalibrateOptions *options)
{
  memset (options, 0, sizeof *options);
}

void
owb_quant_range_options_init (OwbQuantRangeOptions *options)
{
  memset (options, 0, sizeof *options);
  /* Percentile (99.999) measured best or equal on every dev task (a CNN, a transformer, a CRNN):
   * it drops the rare extreme that widens minmax's step, and keeps the range where entropy clips. */
  options->method = OWB_QUANT_PERCENTILE;
  options->percentile = 99.999;
  options->n_quantized_levels = 256;
  options->entropy_max_clipped = 1e-4;
}

static const char *const method_names[] = { "minmax", "entropy", "percentile", "mse" };

const char *
owb_quant_method_to_string (OwbQuantMethod method)
{
  return method <= OWB_QUANT_MSE ? method_names[method] : "unknown";
}

gboolean
owb_quant_method_from_string (const char *name, OwbQuantMethod *method)
{
  for (guint i = 0; i < G_N_ELEMENTS (method_names); i++)
    if (name && strcmp (name, method_names[i]) == 0)
      {
        *method = (OwbQuantMethod) i;
        return TRUE;
      }
  return FALSE;
}

typedef struct {
  OwbQuantCalibration *cal;
  gboolean collect_all;   /* every float tensor, created as seen */
  double averaging_constant;
} Collector;

static void
observe (Collector *c, const char *name, const OwbTensor *t)
{
  if (t == NULL || t->kind != OWB_VALUE_TENSOR || t->dtype != OWB_TYPE_FLOAT || name == NULL || !*name)
    return;
  TensorStats *s = g_hash_table_lookup (c->cal->stats, name);
  if (s == NULL)
    {
      if (!c->collect_all)
        return;
      s = g_new0 (TensorStats, 1);
      _owb_quant_histogram_init (&s->hist, OWB_QUANT_HISTOGRAM_BINS);
      g_hash_table_insert (c->cal->stats, g_strdup (name), s);
    }
  const float *x = t->data;
  double lo = INFINITY, hi = -INFINITY;
  for (int64_t i = 0; i < t->nelems; i++)
    if (isfinite (x[i]))
      {
        lo = MIN (lo, x[i]);
        hi = MAX (hi, x[i]);
      }
  if (!isfinite (lo))
    return; /* nothing finite in this sample */
  if (s->n_samples == 0)
    {
      s->min = s->avg_min = lo;
      s->max = s->avg_max = hi;
    }
  else
    {
      s->min = MIN (s->min, lo);
      s->max = MAX (s->max, hi);
      s->avg_min += c->averaging_constant * (lo - s->avg_min);
      s->avg_max += c->averaging_constant * (hi - s->avg_max);
    }
  s->n_samples++;
  _owb_quant_histogram_add (&s->hist, x, (gsize) t->nelems, MAX (-lo, hi));
}

static void
node_end (const OwbNodeEvent *event, gpointer user_data)
{
  if (event->depth != 0)
    return; /* subgraph values are not quantized */
  for (int o = 0; o < event->n_outputs && o < event->node->n_outputs; o++)
    observe (user_data, event->node->outputs[o], event->outputs[o]);
}

OwbQuantCalibration *
owb_quant_calibrate (OwbModel *model, OwbQuantDataset *dataset, const OwbQuantCalibrateOptions *options,
                     GError **error)
{
  OwbQuantCalibrateOptions defaults;
  if (options == NULL)
    {
      owb_quant_calibrate_options_init (&defaults);
      options = &defaults;
    }
  g_autoptr (OwbSession) session = _owb_quant_session_new (model, options->n_threads, error);
  if (session == NULL)
    return NULL;

  OwbQuantCalibration *cal = g_new0 (OwbQuantCalibration, 1);
  cal->stats = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) stats_free);
  cal->averaging_constant = options->averaging_constant > 0 ? options->averaging_constant : 0.01;
  Collector collector = { cal, options->tensors == NULL, cal->averaging_constant };
  for (const char *const *p = options->tensors; p && *p; p++)
    if (!g_hash_table_contains (cal->stats, *p))
      {
        TensorStats *s = g_new0 (TensorStats, 1);
        _owb_quant_histogram_init (&s->hist, OWB_QUANT_HISTOGRAM_BINS);
        g_hash_table_insert (cal->stats, g_strdup (*p), s);
      }

  OwbRunHooks hooks = { .node_end = node_end, .user_data = &collector };
  OwbRunOptions ro;
  owb_run_options_init (&ro);
  ro.hooks = &hooks;
  ro.cancellable = options->cancellable;
  guint n = owb_quant_dataset_get_n_samples (dataset);
  guint n_outputs = owb_session_get_n_outputs (session);
  for (guint i = 0; i < n; i++)
    {
      if (g_cancellable_is_cancelled (options->cancellable))
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_CANCELLED, "calibration cancelled after %u of %u samples", i, n);
          goto fail;
        }
      g_autoptr (GPtrArray) names = NULL, tensors = NULL;
      if (!owb_quant_dataset_load_sample (dataset, i, model, &names, &tensors, error))
        goto fail;
      for (guint k = 0; k < names->len; k++)
        observe (&collector, g_ptr_array_index (names, k), g_ptr_array_index (tensors, k));
      g_autofree OwbTensor **outputs = g_new0 (OwbTensor *, n_outputs);
      gboolean ok = owb_session_run_with_options (session, &ro, names->len, (const char *const *) names->pdata,
                                                  (OwbTensor *const *) tensors->pdata, n_outputs, NULL, outputs,
                                                  NULL, error);
      for (guint k = 0; k < n_outputs; k++)
        if (outputs[k])
          owb_tensor_unref (outputs[k]);
      if (!ok)
        {
          const char *dir = owb_quant_dataset_get_sample_dir (dataset, i);
          g_prefix_error (error, "calibration sample %u (%s): ", i, dir ? dir : "random");
          goto fail;
        }
      cal->n_samples++;
      if (options->progress)
        options->progress (i + 1, n, options->user_data);
    }
  return cal;

fail:
  owb_quant_calibration_free (cal);
  return NULL;
}

void
owb_quant_calibration_free (OwbQuantCalibration *calibration)
{
  if (calibration == NULL)
    return;
  g_hash_table_unref (calibration->stats);
  g_free (calibration);
}

guint
owb_quant_calibration_get_n_samples (const OwbQuantCalibration *calibration)
{
  return calibration->n_samples;
}

guint
owb_quant_calibration_get_n_tensors (const OwbQuantCalibration *calibration)
{
  return g_hash_table_size (calibration->stats);
}

gsize
owb_quant_calibration_get_bytes (const OwbQuantCalibration *calibration)
{
  gsize bytes = sizeof *calibration;
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init (&it, calibration->stats);
  while (g_hash_table_iter_next (&it, &key, &value))
    bytes += sizeof (TensorStats) + strlen (key) + 1 + ((TensorStats *) value)->hist.n_bins * sizeof (double);
  return bytes;
}

gboolean
owb_quant_calibration_has_tensor (const OwbQuantCalibration *calibration, const char *name)
{
  TensorStats *s = g_hash_table_lookup (calibration->stats, name);
  return s != NULL && s->n_samples > 0;
}

gboolean
owb_quant_calibration_get_minmax (const OwbQuantCalibration *calibration, const char *name, float *min, float *max)
{
  TensorStats *s = g_hash_table_lookup (calibration->stats, name);
  if (s == NULL || s->n_samples == 0)
    return FALSE;
  *min = (float) s->min;
  *max = (float) s->max;
  return TRUE;
}

gboolean
owb_quant_calibration_compute_range (const OwbQuantCalibration *calibration, const char *name,
                                     const OwbQuantRangeOptions *options, float *lo, float *hi, GError **error)
{
  TensorStats *s = g_hash_table_lookup (calibration->stats, name);
  if (s == NULL || s->n_samples == 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "tensor '%s' has no calibration statistics (it was not computed by any sample)", name);
      return FALSE;
    }
  OwbQuantRangeOptions defaults;
  if (options == NULL)
    {
      owb_quant_range_options_init (&defaults);
      options = &defaults;
    }
  double min = s->min, max = s->max;
  int levels = options->n_quantized_levels > 1 ? options->n_quantized_levels : 256;
  /* A tensor of both signs spends half the levels on |x| up to the threshold. */
  int abs_levels = (min < 0 && max > 0) ? levels / 2 : levels;
  double t;
  switch (options->method)
    {
    case OWB_QUANT_MINMAX:
      if (options->moving_average)
        {
          min = s->avg_min;
          max = s->avg_max;
        }
      t = INFINITY;
      break;
    case OWB_QUANT_PERCENTILE:
      t = _owb_quant_histogram_percentile (&s->hist, options->percentile > 0 ? options->percentile : 99.999);
      break;
    case OWB_QUANT_ENTROPY:
      t = _owb_quant_histogram_entropy (&s->hist, abs_levels, options->entropy_max_clipped);
      break;
    case OWB_QUANT_MSE:
      t = _owb_quant_histogram_mse (&s->hist, min, max, levels);
      break;
    default:
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "unknown calibration method %d", options->method);
      return FALSE;
    }
  *lo = (float) MIN (MAX (min, -t), 0.0);
  *hi = (float) MAX (MIN (max, t), 0.0);
  return TRUE;
}
