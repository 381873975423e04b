/* owb-pass.h: the optimizer's pass contract, public so that libraries outside the engine (the
 * quantizer's QDQ insertion) rewrite graphs with the same report and provenance as the engine's own
 * passes. A pass edits ctx->graph only through the helpers below, which keep the indexes exact and
 * record every removed and created node in ctx->report. */
#pragma once

#include <owb/owb-api.h>
#include <owb/owb-optimizer.h>
#include <owb/owb-error.h>

G_BEGIN_DECLS

typedef struct _OwbPassContext OwbPassContext;

typedef struct {
  const char *name;
  OwbOptimizeLevel level;
  const char *description;
  /* Rewrites ctx->graph. Returning FALSE with an error stops the optimization; a pattern that
   * does not apply is not an error (record a near miss instead where it helps the user). */
  gboolean (*run) (OwbPassContext *ctx, GError **error);
  /* What the pass works from beyond the graph (the quantizer's ranges and choices); the engine's
   * own passes have none. Read it through ctx->pass. */
  gpointer user_data;
} OwbPass;

struct _OwbPassContext {
  OwbModel *model;
  OwbGraph *graph;
  const OwbOptimizeOptions *options;
  OwbPassReport *report;
  const OwbPass *pass;     /* the pass running */
  /*< private >*/
  /* Built on first use and kept exact by every helper below (never rebuilt per query). */
  GHashTable *producer;    /* value name -> OwbNode * */
  GHashTable *consumers;   /* value name -> GPtrArray of OwbNode * (a node once per input slot) */
  GHashTable *outer_reads; /* value name -> how many nodes' subgraphs read it (extra uses) */
  gboolean maps_valid;
  GHashTable *value_infos;   /* value name -> OwbValueInfo *, as owb_graph_find_value_info finds it */
  GHashTable *graph_inputs;  /* names of the graph's inputs */
  GHashTable *graph_outputs; /* names of the graph's outputs */
  GHashTable *removed;     /* nodes removed but still in graph->nodes until owb_pass_nodes sweeps */
  GHashTable *queued;      /* worklist membership while watching (owb_pass_watch_begin) */
  GQueue *worklist;
  gboolean changed;        /* an editing helper changed the graph: types are inferred again after the pass */
  GStringChunk *strings;   /* the indexes' keys */
  GHashTable *names;       /* every name in use or handed out (node, value, initializer), built once */
  GHashTable *next_suffix; /* base -> the next suffix owb_pass_unique_name tries */
};

/* The graph's nodes, without those removed so far. Passes read the node list through this,
 * never through ctx->graph->nodes: removal only marks a node (so that removing many is linear),
 * and this call drops the marked ones in one sweep. */
OWB_API GPtrArray *owb_pass_nodes (OwbPassContext *ctx);

/* The opset of the default domain. */
OWB_API int owb_pass_opset (OwbPassContext *ctx);
/* The node that writes `name`, or NULL (graph input, initializer). */
OWB_API OwbNode *owb_pass_producer (OwbPassContext *ctx, const char *name);
/* Nodes reading `name` (borrowed; empty array if none). A node appears once per input it reads
 * the name through. */
OWB_API GPtrArray *owb_pass_consumers (OwbPassContext *ctx, const char *name);
/* Uses of a value: consumer inputs, plus 1 if it is a graph output, plus 1 if a subgraph reads it.
 * A value with one use can be fused away into its only reader. */
OWB_API guint owb_pass_n_uses (OwbPassContext *ctx, const char *name);
OWB_API gboolean owb_pass_is_graph_output (OwbPassContext *ctx, const char *name);
/* Whether a Transpose only swaps the last two axes of its input (of rank `rank`). */
OWB_API gboolean owb_pass_swaps_last_two (const OwbNode *transpose, int rank);
/* A constant value: an initializer that is not also an overridable graph input, or the output
 * of a Constant node with a tensor `value`. Borrowed; NULL otherwise. */
OWB_API const OwbTensor *owb_pass_get_constant (OwbPassContext *ctx, const char *name);

/* How the report names a node: its name, or its first output where it has none. */
OWB_API const char *owb_pass_label (const OwbNode *node);
/* Removes and frees the node (recorded in the report). */
OWB_API void owb_pass_remove_node (OwbPassContext *ctx, OwbNode *node);
/* Adds a node the pass created (taken), recording the names of the nodes it replaces. Call
 * before removing those nodes, or pass their names saved beforehand. A node that replaces others
 * takes the name of the main one (the Conv of Conv + BatchNormalization + Relu, the MatMul of
 * MatMul + Add), which keeps the model's names and scopes: that name is free again once the node
 * is removed, so it is set as it is, not made unique. A node without a name gets one from its op. */
OWB_API void owb_pass_add_node (OwbPassContext *ctx, OwbNode *node, const char *const *from, guint n_from);
/* Makes every reader of `old_name` (and the graph outputs) read `new_name` instead. When
 * old_name is a graph output, the producer of new_name is renamed to keep the output's name. */
OWB_API void owb_pass_replace_uses (OwbPassContext *ctx, const char *old_name, const char *new_name);
/* Makes input `index` of a node in the graph read `name`, keeping the indexes exact. */
OWB_API void owb_pass_set_input (OwbPassContext *ctx, OwbNode *node, int index, const char *name);

/* Worklists for rewrites that enable one another (push a Transpose down, cancel it against the
 * next): begin queues every node in order; from then on each node added, each reader of a value
 * given a new producer and each node whose input changed is queued again; next pops the next
 * queued node that is still in the graph, NULL when none is left. One worklist per context. */
OWB_API void owb_pass_watch_begin (OwbPassContext *ctx);
OWB_API void owb_pass_watch_push (OwbPassContext *ctx, OwbNode *node);
OWB_API OwbNode *owb_pass_watch_next (OwbPassContext *ctx);
OWB_API void owb_pass_watch_end (OwbPassContext *ctx);

/* Adds an initializer under a fresh name derived from `base`; returns the name (owned by the graph). */
OWB_API const char *owb_pass_add_initializer (OwbPassContext *ctx, const char *base, OwbTensor *tensor);
/* A value or node name not yet used in the graph. Caller frees. */
OWB_API char *owb_pass_unique_name (OwbPassContext *ctx, const char *base);
/* Records why a pattern around `node` was not rewritten. */
OWB_API void owb_pass_near_miss (OwbPassContext *ctx, const OwbNode *node, const char *format, ...) G_GNUC_PRINTF (3, 4);
/* Removes initializers no node, subgraph or graph output reads. Returns how many. */
OWB_API guint owb_pass_prune_initializers (OwbPassContext *ctx);
/* A fresh name in the scope of node name `like` ("/encoder/layer.0/attn/Softmax" gives
 * "/encoder/layer.0/attn/" + what), made unique. Caller frees. */
OWB_API char *owb_pass_scoped_name (OwbPassContext *ctx, const char *like, const char *what);
/* The constant a value is, looking through chains of Identity (up to 8), or NULL. */
OWB_API const OwbTensor *owb_pass_constant_through_identity (OwbPassContext *ctx, const char *name);
/* Whether constant s, broadcast against a Conv output of rank `rank` with m channels, gives one
 * value per channel without growing the output: [], [1], [m, 1, 1], [1, m, 1, 1]... Sets
 * *per_channel when s has m values along the channel axis. */
OWB_API gboolean owb_pass_is_channel_constant (const OwbTensor *s, int rank, int64_t m, gboolean *per_channel);
/* The inferred or declared type of a value, or NULL. */
OWB_API const OwbValueType *owb_pass_value_type (OwbPassContext *ctx, const char *name);

/* Whether node is `op_type` of the default ONNX domain ("" or "ai.onnx"); FALSE for NULL. */
OWB_API gboolean owb_pass_is_op (const OwbNode *node, const char *op_type);
/* Whether node is `op_type` of the engine's domain (ai.onnx.workbench); FALSE for NULL. */
OWB_API gboolean owb_pass_is_our_op (const OwbNode *node, const char *op_type);
/* Sets a fused activation's string attribute `attr` to `kind` and, when there are any, its float
 * parameters under `params_attr` ("activation" and "activation_params" on our fused ops). */
OWB_API void owb_pass_set_activation (OwbNode *node, const char *attr, const char *params_attr, const char *kind,
                                       const float *params, int n_params);

/* Runs `passes` in order over the model's main graph, as owb_model_optimize runs the engine's own
 * (types inferred before and after each pass that changed the graph, one report entry per pass).
 * options->level and disabled_passes are not consulted; options may be NULL. */
OWB_API gboolean owb_model_run_passes (OwbModel *model, const OwbPass *const *passes, guint n_passes,
                                       const OwbOptimizeOptions *options, OwbOptimizeReport **report, GError **error);

G_END_DECLS
