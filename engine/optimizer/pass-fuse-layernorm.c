/* pass-fuse-layernorm.c: turns the exported mean/variance subgraph into LayerNormalization.
 *
 *   mean = ReduceMean (x, last axes); d = Sub (x, mean); var = ReduceMean (Pow (d, 2) | Mul (d, d))
 *   y = Div (d, Sqrt (Add (var, eps)))  [or Mul (d, Reciprocal (...))]  [* gamma] [+ beta]
 *
 * becomes LayerNormalization (x, gamma, beta): the standard op from opset 17, ai.onnx.workbench's
 * (same semantics) before that unless the optimization is portable. */
#include "owb-optimizer-private.h"
#include "../owb-tensor-private.h"

#include <math.h>
#include <string.h>


/* The first reduced axis when a ReduceMean (keepdims 1) reduces exactly the trailing axes of a rank
 * `rank` input; -1 otherwise. */
static int
trailing_reduce_axis (OwbPassContext *ctx, const OwbNode *rm, int rank)
{
  if (owb_node_get_int (rm, "keepdims", 1) != 1)
    return -1;
  int64_t axes[OWB_MAX_RANK];
  int n = 0;
  if (owb_pass_opset (ctx) >= 18)
    {
      const char *axes_name = owb_node_get_input (rm, 1);
      if (!axes_name)
        return owb_node_get_int (rm, "noop_with_empty_axes", 0) ? -1 : 0;
      const OwbTensor *t = owb_pass_constant_through_identity (ctx, axes_name);
      if (!t || (t->dtype != OWB_TYPE_INT64 && t->dtype != OWB_TYPE_INT32) || t->nelems > rank || t->nelems < 1)
        return -1;
      n = (int) t->nelems;
      for (int i = 0; i < n; i++)
        axes[i] = owb_tensor_get_int64 (t, i);
    }
  else
    {
      const int64_t *attr = owb_node_get_ints (rm, "axes", &n);
      if (!attr)
        return 0;
      if (n > rank || n < 1)
        return -1;
      memcpy (axes, attr, n * sizeof *axes);
    }
  gboolean seen[OWB_MAX_RANK] = { FALSE };
  for (int i = 0; i < n; i++)
    {
      int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (a < 0 || a >= rank || seen[a])
        return -1;
      seen[a] = TRUE;
    }
  for (int a = rank - n; a < rank; a++)
    if (!seen[a])
      return -1;
  return rank - n;
}

/* A parameter tensor (gamma or beta) that is exactly an elementwise factor over the normalized dims:
 * its dims after leading 1s are the normalized dims, or it is a scalar. Returns the name to feed
 * LayerNormalization (a new initializer when the shape must change), or NULL. */
static const char *
parameter_for (OwbPassContext *ctx, const char *name, const OwbValueType *x, int axis, const char *base)
{
  const OwbTensor *t = owb_pass_constant_through_identity (ctx, name);
  if (!t || t->kind != OWB_VALUE_TENSOR || t->dtype != x->dtype || t->rank > x->rank)
    return NULL;
  int tail = x->rank - axis;
  int64_t dims[OWB_MAX_RANK], count = 1;
  for (int k = 0; k < tail; k++)
    {
      if (!owb_dim_is_known (x->dims[axis + k]))
        return NULL;
      dims[k] = x->dims[axis + k].value;
      count *= dims[k];
    }
  if (t->nelems == 1 && count != 1)
    {
      /* A scalar factor: spread it over the normalized dims. */
      OwbTensor *full = owb_tensor_new (t->dtype, tail, dims, NULL);
      if (!full)
        return NULL;
      double v = owb_tensor_get_double (t, 0);
      for (int64_t i = 0; i < count; i++)
        owb_tensor_set_double (full, i, v);
      return owb_pass_add_initializer (ctx, base, full);
    }
  int lead = 0;
  while (lead < t->rank && t->dims[lead] == 1 && t->rank - lead > tail)
    lead++;
  if (t->rank - lead > tail)
    return NULL;
  /* Its trailing dims must be the normalized ones and cover them (no broadcasting inside). */
  if (t->nelems != count)
    return NULL;
  for (int k = lead; k < t->rank; k++)
    if (t->dims[k] != dims[tail - (t->rank - k)])
      return NULL;
  if (t->rank == tail)
    return name;
  OwbTensor *view = owb_tensor_new_view ((OwbTensor *) t, tail, dims, NULL);
  return view ? owb_pass_add_initializer (ctx, base, view) : NULL;
}

/* Every use of `name` is an input of a node in `set`. */
static gboolean
used_only_by (OwbPassContext *ctx, const char *name, const OwbPassNodeSet *set)
{
  GPtrArray *consumers = owb_pass_consumers (ctx, name);
  if (owb_pass_n_uses (ctx, name) != consumers->len)
    return FALSE;
  for (guint i = 0; i < consumers->len; i++)
    if (!_owb_pass_node_set_contains (set, g_ptr_array_index (consumers, i)))
      return FALSE;
  return TRUE;
}

/* Removes the matched nodes; returns the names they read, for drop_dead_constants once the new node
 * is in. */
static GPtrArray *
remove_nodes (OwbPassContext *ctx, const OwbPassNodeSet *set)
{
  GPtrArray *inputs = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; i < set->n; i++)
    for (int k = 0; k < set->nodes[i]->n_inputs; k++)
      if (set->nodes[i]->inputs[k][0])
        g_ptr_array_add (inputs, g_strdup (set->nodes[i]->inputs[k]));
  for (int i = 0; i < set->n; i++)
    owb_pass_remove_node (ctx, set->nodes[i]);
  return inputs;
}

/* Removes the Constant nodes among `names`' producers that nothing reads any more (exponents,
 * epsilons of the fused pattern); frees names. */
static void
drop_dead_constants (OwbPassContext *ctx, GPtrArray *names)
{
  for (guint i = 0; i < names->len; i++)
    {
      OwbNode *producer = owb_pass_producer (ctx, g_ptr_array_index (names, i));
      if (owb_pass_is_op (producer, "Constant") && owb_pass_n_uses (ctx, producer->outputs[0]) == 0)
        owb_pass_remove_node (ctx, producer);
    }
  g_ptr_array_unref (names);
}

static void
try_fuse (OwbPassContext *ctx, OwbNode *rm1)
{
  const char *x = owb_node_get_input (rm1, 0);
  const char *mean = rm1->outputs[0];
  if (!x || !mean[0])
    return;

  /* The skeleton, by op types only: anything else is not a layer norm at all. */
  OwbPassNodeSet subs = { { NULL }, 0, FALSE };
  GPtrArray *mean_readers = owb_pass_consumers (ctx, mean);
  for (guint i = 0; i < mean_readers->len; i++)
    {
      OwbNode *n = g_ptr_array_index (mean_readers, i);
      if (owb_pass_is_op (n, "Sub") && n->n_inputs == 2 && strcmp (n->inputs[0], x) == 0 && strcmp (n->inputs[1], mean) == 0
          && subs.n < 4)
        _owb_pass_node_set_add (&subs, n);
    }
  if (subs.n == 0)
    return;
  OwbNode *square = NULL, *div = NULL, *recip = NULL, *std = NULL, *rm2 = NULL, *add_eps = NULL;
  for (int s = 0; s < subs.n && !square; s++)
    {
      GPtrArray *readers = owb_pass_consumers (ctx, subs.nodes[s]->outputs[0]);
      for (guint i = 0; i < readers->len && !square; i++)
        {
          OwbNode *n = g_ptr_array_index (readers, i);
          const char *d = subs.nodes[s]->outputs[0];
          if ((owb_pass_is_op (n, "Pow") && n->n_inputs == 2 && strcmp (n->inputs[0], d) == 0)
              || (owb_pass_is_op (n, "Mul") && n->n_inputs == 2 && strcmp (n->inputs[0], d) == 0 && strcmp (n->inputs[1], d) == 0))
            square = n;
        }
    }
  if (!square)
    return;
  GPtrArray *sq_readers = owb_pass_consumers (ctx, square->outputs[0]);
  rm2 = sq_readers->len == 1 ? g_ptr_array_index (sq_readers, 0) : NULL;
  if (!owb_pass_is_op (rm2, "ReduceMean"))
    return;
  GPtrArray *var_readers = owb_pass_consumers (ctx, rm2->outputs[0]);
  add_eps = var_readers->len == 1 ? g_ptr_array_index (var_readers, 0) : NULL;
  if (!owb_pass_is_op (add_eps, "Add") || add_eps->n_inputs != 2)
    return;
  GPtrArray *ve_readers = owb_pass_consumers (ctx, add_eps->outputs[0]);
  std = ve_readers->len == 1 ? g_ptr_array_index (ve_readers, 0) : NULL;
  if (!owb_pass_is_op (std, "Sqrt"))
    return;
  GPtrArray *std_readers = owb_pass_consumers (ctx, std->outputs[0]);
  OwbNode *after_std = std_readers->len == 1 ? g_ptr_array_index (std_readers, 0) : NULL;
  const char *denominator = std->outputs[0];
  if (owb_pass_is_op (after_std, "Reciprocal"))
    {
      recip = after_std;
      denominator = recip->outputs[0];
      GPtrArray *r = owb_pass_consumers (ctx, denominator);
      after_std = r->len == 1 ? g_ptr_array_index (r, 0) : NULL;
    }
  if (!after_std || after_std->n_inputs != 2 || !(recip ? owb_pass_is_op (after_std, "Mul") : owb_pass_is_op (after_std, "Div")))
    return;
  /* The numerator is x - mean (possibly a second Sub of the same values). */
  int num_slot = strcmp (after_std->inputs[1], denominator) == 0 ? 0 : 1;
  if (!recip && num_slot != 0)
    return;
  OwbNode *num = owb_pass_producer (ctx, after_std->inputs[num_slot]);
  if (!_owb_pass_node_set_contains (&subs, num))
    return;
  div = after_std;

  /* From here on it is a layer norm: say why it is not fused. */
  const OwbValueType *xt = owb_pass_value_type (ctx, x);
  if (!xt || xt->rank < 1)
    {
      owb_pass_near_miss (ctx, rm1, "layer norm pattern, but the rank of its input '%s' is not known", x);
      return;
    }
  if (!_owb_data_type_is_float (xt->dtype))
    {
      owb_pass_near_miss (ctx, rm1, "layer norm pattern on %s values; only floating types are fused",
                           owb_data_type_name (xt->dtype));
      return;
    }
  int axis = trailing_reduce_axis (ctx, rm1, xt->rank);
  if (axis < 0 || trailing_reduce_axis (ctx, rm2, xt->rank) != axis)
    {
      owb_pass_near_miss (ctx, rm1,
                           "layer norm pattern, but the ReduceMeans do not both reduce the same last axes with keepdims=1");
      return;
    }
  double exponent, eps;
  if (owb_pass_is_op (square, "Pow") && (!_owb_pass_scalar (ctx, square->inputs[1], &exponent) || exponent != 2.0))
    {
      owb_pass_near_miss (ctx, square, "layer norm pattern, but the exponent is not the constant 2");
      return;
    }
  const char *eps_name = strcmp (add_eps->inputs[0], rm2->outputs[0]) == 0 ? add_eps->inputs[1] : add_eps->inputs[0];
  if (!_owb_pass_scalar (ctx, eps_name, &eps) || !isfinite (eps) || eps < 0)
    {
      owb_pass_near_miss (ctx, add_eps, "layer norm pattern, but epsilon '%s' is not a constant non-negative scalar",
                           eps_name);
      return;
    }
  OwbPassNodeSet core = { { NULL }, 0, FALSE };
  _owb_pass_node_set_add (&core, rm1);
  for (int s = 0; s < subs.n; s++)
    _owb_pass_node_set_add (&core, subs.nodes[s]);
  _owb_pass_node_set_add (&core, square);
  _owb_pass_node_set_add (&core, rm2);
  _owb_pass_node_set_add (&core, add_eps);
  _owb_pass_node_set_add (&core, std);
  if (recip)
    _owb_pass_node_set_add (&core, recip);
  _owb_pass_node_set_add (&core, div);
  const char *inner[] = { mean, square->outputs[0], rm2->outputs[0], add_eps->outputs[0], std->outputs[0],
                          recip ? recip->outputs[0] : NULL };
  for (guint i = 0; i < G_N_ELEMENTS (inner); i++)
    if (inner[i] && !used_only_by (ctx, inner[i], &core))
      {
        owb_pass_near_miss (ctx, owb_pass_producer (ctx, inner[i]),
                             "layer norm pattern, but its intermediate '%s' is also used elsewhere", inner[i]);
        return;
      }
  for (int s = 0; s < subs.n; s++)
    if (!used_only_by (ctx, subs.nodes[s]->outputs[0], &core))
      {
        owb_pass_near_miss (ctx, subs.nodes[s], "layer norm pattern, but x - mean ('%s') is also used elsewhere",
                             subs.nodes[s]->outputs[0]);
        return;
      }
  int opset = owb_pass_opset (ctx);
  gboolean standard = opset >= 17;
  if (!standard && ctx->options->portable)
    {
      owb_pass_near_miss (ctx, rm1, "needs opset 17 for a standard LayerNormalization (model has %d); kept as is (portable)",
                           opset);
      return;
    }

  /* Optional gamma and beta. */
  const char *out = div->outputs[0];
  const char *gamma = NULL, *beta = NULL;
  OwbNode *mul = _owb_pass_only_reader (ctx, out);
  if (owb_pass_is_op (mul, "Mul") && mul->n_inputs == 2)
    {
      const char *g = strcmp (mul->inputs[0], out) == 0 ? mul->inputs[1] : mul->inputs[0];
      if ((gamma = parameter_for (ctx, g, xt, axis, "layernorm_scale")))
        {
          _owb_pass_node_set_add (&core, mul);
          out = mul->outputs[0];
          OwbNode *add = _owb_pass_only_reader (ctx, out);
          if (owb_pass_is_op (add, "Add") && add->n_inputs == 2)
            {
              const char *b = strcmp (add->inputs[0], out) == 0 ? add->inputs[1] : add->inputs[0];
              if ((beta = parameter_for (ctx, b, xt, axis, "layernorm_bias")))
                {
                  _owb_pass_node_set_add (&core, add);
                  out = add->outputs[0];
                }
            }
        }
    }
  if (core.full)
    return; /* never part of a pattern removed (the set holds far more than a layer norm's nodes) */
  if (!gamma)
    {
      int tail = xt->rank - axis;
      int64_t dims[OWB_MAX_RANK];
      for (int k = 0; k < tail; k++)
        {
          if (!owb_dim_is_known (xt->dims[axis + k]))
            {
              owb_pass_near_miss (ctx, rm1, "layer norm pattern without a scale, and the normalized dims are not known");
              return;
            }
          dims[k] = xt->dims[axis + k].value;
        }
      OwbTensor *ones = owb_tensor_new (xt->dtype, tail, dims, NULL);
      if (!ones)
        return;
      for (int64_t i = 0; i < ones->nelems; i++)
        owb_tensor_set_double (ones, i, 1.0);
      gamma = owb_pass_add_initializer (ctx, "layernorm_scale", ones);
    }

  char *out_name = g_strdup (out);
  char *x_name = g_strdup (x);
  GPtrArray *from = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; i < core.n; i++)
    g_ptr_array_add (from, g_strdup (owb_pass_label (core.nodes[i])));
  char *base = g_strdup (owb_pass_label (rm1));
  char *gamma_name = g_strdup (gamma), *beta_name = g_strdup (beta);
  GPtrArray *read = remove_nodes (ctx, &core);
  char *name = owb_pass_scoped_name (ctx, base, "LayerNormalization");
  g_free (base);

  if (!standard)
    owb_model_set_opset (ctx->model, OWB_DOMAIN, 1);
  OwbNode *ln = owb_node_new ("LayerNormalization", standard ? "" : OWB_DOMAIN, name);
  owb_node_add_input (ln, x_name);
  owb_node_add_input (ln, gamma_name);
  if (beta_name)
    owb_node_add_input (ln, beta_name);
  owb_node_add_output (ln, out_name);
  owb_node_add_attribute (ln, "axis", OWB_ATTR_INT)->i = axis - xt->rank;
  owb_node_add_attribute (ln, "epsilon", OWB_ATTR_FLOAT)->f = (float) eps;
  owb_pass_add_node (ctx, ln, (const char *const *) from->pdata, from->len);
  drop_dead_constants (ctx, read);
  g_ptr_array_unref (from);
  g_free (name);
  g_free (out_name);
  g_free (x_name);
  g_free (gamma_name);
  g_free (beta_name);
}

static gboolean
is_reduce_mean (const OwbNode *node)
{
  return owb_pass_is_op (node, "ReduceMean") && node->n_outputs == 1;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  (void) error;
  _owb_pass_fuse_each_anchor (ctx, is_reduce_mean, try_fuse);
  owb_pass_prune_initializers (ctx);
  return TRUE;
}

const OwbPass _owb_pass_fuse_layernorm = {
  "fuse_layernorm",
  OWB_OPTIMIZE_EXTENDED,
  "turns the exported mean/variance subgraph into LayerNormalization",
  run,
};
