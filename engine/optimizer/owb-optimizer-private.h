/* owb-optimizer-private.h: what only the optimizer's own runner sees: the context's lifetime and
 * the engine's list of passes. The pass contract itself is public, in owb/owb-pass.h. */
#pragma once

#include <owb/owb-pass.h>

/* One context serves every pass of an optimization: its indexes stay exact across passes (all
 * edits go through the helpers; inference between passes only reorders nodes and adds types).
 * end_pass frees the nodes the pass removed and drops what inference changes (the value-info
 * index); clear frees everything. */
void _owb_pass_context_end_pass (OwbPassContext *ctx);
void _owb_pass_context_clear (OwbPassContext *ctx);

/* The passes, in the order they run. */
extern const OwbPass *const _owb_passes[];
extern const guint _owb_n_passes;

/* Runs a node whose inputs are all constants alone, on the options' providers (its own kernel, as
 * a session would run it); on success fills values[o] for every non-empty output (new
 * references). Constant folding's evaluator, shared with the passes that fold one op kind. */
gboolean _owb_pass_evaluate_node (OwbPassContext *ctx, const OwbNode *node, OwbTensor **values, GError **error);
/* A session of `model` (a small model a pass made to evaluate constants) on the options'
 * providers that run on host memory, in their order (the optimizer computes on the CPU, never on a
 * device), one thread, not optimized; NULL with an error. */
OwbSession *_owb_pass_new_host_session (OwbPassContext *ctx, OwbModel *model, GError **error);

/* The QDQ fusions' shared matching (owb-pass-qdq.c). One DequantizeLinear's operands: */
typedef struct {
  OwbNode *node;
  const char *q, *scale, *zp;      /* zp NULL when absent */
  OwbDataType qtype;
  const OwbTensor *scale_tensor;   /* the constant scale (borrowed) */
  int64_t nparams;                 /* values of the scale */
} OwbPassDq;

gboolean _owb_pass_is_8bit (OwbDataType t);
/* Whether `name` is written by an unblocked DequantizeLinear of int8/uint8 with a constant float32
 * scale and a zero point of the same type and count (or none); fills *dq. FALSE with *why NULL
 * when `name` is no DequantizeLinear at all (no near miss to record), with *why set when it is one
 * that does not qualify. Per-tensor and weight rules are the caller's. */
gboolean _owb_pass_match_dq (OwbPassContext *ctx, const char *name, OwbPassDq *dq, const char **why);
/* The DequantizeLinear writing `name` (_owb_pass_match_dq) that a fused integer op reads: of an
 * activation per tensor (weight FALSE), or of a constant weight of rank `rank` per tensor or along
 * its `channel_axis` (weight TRUE). not_weight and not_channels are the near-miss reasons for a
 * weight of another rank and for another axis. NULL *why when `name` is no DequantizeLinear. */
gboolean _owb_pass_match_dq_input (OwbPassContext *ctx, const char *name, gboolean weight, int rank, int channel_axis,
                                   const char *not_weight, const char *not_channels, OwbPassDq *dq, const char **why);
/* A QuantizeLinear's operands, where it is per tensor to 8 bits with constant float32 parameters: */
typedef struct {
  const char *scale, *zp;          /* zp NULL when absent */
  OwbDataType qtype;
  float scale_value;
  int32_t zero_point;
} OwbPassQ;

/* Whether QuantizeLinear `q` is per tensor to 8 bits with constant float32 parameters; fills *yq. */
gboolean _owb_pass_match_q (OwbPassContext *ctx, const OwbNode *q, OwbPassQ *yq);
/* _owb_pass_match_q for the QuantizeLinear that ends the fusion of `anchor`; when it does not
 * match, the near miss on anchor says why. */
gboolean _owb_pass_match_final_q (OwbPassContext *ctx, const OwbNode *anchor, const OwbNode *q, OwbPassQ *yq);
/* The eight inputs of the QLinearConv or QLinearMatMul that fuses x's and w's DequantizeLinear and
 * the QuantizeLinear y (in ONNX's order: x, its scale and zero point, w..., y...). A zero point
 * that the model left out is added as a zero initializer named after `like` (the integer ops need
 * all three). */
void _owb_pass_qlinear_inputs (OwbPassContext *ctx, const char *like, const OwbPassDq *x, const OwbPassDq *w,
                               const OwbPassQ *y, const char *inputs[8]);
/* The end of every QDQ fusion: adds the `added` nodes, in order, in place of `chain` (the op, its
 * activation if any and its QuantizeLinear, in graph order) and of the `dropped` DequantizeLinears
 * that only the op read; NULL entries of chain and dropped are skipped. Each added node is made from
 * the dropped nodes then the chain; then the chain is removed from its end and the dropped nodes
 * after it. At most 8 nodes go. */
void _owb_pass_replace_qdq (OwbPassContext *ctx, OwbNode *const *added, guint n_added, OwbNode *const *chain,
                            guint n_chain, OwbNode *const *dropped, guint n_dropped);

/* The candidate loop of a fusion pass (owb-pass-util.c): gathers every node that is one of `ops`
 * (ONNX domain) or `our_ops` (ai.onnx.workbench), NULL-terminated lists either of which may be
 * NULL, before any edit, then calls try_fuse on each in graph order. try_fuse may remove the node
 * at hand, never another candidate. Returns how many fused. */
typedef gboolean (*OwbPassTryFuse) (OwbPassContext *ctx, OwbNode *node);
guint _owb_pass_fuse_each (OwbPassContext *ctx, const char *const *ops, const char *const *our_ops,
                           OwbPassTryFuse try_fuse);
/* _owb_pass_fuse_each over the ONNX-domain `ops`, then, if any fused, the pruning of the
 * initializers the folded constants leave unread: the whole run of a constant-folding fusion. */
void _owb_pass_fuse_each_and_prune (OwbPassContext *ctx, const char *const *ops, OwbPassTryFuse try_fuse);
/* The same over every Mul and Div: the scale folds (into a Conv's weights, a MatMul's constant or
 * a Gemm's alpha). */
void _owb_pass_fuse_each_scale_and_prune (OwbPassContext *ctx, OwbPassTryFuse try_fuse);
/* The candidate loop of a fusion that may remove nodes other candidates are (owb-pass-util.c):
 * takes the first output's name of every node is_anchor accepts, then calls fuse on the node that
 * writes each name at its turn, if is_anchor still accepts it, so a candidate a fusion removed or
 * replaced is never touched through a stale pointer. */
typedef gboolean (*OwbPassIsAnchor) (const OwbNode *node);
typedef void (*OwbPassFuseAnchor) (OwbPassContext *ctx, OwbNode *node);
void _owb_pass_fuse_each_anchor (OwbPassContext *ctx, OwbPassIsAnchor is_anchor, OwbPassFuseAnchor fuse);
/* Adds `fused` (taken) in place of the two nodes it replaces: its provenance names `first` and
 * `second` in that order, and they are removed in that order. */
void _owb_pass_replace_pair (OwbPassContext *ctx, OwbNode *fused, OwbNode *first, OwbNode *second);

/* A copy of node (name, inputs, outputs, attributes) without the providers' claims, as op_type
 * of domain: how a pass turns a node into the fused or laid-out op that replaces it. */
OwbNode *_owb_pass_dup_as (const OwbNode *node, const char *op_type, const char *domain);

/* The Conv folds (fuse_conv_bn, fuse_conv_mul, fuse_conv_add, owb-pass-util.c). */
/* W with each of its m output channels (rows of dim 0) multiplied by factor[c], in W's type. */
OwbTensor *_owb_pass_scale_conv_weight (const OwbTensor *w, const double *factor, int64_t m);
/* Adds a copy of `conv` in place of conv and `second` (the node folded into it, whose output it
 * now writes), with weight nw and bias nb where they are not NULL (taken; added as initializers
 * named after the Conv's own). */
void _owb_pass_replace_conv (OwbPassContext *ctx, OwbNode *conv, OwbNode *second, OwbTensor *nw, OwbTensor *nb);

/* Predicates several passes share (owb-pass-util.c). */
/* float32, float64 or float16: the types whose constants the fusions fold (in double, stored back
 * in their own type) and whose ops the fused float ops take. */
gboolean _owb_pass_is_float_type (OwbDataType t);
/* The rank of a value: the constant's, or its inferred tensor type's; -1 when unknown. */
int _owb_pass_rank_of (OwbPassContext *ctx, const char *name);
/* The tensor type of a value: its inferred or declared type, else (an initializer has no value
 * info) the type of the constant it is, looking through Identity. FALSE when it is unknown or not
 * a tensor. */
gboolean _owb_pass_tensor_type (OwbPassContext *ctx, const char *name, OwbValueType *out);
/* The node that reads `name` when that is its only use (not a graph output, nor read by a
 * subgraph), else NULL: what a fusion may take in. */
OwbNode *_owb_pass_only_reader (OwbPassContext *ctx, const char *name);
/* The other input of a two-input node that reads `name` as exactly one of them, else NULL. */
const char *_owb_pass_other_input (const OwbNode *node, const char *name);
/* The value of a constant scalar (one element of a numeric type), looking through Identity. */
gboolean _owb_pass_scalar (OwbPassContext *ctx, const char *name, double *value);
/* Clip's bound input i (1: min, 2: max) from opset 11 on: `def` when absent, else the value of a
 * constant of one element; FALSE when it is not constant. */
gboolean _owb_pass_clip_bound (OwbPassContext *ctx, const OwbNode *clip, int i, double def, double *value);
/* A QuantizeLinear or DequantizeLinear with one scale and zero point: constants of one element
 * (the zero point may be absent), no blocks. */
gboolean _owb_pass_is_per_tensor_qdq (OwbPassContext *ctx, const OwbNode *node);
/* Whether `name` is read by a subgraph too: subgraphs refer to values by name, which replacing
 * uses cannot redirect, so such a value must keep its name. */
gboolean _owb_pass_is_outer_read (OwbPassContext *ctx, const char *name);

/* The nodes a pattern matched, each once, in the order first added, for a pass to remove together.
 * Bounded: a node past the capacity is not stored and sets `full`, and a pass abandons a full
 * match (it never removes part of a pattern). Plain struct: copy it to try a longer match. */
#define OWB_PASS_NODE_SET_SIZE 48
typedef struct {
  OwbNode *nodes[OWB_PASS_NODE_SET_SIZE];
  int n;
  gboolean full;
} OwbPassNodeSet;
/* Adds node unless it is in set already. */
void _owb_pass_node_set_add (OwbPassNodeSet *set, OwbNode *node);
gboolean _owb_pass_node_set_contains (const OwbPassNodeSet *set, const OwbNode *node);
/* name is one of the graph's inputs (the context's index of them). */
gboolean _owb_pass_is_graph_input (OwbPassContext *ctx, const char *name);
/* Random* ops, Bernoulli, Multinomial: two runs differ, so they are neither folded nor merged. */
gboolean _owb_pass_is_nondeterministic (const OwbNode *node);
/* Same kind, type, shape and contents, bit for bit (strings compared as strings); NULL equals only
 * itself. */
gboolean _owb_pass_tensors_equal (const OwbTensor *a, const OwbTensor *b);
/* Two dims that are known and equal, or the same named dimension. */
gboolean _owb_pass_dim_eq (OwbDim a, OwbDim b);
/* Two types of known, equal rank whose dims are _owb_pass_dim_eq; FALSE when either is NULL. */
gboolean _owb_pass_same_dims (const OwbValueType *a, const OwbValueType *b);
