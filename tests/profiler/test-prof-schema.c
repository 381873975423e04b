/* test-prof-schema.c: the store's schema: a new database (WAL, the current version, its tables),
 * migration from every earlier version with the runs it holds intact, a newer version refused. */
#include "prof-test-util.h"
#include "owb-prof-private.h"

#include <stdlib.h>

static char *
query_text (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *st = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &st, NULL), ==, SQLITE_OK);
  char *out = NULL;
  if (sqlite3_step (st) == SQLITE_ROW)
    out = g_strdup ((const char *) sqlite3_column_text (st, 0));
  sqlite3_finalize (st);
  return out;
}

static void
test_new_database (void)
{
  g_autofree char *dir = prof_test_tmpdir ();
  g_autofree char *path = g_build_filename (dir, "new.sqlite", NULL);
  GError *error = NULL;
  /* without create, a missing file is an error */
  g_assert_null (owb_prof_db_open (path, FALSE, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_IO);
  g_clear_error (&error);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));

  OwbProfDb *db = owb_prof_db_open (path, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (owb_prof_db_get_schema_version (db), ==, OWB_PROF_SCHEMA_VERSION);
  g_autofree char *mode = query_text (db->db, "PRAGMA journal_mode");
  g_assert_cmpstr (mode, ==, "wal");
  const char *tables[] = { "runs", "nodes", "iterations", "events" };
  for (guint i = 0; i < G_N_ELEMENTS (tables); i++)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '%s'", tables[i]);
      g_autofree char *found = query_text (db->db, sql);
      g_assert_cmpstr (found, ==, tables[i]);
    }
  const char *indexes[] = { "runs_by_model", "events_by_run", "events_by_node" };
  for (guint i = 0; i < G_N_ELEMENTS (indexes); i++)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT name FROM sqlite_master WHERE type = 'index' AND name = '%s'", indexes[i]);
      g_autofree char *found = query_text (db->db, sql);
      g_assert_cmpstr (found, ==, indexes[i]);
    }
  g_autofree char *integrity = owb_prof_db_check_integrity (db, &error);
  g_assert_cmpstr (integrity, ==, "ok");
  owb_prof_db_close (db);

  /* opening it again changes nothing */
  db = owb_prof_db_open (path, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (owb_prof_db_get_schema_version (db), ==, OWB_PROF_SCHEMA_VERSION);
  owb_prof_db_close (db);

  /* an empty file is a database of version 0 */
  g_autofree char *empty = g_build_filename (dir, "empty.sqlite", NULL);
  g_assert_true (g_file_set_contents (empty, "", 0, NULL));
  db = owb_prof_db_open (empty, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (owb_prof_db_get_schema_version (db), ==, OWB_PROF_SCHEMA_VERSION);
  owb_prof_db_close (db);
  prof_test_tmpdir_remove (dir);
}

/* A database as each earlier version made it, with one run in it, is migrated on open and the run
 * reads back whole. */
static void
test_migrations (void)
{
  g_autofree char *dir = prof_test_tmpdir ();
  for (int version = 0; version < OWB_PROF_SCHEMA_VERSION; version++)
    {
      g_autofree char *path = g_strdup_printf ("%s/v%d.sqlite", dir, version);
      sqlite3 *raw = NULL;
      GError *error = NULL;
      g_assert_cmpint (sqlite3_open (path, &raw), ==, SQLITE_OK);
      g_assert_true (_owb_prof_db_migrate (raw, version, &error));
      g_assert_no_error (error);
      if (version >= 1)
        {
          /* what version 1 stored: no kind column */
          const char *sql =
            "INSERT INTO runs (id, model_path, model_hash, label, date, threads, optimize, providers, engine_version)"
            " VALUES (7, 'old.onnx', 'sha256:old', 'before', '2026-01-01T00:00:00Z', 2, 'basic', 'cpu', '0.0.9');"
            "INSERT INTO nodes (id, model_hash, graph_path, name, op_type, provider, inputs, outputs)"
            " VALUES (3, 'sha256:old', '', 'conv', 'Conv', 'cpu', '[\"x\",\"w\"]', '[\"y\"]');"
            "INSERT INTO iterations VALUES (7, 0, 0, 5000);"
            "INSERT INTO events (run_id, iteration, node_id, thread, start_ns, duration_ns, self_ns, input_shapes,"
            " output_shapes, input_bytes, output_bytes, arena_bytes)"
            " VALUES (7, 0, 3, 0, 100, 4000, 4000, 'float32[1,3] float32[2,3]', 'float32[1,2]', 36, 8, 64);";
          char *message = NULL;
          int rc = sqlite3_exec (raw, sql, NULL, NULL, &message);
          g_assert_cmpstr (message, ==, NULL);
          g_assert_cmpint (rc, ==, SQLITE_OK);
        }
      g_autofree char *have = query_text (raw, "PRAGMA user_version");
      g_assert_cmpint (atoi (have), ==, version);
      sqlite3_close (raw);

      OwbProfDb *db = owb_prof_db_open (path, FALSE, &error);
      g_assert_no_error (error);
      g_assert_cmpint (owb_prof_db_get_schema_version (db), ==, OWB_PROF_SCHEMA_VERSION);
      g_autoptr (GPtrArray) runs = owb_prof_db_list_runs (db, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (runs->len, ==, version >= 1 ? 1 : 0);
      if (version >= 1)
        {
          g_autoptr (OwbProfRun) run = owb_prof_db_load_run (db, 7, &error);
          g_assert_no_error (error);
          g_assert_cmpstr (run->label, ==, "before");
          g_assert_cmpstr (run->source, ==, "owb");
          g_assert_cmpuint (run->nodes->len, ==, 1);
          OwbProfNode *node = g_ptr_array_index (run->nodes, 0);
          g_assert_cmpstr (node->name, ==, "conv");
          g_assert_cmpstr (node->inputs[1], ==, "w");
          g_assert_cmpuint (run->events->len, ==, 1);
          OwbProfEvent *ev = &g_array_index (run->events, OwbProfEvent, 0);
          g_assert_cmpint (ev->kind, ==, OWB_PROF_EVENT_NODE);
          g_assert_cmpint (ev->duration_ns, ==, 4000);
          g_assert_cmpstr (ev->input_shapes, ==, "float32[1,3] float32[2,3]");
          /* and the migrated database takes new runs */
          g_autoptr (OwbProfRun) added = prof_test_synthetic_run (10, "after");
          g_assert_true (owb_prof_db_store_run (db, added, &error));
          g_assert_no_error (error);
        }
      g_autofree char *integrity = owb_prof_db_check_integrity (db, &error);
      g_assert_cmpstr (integrity, ==, "ok");
      owb_prof_db_close (db);
    }
  prof_test_tmpdir_remove (dir);
}

static void
test_newer_refused (void)
{
  g_autofree char *dir = prof_test_tmpdir ();
  g_autofree char *path = g_build_filename (dir, "future.sqlite", NULL);
  sqlite3 *raw = NULL;
  g_assert_cmpint (sqlite3_open (path, &raw), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (raw, "PRAGMA user_version = 99", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (raw);
  GError *error = NULL;
  g_assert_null (owb_prof_db_open (path, FALSE, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "newer"));
  g_clear_error (&error);
  prof_test_tmpdir_remove (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/prof-schema/new-database", test_new_database);
  g_test_add_func ("/prof-schema/migrations", test_migrations);
  g_test_add_func ("/prof-schema/newer-refused", test_newer_refused);
  return g_test_run ();
}
