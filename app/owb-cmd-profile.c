/* owb-cmd-profile.c: `owb profile MODEL`: where a run's time goes, per op type and per node, and
 * how the wall time splits into nodes, gaps and busy threads; with --db the run is stored. */
#include "owb-cli.h"

#include <owb/owb-profiler.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first tensor of a shapes string ("float32[1,10] float32[1]"): the node's first output. */
static char *
first_shape (const char *shapes)
{
  if (!shapes)
    return g_strdup ("");
  const char *space = strchr (shapes, ' ');
  return space ? g_strndup (shapes, space - shapes) : g_strdup (shapes);
}

static char *
providers_text (GPtrArray *providers)
{
  GString *out = g_string_new (NULL);
  for (guint i = 0; providers && i < providers->len; i++)
    {
      const OwbProvider *p = g_ptr_array_index (providers, i);
      g_string_append_printf (out, "%s%s", i ? "," : "", p->name);
    }
  return g_string_free (out, FALSE);
}

/* Stores the run in db_path; prints "owb: FILE: …" on an error. */
static gboolean
store_run (OwbProfRun *run, const char *db_path, const char *model_path, const char *label, OwbCliFeed *feed)
{
  g_autoptr (GError) error = NULL;
  if (!owb_prof_run_set_model (run, model_path, &error))
    {
      owb_cli_gerror (model_path, error);
      return FALSE;
    }
  owb_prof_run_set_host (run);
  g_free (run->label);
  run->label = g_strdup (label ? label : "");
  g_free (run->optimize);
  run->optimize = g_strdup (owb_cli_optimize_name (feed->options.optimize));
  g_free (run->providers);
  run->providers = providers_text (feed->providers);
  g_free (run->engine_version);
  run->engine_version = g_strdup (OWB_VERSION);
  g_autoptr (OwbProfDb) db = owb_prof_db_open (db_path, TRUE, &error);
  if (!db || !owb_prof_db_store_run (db, run, &error))
    {
      owb_cli_gerror (db_path, error);
      return FALSE;
    }
  return TRUE;
}

int
owb_cmd_profile (int argc, char **argv)
{
  g_autofree char *input_dir = NULL, *providers_opt = NULL, *optimize_opt = NULL, *db_path = NULL, *label = NULL;
  g_auto (GStrv) named = NULL, dim_opts = NULL;
  int n_threads = 0, warmup = 3, iterations = 10, top = 20;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    OWB_CLI_INPUT_ENTRIES (input_dir, named),
    OWB_CLI_DIM_ENTRY (dim_opts),
    OWB_CLI_THREADS_ENTRY (n_threads),
    { "warmup", 0, 0, G_OPTION_ARG_INT, &warmup, "Untimed runs first (default 3)", "N" },
    { "iterations", 'n', 0, G_OPTION_ARG_INT, &iterations, "Profiled runs (default 10)", "N" },
    { "top", 0, 0, G_OPTION_ARG_INT, &top, "Nodes to list, slowest first (default 20)", "N" },
    OWB_CLI_OPTIMIZE_ENTRY (optimize_opt),
    OWB_CLI_PROVIDERS_ENTRY (providers_opt),
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &db_path, "Store the run (every profiled iteration) in this SQLite file, made if missing", "FILE" },
    { "label", 0, 0, G_OPTION_ARG_STRING, &label, "A label for the stored run", "TEXT" },
    OWB_CLI_JSON_ENTRY (json),
    { NULL }
  };
  g_autoptr (GError) error = NULL;
  g_auto (OwbCliFeed) feed = { 0 };
  g_autoptr (GString) out = g_string_new (NULL);
  g_autoptr (OwbProfRun) run = owb_prof_run_new ();
  g_autoptr (OwbProfRecorder) recorder = NULL;
  OwbRunOptions profiled;
  const char *path;
  double run_ms = 0, nodes_ms = 0;
  int status;

  const char *summary = "Profile MODEL: after --warmup runs, time every node over --iterations runs\n"
                        "and print a table per op type, the --top slowest nodes and how the wall\n"
                        "time splits into nodes, gaps between them and busy threads. Inputs are\n"
                        "random unless files are given. With --db the run is stored (see owb runs).";
  if (!owb_cli_parse_model ("profile", summary, entries, &argc, &argv, &path))
    return OWB_EXIT_USAGE;
  if (warmup < 0 || iterations < 1 || top < 0)
    {
      owb_cli_error ("profile", "--warmup and --top must be 0 or more and --iterations 1 or more");
      return OWB_EXIT_USAGE;
    }
  if (label && !db_path)
    {
      owb_cli_error ("profile", "--label needs --db FILE");
      return OWB_EXIT_USAGE;
    }
  if (!owb_cli_feed_options (&feed, "profile", dim_opts, providers_opt, n_threads, optimize_opt))
    return OWB_EXIT_USAGE;

  status = owb_cli_feed_open (&feed, path, input_dir, named, TRUE, 0);
  if (status != OWB_EXIT_OK)
    return status;
  /* the session's optimize report names what each fused node replaced */
  recorder = owb_prof_recorder_new (run, feed.session);
  /* warm-up runs carry no hooks: the recorder sees the profiled runs only */
  owb_run_options_init (&profiled);
  profiled.hooks = owb_prof_recorder_get_hooks (recorder);

  for (int it = -warmup; it < iterations; it++)
    {
      double elapsed;
      if (!owb_cli_feed_run_once (&feed, it >= 0 ? &profiled : NULL, NULL, &elapsed, &error))
        {
          owb_cli_gerror (path, error);
          return OWB_EXIT_FAILED;
        }
      if (it >= 0)
        run_ms += elapsed;
    }
  if (db_path && !store_run (run, db_path, path, label, &feed))
    return OWB_EXIT_FAILED;

  {
    g_autoptr (GArray) rows = owb_prof_run_dup_node_stats (run);
    g_autoptr (GArray) ops = owb_prof_run_dup_op_stats (run);
    OwbProfWallSplit split;
    owb_prof_run_get_wall_split (run, &split);
    for (guint i = 0; i < rows->len; i++)
      nodes_ms += g_array_index (rows, OwbProfStat, i).mean_ms;
    guint n_top = MIN ((guint) top, rows->len);
    double wall = split.wall_ms > 0 ? split.wall_ms : 1;
    if (json)
      {
        owb_json_begin_object (out, NULL);
        owb_json_append_member_string (out, "model", path);
        if (db_path)
          {
            owb_json_append_member_int (out, "run_id", run->id);
            owb_json_append_member_string (out, "db", db_path);
          }
        owb_json_append_member_int (out, "iterations", iterations);
        owb_json_append_member_int (out, "warmup", warmup);
        owb_json_append_member_int (out, "threads", feed.threads_used);
        owb_json_append_member_string (out, "optimize", owb_cli_optimize_name (feed.options.optimize));
        owb_json_member_double (out, "run_ms", run_ms / iterations);
        owb_json_member_double (out, "nodes_ms", nodes_ms);
        owb_json_member_double (out, "wall_ms", split.wall_ms);
        owb_json_member_double (out, "top_nodes_ms", split.nodes_ms);
        owb_json_member_double (out, "gaps_ms", split.gaps_ms);
        owb_json_begin_array (out, "thread_busy");
        for (guint t = 0; t < split.thread_busy_ms->len; t++)
          {
            double busy = g_array_index (split.thread_busy_ms, double, t);
            owb_json_begin_object (out, NULL);
            owb_json_append_member_uint (out, "thread", t);
            owb_json_member_double (out, "busy_ms", busy);
            owb_json_member_double (out, "percent", 100 * busy / wall);
            g_string_append_c (out, '}');
          }
        g_string_append_c (out, ']');
        owb_json_begin_array (out, "ops");
        for (guint i = 0; i < ops->len; i++)
          {
            const OwbProfStat *o = &g_array_index (ops, OwbProfStat, i);
            owb_json_begin_object (out, NULL);
            owb_json_append_member_string (out, "op_type", o->op_type);
            owb_json_append_key (out, "calls");
            g_string_append_printf (out, "%.0f", o->calls);
            owb_json_member_double (out, "total_ms", o->mean_ms);
            owb_json_member_double (out, "percent", 100 * o->share);
            owb_json_member_double (out, "mean_us", o->calls > 0 ? 1000 * o->mean_ms / o->calls : 0);
            g_string_append_c (out, '}');
          }
        g_string_append_c (out, ']');
        owb_json_begin_array (out, "nodes");
        for (guint i = 0; i < n_top; i++)
          {
            const OwbProfStat *t = &g_array_index (rows, OwbProfStat, i);
            g_autofree char *shape = first_shape (t->output_shapes);
            owb_json_begin_object (out, NULL);
            owb_json_append_member_string (out, "name", t->name);
            owb_json_append_member_string (out, "op_type", t->op_type);
            owb_json_append_member_string (out, "provider", t->provider);
            if (t->graph_path[0])
              owb_json_append_member_string (out, "graph_path", t->graph_path);
            owb_json_append_member_uint (out, "order", t->node);
            owb_json_member_double (out, "ms", t->mean_ms);
            owb_json_member_double (out, "median_ms", t->median_ms);
            owb_json_member_double (out, "min_ms", t->min_ms);
            owb_json_member_double (out, "p90_ms", t->p90_ms);
            owb_json_member_double (out, "percent", 100 * t->share);
            owb_json_append_member_string (out, "output_shape", shape);
            g_string_append_c (out, '}');
          }
        g_string_append (out, "]}\n");
      }
    else
      {
        g_string_append_printf (out, "Model      %s\n", path);
        if (db_path)
          g_string_append_printf (out, "Stored     run id %" G_GINT64_FORMAT " in %s\n", run->id, db_path);
        g_string_append_printf (out, "Settings   %d thread%s, optimization %s, %d profiled runs after %d warm-up\n",
                                feed.threads_used, feed.threads_used == 1 ? "" : "s",
                                owb_cli_optimize_name (feed.options.optimize), iterations, warmup);
        g_string_append_printf (out, "Run        %.3f ms per run, %.3f ms of it inside nodes\n", run_ms / iterations,
                                nodes_ms);
        g_string_append_printf (out, "Wall       %.3f ms per run in the engine: %.3f ms in nodes (%.1f%%), %.3f ms between nodes (%.1f%%)\n",
                                split.wall_ms, split.nodes_ms, 100 * split.nodes_ms / wall, split.gaps_ms,
                                100 * split.gaps_ms / wall);
        g_string_append (out, "Busy       ");
        for (guint t = 0; t < split.thread_busy_ms->len; t++)
          {
            double busy = g_array_index (split.thread_busy_ms, double, t);
            g_string_append_printf (out, "%sthread %u %.3f ms (%.1f%%)", t ? ", " : "", t, busy, 100 * busy / wall);
          }
        g_string_append (out, "\n\n");
        g_string_append_printf (out, "%-28s %7s %10s %7s %10s\n", "op type", "calls", "total ms", "%", "mean us");
        for (guint i = 0; i < ops->len; i++)
          {
            const OwbProfStat *o = &g_array_index (ops, OwbProfStat, i);
            g_string_append_printf (out, "%-28s %7.0f %10.3f %7.2f %10.1f\n", o->op_type, o->calls, o->mean_ms,
                                    100 * o->share, o->calls > 0 ? 1000 * o->mean_ms / o->calls : 0);
          }
        g_string_append_printf (out, "\nTop %u nodes (ms per run: mean, median, minimum)\n%-32s %-20s %-8s %9s %7s %9s %9s  %s\n",
                                n_top, "node", "op type", "provider", "ms", "%", "median", "min", "output");
        for (guint i = 0; i < n_top; i++)
          {
            const OwbProfStat *t = &g_array_index (rows, OwbProfStat, i);
            g_autofree char *shape = first_shape (t->output_shapes);
            g_string_append_printf (out, "%-32s %-20s %-8s %9.3f %7.2f %9.3f %9.3f  %s\n", t->name, t->op_type,
                                    t->provider, t->mean_ms, 100 * t->share, t->median_ms, t->min_ms, shape);
          }
      }
    owb_prof_wall_split_clear (&split);
  }
  /* node names come from the model: no terminal escapes get through */
  g_autofree char *safe = json ? NULL : owb_cli_escape_lines (out->str);
  fputs (safe ? safe : out->str, stdout);
  return status;
}
