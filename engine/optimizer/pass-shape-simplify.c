/* pass-shape-simplify.c: replaces Shape/Size of tensors whose shape is known with constants. */
#include "owb-optimizer-private.h"

#include <string.h>

/* In pass-constant-folding.c: folds what the new constants make foldable (Gather, Slice, Concat
 * over shapes...). */
gboolean _owb_fold_constants (OwbPassContext *ctx, GError **error);

/* Shape's output for a known shape: dims[start:end] with the clamping of opset 15. */
static OwbTensor *
shape_constant (const OwbNode *node, const OwbValueType *type)
{
  int64_t rank = type->rank, start = 0, end = rank;
  if (node->opset >= 15)
    {
      start = owb_node_get_int (node, "start", 0);
      end = owb_node_get_int (node, "end", rank);
      if (start < 0)
        start += rank;
      if (end < 0)
        end += rank;
      start = CLAMP (start, 0, rank);
      end = CLAMP (end, 0, rank);
    }
  int64_t n = MAX (end - start, 0);
  OwbTensor *t = owb_tensor_new (OWB_TYPE_INT64, 1, &n, NULL);
  for (int64_t i = 0; i < n; i++)
    ((int64_t *) t->data)[i] = type->dims[start + i].value;
  return t;
}

static OwbTensor *
size_constant (const OwbValueType *type)
{
  int64_t n = 1;
  for (int i = 0; i < type->rank; i++)
    n *= type->dims[i].value;
  return owb_tensor_new_scalar_int64 (n);
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  GPtrArray *order = g_ptr_array_new (), *replaced = g_ptr_array_new ();
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    g_ptr_array_add (order, g_ptr_array_index (owb_pass_nodes (ctx), i));
  for (guint i = 0; i < order->len; i++)
    {
      OwbNode *node = g_ptr_array_index (order, i);
      gboolean is_shape = strcmp (node->op_type, "Shape") == 0, is_size = strcmp (node->op_type, "Size") == 0;
      if ((!is_shape && !is_size) || (node->domain && node->domain[0]) || node->n_inputs < 1
          || node->n_outputs != 1 || !node->outputs[0][0])
        continue;
      const char *out = node->outputs[0];
      /* Constant inputs are constant folding's; graph outputs must stay node outputs. */
      const OwbValueType *type = owb_pass_value_type (ctx, node->inputs[0]);
      if (!type || type->kind != OWB_VALUE_TENSOR || type->rank < 0 || !owb_value_type_is_fully_known (type)
          || owb_pass_is_graph_output (ctx, out) || _owb_pass_is_outer_read (ctx, out))
        continue;
      /* The value keeps its name, now as an initializer: readers need no edit. The node goes
       * after the sweep, so that the graph maps are not rebuilt after every removal. */
      owb_graph_add_initializer (ctx->graph, out, is_shape ? shape_constant (node, type) : size_constant (type));
      g_ptr_array_add (replaced, node);
    }
  for (guint i = 0; i < replaced->len; i++)
    owb_pass_remove_node (ctx, g_ptr_array_index (replaced, i));
  gboolean changed = replaced->len > 0;
  g_ptr_array_unref (replaced);
  g_ptr_array_unref (order);
  return changed ? _owb_fold_constants (ctx, error) : TRUE;
}

const OwbPass _owb_pass_shape_simplify = {
  "shape_simplify",
  OWB_OPTIMIZE_BASIC,
  "replaces Shape/Size of tensors whose shape is known with constants",
  run,
};
