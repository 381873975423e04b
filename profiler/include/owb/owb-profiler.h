/* owb-profiler.h: libowb-profiler: per-node profiling runs recorded through a session's per-run
 * hooks (or imported from ONNX Runtime), kept in SQLite, queried, compared and exported as traces. */
#pragma once

#include <owb/owb-api.h>
#include <owb/owb.h>

G_BEGIN_DECLS

/* The schema this library writes; older databases are migrated when opened. */
#define OWB_PROF_SCHEMA_VERSION 2

typedef enum {
  OWB_PROF_EVENT_NODE = 0,   /* a node, on the thread that ran it */
  OWB_PROF_EVENT_WORKER = 1, /* a pool worker's share of a node's parallel loops */
} OwbProfEventKind;

typedef struct {
  char *name;        /* the node's name, or "Op#index" (its index in its graph) when it has none */
  char *op_type;
  char *provider;
  char *graph_path;  /* "" for the main graph, else the subgraph's path (see OwbNodeEvent) */
  char **inputs;     /* tensor names, NULL-terminated; empty when not known (an imported node) */
  char **outputs;
  char **origins;    /* for a node the optimizer made: the model's nodes it replaced (through every
                      * pass), NULL-terminated; empty for the model's own nodes */
} OwbProfNode;

typedef struct {
  guint node;              /* index in the run's nodes */
  guint iteration;         /* the profiled run it belongs to, from 0 */
  guint thread;            /* lane: 0 the run's thread, k the pool's worker k */
  OwbProfEventKind kind;
  gint64 start_ns;         /* from the start of the first iteration */
  gint64 duration_ns;
  gint64 self_ns;          /* a node: its duration less the nodes nested in it (a Loop's body);
                            * a worker's share: the time it ran chunks */
  const char *input_shapes;  /* "float32[1,3,32,32] float32[8,3,3,3]", "-" for a missing input;
                              * interned in the run (compare by pointer), may be NULL */
  const char *output_shapes;
  gint64 input_bytes;
  gint64 output_bytes;
  gint64 arena_bytes;      /* the run's intermediate tensors in use after the node; -1 unknown */
} OwbProfEvent;

typedef struct {
  gint64 start_ns;         /* from the start of the first iteration */
  gint64 duration_ns;
} OwbProfIteration;

/* One profiling run: what was run, how, and every event of every profiled iteration. */
typedef struct {
  gint64 id;               /* in its database; 0 until stored or loaded */
  char *model_path;
  char *model_hash;        /* "sha256:…" of the model file */
  char *label;
  char *date;              /* ISO 8601, UTC */
  char *host_cpu;
  int threads;             /* 0: not known (an imported profile) */
  char *optimize;
  char *providers;         /* comma-separated, priority order */
  char *engine_version;
  char *source;            /* "owb" or "onnxruntime" */
  GPtrArray *nodes;        /* of OwbProfNode *, in the order they first finished */
  GArray *iterations;      /* of OwbProfIteration */
  GArray *events;          /* of OwbProfEvent, in the order they ended */
  /*< private >*/
  GStringChunk *strings;
  GHashTable *node_index;  /* node key -> index + 1 */
} OwbProfRun;

OWB_API OwbProfRun *owb_prof_run_new (void);
OWB_API void owb_prof_run_free (OwbProfRun *run);
/* The node's index in the run, added if new (a node is its graph path, name, op type and
 * provider). inputs and outputs may be NULL. */
OWB_API guint owb_prof_run_add_node (OwbProfRun *run, const char *graph_path, const char *name, const char *op_type,
                                     const char *provider, const char *const *inputs, const char *const *outputs);
/* Sets the node's origins (see OwbProfNode); NULL or empty: none. */
OWB_API void owb_prof_run_set_node_origins (OwbProfRun *run, guint node, const char *const *origins);
/* A copy of text owned by the run; equal texts give the same pointer. NULL gives NULL. */
OWB_API const char *owb_prof_run_intern (OwbProfRun *run, const char *text);
/* Copies event; its shape strings are interned. */
OWB_API void owb_prof_run_add_event (OwbProfRun *run, const OwbProfEvent *event);
OWB_API void owb_prof_run_add_iteration (OwbProfRun *run, gint64 start_ns, gint64 duration_ns);
/* Sets model_path and model_hash (SHA-256 of the file's bytes). */
OWB_API gboolean owb_prof_run_set_model (OwbProfRun *run, const char *path, GError **error);
/* Sets date (now) and host_cpu (from /proc/cpuinfo where there is one). */
OWB_API void owb_prof_run_set_host (OwbProfRun *run);
/* The label, or "run ID" for a run without one; caller frees. */
OWB_API char *owb_prof_run_dup_title (const OwbProfRun *run);

/* Records a session's runs into a run: pass owb_prof_recorder_get_hooks in OwbRunOptions for each
 * profiled run; each run becomes one iteration. The run is borrowed and must outlive the recorder.
 * With the session (may be NULL), nodes the optimizer made get their origins from its report. */
typedef struct _OwbProfRecorder OwbProfRecorder;

OWB_API OwbProfRecorder *owb_prof_recorder_new (OwbProfRun *run, const OwbSession *session);
OWB_API void owb_prof_recorder_free (OwbProfRecorder *recorder);
OWB_API const OwbRunHooks *owb_prof_recorder_get_hooks (OwbProfRecorder *recorder);

/* Per node or per op type, over a run's iterations (a node that did not run in an iteration
 * counts 0 ms there). Times are self times in ms per iteration. */
typedef struct {
  const char *name;        /* node name, or the op type for an op row */
  const char *op_type;
  const char *provider;    /* NULL for an op row */
  const char *graph_path;  /* NULL for an op row */
  guint node;              /* index in run->nodes (G_MAXUINT for an op row) */
  double calls;            /* per iteration */
  double mean_ms;
  double median_ms;
  double min_ms;
  double p90_ms;
  double share;            /* of the sum of all rows' mean, 0..1 */
  const char *output_shapes; /* of the node's last event (NULL for an op row) */
} OwbProfStat;

/* Of OwbProfStat, slowest (by mean) first. Strings are borrowed from the run. */
OWB_API GArray *owb_prof_run_dup_node_stats (const OwbProfRun *run);
OWB_API GArray *owb_prof_run_dup_op_stats (const OwbProfRun *run);

/* A run's wall time per iteration (mean), split into its main graph's nodes and the gaps between
 * them, and each lane's busy time (lane 0: inside nodes; a worker: running chunks). */
typedef struct {
  double wall_ms;
  double nodes_ms;
  double gaps_ms;
  GArray *thread_busy_ms;  /* of double, per lane */
} OwbProfWallSplit;

OWB_API void owb_prof_run_get_wall_split (const OwbProfRun *run, OwbProfWallSplit *split);
OWB_API void owb_prof_wall_split_clear (OwbProfWallSplit *split);
/* The median iteration time; 0 for a run without iterations. */
OWB_API double owb_prof_run_get_median_ms (const OwbProfRun *run);

/* The critical path through the main graph's data dependencies, weighting each node by its median
 * time per iteration (including nested subgraphs): what the run would take with unlimited
 * parallelism between nodes. Returns node indices, first to last; *total_ms gets its length.
 * Nodes without known inputs and outputs stand alone. */
OWB_API GArray *owb_prof_run_dup_critical_path (const OwbProfRun *run, double *total_ms);

/* Run against run. A node the optimizer made in one run is matched first with the nodes it
 * replaced in the other (its origins, all of them there: their times add up). Then nodes are
 * matched by graph path and name, then by name alone (a profile that does not know graph paths);
 * where names differ (ONNX Runtime's renamed fusions), the nodes left over are paired by op type in
 * run order, for each op type that has as many left over in both runs. Op types are matched by
 * name. A side where the node (or op) did not run is NaN. Median ms per iteration. */
typedef enum {
  OWB_PROF_MATCH_NONE = 0, /* in one run only */
  OWB_PROF_MATCH_NAME,
  OWB_PROF_MATCH_OP_TYPE,
  OWB_PROF_MATCH_ORIGINS,
} OwbProfMatch;

typedef struct {
  const char *name;        /* node name (A's where both have one; the fused node's for ORIGINS), or
                            * the op type for an op row; borrowed from the runs */
  const char *op_type;
  const char *b_name;      /* B's node name where it differs (matched by op type), else NULL */
  double a_ms;
  double b_ms;
  OwbProfMatch match;
  const char **merged;     /* ORIGINS: the other run's nodes whose times add up, NULL-terminated */
  gboolean merged_in_a;    /* ORIGINS: whether those are A's (B's node was fused) */
} OwbProfDelta;

/* Of OwbProfDelta * (freed with the array), the matched in A's order, then those only in B. */
OWB_API GPtrArray *owb_prof_compare_nodes (const OwbProfRun *a, const OwbProfRun *b);
OWB_API GPtrArray *owb_prof_compare_ops (const OwbProfRun *a, const OwbProfRun *b);
OWB_API guint owb_prof_deltas_count_matched (const GPtrArray *deltas);

/* Chrome trace / Perfetto JSON: a "ph": "X" event per node per iteration on the track of the
 * thread that ran it, workers' shares on theirs. Written through a temporary file renamed into
 * place. */
OWB_API char *owb_prof_run_dup_trace_json (const OwbProfRun *run);
OWB_API gboolean owb_prof_run_export_trace (const OwbProfRun *run, const char *path, GError **error);

/* An ONNX Runtime profile (SessionOptions.enable_profiling's JSON) as a run: its "Node" events
 * ending in "_kernel_time", in the iteration of the "model_run" event around them. With a model
 * (may be NULL), the run names it, and nodes found in its main graph by name get their inputs and
 * outputs. */
OWB_API OwbProfRun *owb_prof_import_ort (const char *profile_path, const char *model_path, GError **error);

/* The store. */
typedef struct _OwbProfDb OwbProfDb;

typedef struct {
  gint64 id;
  char *label;
  char *model_path;
  char *model_hash;
  char *date;
  int threads;
  char *optimize;
  char *providers;
  char *source;
  guint n_iterations;
  guint64 n_events;
  double median_ms;        /* median iteration time */
} OwbProfRunSummary;

OWB_API void owb_prof_run_summary_free (OwbProfRunSummary *summary);

/* Opens (with create, makes) the database at path; migrates an older schema. WAL journal: other
 * processes (and other connections) may read and store runs at the same time; one connection is
 * used by one thread at a time. */
OWB_API OwbProfDb *owb_prof_db_open (const char *path, gboolean create, GError **error);
OWB_API void owb_prof_db_close (OwbProfDb *db);
OWB_API int owb_prof_db_get_schema_version (OwbProfDb *db);
/* Stores run in one transaction and sets run->id. */
OWB_API gboolean owb_prof_db_store_run (OwbProfDb *db, OwbProfRun *run, GError **error);
OWB_API OwbProfRun *owb_prof_db_load_run (OwbProfDb *db, gint64 id, GError **error);
OWB_API gboolean owb_prof_db_delete_run (OwbProfDb *db, gint64 id, GError **error);
/* Of OwbProfRunSummary *, oldest first; model_hash NULL: all models. */
OWB_API GPtrArray *owb_prof_db_list_runs (OwbProfDb *db, const char *model_hash, GError **error);
/* "ok", or what SQLite's PRAGMA integrity_check found; caller frees. */
OWB_API char *owb_prof_db_check_integrity (OwbProfDb *db, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbProfRun, owb_prof_run_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbProfRecorder, owb_prof_recorder_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbProfDb, owb_prof_db_close)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbProfRunSummary, owb_prof_run_summary_free)

G_END_DECLS
