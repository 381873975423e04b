/* optimizer-test-util.h: what the optimizer tests share: counting ops in a graph, comparing outputs
 * before and after, declaring graph outputs, sessions at a level, optimizing in place and finding a
 * pass's report. */
#pragma once

#include <owb/owb.h>
#include <math.h>
#include <string.h>

static inline guint
count_op (const OwbGraph *g, const char *op)
{
  guint n = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    n += strcmp (((OwbNode *) g_ptr_array_index (g->nodes, i))->op_type, op) == 0;
  return n;
}

/* Largest |a - b| over the largest |a|. */
static inline double
max_rel_diff (const OwbTensor *a, const OwbTensor *b)
{
  g_assert_true (owb_tensor_same_shape (a, b));
  double diff = 0, scale = 1e-12;
  for (int64_t i = 0; i < a->nelems; i++)
    {
      double x = owb_tensor_get_double (a, i), y = owb_tensor_get_double (b, i);
      diff = MAX (diff, fabs (x - y));
      scale = MAX (scale, fabs (x));
    }
  return diff / scale;
}

static inline void
add_output (OwbModel *m, const char *name)
{
  g_ptr_array_add (m->graph->outputs, owb_value_info_new (name, NULL));
}

/* A session of m on the CPU provider at `level` with `threads` intra-op threads and the passes
 * `disabled` (NULL: none) switched off; NULL with the error. */
static inline OwbSession *
opt_session_new (OwbModel *m, OwbOptimizeLevel level, int threads, const char *const *disabled, GError **error)
{
  OwbSessionOptions opts;
  owb_session_options_init (&opts);
  opts.providers = owb_providers_new_from_list ("cpu", NULL);
  opts.n_threads = threads;
  opts.optimize = level;
  opts.disabled_passes = disabled;
  OwbSession *s = owb_session_new (m, &opts, error);
  g_ptr_array_unref (opts.providers);
  return s;
}

/* Optimizes m in place with `options` (their providers: the CPU) and returns the report; the
 * optimization must succeed. */
static inline OwbOptimizeReport *
optimize_on_cpu (OwbModel *m, OwbOptimizeOptions *options)
{
  options->providers = owb_providers_new_from_list ("cpu", NULL);
  OwbOptimizeReport *report = NULL;
  GError *error = NULL;
  gboolean ok = owb_model_optimize (m, options, &report, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  g_clear_pointer (&options->providers, g_ptr_array_unref);
  return report;
}

/* The report of pass `name`, or NULL where it did not run. */
static inline const OwbPassReport *
find_pass_report (const OwbOptimizeReport *report, const char *name)
{
  for (guint i = 0; i < report->passes->len; i++)
    {
      const OwbPassReport *p = g_ptr_array_index (report->passes, i);
      if (strcmp (p->pass, name) == 0)
        return p;
    }
  return NULL;
}

/* The same for a pass that must have run. */
static inline const OwbPassReport *
get_pass_report (const OwbOptimizeReport *report, const char *name)
{
  const OwbPassReport *p = find_pass_report (report, name);
  g_assert_nonnull (p);
  return p;
}

/* A tensor of uniform values in [lo, hi) drawn from `seed`. */
static inline OwbTensor *
seeded_tensor (OwbDataType dtype, int rank, const int64_t *dims, guint32 seed, double lo, double hi)
{
  OwbTensor *t = owb_tensor_new (dtype, rank, dims, NULL);
  GRand *r = g_rand_new_with_seed (seed);
  for (int64_t i = 0; i < t->nelems; i++)
    owb_tensor_set_double (t, i, g_rand_double_range (r, lo, hi));
  g_rand_free (r);
  return t;
}

/* A float initializer `name` of uniform values in [lo, hi), seeded by its name. */
static inline void
add_weight_range (OwbModel *m, const char *name, int rank, const int64_t *dims, double lo, double hi)
{
  owb_graph_add_initializer (m->graph, name, seeded_tensor (OWB_TYPE_FLOAT, rank, dims, g_str_hash (name), lo, hi));
}
