/* owb-tensor-stats.h: summary statistics, histograms and top-k of a tensor (the inspector's and Run
 * page's summaries, and whoever else needs them), and the quantiles of timings (owb bench, the
 * profiler, the Quantize page's latency). */
#pragma once

#include <owb/owb-api.h>
#include <owb/owb-tensor.h>

G_BEGIN_DECLS

typedef struct {
  guint64 count;     /* elements */
  guint64 n_nan, n_inf;
  double min, max;   /* over finite values */
  double mean, std;  /* over finite values */
} OwbTensorStats;

/* Statistics of a numeric tensor (any numeric dtype, float16/bfloat16/float8 included). When
 * n_bins > 0, bins[n_bins] receives a histogram of the finite values over [min, max]. FALSE with
 * an OWB_ERROR_TYPE error for strings and non-tensor values. */
OWB_API gboolean owb_tensor_stats_compute (const OwbTensor *tensor, OwbTensorStats *stats, guint n_bins,
                                           guint64 *bins, GError **error);

/* The k largest values of the last axis of a tensor's first row (a classifier's scores): writes
 * up to k indices and values, best first, and returns how many. 0 for non-numeric tensors. */
OWB_API guint owb_tensor_top_k (const OwbTensor *tensor, guint k, int64_t *indices, double *values);

/* Sorts n values ascending, in place. */
OWB_API void owb_stats_sort_doubles (double *values, guint n);
/* The q-quantile (q in [0, 1]) of n values sorted ascending, interpolated linearly between the two
 * nearest (numpy's default): q 0.5 is the median, 0 the smallest, 1 the largest. 0 when n is 0. */
OWB_API double owb_stats_quantile (const double *sorted, guint n, double q);

G_END_DECLS
