/* owb-graph.h: the engine's IR: a model owns a graph; a graph owns its nodes, value infos
 * and initializers; subgraphs (If/Loop/Scan bodies) are graphs owned by attributes. */
#pragma once

#include <owb/owb-api.h>
#include <owb/owb-tensor.h>

G_BEGIN_DECLS

typedef struct _OwbGraph OwbGraph;
typedef struct _OwbNode OwbNode;
typedef struct _OwbModel OwbModel;

typedef enum {
  OWB_ATTR_UNDEFINED = 0,
  OWB_ATTR_FLOAT = 1,
  OWB_ATTR_INT = 2,
  OWB_ATTR_STRING = 3,
  OWB_ATTR_TENSOR = 4,
  OWB_ATTR_GRAPH = 5,
  OWB_ATTR_FLOATS = 6,
  OWB_ATTR_INTS = 7,
  OWB_ATTR_STRINGS = 8,
  OWB_ATTR_TENSORS = 9,
  OWB_ATTR_GRAPHS = 10,
  OWB_ATTR_SPARSE_TENSOR = 11,
  OWB_ATTR_SPARSE_TENSORS = 12,
  OWB_ATTR_TYPE_PROTO = 13,
  OWB_ATTR_TYPE_PROTOS = 14,
} OwbAttributeType;

/* One node attribute (numbered as ONNX's AttributeProto.AttributeType). Only the fields of its
 * type are set. Strings are byte strings: `s` is NUL-terminated and s_len gives the length. */
typedef struct {
  char *name;
  OwbAttributeType type;
  char *ref_attr_name; /* inside function bodies only */
  char *doc_string;
  float f;
  int64_t i;
  char *s;
  gsize s_len;
  OwbTensor *t;
  OwbGraph *g;
  int n;            /* element count of the list kinds below */
  float *floats;
  int64_t *ints;
  char **strings;   /* NULL-terminated, n entries */
  OwbTensor **tensors;
  OwbGraph **graphs;
  OwbValueType tp;  /* TYPE_PROTO */
} OwbAttribute;

/* A typed value name on the graph: inputs, outputs and value_info. */
typedef struct {
  char *name;
  char *doc_string;
  OwbValueType type;
  gboolean has_type;
} OwbValueInfo;

/* Random values (owb_tensor_new_random) for a graph input, made the same way everywhere (`owb run
 * --random`, the Profile page): its declared shape, a symbolic dim from dims (param name -> gint64
 * *; NULL: none) or 1. OWB_ERROR_INVALID_ARGUMENT naming the input when it has no declared type,
 * is not a tensor or has no declared rank. budget (NULL: no bound) holds the bytes still allowed;
 * the tensor's are taken from it, or it fails with OWB_ERROR_NOMEM before allocating. */
OWB_API OwbTensor *owb_tensor_new_random_for_input (const OwbValueInfo *input, GHashTable *dims, GRand *rand,
                                                    gsize *budget, GError **error);

/* Where a provider declined a node, and why. */
typedef struct {
  char *provider;
  char *reason;
} OwbDecline;

struct _OwbNode {
  char *name;
  char *op_type;
  char *domain;     /* "" for the default ONNX domain */
  char *doc_string;
  int n_inputs;
  char **inputs;    /* "" marks a missing optional input */
  int n_outputs;
  char **outputs;   /* "" marks an unused optional output */
  int n_attributes;
  OwbAttribute *attributes;
  /* Set by validation: the opset of the node's domain in the model. */
  int opset;
  /* Set by partitioning (plain data, for the UI and the profiler): the provider that runs the
   * node and the reasons of the providers that declined it, in priority order. */
  char *provider;
  GPtrArray *declines; /* of OwbDecline * */
  OwbGraph *graph;     /* the graph that owns this node */
};

struct _OwbGraph {
  char *name;
  char *doc_string;
  GPtrArray *nodes;        /* of OwbNode *, owned, in file order until sorted */
  GPtrArray *inputs;       /* of OwbValueInfo *, owned (may include initializer names, IR < 4) */
  GPtrArray *outputs;      /* of OwbValueInfo *, owned */
  GPtrArray *value_infos;  /* of OwbValueInfo *, owned: value_info of the file, then inferred ones */
  GPtrArray *initializers; /* of OwbTensor *, owned; names in initializer_names, same order */
  GPtrArray *initializer_names; /* of char *, owned */
  GHashTable *initializer_index; /* name -> index+1 in initializers (GINT_TO_POINTER) */
  OwbGraph *parent;        /* outer scope for subgraphs; NULL for the main graph */
  OwbModel *model;         /* the model this graph belongs to */
};

typedef struct {
  char *domain;   /* "" for ai.onnx */
  int64_t version;
} OwbOpsetImport;

typedef struct {
  char *key;
  char *value;
} OwbStringPair;

struct _OwbModel {
  int ref_count;
  int64_t ir_version;
  char *producer_name;
  char *producer_version;
  char *domain;
  int64_t model_version;
  char *doc_string;
  GArray *opset_imports;   /* of OwbOpsetImport */
  GArray *metadata;        /* of OwbStringPair */
  OwbGraph *graph;
  char *base_dir;          /* folder the model was loaded from (for external data); may be NULL */
  GPtrArray *mappings;     /* private: GMappedFile * kept alive for external data */
};

/* Models */
OWB_API OwbModel *owb_model_new (void);
OWB_API OwbModel *owb_model_ref (OwbModel *model);
OWB_API void owb_model_unref (OwbModel *model);
/* A deep copy of the IR (graph, nodes, value infos); initializer tensors are shared by reference. */
OWB_API OwbModel *owb_model_dup (const OwbModel *model);
/* The opset imported for a domain ("" or "ai.onnx" for the default one); -1 if none. */
OWB_API int64_t owb_model_get_opset (const OwbModel *model, const char *domain);
OWB_API void owb_model_set_opset (OwbModel *model, const char *domain, int64_t version);

/* Graphs */
OWB_API OwbGraph *owb_graph_new (const char *name);
OWB_API void owb_graph_free (OwbGraph *graph);
OWB_API OwbGraph *owb_graph_dup (const OwbGraph *graph);
/* Takes the node. */
OWB_API void owb_graph_add_node (OwbGraph *graph, OwbNode *node);
/* Takes the tensor; replaces an initializer of the same name. */
OWB_API void owb_graph_add_initializer (OwbGraph *graph, const char *name, OwbTensor *tensor);
/* Borrowed; NULL if name is not an initializer of this graph (outer scopes not searched). */
OWB_API OwbTensor *owb_graph_get_initializer (const OwbGraph *graph, const char *name);
OWB_API gboolean owb_graph_remove_initializer (OwbGraph *graph, const char *name);
OWB_API OwbValueInfo *owb_value_info_new (const char *name, const OwbValueType *type);
OWB_API void owb_value_info_free (OwbValueInfo *info);
/* Searches inputs, outputs and value_infos; NULL if absent. */
OWB_API OwbValueInfo *owb_graph_find_value_info (const OwbGraph *graph, const char *name);
/* The first node of the graph (not its subgraphs) named `name`, borrowed; NULL if none, or if
 * graph or name is NULL. A linear search: for a user's pick, not for a pass. */
OWB_API OwbNode *owb_graph_find_node (const OwbGraph *graph, const char *name);
/* The graph inputs that are not initializers (what a caller must feed), borrowed. */
OWB_API GPtrArray *owb_graph_dup_feed_inputs (const OwbGraph *graph);
/* An op type and how many nodes have it (owb_graph_count_ops). */
typedef struct {
  char *op;    /* op_type, or "DOMAIN.op_type" outside the default domain */
  guint count;
} OwbOpCount;
/* The op types of the graph and of the If/Loop/Scan bodies below it, each with its count, most
 * used first (equal counts by name): what `owb inspect` and the inspector list. *n_nested (may be
 * NULL) gets how many of the nodes are in bodies. An array of OwbOpCount that frees its names:
 * g_array_unref. */
OWB_API GArray *owb_graph_count_ops (const OwbGraph *graph, guint *n_nested);

/* Nodes */
OWB_API OwbNode *owb_node_new (const char *op_type, const char *domain, const char *name);
OWB_API void owb_node_free (OwbNode *node);
OWB_API OwbNode *owb_node_dup (const OwbNode *node);
OWB_API void owb_node_add_input (OwbNode *node, const char *name);
/* Makes input i `name`, adding empty (absent optional) inputs up to i where the node has fewer.
 * For a node not in a graph yet: in a pass, owb_pass_set_input keeps the indexes right. */
OWB_API void owb_node_set_input (OwbNode *node, int i, const char *name);
OWB_API void owb_node_add_output (OwbNode *node, const char *name);
/* Returns the attribute added (owned by the node), for the caller to fill in. */
OWB_API OwbAttribute *owb_node_add_attribute (OwbNode *node, const char *name, OwbAttributeType type);
OWB_API const OwbAttribute *owb_node_get_attribute (const OwbNode *node, const char *name);
/* Typed getters with defaults; a present attribute of another type also returns the default. */
OWB_API int64_t owb_node_get_int (const OwbNode *node, const char *name, int64_t default_value);
/* An int attribute (or the default) checked against [min, max] before it is used as a count,
 * an index or a narrower type: FALSE with an OWB_ERROR_INVALID_MODEL error naming the node and
 * the attribute otherwise (2^32 must not wrap to 0). */
OWB_API gboolean owb_node_get_int_in_range (const OwbNode *node, const char *name, int64_t default_value, int64_t min,
                                            int64_t max, int64_t *value, GError **error);
/* The same into an int. */
OWB_API gboolean owb_node_get_int32 (const OwbNode *node, const char *name, int default_value, int min, int max, int *value,
                                     GError **error);
OWB_API float owb_node_get_float (const OwbNode *node, const char *name, float default_value);
OWB_API const char *owb_node_get_string (const OwbNode *node, const char *name, const char *default_value);
/* Borrowed array and its length in *n; NULL (and *n = 0) when absent. */
OWB_API const int64_t *owb_node_get_ints (const OwbNode *node, const char *name, int *n);
OWB_API const float *owb_node_get_floats (const OwbNode *node, const char *name, int *n);
/* A graph attribute (If's branches, Loop's body), borrowed; NULL when absent or of another type. */
OWB_API const OwbGraph *owb_node_get_graph (const OwbNode *node, const char *name);
/* The input name i, or NULL if i is past the end or the input is "" (missing optional). */
OWB_API const char *owb_node_get_input (const OwbNode *node, int i);
OWB_API const char *owb_node_get_output (const OwbNode *node, int i);
/* "Conv 'conv1' (opset 13)"-style text naming the node in error messages; caller frees. */
OWB_API char *owb_node_describe (const OwbNode *node);
OWB_API void owb_node_clear_claims (OwbNode *node);
OWB_API void owb_node_add_decline (OwbNode *node, const char *provider, const char *reason);

OWB_API void owb_attribute_clear (OwbAttribute *attr);
OWB_API void owb_attribute_copy (OwbAttribute *dest, const OwbAttribute *src);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbModel, owb_model_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbGraph, owb_graph_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbNode, owb_node_free)

G_END_DECLS
