/* owb-prof-db.c: the SQLite store of profiling runs: open (WAL, migrated), store a run in one
 * transaction (a killed process leaves the run out, never half of it), load, list, delete. */
#include "owb-prof-private.h"

#include <string.h>

OwbProfDb *
owb_prof_db_open (const char *path, gboolean create, GError **error)
{
  if (!create && !g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "%s: no such database", path);
      return NULL;
    }
  sqlite3 *db = NULL;
  /* NOMUTEX: a connection is used by one thread at a time (see owb_prof_db_open), so SQLite need not
   * lock around every call */
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2 (path, &db, flags, NULL) != SQLITE_OK)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "%s: %s", path, db ? sqlite3_errmsg (db) : "out of memory");
      sqlite3_close (db);
      return NULL;
    }
  /* another process storing a run holds the write lock for the length of its transaction */
  sqlite3_busy_timeout (db, 10000);
  char *message = NULL;
  /* WAL: a reader (the app listing runs) never blocks a writer; synchronous FULL: a stored run
   * survives a power cut too (one more fsync per run, not per event) */
  if (sqlite3_exec (db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;"
                    " PRAGMA cache_size = -65536;", NULL,
                    NULL, &message) != SQLITE_OK)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "%s: %s", path, message ? message : sqlite3_errmsg (db));
      sqlite3_free (message);
      sqlite3_close (db);
      return NULL;
    }
  GError *local = NULL;
  if (!_owb_prof_db_migrate (db, OWB_PROF_SCHEMA_VERSION, &local))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "%s: %s", path, local->message);
      g_error_free (local);
      sqlite3_close (db);
      return NULL;
    }
  OwbProfDb *self = g_new0 (OwbProfDb, 1);
  self->db = db;
  self->path = g_strdup (path);
  return self;
}

void
owb_prof_db_close (OwbProfDb *self)
{
  if (!self)
    return;
  sqlite3_close (self->db);
  g_free (self->path);
  g_free (self);
}

int
owb_prof_db_get_schema_version (OwbProfDb *self)
{
  sqlite3_stmt *st = NULL;
  int v = -1;
  if (sqlite3_prepare_v2 (self->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step (st) == SQLITE_ROW)
    v = sqlite3_column_int (st, 0);
  sqlite3_finalize (st);
  return v;
}

static char *
names_to_json (char **names)
{
  GString *out = g_string_new ("[");
  for (guint i = 0; names && names[i]; i++)
    {
      if (i)
        g_string_append_c (out, ',');
      owb_json_append_string (out, names[i]);
    }
  g_string_append_c (out, ']');
  return g_string_free (out, FALSE);
}

static void
bind_text (sqlite3_stmt *st, int i, const char *text)
{
  if (text)
    sqlite3_bind_text (st, i, text, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null (st, i);
}

/* For strings that stay put until the statement is reset: the run's interned shapes. */
static void
bind_static (sqlite3_stmt *st, int i, const char *text)
{
  if (text)
    sqlite3_bind_text (st, i, text, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null (st, i);
}

static gboolean
prepare (OwbProfDb *self, const char *sql, sqlite3_stmt **st, GError **error)
{
  if (sqlite3_prepare_v2 (self->db, sql, -1, st, NULL) == SQLITE_OK)
    return TRUE;
  _owb_prof_set_sqlite_error (error, self->db, self->path);
  return FALSE;
}

static gboolean
store_in_transaction (OwbProfDb *self, OwbProfRun *run, gint64 *id, GError **error)
{
  sqlite3 *db = self->db;
  sqlite3_stmt *st = NULL;
  gboolean ok = FALSE;
  const char *hash = run->model_hash ? run->model_hash : "";
  g_autofree gint64 *node_ids = g_new0 (gint64, MAX (run->nodes->len, 1));

  if (!prepare (self,
                "INSERT INTO runs (model_path, model_hash, label, date, host_cpu, threads, optimize, providers,"
                " engine_version, source) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)", &st, error))
    return FALSE;
  bind_text (st, 1, run->model_path ? run->model_path : "");
  bind_text (st, 2, hash);
  bind_text (st, 3, run->label ? run->label : "");
  bind_text (st, 4, run->date ? run->date : "");
  bind_text (st, 5, run->host_cpu ? run->host_cpu : "");
  sqlite3_bind_int (st, 6, run->threads);
  bind_text (st, 7, run->optimize ? run->optimize : "");
  bind_text (st, 8, run->providers ? run->providers : "");
  bind_text (st, 9, run->engine_version ? run->engine_version : "");
  bind_text (st, 10, run->source ? run->source : "owb");
  if (sqlite3_step (st) != SQLITE_DONE)
    goto fail;
  *id = sqlite3_last_insert_rowid (db);
  sqlite3_finalize (st);

  /* a node seen before (same model, path, name, op, provider) keeps its row; imported nodes that
   * had no edges get them from a later run that knows them */
  if (!prepare (self,
                "INSERT INTO nodes (model_hash, graph_path, name, op_type, provider, inputs, outputs, origins)"
                " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
                " ON CONFLICT (model_hash, graph_path, name, op_type, provider) DO UPDATE SET"
                " inputs = CASE WHEN nodes.inputs = '[]' THEN excluded.inputs ELSE nodes.inputs END,"
                " outputs = CASE WHEN nodes.outputs = '[]' THEN excluded.outputs ELSE nodes.outputs END,"
                " origins = CASE WHEN nodes.origins = '[]' THEN excluded.origins ELSE nodes.origins END"
                " RETURNING id", &st, error))
    return FALSE;
  for (guint n = 0; n < run->nodes->len; n++)
    {
      const OwbProfNode *node = g_ptr_array_index (run->nodes, n);
      g_autofree char *inputs = names_to_json (node->inputs);
      g_autofree char *outputs = names_to_json (node->outputs);
      g_autofree char *origins = names_to_json (node->origins);
      bind_text (st, 1, hash);
      bind_text (st, 2, node->graph_path);
      bind_text (st, 3, node->name);
      bind_text (st, 4, node->op_type);
      bind_text (st, 5, node->provider);
      bind_text (st, 6, inputs);
      bind_text (st, 7, outputs);
      bind_text (st, 8, origins);
      if (sqlite3_step (st) != SQLITE_ROW)
        goto fail;
      node_ids[n] = sqlite3_column_int64 (st, 0);
      sqlite3_step (st);
      sqlite3_reset (st);
    }
  sqlite3_finalize (st);

  if (!prepare (self, "INSERT INTO iterations (run_id, iteration, start_ns, duration_ns) VALUES (?1, ?2, ?3, ?4)",
                &st, error))
    return FALSE;
  for (guint i = 0; i < run->iterations->len; i++)
    {
      const OwbProfIteration *it = &g_array_index (run->iterations, OwbProfIteration, i);
      sqlite3_bind_int64 (st, 1, *id);
      sqlite3_bind_int (st, 2, (int) i);
      sqlite3_bind_int64 (st, 3, it->start_ns);
      sqlite3_bind_int64 (st, 4, it->duration_ns);
      if (sqlite3_step (st) != SQLITE_DONE)
        goto fail;
      sqlite3_reset (st);
    }
  sqlite3_finalize (st);

  if (!prepare (self,
                "INSERT INTO events (run_id, iteration, node_id, thread, kind, start_ns, duration_ns, self_ns,"
                " input_shapes, output_shapes, input_bytes, output_bytes, arena_bytes)"
                " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)", &st, error))
    return FALSE;
  sqlite3_bind_int64 (st, 1, *id);
  for (guint e = 0; e < run->events->len; e++)
    {
      const OwbProfEvent *ev = &g_array_index (run->events, OwbProfEvent, e);
      sqlite3_bind_int (st, 2, (int) ev->iteration);
      sqlite3_bind_int64 (st, 3, node_ids[ev->node]);
      sqlite3_bind_int (st, 4, (int) ev->thread);
      sqlite3_bind_int (st, 5, ev->kind);
      sqlite3_bind_int64 (st, 6, ev->start_ns);
      sqlite3_bind_int64 (st, 7, ev->duration_ns);
      sqlite3_bind_int64 (st, 8, ev->self_ns);
      bind_static (st, 9, ev->input_shapes);
      bind_static (st, 10, ev->output_shapes);
      sqlite3_bind_int64 (st, 11, ev->input_bytes);
      sqlite3_bind_int64 (st, 12, ev->output_bytes);
      sqlite3_bind_int64 (st, 13, ev->arena_bytes);
      if (sqlite3_step (st) != SQLITE_DONE)
        goto fail;
      sqlite3_reset (st);
    }
  ok = TRUE;
fail:
  if (!ok)
    _owb_prof_set_sqlite_error (error, db, self->path);
  sqlite3_finalize (st);
  return ok;
}

gboolean
owb_prof_db_store_run (OwbProfDb *self, OwbProfRun *run, GError **error)
{
  gint64 id = 0;
  if (sqlite3_exec (self->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    {
      _owb_prof_set_sqlite_error (error, self->db, self->path);
      return FALSE;
    }
  if (!store_in_transaction (self, run, &id, error))
    {
      sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  if (sqlite3_exec (self->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    {
      _owb_prof_set_sqlite_error (error, self->db, self->path);
      sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  run->id = id;
  return TRUE;
}

static char *
column_dup (sqlite3_stmt *st, int i)
{
  const unsigned char *text = sqlite3_column_text (st, i);
  return g_strdup (text ? (const char *) text : "");
}

/* A damaged file can make a query loop: an index page that points back at itself gave
 * owb_prof_db_list_runs rows without end (fuzz-profile: 24 GB before the kernel killed it). Every
 * stored row takes at least a byte of the file, so a query over one table that returns more rows
 * than the file has bytes is reading a damaged database; the loops below stop there. */
static gint64
row_budget (OwbProfDb *self)
{
  sqlite3_stmt *st = NULL;
  gint64 bytes = 0;
  if (sqlite3_prepare_v2 (self->db, "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size", -1, &st,
                          NULL) == SQLITE_OK &&
      sqlite3_step (st) == SQLITE_ROW)
    bytes = sqlite3_column_int64 (st, 0);
  sqlite3_finalize (st);
  return MAX (bytes, 4096);
}

static gboolean
over_budget (OwbProfDb *self, gint64 *rows, gint64 budget, GError **error)
{
  if (++*rows <= budget)
    return FALSE;
  g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "%s: the database is damaged (a query returned more rows than the file holds)",
               self->path);
  return TRUE;
}

/* A JSON array of names (as nodes.inputs) as a NULL-terminated array, through SQLite's json_each. */
static char **
names_from_json (OwbProfDb *self, sqlite3_stmt *names, const char *json)
{
  GPtrArray *out = g_ptr_array_new ();
  sqlite3_bind_text (names, 1, json, -1, SQLITE_TRANSIENT);
  while (sqlite3_step (names) == SQLITE_ROW)
    g_ptr_array_add (out, column_dup (names, 0));
  sqlite3_reset (names);
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (out, FALSE);
}

typedef struct {
  char *graph_path, *name, *op_type, *provider, **inputs, **outputs, **origins;
  int index; /* in the run, -1 until its first event */
} LoadedNode;

static void
loaded_node_free (LoadedNode *n)
{
  g_free (n->graph_path);
  g_free (n->name);
  g_free (n->op_type);
  g_free (n->provider);
  g_strfreev (n->inputs);
  g_strfreev (n->outputs);
  g_strfreev (n->origins);
  g_free (n);
}

OwbProfRun *
owb_prof_db_load_run (OwbProfDb *self, gint64 id, GError **error)
{
  sqlite3_stmt *st = NULL, *names = NULL;
  g_autoptr (OwbProfRun) run = NULL;
  g_autoptr (GHashTable) nodes = NULL;
  if (!prepare (self,
                "SELECT model_path, model_hash, label, date, host_cpu, threads, optimize, providers, engine_version,"
                " source FROM runs WHERE id = ?1", &st, error))
    return NULL;
  sqlite3_bind_int64 (st, 1, id);
  int rc = sqlite3_step (st);
  if (rc != SQLITE_ROW)
    {
      if (rc == SQLITE_DONE)
        g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s: no run %" G_GINT64_FORMAT, self->path, id);
      else
        _owb_prof_set_sqlite_error (error, self->db, self->path);
      sqlite3_finalize (st);
      return NULL;
    }
  run = owb_prof_run_new ();
  run->id = id;
#define TAKE(field, col) (g_free (run->field), run->field = column_dup (st, col))
  TAKE (model_path, 0);
  TAKE (model_hash, 1);
  TAKE (label, 2);
  TAKE (date, 3);
  TAKE (host_cpu, 4);
  run->threads = sqlite3_column_int (st, 5);
  TAKE (optimize, 6);
  TAKE (providers, 7);
  TAKE (engine_version, 8);
  TAKE (source, 9);
#undef TAKE
  sqlite3_finalize (st);

  if (!prepare (self, "SELECT start_ns, duration_ns FROM iterations WHERE run_id = ?1 ORDER BY iteration", &st, error))
    return NULL;
  sqlite3_bind_int64 (st, 1, id);
  gint64 budget = row_budget (self), rows = 0;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      if (over_budget (self, &rows, budget, error))
        {
          sqlite3_finalize (st);
          return NULL;
        }
      owb_prof_run_add_iteration (run, sqlite3_column_int64 (st, 0), sqlite3_column_int64 (st, 1));
    }
  sqlite3_finalize (st);
  if (rc != SQLITE_DONE)
    goto fail;

  nodes = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, (GDestroyNotify) loaded_node_free);
  if (!prepare (self, "SELECT value FROM json_each (?1)", &names, error))
    return NULL;
  if (!prepare (self,
                "SELECT id, graph_path, name, op_type, provider, inputs, outputs, origins FROM nodes"
                " WHERE id IN (SELECT node_id FROM events WHERE run_id = ?1)", &st, error))
    {
      sqlite3_finalize (names);
      return NULL;
    }
  sqlite3_bind_int64 (st, 1, id);
  rows = 0;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      if (over_budget (self, &rows, budget, error))
        {
          sqlite3_finalize (st);
          sqlite3_finalize (names);
          return NULL;
        }
      LoadedNode *n = g_new0 (LoadedNode, 1);
      gint64 *key = g_new (gint64, 1);
      *key = sqlite3_column_int64 (st, 0);
      n->graph_path = column_dup (st, 1);
      n->name = column_dup (st, 2);
      n->op_type = column_dup (st, 3);
      n->provider = column_dup (st, 4);
      n->inputs = names_from_json (self, names, (const char *) sqlite3_column_text (st, 5));
      n->outputs = names_from_json (self, names, (const char *) sqlite3_column_text (st, 6));
      n->origins = names_from_json (self, names, (const char *) sqlite3_column_text (st, 7));
      n->index = -1;
      g_hash_table_insert (nodes, key, n);
    }
  sqlite3_finalize (st);
  sqlite3_finalize (names);
  if (rc != SQLITE_DONE)
    goto fail;

  /* A run's events were inserted together, so their rowids are one range: reading it in rowid
   * order gives them (and their nodes) back in the order they were recorded. */
  if (!prepare (self,
                "SELECT node_id, iteration, thread, kind, start_ns, duration_ns, self_ns, input_shapes,"
                " output_shapes, input_bytes, output_bytes, arena_bytes FROM events"
                " WHERE rowid BETWEEN (SELECT min (rowid) FROM events WHERE run_id = ?1)"
                " AND (SELECT max (rowid) FROM events WHERE run_id = ?1) AND run_id = ?1 ORDER BY rowid", &st,
                error))
    return NULL;
  sqlite3_bind_int64 (st, 1, id);
  rows = 0;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      if (over_budget (self, &rows, budget, error))
        {
          sqlite3_finalize (st);
          return NULL;
        }
      gint64 node_id = sqlite3_column_int64 (st, 0);
      LoadedNode *n = g_hash_table_lookup (nodes, &node_id);
      if (!n)
        continue;
      if (n->index < 0)
        {
          n->index = (int) owb_prof_run_add_node (run, n->graph_path, n->name, n->op_type, n->provider,
                                                  (const char *const *) n->inputs, (const char *const *) n->outputs);
          owb_prof_run_set_node_origins (run, (guint) n->index, (const char *const *) n->origins);
        }
      OwbProfEvent ev = {
        .node = (guint) n->index,
        .iteration = (guint) sqlite3_column_int (st, 1),
        .thread = (guint) sqlite3_column_int (st, 2),
        .kind = sqlite3_column_int (st, 3),
        .start_ns = sqlite3_column_int64 (st, 4),
        .duration_ns = sqlite3_column_int64 (st, 5),
        .self_ns = sqlite3_column_int64 (st, 6),
        .input_shapes = (const char *) sqlite3_column_text (st, 7),
        .output_shapes = (const char *) sqlite3_column_text (st, 8),
        .input_bytes = sqlite3_column_int64 (st, 9),
        .output_bytes = sqlite3_column_int64 (st, 10),
        .arena_bytes = sqlite3_column_int64 (st, 11),
      };
      owb_prof_run_add_event (run, &ev);
    }
  sqlite3_finalize (st);
  if (rc != SQLITE_DONE)
    goto fail;
  /* The iteration numbers come from the file: one damaged event (iteration 2^31, or a negative one
   * read back as a huge unsigned) would make the statistics allocate gigabytes. */
  guint n_iter = _owb_prof_run_n_iterations (run);
  if ((guint64) MAX (run->nodes->len, 1) * n_iter > OWB_PROF_MAX_CELLS)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "%s: run %" G_GINT64_FORMAT " is damaged or too large: %u nodes over %u iterations", self->path,
                   id, run->nodes->len, n_iter);
      return NULL;
    }
  return g_steal_pointer (&run);

fail:
  _owb_prof_set_sqlite_error (error, self->db, self->path);
  return NULL;
}

gboolean
owb_prof_db_delete_run (OwbProfDb *self, gint64 id, GError **error)
{
  sqlite3_stmt *st = NULL;
  if (sqlite3_exec (self->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    {
      _owb_prof_set_sqlite_error (error, self->db, self->path);
      return FALSE;
    }
  static const char *const steps[] = {
    "DELETE FROM events WHERE run_id = ?1",
    "DELETE FROM iterations WHERE run_id = ?1",
    "DELETE FROM runs WHERE id = ?1",
  };
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < G_N_ELEMENTS (steps); i++)
    {
      ok = sqlite3_prepare_v2 (self->db, steps[i], -1, &st, NULL) == SQLITE_OK;
      if (ok)
        {
          sqlite3_bind_int64 (st, 1, id);
          ok = sqlite3_step (st) == SQLITE_DONE;
        }
      if (!ok)
        _owb_prof_set_sqlite_error (error, self->db, self->path);
      sqlite3_finalize (st);
      st = NULL;
    }
  if (ok && sqlite3_changes (self->db) == 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s: no run %" G_GINT64_FORMAT, self->path, id);
      ok = FALSE;
    }
  /* nodes no run refers to any more */
  if (ok && sqlite3_exec (self->db, "DELETE FROM nodes WHERE id NOT IN (SELECT node_id FROM events)", NULL, NULL,
                          NULL) != SQLITE_OK)
    {
      _owb_prof_set_sqlite_error (error, self->db, self->path);
      ok = FALSE;
    }
  if (ok && sqlite3_exec (self->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    {
      _owb_prof_set_sqlite_error (error, self->db, self->path);
      ok = FALSE;
    }
  if (!ok)
    sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
  return ok;
}

void
owb_prof_run_summary_free (OwbProfRunSummary *s)
{
  if (!s)
    return;
  g_free (s->label);
  g_free (s->model_path);
  g_free (s->model_hash);
  g_free (s->date);
  g_free (s->optimize);
  g_free (s->providers);
  g_free (s->source);
  g_free (s);
}

GPtrArray *
owb_prof_db_list_runs (OwbProfDb *self, const char *model_hash, GError **error)
{
  sqlite3_stmt *st = NULL, *times = NULL;
  if (!prepare (self,
                "SELECT id, label, model_path, model_hash, date, threads, optimize, providers, source,"
                " (SELECT count (*) FROM events WHERE run_id = runs.id) FROM runs"
                " WHERE ?1 IS NULL OR model_hash = ?1 ORDER BY id", &st, error))
    return NULL;
  if (!prepare (self, "SELECT duration_ns FROM iterations WHERE run_id = ?1", &times, error))
    {
      sqlite3_finalize (st);
      return NULL;
    }
  bind_text (st, 1, model_hash);
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_prof_run_summary_free);
  g_autoptr (GArray) durations = g_array_new (FALSE, FALSE, sizeof (double));
  int rc;
  gint64 budget = row_budget (self), rows = 0;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      if (over_budget (self, &rows, budget, error))
        break;
      OwbProfRunSummary *s = g_new0 (OwbProfRunSummary, 1);
      s->id = sqlite3_column_int64 (st, 0);
      s->label = column_dup (st, 1);
      s->model_path = column_dup (st, 2);
      s->model_hash = column_dup (st, 3);
      s->date = column_dup (st, 4);
      s->threads = sqlite3_column_int (st, 5);
      s->optimize = column_dup (st, 6);
      s->providers = column_dup (st, 7);
      s->source = column_dup (st, 8);
      s->n_events = (guint64) sqlite3_column_int64 (st, 9);
      g_array_set_size (durations, 0);
      sqlite3_bind_int64 (times, 1, s->id);
      gint64 time_rows = 0;
      while (sqlite3_step (times) == SQLITE_ROW && time_rows++ < budget)
        {
          double ms = sqlite3_column_int64 (times, 0) / 1e6;
          g_array_append_val (durations, ms);
        }
      sqlite3_reset (times);
      s->n_iterations = durations->len;
      s->median_ms = _owb_prof_quantile ((double *) durations->data, durations->len, 0.5);
      g_ptr_array_add (out, s);
    }
  sqlite3_finalize (st);
  sqlite3_finalize (times);
  if (rc == SQLITE_ROW) /* stopped by the row budget; the error is set */
    {
      g_ptr_array_unref (out);
      return NULL;
    }
  if (rc != SQLITE_DONE)
    {
      _owb_prof_set_sqlite_error (error, self->db, self->path);
      g_ptr_array_unref (out);
      return NULL;
    }
  return out;
}

char *
owb_prof_db_check_integrity (OwbProfDb *self, GError **error)
{
  sqlite3_stmt *st = NULL;
  if (!prepare (self, "PRAGMA integrity_check", &st, error))
    return NULL;
  GString *out = g_string_new (NULL);
  int rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      if (out->len)
        g_string_append (out, "; ");
      g_string_append (out, (const char *) sqlite3_column_text (st, 0));
    }
  sqlite3_finalize (st);
  if (rc != SQLITE_DONE)
    {
      _owb_prof_set_sqlite_error (error, self->db, self->path);
      g_string_free (out, TRUE);
      return NULL;
    }
  return g_string_free (out, FALSE);
}
