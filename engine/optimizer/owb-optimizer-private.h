/* owb-optimizer-private.h: what a pass is, and the graph-editing helpers passes use. Every
 * edit goes through these helpers so the report (removed, created, provenance) stays complete. */
#pragma once

#include <owb/owb-optimizer.h>
#include <owb/owb-error.h>

typedef struct _OwbPassContext OwbPassContext;

typedef struct {
  const char *name;
  OwbOptimizeLevel level;
  const char *description;
  /* Rewrites ctx->graph. Returning FALSE with an error stops the optimization; a pattern that
   * does not apply is not an error (record a near miss instead where it helps the user). */
  gboolean (*run) (OwbPassContext *ctx, GError **error);
} OwbPass;

struct _OwbPassContext {
  OwbModel *model;
  OwbGraph *graph;
  const OwbOptimizeOptions *options;
  OwbPassReport *report;
  /*< private >*/
  GHashTable *producer;  /* value name -> OwbNode * */
  GHashTable *consumers; /* value name -> GPtrArray of OwbNode * (a node once per input slot) */
  GHashTable *outer_reads; /* names read by subgraphs of nodes (counted as extra uses) */
  gboolean maps_valid;     /* adding and removing nodes keeps the maps; other edits rebuild them */
  GHashTable *names;       /* every name in use or handed out (node, value, initializer), built once */
  GHashTable *next_suffix; /* base -> the next suffix _owb_pass_unique_name tries */
};

/* Frees what a pass built in its context (the maps and the name set). */
void _owb_pass_context_clear (OwbPassContext *ctx);

/* The opset of the default domain. */
int _owb_pass_opset (OwbPassContext *ctx);
/* The node that writes `name`, or NULL (graph input, initializer). */
OwbNode *_owb_pass_producer (OwbPassContext *ctx, const char *name);
/* Nodes reading `name` (borrowed; empty array if none). A node appears once per input it reads
 * the name through. */
GPtrArray *_owb_pass_consumers (OwbPassContext *ctx, const char *name);
/* Uses of a value: consumer inputs, plus 1 if it is a graph output, plus 1 if a subgraph reads it.
 * A value with one use can be fused away into its only reader. */
guint _owb_pass_n_uses (OwbPassContext *ctx, const char *name);
gboolean _owb_pass_is_graph_output (OwbPassContext *ctx, const char *name);
/* Whether a Transpose only swaps the last two axes of its input (of rank `rank`). */
gboolean _owb_pass_swaps_last_two (const OwbNode *transpose, int rank);
/* A constant value: an initializer that is not also an overridable graph input, or the output
 * of a Constant node with a tensor `value`. Borrowed; NULL otherwise. */
const OwbTensor *_owb_pass_get_constant (OwbPassContext *ctx, const char *name);

/* Removes and frees the node (recorded in the report). */
void _owb_pass_remove_node (OwbPassContext *ctx, OwbNode *node);
/* Adds a node the pass created (taken), recording the names of the nodes it replaces. Call
 * before removing those nodes, or pass their names saved beforehand. */
void _owb_pass_add_node (OwbPassContext *ctx, OwbNode *node, const char *const *from, guint n_from);
/* Makes every reader of `old_name` (and the graph outputs) read `new_name` instead. When
 * old_name is a graph output, the producer of new_name is renamed to keep the output's name. */
void _owb_pass_replace_uses (OwbPassContext *ctx, const char *old_name, const char *new_name);
/* Adds an initializer under a fresh name derived from `base`; returns the name (owned by the graph). */
const char *_owb_pass_add_initializer (OwbPassContext *ctx, const char *base, OwbTensor *tensor);
/* A value or node name not yet used in the graph. Caller frees. */
char *_owb_pass_unique_name (OwbPassContext *ctx, const char *base);
/* Records why a pattern around `node` was not rewritten. */
void _owb_pass_near_miss (OwbPassContext *ctx, const OwbNode *node, const char *format, ...) G_GNUC_PRINTF (3, 4);
/* Removes initializers no node, subgraph or graph output reads. Returns how many. */
guint _owb_pass_prune_initializers (OwbPassContext *ctx);
/* The inferred or declared type of a value, or NULL. */
const OwbValueType *_owb_pass_value_type (OwbPassContext *ctx, const char *name);

/* The passes, in the order they run. */
extern const OwbPass *const _owb_passes[];
extern const guint _owb_n_passes;

/* Whether node is `op_type` of the default ONNX domain ("" or "ai.onnx"); FALSE for NULL. */
gboolean _owb_pass_is_op (const OwbNode *node, const char *op_type);
/* Whether node is `op_type` of the engine's domain (ai.onnx.workbench); FALSE for NULL. */
gboolean _owb_pass_is_our_op (const OwbNode *node, const char *op_type);
/* Sets a fused activation's string attribute `attr` to `kind` and, when there are any, its float
 * parameters under `params_attr` ("activation" and "activation_params" on our fused ops). */
void _owb_pass_set_activation (OwbNode *node, const char *attr, const char *params_attr, const char *kind,
                               const float *params, int n_params);
