/* owb-quant-compare.c: the accuracy comparison of two models (typically a float model and its
 * quantized copy) on the same samples: outputs by position, and every float tensor of A that B has
 * a counterpart for, with sums streamed sample by sample so memory holds one sample's tensors. */
#include "owb-quant-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Sums over every compared element pair, in double: float sums of a million squares lose the
 * small differences that SQNR is about. */
typedef struct {
  double sx2, sd2, sxy, sy2, sum_abs, max_abs;
  double sx, sy, min_x, max_x, min_y, max_y;
  guint64 count, n_nonfinite;
  guint n_skipped;
  guint n_seen;       /* samples where the pair was compared (or skipped) */
} Sums;

/* Bins of a tensor's error histogram, before the empty ones at either end are cut. */
#define ERROR_HISTOGRAM_BINS 256

/* A float tensor of A and where B has it. Tensors matched to the same name of B are chained. */
typedef struct _Tracked Tracked;
struct _Tracked {
  char *name, *matched, *node, *op_type;
  Sums sums;
  OwbQuantHistogram errors; /* of B - A, streamed like the calibration's histograms */
  Tracked *next_same_b;
};

typedef struct {
  Sums sums;
  gboolean classifier;
  guint64 positions, agree;
  guint64 correct_a, correct_b;
} OutputSums;

typedef struct {
  GHashTable *by_a;     /* A name -> Tracked * (borrowed from `tracked`) */
  GHashTable *by_b;     /* B name -> first Tracked * matched to it */
  GPtrArray *tracked;   /* of Tracked *, owned, in A's order */
  GHashTable *captured; /* A name -> OwbTensor * (a reference), this sample's values */
  GArray *scratch;      /* of float: one tensor's errors, for its histogram */
} Context;

void
owb_quant_compare_options_init (OwbQuantCompareOptions *options)
{
  memset (options, 0, sizeof *options);
  options->per_tensor = TRUE;
}

static void
tracked_free (Tracked *t)
{
  g_free (t->name);
  g_free (t->matched);
  g_free (t->node);
  g_free (t->op_type);
  _owb_quant_histogram_clear (&t->errors);
  g_free (t);
}

static void
output_diff_free (OwbQuantOutputDiff *d)
{
  g_free (d->name);
  g_free (d);
}

static void
tensor_diff_free (OwbQuantTensorDiff *d)
{
  g_free (d->name);
  g_free (d->matched);
  g_free (d->node);
  g_free (d->op_type);
  g_free (d->error_bins);
  g_free (d);
}

void
owb_quant_comparison_free (OwbQuantComparison *comparison)
{
  if (comparison == NULL)
    return;
  if (comparison->outputs)
    g_ptr_array_unref (comparison->outputs);
  if (comparison->tensors)
    g_ptr_array_unref (comparison->tensors);
  g_free (comparison);
}

/* ---- Metrics -------------------------------------------------------------------------------- */

static gboolean
is_numeric_tensor (const OwbTensor *t)
{
  return t != NULL && t->kind == OWB_VALUE_TENSOR
         && (OWB_TYPE_BIT (t->dtype) & (OWB_TYPES_NUMERIC | OWB_TYPE_BIT (OWB_TYPE_BOOL))) != 0;
}

static inline double
element (const OwbTensor *t, int64_t i)
{
  return t->dtype == OWB_TYPE_FLOAT ? ((const float *) t->data)[i] : owb_tensor_get_double (t, i);
}

/* Adds one sample's pair; a shape mismatch skips the sample rather than failing the comparison
 * (B may legitimately differ there, and the other tensors still say something). */
/* One element pair into the sums; its error (quantized minus float) into err when there is one. */
static inline void
sums_add_pair (Sums *s, double a, double b, float *err, gsize *n_err, double *err_absmax)
{
  if (!isfinite (a) || !isfinite (b))
    {
      /* one NaN would make every sum NaN: counted apart instead */
      s->n_nonfinite++;
      return;
    }
  double d = a - b, ad = fabs (d);
  s->sx2 += a * a;
  s->sd2 += d * d;
  s->sxy += a * b;
  s->sy2 += b * b;
  s->sx += a;
  s->sy += b;
  s->min_x = MIN (s->min_x, a);
  s->max_x = MAX (s->max_x, a);
  s->min_y = MIN (s->min_y, b);
  s->max_y = MAX (s->max_y, b);
  s->sum_abs += ad;
  if (ad > s->max_abs)
    s->max_abs = ad;
  s->count++;
  if (err)
    {
      err[(*n_err)++] = (float) -d;
      *err_absmax = MAX (*err_absmax, ad);
    }
}

static void
sums_add (Sums *s, const OwbTensor *x, const OwbTensor *y, OwbQuantHistogram *errors, GArray *scratch)
{
  s->n_seen++;
  if (!is_numeric_tensor (x) || !is_numeric_tensor (y) || !owb_tensor_same_shape (x, y))
    {
      s->n_skipped++;
      return;
    }
  if (s->count == 0)
    {
      s->min_x = s->min_y = INFINITY;
      s->max_x = s->max_y = -INFINITY;
    }
  float *err = NULL;
  gsize n_err = 0;
  double err_absmax = 0;
  if (errors)
    {
      g_array_set_size (scratch, (guint) x->nelems);
      err = (float *) scratch->data;
    }
  /* The sums in locals (a store through err could alias them otherwise), and float pairs (nearly
   * every tensor) read without a type switch per element. */
  Sums local = *s;
  if (x->dtype == OWB_TYPE_FLOAT && y->dtype == OWB_TYPE_FLOAT)
    {
      const float *xa = x->data, *ya = y->data;
      for (int64_t i = 0; i < x->nelems; i++)
        sums_add_pair (&local, xa[i], ya[i], err, &n_err, &err_absmax);
    }
  else
    for (int64_t i = 0; i < x->nelems; i++)
      sums_add_pair (&local, element (x, i), element (y, i), err, &n_err, &err_absmax);
  *s = local;
  if (err && n_err)
    _owb_quant_histogram_add (errors, err, n_err, err_absmax);
}

/* Standard deviation from the streamed sums (population, as the inspector's statistics). */
static double
sums_std (double sum, double sum2, guint64 n)
{
  if (n == 0)
    return NAN;
  double mean = sum / n;
  return sqrt (MAX (sum2 / n - mean * mean, 0.0));
}

/* The histogram's bins that hold a value, and the range they cover. */
static void
error_bins_take (OwbQuantTensorDiff *d, const OwbQuantHistogram *h)
{
  if (!h->counts || h->total == 0)
    return;
  if (h->range == 0)
    {
      /* every error was zero: one bin at 0 */
      d->n_error_bins = 1;
      d->error_bins = g_new (guint64, 1);
      d->error_bins[0] = (guint64) h->total;
      d->error_lo = d->error_hi = 0;
      return;
    }
  guint first = 0, last = h->n_bins - 1;
  while (first < last && h->counts[first] == 0)
    first++;
  while (last > first && h->counts[last] == 0)
    last--;
  double width = 2 * h->range / h->n_bins;
  d->n_error_bins = last - first + 1;
  d->error_bins = g_new (guint64, d->n_error_bins);
  for (guint b = first; b <= last; b++)
    d->error_bins[b - first] = (guint64) h->counts[b];
  d->error_lo = -h->range + first * width;
  d->error_hi = -h->range + (last + 1) * width;
}

static double
sums_sqnr (const Sums *s)
{
  if (s->count == 0)
    return NAN;
  if (s->sd2 == 0)
    return INFINITY;
  return 10.0 * log10 (s->sx2 / s->sd2);
}

static double
sums_cosine (const Sums *s)
{
  if (s->count == 0)
    return NAN;
  if (s->sx2 == 0 && s->sy2 == 0)
    return 1.0;
  if (s->sx2 == 0 || s->sy2 == 0)
    return 0.0;
  return CLAMP (s->sxy / sqrt (s->sx2 * s->sy2), -1.0, 1.0);
}

/* Index of the largest of n values at stride 1 from p; NaN never wins, the first of ties does. */
static int64_t
argmax (const float *p, int64_t n)
{
  int64_t best = 0;
  float best_v = -INFINITY;
  gboolean any = FALSE;
  for (int64_t k = 0; k < n; k++)
    if (!isnan (p[k]) && (!any || p[k] > best_v))
      {
        best = k;
        best_v = p[k];
        any = TRUE;
      }
  return best;
}

static gboolean
is_classifier_like (const OwbTensor *t)
{
  return t != NULL && t->kind == OWB_VALUE_TENSOR && t->dtype == OWB_TYPE_FLOAT && t->rank >= 1
         && t->dims[t->rank - 1] >= 2;
}

/* ---- Matching ------------------------------------------------------------------------------- */

static gboolean
is_op (const OwbNode *node, const char *op_type)
{
  return strcmp (node->op_type, op_type) == 0
         && (node->domain[0] == '\0' || strcmp (node->domain, "ai.onnx") == 0
             || strcmp (node->domain, "com.microsoft") == 0);
}

static void
track (Context *ctx, const char *name, const char *matched, const char *node, const char *op_type)
{
  Tracked *t = g_new0 (Tracked, 1);
  t->name = g_strdup (name);
  t->matched = g_strdup (matched);
  t->node = g_strdup (node);
  t->op_type = g_strdup (op_type);
  _owb_quant_histogram_init (&t->errors, ERROR_HISTOGRAM_BINS);
  g_ptr_array_add (ctx->tracked, t);
  g_hash_table_insert (ctx->by_a, t->name, t);
  Tracked *head = g_hash_table_lookup (ctx->by_b, t->matched);
  if (head)
    {
      while (head->next_same_b)
        head = head->next_same_b;
      head->next_same_b = t;
    }
  else
    g_hash_table_insert (ctx->by_b, t->matched, t);
}

/* The tensor a DequantizeLinear output is named after ("x_DequantizeLinear_Output", as this
 * quantizer and ONNX Runtime's name them), or NULL. */
static char *
dequantized_name_of (const char *dq_out)
{
  static const char suffix[] = "_DequantizeLinear_Output";
  gsize n = strlen (dq_out), k = sizeof suffix - 1;
  return n > k && strcmp (dq_out + n - k, suffix) == 0 ? g_strndup (dq_out, n - k) : NULL;
}

/* For every value A computes or is fed: the value B's consumers see in its place. A QDQ pair on X
 * in B (DequantizeLinear (QuantizeLinear (X))) wins over X itself, since X in B is still the float
 * value and would compare equal however bad the quantization. The pair's name comes first: when a
 * Relu was folded into the QuantizeLinear after it, the pair reads the Relu's input but is named
 * after (and holds) its output. */
static void
match_tensors (Context *ctx, const OwbGraph *a, const OwbGraph *b)
{
  g_autoptr (GHashTable) producer = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) b_names = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) qdq = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) by_name = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GPtrArray) b_feeds = owb_graph_dup_feed_inputs (b);
  g_autoptr (GPtrArray) a_feeds = owb_graph_dup_feed_inputs (a);

  for (guint i = 0; i < b_feeds->len; i++)
    g_hash_table_add (b_names, ((OwbValueInfo *) g_ptr_array_index (b_feeds, i))->name);
  for (guint i = 0; i < b->nodes->len; i++)
    {
      OwbNode *n = g_ptr_array_index (b->nodes, i);
      for (int o = 0; o < n->n_outputs; o++)
        if (n->outputs[o][0])
          {
            g_hash_table_insert (producer, n->outputs[o], n);
            g_hash_table_add (b_names, n->outputs[o]);
          }
    }
  for (guint i = 0; i < b->nodes->len; i++)
    {
      OwbNode *dq = g_ptr_array_index (b->nodes, i);
      const char *q_out = owb_node_get_input (dq, 0), *dq_out = owb_node_get_output (dq, 0);
      if (!is_op (dq, "DequantizeLinear") || !q_out || !dq_out)
        continue;
      OwbNode *q = g_hash_table_lookup (producer, q_out);
      const char *x = q && is_op (q, "QuantizeLinear") ? owb_node_get_input (q, 0) : NULL;
      if (!x)
        continue;
      g_autofree char *named = dequantized_name_of (dq_out);
      if (named && strcmp (named, x) != 0)
        {
          /* named after another tensor than the one it quantizes (a folded Relu's output) */
          if (!g_hash_table_contains (by_name, named))
            g_hash_table_insert (by_name, g_steal_pointer (&named), (gpointer) dq_out);
          continue;
        }
      if (!g_hash_table_contains (qdq, x))
        g_hash_table_insert (qdq, (gpointer) x, (gpointer) dq_out);
    }
  /* A name claim wins over the structure. */
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init (&it, by_name);
  while (g_hash_table_iter_next (&it, &key, &value))
    g_hash_table_replace (qdq, key, value);

  for (guint i = 0; i < a_feeds->len; i++)
    {
      const char *x = ((OwbValueInfo *) g_ptr_array_index (a_feeds, i))->name;
      const char *m = g_hash_table_lookup (qdq, x);
      if (!m && g_hash_table_contains (b_names, x))
        m = x;
      if (m && !g_hash_table_contains (ctx->by_a, x))
        track (ctx, x, m, "", "input");
    }
  for (guint i = 0; i < a->nodes->len; i++)
    {
      OwbNode *n = g_ptr_array_index (a->nodes, i);
      for (int o = 0; o < n->n_outputs; o++)
        {
          const char *x = n->outputs[o];
          if (!x[0] || g_hash_table_contains (ctx->by_a, x))
            continue;
          const char *m = g_hash_table_lookup (qdq, x);
          if (!m && g_hash_table_contains (b_names, x))
            m = x;
          if (m)
            track (ctx, x, m, n->name ? n->name : "", n->op_type);
        }
    }
}

/* ---- Running -------------------------------------------------------------------------------- */

static void
capture (Context *ctx, const char *name, OwbTensor *t)
{
  if (t && t->kind == OWB_VALUE_TENSOR && t->dtype == OWB_TYPE_FLOAT && name[0]
      && g_hash_table_contains (ctx->by_a, name))
    g_hash_table_insert (ctx->captured, g_strdup (name), owb_tensor_ref (t));
}

/* B's value of `name`: compared with A's of every tensor matched to it. */
static void
compare_value (Context *ctx, const char *name, const OwbTensor *y)
{
  if (!name[0])
    return;
  for (Tracked *t = g_hash_table_lookup (ctx->by_b, name); t; t = t->next_same_b)
    {
      const OwbTensor *x = g_hash_table_lookup (ctx->captured, t->name);
      if (x)
        sums_add (&t->sums, x, y, &t->errors, ctx->scratch);
    }
}

/* Subgraph nodes (Loop bodies) are left out: their names are scoped and run many times. */
static void
on_node_end_a (const OwbNodeEvent *event, gpointer user_data)
{
  if (event->depth != 0)
    return;
  for (int i = 0; i < event->n_outputs && i < event->node->n_outputs; i++)
    capture (user_data, event->node->outputs[i], event->outputs[i]);
}

static void
on_node_end_b (const OwbNodeEvent *event, gpointer user_data)
{
  if (event->depth != 0)
    return;
  for (int i = 0; i < event->n_outputs && i < event->node->n_outputs; i++)
    if (event->outputs[i])
      compare_value (user_data, event->node->outputs[i], event->outputs[i]);
}

/* Tensor names must stay the file's, or nothing matches: the quantizer's sessions are at level
 * disabled. */
static OwbSession *
open_session (OwbModel *model, int n_threads, const char *which, GError **error)
{
  OwbSession *s = _owb_quant_session_new (model, n_threads, error);
  if (!s)
    g_prefix_error (error, "model %s: ", which);
  return s;
}

/* A run's cancellation comes back as G_IO_ERROR_CANCELLED; callers test OWB_ERROR_CANCELLED. */
static void
normalize_cancel (GError **error)
{
  if (error && *error && g_error_matches (*error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      GError *e = g_error_new_literal (OWB_ERROR, OWB_ERROR_CANCELLED, (*error)->message);
      g_clear_error (error);
      *error = e;
    }
}

static gboolean
check_cancelled (GCancellable *cancellable, GError **error)
{
  GError *local = NULL;
  if (!g_cancellable_set_error_if_cancelled (cancellable, &local))
    return FALSE;
  g_set_error (error, OWB_ERROR, OWB_ERROR_CANCELLED, "comparison cancelled: %s", local->message);
  g_error_free (local);
  return TRUE;
}

static char *
describe_outputs (OwbSession *s)
{
  GString *out = g_string_new (NULL);
  for (guint i = 0; i < owb_session_get_n_outputs (s); i++)
    g_string_append_printf (out, "%s'%s'", i ? ", " : "", owb_session_get_output (s, i)->name);
  return g_string_free (out, FALSE);
}

/* The label line of a sample as integers, one per position of the labelled output. */
static gboolean
parse_labels (const char *line, guint line_no, guint64 positions, const char *output, int64_t **values,
              GError **error)
{
  g_auto (GStrv) words = g_strsplit_set (line, " \t\r\n,", -1);
  g_autofree int64_t *v = g_new (int64_t, MAX (positions, 1));
  guint64 n = 0;
  for (char **w = words; *w; w++)
    {
      if (!**w)
        continue;
      gint64 x;
      if (!g_ascii_string_to_signed (*w, 10, G_MININT64, G_MAXINT64, &x, NULL))
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "labels line %u: '%s' is not an integer class",
                       line_no, *w);
          return FALSE;
        }
      if (n < positions)
        v[n] = x;
      n++;
    }
  if (n != positions)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "labels line %u: %" G_GUINT64_FORMAT " label%s for the %" G_GUINT64_FORMAT
                   " position%s of output '%s' (one class per position)",
                   line_no, n, n == 1 ? "" : "s", positions, positions == 1 ? "" : "s", output);
      return FALSE;
    }
  *values = g_steal_pointer (&v);
  return TRUE;
}

/* Top-1 agreement of one output on one sample and, for the labelled output, whether A and B are
 * right about it. */
static gboolean
classify_sample (OutputSums *os, const OwbTensor *x, const OwbTensor *y, const char *label_line, guint line_no,
                 const char *name, GError **error)
{
  if (!is_classifier_like (x))
    return TRUE;
  int64_t classes = x->dims[x->rank - 1], positions = x->nelems / classes;
  gboolean y_ok = is_classifier_like (y) && owb_tensor_same_shape (x, y);
  g_autofree int64_t *labels = NULL;
  if (label_line && !parse_labels (label_line, line_no, (guint64) positions, name, &labels, error))
    return FALSE;
  gboolean right_a = TRUE, right_b = y_ok;
  for (int64_t p = 0; p < positions; p++)
    {
      int64_t ka = argmax ((const float *) x->data + p * classes, classes);
      int64_t kb = y_ok ? argmax ((const float *) y->data + p * classes, classes) : -1;
      if (y_ok)
        {
          os->positions++;
          os->agree += ka == kb;
        }
      if (labels)
        {
          right_a = right_a && ka == labels[p];
          right_b = right_b && kb == labels[p];
        }
    }
  if (labels)
    {
      os->correct_a += right_a;
      os->correct_b += right_b;
    }
  return TRUE;
}

typedef struct {
  GPtrArray *names;   /* borrowed from the model */
  GPtrArray *tensors;
} Feed;

static void
feed_clear (Feed *f)
{
  g_clear_pointer (&f->names, g_ptr_array_unref);
  g_clear_pointer (&f->tensors, g_ptr_array_unref);
}

static gboolean
run_model (OwbSession *s, const Feed *feed, const OwbRunHooks *hooks, GCancellable *cancellable, OwbTensor **outputs,
           const char *which, GError **error)
{
  OwbRunOptions ro;
  owb_run_options_init (&ro);
  ro.hooks = hooks;
  ro.cancellable = cancellable;
  if (owb_session_run_with_options (s, &ro, feed->names->len, (const char *const *) feed->names->pdata,
                                    (OwbTensor *const *) feed->tensors->pdata, owb_session_get_n_outputs (s), NULL,
                                    outputs, NULL, error))
    return TRUE;
  normalize_cancel (error);
  g_prefix_error (error, "model %s: ", which);
  return FALSE;
}

/* Random samples are drawn per model in its feed order; a feed of B that A also has takes A's
 * value, so that both models see the same numbers even when their inputs are ordered differently. */
static void
share_random_inputs (const Feed *a, Feed *b)
{
  for (guint i = 0; i < b->names->len; i++)
    for (guint k = 0; k < a->names->len; k++)
      if (strcmp (b->names->pdata[i], a->names->pdata[k]) == 0
          && owb_tensor_same_shape (b->tensors->pdata[i], a->tensors->pdata[k])
          && ((OwbTensor *) b->tensors->pdata[i])->dtype == ((OwbTensor *) a->tensors->pdata[k])->dtype)
        {
          owb_tensor_unref (b->tensors->pdata[i]);
          b->tensors->pdata[i] = owb_tensor_ref (a->tensors->pdata[k]);
        }
}

static int
compare_tensor_diffs (gconstpointer pa, gconstpointer pb)
{
  const OwbQuantTensorDiff *a = *(OwbQuantTensorDiff *const *) pa, *b = *(OwbQuantTensorDiff *const *) pb;
  /* finite values first (ascending), then +inf (equal), then NaN (never compared) */
  int ka = isnan (a->sqnr_db) ? 2 : a->sqnr_db == INFINITY ? 1 : 0;
  int kb = isnan (b->sqnr_db) ? 2 : b->sqnr_db == INFINITY ? 1 : 0;
  if (ka != kb)
    return ka - kb;
  if (ka == 0 && a->sqnr_db != b->sqnr_db)
    return a->sqnr_db < b->sqnr_db ? -1 : 1;
  return 0;
}

OwbQuantComparison *
owb_quant_compare (OwbModel *a, OwbModel *b, OwbQuantDataset *dataset, const OwbQuantCompareOptions *options,
                   GError **error)
{
  OwbQuantCompareOptions defaults;
  if (options == NULL)
    {
      owb_quant_compare_options_init (&defaults);
      options = &defaults;
    }
  guint n_samples = owb_quant_dataset_get_n_samples (dataset);
  if (options->labels && options->labels->len != n_samples)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "%u label line%s for %u sample%s: give one line per sample, in the data set's order",
                   options->labels->len, options->labels->len == 1 ? "" : "s", n_samples, n_samples == 1 ? "" : "s");
      return NULL;
    }
  g_autoptr (OwbSession) sa = open_session (a, options->n_threads, "A", error);
  if (!sa)
    return NULL;
  g_autoptr (OwbSession) sb = open_session (b, options->n_threads, "B", error);
  if (!sb)
    return NULL;
  guint n_out = owb_session_get_n_outputs (sa);
  if (owb_session_get_n_outputs (sb) != n_out)
    {
      g_autofree char *oa = describe_outputs (sa), *ob = describe_outputs (sb);
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "the models have different outputs, which are compared by position: A has %u (%s), B has %u (%s)",
                   n_out, oa, owb_session_get_n_outputs (sb), ob);
      return NULL;
    }

  Context ctx = {
    .by_a = g_hash_table_new (g_str_hash, g_str_equal),
    .by_b = g_hash_table_new (g_str_hash, g_str_equal),
    .tracked = g_ptr_array_new_with_free_func ((GDestroyNotify) tracked_free),
    .captured = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) owb_tensor_unref),
    .scratch = g_array_new (FALSE, FALSE, sizeof (float)),
  };
  if (options->per_tensor)
    match_tensors (&ctx, owb_session_get_graph (sa), owb_session_get_graph (sb));
  OwbRunHooks hooks_a = { .node_end = on_node_end_a, .user_data = &ctx };
  OwbRunHooks hooks_b = { .node_end = on_node_end_b, .user_data = &ctx };
  gboolean per_tensor = options->per_tensor && ctx.tracked->len > 0;

  OutputSums *outs = g_new0 (OutputSums, MAX (n_out, 1));
  OwbTensor **out_a = g_new0 (OwbTensor *, MAX (n_out, 1)), **out_b = g_new0 (OwbTensor *, MAX (n_out, 1));
  int labelled = -1; /* the output labels apply to: the first classifier-like one */
  gboolean ok = TRUE;
  Feed fa = { 0 }, fb = { 0 };

  for (guint i = 0; ok && i < n_samples; i++)
    {
      if (check_cancelled (options->cancellable, error))
        {
          ok = FALSE;
          break;
        }
      ok = owb_quant_dataset_load_sample (dataset, i, a, &fa.names, &fa.tensors, error)
           && run_model (sa, &fa, per_tensor ? &hooks_a : NULL, options->cancellable, out_a, "A", error)
           && owb_quant_dataset_load_sample (dataset, i, b, &fb.names, &fb.tensors, error);
      if (ok)
        {
          if (!owb_quant_dataset_get_sample_dir (dataset, i))
            share_random_inputs (&fa, &fb);
          if (per_tensor)
            {
              for (guint k = 0; k < fa.names->len; k++)
                capture (&ctx, fa.names->pdata[k], fa.tensors->pdata[k]);
              for (guint k = 0; k < fb.names->len; k++)
                compare_value (&ctx, fb.names->pdata[k], fb.tensors->pdata[k]);
            }
          ok = run_model (sb, &fb, per_tensor ? &hooks_b : NULL, options->cancellable, out_b, "B", error);
        }
      /* the arena can reuse A's buffers from here on */
      g_hash_table_remove_all (ctx.captured);
      if (ok && i == 0)
        for (guint o = 0; o < n_out; o++)
          if ((outs[o].classifier = is_classifier_like (out_a[o])) && labelled < 0)
            labelled = (int) o;
      if (ok && i == 0 && options->labels && labelled < 0)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                       "labels were given, but no output of A is a classifier's (float, last axis of 2 or more)");
          ok = FALSE;
        }
      for (guint o = 0; ok && o < n_out; o++)
        {
          sums_add (&outs[o].sums, out_a[o], out_b[o], NULL, NULL);
          const char *line = options->labels && (int) o == labelled ? options->labels->pdata[i] : NULL;
          if (outs[o].classifier)
            ok = classify_sample (&outs[o], out_a[o], out_b[o], line, i + 1, owb_session_get_output (sa, o)->name,
                                  error);
        }
      for (guint o = 0; o < n_out; o++)
        {
          g_clear_pointer (&out_a[o], owb_tensor_unref);
          g_clear_pointer (&out_b[o], owb_tensor_unref);
        }
      feed_clear (&fa);
      feed_clear (&fb);
      if (ok && options->progress)
        options->progress (i + 1, n_samples, options->user_data);
    }

  OwbQuantComparison *result = NULL;
  if (ok)
    {
      result = g_new0 (OwbQuantComparison, 1);
      result->n_samples = n_samples;
      result->outputs = g_ptr_array_new_with_free_func ((GDestroyNotify) output_diff_free);
      result->tensors = g_ptr_array_new_with_free_func ((GDestroyNotify) tensor_diff_free);
      for (guint o = 0; o < n_out; o++)
        {
          const OutputSums *os = &outs[o];
          OwbQuantOutputDiff *d = g_new0 (OwbQuantOutputDiff, 1);
          d->name = g_strdup (owb_session_get_output (sa, o)->name);
          d->count = os->sums.count;
          d->sqnr_db = sums_sqnr (&os->sums);
          d->cosine = sums_cosine (&os->sums);
          d->max_abs = os->sums.count ? os->sums.max_abs : NAN;
          d->mean_abs = os->sums.count ? os->sums.sum_abs / os->sums.count : NAN;
          d->n_nonfinite = os->sums.n_nonfinite;
          d->n_skipped = os->sums.n_skipped;
          d->classifier = os->classifier;
          d->top1_agreement = os->positions ? (double) os->agree / os->positions : NAN;
          if (options->labels && (int) o == labelled)
            {
              d->has_accuracy = TRUE;
              d->accuracy_a = n_samples ? (double) os->correct_a / n_samples : NAN;
              d->accuracy_b = n_samples ? (double) os->correct_b / n_samples : NAN;
            }
          g_ptr_array_add (result->outputs, d);
        }
      for (guint k = 0; k < ctx.tracked->len; k++)
        {
          const Tracked *t = g_ptr_array_index (ctx.tracked, k);
          if (t->sums.n_seen == 0)
            continue; /* not a float tensor, or never computed */
          OwbQuantTensorDiff *d = g_new0 (OwbQuantTensorDiff, 1);
          d->name = g_strdup (t->name);
          d->matched = g_strdup (t->matched);
          d->node = g_strdup (t->node);
          d->op_type = g_strdup (t->op_type);
          d->count = t->sums.count;
          d->sqnr_db = sums_sqnr (&t->sums);
          d->cosine = sums_cosine (&t->sums);
          d->max_abs = t->sums.count ? t->sums.max_abs : NAN;
          d->n_nonfinite = t->sums.n_nonfinite;
          d->n_skipped = t->sums.n_skipped;
          const Sums *s = &t->sums;
          d->min_a = s->count ? s->min_x : NAN;
          d->max_a = s->count ? s->max_x : NAN;
          d->mean_a = s->count ? s->sx / s->count : NAN;
          d->std_a = sums_std (s->sx, s->sx2, s->count);
          d->min_b = s->count ? s->min_y : NAN;
          d->max_b = s->count ? s->max_y : NAN;
          d->mean_b = s->count ? s->sy / s->count : NAN;
          d->std_b = sums_std (s->sy, s->sy2, s->count);
          error_bins_take (d, &t->errors);
          g_ptr_array_add (result->tensors, d);
        }
      g_ptr_array_sort (result->tensors, compare_tensor_diffs);
    }
  for (guint o = 0; o < n_out; o++)
    {
      if (out_a[o])
        owb_tensor_unref (out_a[o]);
      if (out_b[o])
        owb_tensor_unref (out_b[o]);
    }
  g_free (out_a);
  g_free (out_b);
  g_free (outs);
  feed_clear (&fa);
  feed_clear (&fb);
  g_hash_table_unref (ctx.captured);
  g_array_unref (ctx.scratch);
  g_hash_table_unref (ctx.by_a);
  g_hash_table_unref (ctx.by_b);
  g_ptr_array_unref (ctx.tracked);
  return result;
}

/* ---- JSON ----------------------------------------------------------------------------------- */

char *
owb_quant_comparison_to_json (const OwbQuantComparison *comparison)
{
  GString *out = g_string_new (NULL);
  owb_json_begin_object (out, NULL);
  owb_json_append_member_uint (out, "samples", comparison->n_samples);
  owb_json_begin_array (out, "outputs");
  for (guint i = 0; i < comparison->outputs->len; i++)
    {
      const OwbQuantOutputDiff *d = g_ptr_array_index (comparison->outputs, i);
      owb_json_begin_object (out, NULL);
      owb_json_append_member_string (out, "name", d->name);
      _owb_quant_json_member_number (out, "sqnr_db", d->sqnr_db);
      _owb_quant_json_member_number (out, "cosine", d->cosine);
      _owb_quant_json_member_number (out, "max_abs", d->max_abs);
      _owb_quant_json_member_number (out, "mean_abs", d->mean_abs);
      if (d->classifier)
        _owb_quant_json_member_number (out, "top1_agreement", d->top1_agreement);
      if (d->has_accuracy)
        {
          _owb_quant_json_member_number (out, "accuracy_a", d->accuracy_a);
          _owb_quant_json_member_number (out, "accuracy_b", d->accuracy_b);
        }
      g_string_append_c (out, '}');
    }
  g_string_append_c (out, ']');
  owb_json_begin_array (out, "tensors");
  for (guint i = 0; i < comparison->tensors->len; i++)
    {
      const OwbQuantTensorDiff *d = g_ptr_array_index (comparison->tensors, i);
      owb_json_begin_object (out, NULL);
      owb_json_append_member_string (out, "name", d->name);
      owb_json_append_member_string (out, "matched", d->matched);
      owb_json_append_member_string (out, "node", d->node);
      owb_json_append_member_string (out, "op", d->op_type);
      _owb_quant_json_member_number (out, "sqnr_db", d->sqnr_db);
      _owb_quant_json_member_number (out, "cosine", d->cosine);
      _owb_quant_json_member_number (out, "max_abs", d->max_abs);
      g_string_append_c (out, '}');
    }
  g_string_append (out, "]}");
  return g_string_free (out, FALSE);
}
