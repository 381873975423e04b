/* owb-prof-ort.c: an ONNX Runtime profile (enable_profiling's Chrome-trace JSON) as a run, read
 * with SQLite's JSON functions: "Node" events named "<node>_kernel_time" become node events, in the
 * iteration of the "model_run" event around them; ORT's thread ids become lanes. */
#include "owb-prof-private.h"

#include <string.h>

#define KERNEL_SUFFIX "_kernel_time"

/* ORT's element type names as ours, with the dims after them: "float32[1,3,224,224]". */
#define SHAPES_SQL(field)                                                                              \
  "(SELECT group_concat (CASE t.key WHEN 'float' THEN 'float32' WHEN 'double' THEN 'float64'"          \
  " ELSE t.key END || replace (t.value, ' ', ''), ' ')"                                               \
  " FROM json_each (e.value, '$.args." field "') AS s, json_each (s.value) AS t)"

static const char events_sql[] =
  "SELECT json_extract (e.value, '$.cat'), json_extract (e.value, '$.name'),"
  " CAST (json_extract (e.value, '$.ts') AS INTEGER), CAST (json_extract (e.value, '$.dur') AS INTEGER),"
  " json_extract (e.value, '$.tid'), json_extract (e.value, '$.args.op_name'),"
  " json_extract (e.value, '$.args.provider'), " SHAPES_SQL ("input_type_shape") ", " SHAPES_SQL ("output_type_shape") ","
  " CAST (ifnull (json_extract (e.value, '$.args.activation_size'), 0) AS INTEGER)"
  "  + CAST (ifnull (json_extract (e.value, '$.args.parameter_size'), 0) AS INTEGER),"
  " CAST (ifnull (json_extract (e.value, '$.args.output_size'), 0) AS INTEGER),"
  " CAST (ifnull (json_extract (e.value, '$.args.mem_bytes_in_use'), -1) AS INTEGER)"
  " FROM json_each (?1, CASE json_type (?1) WHEN 'object' THEN '$.traceEvents' ELSE '$' END) AS e"
  " WHERE json_extract (e.value, '$.cat') IN ('Node', 'Session')"
  " ORDER BY CAST (json_extract (e.value, '$.ts') AS INTEGER)";

typedef struct {
  guint node;
  guint lane;
  gint64 ts_us, dur_us;
  gint64 children_us;
  const char *input_shapes, *output_shapes;
  gint64 input_bytes, output_bytes, arena_bytes;
} Pending;

static const char *
column_text (sqlite3_stmt *st, int i)
{
  const unsigned char *t = sqlite3_column_text (st, i);
  return t ? (const char *) t : "";
}

/* Nodes of the model's main graph by name: where imported nodes get their inputs and outputs. */
static GHashTable *
model_nodes (OwbModel *model)
{
  GHashTable *by_name = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint n = 0; model && n < model->graph->nodes->len; n++)
    {
      OwbNode *node = g_ptr_array_index (model->graph->nodes, n);
      if (node->name && node->name[0])
        g_hash_table_insert (by_name, node->name, node);
    }
  return by_name;
}

static const char **
names_of (char **names, int n)
{
  const char **out = g_new0 (const char *, n + 1);
  memcpy (out, names, n * sizeof *out);
  return out;
}

OwbProfRun *
owb_prof_import_ort (const char *profile_path, const char *model_path, GError **error)
{
  g_autofree char *json = NULL;
  gsize length;
  GError *local = NULL;
  if (!g_file_get_contents (profile_path, &json, &length, &local))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "%s", local->message);
      g_error_free (local);
      return NULL;
    }
  g_autoptr (OwbModel) model = NULL;
  g_autoptr (OwbProfRun) run = owb_prof_run_new ();
  if (model_path)
    {
      if (!owb_prof_run_set_model (run, model_path, error))
        return NULL;
      model = owb_model_load_file (model_path, error);
      if (!model)
        return NULL;
    }
  owb_prof_run_set_host (run);
  g_free (run->source);
  run->source = g_strdup ("onnxruntime");
  g_free (run->optimize);
  run->optimize = g_strdup ("unknown");
  g_free (run->engine_version);
  run->engine_version = g_strdup ("onnxruntime");

  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  if (sqlite3_open_v2 (":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) != SQLITE_OK
      || sqlite3_prepare_v2 (db, events_sql, -1, &st, NULL) != SQLITE_OK)
    {
      _owb_prof_set_sqlite_error (error, db, profile_path);
      sqlite3_close (db);
      return NULL;
    }
  sqlite3_bind_text (st, 1, json, (int) MIN (length, G_MAXINT), SQLITE_STATIC);

  g_autoptr (GHashTable) by_name = model_nodes (model);
  g_autoptr (GHashTable) lanes = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GArray) lane_ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) pending = g_array_new (FALSE, FALSE, sizeof (Pending));
  g_autoptr (GArray) runs = g_array_new (FALSE, FALSE, sizeof (OwbProfIteration)); /* in us */
  g_autoptr (GPtrArray) providers = g_ptr_array_new_with_free_func (g_free);
  int rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      const char *cat = column_text (st, 0), *name = column_text (st, 1);
      gint64 ts = sqlite3_column_int64 (st, 2), dur = sqlite3_column_int64 (st, 3);
      if (strcmp (cat, "Session") == 0)
        {
          if (strcmp (name, "model_run") == 0)
            {
              OwbProfIteration it = { ts, dur };
              g_array_append_val (runs, it);
            }
          continue;
        }
      /* ORT brackets each kernel with "_fence_before"/"_fence_after" events of no duration */
      if (!g_str_has_suffix (name, KERNEL_SUFFIX))
        continue;
      g_autofree char *node_name = g_strndup (name, strlen (name) - strlen (KERNEL_SUFFIX));
      const char *op = column_text (st, 5), *provider = column_text (st, 6);
      const OwbNode *known = g_hash_table_lookup (by_name, node_name);
      g_autofree const char **inputs = known ? names_of (known->inputs, known->n_inputs) : NULL;
      g_autofree const char **outputs = known ? names_of (known->outputs, known->n_outputs) : NULL;
      if (provider[0] && !g_ptr_array_find_with_equal_func (providers, provider, g_str_equal, NULL))
        g_ptr_array_add (providers, g_strdup (provider));
      /* thread ids are numbers in ORT's files; take their text if not */
      gint64 tid = sqlite3_column_type (st, 4) == SQLITE_INTEGER ? sqlite3_column_int64 (st, 4)
                                                                 : (gint64) g_str_hash (column_text (st, 4));
      gpointer lane = g_hash_table_lookup (lanes, &tid);
      if (!lane)
        {
          g_array_append_val (lane_ids, tid);
          lane = GUINT_TO_POINTER (lane_ids->len);
          /* keys point into lane_ids' storage, which moves as it grows: reinsert them all */
          g_hash_table_remove_all (lanes);
          for (guint l = 0; l < lane_ids->len; l++)
            g_hash_table_insert (lanes, &g_array_index (lane_ids, gint64, l), GUINT_TO_POINTER (l + 1));
        }
      Pending p = {
        .node = owb_prof_run_add_node (run, "", node_name, op, provider, inputs, outputs),
        .lane = GPOINTER_TO_UINT (lane) - 1,
        .ts_us = ts,
        .dur_us = MAX (dur, 0),
        .input_shapes = owb_prof_run_intern (run, (const char *) sqlite3_column_text (st, 7)),
        .output_shapes = owb_prof_run_intern (run, (const char *) sqlite3_column_text (st, 8)),
        .input_bytes = sqlite3_column_int64 (st, 9),
        .output_bytes = sqlite3_column_int64 (st, 10),
        .arena_bytes = sqlite3_column_int64 (st, 11),
      };
      g_array_append_val (pending, p);
    }
  if (rc != SQLITE_DONE)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s: not an ONNX Runtime profile: %s", profile_path,
                   sqlite3_errmsg (db));
      sqlite3_finalize (st);
      sqlite3_close (db);
      return NULL;
    }
  sqlite3_finalize (st);
  sqlite3_close (db);
  if (pending->len == 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "%s: no node events (\"cat\": \"Node\", named \"…" KERNEL_SUFFIX "\") in the profile", profile_path);
      return NULL;
    }

  /* Without model_run events (a profile cut short), all of it is one iteration. */
  if (runs->len == 0)
    {
      gint64 first = G_MAXINT64, last = G_MININT64;
      for (guint i = 0; i < pending->len; i++)
        {
          const Pending *p = &g_array_index (pending, Pending, i);
          first = MIN (first, p->ts_us);
          last = MAX (last, p->ts_us + p->dur_us);
        }
      OwbProfIteration it = { first, last - first };
      g_array_append_val (runs, it);
    }
  gint64 origin = g_array_index (runs, OwbProfIteration, 0).start_ns;
  for (guint i = 0; i < runs->len; i++)
    {
      const OwbProfIteration *it = &g_array_index (runs, OwbProfIteration, i);
      owb_prof_run_add_iteration (run, (it->start_ns - origin) * 1000, it->duration_ns * 1000);
    }

  /* Self times: a node whose span lies inside an earlier one on its lane (a Loop's body nodes)
   * is taken out of that one's. Events are in time order. */
  g_autoptr (GArray) open = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint l = 0; l < lane_ids->len; l++)
    {
      g_array_set_size (open, 0);
      for (guint i = 0; i < pending->len; i++)
        {
          Pending *p = &g_array_index (pending, Pending, i);
          if (p->lane != l)
            continue;
          while (open->len > 0)
            {
              Pending *top = &g_array_index (pending, Pending, g_array_index (open, guint, open->len - 1));
              if (top->ts_us + top->dur_us > p->ts_us)
                break;
              g_array_set_size (open, open->len - 1);
            }
          if (open->len > 0)
            g_array_index (pending, Pending, g_array_index (open, guint, open->len - 1)).children_us += p->dur_us;
          g_array_append_val (open, i);
        }
    }
  guint iteration = 0;
  for (guint i = 0; i < pending->len; i++)
    {
      const Pending *p = &g_array_index (pending, Pending, i);
      /* the last model_run that started at or before the node */
      while (iteration + 1 < runs->len && g_array_index (runs, OwbProfIteration, iteration + 1).start_ns <= p->ts_us)
        iteration++;
      OwbProfEvent ev = {
        .node = p->node,
        .iteration = iteration,
        .thread = p->lane,
        .kind = OWB_PROF_EVENT_NODE,
        .start_ns = (p->ts_us - origin) * 1000,
        .duration_ns = p->dur_us * 1000,
        .self_ns = MAX (p->dur_us - p->children_us, 0) * 1000,
        .input_shapes = p->input_shapes,
        .output_shapes = p->output_shapes,
        .input_bytes = p->input_bytes,
        .output_bytes = p->output_bytes,
        /* recent ORT versions give their allocator's bytes in use */
        .arena_bytes = p->arena_bytes,
      };
      owb_prof_run_add_event (run, &ev);
    }
  g_ptr_array_add (providers, NULL);
  g_free (run->providers);
  run->providers = g_strjoinv (",", (char **) providers->pdata);
  return g_steal_pointer (&run);
}
