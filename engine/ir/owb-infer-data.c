/* owb-infer-data.c: data propagation for load-time shape inference. The values of the small
 * integer tensors that exporters compute from shapes (Shape -> Gather -> Unsqueeze -> Concat ->
 * Reshape, the attention heads' view of a BERT) are carried element by element, known or named
 * after a symbolic dim, so that Reshape, Expand, ConstantOfShape, Tile and Range get their output
 * dims at load instead of "?". Run time does not need this: every value is there. */
#include "owb-ir-private.h"

#include <string.h>

static OwbInferElement
element_known (int64_t v)
{
  return (OwbInferElement) { v, NULL, TRUE };
}

static OwbInferElement
element_of_dim (OwbDim d)
{
  if (owb_dim_is_known (d))
    return element_known (d.value);
  return (OwbInferElement) { -1, d.param, FALSE };
}

static gboolean
is_int_type (OwbDataType t)
{
  return t == OWB_TYPE_INT64 || t == OWB_TYPE_INT32;
}

/* The types data is carried in: shapes' integers, and the booleans of PyTorch's expand pattern,
 * Where (Equal (shape, -1), ones, shape), as 0 and 1. */
static gboolean
is_data_type (OwbDataType t)
{
  return is_int_type (t) || t == OWB_TYPE_BOOL;
}

gboolean
_owb_infer_data_from_tensor (const OwbTensor *t, OwbInferData *out)
{
  if (!t || t->kind != OWB_VALUE_TENSOR || !is_data_type (t->dtype) || t->rank > 1 || t->nelems > OWB_INFER_DATA_MAX
      || t->nelems < 0)
    return FALSE;
  out->rank = t->rank;
  out->n = (int) t->nelems;
  for (int i = 0; i < out->n; i++)
    out->elements[i] = element_known (owb_tensor_get_int64 (t, i));
  return TRUE;
}

gboolean
_owb_infer_data_all_known (const OwbInferData *d)
{
  for (int i = 0; i < d->n; i++)
    if (!d->elements[i].known)
      return FALSE;
  return TRUE;
}

/* All elements known: their values in v (at most OWB_INFER_DATA_MAX). */
static gboolean
known_values (const OwbInferData *d, int64_t *v)
{
  if (!d || !_owb_infer_data_all_known (d))
    return FALSE;
  for (int i = 0; i < d->n; i++)
    v[i] = d->elements[i].value;
  return TRUE;
}

static gboolean
known_scalar (const OwbInferData *d, int64_t *v)
{
  return d && d->n == 1 && d->elements[0].known && (*v = d->elements[0].value, TRUE);
}

static gboolean
propagate_shape (const OwbNode *node, int opset, const OwbValueType *x, OwbInferData *out)
{
  if (!x || x->kind != OWB_VALUE_TENSOR || x->rank < 0)
    return FALSE;
  int64_t r = x->rank;
  int64_t start = opset >= 15 ? owb_node_get_int (node, "start", 0) : 0;
  int64_t end = opset >= 15 ? owb_node_get_int (node, "end", r) : r;
  start = CLAMP (start < 0 ? start + r : start, 0, r);
  end = CLAMP (end < 0 ? end + r : end, 0, r);
  out->rank = 1;
  out->n = 0;
  for (int64_t i = start; i < end; i++)
    out->elements[out->n++] = element_of_dim (x->dims[i]);
  return TRUE;
}

static gboolean
propagate_size (const OwbValueType *x, OwbInferData *out)
{
  if (!x || x->kind != OWB_VALUE_TENSOR || x->rank < 0)
    return FALSE;
  int64_t count = 1;
  for (int i = 0; i < x->rank; i++)
    {
      if (!owb_dim_is_known (x->dims[i]))
        return FALSE;
      if (x->dims[i].value != 0 && count > G_MAXINT64 / x->dims[i].value)
        return FALSE;
      count *= x->dims[i].value;
    }
  out->rank = 0;
  out->n = 1;
  out->elements[0] = element_known (count);
  return TRUE;
}

static gboolean
propagate_gather (const OwbNode *node, const OwbInferData *data, const OwbInferData *indices, OwbInferData *out)
{
  if (!data || !indices || data->rank != 1)
    return FALSE;
  int64_t axis = owb_node_get_int (node, "axis", 0);
  if (axis != 0 && axis != -1)
    return FALSE;
  int64_t idx[OWB_INFER_DATA_MAX];
  if (!known_values (indices, idx))
    return FALSE;
  out->rank = indices->rank;
  out->n = indices->n;
  for (int i = 0; i < indices->n; i++)
    {
      int64_t k = idx[i] < 0 ? idx[i] + data->n : idx[i];
      if (k < 0 || k >= data->n)
        return FALSE; /* the kernel reports it at run time */
      out->elements[i] = data->elements[k];
    }
  return TRUE;
}

/* ONNX's Slice on one axis of length n: the first index and the count, as the kernel clamps. */
static gboolean
slice_range (int64_t n, int64_t start, int64_t end, int64_t step, int64_t *first, int64_t *count)
{
  if (step == 0)
    return FALSE;
  if (step > 0)
    {
      start = start < -n ? 0 : start < 0 ? start + n : MIN (start, n);
      end = end < -n ? 0 : end < 0 ? end + n : MIN (end, n);
      *count = end > start ? (end - start + step - 1) / step : 0;
    }
  else
    {
      start = start < -n ? -1 : start < 0 ? start + n : MIN (start, n - 1);
      end = end < -n ? -1 : end < 0 ? end + n : MIN (end, n - 1);
      *count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
    }
  *first = start;
  return TRUE;
}

static gboolean
propagate_slice (const OwbNode *node, int opset, const OwbInferData *const *in, int n_in, OwbInferData *out)
{
  const OwbInferData *data = in[0];
  if (!data || data->rank != 1)
    return FALSE;
  int64_t start, end, step = 1, axis = 0;
  if (opset < 10)
    {
      int ns = 0, ne = 0, na = 0;
      const int64_t *s = owb_node_get_ints (node, "starts", &ns), *e = owb_node_get_ints (node, "ends", &ne);
      const int64_t *a = owb_node_get_ints (node, "axes", &na);
      if (!s || !e || ns != 1 || ne != 1 || (a && (na != 1 || (a[0] != 0 && a[0] != -1))))
        return FALSE;
      start = s[0];
      end = e[0];
    }
  else
    {
      if (n_in < 3 || !known_scalar (in[1], &start) || !known_scalar (in[2], &end))
        return FALSE;
      if (n_in > 3 && in[3] && (!known_scalar (in[3], &axis) || (axis != 0 && axis != -1)))
        return FALSE;
      if (n_in > 4 && in[4] && !known_scalar (in[4], &step))
        return FALSE;
    }
  int64_t first, count;
  if (!slice_range (data->n, start, end, step, &first, &count))
    return FALSE;
  out->rank = 1;
  out->n = (int) count;
  for (int64_t i = 0; i < count; i++)
    out->elements[i] = data->elements[first + i * step];
  return TRUE;
}

static gboolean
propagate_concat (const OwbNode *node, const OwbInferData *const *in, int n_in, OwbInferData *out)
{
  int64_t axis = owb_node_get_int (node, "axis", 0);
  if (axis != 0 && axis != -1)
    return FALSE;
  out->rank = 1;
  out->n = 0;
  for (int i = 0; i < n_in; i++)
    {
      if (!in[i] || in[i]->rank != 1 || out->n + in[i]->n > OWB_INFER_DATA_MAX)
        return FALSE;
      memcpy (out->elements + out->n, in[i]->elements, in[i]->n * sizeof (OwbInferElement));
      out->n += in[i]->n;
    }
  return TRUE;
}

/* Integer arithmetic as the CPU kernel does it (Div truncates like C); FALSE where the result
 * is not certain (a zero divisor, overflow), which leaves the element unknown. */
static gboolean
arith (char op, int64_t a, int64_t b, int64_t *r)
{
  switch (op)
    {
    case '+':
      return !__builtin_add_overflow (a, b, r);
    case '-':
      return !__builtin_sub_overflow (a, b, r);
    case '*':
      return !__builtin_mul_overflow (a, b, r);
    case '/':
      if (b == 0 || (b == -1 && a == G_MININT64))
        return FALSE;
      *r = a / b;
      return TRUE;
    case '<':
      *r = MIN (a, b);
      return TRUE;
    case '>':
      *r = MAX (a, b);
      return TRUE;
    default:
      return FALSE;
    }
}

/* A named dim combined with a neutral constant stays that dim: batch * 1, batch + 0, batch / 1. */
static OwbInferElement
arith_element (char op, OwbInferElement a, OwbInferElement b)
{
  OwbInferElement unknown = { -1, NULL, FALSE };
  if (a.known && b.known)
    {
      int64_t r;
      return arith (op, a.value, b.value, &r) ? element_known (r) : unknown;
    }
  if (!a.known && a.param && b.known
      && (((op == '+' || op == '-') && b.value == 0) || ((op == '*' || op == '/') && b.value == 1)))
    return a;
  if (!b.known && b.param && a.known && ((op == '+' && a.value == 0) || (op == '*' && a.value == 1)))
    return b;
  if (!a.known && !b.known && a.param && a.param == b.param && (op == '<' || op == '>'))
    return a;
  return unknown;
}

static gboolean
propagate_arith (char op, const OwbInferData *a, const OwbInferData *b, OwbInferData *out)
{
  if (!a || !b || (a->n != b->n && a->n != 1 && b->n != 1))
    return FALSE;
  out->rank = MAX (a->rank, b->rank);
  out->n = MAX (a->n, b->n);
  for (int i = 0; i < out->n; i++)
    out->elements[i] = arith_element (op, a->elements[a->n == 1 ? 0 : i], b->elements[b->n == 1 ? 0 : i]);
  return TRUE;
}

/* Equal: known elements compared, and a named dim equals itself. */
static gboolean
propagate_equal (const OwbInferData *a, const OwbInferData *b, OwbInferData *out)
{
  if (!a || !b || (a->n != b->n && a->n != 1 && b->n != 1))
    return FALSE;
  out->rank = MAX (a->rank, b->rank);
  out->n = MAX (a->n, b->n);
  for (int i = 0; i < out->n; i++)
    {
      OwbInferElement x = a->elements[a->n == 1 ? 0 : i], y = b->elements[b->n == 1 ? 0 : i];
      if (x.known && y.known)
        out->elements[i] = element_known (x.value == y.value);
      else if (!x.known && !y.known && x.param && x.param == y.param)
        out->elements[i] = element_known (1);
      else
        out->elements[i] = (OwbInferElement) { -1, NULL, FALSE };
    }
  return TRUE;
}

/* Where with a known condition picks each element from x or y. */
static gboolean
propagate_where (const OwbInferData *c, const OwbInferData *x, const OwbInferData *y, OwbInferData *out)
{
  if (!c || !x || !y)
    return FALSE;
  int n = MAX (c->n, MAX (x->n, y->n));
  if ((c->n != n && c->n != 1) || (x->n != n && x->n != 1) || (y->n != n && y->n != 1))
    return FALSE;
  out->rank = MAX (c->rank, MAX (x->rank, y->rank));
  out->n = n;
  for (int i = 0; i < n; i++)
    {
      OwbInferElement e = c->elements[c->n == 1 ? 0 : i];
      if (!e.known)
        out->elements[i] = (OwbInferElement) { -1, NULL, FALSE };
      else
        out->elements[i] = e.value ? x->elements[x->n == 1 ? 0 : i] : y->elements[y->n == 1 ? 0 : i];
    }
  return TRUE;
}

static gboolean
propagate_range (const OwbInferData *const *in, OwbInferData *out)
{
  int64_t start, limit, delta;
  if (!known_scalar (in[0], &start) || !known_scalar (in[1], &limit) || !known_scalar (in[2], &delta) || delta == 0)
    return FALSE;
  __int128 diff = (__int128) limit - start;
  __int128 c = delta > 0 ? (diff + delta - 1) / delta : (diff + delta + 1) / delta;
  if (c <= 0)
    c = 0;
  if (c > OWB_INFER_DATA_MAX)
    return FALSE;
  out->rank = 1;
  out->n = (int) c;
  for (int i = 0; i < out->n; i++)
    out->elements[i] = element_known (start + i * delta);
  return TRUE;
}

static gboolean
propagate_constant_of_shape (const OwbNode *node, const OwbInferData *shape, OwbInferData *out)
{
  int64_t dims[OWB_INFER_DATA_MAX];
  if (!known_values (shape, dims) || shape->n > 1)
    return FALSE;
  const OwbAttribute *value = owb_node_get_attribute (node, "value");
  if (!value || value->type != OWB_ATTR_TENSOR || !value->t || value->t->nelems != 1 || !is_int_type (value->t->dtype))
    return FALSE; /* the default value is float 0 */
  int64_t count = shape->n == 0 ? 1 : dims[0];
  if (count < 0 || count > OWB_INFER_DATA_MAX)
    return FALSE;
  out->rank = shape->n;
  out->n = (int) count;
  for (int i = 0; i < out->n; i++)
    out->elements[i] = element_known (owb_tensor_get_int64 (value->t, 0));
  return TRUE;
}

/* Ops that only give the elements another shape (Identity, Reshape, Squeeze, Unsqueeze, Flatten). */
static gboolean
propagate_same_elements (const OwbInferData *in, const OwbValueType *out_type, OwbInferData *out)
{
  if (!in || out_type->rank < 0 || out_type->rank > 1)
    return FALSE;
  if (out_type->rank == 0 ? in->n != 1 : owb_dim_is_known (out_type->dims[0]) && out_type->dims[0].value != in->n)
    return FALSE;
  *out = *in;
  out->rank = out_type->rank;
  return TRUE;
}

/* Casts between the integer types keep the elements; int32 wraps as the kernel does. */
static gboolean
propagate_cast (const OwbInferData *in, const OwbValueType *out_type, OwbInferData *out)
{
  if (!in)
    return FALSE;
  *out = *in;
  if (out_type->dtype == OWB_TYPE_INT32)
    for (int i = 0; i < out->n; i++)
      if (out->elements[i].known)
        out->elements[i].value = (int32_t) out->elements[i].value;
  return TRUE;
}

gboolean
_owb_infer_propagate (const OwbNode *node, int opset, const OwbValueType *const *in_types,
                      const OwbInferData *const *in, const OwbValueType *out_type, OwbInferData *out)
{
  const char *op = node->op_type;
  if (!_owb_domain_is_default (node->domain) || node->n_outputs != 1 || out_type->kind != OWB_VALUE_TENSOR
      || out_type->rank > 1 || !(is_int_type (out_type->dtype) || (out_type->dtype == OWB_TYPE_BOOL && strcmp (op, "Equal") == 0)))
    return FALSE;
  int n = node->n_inputs;
  if (n < 1)
    return FALSE;
  gboolean ok = FALSE;
  if (strcmp (op, "Shape") == 0)
    ok = propagate_shape (node, opset, in_types[0], out);
  else if (strcmp (op, "Size") == 0)
    ok = propagate_size (in_types[0], out);
  else if (strcmp (op, "Gather") == 0 && n == 2)
    ok = propagate_gather (node, in[0], in[1], out);
  else if (strcmp (op, "Slice") == 0)
    ok = propagate_slice (node, opset, in, n, out);
  else if (strcmp (op, "Concat") == 0)
    ok = propagate_concat (node, in, n, out);
  else if (strcmp (op, "Cast") == 0)
    ok = propagate_cast (in[0], out_type, out);
  else if (strcmp (op, "Identity") == 0 || strcmp (op, "Reshape") == 0 || strcmp (op, "Squeeze") == 0
           || strcmp (op, "Unsqueeze") == 0 || strcmp (op, "Flatten") == 0)
    ok = propagate_same_elements (in[0], out_type, out);
  else if (n == 2 && (strcmp (op, "Add") == 0 || strcmp (op, "Sub") == 0 || strcmp (op, "Mul") == 0
                      || strcmp (op, "Div") == 0 || strcmp (op, "Min") == 0 || strcmp (op, "Max") == 0))
    {
      char c = op[0] == 'A' ? '+' : op[0] == 'S' ? '-' : op[0] == 'D' ? '/' : strcmp (op, "Mul") == 0 ? '*'
                                                                              : op[1] == 'i' ? '<' : '>';
      ok = propagate_arith (c, in[0], in[1], out);
    }
  else if (strcmp (op, "Equal") == 0 && n == 2)
    ok = propagate_equal (in[0], in[1], out);
  else if (strcmp (op, "Where") == 0 && n == 3)
    ok = propagate_where (in[0], in[1], in[2], out);
  else if (strcmp (op, "Range") == 0 && n == 3)
    ok = propagate_range (in, out);
  else if (strcmp (op, "ConstantOfShape") == 0)
    ok = propagate_constant_of_shape (node, in[0], out);
  if (!ok)
    return FALSE;
  /* What inference said of the output holds: a rank or length that disagrees means a rule is
   * wrong for this node, and nothing is carried rather than a wrong value. */
  if (out_type->rank >= 0 && out_type->rank != out->rank)
    return FALSE;
  if (out->rank == 0 && out->n != 1)
    return FALSE;
  if (out_type->rank == 1 && owb_dim_is_known (out_type->dims[0]) && out_type->dims[0].value != out->n)
    return FALSE;
  if (out_type->dtype == OWB_TYPE_INT32)
    for (int i = 0; i < out->n; i++)
      if (out->elements[i].known && (out->elements[i].value < G_MININT32 || out->elements[i].value > G_MAXINT32))
        out->elements[i] = (OwbInferElement) { -1, NULL, FALSE };
  return TRUE;
}
