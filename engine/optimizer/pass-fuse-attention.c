/* pass-fuse-attention.c: turns the exported multi-head attention subgraph into one attention op.
 *
 * Anchored on a Softmax whose input is MatMul (Q', K') [* or / constants] [+ mask] and whose output
 * feeds MatMul (P, V'), followed by a Transpose back. Each of Q', K', V' must be a Reshape of a
 * projection to heads, then Transposes (and constant scales on Q' or K'). Two layouts are matched:
 *
 *   3-D (torch.nn.MultiheadAttention, torchvision ViT): x [S, B, E] -> Reshape [S, B*H, D] ->
 *       Transpose (1,0,2) for Q and V, (1,2,0) for K; output Transpose (1,0,2): seq-first.
 *   4-D (per-head views): x [B, S, E] -> Reshape [B, S, H, D] -> Transpose (0,2,1,3) for Q and V,
 *       (0,2,3,1) for K; output Transpose (0,2,1,3) ([S, B, E] inputs with (1,2,0,3)... also).
 *
 * Q, K and V slicing one packed projection (Slice or Split in thirds of the last axis) are read
 * packed. The result is ai.onnx.workbench's MultiHeadAttention, or with a portable optimization the
 * standard Attention (opset 23 and later). */
#include "owb-optimizer-private.h"

#include <math.h>
#include <string.h>

/* A finite constant scalar. */
static gboolean
scalar (OwbPassContext *ctx, const char *name, double *value)
{
  return _owb_pass_scalar (ctx, name, value) && isfinite (*value);
}

/* Constant integers (Slice starts, Split sizes...) as int64. */
static gboolean
ints_of (OwbPassContext *ctx, const char *name, int64_t *values, int max, int *n)
{
  const OwbTensor *t = name ? owb_pass_constant_through_identity (ctx, name) : NULL;
  if (!t || (t->dtype != OWB_TYPE_INT64 && t->dtype != OWB_TYPE_INT32) || t->nelems > max)
    return FALSE;
  *n = (int) t->nelems;
  for (int i = 0; i < *n; i++)
    values[i] = owb_tensor_get_int64 (t, i);
  return TRUE;
}

static gboolean
known (OwbDim d)
{
  return owb_dim_is_known (d);
}

/* MatMul, or our FusedMatMul doing a plain product (no bias, activation or transA); *trans_b tells
 * whether it transposes its second operand's last two axes. */
static gboolean
is_product (const OwbNode *node, gboolean *trans_b)
{
  *trans_b = FALSE;
  if (!node || node->n_inputs != 2 || node->n_outputs != 1)
    return FALSE;
  if (owb_pass_is_op (node, "MatMul"))
    return TRUE;
  if (strcmp (node->op_type, "FusedMatMul") != 0 || !node->domain || strcmp (node->domain, OWB_DOMAIN) != 0)
    return FALSE;
  if (owb_node_get_attribute (node, "activation") || owb_node_get_int (node, "transA", 0) != 0)
    return FALSE;
  *trans_b = owb_node_get_int (node, "transB", 0) != 0;
  return TRUE;
}

/* A Mul or Div of `node`'s input by a constant scalar: returns the other operand and multiplies
 * *scale by the factor. */
static const char *
scaling (OwbPassContext *ctx, const OwbNode *node, double *scale)
{
  double c;
  if (!node || node->n_inputs != 2)
    return NULL;
  if (owb_pass_is_op (node, "Mul"))
    {
      if (scalar (ctx, node->inputs[1], &c) && !owb_pass_constant_through_identity (ctx, node->inputs[0]))
        {
          *scale *= c;
          return node->inputs[0];
        }
      if (scalar (ctx, node->inputs[0], &c) && !owb_pass_constant_through_identity (ctx, node->inputs[1]))
        {
          *scale *= c;
          return node->inputs[1];
        }
    }
  if (owb_pass_is_op (node, "Div") && scalar (ctx, node->inputs[1], &c) && c != 0 && !owb_pass_constant_through_identity (ctx, node->inputs[0]))
    {
      *scale /= c;
      return node->inputs[0];
    }
  return NULL;
}

/* Follows `name` back through single-use constant scalings; returns the value reached. */
static const char *
skip_scalings (OwbPassContext *ctx, const char *name, double *scale, OwbPassNodeSet *set)
{
  for (int steps = 0; steps < 8; steps++)
    {
      OwbNode *p = owb_pass_producer (ctx, name);
      double s = *scale;
      const char *next = scaling (ctx, p, &s);
      if (!next || owb_pass_n_uses (ctx, name) != 1)
        return name;
      *scale = s;
      _owb_pass_node_set_add (set, p);
      name = next;
    }
  return name;
}

/* One of Q', K', V': a Reshape of `source` to heads, then Transposes composed into `perm` (the
 * operand's axis i is the Reshape output's axis perm[i]). */
typedef struct {
  const char *source;
  OwbNode *reshape;
  int64_t perm[4];
  int64_t heads, head_size;
  gboolean seq_first;
} Branch;

/* Walks back from a MatMul operand to the Reshape. Fills *why on failure. */
static gboolean
walk_branch (OwbPassContext *ctx, const char *name, int rank, gboolean allow_scale, double *scale, Branch *br,
             OwbPassNodeSet *set, char **why)
{
  for (int i = 0; i < rank; i++)
    br->perm[i] = i;
  for (int steps = 0; steps < 8; steps++)
    {
      if (owb_pass_n_uses (ctx, name) != 1)
        {
          *why = g_strdup_printf ("'%s' is also used elsewhere", name);
          return FALSE;
        }
      OwbNode *p = owb_pass_producer (ctx, name);
      if (!p)
        {
          *why = g_strdup_printf ("'%s' is not computed by a Reshape to heads", name);
          return FALSE;
        }
      if (owb_pass_is_op (p, "Transpose") && p->n_inputs == 1)
        {
          int n = 0;
          const int64_t *t = owb_node_get_ints (p, "perm", &n);
          int64_t tp[4];
          for (int i = 0; i < rank; i++)
            tp[i] = t ? (i < n ? t[i] : -1) : rank - 1 - i;
          if (t && n != rank)
            {
              *why = g_strdup_printf ("Transpose '%s' has a perm of the wrong length", owb_pass_label (p));
              return FALSE;
            }
          int64_t composed[4];
          for (int i = 0; i < rank; i++)
            {
              if (tp[br->perm[i]] < 0 || tp[br->perm[i]] >= rank)
                {
                  *why = g_strdup_printf ("Transpose '%s' has an invalid perm", owb_pass_label (p));
                  return FALSE;
                }
              composed[i] = tp[br->perm[i]];
            }
          memcpy (br->perm, composed, sizeof composed);
          _owb_pass_node_set_add (set, p);
          name = p->inputs[0];
          continue;
        }
      double s = *scale;
      const char *next = allow_scale ? scaling (ctx, p, &s) : NULL;
      if (next)
        {
          *scale = s;
          _owb_pass_node_set_add (set, p);
          name = next;
          continue;
        }
      if (owb_pass_is_op (p, "Reshape") && p->n_inputs >= 1)
        {
          br->reshape = p;
          br->source = p->inputs[0];
          _owb_pass_node_set_add (set, p);
          return TRUE;
        }
      *why = g_strdup_printf ("'%s' comes from %s '%s', not from a Reshape to heads", name, p->op_type, owb_pass_label (p));
      return FALSE;
    }
  *why = g_strdup_printf ("too many nodes between '%s' and its Reshape", name);
  return FALSE;
}

static gboolean
perm_is (const int64_t *perm, int rank, const int64_t *want)
{
  for (int i = 0; i < rank; i++)
    if (perm[i] != want[i])
      return FALSE;
  return TRUE;
}

/* Checks the Reshape splits the source's last dim into heads and the Transposes put heads first:
 * `role` 'q', 'k' or 'v'. Fills heads, head_size, seq_first. */
static gboolean
check_branch (OwbPassContext *ctx, Branch *br, int rank, char role, char **why)
{
  const OwbValueType *rt = owb_pass_value_type (ctx, br->reshape->outputs[0]);
  const OwbValueType *st = owb_pass_value_type (ctx, br->source);
  if (!rt || !st || rt->rank != rank || st->rank != 3 || !known (st->dims[2]))
    {
      *why = g_strdup_printf ("Reshape '%s' does not go from a known [_, _, hidden] to rank %d", owb_pass_label (br->reshape),
                              rank);
      return FALSE;
    }
  int64_t hidden = st->dims[2].value;
  if (rank == 3)
    {
      /* [S, B, E] -> [S, B*H, D] */
      if (!_owb_pass_dim_eq (rt->dims[0], st->dims[0]) || !known (rt->dims[2]) || rt->dims[2].value < 1
          || hidden % rt->dims[2].value)
        {
          *why = g_strdup_printf ("Reshape '%s' does not split the last dim into [batch*heads, head_size]",
                                  owb_pass_label (br->reshape));
          return FALSE;
        }
      br->head_size = rt->dims[2].value;
      br->heads = hidden / br->head_size;
      br->seq_first = TRUE;
      static const int64_t qv[3] = { 1, 0, 2 }, k[3] = { 1, 2, 0 };
      if (!perm_is (br->perm, 3, role == 'k' ? k : qv))
        {
          *why = g_strdup_printf ("the Transposes after Reshape '%s' do not give [batch*heads, %s]", owb_pass_label (br->reshape),
                                  role == 'k' ? "head_size, seq" : "seq, head_size");
          return FALSE;
        }
      return TRUE;
    }
  /* [X0, X1, E] -> [X0, X1, H, D] */
  if (!_owb_pass_dim_eq (rt->dims[0], st->dims[0]) || !_owb_pass_dim_eq (rt->dims[1], st->dims[1]) || !known (rt->dims[2])
      || !known (rt->dims[3]) || rt->dims[2].value * rt->dims[3].value != hidden)
    {
      *why = g_strdup_printf ("Reshape '%s' does not split the last dim into [heads, head_size]", owb_pass_label (br->reshape));
      return FALSE;
    }
  br->heads = rt->dims[2].value;
  br->head_size = rt->dims[3].value;
  const int64_t *p = br->perm;
  int64_t b = p[0], s = role == 'k' ? p[3] : p[2];
  gboolean ok = (b == 0 || b == 1) && s == 1 - b && p[1] == 2 && (role == 'k' ? p[2] == 3 : p[3] == 3);
  if (!ok)
    {
      *why = g_strdup_printf ("the Transposes after Reshape '%s' do not give [batch, heads, %s]", owb_pass_label (br->reshape),
                              role == 'k' ? "head_size, seq" : "seq, head_size");
      return FALSE;
    }
  br->seq_first = s == 0;
  return TRUE;
}

/* Q, K and V as thirds of one packed projection: Slices of the last axis, or the three outputs of a
 * Split. Returns the packed value, adding the slicing nodes to set. */
static const char *
packed_source (OwbPassContext *ctx, const char *const src[3], int64_t hidden, OwbPassNodeSet *set)
{
  OwbNode *p[3];
  for (int i = 0; i < 3; i++)
    {
      p[i] = owb_pass_producer (ctx, src[i]);
      if (!p[i] || owb_pass_n_uses (ctx, src[i]) != 1)
        return NULL;
    }
  const char *data = p[0]->n_inputs >= 1 ? p[0]->inputs[0] : NULL;
  const OwbValueType *dt = data ? owb_pass_value_type (ctx, data) : NULL;
  if (!dt || dt->rank != 3 || !known (dt->dims[2]) || dt->dims[2].value != 3 * hidden)
    return NULL;
  if (owb_pass_is_op (p[0], "Split") && p[1] == p[0] && p[2] == p[0] && p[0]->n_outputs == 3)
    {
      for (int i = 0; i < 3; i++)
        if (strcmp (p[0]->outputs[i], src[i]) != 0)
          return NULL;
      int64_t axis = owb_node_get_int (p[0], "axis", 0);
      if (axis != 2 && axis != -1)
        return NULL;
      int64_t sizes[3];
      int n = 0;
      const int64_t *attr = owb_node_get_ints (p[0], "split", &n);
      if (attr && n == 3)
        memcpy (sizes, attr, sizeof sizes);
      else if (!attr && p[0]->n_inputs >= 2 && p[0]->inputs[1][0])
        {
          if (!ints_of (ctx, p[0]->inputs[1], sizes, 3, &n) || n != 3)
            return NULL;
        }
      else if (attr || (p[0]->n_inputs >= 2 && p[0]->inputs[1][0]))
        return NULL;
      else
        sizes[0] = sizes[1] = sizes[2] = hidden;
      if (sizes[0] != hidden || sizes[1] != hidden || sizes[2] != hidden)
        return NULL;
      _owb_pass_node_set_add (set, p[0]);
      return data;
    }
  for (int i = 0; i < 3; i++)
    {
      if (!owb_pass_is_op (p[i], "Slice") || strcmp (p[i]->inputs[0], data) != 0)
        return NULL;
      int64_t starts[1], ends[1], axes[1] = { -1 }, steps[1] = { 1 };
      int n = 0;
      if (owb_pass_opset (ctx) < 10)
        {
          const int64_t *a = owb_node_get_ints (p[i], "starts", &n);
          if (!a || n != 1)
            return NULL;
          starts[0] = a[0];
          if (!(a = owb_node_get_ints (p[i], "ends", &n)) || n != 1)
            return NULL;
          ends[0] = a[0];
          if ((a = owb_node_get_ints (p[i], "axes", &n)))
            {
              if (n != 1)
                return NULL;
              axes[0] = a[0];
            }
        }
      else
        {
          if (p[i]->n_inputs < 3 || !ints_of (ctx, p[i]->inputs[1], starts, 1, &n) || n != 1
              || !ints_of (ctx, p[i]->inputs[2], ends, 1, &n) || n != 1)
            return NULL;
          if (p[i]->n_inputs > 3 && p[i]->inputs[3][0] && (!ints_of (ctx, p[i]->inputs[3], axes, 1, &n) || n != 1))
            return NULL;
          if (p[i]->n_inputs > 4 && p[i]->inputs[4][0] && (!ints_of (ctx, p[i]->inputs[4], steps, 1, &n) || n != 1))
            return NULL;
        }
      int64_t width = 3 * hidden;
      if ((axes[0] != 2 && axes[0] != -1) || steps[0] != 1)
        return NULL;
      if (starts[0] < 0)
        starts[0] += width;
      if (ends[0] < 0)
        ends[0] += width;
      ends[0] = MIN (ends[0], width);
      if (starts[0] != i * hidden || ends[0] != (i + 1) * hidden)
        return NULL;
    }
  for (int i = 0; i < 3; i++)
    _owb_pass_node_set_add (set, p[i]);
  return data;
}

static char *
add_shape_initializer (OwbPassContext *ctx, const char *base, const int64_t *values, int n)
{
  int64_t dims[1] = { n };
  OwbTensor *t = owb_tensor_new (OWB_TYPE_INT64, 1, dims, NULL);
  memcpy (t->data, values, n * sizeof (int64_t));
  return g_strdup (owb_pass_add_initializer (ctx, base, t));
}

/* A node of the fusion, named in the scope of `like`. */
static OwbNode *
new_node (OwbPassContext *ctx, const char *op_type, const char *domain, const char *like)
{
  char *name = owb_pass_scoped_name (ctx, like, op_type);
  OwbNode *node = owb_node_new (op_type, domain, name);
  g_free (name);
  return node;
}

/* Adds a Transpose (perm 1, 0, 2: sequence-first and batch-first swap) of value into out, named
 * after like, made from the nodes in `from`. */
static void
add_swap_first_two (OwbPassContext *ctx, const char *value, const char *out, const char *like, GPtrArray *from)
{
  OwbNode *t = new_node (ctx, "Transpose", "", like);
  owb_node_add_input (t, value);
  owb_node_add_output (t, out);
  OwbAttribute *a = owb_node_add_attribute (t, "perm", OWB_ATTR_INTS);
  a->n = 3;
  a->ints = g_new (int64_t, 3);
  a->ints[0] = 1;
  a->ints[1] = 0;
  a->ints[2] = 2;
  owb_pass_add_node (ctx, t, (const char *const *) from->pdata, from->len);
}

static char *
transposed (OwbPassContext *ctx, const char *value, const char *like, const char *what, GPtrArray *from)
{
  char *out = owb_pass_scoped_name (ctx, like, what);
  add_swap_first_two (ctx, value, out, like, from);
  return out;
}

static void
try_fuse (OwbPassContext *ctx, OwbNode *softmax)
{
  const char *scores = owb_node_get_input (softmax, 0), *probs = softmax->outputs[0];
  if (!scores || !probs[0])
    return;
  /* The skeleton: MatMul -> [scale] -> [Add mask] -> [scale] -> Softmax -> MatMul. */
  GPtrArray *readers = owb_pass_consumers (ctx, probs);
  OwbNode *mm2 = readers->len == 1 ? g_ptr_array_index (readers, 0) : NULL;
  gboolean mm2_trans, mm1_trans;
  if (!is_product (mm2, &mm2_trans) || strcmp (mm2->inputs[0], probs) != 0)
    return;
  OwbPassNodeSet set = { { NULL }, 0, FALSE };
  double scale = 1.0;
  const char *mask = NULL;
  OwbNode *mask_add = NULL;
  const char *s = skip_scalings (ctx, scores, &scale, &set);
  OwbNode *p = owb_pass_producer (ctx, s);
  if (owb_pass_is_op (p, "Add") && p->n_inputs == 2)
    {
      /* A scaling after the mask Add would scale the mask too. */
      double after_mask = scale;
      scale = 1.0;
      for (int i = 0; i < 2 && !mask; i++)
        {
          OwbPassNodeSet probe = set;
          double sc = 1.0;
          const char *t = skip_scalings (ctx, p->inputs[i], &sc, &probe);
          gboolean tb;
          if (is_product (owb_pass_producer (ctx, t), &tb))
            {
              mask = p->inputs[1 - i];
              mask_add = p;
              set = probe;
              scale = sc;
              s = t;
            }
        }
      if (!mask)
        return;
      _owb_pass_node_set_add (&set, mask_add);
      if (after_mask != 1.0)
        {
          owb_pass_near_miss (ctx, softmax, "attention pattern, but the scores are scaled after the mask is added");
          return;
        }
    }
  OwbNode *mm1 = owb_pass_producer (ctx, s);
  if (!is_product (mm1, &mm1_trans))
    return;

  /* From here on it looks like attention: say which step does not fit. */
  char *why = NULL;
  const OwbValueType *st = owb_pass_value_type (ctx, mm1->outputs[0]);
  int rank = st ? st->rank : -1;
  if (rank != 3 && rank != 4)
    {
      owb_pass_near_miss (ctx, softmax, "attention pattern, but the scores '%s' are not of rank 3 or 4", mm1->outputs[0]);
      return;
    }
  if (!(st->dtype == OWB_TYPE_FLOAT || st->dtype == OWB_TYPE_FLOAT16 || st->dtype == OWB_TYPE_BFLOAT16))
    {
      owb_pass_near_miss (ctx, softmax, "attention pattern on %s values; only float and float16 are fused",
                           owb_data_type_name (st->dtype));
      return;
    }
  int64_t axis = owb_node_get_int (softmax, "axis", owb_pass_opset (ctx) >= 13 ? -1 : 1);
  if (axis != -1 && axis != rank - 1)
    {
      owb_pass_near_miss (ctx, softmax, "attention pattern, but the Softmax is not over the last axis");
      return;
    }
  if (mm2_trans)
    {
      owb_pass_near_miss (ctx, mm2, "attention pattern, but the product with V transposes V");
      return;
    }
  const char *chain[] = { mm1->outputs[0], mask_add ? mask_add->outputs[0] : NULL, scores, probs, mm2->outputs[0] };
  for (guint i = 0; i < G_N_ELEMENTS (chain); i++)
    if (chain[i] && owb_pass_n_uses (ctx, chain[i]) != 1)
      {
        owb_pass_near_miss (ctx, softmax, "attention pattern, but '%s' is also used elsewhere", chain[i]);
        return;
      }
  _owb_pass_node_set_add (&set, mm1);
  _owb_pass_node_set_add (&set, softmax);
  _owb_pass_node_set_add (&set, mm2);

  Branch q = { 0 }, k = { 0 }, v = { 0 };
  double kv_scale = 1.0;
  if (!walk_branch (ctx, mm1->inputs[0], rank, TRUE, &scale, &q, &set, &why)
      || !walk_branch (ctx, mm1->inputs[1], rank, TRUE, &scale, &k, &set, &why)
      || !walk_branch (ctx, mm2->inputs[1], rank, FALSE, &kv_scale, &v, &set, &why))
    {
      owb_pass_near_miss (ctx, softmax, "attention pattern, but Q/K/V: %s", why);
      g_free (why);
      return;
    }
  if (mm1_trans)
    {
      /* FusedMatMul transB: K' is the value with its last two axes swapped. */
      int64_t swapped[4];
      for (int i = 0; i < rank; i++)
        swapped[i] = k.perm[i < rank - 2 ? i : (i == rank - 2 ? rank - 1 : rank - 2)];
      memcpy (k.perm, swapped, sizeof swapped);
    }
  if (!check_branch (ctx, &q, rank, 'q', &why) || !check_branch (ctx, &k, rank, 'k', &why)
      || !check_branch (ctx, &v, rank, 'v', &why))
    {
      owb_pass_near_miss (ctx, softmax, "attention pattern, but %s", why);
      g_free (why);
      return;
    }
  if (q.heads != k.heads || q.heads != v.heads || q.head_size != k.head_size || q.seq_first != k.seq_first
      || q.seq_first != v.seq_first)
    {
      owb_pass_near_miss (ctx, softmax, "attention pattern, but Q, K and V do not split into the same heads");
      return;
    }
  /* Batch and key/value sequence dims must agree between the sources. */
  const OwbValueType *qs = owb_pass_value_type (ctx, q.source), *ks = owb_pass_value_type (ctx, k.source),
                     *vs = owb_pass_value_type (ctx, v.source);
  int b_axis = q.seq_first ? 1 : 0, s_axis = q.seq_first ? 0 : 1;
  if (!_owb_pass_dim_eq (qs->dims[b_axis], ks->dims[b_axis]) || !_owb_pass_dim_eq (qs->dims[b_axis], vs->dims[b_axis])
      || !_owb_pass_dim_eq (ks->dims[s_axis], vs->dims[s_axis]))
    {
      owb_pass_near_miss (ctx, softmax, "attention pattern, but the batch or key/value sequence dims of Q, K, V differ");
      return;
    }

  /* The Transpose back to the sources' layout. */
  GPtrArray *out_readers = owb_pass_consumers (ctx, mm2->outputs[0]);
  OwbNode *back = out_readers->len == 1 ? g_ptr_array_index (out_readers, 0) : NULL;
  int64_t inverse[4];
  for (int i = 0; i < rank; i++)
    inverse[q.perm[i]] = i;
  int n_perm = 0;
  const int64_t *back_perm = owb_pass_is_op (back, "Transpose") ? owb_node_get_ints (back, "perm", &n_perm) : NULL;
  if (!back_perm || n_perm != rank || !perm_is (back_perm, rank, inverse))
    {
      owb_pass_near_miss (ctx, softmax, "attention pattern, but the output of '%s' is not transposed back to "
                                         "[%s, heads, head_size]",
                           owb_pass_label (mm2), q.seq_first ? "seq, batch" : "batch, seq");
      return;
    }
  _owb_pass_node_set_add (&set, back);

  /* The mask: added to the scores [B*H, S, L] or [B, H, S, L]; the op wants it broadcast to
   * [B, H, S, L]. A rank-3 mask with B*H rows is reshaped. */
  gboolean mask_reshape = FALSE;
  int64_t mask_shape[4];
  if (mask)
    {
      OwbValueType mt;
      const OwbValueType *mtp = owb_pass_value_type (ctx, mask);
      const OwbTensor *mc = owb_pass_constant_through_identity (ctx, mask);
      if (mtp)
        mt = *mtp;
      else if (mc)
        owb_tensor_get_value_type (mc, &mt);
      else
        mt.rank = -1;
      const OwbValueType *sum = owb_pass_value_type (ctx, mask_add->outputs[0]);
      if (mt.rank < 0 || mt.rank > rank || mt.dtype != st->dtype || !_owb_pass_same_dims (sum, st))
        {
          owb_pass_near_miss (ctx, mask_add, "attention pattern, but the mask '%s' is not a %s tensor that broadcasts "
                                              "to the scores",
                               mask, owb_data_type_name (st->dtype));
          return;
        }
      if (rank == 3 && mt.rank == 3 && !(known (mt.dims[0]) && mt.dims[0].value == 1))
        {
          if (!known (mt.dims[1]) || !known (mt.dims[2]))
            {
              owb_pass_near_miss (ctx, mask_add, "attention pattern, but the [batch*heads, ...] mask '%s' has unknown "
                                                  "dims",
                                   mask);
              return;
            }
          mask_reshape = TRUE;
          mask_shape[0] = -1;
          mask_shape[1] = q.heads;
          mask_shape[2] = mt.dims[1].value;
          mask_shape[3] = mt.dims[2].value;
        }
    }

  /* Which op: ours, or the standard Attention (portable, opset 23+). */
  int opset = owb_pass_opset (ctx);
  gboolean standard = ctx->options->portable;
  if (standard && opset < 23)
    {
      owb_pass_near_miss (ctx, softmax, "needs opset 23 for a standard Attention (model has %d); kept as is (portable)",
                           opset);
      return;
    }
  const char *srcs[3] = { q.source, k.source, v.source };
  OwbPassNodeSet slicing = { { NULL }, 0, FALSE };
  const char *packed = q.head_size == v.head_size ? packed_source (ctx, srcs, q.heads * q.head_size, &slicing) : NULL;
  if (standard)
    packed = NULL; /* Attention takes Q, K and V apart: the slicing stays. */
  for (int i = 0; packed && i < slicing.n; i++)
    _owb_pass_node_set_add (&set, slicing.nodes[i]);
  if (set.full)
    return;

  /* Rewrite. */
  GPtrArray *from = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; i < set.n; i++)
    g_ptr_array_add (from, g_strdup (owb_pass_label (set.nodes[i])));
  char *back_out = g_strdup (back->outputs[0]);
  char *in_q = g_strdup (packed ? packed : q.source), *in_k = g_strdup (packed ? "" : k.source),
       *in_v = g_strdup (packed ? "" : v.source);
  char *mask_in = g_strdup (mask);
  GPtrArray *read = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; i < set.n; i++)
    for (int j = 0; j < set.nodes[i]->n_inputs; j++)
      g_ptr_array_add (read, g_strdup (set.nodes[i]->inputs[j]));
  char *base = g_strdup (owb_pass_label (softmax));
  int64_t heads = q.heads, head_size_v = v.head_size;
  gboolean seq_first = q.seq_first;
  for (int i = 0; i < set.n; i++)
    owb_pass_remove_node (ctx, set.nodes[i]);

  if (mask_reshape)
    {
      /* Layers often share one mask: reuse a Reshape an earlier fusion made of it. */
      GPtrArray *mask_readers = owb_pass_consumers (ctx, mask_in);
      for (guint i = 0; i < mask_readers->len; i++)
        {
          OwbNode *r = g_ptr_array_index (mask_readers, i);
          int64_t shape[4];
          int n = 0;
          if (owb_pass_is_op (r, "Reshape") && r->n_inputs == 2 && strcmp (r->inputs[0], mask_in) == 0
              && ints_of (ctx, r->inputs[1], shape, 4, &n) && n == 4 && memcmp (shape, mask_shape, sizeof shape) == 0
              && owb_node_get_int (r, "allowzero", 0) == 0)
            {
              g_free (mask_in);
              mask_in = g_strdup (r->outputs[0]);
              mask_reshape = FALSE;
              break;
            }
        }
    }
  if (mask_reshape)
    {
      OwbNode *r = new_node (ctx, "Reshape", "", base);
      char *shape = add_shape_initializer (ctx, "attention_mask_shape", mask_shape, 4);
      char *out = owb_pass_scoped_name (ctx, base, "attention_mask_4d");
      owb_node_add_input (r, mask_in);
      owb_node_add_input (r, shape);
      owb_node_add_output (r, out);
      owb_pass_add_node (ctx, r, (const char *const *) from->pdata, from->len);
      g_free (mask_in);
      g_free (shape);
      mask_in = out;
    }
  char *fused_out = owb_pass_scoped_name (ctx, base, "attention_output");
  OwbNode *fused;
  if (standard)
    {
      if (seq_first)
        {
          char *tq = transposed (ctx, in_q, base, "attention_q", from),
               *tk = transposed (ctx, in_k, base, "attention_k", from),
               *tv = transposed (ctx, in_v, base, "attention_v", from);
          g_free (in_q);
          g_free (in_k);
          g_free (in_v);
          in_q = tq;
          in_k = tk;
          in_v = tv;
        }
      fused = new_node (ctx, "Attention", "", base);
      owb_node_add_attribute (fused, "q_num_heads", OWB_ATTR_INT)->i = heads;
      owb_node_add_attribute (fused, "kv_num_heads", OWB_ATTR_INT)->i = heads;
    }
  else
    {
      owb_model_set_opset (ctx->model, OWB_DOMAIN, 1);
      fused = new_node (ctx, "MultiHeadAttention", OWB_DOMAIN, base);
      owb_node_add_attribute (fused, "num_heads", OWB_ATTR_INT)->i = heads;
      if (seq_first)
        owb_node_add_attribute (fused, "seq_first", OWB_ATTR_INT)->i = 1;
    }
  owb_node_add_attribute (fused, "scale", OWB_ATTR_FLOAT)->f = (float) scale;
  owb_node_add_input (fused, in_q);
  owb_node_add_input (fused, in_k);
  owb_node_add_input (fused, in_v);
  if (mask_in)
    owb_node_add_input (fused, mask_in);
  char *attention_out = standard && seq_first ? owb_pass_scoped_name (ctx, base, "attention_output_bsd") : g_strdup (fused_out);
  owb_node_add_output (fused, attention_out);
  owb_pass_add_node (ctx, fused, (const char *const *) from->pdata, from->len);
  if (standard && seq_first)
    add_swap_first_two (ctx, attention_out, fused_out, base, from);

  /* The fused output is [.., .., heads * head_size]; the old one was split into heads. Readers
   * that are Reshapes to an explicit shape take it as is; otherwise a Reshape splits it again. */
  GPtrArray *old_readers = owb_pass_consumers (ctx, back_out);
  gboolean direct = old_readers->len > 0 && owb_pass_n_uses (ctx, back_out) == old_readers->len;
  for (guint i = 0; direct && i < old_readers->len; i++)
    {
      OwbNode *r = g_ptr_array_index (old_readers, i);
      int64_t shape[OWB_MAX_RANK];
      int n = 0;
      direct = owb_pass_is_op (r, "Reshape") && r->n_inputs >= 2 && strcmp (r->inputs[0], back_out) == 0
               && strcmp (r->inputs[1], back_out) != 0 && ints_of (ctx, r->inputs[1], shape, OWB_MAX_RANK, &n);
      for (int d = 0; direct && d < n; d++)
        direct = shape[d] != 0;
    }
  if (direct)
    owb_pass_replace_uses (ctx, back_out, fused_out);
  else
    {
      int64_t split[4] = { 0, 0, 0, 0 };
      int n = rank;
      if (rank == 3)
        {
          split[1] = -1;
          split[2] = head_size_v;
        }
      else
        {
          split[2] = heads;
          split[3] = head_size_v;
        }
      OwbNode *r = new_node (ctx, "Reshape", "", base);
      char *shape = add_shape_initializer (ctx, "attention_output_shape", split, n);
      owb_node_add_input (r, fused_out);
      owb_node_add_input (r, shape);
      owb_node_add_output (r, back_out);
      owb_pass_add_node (ctx, r, (const char *const *) from->pdata, from->len);
      g_free (shape);
    }

  /* Constant nodes of the scales that nothing reads now. */
  for (guint i = 0; i < read->len; i++)
    {
      OwbNode *c = owb_pass_producer (ctx, g_ptr_array_index (read, i));
      if (owb_pass_is_op (c, "Constant") && owb_pass_n_uses (ctx, c->outputs[0]) == 0)
        owb_pass_remove_node (ctx, c);
    }
  g_ptr_array_unref (read);
  g_ptr_array_unref (from);
  g_free (attention_out);
  g_free (fused_out);
  g_free (back_out);
  g_free (in_q);
  g_free (in_k);
  g_free (in_v);
  g_free (mask_in);
  g_free (base);
}

static gboolean
is_softmax (const OwbNode *node)
{
  return owb_pass_is_op (node, "Softmax") && node->n_inputs == 1 && node->n_outputs == 1;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  (void) error;
  _owb_pass_fuse_each_anchor (ctx, is_softmax, try_fuse);
  owb_pass_prune_initializers (ctx);
  return TRUE;
}

const OwbPass _owb_pass_fuse_attention = {
  "fuse_attention",
  OWB_OPTIMIZE_EXTENDED,
  "turns the exported multi-head attention subgraph into one attention op",
  run,
};
