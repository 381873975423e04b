/* owb-prof-run.c: a profiling run in memory (nodes, iterations, events), what it ran and where,
 * and the helpers the other files share. */
#include "owb-prof-private.h"

#include <math.h>
#include <string.h>

static void
node_free (OwbProfNode *node)
{
  g_free (node->name);
  g_free (node->op_type);
  g_free (node->provider);
  g_free (node->graph_path);
  g_strfreev (node->inputs);
  g_strfreev (node->outputs);
  g_strfreev (node->origins);
  g_free (node);
}

OwbProfRun *
owb_prof_run_new (void)
{
  OwbProfRun *run = g_new0 (OwbProfRun, 1);
  run->nodes = g_ptr_array_new_with_free_func ((GDestroyNotify) node_free);
  run->iterations = g_array_new (FALSE, FALSE, sizeof (OwbProfIteration));
  run->events = g_array_new (FALSE, FALSE, sizeof (OwbProfEvent));
  run->strings = g_string_chunk_new (4096);
  run->node_index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  run->source = g_strdup ("owb");
  run->optimize = g_strdup ("");
  run->providers = g_strdup ("");
  run->engine_version = g_strdup ("");
  run->label = g_strdup ("");
  run->host_cpu = g_strdup ("");
  return run;
}

void
owb_prof_run_free (OwbProfRun *run)
{
  if (!run)
    return;
  g_free (run->model_path);
  g_free (run->model_hash);
  g_free (run->label);
  g_free (run->date);
  g_free (run->host_cpu);
  g_free (run->optimize);
  g_free (run->providers);
  g_free (run->engine_version);
  g_free (run->source);
  g_ptr_array_unref (run->nodes);
  g_array_unref (run->iterations);
  g_array_unref (run->events);
  g_string_chunk_free (run->strings);
  g_hash_table_unref (run->node_index);
  g_free (run);
}

char *
_owb_prof_node_key (const char *graph_path, const char *name, const char *op_type, const char *provider)
{
  /* \x1f (unit separator) does not occur in names a model gives */
  return g_strjoin ("\x1f", graph_path ? graph_path : "", name ? name : "", op_type ? op_type : "",
                    provider ? provider : "", NULL);
}

static char **
dup_names (const char *const *names)
{
  return names ? g_strdupv ((char **) names) : g_new0 (char *, 1);
}

guint
owb_prof_run_add_node (OwbProfRun *run, const char *graph_path, const char *name, const char *op_type,
                       const char *provider, const char *const *inputs, const char *const *outputs)
{
  char *key = _owb_prof_node_key (graph_path, name, op_type, provider);
  gpointer found = g_hash_table_lookup (run->node_index, key);
  if (found)
    {
      g_free (key);
      return GPOINTER_TO_UINT (found) - 1;
    }
  OwbProfNode *node = g_new0 (OwbProfNode, 1);
  node->graph_path = g_strdup (graph_path ? graph_path : "");
  node->name = g_strdup (name ? name : "");
  node->op_type = g_strdup (op_type ? op_type : "");
  node->provider = g_strdup (provider ? provider : "");
  node->inputs = dup_names (inputs);
  node->outputs = dup_names (outputs);
  node->origins = g_new0 (char *, 1);
  g_ptr_array_add (run->nodes, node);
  g_hash_table_insert (run->node_index, key, GUINT_TO_POINTER (run->nodes->len));
  return run->nodes->len - 1;
}

void
owb_prof_run_set_node_origins (OwbProfRun *run, guint node, const char *const *origins)
{
  g_return_if_fail (node < run->nodes->len);
  OwbProfNode *n = g_ptr_array_index (run->nodes, node);
  g_strfreev (n->origins);
  n->origins = dup_names (origins);
}

const char *
owb_prof_run_intern (OwbProfRun *run, const char *text)
{
  return text ? g_string_chunk_insert_const (run->strings, text) : NULL;
}

void
owb_prof_run_add_event (OwbProfRun *run, const OwbProfEvent *event)
{
  g_return_if_fail (event->node < run->nodes->len);
  OwbProfEvent copy = *event;
  copy.input_shapes = owb_prof_run_intern (run, event->input_shapes);
  copy.output_shapes = owb_prof_run_intern (run, event->output_shapes);
  g_array_append_val (run->events, copy);
}

void
owb_prof_run_add_iteration (OwbProfRun *run, gint64 start_ns, gint64 duration_ns)
{
  OwbProfIteration it = { start_ns, duration_ns };
  g_array_append_val (run->iterations, it);
}

gboolean
owb_prof_run_set_model (OwbProfRun *run, const char *path, GError **error)
{
  g_autoptr (GMappedFile) file = g_mapped_file_new (path, FALSE, NULL);
  g_autofree char *contents = NULL;
  const guchar *bytes;
  gsize size;
  if (file)
    {
      bytes = (const guchar *) g_mapped_file_get_contents (file);
      size = g_mapped_file_get_length (file);
    }
  else
    {
      GError *local = NULL;
      /* an empty file cannot be mapped: read it for the error, or its (empty) contents */
      if (!g_file_get_contents (path, &contents, &size, &local))
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "%s", local->message);
          g_error_free (local);
          return FALSE;
        }
      bytes = (const guchar *) contents;
    }
  g_autofree char *digest = g_compute_checksum_for_data (G_CHECKSUM_SHA256, bytes ? bytes : (const guchar *) "", size);
  g_free (run->model_path);
  run->model_path = g_strdup (path);
  g_free (run->model_hash);
  run->model_hash = g_strconcat ("sha256:", digest, NULL);
  return TRUE;
}

static char *
host_cpu_name (void)
{
  g_autofree char *info = NULL;
  if (g_file_get_contents ("/proc/cpuinfo", &info, NULL, NULL))
    {
      g_auto (GStrv) lines = g_strsplit (info, "\n", -1);
      for (char **l = lines; *l; l++)
        if (g_str_has_prefix (*l, "model name"))
          {
            const char *colon = strchr (*l, ':');
            if (colon)
              return g_strstrip (g_strdup (colon + 1));
          }
    }
  return g_strdup ("");
}

void
owb_prof_run_set_host (OwbProfRun *run)
{
  g_autoptr (GDateTime) now = g_date_time_new_now_utc ();
  g_free (run->date);
  run->date = g_date_time_format_iso8601 (now);
  g_free (run->host_cpu);
  run->host_cpu = host_cpu_name ();
}

char *
owb_prof_run_dup_title (const OwbProfRun *run)
{
  if (run->label && run->label[0])
    return g_strdup (run->label);
  return g_strdup_printf ("run %" G_GINT64_FORMAT, run->id);
}

void
_owb_prof_json_number (GString *out, double v)
{
  /* 6 digits keep files small; ms and us values need no more */
  owb_json_append_number (out, v, 6);
}

double
_owb_prof_quantile (double *v, guint n, double q)
{
  owb_stats_sort_doubles (v, n);
  return owb_stats_quantile (v, n, q);
}

void
_owb_prof_set_sqlite_error (GError **error, sqlite3 *db, const char *what)
{
  g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "%s: %s", what, db ? sqlite3_errmsg (db) : "out of memory");
}
