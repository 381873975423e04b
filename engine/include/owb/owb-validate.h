/* owb-validate.h: checking a graph and inferring its shapes. */
#pragma once

#include <owb/owb-api.h>
#include <owb/owb-graph.h>

G_BEGIN_DECLS

/* Checks the model: opset imports present and in range, every node's op known at its opset,
 * every input defined (graph input, initializer, earlier output, or outer scope), no output
 * defined twice, no cycles. Sets node->opset. Errors name the node. */
OWB_API gboolean owb_model_validate (OwbModel *model, GError **error);

/* Sorts graph->nodes topologically (stable: file order where free). FALSE with an error naming
 * a node on the cycle. */
OWB_API gboolean owb_graph_sort (OwbGraph *graph, GError **error);

/* Infers every value's type and shape (symbolic dims by name), adding value infos for
 * intermediates to graph->value_infos and checking declared outputs. Recurses into subgraphs. */
OWB_API gboolean owb_model_infer_shapes (OwbModel *model, GError **error);

G_END_DECLS
