/* owb-provider.h: the execution-provider interface. A provider claims nodes (or declines with a
 * reason), resolves a kernel for each claimed node once per session, and runs it. */
#pragma once

#include <owb/owb-api.h>
#include <owb/owb-op.h>

G_BEGIN_DECLS

typedef struct _OwbThreadPool OwbThreadPool;

/* What a kernel sees when it runs. Outputs whose shape inference fully determined are
 * allocated before compute; the others are NULL and the kernel creates them with
 * owb_kernel_context_new_output (or stores a tensor it holds a reference to). */
typedef struct {
  const OwbNode *node;
  int opset;
  int n_inputs;
  OwbTensor *const *inputs;  /* NULL for missing optional inputs */
  int n_outputs;
  OwbTensor **outputs;       /* NULL for outputs the kernel must create, or unused ones */
  gboolean *output_wanted;   /* FALSE for "" outputs, which still may be computed */
  void *state;               /* what prepare returned; read-only here (runs may be concurrent) */
  OwbThreadPool *pool;       /* intra-op threads; NULL means run serially */
  gpointer run_data;         /* private to the executor (subgraph runs) */
} OwbKernelContext;

typedef gboolean (*OwbKernelPrepareFunc) (const OwbNode *node, int opset, const OwbValueType *const *input_types,
                                          void **state, GError **error);
typedef gboolean (*OwbKernelComputeFunc) (OwbKernelContext *ctx, GError **error);

/* One row of a provider's kernel table. */
typedef struct {
  const char *op_type;
  const char *domain;     /* "" for ai.onnx */
  int since;              /* first opset version the kernel implements */
  int until;              /* last one (inclusive); 0 means no upper bound */
  guint64 types;          /* accepted dtypes (OWB_TYPE_BIT mask) of input `type_input`; 0 = any */
  int type_input;         /* which input's dtype is checked; -1: output 0's inferred dtype */
  OwbKernelPrepareFunc prepare; /* may be NULL */
  GDestroyNotify free_state;    /* frees what prepare returned; may be NULL */
  OwbKernelComputeFunc compute;
  /* May be NULL. TRUE when the state prepare returned holds all that compute needs of input
   * `input`, a constant (a packed copy of a weight): given that same tensor at run time, compute
   * reads only its shape. A session that owns its model then frees the initializer's storage. */
  gboolean (*holds_input) (const void *state, int input);
} OwbKernelDef;

/* A kernel chosen for a node at session creation. */
typedef struct {
  const OwbKernelDef *def;
  void *state;
  /* The provider computes float16/bfloat16 through this float32 kernel: the executor converts
   * inputs and outputs of those types around it. */
  gboolean via_float32;
} OwbKernelChoice;

typedef struct _OwbProvider OwbProvider;
struct _OwbProvider {
  const char *name;    /* "cpu", "cuda" */
  const char *device;  /* human-readable device description */
  /* Claim the node (TRUE, filling *choice) or decline (FALSE, *reason set to a newly allocated
   * explanation such as "no kernel for Resize with mode=cubic on float16"). input_types are the
   * inferred input types (NULL for missing). An error (return FALSE with error set) is a failure
   * of prepare, not a decline. */
  gboolean (*claim) (OwbProvider *provider, const OwbNode *node, int opset, const OwbValueType *const *input_types,
                     const OwbValueType *output_types, OwbKernelChoice *choice, char **reason, GError **error);
  void (*release) (OwbProvider *provider, OwbKernelChoice *choice);
  void (*free) (OwbProvider *provider);
  gpointer priv;
};

/* Looks a kernel up in a table for the node's op, domain, opset and the dtype that the row checks.
 * NULL if none; *why receives a reason when not NULL ("no kernel for X at opset N", "type int8
 * not supported by X"). */
OWB_API const OwbKernelDef *owb_kernel_table_lookup (const OwbKernelDef *const *table, guint n_table, const OwbNode *node,
                                                     int opset, const OwbValueType *const *input_types,
                                                     const OwbValueType *output_types, char **why);

/* Allocates output i with the given shape and stores it in ctx->outputs[i]. */
OWB_API OwbTensor *owb_kernel_context_new_output (OwbKernelContext *ctx, int i, OwbDataType dtype, int rank,
                                                  const int64_t *dims, GError **error);
OWB_API void owb_kernel_set_error (OwbKernelContext *ctx, GError **error, int code, const char *format, ...) G_GNUC_PRINTF (4, 5);

/* For kernels that repeat work the model controls (a Loop's iterations): FALSE with
 * OWB_ERROR_CANCELLED once the run is cancelled, or OWB_ERROR_NOMEM when the run's tensors plus
 * `held` bytes the kernel keeps (accumulated results) pass the session's memory limit. A run of a
 * subgraph checks cancellation between nodes already. */
OWB_API gboolean owb_kernel_context_check_interrupt (OwbKernelContext *ctx, gsize held, GError **error);

/* For control-flow kernels (If, Loop, Scan, SequenceMap): runs `graph`, a subgraph held by an
 * attribute of ctx->node, binding its graph inputs in order to `inputs` (n_inputs may be smaller
 * than the graph's inputs only where the rest are initializers). `outputs` receives a new reference
 * for each graph output, in order. Names the subgraph reads from outer scopes resolve to the
 * values of the enclosing running graphs. A kernel may put such a tensor in ctx->outputs[i]
 * (dropping what was there) instead of copying it. */
OWB_API gboolean owb_kernel_context_run_subgraph (OwbKernelContext *ctx, const OwbGraph *graph, guint n_inputs,
                                                  OwbTensor *const *inputs, OwbTensor **outputs, GError **error);

/* Thread pool: runs fn (i, data) for i in [0, n), split over the pool's threads. With pool NULL
 * (or one thread) it runs serially on the caller. */
typedef void (*OwbParallelFunc) (int64_t begin, int64_t end, gpointer data);
OWB_API OwbThreadPool *owb_thread_pool_new (int n_threads);
OWB_API void owb_thread_pool_free (OwbThreadPool *pool);
OWB_API int owb_thread_pool_get_n_threads (const OwbThreadPool *pool);
/* Splits [0, n) into chunks of at least `grain` items and runs fn on them in parallel. */
OWB_API void owb_parallel_for (OwbThreadPool *pool, int64_t n, int64_t grain, OwbParallelFunc fn, gpointer data);

G_END_DECLS
