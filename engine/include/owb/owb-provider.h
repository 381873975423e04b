/* owb-provider.h: the execution-provider interface.
 *
 * A provider claims nodes (or declines with a reason), resolves a kernel for each claimed node once
 * per session, and runs it. Providers are asked in priority order ("cuda,cpu"); the first that
 * claims a node runs it, and every decline is kept on the node (the claim map shows them).
 *
 * The contract, in the order a session uses it:
 *   supports     query only: would claim take this node? No kernel is prepared, nothing is
 *                allocated; a decline gives its reason ("no CUDA kernel for Resize", "dtype
 *                bfloat16 not supported", "no CUDA device"). Partitioning and the graph view ask
 *                it to look ahead. May be NULL: then claim is the only question.
 *   claim        takes the node for good: chooses and prepares its kernel (packs weights, plans
 *                algorithms). FALSE with *reason is a decline; FALSE with an error is a failure.
 *   claim_group  optional, for providers that compile: after every node is claimed, the session
 *                offers each run of consecutive nodes that this provider claimed (in graph order)
 *                and the provider may take any contiguous part of it as one kernel (see
 *                OwbGroupChoice); the nodes then become one node of the session's graph, a
 *                DeviceGroup whose body is the nodes it replaced.
 *   device       NULL for providers whose kernels read and write host memory (the CPU). Otherwise
 *                the provider's memory (owb-device.h): the session allocates the outputs of its
 *                kernels there, plans that memory per device, uploads the constants its kernels
 *                read once per session, and inserts MemcpyFromHost / MemcpyToHost nodes (engine
 *                domain) where a value crosses between host and device, shown in the session's
 *                graph like any node. Inputs that carry shapes, indices or counts (Reshape's shape,
 *                Slice's starts, TopK's k: owb_op_input_is_host_data) and those a kernel row marks
 *                in host_inputs stay on the host; constant folding always runs on the CPU.
 *   release      frees what claim prepared. free: the provider itself.
 * A kernel of a device provider sees device tensors (OwbTensor.device) in ctx->inputs and must make
 * its outputs on ctx->device (owb_kernel_context_new_output does). Tests run every provider
 * against the CPU op by op (tests/providers/testdev, and the CUDA parity test). */
#pragma once

#include <owb/owb-api.h>
#include <owb/owb-device.h>
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
  OwbDevice *device;         /* where the kernel's tensors live; NULL: host memory */
  guint64 host_outputs;      /* outputs (bit i) made in host memory even on a device */
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
  /* For kernels of device providers: inputs (bit i) the kernel reads in host memory (beyond those
   * owb_op_input_is_host_data names for every provider), and outputs it writes there. */
  guint64 host_inputs;
  guint64 host_outputs;
} OwbKernelDef;

/* A kernel chosen for a node at session creation. */
typedef struct {
  const OwbKernelDef *def;
  void *state;
  /* The provider computes float16/bfloat16 through this float32 kernel: the executor converts
   * inputs and outputs of those types around it, on the host (providers with a device leave it
   * FALSE). */
  gboolean via_float32;
} OwbKernelChoice;

typedef struct _OwbProvider OwbProvider;

/* What claim_group returns: the provider took nodes [first, first + n_nodes) of what it was
 * offered as one kernel. The kernel runs for a DeviceGroup node whose "body" attribute holds those
 * nodes; the body's inputs name (in the nodes' own names) the values the group reads from outside
 * it, in the order of ctx->inputs, and its outputs the values the group makes that are read after
 * it, in the order of ctx->outputs. */
typedef struct {
  guint first;
  guint n_nodes;
  OwbKernelChoice choice;
} OwbGroupChoice;

struct _OwbProvider {
  const char *name;    /* "cpu", "cuda" */
  const char *description; /* human-readable device description ("host CPU", "NVIDIA H200") */
  OwbDevice *device;   /* NULL: kernels work on host memory */
  gboolean (*supports) (OwbProvider *provider, const OwbNode *node, int opset, const OwbValueType *const *input_types,
                        const OwbValueType *output_types, char **reason);
  /* Claim the node (TRUE, filling *choice) or decline (FALSE, *reason set to a newly allocated
   * explanation such as "no kernel for Resize with mode=cubic on float16"). input_types are the
   * inferred input types (NULL for missing). An error (return FALSE with error set) is a failure
   * of prepare, not a decline. */
  gboolean (*claim) (OwbProvider *provider, const OwbNode *node, int opset, const OwbValueType *const *input_types,
                     const OwbValueType *output_types, OwbKernelChoice *choice, char **reason, GError **error);
  /* Offered nodes[0..n_nodes), consecutive in graph order, all claimed by this provider, with the
   * choices its claim made for them (valid for the session's life: a group kernel may run them).
   * FALSE: none taken (reason optional). May be NULL. A group input is in device memory unless
   * every node of the group that reads it reads it as host data. */
  gboolean (*claim_group) (OwbProvider *provider, const OwbGraph *graph, OwbNode *const *nodes,
                           const OwbKernelChoice *choices, guint n_nodes, OwbGroupChoice *group, char **reason,
                           GError **error);
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
/* An OwbProvider.release for choices made from a kernel table: frees what the row's prepare made
 * (its free_state) and clears it. The CPU and CUDA providers release this way. */
OWB_API void owb_kernel_choice_release (OwbProvider *provider, OwbKernelChoice *choice);

/* Allocates output i with the given shape (on ctx->device unless host_outputs says otherwise) and
 * stores it in ctx->outputs[i]. */
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
