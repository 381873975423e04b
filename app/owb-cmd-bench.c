/* owb-cmd-bench.c: `owb bench MODEL`: load time, run latency statistics and peak memory. */
#include "owb-cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
owb_cmd_bench (int argc, char **argv)
{
  g_autofree char *input_dir = NULL, *providers_opt = NULL, *optimize_opt = NULL;
  g_auto (GStrv) named = NULL, dim_opts = NULL;
  int n_threads = 0, warmup = 5, iterations = 50, seed = 0;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    OWB_CLI_INPUT_ENTRIES (input_dir, named),
    OWB_CLI_DIM_ENTRY (dim_opts),
    { "seed", 0, 0, G_OPTION_ARG_INT, &seed, "Seed of the random inputs (default 0)", "N" },
    OWB_CLI_THREADS_ENTRY (n_threads),
    { "warmup", 0, 0, G_OPTION_ARG_INT, &warmup, "Untimed runs first (default 5)", "N" },
    { "iterations", 'n', 0, G_OPTION_ARG_INT, &iterations, "Timed runs (default 50)", "N" },
    OWB_CLI_OPTIMIZE_ENTRY (optimize_opt),
    OWB_CLI_PROVIDERS_ENTRY (providers_opt),
    OWB_CLI_JSON_ENTRY (json),
    { NULL }
  };
  g_autoptr (GError) error = NULL;
  g_auto (OwbCliFeed) feed = { 0 };
  g_autoptr (GString) out = g_string_new (NULL);
  g_autofree double *times = NULL;
  OwbRunStats stats = { 0 };
  const char *path;
  double load_ms, sum = 0, sq = 0, mean, median, stddev;
  int status;

  const char *summary = "Time MODEL: session load time, then per-run latency over --iterations runs\n"
                        "after --warmup runs, and the peak resident memory. Inputs are random\n"
                        "(symbolic dims 1 unless --dim NAME=VALUE) unless files are given.";
  if (!owb_cli_parse_model ("bench", summary, entries, &argc, &argv, &path))
    return OWB_EXIT_USAGE;
  if (warmup < 0 || iterations < 1)
    {
      owb_cli_error ("bench", "--warmup must be 0 or more and --iterations 1 or more");
      return OWB_EXIT_USAGE;
    }
  if (!owb_cli_feed_options (&feed, "bench", dim_opts, providers_opt, n_threads, optimize_opt))
    return OWB_EXIT_USAGE;

  status = owb_cli_feed_open (&feed, path, input_dir, named, TRUE, (guint32) seed);
  if (status != OWB_EXIT_OK)
    return status;
  load_ms = feed.load_ms;
  times = g_new0 (double, iterations);

  for (int it = -warmup; it < iterations; it++)
    {
      double elapsed;
      if (!owb_cli_feed_run_once (&feed, NULL, &stats, &elapsed, &error))
        {
          owb_cli_gerror (path, error);
          return OWB_EXIT_FAILED;
        }
      if (it >= 0)
        times[it] = elapsed;
    }

  for (int i = 0; i < iterations; i++)
    sum += times[i];
  mean = sum / iterations;
  for (int i = 0; i < iterations; i++)
    sq += (times[i] - mean) * (times[i] - mean);
  stddev = iterations > 1 ? sqrt (sq / (iterations - 1)) : 0;
  owb_stats_sort_doubles (times, iterations);
  median = owb_stats_quantile (times, iterations, 0.5);

  if (json)
    {
      owb_json_begin_object (out, NULL);
      owb_json_append_member_string (out, "model", path);
      owb_json_member_double (out, "median_ms", median);
      owb_json_member_double (out, "min_ms", times[0]);
      owb_json_member_double (out, "mean_ms", mean);
      owb_json_member_double (out, "max_ms", times[iterations - 1]);
      owb_json_member_double (out, "p90_ms", owb_stats_quantile (times, iterations, 0.9));
      owb_json_member_double (out, "stddev_ms", stddev);
      owb_json_member_double (out, "load_ms", load_ms);
      owb_json_member_double (out, "peak_rss_mb", owb_cli_peak_rss_mb ());
      owb_json_member_double (out, "arena_peak_mb", stats.peak_bytes / (1024.0 * 1024.0));
      owb_json_append_member_int (out, "iterations", iterations);
      owb_json_append_member_int (out, "warmup", warmup);
      owb_json_append_member_int (out, "threads", feed.threads_used);
      owb_json_append_member_string (out, "optimize", owb_cli_optimize_name (feed.options.optimize));
      owb_json_append_member_string (out, "providers", providers_opt != NULL ? providers_opt : "cpu");
      g_string_append (out, "}\n");
    }
  else
    {
      g_string_append_printf (out, "Model          %s\n", path);
      g_string_append_printf (out, "Settings       %d thread%s, optimization %s, providers %s\n", feed.threads_used,
                              feed.threads_used == 1 ? "" : "s", owb_cli_optimize_name (feed.options.optimize),
                              providers_opt != NULL ? providers_opt : "cpu");
      g_string_append_printf (out, "Load           %.2f ms\n", load_ms);
      g_string_append_printf (out, "Latency        median %.3f ms, min %.3f, mean %.3f, p90 %.3f, max %.3f, stddev %.3f\n",
                              median, times[0], mean, owb_stats_quantile (times, iterations, 0.9), times[iterations - 1], stddev);
      g_string_append_printf (out, "               over %d runs after %d warm-up run%s\n", iterations, warmup,
                              warmup == 1 ? "" : "s");
      g_string_append_printf (out, "Peak memory    %.1f MiB resident, %.2f MiB of intermediate tensors\n",
                              owb_cli_peak_rss_mb (), stats.peak_bytes / (1024.0 * 1024.0));
    }
  fputs (out->str, stdout);
  return OWB_EXIT_OK;
}
