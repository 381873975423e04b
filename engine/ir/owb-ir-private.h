/* owb-ir-private.h: IR helpers shared inside the engine. */
#pragma once

#include <owb/owb-graph.h>

#include <stdarg.h>
#include <string.h>

/* The default ONNX domain: absent, "" or "ai.onnx" (the graph stores it as ""). */
static inline gboolean
_owb_domain_is_default (const char *domain)
{
  return domain == NULL || domain[0] == '\0' || strcmp (domain, "ai.onnx") == 0;
}

/* Whether the node carries a subgraph (If, Loop, Scan...): a graph or graphs attribute. */
static inline gboolean
_owb_node_has_subgraph (const OwbNode *node)
{
  for (int a = 0; a < node->n_attributes; a++)
    if (node->attributes[a].type == OWB_ATTR_GRAPH || node->attributes[a].type == OWB_ATTR_GRAPHS)
      return TRUE;
  return FALSE;
}

/* Sets *error to "<node described>: <message>" (owb_node_describe): the one form of the errors that
 * inference (owb_infer_set_error) and kernels (owb_kernel_set_error) report about a node. */
void _owb_node_set_error_valist (const OwbNode *node, GError **error, int code, const char *format, va_list args)
  G_GNUC_PRINTF (4, 0);

/* Adds to `refs` (a set of const char *) every name that `graph` or its nested subgraphs read
 * without defining: the values they take from outer scopes. */
void _owb_graph_collect_outer_refs (const OwbGraph *graph, GHashTable *refs);

/* Removes, in one sweep, every initializer for which `unused (name, user_data)` is TRUE (the
 * predicate sees the graph before any removal). Returns how many went. Removing them one by one
 * re-indexes the rest each time. */
guint _owb_graph_remove_initializers_if (OwbGraph *graph, gboolean (*unused) (const char *name, gpointer user_data),
                                         gpointer user_data);

#include <owb/owb-op.h>

/* Data propagation (owb-infer-data.c). A small integer or boolean tensor's value as data (rank <= 1,
 * at most OWB_INFER_DATA_MAX elements); FALSE for any other value. */
gboolean _owb_infer_data_from_tensor (const OwbTensor *t, OwbInferData *out);
gboolean _owb_infer_data_all_known (const OwbInferData *d);
/* The value of node's single output as far as its inputs' data and types tell it (out_type is the
 * output's inferred type); FALSE when the op is not one that carries data or nothing is known.
 * Entries of `in` are NULL where nothing is known of an input. */
gboolean _owb_infer_propagate (const OwbNode *node, int opset, const OwbValueType *const *in_types,
                               const OwbInferData *const *in, const OwbValueType *out_type, OwbInferData *out);
