/* owb-session.h: a session prepares a model for running (infer shapes, optimize, partition onto
 * providers, resolve kernels, plan memory) and runs it, from several threads at once if wanted. */
#pragma once

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
} OwbSessionOptions;

void owb_session_options_init (OwbSessionOptions *options);

/* Prepares `model` (a reference is taken; the session works on its own copy of the graph). */
OwbSession *owb_session_new (OwbModel *model, const OwbSessionOptions *options, GError **error);
/* The same, taking over the caller's reference to `model` (released whether or not the session is
 * made): weights the optimizer replaces (a convolution's, reordered channels-last) are freed as it
 * goes rather than kept by the caller's model, so the load's peak memory holds one copy of them.
 * Also, an initializer whose readers all keep a packed copy of it (a MatMul's weight) has its
 * storage freed (data NULL, shape kept) unless someone else holds a reference to the tensor. */
OwbSession *owb_session_new_take (OwbModel *model, const OwbSessionOptions *options, GError **error);
void owb_session_free (OwbSession *session);

/* The prepared graph: nodes in execution order, with inferred value infos and provider claims. */
const OwbGraph *owb_session_get_graph (const OwbSession *session);
/* Inputs to feed (non-initializer graph inputs) and outputs, as value infos (borrowed). */
guint owb_session_get_n_inputs (const OwbSession *session);
const OwbValueInfo *owb_session_get_input (const OwbSession *session, guint i);
guint owb_session_get_n_outputs (const OwbSession *session);
const OwbValueInfo *owb_session_get_output (const OwbSession *session, guint i);

typedef struct {
  gsize peak_bytes;       /* largest total of live intermediate tensors during the run */
  gsize allocated_bytes;  /* bytes requested from the system (after buffer reuse) */
  guint n_nodes_run;
} OwbRunStats;

/* Runs the graph. Inputs by name (all feed inputs are required). outputs[i] receives a new
 * reference for output_names[i]; output_names NULL means all graph outputs in order (outputs must
 * then have owb_session_get_n_outputs entries). stats may be NULL. Thread-safe. */
gboolean owb_session_run (OwbSession *session, guint n_inputs, const char *const *input_names,
                          OwbTensor *const *inputs, guint n_outputs, const char *const *output_names,
                          OwbTensor **outputs, OwbRunStats *stats, GCancellable *cancellable,
                          GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbSession, owb_session_free)

G_END_DECLS
