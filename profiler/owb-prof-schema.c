/* owb-prof-schema.c: the database schema as a list of migrations, one per version (PRAGMA
 * user_version); a new database runs them all, an older one those it lacks, in one transaction. */
#include "owb-prof-private.h"

/* Never edit a released step: add one. Version 1: runs, the nodes of each model, iterations and
 * node events. Version 2: pool workers' shares of nodes as events of kind 1 (busy time in
 * self_ns), for per-thread lanes and busy time; the nodes an optimized node replaced (origins),
 * for comparing runs at different levels. */
static const char *const migrations[] = {
  /* 0 -> 1 */
  "CREATE TABLE runs ("
  "  id INTEGER PRIMARY KEY,"
  "  model_path TEXT NOT NULL,"
  "  model_hash TEXT NOT NULL,"
  "  label TEXT NOT NULL DEFAULT '',"
  "  date TEXT NOT NULL,"
  "  host_cpu TEXT NOT NULL DEFAULT '',"
  "  threads INTEGER NOT NULL,"
  "  optimize TEXT NOT NULL,"
  "  providers TEXT NOT NULL,"
  "  engine_version TEXT NOT NULL,"
  "  source TEXT NOT NULL DEFAULT 'owb');"
  "CREATE INDEX runs_by_model ON runs (model_hash, id);"
  /* a node is per model; an optimization level that fuses nodes adds nodes of its own */
  "CREATE TABLE nodes ("
  "  id INTEGER PRIMARY KEY,"
  "  model_hash TEXT NOT NULL,"
  "  graph_path TEXT NOT NULL,"
  "  name TEXT NOT NULL,"
  "  op_type TEXT NOT NULL,"
  "  provider TEXT NOT NULL,"
  "  inputs TEXT NOT NULL DEFAULT '[]',"  /* JSON arrays of tensor names */
  "  outputs TEXT NOT NULL DEFAULT '[]',"
  "  UNIQUE (model_hash, graph_path, name, op_type, provider));"
  "CREATE TABLE iterations ("
  "  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  iteration INTEGER NOT NULL,"
  "  start_ns INTEGER NOT NULL,"
  "  duration_ns INTEGER NOT NULL,"
  "  PRIMARY KEY (run_id, iteration)) WITHOUT ROWID;"
  "CREATE TABLE events ("
  "  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  iteration INTEGER NOT NULL,"
  "  node_id INTEGER NOT NULL REFERENCES nodes (id),"
  "  thread INTEGER NOT NULL,"
  "  start_ns INTEGER NOT NULL,"
  "  duration_ns INTEGER NOT NULL,"
  "  self_ns INTEGER NOT NULL,"
  "  input_shapes TEXT,"
  "  output_shapes TEXT,"
  "  input_bytes INTEGER NOT NULL DEFAULT 0,"
  "  output_bytes INTEGER NOT NULL DEFAULT 0,"
  "  arena_bytes INTEGER NOT NULL DEFAULT -1);"
  /* a run's events in time order (load, export), and a node's across runs (compare) */
  "CREATE INDEX events_by_run ON events (run_id, iteration, start_ns);"
  "CREATE INDEX events_by_node ON events (node_id, run_id);",
  /* 1 -> 2 */
  "ALTER TABLE events ADD COLUMN kind INTEGER NOT NULL DEFAULT 0;"
  "ALTER TABLE nodes ADD COLUMN origins TEXT NOT NULL DEFAULT '[]';",
};

G_STATIC_ASSERT (G_N_ELEMENTS (migrations) == OWB_PROF_SCHEMA_VERSION);

static int
user_version (sqlite3 *db)
{
  sqlite3_stmt *st = NULL;
  int v = -1;
  if (sqlite3_prepare_v2 (db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step (st) == SQLITE_ROW)
    v = sqlite3_column_int (st, 0);
  sqlite3_finalize (st);
  return v;
}

gboolean
_owb_prof_db_migrate (sqlite3 *db, int version, GError **error)
{
  /* IMMEDIATE: two processes opening a new database at once do not both create it */
  if (sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    {
      _owb_prof_set_sqlite_error (error, db, "cannot start the schema transaction");
      return FALSE;
    }
  int have = user_version (db);
  if (have < 0)
    {
      _owb_prof_set_sqlite_error (error, db, "cannot read the schema version");
      sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  if (have > OWB_PROF_SCHEMA_VERSION)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_IO,
                   "the database has schema version %d, newer than this build knows (%d)", have,
                   OWB_PROF_SCHEMA_VERSION);
      sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  for (int v = have; v < version; v++)
    {
      char *message = NULL;
      if (sqlite3_exec (db, migrations[v], NULL, NULL, &message) != SQLITE_OK)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_IO, "schema migration %d -> %d failed: %s", v, v + 1,
                       message ? message : "unknown error");
          sqlite3_free (message);
          sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
          return FALSE;
        }
    }
  g_autofree char *set = g_strdup_printf ("PRAGMA user_version = %d", MAX (have, version));
  if (sqlite3_exec (db, set, NULL, NULL, NULL) != SQLITE_OK || sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    {
      _owb_prof_set_sqlite_error (error, db, "cannot commit the schema");
      sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  return TRUE;
}
