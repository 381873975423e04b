/* owb-quant-fallback.c: accuracy-aware quantization. Nodes are ranked by what quantizing each costs
 * on its own (the SQNR of its quantized inputs against their float values, measured once on the
 * float model), then the most harmful are kept in float, more of them each trial, until the
 * quantized model meets the target on the evaluation set. Calibration is reused: a trial costs one
 * quantization and one comparison. */
#include "owb-quant-private.h"

#include <math.h>
#include <string.h>

void
owb_quant_fallback_options_init (OwbQuantFallbackOptions *options)
{
  memset (options, 0, sizeof *options);
  options->max_accuracy_drop = -1;
}

static void
sensitivity_free (OwbQuantSensitivity *s)
{
  g_free (s->node);
  g_free (s->op_type);
  g_free (s->tensor);
  g_free (s);
}

void
owb_quant_fallback_result_free (OwbQuantFallbackResult *result)
{
  if (result == NULL)
    return;
  g_ptr_array_unref (result->ranking);
  g_ptr_array_unref (result->kept_float);
  g_array_unref (result->trials);
  g_free (result);
}

/* A quantized tensor's parameters, as a QuantizeLinear (or a weight's DequantizeLinear) has them. */
typedef struct {
  char *tensor;
  float scale;
  int zero_point;
  int qmin, qmax;
  double signal, noise;
} LocalNoise;

static void
local_noise_free (LocalNoise *n)
{
  g_free (n->tensor);
  g_free (n);
}

static gboolean
scalar_params (const OwbGraph *g, const OwbNode *n, float *scale, int *zp, OwbDataType *type)
{
  const OwbTensor *s = owb_graph_get_initializer (g, owb_node_get_input (n, 1) ? n->inputs[1] : "");
  const char *zname = owb_node_get_input (n, 2);
  const OwbTensor *z = zname ? owb_graph_get_initializer (g, zname) : NULL;
  if (s == NULL || s->nelems != 1 || s->dtype != OWB_TYPE_FLOAT)
    return FALSE;
  *scale = ((const float *) s->data)[0];
  *zp = z ? (int) owb_tensor_get_int64 (z, 0) : 0;
  *type = z ? z->dtype : OWB_TYPE_UINT8;
  return TRUE;
}

static void
observe_noise (LocalNoise *n, const OwbTensor *t)
{
  if (t == NULL || t->dtype != OWB_TYPE_FLOAT || t->kind != OWB_VALUE_TENSOR)
    return;
  const float *x = t->data;
  for (int64_t i = 0; i < t->nelems; i++)
    {
      if (!isfinite (x[i]))
        continue;
      double q = CLAMP (nearbyint (x[i] / n->scale) + n->zero_point, n->qmin, n->qmax);
      double d = (q - n->zero_point) * n->scale - x[i];
      n->signal += (double) x[i] * x[i];
      n->noise += d * d;
    }
}

static void
noise_node_end (const OwbNodeEvent *event, gpointer user_data)
{
  GHashTable *by_name = user_data;
  if (event->depth != 0)
    return;
  for (int o = 0; o < event->n_outputs && o < event->node->n_outputs; o++)
    {
      LocalNoise *n = g_hash_table_lookup (by_name, event->node->outputs[o]);
      if (n)
        observe_noise (n, event->outputs[o]);
    }
}

static double
noise_db (const LocalNoise *n)
{
  if (n->noise <= 0)
    return INFINITY;
  return 10 * log10 (MAX (n->signal, 1e-30) / n->noise);
}

static double
weight_sqnr (const OwbTensor *w, const OwbTensor *q, const OwbTensor *scale, const OwbTensor *zp, int64_t axis)
{
  if (w == NULL || q == NULL || scale == NULL || w->nelems != q->nelems || w->dtype != OWB_TYPE_FLOAT)
    return INFINITY;
  int64_t channels = scale->nelems, inner = 1;
  if (axis < 0 || axis >= w->rank || channels == 1)
    channels = 1, axis = -1;
  for (int d = axis + 1; axis >= 0 && d < w->rank; d++)
    inner *= w->dims[d];
  double signal = 0, noise = 0;
  const float *x = w->data;
  for (int64_t i = 0; i < w->nelems; i++)
    {
      int64_t c = axis < 0 ? 0 : (i / inner) % channels;
      double s = ((const float *) scale->data)[c];
      double z = zp ? owb_tensor_get_double (zp, zp->nelems == 1 ? 0 : c) : 0;
      double d = (owb_tensor_get_double (q, i) - z) * s - x[i];
      signal += (double) x[i] * x[i];
      noise += d * d;
    }
  return noise > 0 ? 10 * log10 (MAX (signal, 1e-30) / noise) : INFINITY;
}

static const OwbNode *
find_named (const OwbGraph *g, const char *name)
{
  for (guint i = 0; name && i < g->nodes->len; i++)
    {
      const OwbNode *n = g_ptr_array_index (g->nodes, i);
      if (n->name && strcmp (n->name, name) == 0)
        return n;
    }
  return NULL;
}

static int
compare_sensitivity (gconstpointer a, gconstpointer b)
{
  const OwbQuantSensitivity *x = *(OwbQuantSensitivity *const *) a, *y = *(OwbQuantSensitivity *const *) b;
  return x->local_sqnr_db < y->local_sqnr_db ? -1 : x->local_sqnr_db > y->local_sqnr_db ? 1 : 0;
}

/* Ranks the nodes of `quantized` that read a dequantized value by the lowest local SQNR among
 * those values, measured on `model` (the float model it came from). */
static GPtrArray *
rank_nodes (OwbModel *model, const OwbModel *quantized, OwbQuantDataset *eval, guint n_samples, int n_threads,
            GError **error)
{
  const OwbGraph *qg = quantized->graph;
  g_autoptr (GHashTable) producer = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < qg->nodes->len; i++)
    {
      OwbNode *n = g_ptr_array_index (qg->nodes, i);
      for (int o = 0; o < n->n_outputs; o++)
        g_hash_table_insert (producer, n->outputs[o], n);
    }
  /* Activations: each QuantizeLinear's input, with its parameters. */
  g_autoptr (GHashTable) noise = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) local_noise_free);
  for (guint i = 0; i < qg->nodes->len; i++)
    {
      const OwbNode *n = g_ptr_array_index (qg->nodes, i);
      float scale;
      int zp;
      OwbDataType type;
      if (strcmp (n->op_type, "QuantizeLinear") != 0 || !scalar_params (qg, n, &scale, &zp, &type))
        continue;
      LocalNoise *ln = g_new0 (LocalNoise, 1);
      ln->tensor = g_strdup (n->inputs[0]);
      ln->scale = scale;
      ln->zero_point = zp;
      if (!_owb_quant_type_range (type, FALSE, &ln->qmin, &ln->qmax))
        {
          local_noise_free (ln);
          continue;
        }
      g_hash_table_replace (noise, ln->tensor, ln);
    }
  /* One float run per sample, the noise of every quantized tensor streamed out of the hooks. */
  g_autoptr (OwbSession) session = _owb_quant_session_new (model, n_threads, error);
  if (session == NULL)
    return NULL;
  OwbRunHooks hooks = { .node_end = noise_node_end, .user_data = noise };
  OwbRunOptions ro;
  owb_run_options_init (&ro);
  ro.hooks = &hooks;
  guint n_runs = MIN (n_samples, owb_quant_dataset_get_n_samples (eval));
  guint n_out = owb_session_get_n_outputs (session);
  for (guint s = 0; s < n_runs; s++)
    {
      g_autoptr (GPtrArray) names = NULL, tensors = NULL;
      if (!owb_quant_dataset_load_sample (eval, s, model, &names, &tensors, error))
        return NULL;
      for (guint k = 0; k < names->len; k++)
        {
          LocalNoise *ln = g_hash_table_lookup (noise, g_ptr_array_index (names, k));
          if (ln)
            observe_noise (ln, g_ptr_array_index (tensors, k));
        }
      g_autofree OwbTensor **outs = g_new0 (OwbTensor *, n_out);
      gboolean ok = owb_session_run_with_options (session, &ro, names->len, (const char *const *) names->pdata,
                                                  (OwbTensor *const *) tensors->pdata, n_out, NULL, outs, NULL, error);
      for (guint k = 0; k < n_out; k++)
        if (outs[k])
          owb_tensor_unref (outs[k]);
      if (!ok)
        return NULL;
    }

  /* Each node reading a DequantizeLinear output: the worst of those inputs. */
  GPtrArray *ranking = g_ptr_array_new_with_free_func ((GDestroyNotify) sensitivity_free);
  for (guint i = 0; i < qg->nodes->len; i++)
    {
      const OwbNode *n = g_ptr_array_index (qg->nodes, i);
      if (strcmp (n->op_type, "QuantizeLinear") == 0 || strcmp (n->op_type, "DequantizeLinear") == 0 || !n->name)
        continue;
      double worst = INFINITY;
      const char *worst_tensor = NULL;
      gboolean reads_dq = FALSE;
      for (int k = 0; k < n->n_inputs; k++)
        {
          const OwbNode *dq = n->inputs[k][0] ? g_hash_table_lookup (producer, n->inputs[k]) : NULL;
          if (dq == NULL || strcmp (dq->op_type, "DequantizeLinear") != 0)
            continue;
          reads_dq = TRUE;
          double db = INFINITY;
          const char *tensor = NULL;
          const OwbNode *q = g_hash_table_lookup (producer, dq->inputs[0]);
          if (q && strcmp (q->op_type, "QuantizeLinear") == 0)
            {
              LocalNoise *ln = g_hash_table_lookup (noise, q->inputs[0]);
              if (ln)
                db = noise_db (ln), tensor = ln->tensor;
            }
          else
            {
              /* A constant stored quantized: compare it with the float model's input in that slot. */
              const OwbNode *orig = find_named (model->graph, n->name);
              const char *fname = orig && k < orig->n_inputs ? orig->inputs[k] : NULL;
              const OwbTensor *w = fname ? owb_graph_get_initializer (model->graph, fname) : NULL;
              db = weight_sqnr (w, owb_graph_get_initializer (qg, dq->inputs[0]),
                                owb_graph_get_initializer (qg, owb_node_get_input (dq, 1) ? dq->inputs[1] : ""),
                                owb_node_get_input (dq, 2) ? owb_graph_get_initializer (qg, dq->inputs[2]) : NULL,
                                owb_node_get_int (dq, "axis", 1));
              tensor = fname;
            }
          if (db < worst || worst_tensor == NULL)
            worst = db, worst_tensor = tensor;
        }
      if (!reads_dq)
        continue;
      OwbQuantSensitivity *s = g_new0 (OwbQuantSensitivity, 1);
      s->node = g_strdup (n->name);
      s->op_type = g_strdup (n->op_type);
      s->tensor = g_strdup (worst_tensor ? worst_tensor : "");
      s->local_sqnr_db = worst;
      g_ptr_array_add (ranking, s);
    }
  g_ptr_array_sort (ranking, compare_sensitivity);
  return ranking;
}

typedef struct {
  OwbModel *model;
  OwbQuantTrial trial;
  gboolean meets;
} Attempt;

static gboolean
evaluate (OwbModel *model, OwbModel *quantized, const OwbQuantFallbackOptions *fo, double *float_accuracy,
          OwbQuantTrial *trial, GError **error)
{
  OwbQuantCompareOptions co;
  owb_quant_compare_options_init (&co);
  co.per_tensor = FALSE;
  co.labels = fo->labels;
  co.n_threads = fo->n_threads;
  co.cancellable = fo->cancellable;
  g_autoptr (OwbQuantComparison) cmp = owb_quant_compare (model, quantized, fo->eval, &co, error);
  if (cmp == NULL)
    return FALSE;
  trial->sqnr_db = INFINITY;
  for (guint i = 0; i < cmp->outputs->len; i++)
    {
      const OwbQuantOutputDiff *d = g_ptr_array_index (cmp->outputs, i);
      trial->sqnr_db = MIN (trial->sqnr_db, d->sqnr_db);
      if (d->has_accuracy && !trial->has_accuracy)
        {
          trial->has_accuracy = TRUE;
          trial->accuracy = d->accuracy_b;
          *float_accuracy = d->accuracy_a;
        }
    }
  return TRUE;
}

static gboolean
meets_target (const OwbQuantFallbackOptions *fo, const OwbQuantTrial *t, double float_accuracy)
{
  gboolean ok = TRUE;
  if (fo->target_sqnr_db > 0)
    ok &= t->sqnr_db >= fo->target_sqnr_db;
  if (fo->max_accuracy_drop >= 0)
    ok &= t->has_accuracy && float_accuracy - t->accuracy <= fo->max_accuracy_drop + 1e-12;
  return ok;
}

/* Quantizes with the first k ranked nodes (and the user's own exclusions) kept in float. */
static OwbModel *
quantize_keeping (OwbModel *model, const OwbQuantCalibration *cal, const OwbQuantOptions *options,
                  GPtrArray *ranking, guint k, GError **error)
{
  g_autoptr (GPtrArray) excluded = g_ptr_array_new ();
  for (const char *const *p = options->exclude_nodes; p && *p; p++)
    g_ptr_array_add (excluded, (gpointer) *p);
  for (guint i = 0; i < k && i < ranking->len; i++)
    g_ptr_array_add (excluded, ((OwbQuantSensitivity *) g_ptr_array_index (ranking, i))->node);
  g_ptr_array_add (excluded, NULL);
  OwbQuantOptions o = *options;
  o.exclude_nodes = (const char *const *) excluded->pdata;
  return owb_quant_quantize_static (model, cal, &o, NULL, error);
}

OwbModel *
owb_quant_quantize_with_fallback (OwbModel *model, const OwbQuantCalibration *calibration,
                                  const OwbQuantOptions *options, const OwbQuantFallbackOptions *fo,
                                  OwbQuantFallbackResult **result_out, GError **error)
{
  g_return_val_if_fail (fo != NULL && fo->eval != NULL, NULL);
  if (fo->target_sqnr_db <= 0 && fo->max_accuracy_drop < 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "accuracy-aware quantization needs a target: an output SQNR or an accuracy drop");
      return NULL;
    }
  if (fo->max_accuracy_drop >= 0 && fo->labels == NULL)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "an accuracy-drop target needs labels for the evaluation samples");
      return NULL;
    }
  guint max_trials = fo->max_trials ? fo->max_trials : 8;
  OwbQuantFallbackResult *result = g_new0 (OwbQuantFallbackResult, 1);
  result->kept_float = g_ptr_array_new_with_free_func (g_free);
  result->trials = g_array_new (FALSE, FALSE, sizeof (OwbQuantTrial));
  result->ranking = NULL;

  Attempt best = { 0 };
  g_autoptr (OwbModel) first = owb_quant_quantize_static (model, calibration, options, NULL, error);
  if (first == NULL)
    goto fail;
  OwbQuantTrial t0 = { 0 };
  if (!evaluate (model, first, fo, &result->float_accuracy, &t0, error))
    goto fail;
  g_array_append_val (result->trials, t0);
  best = (Attempt){ g_steal_pointer (&first), t0, meets_target (fo, &t0, result->float_accuracy) };
  if (fo->progress)
    fo->progress (1, max_trials, fo->user_data);
  result->ranking = rank_nodes (model, best.model, fo->eval, fo->sensitivity_samples ? fo->sensitivity_samples : 8,
                                fo->n_threads, error);
  if (result->ranking == NULL)
    goto fail;

  /* Double the count kept in float until the target holds, then bisect between the last count
   * that failed and the first that held. */
  guint lo = 0, hi = 0; /* lo: largest count known to fail; hi: smallest known to hold (0: none) */
  guint k = 1, n_rank = result->ranking->len;
  gboolean met = best.meets;
  for (guint trial = 1; !met && trial < max_trials && n_rank > 0; trial++)
    {
      if (g_cancellable_is_cancelled (fo->cancellable))
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_CANCELLED, "accuracy-aware quantization cancelled at trial %u",
                       trial + 1);
          goto fail;
        }
      if (hi == 0)
        k = MIN (lo == 0 ? 1 : lo * 2, n_rank);
      else if (hi - lo <= 1)
        break;
      else
        k = lo + (hi - lo) / 2;
      g_autoptr (OwbModel) q = quantize_keeping (model, calibration, options, result->ranking, k, error);
      if (q == NULL)
        goto fail;
      OwbQuantTrial t = { .n_kept_float = k };
      if (!evaluate (model, q, fo, &result->float_accuracy, &t, error))
        goto fail;
      g_array_append_val (result->trials, t);
      gboolean ok = meets_target (fo, &t, result->float_accuracy);
      if (fo->progress)
        fo->progress (trial + 1, max_trials, fo->user_data);
      if (ok)
        {
          hi = k;
          /* Fewer nodes in float is better once the target holds. */
          if (!best.meets || k < best.trial.n_kept_float)
            {
              g_clear_pointer (&best.model, owb_model_unref);
              best = (Attempt){ g_steal_pointer (&q), t, TRUE };
              result->chosen_trial = result->trials->len - 1;
            }
        }
      else
        {
          lo = k;
          if (!best.meets && t.sqnr_db > best.trial.sqnr_db)
            {
              g_clear_pointer (&best.model, owb_model_unref);
              best = (Attempt){ g_steal_pointer (&q), t, FALSE };
              result->chosen_trial = result->trials->len - 1;
            }
          if (k == n_rank)
            break; /* everything ranked is in float already */
        }
      /* Keep bisecting after the target first holds, while trials remain. */
      met = hi != 0 && hi - lo <= 1;
    }
  result->target_met = best.meets;
  for (guint i = 0; i < best.trial.n_kept_float && i < n_rank; i++)
    g_ptr_array_add (result->kept_float,
                     g_strdup (((OwbQuantSensitivity *) g_ptr_array_index (result->ranking, i))->node));
  if (result_out)
    *result_out = result;
  else
    owb_quant_fallback_result_free (result);
  return best.model;

fail:
  g_clear_pointer (&best.model, owb_model_unref);
  if (result->ranking == NULL)
    result->ranking = g_ptr_array_new ();
  owb_quant_fallback_result_free (result);
  return NULL;
}

char *
owb_quant_fallback_result_to_json (const OwbQuantFallbackResult *result, guint max_ranking)
{
  GString *s = g_string_new (NULL);
  owb_json_begin_object (s, NULL);
  owb_json_append_key (s, "target_met");
  g_string_append (s, result->target_met ? "true" : "false");
  gboolean has_accuracy = FALSE;
  for (guint i = 0; i < result->trials->len; i++)
    has_accuracy |= g_array_index (result->trials, OwbQuantTrial, i).has_accuracy;
  if (has_accuracy)
    _owb_quant_json_member_number (s, "float_accuracy", result->float_accuracy);
  owb_json_begin_array (s, "kept_float");
  for (guint i = 0; i < result->kept_float->len; i++)
    {
      owb_json_append_separator (s);
      owb_json_append_string (s, g_ptr_array_index (result->kept_float, i));
    }
  g_string_append_c (s, ']');
  owb_json_append_member_uint (s, "chosen_trial", result->chosen_trial);
  owb_json_begin_array (s, "trials");
  for (guint i = 0; i < result->trials->len; i++)
    {
      const OwbQuantTrial *t = &g_array_index (result->trials, OwbQuantTrial, i);
      owb_json_begin_object (s, NULL);
      owb_json_append_member_uint (s, "kept_float", t->n_kept_float);
      _owb_quant_json_member_number (s, "sqnr_db", t->sqnr_db);
      if (t->has_accuracy)
        _owb_quant_json_member_number (s, "accuracy", t->accuracy);
      g_string_append_c (s, '}');
    }
  g_string_append_c (s, ']');
  owb_json_begin_array (s, "ranking");
  for (guint i = 0; i < result->ranking->len && i < max_ranking; i++)
    {
      const OwbQuantSensitivity *r = g_ptr_array_index (result->ranking, i);
      owb_json_begin_object (s, NULL);
      owb_json_append_member_string (s, "node", r->node);
      owb_json_append_member_string (s, "op", r->op_type);
      owb_json_append_member_string (s, "tensor", r->tensor);
      _owb_quant_json_member_number (s, "local_sqnr_db", r->local_sqnr_db);
      g_string_append_c (s, '}');
    }
  g_string_append (s, "]}");
  return g_string_free (s, FALSE);
}
