/* owb-quant-histogram.c: streamed histograms of a tensor's values and the clipping thresholds the
 * calibration methods choose from them (percentile, entropy, mse). */
#include "owb-quant-private.h"

#include <math.h>
#include <string.h>

void
_owb_quant_histogram_init (OwbQuantHistogram *h, guint n_bins)
{
  g_assert (n_bins >= 4 && n_bins % 4 == 0);
  h->n_bins = n_bins;
  h->counts = g_new0 (double, n_bins);
  h->range = 0;
  h->total = 0;
}

void
_owb_quant_histogram_clear (OwbQuantHistogram *h)
{
  g_clear_pointer (&h->counts, g_free);
  h->n_bins = 0;
}

/* Doubles the range: each side's pairs of bins (counted from 0 outwards) become one. */
static void
histogram_grow (OwbQuantHistogram *h)
{
  guint half = h->n_bins / 2;
  double *pos = h->counts + half; /* bin j of the positive side covers [j w, (j + 1) w) */
  for (guint j = 0; j < half / 2; j++)
    pos[j] = pos[2 * j] + pos[2 * j + 1];
  memset (pos + half / 2, 0, half / 2 * sizeof (double));
  /* The negative side mirrors it: bin half - 1 - j covers [-(j + 1) w, -j w). */
  double *neg = h->counts;
  for (guint j = 0; j < half / 2; j++)
    neg[half - 1 - j] = neg[half - 1 - 2 * j] + neg[half - 2 - 2 * j];
  memset (neg, 0, half / 2 * sizeof (double));
  h->range *= 2;
}

void
_owb_quant_histogram_add (OwbQuantHistogram *h, const float *data, gsize n, double absmax)
{
  if (!(absmax > 0))
    {
      /* All zeros (or nothing finite): they fall in the bin just above 0 once there is a range. */
      for (gsize i = 0; i < n; i++)
        if (isfinite (data[i]))
          {
            if (h->range > 0)
              h->counts[h->n_bins / 2] += 1;
            h->total += 1;
          }
      return;
    }
  if (h->range == 0)
    {
      /* Zeros seen before any range were counted in total only: put them in now. */
      h->range = absmax;
      h->counts[h->n_bins / 2] += h->total;
    }
  while (absmax > h->range)
    histogram_grow (h);
  double scale = h->n_bins / (2 * h->range), range = h->range;
  int last = (int) h->n_bins - 1;
  double *counts = h->counts;
  /* counted here, not in h->total: a store through counts may alias it, which would make every
   * value wait for the previous one's */
  gsize added = 0;
  for (gsize i = 0; i < n; i++)
    {
      float x = data[i];
      if (!isfinite (x))
        continue;
      /* x + range >= 0 (range >= absmax >= |x|), so truncation is floor, without a libm call per
       * value (the baseline x86-64 target has no rounding instruction) */
      int b = (int) ((x + range) * scale);
      counts[CLAMP (b, 0, last)] += 1;
      added++;
    }
  h->total += added;
}

/* The histogram of |x|: bin j covers [j w, (j + 1) w), w = range / (n_bins / 2). */
static double *
fold_abs (const OwbQuantHistogram *h)
{
  guint half = h->n_bins / 2;
  double *a = g_new (double, half);
  for (guint j = 0; j < half; j++)
    a[j] = h->counts[half + j] + h->counts[half - 1 - j];
  return a;
}

double
_owb_quant_histogram_percentile (const OwbQuantHistogram *h, double percentile)
{
  if (h->range == 0 || h->total == 0)
    return 0;
  guint half = h->n_bins / 2;
  g_autofree double *a = fold_abs (h);
  double want = CLAMP (percentile, 0, 100) / 100.0 * h->total, sum = 0;
  double w = h->range / half;
  for (guint j = 0; j < half; j++)
    {
      sum += a[j];
      if (sum >= want)
        return (j + 1) * w;
    }
  return h->range;
}

/* Kullback-Leibler divergence of q from p (both unnormalised, with totals sp and sq); bins where p
 * is positive and q is not get a small mass, as if q were smoothed. */
static double
kl_divergence (const double *p, const double *q, guint n, double sp, double sq)
{
  double kl = 0;
  for (guint i = 0; i < n; i++)
    if (p[i] > 0)
      {
        double pi = p[i] / sp;
        double qi = q[i] > 0 ? q[i] / sq : 1e-10;
        kl += pi * log (pi / qi);
      }
  return kl;
}

double
_owb_quant_histogram_entropy (const OwbQuantHistogram *h, int levels, double max_clipped)
{
  if (h->range == 0 || h->total == 0)
    return 0;
  guint half = h->n_bins / 2;
  g_autofree double *a = fold_abs (h);
  double w = h->range / half;
  guint used = half;
  while (used > 1 && a[used - 1] == 0)
    used--;
  levels = MAX (levels, 2);
  if (used <= (guint) levels)
    return used * w; /* every level has a bin of its own already: nothing to clip */
  g_autofree double *p = g_new (double, used);
  g_autofree double *q = g_new (double, used);
  double tail = 0;
  for (guint j = used; j < half; j++)
    tail += a[j];
  /* Suffix sums give each candidate's outliers in O(1). */
  g_autofree double *suffix = g_new0 (double, used + 1);
  for (guint j = used; j-- > 0;)
    suffix[j] = suffix[j + 1] + a[j];
  double best_kl = INFINITY;
  guint best = used;
  double clip_limit = max_clipped >= 0 ? max_clipped * h->total : INFINITY;
  for (guint i = (guint) levels; i <= used; i++)
    {
      /* KL counts how much mass moves, not how far: a threshold that folds a fifth of the values
       * (an image's strokes) into a bin holding the background costs it little. Thresholds that
       * clip more than outliers are not candidates. */
      if (suffix[i] + tail > clip_limit)
        continue;
      /* Reference: the first i bins, the clipped outliers added to the last one. */
      memcpy (p, a, i * sizeof (double));
      p[i - 1] += suffix[i] + tail;
      double sp = 0;
      for (guint j = 0; j < i; j++)
        sp += p[j];
      /* Candidate: the same i bins merged into `levels` groups, each group's mass spread evenly
       * over its non-empty bins (an empty bin stays empty: quantization cannot fill it). */
      double sq = 0;
      for (int g = 0; g < levels; g++)
        {
          guint start = (guint) ((guint64) g * i / levels);
          guint end = (guint) ((guint64) (g + 1) * i / levels);
          if (g == levels - 1)
            end = i;
          double mass = 0;
          guint nonzero = 0;
          for (guint j = start; j < end; j++)
            {
              mass += a[j];
              nonzero += a[j] > 0;
            }
          for (guint j = start; j < end; j++)
            q[j] = a[j] > 0 ? mass / nonzero : 0;
          sq += mass;
        }
      if (sq <= 0)
        continue;
      double kl = kl_divergence (p, q, i, sp, sq);
      if (kl < best_kl)
        {
          best_kl = kl;
          best = i;
        }
    }
  return best * w;
}

double
_owb_quant_histogram_mse (const OwbQuantHistogram *h, double min, double max, int levels)
{
  if (h->range == 0 || h->total == 0)
    return 0;
  guint n = h->n_bins, half = n / 2;
  double w = 2 * h->range / n;
  /* Prefix sums of count, count * x and count * x^2 over bins (x: the bin's centre). */
  g_autofree double *c0 = g_new0 (double, n + 1);
  g_autofree double *c1 = g_new0 (double, n + 1);
  g_autofree double *c2 = g_new0 (double, n + 1);
  for (guint b = 0; b < n; b++)
    {
      double x = -h->range + (b + 0.5) * w;
      double c = h->counts[b];
      c0[b + 1] = c0[b] + c;
      c1[b + 1] = c1[b] + c * x;
      c2[b + 1] = c2[b] + c * x * x;
    }
  levels = MAX (levels, 2);
  double best_err = INFINITY, best_t = h->range;
  for (guint j = 1; j <= half; j++)
    {
      double t = j * w;
      double lo = MAX (min, -t), hi = MIN (max, t);
      lo = MIN (lo, 0.0);
      hi = MAX (hi, 0.0);
      if (hi - lo <= 0)
        continue;
      double step = (hi - lo) / (levels - 1);
      /* Bins wholly above hi or below lo are clipped; the rest round (error step^2 / 12). */
      guint right = (guint) CLAMP (ceil ((hi + h->range) / w), 0, n); /* first bin clipped high */
      guint left = (guint) CLAMP (floor ((lo + h->range) / w), 0, n); /* bins below it clipped low */
      double n_hi = c0[n] - c0[right], s_hi = c1[n] - c1[right], q_hi = c2[n] - c2[right];
      double n_lo = c0[left], s_lo = c1[left], q_lo = c2[left];
      double inside = c0[right] - c0[left];
      double err = inside * step * step / 12.0 + (q_hi - 2 * hi * s_hi + hi * hi * n_hi)
                   + (q_lo - 2 * lo * s_lo + lo * lo * n_lo);
      if (err < best_err)
        {
          best_err = err;
          best_t = t;
        }
    }
  return best_t;
}
