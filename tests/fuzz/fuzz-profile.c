/* fuzz-profile.c: the profiler's SQLite store as a reader: the bytes are a database file (seeded
 * with one `owb profile` wrote), opened the way the Profile page and `owb runs` open an existing
 * one (owb_prof_db_open without create), its runs listed and each loaded, then what the page and
 * `owb runs show/compare/critical-path` compute from a run. A database a user is sent is
 * untrusted: a corrupt or hostile one must give an error, never a crash.
 *
 * The library has no read-only mode (opening migrates an old schema and sets WAL), so the bytes
 * are written to a temporary file of this process, which is removed with its -wal and -shm
 * files after each input. */
#include "fuzz-common.h"

#include <owb/owb-profiler.h>

#include <glib/gstdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Loading is linear in the events a run holds; a run of a million events in a small file would
 * only cost time, so each input loads a few runs. */
#define FUZZ_MAX_RUNS 4

static char *tmp_dir;

static void
remove_db (const char *path)
{
  static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *p = g_strconcat (path, suffixes[i], NULL);
      g_unlink (p);
    }
}

/* At a normal exit (a crash or a timeout leaves the folder for a look) */
static void
remove_tmp_dir (void)
{
  g_autofree char *path = g_build_filename (tmp_dir, "runs.db", NULL);
  remove_db (path);
  g_rmdir (tmp_dir);
}

static void
use_run (OwbProfRun *run)
{
  g_array_unref (owb_prof_run_dup_node_stats (run));
  g_array_unref (owb_prof_run_dup_op_stats (run));
  OwbProfWallSplit split;
  owb_prof_run_get_wall_split (run, &split);
  owb_prof_wall_split_clear (&split);
  (void) owb_prof_run_get_median_ms (run);
  double total = 0;
  g_array_unref (owb_prof_run_dup_critical_path (run, &total));
  g_free (owb_prof_run_dup_trace_json (run));
  g_free (owb_prof_run_dup_title (run));
  GPtrArray *by_node = owb_prof_compare_nodes (run, run);
  (void) owb_prof_deltas_count_matched (by_node);
  g_ptr_array_unref (by_node);
  g_ptr_array_unref (owb_prof_compare_ops (run, run));
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (tmp_dir == NULL)
    {
      /* a tmpfs where there is one: opening the store writes and syncs (WAL, synchronous FULL);
       * 20 seed inputs took 0.30-0.63 s in /tmp on this machine's disk, 0.08-0.12 s in /dev/shm */
      char *shm = g_strdup ("/dev/shm/owb-fuzz-profile-XXXXXX");
      if (access ("/dev/shm", W_OK) == 0 && g_mkdtemp (shm))
        tmp_dir = shm;
      else
        g_free (shm);
      if (tmp_dir == NULL)
        tmp_dir = g_dir_make_tmp ("owb-fuzz-profile-XXXXXX", NULL);
      if (tmp_dir == NULL)
        abort ();
      atexit (remove_tmp_dir);
    }
  g_autofree char *path = g_build_filename (tmp_dir, "runs.db", NULL);
  remove_db (path);
  if (!g_file_set_contents (path, (const char *) data, (gssize) size, NULL))
    abort (); /* the harness's own failure, not the input's */

  GError *error = NULL;
  OwbProfDb *db = owb_prof_db_open (path, FALSE, &error);
  if (db)
    {
      (void) owb_prof_db_get_schema_version (db);
      GPtrArray *runs = owb_prof_db_list_runs (db, NULL, &error);
      if (runs)
        {
          for (guint i = 0; i < runs->len && i < FUZZ_MAX_RUNS; i++)
            {
              const OwbProfRunSummary *summary = g_ptr_array_index (runs, i);
              OwbProfRun *run = owb_prof_db_load_run (db, summary->id, &error);
              if (run)
                {
                  use_run (run);
                  owb_prof_run_free (run);
                }
              g_clear_error (&error);
            }
          /* an id the list did not give */
          OwbProfRun *run = owb_prof_db_load_run (db, G_MAXINT64, &error);
          if (run)
            owb_prof_run_free (run);
          g_ptr_array_unref (runs);
        }
      g_clear_error (&error);
      g_free (owb_prof_db_check_integrity (db, &error));
      g_clear_error (&error);
      owb_prof_db_close (db);
    }
  g_clear_error (&error);
  remove_db (path);
  return 0;
}
