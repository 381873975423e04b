/* owb-prof-trace.c: a run as Chrome trace / Perfetto JSON: one "X" event per node per iteration on
 * its thread's track, the workers' shares on theirs, thread names as metadata events. */
#include "owb-prof-private.h"

static void
append_us (GString *out, const char *key, gint64 ns)
{
  /* microseconds with ns resolution: Chrome's unit */
  owb_json_append_key (out, key);
  g_string_append_printf (out, "%" G_GINT64_FORMAT ".%03d", ns / 1000, (int) ABS (ns % 1000));
}

/* The next item of traceEvents on a line of its own, so a trace can be read and diffed by line. */
static void
begin_event (GString *out, const char *name, const char *ph, guint tid)
{
  owb_json_append_separator (out);
  g_string_append (out, "\n{");
  owb_json_append_member_string (out, "name", name);
  if (ph != NULL)
    {
      owb_json_append_member_string (out, "ph", ph);
      owb_json_append_member_int (out, "pid", 1);
      owb_json_append_member_uint (out, "tid", tid);
    }
}

/* A metadata ("M") event naming the process or a thread: {"name":kind,...,"args":{key:value}} */
static void
append_metadata (GString *out, const char *kind, guint tid, const char *key, const char *value)
{
  begin_event (out, kind, "M", tid);
  owb_json_begin_object (out, "args");
  owb_json_append_member_string (out, key, value);
  g_string_append (out, "}}");
}

char *
owb_prof_run_dup_trace_json (const OwbProfRun *run)
{
  GString *out = g_string_sized_new (256 + run->events->len * 200);
  g_autofree char *title = owb_prof_run_dup_title (run);
  g_autofree char *process = g_strdup_printf ("%s (%s)", run->model_path ? run->model_path : "model", title);
  guint n_lanes = 1;
  for (guint e = 0; e < run->events->len; e++)
    n_lanes = MAX (n_lanes, g_array_index (run->events, OwbProfEvent, e).thread + 1);

  owb_json_begin_object (out, NULL);
  owb_json_append_member_string (out, "displayTimeUnit", "ns");
  owb_json_begin_object (out, "otherData");
  owb_json_append_member_string (out, "model", run->model_path);
  owb_json_append_member_string (out, "model_hash", run->model_hash);
  owb_json_append_member_int (out, "run_id", run->id);
  owb_json_append_member_string (out, "label", run->label);
  owb_json_append_member_string (out, "date", run->date);
  owb_json_append_member_int (out, "threads", run->threads);
  owb_json_append_member_string (out, "optimize", run->optimize);
  owb_json_append_member_string (out, "providers", run->providers);
  owb_json_append_member_string (out, "source", run->source);
  g_string_append_c (out, '}');
  owb_json_begin_array (out, "traceEvents");
  append_metadata (out, "process_name", 0, "name", process);
  for (guint t = 0; t < n_lanes; t++)
    {
      g_autofree char *name = t == 0 ? g_strdup ("run thread") : g_strdup_printf ("worker %u", t);
      append_metadata (out, "thread_name", t, "name", name);
      begin_event (out, "thread_sort_index", "M", t);
      owb_json_begin_object (out, "args");
      owb_json_append_member_uint (out, "sort_index", t);
      g_string_append (out, "}}");
    }
  for (guint e = 0; e < run->events->len; e++)
    {
      const OwbProfEvent *ev = &g_array_index (run->events, OwbProfEvent, e);
      const OwbProfNode *node = g_ptr_array_index (run->nodes, ev->node);
      begin_event (out, node->name, NULL, 0);
      owb_json_append_member_string (out, "cat", ev->kind == OWB_PROF_EVENT_WORKER ? "worker" : node->op_type);
      owb_json_append_member_string (out, "ph", "X");
      owb_json_append_member_int (out, "pid", 1);
      owb_json_append_member_uint (out, "tid", ev->thread);
      append_us (out, "ts", ev->start_ns);
      append_us (out, "dur", ev->duration_ns);
      owb_json_begin_object (out, "args");
      owb_json_append_member_string (out, "op_type", node->op_type);
      owb_json_append_member_string (out, "provider", node->provider);
      if (node->graph_path[0])
        owb_json_append_member_string (out, "graph_path", node->graph_path);
      owb_json_append_member_uint (out, "iteration", ev->iteration);
      append_us (out, ev->kind == OWB_PROF_EVENT_WORKER ? "busy_us" : "self_us", ev->self_ns);
      if (ev->input_shapes)
        owb_json_append_member_string (out, "input_shapes", ev->input_shapes);
      if (ev->output_shapes)
        owb_json_append_member_string (out, "output_shapes", ev->output_shapes);
      owb_json_append_member_int (out, "input_bytes", ev->input_bytes);
      owb_json_append_member_int (out, "output_bytes", ev->output_bytes);
      if (ev->arena_bytes >= 0)
        owb_json_append_member_int (out, "arena_bytes", ev->arena_bytes);
      g_string_append (out, "}}");
    }
  g_string_append (out, "\n]}\n");
  return g_string_free (out, FALSE);
}

gboolean
owb_prof_run_export_trace (const OwbProfRun *run, const char *path, GError **error)
{
  g_autofree char *json = owb_prof_run_dup_trace_json (run);
  GError *local = NULL;
  /* CONSISTENT: a temporary file renamed over path, so a crash never leaves half a trace */
  if (!g_file_set_contents_full (path, json, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644, &local))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "%s", local->message);
      g_error_free (local);
      return FALSE;
    }
  return TRUE;
}
