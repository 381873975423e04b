/* owb-op.h: operator schemas: which ops exist, for which opsets, and their shape and type
 * inference. One table row per op version; kernels live with the providers. */
#pragma once

#include <owb/owb-api.h>
#include <owb/owb-graph.h>

G_BEGIN_DECLS

/* The domain of the engine's own ops (fused kernels, channels-last variants): saved models that
 * use them say so through this opset import. */
#define OWB_DOMAIN "ai.onnx.workbench"

/* Data propagation (what ONNX's shape inference calls data_prop): at load, what is known of the
 * value of a small integer (or boolean) tensor computed from shapes (Shape -> Gather -> Concat ->
 * Reshape), element by element: a known value, a named dimension ("batch"), or unknown. Only values
 * of rank 0 or 1 with at most OWB_INFER_DATA_MAX elements are carried. */
#define OWB_INFER_DATA_MAX 64

typedef struct {
  int64_t value;     /* when known */
  const char *param; /* when not known: the named dim it equals (interned), or NULL */
  gboolean known;
} OwbInferElement;

typedef struct {
  int rank; /* 0 or 1 */
  int n;    /* elements */
  OwbInferElement elements[OWB_INFER_DATA_MAX];
} OwbInferData;

/* What inference sees of one node. Used twice: symbolically at load (shapes may hold named or
 * unknown dims; input_values only for constants) and concretely at run time (every shape known,
 * every input value present), so that one function decides output shapes in both cases. */
typedef struct {
  const OwbNode *node;
  int opset;                        /* the opset of the node's domain */
  int n_inputs;                     /* node->n_inputs */
  const OwbValueType *const *inputs; /* NULL for a missing optional input */
  const OwbTensor *const *input_values; /* known values (constants, or all inputs at run time); entries may be NULL */
  int n_outputs;
  OwbValueType *outputs;            /* to fill; start as unknown */
  const OwbGraph *graph;            /* graph of the node (subgraph inference, outer scope) */
  gboolean values_read;             /* set when inference looked at an input's value: its outputs may
                                     * then change with the values, not only with the input types */
  guint64 values_read_inputs;       /* with values_read: bit i for input i's value (every bit when
                                     * the input is past the 64th or not one input), so that a
                                     * session can keep the outputs of a step whose values read
                                     * are all constants (owb_infer_note_value_read) */
  /* At load, what data propagation knows of each input's value where input_values does not hold
   * it (NULL, or entries NULL): read through owb_infer_get_data. */
  const OwbInferData *const *input_data;
} OwbInferContext;

typedef gboolean (*OwbInferFunc) (OwbInferContext *ctx, GError **error);

/* Records that inference looks at input i's value (i < 0: at every input's). Inference that reads
 * ctx->input_values itself calls this first; the owb_infer_get_* readers do. */
static inline void
owb_infer_note_value_read (OwbInferContext *ctx, int i)
{
  ctx->values_read = TRUE;
  ctx->values_read_inputs |= i >= 0 && i < 64 ? G_GUINT64_CONSTANT (1) << i : ~G_GUINT64_CONSTANT (0);
}

typedef struct {
  const char *op_type;
  const char *domain;   /* "" for ai.onnx, "ai.onnx.ml", "com.microsoft"... */
  int since;            /* first opset version this row describes */
  int min_inputs, max_inputs;   /* max -1: variadic */
  int min_outputs, max_outputs;
  OwbInferFunc infer;   /* NULL: outputs unknown (allowed only for ops whose kernels allocate outputs) */
} OwbOpSchema;

/* The schema row for an op at an opset (largest since <= opset); NULL if the op is unknown or
 * not defined at that opset. `domain` NULL or "" or "ai.onnx" mean the default domain. */
OWB_API const OwbOpSchema *owb_op_schema_lookup (const char *domain, const char *op_type, int opset);
/* Whether any version of the op exists (to tell "unknown op" from "not in this opset"). */
OWB_API gboolean owb_op_schema_exists (const char *domain, const char *op_type);
/* The name of input / output `index` of the op, as its spec gives it ("X", "W", "B" for Conv;
 * the variadic parameter's name for every index from it on, "inputs" for Concat), for display
 * beside a value; NULL when the op or the index has none. Borrowed, static. */
OWB_API const char *owb_op_schema_get_input_name (const OwbOpSchema *schema, int index);
OWB_API const char *owb_op_schema_get_output_name (const OwbOpSchema *schema, int index);
/* Whether input / output `index` is one of the variadic parameter's (Concat's, Sum's, If's): they all share one
 * name, so a display that tells them apart uses the values' own names. */
OWB_API gboolean owb_op_schema_is_input_variadic (const OwbOpSchema *schema, int index);
OWB_API gboolean owb_op_schema_is_output_variadic (const OwbOpSchema *schema, int index);
/* All rows, for listings (owb inspect, docs). */
OWB_API const OwbOpSchema *const *owb_op_schema_list (guint *n);

/* Slice's rule for one axis, which shape inference and every provider's kernel share: start and
 * end (negative ones count from the end) clamped to a dim of size `dim`; returns how many elements
 * `step` selects and sets *first to the first index. */
OWB_API int64_t owb_op_slice_count (int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first);

/* "tensor", "sequence", "optional", "map"... */
OWB_API const char *owb_value_kind_name (OwbValueKind kind);
/* Whether input `input` of the op may be a value of that kind (an unknown kind always may): the
 * sequence and optional ops and Identity/Loop say which kinds they take, all other ops tensors. */
OWB_API gboolean owb_op_input_accepts_kind (const char *domain, const char *op_type, int input, OwbValueKind kind);
/* Whether input `input` of the op carries a shape, indices, axes or a count (Reshape's shape,
 * Slice's starts, TopK's k) that decides output shapes: such inputs are always read on the host,
 * whichever provider runs the op (owb-provider.h). */
OWB_API gboolean owb_op_input_is_host_data (const char *domain, const char *op_type, int input);
/* FALSE for NULL and for the unknown type (a tensor of undefined element type and rank, which
 * may stand for any kind until the value is there). */
OWB_API gboolean owb_value_type_kind_is_known (const OwbValueType *type);
/* An OWB_ERROR_TYPE error naming the node and input for the first input of a kind the op does
 * not take. Used by inference and by kernel resolution. */
OWB_API gboolean owb_op_check_input_kinds (const OwbNode *node, int n_inputs, const OwbValueType *const *inputs,
                                           GError **error);

/* Runs inference for one node. Checks input/output counts and input kinds first. */
OWB_API gboolean owb_op_infer (const OwbOpSchema *schema, OwbInferContext *ctx, GError **error);

/* Helpers for inference functions. Each sets a SHAPE/TYPE error naming the node on failure. */
OWB_API gboolean owb_infer_broadcast (OwbInferContext *ctx, int n, const OwbValueType *const *types,
                                      OwbValueType *out, GError **error);
/* Output i = input j (type and shape). */
OWB_API void owb_infer_copy (OwbInferContext *ctx, int out, int in);
/* Reads an input's known value as int64s (INT32/INT64 tensors) into a new array the caller frees with
 * g_free; FALSE (and nothing allocated) if the value is not known. */
OWB_API gboolean owb_infer_get_ints (OwbInferContext *ctx, int input, int64_t **values, int64_t *n);
/* What data propagation knows of an input's value (partly named or unknown elements), or NULL. A
 * fully known value is in input_values too, where owb_infer_get_ints reads it. */
OWB_API const OwbInferData *owb_infer_get_data (OwbInferContext *ctx, int input);
/* Normalises a possibly negative axis into [0, rank); error naming the node if out of range. */
OWB_API gboolean owb_infer_axis (OwbInferContext *ctx, int64_t axis, int rank, int *out, GError **error);
OWB_API void owb_infer_set_error (OwbInferContext *ctx, GError **error, int code, const char *format, ...) G_GNUC_PRINTF (4, 5);

G_END_DECLS
