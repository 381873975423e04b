/* pass-eliminate-noops.c: removes Identity, inference Dropout, no-op Cast, redundant Reshape, Unsqueeze/Squeeze pairs, no-op Slice, Expand and Pad, and Concat of one input. */
#include "owb-optimizer-private.h"

#include <string.h>

static gboolean
output_unused (OwbPassContext *ctx, const OwbNode *node, int o)
{
  return o >= node->n_outputs || !node->outputs[o][0] || owb_pass_n_uses (ctx, node->outputs[o]) == 0;
}


/* Same tensor shape, every dim known. */
static gboolean
same_known_shape (const OwbValueType *a, const OwbValueType *b)
{
  if (a->kind != OWB_VALUE_TENSOR || b->kind != OWB_VALUE_TENSOR || a->rank < 0 || a->rank != b->rank)
    return FALSE;
  for (int i = 0; i < a->rank; i++)
    if (!owb_dim_is_known (a->dims[i]) || !owb_dim_is_known (b->dims[i]) || a->dims[i].value != b->dims[i].value)
      return FALSE;
  return TRUE;
}

static gboolean
io_same_shape (OwbPassContext *ctx, const OwbNode *node)
{
  OwbValueType in, out;
  return node->n_inputs >= 1 && node->n_outputs >= 1 && _owb_pass_tensor_type (ctx, node->inputs[0], &in)
         && _owb_pass_tensor_type (ctx, node->outputs[0], &out) && same_known_shape (&in, &out);
}

/* A Reshape keeps the element count: with the same rank and equal known dims, one dim that is
 * not known on either side (a symbolic batch) must be equal too. Symbolic names alone prove
 * nothing, since declared value infos may carry them. */
static gboolean
reshape_keeps_shape (OwbPassContext *ctx, const OwbNode *node)
{
  OwbValueType a, b;
  if (!_owb_pass_tensor_type (ctx, node->inputs[0], &a) || !_owb_pass_tensor_type (ctx, node->outputs[0], &b)
      || a.rank < 0 || a.rank != b.rank)
    return FALSE;
  int n_open = 0;
  gboolean empty = FALSE;
  for (int i = 0; i < a.rank; i++)
    {
      if (owb_dim_is_known (a.dims[i]) && owb_dim_is_known (b.dims[i]))
        {
          if (a.dims[i].value != b.dims[i].value)
            return FALSE;
          empty |= a.dims[i].value == 0;
        }
      else
        n_open++;
    }
  /* With no elements, the count says nothing about the open dim. */
  return n_open == 0 || (n_open == 1 && !empty);
}

/* Makes readers of the node's output `o` read `in` instead, and removes the node. FALSE when the
 * graph's interface or a subgraph's reference by name stands in the way. */
static gboolean
bypass (OwbPassContext *ctx, OwbNode *node, int o, const char *in)
{
  const char *out = node->outputs[o];
  if (_owb_pass_is_outer_read (ctx, out))
    {
      owb_pass_near_miss (ctx, node, "output '%s' is read by a subgraph; kept", out);
      return FALSE;
    }
  if (owb_pass_is_graph_output (ctx, out))
    {
      /* The producer of `in` will write the output name itself; without a producer an Identity
       * would be needed, and two graph outputs cannot share one value. */
      if (!owb_pass_producer (ctx, in) || owb_pass_is_graph_output (ctx, in) || _owb_pass_is_outer_read (ctx, in))
        return FALSE;
    }
  char *in_name = g_strdup (in), *out_name = g_strdup (out);
  owb_pass_replace_uses (ctx, out_name, in_name);
  owb_pass_remove_node (ctx, node);
  g_free (in_name);
  g_free (out_name);
  return TRUE;
}

static void
remove_if_unused (OwbPassContext *ctx, OwbNode *node)
{
  for (int o = 0; o < node->n_outputs; o++)
    if (!output_unused (ctx, node, o))
      return;
  owb_pass_remove_node (ctx, node);
}

static gboolean
dropout_is_noop (OwbPassContext *ctx, OwbNode *node)
{
  /* Before opset 12 Dropout is an identity in inference (as ONNX Runtime and our kernel run it). */
  if (node->opset >= 12 && node->n_inputs >= 3 && node->inputs[2][0])
    {
      const OwbTensor *mode = owb_pass_get_constant (ctx, node->inputs[2]);
      if (!mode || mode->nelems != 1)
        {
          owb_pass_near_miss (ctx, node, "training_mode is not a constant; kept");
          return FALSE;
        }
      if (owb_tensor_get_int64 (mode, 0) != 0)
        {
          owb_pass_near_miss (ctx, node, "training_mode is true; kept");
          return FALSE;
        }
    }
  if (!output_unused (ctx, node, 1))
    {
      owb_pass_near_miss (ctx, node, "its mask output '%s' is used; kept", node->outputs[1]);
      return FALSE;
    }
  return TRUE;
}

static gboolean
cast_is_noop (OwbPassContext *ctx, OwbNode *node)
{
  OwbValueType in;
  if (!_owb_pass_tensor_type (ctx, node->inputs[0], &in) || in.dtype == OWB_TYPE_UNDEFINED)
    return FALSE;
  if (owb_pass_is_op (node, "Cast"))
    return owb_node_get_int (node, "to", -1) == (int64_t) in.dtype;
  OwbValueType like;
  return node->n_inputs >= 2 && _owb_pass_tensor_type (ctx, node->inputs[1], &like) && like.dtype == in.dtype;
}

/* A Reshape's constant target: the `shape` input, or the attribute before opset 5. */
static gboolean
reshape_target (OwbPassContext *ctx, const OwbNode *node, const int64_t **target, int *n)
{
  if (node->opset < 5)
    {
      *target = owb_node_get_ints (node, "shape", n);
      return owb_node_get_attribute (node, "shape") != NULL;
    }
  const OwbTensor *shape = node->n_inputs >= 2 ? owb_pass_get_constant (ctx, node->inputs[1]) : NULL;
  if (!shape || shape->dtype != OWB_TYPE_INT64 || shape->rank != 1)
    return FALSE;
  *n = (int) shape->nelems;
  *target = shape->data;
  return TRUE;
}

/* Reshape(Reshape(x, s1), s2) is Reshape(x, s2) unless s2 copies dims (0) from its input. */
static gboolean
fold_reshape_chain (OwbPassContext *ctx, OwbNode *node)
{
  OwbNode *inner = owb_pass_producer (ctx, node->inputs[0]);
  if (!owb_pass_is_op (inner, "Reshape") || inner->n_inputs < 1 || !inner->inputs[0][0])
    return FALSE;
  int n = 0;
  const int64_t *target = NULL;
  if (!reshape_target (ctx, node, &target, &n))
    return FALSE;
  if (owb_node_get_int (node, "allowzero", 0) == 0)
    for (int i = 0; i < n; i++)
      if (target[i] == 0)
        {
          owb_pass_near_miss (ctx, node, "its target shape copies dim %d from the Reshape '%s' before it; kept", i,
                               inner->name);
          return FALSE;
        }
  OwbNode *merged = owb_node_dup (node);
  g_free (merged->inputs[0]);
  merged->inputs[0] = g_strdup (inner->inputs[0]);
  /* The inner Reshape is replaced too when this was its only reader. */
  gboolean inner_goes = owb_pass_n_uses (ctx, node->inputs[0]) == 1;
  const char *from[] = { owb_pass_label (node), owb_pass_label (inner) };
  owb_pass_add_node (ctx, merged, from, inner_goes ? 2 : 1);
  owb_pass_remove_node (ctx, node);
  remove_if_unused (ctx, inner);
  return TRUE;
}

static gint
compare_int64 (gconstpointer x, gconstpointer y)
{
  int64_t u = *(const int64_t *) x, v = *(const int64_t *) y;
  return (u > v) - (u < v);
}

/* Unsqueeze/Squeeze axes: the `axes` input from opset 13, the attribute before. Normalized
 * against `rank` and sorted; FALSE when unknown. present is FALSE when no axes are given. */
static gboolean
get_axes (OwbPassContext *ctx, const OwbNode *node, int64_t rank, GArray *axes, gboolean *present)
{
  const int64_t *list = NULL;
  int n = 0;
  *present = TRUE;
  if (node->opset >= 13)
    {
      if (node->n_inputs < 2 || !node->inputs[1][0])
        {
          *present = FALSE;
          return TRUE;
        }
      const OwbTensor *t = owb_pass_get_constant (ctx, node->inputs[1]);
      if (!t || t->dtype != OWB_TYPE_INT64 || t->rank > 1)
        return FALSE;
      list = t->data;
      n = (int) t->nelems;
    }
  else
    {
      list = owb_node_get_ints (node, "axes", &n);
      if (!list)
        {
          *present = FALSE;
          return TRUE;
        }
    }
  for (int i = 0; i < n; i++)
    {
      int64_t a = list[i];
      if (a < 0)
        {
          if (rank < 0)
            return FALSE;
          a += rank;
        }
      g_array_append_val (axes, a);
    }
  g_array_sort (axes, compare_int64);
  return TRUE;
}

static gboolean
squeeze_undoes_unsqueeze (OwbPassContext *ctx, OwbNode *node, OwbNode *unsqueeze)
{
  OwbValueType mid;
  int64_t rank = _owb_pass_tensor_type (ctx, node->inputs[0], &mid) ? mid.rank : -1;
  GArray *a = g_array_new (FALSE, FALSE, sizeof (int64_t)), *b = g_array_new (FALSE, FALSE, sizeof (int64_t));
  gboolean has_a, has_b, same = FALSE;
  if (get_axes (ctx, unsqueeze, rank, a, &has_a) && get_axes (ctx, node, rank, b, &has_b) && has_a)
    {
      if (has_b)
        same = a->len == b->len && memcmp (a->data, b->data, a->len * sizeof (int64_t)) == 0;
      else
        {
          /* Squeeze without axes drops every 1: the same axes only if x has no dim of 1. */
          OwbValueType x;
          same = _owb_pass_tensor_type (ctx, unsqueeze->inputs[0], &x) && x.rank >= 0;
          for (int i = 0; same && i < x.rank; i++)
            same = owb_dim_is_known (x.dims[i]) && x.dims[i].value != 1;
        }
    }
  g_array_unref (a);
  g_array_unref (b);
  return same;
}

/* A Slice's parameter list: from the attributes before opset 10, from constant inputs after. */
static gboolean
slice_param (OwbPassContext *ctx, const OwbNode *node, int input, const char *attr, const int64_t **values,
             int *n, GArray *storage)
{
  *values = NULL;
  *n = 0;
  if (node->opset < 10)
    {
      *values = owb_node_get_ints (node, attr, n);
      return TRUE;
    }
  if (input >= node->n_inputs || !node->inputs[input][0])
    return TRUE;
  const OwbTensor *t = owb_pass_get_constant (ctx, node->inputs[input]);
  if (!t || (t->dtype != OWB_TYPE_INT64 && t->dtype != OWB_TYPE_INT32) || t->rank != 1)
    return FALSE;
  for (int64_t i = 0; i < t->nelems; i++)
    {
      int64_t v = owb_tensor_get_int64 (t, i);
      g_array_append_val (storage, v);
    }
  *values = (const int64_t *) storage->data;
  *n = (int) t->nelems;
  return TRUE;
}

static gboolean
slice_is_noop (OwbPassContext *ctx, OwbNode *node)
{
  OwbValueType x;
  if (!_owb_pass_tensor_type (ctx, node->inputs[0], &x))
    return FALSE;
  GArray *s_starts = g_array_new (FALSE, FALSE, sizeof (int64_t)), *s_ends = g_array_new (FALSE, FALSE, sizeof (int64_t));
  GArray *s_axes = g_array_new (FALSE, FALSE, sizeof (int64_t)), *s_steps = g_array_new (FALSE, FALSE, sizeof (int64_t));
  const int64_t *starts, *ends, *axes, *steps;
  int n_starts, n_ends, n_axes, n_steps;
  gboolean full = slice_param (ctx, node, 1, "starts", &starts, &n_starts, s_starts)
                  && slice_param (ctx, node, 2, "ends", &ends, &n_ends, s_ends)
                  && slice_param (ctx, node, 3, "axes", &axes, &n_axes, s_axes)
                  && slice_param (ctx, node, 4, "steps", &steps, &n_steps, s_steps) && starts && ends
                  && n_starts == n_ends && (!axes || n_axes == n_starts) && (!steps || n_steps == n_starts);
  for (int i = 0; full && i < n_starts; i++)
    {
      int64_t axis = axes ? axes[i] : i;
      if (axis < 0 && x.rank >= 0) /* with an unknown rank (-1), -2^63 + rank would overflow */
        axis += x.rank;
      if (x.rank < 0 || axis < 0 || axis >= x.rank || (steps && steps[i] != 1))
        {
          full = FALSE;
          break;
        }
      OwbDim dim = x.dims[axis];
      gboolean known = owb_dim_is_known (dim);
      gboolean from_start = starts[i] == 0 || (starts[i] < 0 && known && starts[i] + dim.value <= 0);
      /* Exporters write "to the end" as INT32_MAX or INT64_MAX. */
      gboolean to_end = ends[i] >= G_MAXINT32 || (known && ends[i] >= dim.value);
      full = from_start && to_end;
    }
  g_array_unref (s_starts);
  g_array_unref (s_ends);
  g_array_unref (s_axes);
  g_array_unref (s_steps);
  return full;
}

static gboolean
expand_is_noop (OwbPassContext *ctx, OwbNode *node)
{
  if (io_same_shape (ctx, node))
    return TRUE;
  /* A target of ones no longer than the input broadcasts to the input's own shape. */
  OwbValueType x;
  const OwbTensor *shape = node->n_inputs >= 2 ? owb_pass_get_constant (ctx, node->inputs[1]) : NULL;
  if (!shape || shape->rank != 1 || !_owb_pass_tensor_type (ctx, node->inputs[0], &x) || x.rank < 0
      || shape->nelems > x.rank)
    return FALSE;
  for (int64_t i = 0; i < shape->nelems; i++)
    if (owb_tensor_get_int64 (shape, i) != 1)
      return FALSE;
  return TRUE;
}

static gboolean
transpose_is_noop (OwbPassContext *ctx, OwbNode *node)
{
  int n = 0;
  const int64_t *perm = owb_node_get_ints (node, "perm", &n);
  if (!perm)
    {
      /* The default reverses the dims: an identity for rank 0 and 1 only. */
      OwbValueType x;
      return _owb_pass_tensor_type (ctx, node->inputs[0], &x) && x.rank >= 0 && x.rank <= 1;
    }
  for (int i = 0; i < n; i++)
    if (perm[i] != i)
      return FALSE;
  return TRUE;
}

/* Pads that are all zero (PyTorch writes one before each AvgPool2d, DenseNet's transitions): any
 * mode leaves the input as it is. Pads are an attribute before opset 11, a constant input after. */
static gboolean
pad_is_noop (OwbPassContext *ctx, OwbNode *node)
{
  if (node->opset < 11)
    {
      int n = 0;
      const int64_t *pads = owb_node_get_ints (node, "pads", &n);
      for (int i = 0; pads && i < n; i++)
        if (pads[i] != 0)
          return FALSE;
      return pads != NULL;
    }
  const OwbTensor *pads = node->n_inputs >= 2 && node->inputs[1][0] ? owb_pass_get_constant (ctx, node->inputs[1]) : NULL;
  if (!pads || pads->dtype != OWB_TYPE_INT64)
    return FALSE;
  for (int64_t i = 0; i < pads->nelems; i++)
    if (owb_tensor_get_int64 (pads, i) != 0)
      return FALSE;
  return TRUE;
}

static void
visit (OwbPassContext *ctx, OwbNode *node)
{
  if ((node->domain && node->domain[0]) || node->n_inputs < 1 || !node->inputs[0][0] || node->n_outputs < 1
      || !node->outputs[0][0])
    return;
  const char *in = node->inputs[0];
  if (owb_pass_is_op (node, "Identity"))
    bypass (ctx, node, 0, in);
  else if (owb_pass_is_op (node, "Dropout"))
    {
      if (dropout_is_noop (ctx, node))
        bypass (ctx, node, 0, in);
    }
  else if (owb_pass_is_op (node, "Cast") || owb_pass_is_op (node, "CastLike"))
    {
      if (cast_is_noop (ctx, node))
        bypass (ctx, node, 0, in);
    }
  else if (owb_pass_is_op (node, "Reshape"))
    {
      if (reshape_keeps_shape (ctx, node))
        bypass (ctx, node, 0, in);
      else
        fold_reshape_chain (ctx, node);
    }
  else if (owb_pass_is_op (node, "Squeeze"))
    {
      OwbNode *unsqueeze = owb_pass_producer (ctx, in);
      if (owb_pass_is_op (unsqueeze, "Unsqueeze") && unsqueeze->n_inputs >= 1 && unsqueeze->inputs[0][0]
          && squeeze_undoes_unsqueeze (ctx, node, unsqueeze))
        {
          char *x = g_strdup (unsqueeze->inputs[0]);
          if (bypass (ctx, node, 0, x))
            remove_if_unused (ctx, unsqueeze);
          g_free (x);
        }
    }
  else if (owb_pass_is_op (node, "Slice"))
    {
      if (slice_is_noop (ctx, node))
        bypass (ctx, node, 0, in);
    }
  else if (owb_pass_is_op (node, "Expand"))
    {
      if (expand_is_noop (ctx, node))
        bypass (ctx, node, 0, in);
    }
  else if (owb_pass_is_op (node, "Transpose"))
    {
      if (transpose_is_noop (ctx, node))
        bypass (ctx, node, 0, in);
    }
  else if (owb_pass_is_op (node, "Pad"))
    {
      if (pad_is_noop (ctx, node))
        bypass (ctx, node, 0, in);
    }
  else if (owb_pass_is_op (node, "Concat"))
    {
      /* torch.cat of a one-element list (DenseNet's first layer of each block) copies its input */
      if (node->n_inputs == 1)
        bypass (ctx, node, 0, in);
    }
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  /* Visit a snapshot: removing a node (or the producer before it) never frees a node still to
   * visit, except an Unsqueeze or inner Reshape, which are visited before their readers. */
  GPtrArray *order = g_ptr_array_new ();
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    g_ptr_array_add (order, g_ptr_array_index (owb_pass_nodes (ctx), i));
  for (guint i = 0; i < order->len; i++)
    visit (ctx, g_ptr_array_index (order, i));
  g_ptr_array_unref (order);
  return TRUE;
}

const OwbPass _owb_pass_eliminate_noops = {
  "eliminate_noops",
  OWB_OPTIMIZE_BASIC,
  "removes Identity, inference Dropout, no-op Cast, redundant Reshape, Unsqueeze/Squeeze pairs, no-op Slice, Expand "
  "and Pad, and Concat of one input",
  run,
};
