/* owb-cmd-runs.c: `owb runs FILE`: the profiling runs stored by `owb profile --db`: list, compare
 * two, export one as a Chrome trace, import an ONNX Runtime profile, show a critical path, delete. */
#include "owb-cli.h"

#include <owb/owb-profiler.h>

#include <math.h>
#include <stdio.h>

static int
list_runs (OwbProfDb *db, const char *path, gboolean json)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) runs = owb_prof_db_list_runs (db, NULL, &error);
  if (!runs)
    {
      owb_cli_gerror (path, error);
      return OWB_EXIT_FAILED;
    }
  g_autoptr (GString) out = g_string_new (NULL);
  if (json)
    {
      owb_json_begin_object (out, NULL);
      owb_json_begin_array (out, "runs");
      for (guint i = 0; i < runs->len; i++)
        {
          const OwbProfRunSummary *r = g_ptr_array_index (runs, i);
          owb_json_begin_object (out, NULL);
          owb_json_append_member_int (out, "id", r->id);
          owb_json_append_member_string (out, "label", r->label);
          owb_json_append_member_string (out, "model", r->model_path);
          owb_json_append_member_string (out, "model_hash", r->model_hash);
          owb_json_append_member_string (out, "date", r->date);
          owb_json_append_member_int (out, "threads", r->threads);
          owb_json_append_member_string (out, "optimize", r->optimize);
          owb_json_append_member_string (out, "providers", r->providers);
          owb_json_append_member_string (out, "source", r->source);
          owb_json_append_member_uint (out, "iterations", r->n_iterations);
          owb_json_append_member_uint (out, "events", r->n_events);
          owb_json_member_double (out, "median_ms", r->median_ms);
          g_string_append_c (out, '}');
        }
      g_string_append (out, "]}\n");
    }
  else
    {
      g_string_append_printf (out, "%5s  %-20s  %-16s  %7s  %-9s  %-20s  %10s  %s\n", "id", "date", "label", "threads",
                              "optimize", "providers", "median ms", "model");
      for (guint i = 0; i < runs->len; i++)
        {
          const OwbProfRunSummary *r = g_ptr_array_index (runs, i);
          /* "2026-12-01 22:29:33" of the ISO 8601 date */
          g_autofree char *date = g_strndup (r->date, 19);
          g_strdelimit (date, "T", ' ');
          g_string_append_printf (out, "%5" G_GINT64_FORMAT "  %-20.20s  %-16s  %7d  %-9s  %-20s  %10.3f  %s\n", r->id,
                                  date, r->label, r->threads, r->optimize, r->providers, r->median_ms, r->model_path);
        }
      g_string_append_printf (out, "%u run%s\n", runs->len, runs->len == 1 ? "" : "s");
    }
  /* names and labels come from models and users: no terminal escapes get through */
  g_autofree char *safe = json ? NULL : owb_cli_escape_lines (out->str);
  fputs (safe ? safe : out->str, stdout);
  return OWB_EXIT_OK;
}

static void
append_deltas_json (GString *out, const char *key, const GPtrArray *deltas, gboolean with_op)
{
  owb_json_begin_array (out, key);
  for (guint i = 0; i < deltas->len; i++)
    {
      const OwbProfDelta *d = g_ptr_array_index (deltas, i);
      owb_json_begin_object (out, NULL);
      if (with_op)
        owb_json_append_member_string (out, "name", d->name);
      owb_json_append_member_string (out, "op", d->op_type);
      if (with_op)
        {
          static const char *const how[] = { NULL, "name", "op_type", "origins" };
          owb_json_append_member_string_or_null (out, "match", how[d->match]);
          if (d->b_name)
            owb_json_append_member_string (out, "b_name", d->b_name);
          if (d->merged)
            {
              /* the other run's nodes that this fused node replaced */
              owb_json_append_member_string (out, "merged_side", d->merged_in_a ? "a" : "b");
              owb_json_begin_array (out, "merged");
              for (guint k = 0; d->merged[k]; k++)
                {
                  owb_json_append_separator (out);
                  owb_json_append_string (out, d->merged[k]);
                }
              g_string_append_c (out, ']');
            }
        }
      /* a time missing from one run (NaN) is null */
      owb_json_member_double (out, "a_ms", d->a_ms);
      owb_json_member_double (out, "b_ms", d->b_ms);
      owb_json_member_double (out, "delta_ms", d->b_ms - d->a_ms);
      owb_json_member_double (out, "ratio", d->a_ms > 0 ? d->b_ms / d->a_ms : NAN);
      g_string_append_c (out, '}');
    }
  g_string_append_c (out, ']');
}

static void
append_deltas_text (GString *out, const char *title, const GPtrArray *deltas, gboolean with_op)
{
  g_string_append_printf (out, "%-40s %-20s %10s %10s %10s %7s\n", title, with_op ? "op type" : "", "A ms", "B ms",
                          "delta ms", "B/A");
  for (guint i = 0; i < deltas->len; i++)
    {
      const OwbProfDelta *d = g_ptr_array_index (deltas, i);
      g_autofree char *a = isnan (d->a_ms) ? g_strdup ("-") : g_strdup_printf ("%.3f", d->a_ms);
      g_autofree char *b = isnan (d->b_ms) ? g_strdup ("-") : g_strdup_printf ("%.3f", d->b_ms);
      g_autofree char *delta = isnan (d->a_ms) || isnan (d->b_ms) ? g_strdup ("-") : g_strdup_printf ("%+.3f", d->b_ms - d->a_ms);
      g_autofree char *ratio = isnan (d->a_ms) || isnan (d->b_ms) || d->a_ms <= 0 ? g_strdup ("-")
                                                                                  : g_strdup_printf ("%.2f", d->b_ms / d->a_ms);
      /* a node matched by op type shows both names */
      g_autofree char *name = NULL;
      if (d->merged)
        {
          g_autofree char *parts = g_strjoinv (" + ", (char **) d->merged);
          name = g_strdup_printf ("%s = %s%s", d->name, parts, d->merged_in_a ? " (A)" : " (B)");
        }
      else
        name = d->b_name ? g_strdup_printf ("%s ~ %s", d->name, d->b_name) : g_strdup (d->name);
      g_string_append_printf (out, "%-40s %-20s %10s %10s %10s %7s\n", with_op ? name : d->op_type,
                              with_op ? d->op_type : "", a, b, delta, ratio);
    }
}

static int
compare_runs (OwbProfDb *db, const char *path, gint64 id_a, gint64 id_b, gboolean json)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbProfRun) a = owb_prof_db_load_run (db, id_a, &error);
  g_autoptr (OwbProfRun) b = a ? owb_prof_db_load_run (db, id_b, &error) : NULL;
  if (!b)
    {
      owb_cli_gerror (path, error);
      return owb_cli_exit_status (error);
    }
  g_autoptr (GPtrArray) nodes = owb_prof_compare_nodes (a, b);
  g_autoptr (GPtrArray) ops = owb_prof_compare_ops (a, b);
  guint matched = owb_prof_deltas_count_matched (nodes);
  g_autoptr (GString) out = g_string_new (NULL);
  if (json)
    {
      owb_json_begin_object (out, NULL);
      owb_json_append_member_int (out, "a", id_a);
      owb_json_append_member_int (out, "b", id_b);
      owb_json_member_double (out, "a_median_ms", owb_prof_run_get_median_ms (a));
      owb_json_member_double (out, "b_median_ms", owb_prof_run_get_median_ms (b));
      owb_json_append_member_uint (out, "matched_nodes", matched);
      append_deltas_json (out, "nodes", nodes, TRUE);
      append_deltas_json (out, "ops", ops, FALSE);
      g_string_append (out, "}\n");
    }
  else
    {
      g_autofree char *ta = owb_prof_run_dup_title (a), *tb = owb_prof_run_dup_title (b);
      g_string_append_printf (out, "A          run %" G_GINT64_FORMAT " (%s), %s, median %.3f ms\n", id_a, ta, a->model_path,
                              owb_prof_run_get_median_ms (a));
      g_string_append_printf (out, "B          run %" G_GINT64_FORMAT " (%s), %s, median %.3f ms\n", id_b, tb, b->model_path,
                              owb_prof_run_get_median_ms (b));
      guint by_op = 0, fused = 0;
      for (guint i = 0; i < nodes->len; i++)
        {
          const OwbProfDelta *d = g_ptr_array_index (nodes, i);
          by_op += d->match == OWB_PROF_MATCH_OP_TYPE;
          fused += d->match == OWB_PROF_MATCH_ORIGINS;
        }
      g_string_append_printf (out, "Matched    %u of %u rows: %u optimizer-made nodes with the nodes they replaced, %u by op"
                              " type in run order, the rest by name (median ms per run)\n\n", matched, nodes->len, fused, by_op);
      append_deltas_text (out, "op type", ops, FALSE);
      g_string_append_c (out, '\n');
      append_deltas_text (out, "node", nodes, TRUE);
    }
  /* names and labels come from models and users: no terminal escapes get through */
  g_autofree char *safe = json ? NULL : owb_cli_escape_lines (out->str);
  fputs (safe ? safe : out->str, stdout);
  return OWB_EXIT_OK;
}

static int
critical_path (OwbProfDb *db, const char *path, gint64 id, gboolean json)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbProfRun) run = owb_prof_db_load_run (db, id, &error);
  if (!run)
    {
      owb_cli_gerror (path, error);
      return owb_cli_exit_status (error);
    }
  double total = 0;
  g_autoptr (GArray) nodes = owb_prof_run_dup_critical_path (run, &total);
  g_autoptr (GString) out = g_string_new (NULL);
  if (json)
    {
      owb_json_begin_object (out, NULL);
      owb_json_append_member_int (out, "run", id);
      owb_json_member_double (out, "median_ms", owb_prof_run_get_median_ms (run));
      owb_json_member_double (out, "critical_path_ms", total);
      owb_json_begin_array (out, "nodes");
      for (guint i = 0; i < nodes->len; i++)
        {
          const OwbProfNode *n = g_ptr_array_index (run->nodes, g_array_index (nodes, guint, i));
          owb_json_begin_object (out, NULL);
          owb_json_append_member_string (out, "name", n->name);
          owb_json_append_member_string (out, "op", n->op_type);
          g_string_append_c (out, '}');
        }
      g_string_append (out, "]}\n");
    }
  else
    {
      g_string_append_printf (out, "Critical path of run %" G_GINT64_FORMAT ": %.3f ms over %u nodes (the run: median %.3f ms)\n", id,
                              total, nodes->len, owb_prof_run_get_median_ms (run));
      for (guint i = 0; i < nodes->len; i++)
        {
          const OwbProfNode *n = g_ptr_array_index (run->nodes, g_array_index (nodes, guint, i));
          g_string_append_printf (out, "  %-40s %s\n", n->name, n->op_type);
        }
    }
  /* names and labels come from models and users: no terminal escapes get through */
  g_autofree char *safe = json ? NULL : owb_cli_escape_lines (out->str);
  fputs (safe ? safe : out->str, stdout);
  return OWB_EXIT_OK;
}

static gboolean
parse_id (const char *text, gint64 *id)
{
  guint64 v;
  if (!text || !g_ascii_string_to_unsigned (text, 10, 1, G_MAXINT64, &v, NULL))
    return FALSE;
  *id = (gint64) v;
  return TRUE;
}

int
owb_cmd_runs (int argc, char **argv)
{
  g_autofree char *export_id = NULL, *output = NULL, *import_ort = NULL, *model = NULL, *label = NULL;
  g_autofree char *delete_id = NULL, *critical_id = NULL;
  gboolean json = FALSE, compare = FALSE;
  GOptionEntry entries[] = {
    OWB_CLI_JSON_ENTRY (json),
    { "compare", 0, 0, G_OPTION_ARG_NONE, &compare, "Compare runs A and B (the two arguments after FILE) node by node and op by op", NULL },
    { "export-trace", 0, 0, G_OPTION_ARG_STRING, &export_id, "Write run ID as a Chrome trace (Perfetto, chrome://tracing) to -o", "ID" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Where --export-trace writes", "TRACE.json" },
    { "import-ort", 0, 0, G_OPTION_ARG_FILENAME, &import_ort, "Store an ONNX Runtime profile (enable_profiling's JSON) as a run; needs --model", "PROFILE.json" },
    { "model", 0, 0, G_OPTION_ARG_FILENAME, &model, "The model an imported profile ran", "MODEL" },
    { "label", 0, 0, G_OPTION_ARG_STRING, &label, "A label for the imported run", "TEXT" },
    { "critical-path", 0, 0, G_OPTION_ARG_STRING, &critical_id, "The critical path of run ID through the graph's dependencies", "ID" },
    { "delete", 0, 0, G_OPTION_ARG_STRING, &delete_id, "Delete run ID", "ID" },
    { NULL }
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbProfDb) db = NULL;
  gint64 id = 0, id_b = 0;

  const char *summary = "The profiling runs stored in FILE (by owb profile --db FILE): with no other\n"
                        "option, list them; --compare A B, --export-trace ID -o TRACE.json,\n"
                        "--import-ort PROFILE.json --model MODEL, --critical-path ID, --delete ID.";
  if (!owb_cli_parse ("runs", "FILE [A B]", summary, entries, &argc, &argv))
    return OWB_EXIT_USAGE;
  int actions = compare + (export_id != NULL) + (import_ort != NULL) + (delete_id != NULL) + (critical_id != NULL);
  if (actions > 1)
    {
      owb_cli_error ("runs", "give one of --compare, --export-trace, --import-ort, --critical-path and --delete");
      return OWB_EXIT_USAGE;
    }
  if (argc != (compare ? 4 : 2))
    {
      owb_cli_error ("runs", compare ? "--compare expects FILE A B (see owb runs --help)"
                                     : "expected one FILE argument (see owb runs --help)");
      return OWB_EXIT_USAGE;
    }
  if ((compare && (!parse_id (argv[2], &id) || !parse_id (argv[3], &id_b)))
      || (export_id && !parse_id (export_id, &id)) || (delete_id && !parse_id (delete_id, &id))
      || (critical_id && !parse_id (critical_id, &id)))
    {
      owb_cli_error ("runs", "a run id is a positive integer (see owb runs FILE for the ids)");
      return OWB_EXIT_USAGE;
    }
  if (export_id && !output)
    {
      owb_cli_error ("runs", "--export-trace needs -o TRACE.json");
      return OWB_EXIT_USAGE;
    }
  if (import_ort && !model)
    {
      owb_cli_error ("runs", "--import-ort needs --model MODEL (the model the profile ran)");
      return OWB_EXIT_USAGE;
    }
  if ((output && !export_id) || (model && !import_ort) || (label && !import_ort))
    {
      owb_cli_error ("runs", "-o goes with --export-trace, --model and --label with --import-ort");
      return OWB_EXIT_USAGE;
    }
  const char *path = argv[1];
  /* only an import makes a database; the other actions need one */
  db = owb_prof_db_open (path, import_ort != NULL, &error);
  if (!db)
    {
      owb_cli_gerror ("runs", error);
      return OWB_EXIT_FAILED;
    }

  if (compare)
    return compare_runs (db, path, id, id_b, json);
  if (critical_id)
    return critical_path (db, path, id, json);
  if (export_id)
    {
      g_autoptr (OwbProfRun) run = owb_prof_db_load_run (db, id, &error);
      if (!run || !owb_prof_run_export_trace (run, output, &error))
        {
          owb_cli_gerror (run ? output : path, error);
          return owb_cli_exit_status (error);
        }
      printf ("Wrote run %" G_GINT64_FORMAT " (%u events) to %s\n", id, run->events->len, output);
      return OWB_EXIT_OK;
    }
  if (import_ort)
    {
      g_autoptr (OwbProfRun) run = owb_prof_import_ort (import_ort, model, &error);
      if (run)
        {
          g_free (run->label);
          run->label = g_strdup (label ? label : "");
        }
      if (!run || !owb_prof_db_store_run (db, run, &error))
        {
          owb_cli_gerror (run ? path : import_ort, error);
          return OWB_EXIT_FAILED;
        }
      if (json)
        {
          g_autoptr (GString) out = g_string_new (NULL);
          owb_json_begin_object (out, NULL);
          owb_json_append_member_int (out, "id", run->id);
          owb_json_append_member_uint (out, "nodes", run->nodes->len);
          owb_json_append_member_uint (out, "iterations", run->iterations->len);
          owb_json_append_member_uint (out, "events", run->events->len);
          g_string_append (out, "}\n");
          fputs (out->str, stdout);
        }
      else
        printf ("Stored     run id %" G_GINT64_FORMAT " in %s: %u nodes, %u iterations, %u events from %s\n", run->id,
                path, run->nodes->len, run->iterations->len, run->events->len, import_ort);
      return OWB_EXIT_OK;
    }
  if (delete_id)
    {
      if (!owb_prof_db_delete_run (db, id, &error))
        {
          owb_cli_gerror (path, error);
          return owb_cli_exit_status (error);
        }
      printf ("Deleted run %" G_GINT64_FORMAT " from %s\n", id, path);
      return OWB_EXIT_OK;
    }
  return list_runs (db, path, json);
}
