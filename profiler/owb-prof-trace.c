/* owb-prof-trace.c: a run as Chrome trace / Perfetto JSON: one "X" event per node per iteration on
 * its thread's track, the workers' shares on theirs, thread names as metadata events. */
#include "owb-prof-private.h"

static void
append_us (GString *out, const char *key, gint64 ns)
{
  /* microseconds with ns resolution: Chrome's unit */
  g_string_append_printf (out, ",\"%s\":%" G_GINT64_FORMAT ".%03d", key, ns / 1000, (int) ABS (ns % 1000));
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

  g_string_append (out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"model\":");
  owb_json_append_string (out, run->model_path);
  g_string_append (out, ",\"model_hash\":");
  owb_json_append_string (out, run->model_hash);
  g_string_append_printf (out, ",\"run_id\":%" G_GINT64_FORMAT ",\"label\":", run->id);
  owb_json_append_string (out, run->label);
  g_string_append (out, ",\"date\":");
  owb_json_append_string (out, run->date);
  g_string_append_printf (out, ",\"threads\":%d,\"optimize\":", run->threads);
  owb_json_append_string (out, run->optimize);
  g_string_append (out, ",\"providers\":");
  owb_json_append_string (out, run->providers);
  g_string_append (out, ",\"source\":");
  owb_json_append_string (out, run->source);
  g_string_append (out, "},\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":");
  owb_json_append_string (out, process);
  g_string_append (out, "}}");
  for (guint t = 0; t < n_lanes; t++)
    {
      g_string_append_printf (out, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"args\":{\"name\":", t);
      g_autofree char *name = t == 0 ? g_strdup ("run thread") : g_strdup_printf ("worker %u", t);
      owb_json_append_string (out, name);
      g_string_append_printf (out, "}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,"
                              "\"args\":{\"sort_index\":%u}}", t, t);
    }
  for (guint e = 0; e < run->events->len; e++)
    {
      const OwbProfEvent *ev = &g_array_index (run->events, OwbProfEvent, e);
      const OwbProfNode *node = g_ptr_array_index (run->nodes, ev->node);
      g_string_append (out, ",\n{\"name\":");
      owb_json_append_string (out, node->name);
      g_string_append (out, ",\"cat\":");
      owb_json_append_string (out, ev->kind == OWB_PROF_EVENT_WORKER ? "worker" : node->op_type);
      g_string_append_printf (out, ",\"ph\":\"X\",\"pid\":1,\"tid\":%u", ev->thread);
      append_us (out, "ts", ev->start_ns);
      append_us (out, "dur", ev->duration_ns);
      g_string_append (out, ",\"args\":{\"op_type\":");
      owb_json_append_string (out, node->op_type);
      g_string_append (out, ",\"provider\":");
      owb_json_append_string (out, node->provider);
      if (node->graph_path[0])
        {
          g_string_append (out, ",\"graph_path\":");
          owb_json_append_string (out, node->graph_path);
        }
      g_string_append_printf (out, ",\"iteration\":%u", ev->iteration);
      append_us (out, ev->kind == OWB_PROF_EVENT_WORKER ? "busy_us" : "self_us", ev->self_ns);
      if (ev->input_shapes)
        {
          g_string_append (out, ",\"input_shapes\":");
          owb_json_append_string (out, ev->input_shapes);
        }
      if (ev->output_shapes)
        {
          g_string_append (out, ",\"output_shapes\":");
          owb_json_append_string (out, ev->output_shapes);
        }
      g_string_append_printf (out, ",\"input_bytes\":%" G_GINT64_FORMAT ",\"output_bytes\":%" G_GINT64_FORMAT,
                              ev->input_bytes, ev->output_bytes);
      if (ev->arena_bytes >= 0)
        g_string_append_printf (out, ",\"arena_bytes\":%" G_GINT64_FORMAT, ev->arena_bytes);
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
