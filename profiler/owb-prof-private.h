/* owb-prof-private.h: helpers the profiler's files share: JSON text, quantiles, SQLite errors. */
#pragma once

#include <owb/owb-profiler.h>
#include <sqlite3.h>

struct _OwbProfDb {
  sqlite3 *db;
  char *path;
};

/* Appends a finite number (JSON has no NaN or infinity: those are null). */
void _owb_prof_json_number (GString *out, double v);
/* Sorts v (n values) and returns its q-quantile by linear interpolation; 0 when n is 0. */
double _owb_prof_quantile (double *v, guint n, double q);
/* How many iterations the statistics lay out: the recorded ones, or more where events say so (an
 * imported profile may have events past its last model_run); at least 1. */
guint _owb_prof_run_n_iterations (const OwbProfRun *run);
/* The statistics hold a nodes x iterations table of doubles; a stored run larger than this is
 * refused when loaded (a real run of 2,000 nodes x 10,000 iterations is 2 x 10^7). */
#define OWB_PROF_MAX_CELLS ((guint64) 1 << 26)
/* Sets an OWB_ERROR_IO error from the connection's last error, prefixed with what. */
void _owb_prof_set_sqlite_error (GError **error, sqlite3 *db, const char *what);
/* The key under which a run keeps a node. */
char *_owb_prof_node_key (const char *graph_path, const char *name, const char *op_type, const char *provider);
/* Runs the migrations up to version (a test makes an older database with it). */
gboolean _owb_prof_db_migrate (sqlite3 *db, int version, GError **error);
