/* owb-pass-util.c: what several passes share: the predicates that keep a rewrite safe, the
 * candidate loop of the fusion passes and the swap of a pair of nodes for the fused one. */
#include "owb-optimizer-private.h"

#include <string.h>

gboolean
_owb_pass_is_outer_read (OwbPassContext *ctx, const char *name)
{
  guint uses = owb_pass_n_uses (ctx, name);
  guint seen = owb_pass_consumers (ctx, name)->len + (owb_pass_is_graph_output (ctx, name) ? 1 : 0);
  return uses > seen;
}

void
_owb_pass_node_set_add (OwbPassNodeSet *set, OwbNode *node)
{
  if (_owb_pass_node_set_contains (set, node))
    return;
  if (set->n < (int) G_N_ELEMENTS (set->nodes))
    set->nodes[set->n++] = node;
  else
    set->full = TRUE;
}

gboolean
_owb_pass_node_set_contains (const OwbPassNodeSet *set, const OwbNode *node)
{
  for (int i = 0; i < set->n; i++)
    if (set->nodes[i] == node)
      return TRUE;
  return FALSE;
}

gboolean
_owb_pass_is_nondeterministic (const OwbNode *node)
{
  static const char *const ops[] = { "RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike",
                                     "Bernoulli", "Multinomial" };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    if (strcmp (node->op_type, ops[i]) == 0)
      return TRUE;
  return FALSE;
}

gboolean
_owb_pass_dim_eq (OwbDim a, OwbDim b)
{
  return owb_dim_is_known (a) ? a.value == b.value : a.param && a.param == b.param;
}

gboolean
_owb_pass_same_dims (const OwbValueType *a, const OwbValueType *b)
{
  if (!a || !b || a->rank < 0 || a->rank != b->rank)
    return FALSE;
  for (int i = 0; i < a->rank; i++)
    if (!_owb_pass_dim_eq (a->dims[i], b->dims[i]))
      return FALSE;
  return TRUE;
}

gboolean
_owb_pass_tensors_equal (const OwbTensor *a, const OwbTensor *b)
{
  if (a == b)
    return TRUE;
  if (!a || !b || a->kind != OWB_VALUE_TENSOR || b->kind != OWB_VALUE_TENSOR || a->dtype != b->dtype
      || a->rank != b->rank || a->nelems != b->nelems || a->nbytes != b->nbytes
      || memcmp (a->dims, b->dims, a->rank * sizeof (int64_t)) != 0)
    return FALSE;
  if (a->dtype == OWB_TYPE_STRING)
    {
      for (int64_t i = 0; i < a->nelems; i++)
        if (g_strcmp0 (((char **) a->data)[i], ((char **) b->data)[i]) != 0)
          return FALSE;
      return TRUE;
    }
  return a->nbytes == 0 || memcmp (a->data, b->data, a->nbytes) == 0;
}

static gboolean
is_one_of (const OwbNode *node, const char *const *ops, gboolean (*is) (const OwbNode *, const char *))
{
  for (guint i = 0; ops && ops[i]; i++)
    if (is (node, ops[i]))
      return TRUE;
  return FALSE;
}

guint
_owb_pass_fuse_each (OwbPassContext *ctx, const char *const *ops, const char *const *our_ops, OwbPassTryFuse try_fuse)
{
  /* Gathered first: a fusion edits the node list it would otherwise walk. */
  GPtrArray *candidates = g_ptr_array_new ();
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    {
      OwbNode *node = g_ptr_array_index (owb_pass_nodes (ctx), i);
      if (is_one_of (node, ops, owb_pass_is_op) || is_one_of (node, our_ops, owb_pass_is_our_op))
        g_ptr_array_add (candidates, node);
    }
  guint fused = 0;
  for (guint i = 0; i < candidates->len; i++)
    fused += try_fuse (ctx, g_ptr_array_index (candidates, i)) ? 1 : 0;
  g_ptr_array_unref (candidates);
  return fused;
}

void
_owb_pass_fuse_each_and_prune (OwbPassContext *ctx, const char *const *ops, OwbPassTryFuse try_fuse)
{
  if (_owb_pass_fuse_each (ctx, ops, NULL, try_fuse))
    owb_pass_prune_initializers (ctx);
}

void
_owb_pass_fuse_each_scale_and_prune (OwbPassContext *ctx, OwbPassTryFuse try_fuse)
{
  static const char *const ops[] = { "Mul", "Div", NULL };
  _owb_pass_fuse_each_and_prune (ctx, ops, try_fuse);
}

void
_owb_pass_fuse_each_anchor (OwbPassContext *ctx, OwbPassIsAnchor is_anchor, OwbPassFuseAnchor fuse)
{
  /* By output name: fusing removes nodes, so pointers taken up front could dangle. */
  GPtrArray *anchors = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    {
      OwbNode *node = g_ptr_array_index (owb_pass_nodes (ctx), i);
      if (is_anchor (node) && node->n_outputs >= 1 && node->outputs[0][0])
        g_ptr_array_add (anchors, g_strdup (node->outputs[0]));
    }
  for (guint i = 0; i < anchors->len; i++)
    {
      OwbNode *node = owb_pass_producer (ctx, g_ptr_array_index (anchors, i));
      if (node && is_anchor (node))
        fuse (ctx, node);
    }
  g_ptr_array_unref (anchors);
}

void
_owb_pass_replace_pair (OwbPassContext *ctx, OwbNode *fused, OwbNode *first, OwbNode *second)
{
  const char *from[] = { owb_pass_label (first), owb_pass_label (second) };
  owb_pass_add_node (ctx, fused, from, 2);
  owb_pass_remove_node (ctx, first);
  owb_pass_remove_node (ctx, second);
}

gboolean
_owb_pass_is_float_type (OwbDataType t)
{
  return t == OWB_TYPE_FLOAT || t == OWB_TYPE_DOUBLE || t == OWB_TYPE_FLOAT16;
}

int
_owb_pass_rank_of (OwbPassContext *ctx, const char *name)
{
  const OwbTensor *c = owb_pass_get_constant (ctx, name);
  if (c)
    return c->rank;
  const OwbValueType *t = owb_pass_value_type (ctx, name);
  return t && t->kind == OWB_VALUE_TENSOR ? t->rank : -1;
}

gboolean
_owb_pass_tensor_type (OwbPassContext *ctx, const char *name, OwbValueType *out)
{
  const OwbValueType *t = owb_pass_value_type (ctx, name);
  if (t)
    {
      *out = *t;
      return t->kind == OWB_VALUE_TENSOR;
    }
  const OwbTensor *c = owb_pass_constant_through_identity (ctx, name);
  if (!c)
    return FALSE;
  owb_tensor_get_value_type (c, out);
  return out->kind == OWB_VALUE_TENSOR;
}

OwbNode *
_owb_pass_only_reader (OwbPassContext *ctx, const char *name)
{
  GPtrArray *readers = owb_pass_consumers (ctx, name);
  if (owb_pass_n_uses (ctx, name) != 1 || readers->len != 1)
    return NULL;
  return g_ptr_array_index (readers, 0);
}

const char *
_owb_pass_other_input (const OwbNode *node, const char *name)
{
  if (node->n_inputs != 2)
    return NULL;
  gboolean first = strcmp (node->inputs[0], name) == 0, second = strcmp (node->inputs[1], name) == 0;
  if (first == second)
    return NULL;
  return first ? node->inputs[1] : node->inputs[0];
}

gboolean
_owb_pass_scalar (OwbPassContext *ctx, const char *name, double *value)
{
  const OwbTensor *t = owb_pass_constant_through_identity (ctx, name);
  if (!t || t->kind != OWB_VALUE_TENSOR || t->nelems != 1 || t->dtype == OWB_TYPE_STRING || !t->data)
    return FALSE;
  *value = owb_tensor_get_double (t, 0);
  return TRUE;
}

gboolean
_owb_pass_clip_bound (OwbPassContext *ctx, const OwbNode *clip, int i, double def, double *value)
{
  const char *name = owb_node_get_input (clip, i);
  if (!name)
    {
      *value = def;
      return TRUE;
    }
  const OwbTensor *t = owb_pass_get_constant (ctx, name);
  if (!t || t->nelems != 1)
    return FALSE;
  *value = owb_tensor_get_double (t, 0);
  return TRUE;
}

gboolean
_owb_pass_is_per_tensor_qdq (OwbPassContext *ctx, const OwbNode *node)
{
  if (!owb_pass_is_op (node, "QuantizeLinear") && !owb_pass_is_op (node, "DequantizeLinear"))
    return FALSE;
  if (node->n_inputs < 2 || owb_node_get_int (node, "block_size", 0) != 0)
    return FALSE;
  for (int i = 1; i < 3; i++)
    {
      const char *name = owb_node_get_input (node, i);
      if (!name)
        continue;
      const OwbTensor *c = owb_pass_get_constant (ctx, name);
      if (!c || c->nelems != 1)
        return FALSE;
    }
  return TRUE;
}

OwbTensor *
_owb_pass_scale_conv_weight (const OwbTensor *w, const double *factor, int64_t m)
{
  OwbTensor *nw = owb_tensor_new (w->dtype, w->rank, w->dims, NULL);
  int64_t per = w->nelems / MAX (m, 1);
  for (int64_t c = 0; c < m; c++)
    {
      if (w->dtype == OWB_TYPE_FLOAT)
        for (int64_t i = c * per; i < (c + 1) * per; i++)
          ((float *) nw->data)[i] = (float) (((const float *) w->data)[i] * factor[c]);
      else
        for (int64_t i = c * per; i < (c + 1) * per; i++)
          owb_tensor_set_double (nw, i, owb_tensor_get_double (w, i) * factor[c]);
    }
  return nw;
}

OwbNode *
_owb_pass_dup_as (const OwbNode *node, const char *op_type, const char *domain)
{
  OwbNode *copy = owb_node_dup (node);
  owb_node_clear_claims (copy);
  g_free (copy->op_type);
  copy->op_type = g_strdup (op_type);
  g_free (copy->domain);
  copy->domain = g_strdup (domain);
  return copy;
}

void
_owb_pass_replace_conv (OwbPassContext *ctx, OwbNode *conv, OwbNode *second, OwbTensor *nw, OwbTensor *nb)
{
  OwbNode *fused = owb_node_dup (conv);
  owb_node_clear_claims (fused);
  if (nw)
    {
      g_free (fused->inputs[1]);
      fused->inputs[1] = g_strdup (owb_pass_add_initializer (ctx, conv->inputs[1], nw));
    }
  if (nb)
    {
      const char *bias_name = owb_node_get_input (conv, 2);
      const char *nb_name = owb_pass_add_initializer (ctx, bias_name ? bias_name : conv->inputs[1], nb);
      if (fused->n_inputs > 2)
        {
          g_free (fused->inputs[2]);
          fused->inputs[2] = g_strdup (nb_name);
        }
      else
        owb_node_add_input (fused, nb_name);
    }
  g_free (fused->outputs[0]);
  fused->outputs[0] = g_strdup (second->outputs[0]);
  _owb_pass_replace_pair (ctx, fused, conv, second);
}
