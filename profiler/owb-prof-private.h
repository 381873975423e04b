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
/* Sets an OWB_ERROR_IO error from the connection's last error, prefixed with what. */
void _owb_prof_set_sqlite_error (GError **error, sqlite3 *db, const char *what);
/* The key under which a run keeps a node. */
char *_owb_prof_node_key (const char *graph_path, const char *name, const char *op_type, const char *provider);
/* Runs the migrations up to version (a test makes an older database with it). */
gboolean _owb_prof_db_migrate (sqlite3 *db, int version, GError **error);
