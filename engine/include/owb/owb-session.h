/* owb-session.h: a session prepares a model for running (infer shapes, optimize, partition onto
 * providers, resolve kernels, plan memory) and runs it, from several threads at once if wanted. */
#pragma once

#include <owb/owb-api.h>
#include <gio/gio.h>
#include <owb/owb-provider.h>

G_BEGIN_DECLS

typedef struct _OwbSession OwbSession;

typedef enum {
  OWB_OPTIMIZE_DISABLED = 0,
  OWB_OPTIMIZE_BASIC,
  OWB_OPTIMIZE_EXTENDED,
  OWB_OPTIMIZE_LAYOUT,
  OWB_OPTIMIZE_ALL
} OwbOptimizeLevel;

/* Trace hooks, called around every node when set; NULL hooks cost nothing. */
typedef struct {
  void (*node_begin) (const OwbNode *node, int node_index, gpointer user_data);
  void (*node_end) (const OwbNode *node, int node_index, OwbTensor *const *outputs, int n_outputs,
                    gpointer user_data);
  gpointer user_data;
} OwbTraceHooks;

typedef struct {
  GPtrArray *providers;        /* of OwbProvider *, priority order, not empty (see owb_providers_new_from_list); the session takes a ref on the array */
  int n_threads;               /* intra-op threads; 0: number of cores */
  OwbOptimizeLevel optimize;
  const char *const *disabled_passes; /* optimizer passes to skip, NULL-terminated; may be NULL */
  const OwbTraceHooks *hooks;  /* may be NULL; copied */
  gsize memory_limit;          /* bytes of intermediate tensors one run may hold at once (a Loop's
                                * scan outputs included); a run that needs more fails with
                                * OWB_ERROR_NOMEM naming the node. 0: no limit */
} OwbSessionOptions;

OWB_API void owb_session_options_init (OwbSessionOptions *options);

/* Prepares `model` (a reference is taken; the session works on its own copy of the graph). */
OWB_API OwbSession *owb_session_new (OwbModel *model, const OwbSessionOptions *options, GError **error);
/* The same, taking over the caller's reference to `model` (released whether or not the session is
 * made): weights the optimizer replaces (a convolution's, reordered channels-last) are freed as it
 * goes rather than kept by the caller's model, so the load's peak memory holds one copy of them.
 * Also, an initializer whose readers all keep a packed copy of it (a MatMul's weight) has its
 * storage freed (data NULL, shape kept) unless someone else holds a reference to the tensor. */
OWB_API OwbSession *owb_session_new_take (OwbModel *model, const OwbSessionOptions *options, GError **error);
OWB_API void owb_session_free (OwbSession *session);

/* The prepared graph: nodes in execution order, with inferred value infos and provider claims. */
OWB_API const OwbGraph *owb_session_get_graph (const OwbSession *session);
/* Inputs to feed (non-initializer graph inputs) and outputs, as value infos (borrowed). */
OWB_API guint owb_session_get_n_inputs (const OwbSession *session);
OWB_API const OwbValueInfo *owb_session_get_input (const OwbSession *session, guint i);
OWB_API guint owb_session_get_n_outputs (const OwbSession *session);
OWB_API const OwbValueInfo *owb_session_get_output (const OwbSession *session, guint i);

typedef struct {
  gsize peak_bytes;       /* largest total of live intermediate tensors during the run */
  gsize allocated_bytes;  /* bytes requested from the system (after buffer reuse) */
  guint n_nodes_run;
  /* Copies between host and device memory that the run made outside the session's Memcpy nodes
   * (values read across a subgraph boundary, fetched intermediate values). */
  guint n_unplanned_copies;
  /* Steps, subgraphs' included, whose output types were inferred during the run: the others took
   * what an earlier run of the step inferred for the same input types (inference that reads input
   * values is never kept). */
  guint n_inferred;
} OwbRunStats;

/* What a profiler sees of one run, through per-run hooks (owb_session_run_with_options). Times are
 * on CLOCK_MONOTONIC, in nanoseconds. */
typedef struct {
  gint64 start_ns;
  gint64 end_ns;          /* 0 in run_begin */
  gboolean ok;            /* run_end: whether the run succeeded */
  const OwbRunStats *stats; /* run_end only */
  int n_threads;          /* threads of the session's pool */
} OwbRunEvent;

/* A pool worker's share of one node: from its first to its last chunk of the node's parallel
 * loops, and the time it spent in them. Not reported for the thread that ran the node. */
typedef struct {
  int worker;             /* pool worker index, 1 .. n_threads - 1 */
  gint64 start_ns;
  gint64 end_ns;
  gint64 busy_ns;
} OwbWorkerSpan;

typedef struct {
  const OwbNode *node;
  int node_index;           /* in its graph's run order */
  const char *graph_path;   /* "" for the main graph; "loop/body" for the body of node "loop",
                             * "loop/body/if_1/then_branch" deeper (an unnamed node is "Op#index") */
  int depth;                /* 0 in the main graph */
  const char *op_type;
  const char *provider;
  int thread;               /* pool worker index of the thread that ran the node: 0, the run's own */
  gint64 start_ns;
  gint64 end_ns;            /* 0 in node_begin */
  OwbTensor *const *inputs; /* NULL entries for missing optional inputs */
  int n_inputs;
  OwbTensor *const *outputs; /* node_end only; NULL entries for outputs not produced */
  int n_outputs;
  gsize arena_bytes;        /* the run's intermediate tensors in use after the node */
  const OwbWorkerSpan *workers; /* node_end only: the workers that helped, n_workers of them */
  int n_workers;
} OwbNodeEvent;

/* Per-run hooks: each may be NULL. Called on the run's thread; a node inside a subgraph (a Loop
 * body) reports one node_begin/node_end pair per execution, nested in its parent's. */
typedef struct {
  void (*run_begin) (const OwbRunEvent *event, gpointer user_data);
  void (*run_end) (const OwbRunEvent *event, gpointer user_data);
  void (*node_begin) (const OwbNodeEvent *event, gpointer user_data);
  void (*node_end) (const OwbNodeEvent *event, gpointer user_data);
  gpointer user_data;
} OwbRunHooks;

typedef struct {
  const OwbRunHooks *hooks; /* may be NULL: the run costs what owb_session_run costs */
  GCancellable *cancellable;
} OwbRunOptions;

OWB_API void owb_run_options_init (OwbRunOptions *options);

/* Nanoseconds on the clock the hooks' times are on. */
OWB_API gint64 owb_monotonic_ns (void);

/* Runs the graph. Inputs by name (all feed inputs are required). outputs[i] receives a new
 * reference for output_names[i]; output_names NULL means all graph outputs in order (outputs must
 * then have owb_session_get_n_outputs entries). stats may be NULL. Thread-safe. */
OWB_API gboolean owb_session_run (OwbSession *session, guint n_inputs, const char *const *input_names,
                                  OwbTensor *const *inputs, guint n_outputs, const char *const *output_names,
                                  OwbTensor **outputs, OwbRunStats *stats, GCancellable *cancellable,
                                  GError **error);

/* owb_session_run with per-run options (options may be NULL): concurrent runs of one session
 * can each carry their own hooks. The session's own hooks, if any, are called too. */
OWB_API gboolean owb_session_run_with_options (OwbSession *session, const OwbRunOptions *options, guint n_inputs,
                                               const char *const *input_names, OwbTensor *const *inputs, guint n_outputs,
                                               const char *const *output_names, OwbTensor **outputs, OwbRunStats *stats,
                                               GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbSession, owb_session_free)

G_END_DECLS
