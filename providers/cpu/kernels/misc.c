/* misc.c: CPU kernels of the misc op family: losses, CumSum and CumProd, Unique, Compress,
 * ReverseSequence, EyeLike, random generators, BitCast, Det, MaxUnpool, CenterCropPad, Col2Im. */
#include "../cpu-kernels-private.h"
#include "../cpu-random-private.h"

#include <math.h>
#include <string.h>

/* ---- helpers ---- */

/* Zeroes a whole tensor (strings become NULL, read as ""). */
static void
clear_tensor (OwbTensor *t)
{
  if (t->dtype == OWB_TYPE_STRING)
    {
      char **d = t->data;
      for (int64_t i = 0; i < t->nelems; i++)
        g_clear_pointer (&d[i], g_free);
    }
  else if (t->nbytes)
    memset (t->data, 0, t->nbytes);
}

static gboolean
output_wanted (OwbKernelContext *ctx, int i)
{
  return i < ctx->n_outputs && (!ctx->output_wanted || ctx->output_wanted[i] || ctx->outputs[i]);
}

/* Output i with this shape: the one inference allocated if it matches, else a new one. */
static OwbTensor *
output_with_shape (OwbKernelContext *ctx, int i, OwbDataType dtype, int rank, const int64_t *dims, GError **error)
{
  OwbTensor *t = ctx->outputs[i];
  if (t && t->dtype == dtype && t->rank == rank && memcmp (t->dims, dims, sizeof (int64_t) * rank) == 0)
    return t;
  return owb_kernel_context_new_output (ctx, i, dtype, rank, dims, error);
}

static OwbTensor *
require_output (OwbKernelContext *ctx, int i, GError **error)
{
  if (!ctx->outputs[i])
    owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "the shape of output %d is not known", i);
  return ctx->outputs[i];
}

static inline int64_t
index_at (const OwbTensor *t, int64_t i)
{
  return t->dtype == OWB_TYPE_INT32 ? ((const int32_t *) t->data)[i] : ((const int64_t *) t->data)[i];
}

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ---- */

typedef struct {
  int64_t n, c, d;     /* input viewed as (N, C, D) and target as (N, D) */
  gboolean none, mean;
  gboolean has_ignore;
  int64_t ignore;
} LossShape;

/* Log-softmax over axis 1 of (N, C, D); tmp holds 2 * D doubles. Loops keep D innermost. */
#define DEFINE_LOG_SOFTMAX(T, N)                                                                               \
  static void log_softmax_##N (const T *x, T *y, const LossShape *s, double *tmp)                              \
  {                                                                                                            \
    int64_t c = s->c, d = s->d;                                                                                \
    double *mx = tmp, *sum = tmp + d;                                                                          \
    for (int64_t n = 0; n < s->n; n++)                                                                         \
      {                                                                                                        \
        const T *xn = x + n * c * d;                                                                           \
        T *yn = y + n * c * d;                                                                                 \
        for (int64_t j = 0; j < d; j++)                                                                        \
          mx[j] = xn[j], sum[j] = 0.0;                                                                         \
        for (int64_t k = 1; k < c; k++)                                                                        \
          for (int64_t j = 0; j < d; j++)                                                                      \
            mx[j] = MAX (mx[j], (double) xn[k * d + j]);                                                       \
        for (int64_t k = 0; k < c; k++)                                                                        \
          for (int64_t j = 0; j < d; j++)                                                                      \
            sum[j] += exp ((double) xn[k * d + j] - mx[j]);                                                    \
        for (int64_t j = 0; j < d; j++)                                                                        \
          sum[j] = mx[j] + log (sum[j]);                                                                       \
        for (int64_t k = 0; k < c; k++)                                                                        \
          for (int64_t j = 0; j < d; j++)                                                                      \
            yn[k * d + j] = (T) ((double) xn[k * d + j] - sum[j]);                                             \
      }                                                                                                        \
  }
OWB_CPU_FOR_FLOATS (DEFINE_LOG_SOFTMAX)

/* The loss from log-probabilities lp (N, C, D): mean divides by the sum of the weights taken. */
#define DEFINE_NLL(T, N)                                                                                       \
  static gboolean nll_##N (OwbKernelContext *ctx, const T *lp, const OwbTensor *target, const T *weight,       \
                           T *out, const LossShape *s, GError **error)                                         \
  {                                                                                                            \
    double total = 0.0, wsum = 0.0;                                                                            \
    for (int64_t n = 0; n < s->n; n++)                                                                         \
      for (int64_t j = 0; j < s->d; j++)                                                                       \
        {                                                                                                      \
          int64_t i = n * s->d + j, t = index_at (target, i);                                                  \
          double l = 0.0, w = 0.0;                                                                             \
          if (!(s->has_ignore && t == s->ignore))                                                              \
            {                                                                                                  \
              if (t < 0 || t >= s->c)                                                                          \
                {                                                                                              \
                  owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,                                \
                                        "target %" G_GINT64_FORMAT " at %" G_GINT64_FORMAT                     \
                                        " is outside [0, %" G_GINT64_FORMAT ")", t, i, s->c);                  \
                  return FALSE;                                                                                \
                }                                                                                              \
              w = weight ? (double) weight[t] : 1.0;                                                           \
              l = -w * (double) lp[(n * s->c + t) * s->d + j];                                                 \
            }                                                                                                  \
          if (s->none)                                                                                         \
            out[i] = (T) l;                                                                                    \
          total += l;                                                                                          \
          wsum += w;                                                                                           \
        }                                                                                                      \
    if (!s->none)                                                                                              \
      out[0] = (T) (s->mean ? total / wsum : total);                                                           \
    return TRUE;                                                                                               \
  }
OWB_CPU_FOR_FLOATS (DEFINE_NLL)

static gboolean
loss_compute (OwbKernelContext *ctx, GError **error)
{
  gboolean sce = strcmp (ctx->node->op_type, "SoftmaxCrossEntropyLoss") == 0;
  const OwbTensor *x = ctx->inputs[0], *target = ctx->inputs[1];
  const OwbTensor *weight = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  OwbTensor *out = require_output (ctx, 0, error);
  if (!out)
    return FALSE;
  gboolean shapes_ok = x->rank >= 2 && target->rank == x->rank - 1 && target->dims[0] == x->dims[0]
                       && (target->dtype == OWB_TYPE_INT32 || target->dtype == OWB_TYPE_INT64)
                       && out->dtype == x->dtype;
  for (int i = 1; shapes_ok && i < target->rank; i++)
    shapes_ok = target->dims[i] == x->dims[i + 1];
  if (!shapes_ok || (weight && (weight->nelems != x->dims[1] || weight->dtype != x->dtype)))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input, target and weight shapes do not agree");
      return FALSE;
    }
  const char *reduction = owb_node_get_string (ctx->node, "reduction", "mean");
  const OwbAttribute *ignore = owb_node_get_attribute (ctx->node, "ignore_index");
  LossShape s = { x->dims[0], x->dims[1], _owb_cpu_product (x->dims, 2, x->rank), strcmp (reduction, "none") == 0,
                  strcmp (reduction, "mean") == 0, ignore && ignore->type == OWB_ATTR_INT, ignore ? ignore->i : 0 };
  if (out->nelems != (s.none ? s.n * s.d : 1))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "the loss output has the wrong size");
      return FALSE;
    }
  OwbTensor *log_prob = sce && ctx->n_outputs > 1 ? ctx->outputs[1] : NULL;
  if (log_prob && (log_prob->dtype != x->dtype || !owb_tensor_same_shape (log_prob, x)))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "log_prob must have the shape of the scores");
      return FALSE;
    }
  void *lp = x->data, *scratch = NULL;
  double *tmp = NULL;
  if (sce && x->nelems > 0)
    {
      lp = log_prob ? log_prob->data
                    : (scratch = _owb_cpu_scratch_new (ctx, (int64_t) x->nbytes, 1, "log-probabilities", error));
      if (!lp)
        return FALSE;
      tmp = g_new (double, 2 * s.d);
    }
  gboolean ok;
  if (x->dtype == OWB_TYPE_DOUBLE)
    {
      if (tmp)
        log_softmax_DOUBLE (x->data, lp, &s, tmp);
      ok = nll_DOUBLE (ctx, lp, target, weight ? weight->data : NULL, out->data, &s, error);
    }
  else if (x->dtype == OWB_TYPE_FLOAT)
    {
      if (tmp)
        log_softmax_FLOAT (x->data, lp, &s, tmp);
      ok = nll_FLOAT (ctx, lp, target, weight ? weight->data : NULL, out->data, &s, error);
    }
  else
    ok = _owb_cpu_unsupported_type (ctx, x->dtype, error);
  g_free (scratch);
  g_free (tmp);
  return ok;
}

/* ---- CumProd ---- */

/* ---- CumSum, CumProd ---- */

/* Integer sums and products wrap around (through unsigned arithmetic) instead of overflowing. */
#define WRAP_OP(T, a, op, b)                                                                                   \
  _Generic ((T) 0, float: (a) op (b), double: (a) op (b), default: (T) ((uint64_t) (a) op (uint64_t) (b)))

/* The running sum or product along the middle axis of [outer, len, inner]; exclusive starts from
 * the identity, reverse runs from the end. */
#define DEFINE_SCAN(T, N, NAME, IDENTITY, OP)                                                                  \
  static void NAME##_##N (const T *x, T *y, int64_t outer, int64_t len, int64_t inner, gboolean exclusive,     \
                          gboolean reverse)                                                                    \
  {                                                                                                            \
    for (int64_t o = 0; o < outer; o++)                                                                        \
      {                                                                                                        \
        const T *xo = x + o * len * inner;                                                                     \
        T *yo = y + o * len * inner;                                                                           \
        for (int64_t s = 0; s < len; s++)                                                                      \
          {                                                                                                    \
            int64_t at = reverse ? len - 1 - s : s, prev = reverse ? at + 1 : at - 1;                          \
            T *yr = yo + at * inner;                                                                           \
            if (s == 0)                                                                                        \
              {                                                                                                \
                for (int64_t i = 0; i < inner; i++)                                                            \
                  yr[i] = exclusive ? (T) IDENTITY : xo[at * inner + i];                                       \
                continue;                                                                                      \
              }                                                                                                \
            const T *yp = yo + prev * inner, *xr = xo + (exclusive ? prev : at) * inner;                       \
            for (int64_t i = 0; i < inner; i++)                                                                \
              yr[i] = WRAP_OP (T, yp[i], OP, xr[i]);                                                           \
          }                                                                                                    \
      }                                                                                                        \
  }
#define DEFINE_CUMSUM(T, N) DEFINE_SCAN (T, N, cumsum, 0, +)
#define DEFINE_CUMPROD(T, N) DEFINE_SCAN (T, N, cumprod, 1, *)
OWB_CPU_FOR_NUMERIC (DEFINE_CUMSUM)
OWB_CPU_FOR_NUMERIC (DEFINE_CUMPROD)

static gboolean
scan_compute (OwbKernelContext *ctx, gboolean product, GError **error)
{
  const OwbTensor *x = ctx->inputs[0], *axis = ctx->inputs[1];
  OwbTensor *out = require_output (ctx, 0, error);
  if (!out)
    return FALSE;
  if (axis->nelems != 1 || !owb_tensor_same_shape (x, out) || x->dtype != out->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "axis must be a scalar");
      return FALSE;
    }
  /* CumProd (opset 26) scans a scalar as one element; CumSum (opset 11) needs an axis. */
  int64_t one = 1;
  const int64_t *dims = x->rank ? x->dims : &one;
  int rank = product ? MAX (x->rank, 1) : x->rank;
  int a;
  if (!_owb_cpu_normalize_axis (ctx, owb_tensor_get_int64 (axis, 0), rank, &a, error))
    return FALSE;
  gboolean exclusive = owb_node_get_int (ctx->node, "exclusive", 0) != 0;
  gboolean reverse = owb_node_get_int (ctx->node, "reverse", 0) != 0;
  int64_t outer = _owb_cpu_product (dims, 0, a), len = dims[a], inner = _owb_cpu_product (dims, a + 1, rank);
  if (x->nelems == 0)
    return TRUE;
  switch (x->dtype)
    {
#define CASE(T, N)                                                                                             \
  case OWB_TYPE_##N:                                                                                           \
    (product ? cumprod_##N : cumsum_##N) (x->data, out->data, outer, len, inner, exclusive, reverse);          \
    return TRUE;
      OWB_CPU_FOR_NUMERIC (CASE)
#undef CASE
    default:
      return _owb_cpu_unsupported_type (ctx, x->dtype, error);
    }
}

static gboolean
cumsum_compute (OwbKernelContext *ctx, GError **error)
{
  return scan_compute (ctx, FALSE, error);
}

static gboolean
cumprod_compute (OwbKernelContext *ctx, GError **error)
{
  return scan_compute (ctx, TRUE, error);
}

/* ---- Unique ---- */

/* Lexicographic comparison of two slices of len elements; NaNs sort last and equal each other,
 * as numpy.unique does. */
typedef int (*SliceCompare) (const void *a, const void *b, int64_t len);

#define DEFINE_COMPARE_INT(T, N)                                                                               \
  static int compare_##N (const void *pa, const void *pb, int64_t len)                                         \
  {                                                                                                            \
    const T *a = pa, *b = pb;                                                                                  \
    for (int64_t i = 0; i < len; i++)                                                                          \
      if (a[i] != b[i])                                                                                        \
        return a[i] < b[i] ? -1 : 1;                                                                           \
    return 0;                                                                                                  \
  }
#define DEFINE_COMPARE_FLOAT(T, N)                                                                             \
  static int compare_##N (const void *pa, const void *pb, int64_t len)                                         \
  {                                                                                                            \
    const T *a = pa, *b = pb;                                                                                  \
    for (int64_t i = 0; i < len; i++)                                                                          \
      {                                                                                                        \
        if (a[i] < b[i])                                                                                       \
          return -1;                                                                                           \
        if (a[i] > b[i])                                                                                       \
          return 1;                                                                                            \
        gboolean na = isnan (a[i]), nb = isnan (b[i]);                                                         \
        if (na != nb)                                                                                          \
          return na ? 1 : -1;                                                                                  \
      }                                                                                                        \
    return 0;                                                                                                  \
  }
OWB_CPU_FOR_INTS (DEFINE_COMPARE_INT)
OWB_CPU_FOR_FLOATS (DEFINE_COMPARE_FLOAT)
DEFINE_COMPARE_INT (gboolean_u8, BOOL)

static int
compare_STRING (const void *pa, const void *pb, int64_t len)
{
  char *const *a = pa, *const *b = pb;
  for (int64_t i = 0; i < len; i++)
    {
      int c = strcmp (a[i] ? a[i] : "", b[i] ? b[i] : "");
      if (c)
        return c < 0 ? -1 : 1;
    }
  return 0;
}

typedef struct {
  const char *slab; /* slice k at slab + k * len * es */
  int64_t len;
  gsize es;
  SliceCompare compare;
} UniqueSort;

static gint
unique_order (gconstpointer pa, gconstpointer pb, gpointer data)
{
  const UniqueSort *u = data;
  int64_t a = *(const int64_t *) pa, b = *(const int64_t *) pb;
  int c = u->compare (u->slab + a * u->len * u->es, u->slab + b * u->len * u->es, u->len);
  return c ? c : (a > b) - (a < b);
}

static gint
by_value (gconstpointer pa, gconstpointer pb, gpointer data)
{
  int64_t a = *(const int64_t *) pa, b = *(const int64_t *) pb;
  const int64_t *key = data;
  return (key[a] > key[b]) - (key[a] < key[b]);
}

static gboolean
unique_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  const OwbAttribute *axis_attr = owb_node_get_attribute (ctx->node, "axis");
  gboolean sorted = owb_node_get_int (ctx->node, "sorted", 1) != 0;
  SliceCompare compare = NULL;
  switch (x->dtype)
    {
#define CASE(T, N) case OWB_TYPE_##N: compare = compare_##N; break;
      OWB_CPU_FOR_ALL (CASE)
      CASE (char *, STRING)
#undef CASE
    default:
      return _owb_cpu_unsupported_type (ctx, x->dtype, error);
    }
  gsize es = _owb_cpu_elem_size (x->dtype);
  gboolean strings = x->dtype == OWB_TYPE_STRING;
  int a = -1;
  int64_t outer = 1, n = x->nelems, inner = 1;
  if (axis_attr && axis_attr->type == OWB_ATTR_INT)
    {
      if (x->rank == 0)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "a scalar has no axis");
          return FALSE;
        }
      if (!_owb_cpu_normalize_axis (ctx, axis_attr->i, x->rank, &a, error))
        return FALSE;
      outer = _owb_cpu_product (x->dims, 0, a);
      n = x->dims[a];
      inner = _owb_cpu_product (x->dims, a + 1, x->rank);
    }
  if (n > G_MAXINT)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "%" G_GINT64_FORMAT " slices are too many", n);
      return FALSE;
    }
  /* Gather each slice contiguously (numpy compares them in the order of moveaxis(x, axis, 0)). */
  int64_t len = outer * inner;
  const char *slab = x->data;
  g_autofree char *gathered = NULL;
  if (outer > 1 && n > 0 && inner > 0)
    {
      gathered = _owb_cpu_scratch_new (ctx, x->nelems, es, "copy of the input's slices", error);
      if (!gathered)
        return FALSE;
      for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < n; k++)
          memcpy (gathered + (k * len + o * inner) * es, (const char *) x->data + ((o * n + k) * inner) * es,
                  (gsize) inner * es);
      slab = gathered;
    }
  g_autofree int64_t *perm = g_new (int64_t, MAX (n, 1));
  for (int64_t i = 0; i < n; i++)
    perm[i] = i;
  UniqueSort us = { slab, len, es, compare };
  g_qsort_with_data (perm, (gint) n, sizeof (int64_t), unique_order, &us);

  /* Groups of equal slices, in sorted order; the first member of each is its first occurrence. */
  g_autofree int64_t *first = g_new (int64_t, MAX (n, 1));
  g_autofree int64_t *counts = g_new0 (int64_t, MAX (n, 1));
  g_autofree int64_t *group = g_new (int64_t, MAX (n, 1));
  int64_t groups = 0;
  for (int64_t i = 0; i < n; i++)
    {
      int64_t k = perm[i];
      if (i == 0 || compare (slab + perm[i - 1] * len * es, slab + k * len * es, len) != 0)
        first[groups++] = k;
      group[k] = groups - 1;
      counts[groups - 1]++;
    }
  /* order[j]: the group shown at position j; pos[g]: where group g is shown. */
  g_autofree int64_t *order = g_new (int64_t, MAX (groups, 1));
  g_autofree int64_t *pos = g_new (int64_t, MAX (groups, 1));
  for (int64_t g = 0; g < groups; g++)
    order[g] = g;
  if (!sorted)
    g_qsort_with_data (order, (gint) groups, sizeof (int64_t), by_value, first);
  for (int64_t j = 0; j < groups; j++)
    pos[order[j]] = j;

  int64_t dims[OWB_MAX_RANK];
  int rank = 1;
  if (a >= 0)
    {
      rank = x->rank;
      memcpy (dims, x->dims, sizeof (int64_t) * rank);
      dims[a] = groups;
    }
  else
    dims[0] = groups;
  OwbTensor *y = output_with_shape (ctx, 0, x->dtype, rank, dims, error);
  if (!y)
    return FALSE;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < groups; j++)
      _owb_cpu_copy_elements ((char *) y->data + ((o * groups + j) * inner) * es,
                  (const char *) x->data + ((o * n + first[order[j]]) * inner) * es, inner, es, strings);
  int64_t size_u = groups;
  if (output_wanted (ctx, 1))
    {
      OwbTensor *t = output_with_shape (ctx, 1, OWB_TYPE_INT64, 1, &size_u, error);
      if (!t)
        return FALSE;
      for (int64_t j = 0; j < groups; j++)
        ((int64_t *) t->data)[j] = first[order[j]];
    }
  if (output_wanted (ctx, 2))
    {
      OwbTensor *t = output_with_shape (ctx, 2, OWB_TYPE_INT64, 1, &n, error);
      if (!t)
        return FALSE;
      for (int64_t k = 0; k < n; k++)
        ((int64_t *) t->data)[k] = pos[group[k]];
    }
  if (output_wanted (ctx, 3))
    {
      OwbTensor *t = output_with_shape (ctx, 3, OWB_TYPE_INT64, 1, &size_u, error);
      if (!t)
        return FALSE;
      for (int64_t j = 0; j < groups; j++)
        ((int64_t *) t->data)[j] = counts[order[j]];
    }
  return TRUE;
}

/* ---- Compress ---- */

static gboolean
compress_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0], *cond = ctx->inputs[1];
  if (cond->dtype != OWB_TYPE_BOOL || cond->rank != 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "condition must be a 1-D bool tensor");
      return FALSE;
    }
  const OwbAttribute *axis_attr = owb_node_get_attribute (ctx->node, "axis");
  int a = -1;
  int64_t outer = 1, len = x->nelems, inner = 1;
  if (axis_attr && axis_attr->type == OWB_ATTR_INT)
    {
      if (!_owb_cpu_normalize_axis (ctx, axis_attr->i, x->rank, &a, error))
        return FALSE;
      outer = _owb_cpu_product (x->dims, 0, a);
      len = x->dims[a];
      inner = _owb_cpu_product (x->dims, a + 1, x->rank);
    }
  const uint8_t *c = cond->data;
  int64_t count = 0;
  for (int64_t i = 0; i < cond->nelems; i++)
    {
      if (!c[i])
        continue;
      if (i >= len)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                                "condition is true at %" G_GINT64_FORMAT ", past the %" G_GINT64_FORMAT " entries", i,
                                len);
          return FALSE;
        }
      count++;
    }
  int64_t dims[OWB_MAX_RANK];
  int rank = 1;
  if (a >= 0)
    {
      rank = x->rank;
      memcpy (dims, x->dims, sizeof (int64_t) * rank);
      dims[a] = count;
    }
  else
    dims[0] = count;
  OwbTensor *out = output_with_shape (ctx, 0, x->dtype, rank, dims, error);
  if (!out)
    return FALSE;
  gsize es = _owb_cpu_elem_size (x->dtype);
  gboolean strings = x->dtype == OWB_TYPE_STRING;
  int64_t limit = MIN (cond->nelems, len);
  char *dst = out->data;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < limit; i++)
      if (c[i])
        {
          _owb_cpu_copy_elements (dst, (const char *) x->data + ((o * len + i) * inner) * es, inner, es, strings);
          dst += inner * es;
        }
  return TRUE;
}

/* ---- ReverseSequence ---- */

static gboolean
reverse_sequence_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0], *lens = ctx->inputs[1];
  OwbTensor *out = require_output (ctx, 0, error);
  if (!out)
    return FALSE;
  int64_t ba = owb_node_get_int (ctx->node, "batch_axis", 1);
  if (x->rank < 2 || !owb_tensor_same_shape (x, out) || (ba != 0 && ba != 1) || lens->nelems != x->dims[ba]
      || (lens->dtype != OWB_TYPE_INT64 && lens->dtype != OWB_TYPE_INT32))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "sequence_lens must hold one length per batch entry");
      return FALSE;
    }
  int64_t batch = x->dims[ba], steps = x->dims[1 - ba], inner = _owb_cpu_product (x->dims, 2, x->rank);
  gsize es = _owb_cpu_elem_size (x->dtype);
  gboolean strings = x->dtype == OWB_TYPE_STRING;
  for (int64_t b = 0; b < batch; b++)
    {
      int64_t l = index_at (lens, b);
      if (l < 0 || l > steps)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,
                                "sequence length %" G_GINT64_FORMAT " of batch %" G_GINT64_FORMAT
                                " is outside [0, %" G_GINT64_FORMAT "]", l, b, steps);
          return FALSE;
        }
      for (int64_t t = 0; t < steps; t++)
        {
          int64_t from = t < l ? l - 1 - t : t;
          int64_t dst = ba == 0 ? b * steps + t : t * batch + b;
          int64_t src = ba == 0 ? b * steps + from : from * batch + b;
          _owb_cpu_copy_elements ((char *) out->data + dst * inner * es, (const char *) x->data + src * inner * es, inner, es,
                      strings);
        }
    }
  return TRUE;
}

/* ---- EyeLike ---- */

/* Writes 1 (true) at element i of any numeric or bool tensor. */
static gboolean
set_one (OwbTensor *t, int64_t i)
{
  switch (t->dtype)
    {
#define CASE(T, N) case OWB_TYPE_##N: ((T *) t->data)[i] = (T) 1; return TRUE;
      OWB_CPU_FOR_ALL (CASE)
#undef CASE
    case OWB_TYPE_FLOAT16: ((uint16_t *) t->data)[i] = 0x3c00; return TRUE;
    case OWB_TYPE_BFLOAT16: ((uint16_t *) t->data)[i] = 0x3f80; return TRUE;
    default: return FALSE;
    }
}

static gboolean
eye_like_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *out = require_output (ctx, 0, error);
  if (!out)
    return FALSE;
  if (out->rank != 2 || out->dtype == OWB_TYPE_STRING)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output must be a numeric matrix");
      return FALSE;
    }
  int64_t rows = out->dims[0], cols = out->dims[1];
  int64_t k = CLAMP (owb_node_get_int (ctx->node, "k", 0), -rows, cols);
  clear_tensor (out);
  /* Row i has its one at column i + k. */
  int64_t i0 = k < 0 ? MIN (-k, rows) : 0;
  for (int64_t i = i0; i < rows && k < cols - i; i++)
    if (!set_one (out, i * cols + i + k))
      return _owb_cpu_unsupported_type (ctx, out->dtype, error);
  return TRUE;
}

/* ---- random generators ---- */

/* numpy's RandomState (cpu-random-private.h) with its legacy gauss's spare value. */
typedef struct {
  OwbCpuMt19937 mt;
  gboolean has_gauss;
  double gauss;
} Rng;

static void
rng_seed (Rng *r, uint32_t seed)
{
  _owb_cpu_mt_seed (&r->mt, seed);
  r->has_gauss = FALSE;
}

static double
rng_double (Rng *r)
{
  return _owb_cpu_mt_double (&r->mt);
}

/* Standard normal by the polar method, keeping the second value as numpy's legacy gauss does. */
static double
rng_gauss (Rng *r)
{
  if (r->has_gauss)
    {
      r->has_gauss = FALSE;
      return r->gauss;
    }
  double x1, x2, r2;
  do
    {
      x1 = 2.0 * rng_double (r) - 1.0;
      x2 = 2.0 * rng_double (r) - 1.0;
      r2 = x1 * x1 + x2 * x2;
    }
  while (r2 >= 1.0 || r2 == 0.0);
  double f = sqrt (-2.0 * log (r2) / r2);
  r->gauss = f * x1;
  r->has_gauss = TRUE;
  return f * x2;
}

/* numpy's binomial inversion for one trial with p <= 0.5. */
static int
binomial_inversion (Rng *r, double p)
{
  double q = 1.0 - p, qn = exp (log (q)), bound = MIN (1.0, p + 10.0 * sqrt (p * q + 1.0));
  int x = 0;
  double px = qn, u = rng_double (r);
  while (u > px)
    {
      x++;
      if (x > bound)
        {
          x = 0;
          px = qn;
          u = rng_double (r);
        }
      else
        {
          u -= px;
          px = ((1 - x + 1) * p * px) / (x * q);
        }
    }
  return x;
}

static int
bernoulli_draw (Rng *r, double p)
{
  if (p == 0.0)
    return 0;
  return p <= 0.5 ? binomial_inversion (r, p) : 1 - binomial_inversion (r, 1.0 - p);
}

/* Seeded nodes restart from their seed at every run, as the reference does; the others draw a
 * fresh seed per run from a generator of their own, seeded once at session creation. */
typedef struct {
  gboolean seeded;
  uint32_t seed;
  GMutex lock;
  Rng source;
} RandomParams;

static gboolean
random_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                GError **error)
{
  RandomParams *p = g_new0 (RandomParams, 1);
  g_mutex_init (&p->lock);
  const OwbAttribute *seed = owb_node_get_attribute (node, "seed");
  if (seed && seed->type == OWB_ATTR_FLOAT && isfinite (seed->f))
    {
      p->seeded = TRUE;
      /* numpy takes int(seed); out-of-range seeds wrap rather than fail. */
      double s = CLAMP ((double) seed->f, -9.2e18, 9.2e18);
      p->seed = (uint32_t) (int64_t) s;
    }
  else
    rng_seed (&p->source, g_random_int ());
  *state = p;
  return TRUE;
}

static void
random_free (gpointer data)
{
  RandomParams *p = data;
  g_mutex_clear (&p->lock);
  g_free (p);
}

static void
rng_for_run (OwbKernelContext *ctx, Rng *r)
{
  RandomParams *p = ctx->state;
  uint32_t seed;
  if (p->seeded)
    seed = p->seed;
  else
    {
      g_mutex_lock (&p->lock);
      seed = _owb_cpu_mt_next (&p->source.mt);
      g_mutex_unlock (&p->lock);
    }
  rng_seed (r, seed);
}

/* RandomUniform(Like), RandomNormal(Like): the float draw is rounded to T first, then scaled in T,
 * as the reference does. */
static gboolean
random_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *out = require_output (ctx, 0, error);
  if (!out)
    return FALSE;
  gboolean normal = strstr (ctx->node->op_type, "Normal") != NULL;
  double a, b; /* normal: scale, mean; uniform: high - low, low */
  if (normal)
    a = owb_node_get_float (ctx->node, "scale", 1.0f), b = owb_node_get_float (ctx->node, "mean", 0.0f);
  else
    {
      double high = owb_node_get_float (ctx->node, "high", 1.0f), low = owb_node_get_float (ctx->node, "low", 0.0f);
      a = high - low, b = low;
    }
  g_autofree Rng *r = g_new (Rng, 1);
  rng_for_run (ctx, r);
  int64_t n = out->nelems;
  if (out->dtype == OWB_TYPE_FLOAT)
    {
      float *y = out->data, fa = (float) a, fb = (float) b;
      for (int64_t i = 0; i < n; i++)
        {
          float v = (float) (normal ? rng_gauss (r) : rng_double (r));
          v *= fa;
          y[i] = v + fb;
        }
    }
  else if (out->dtype == OWB_TYPE_DOUBLE)
    {
      double *y = out->data;
      for (int64_t i = 0; i < n; i++)
        y[i] = (normal ? rng_gauss (r) : rng_double (r)) * a + b;
    }
  else
    return _owb_cpu_unsupported_type (ctx, out->dtype, error);
  return TRUE;
}

#define DEFINE_READ_PROB(T, N)                                                                                 \
  static void read_prob_##N (const void *x, int64_t i, double *p) { *p = (double) ((const T *) x)[i]; }
OWB_CPU_FOR_FLOATS (DEFINE_READ_PROB)

static gboolean
bernoulli_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *out = require_output (ctx, 0, error);
  if (!out)
    return FALSE;
  if (out->nelems != x->nelems || (x->dtype != OWB_TYPE_FLOAT && x->dtype != OWB_TYPE_DOUBLE))
    return _owb_cpu_unsupported_type (ctx, x->dtype, error);
  g_autofree Rng *r = g_new (Rng, 1);
  rng_for_run (ctx, r);
  clear_tensor (out);
  for (int64_t i = 0; i < x->nelems; i++)
    {
      double p;
      if (x->dtype == OWB_TYPE_FLOAT)
        read_prob_FLOAT (x->data, i, &p);
      else
        read_prob_DOUBLE (x->data, i, &p);
      if (!(p >= 0.0 && p <= 1.0))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,
                                "probability %g at %" G_GINT64_FORMAT " is outside [0, 1]", p, i);
          return FALSE;
        }
      if (bernoulli_draw (r, p) && !set_one (out, i))
        return _owb_cpu_unsupported_type (ctx, out->dtype, error);
    }
  return TRUE;
}

/* Samples class indices from each row of unnormalised log-probabilities by inverting the CDF. */
static gboolean
multinomial_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *out = require_output (ctx, 0, error);
  if (!out)
    return FALSE;
  if (x->rank != 2 || out->rank != 2 || out->dims[0] != x->dims[0]
      || (out->dtype != OWB_TYPE_INT32 && out->dtype != OWB_TYPE_INT64)
      || (x->dtype != OWB_TYPE_FLOAT && x->dtype != OWB_TYPE_DOUBLE))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input must be a (batch, classes) float matrix");
      return FALSE;
    }
  int64_t batch = x->dims[0], classes = x->dims[1], samples = out->dims[1];
  if (batch * samples == 0)
    return TRUE;
  if (classes == 0)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "there are no classes to sample from");
      return FALSE;
    }
  g_autofree Rng *r = g_new (Rng, 1);
  rng_for_run (ctx, r);
  g_autofree double *cdf = g_new (double, classes);
  for (int64_t b = 0; b < batch; b++)
    {
      double mx = -INFINITY, total = 0.0;
      for (int64_t c = 0; c < classes; c++)
        {
          double v;
          if (x->dtype == OWB_TYPE_FLOAT)
            read_prob_FLOAT (x->data, b * classes + c, &v);
          else
            read_prob_DOUBLE (x->data, b * classes + c, &v);
          cdf[c] = v;
          mx = MAX (mx, v);
        }
      for (int64_t c = 0; c < classes; c++)
        {
          total += isnan (cdf[c]) ? NAN : exp (cdf[c] - mx);
          cdf[c] = total;
        }
      if (!(total > 0.0 && isfinite (total)))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,
                                "row %" G_GINT64_FORMAT " holds no valid probabilities", b);
          return FALSE;
        }
      for (int64_t s = 0; s < samples; s++)
        {
          double u = rng_double (r) * total;
          int64_t lo = 0, hi = classes - 1;
          while (lo < hi)
            {
              int64_t mid = lo + (hi - lo) / 2;
              if (cdf[mid] > u)
                hi = mid;
              else
                lo = mid + 1;
            }
          if (out->dtype == OWB_TYPE_INT32)
            ((int32_t *) out->data)[b * samples + s] = (int32_t) lo;
          else
            ((int64_t *) out->data)[b * samples + s] = lo;
        }
    }
  return TRUE;
}

/* ---- BitCast ---- */

static gboolean
bitcast_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *out = require_output (ctx, 0, error);
  if (!out)
    return FALSE;
  if (x->dtype == OWB_TYPE_STRING || out->dtype == OWB_TYPE_STRING || out->nelems != x->nelems)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "cannot reinterpret %s as %s", owb_data_type_name (x->dtype),
                            owb_data_type_name (out->dtype));
      return FALSE;
    }
  int bits = owb_data_type_packed_bits (out->dtype);
  if (bits == 0)
    {
      if (out->nbytes != x->nbytes)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "%s and %s differ in size", owb_data_type_name (x->dtype),
                                owb_data_type_name (out->dtype));
          return FALSE;
        }
      if (out->data != x->data && x->nbytes)
        memcpy (out->data, x->data, x->nbytes);
      return TRUE;
    }
  /* Unpacked sub-byte values: keep the low bits, sign-extending for the signed integer types. */
  gboolean sign = out->dtype == OWB_TYPE_INT4 || out->dtype == OWB_TYPE_INT2;
  uint8_t mask = (uint8_t) ((1u << bits) - 1), top = (uint8_t) (1u << (bits - 1));
  const uint8_t *s = x->data;
  uint8_t *d = out->data;
  for (int64_t i = 0; i < x->nelems; i++)
    {
      uint8_t v = s[i] & mask;
      d[i] = sign && (v & top) ? (uint8_t) (v | (uint8_t) ~mask) : v;
    }
  return TRUE;
}

/* ---- Det ---- */

#define DEFINE_DET(T, N)                                                                                       \
  static void det_##N (const T *x, T *y, int64_t count, int64_t m, double *a)                                  \
  {                                                                                                            \
    for (int64_t b = 0; b < count; b++)                                                                        \
      {                                                                                                        \
        const T *src = x + b * m * m;                                                                          \
        for (int64_t i = 0; i < m * m; i++)                                                                    \
          a[i] = (double) src[i];                                                                              \
        double det = 1.0;                                                                                      \
        for (int64_t k = 0; k < m; k++)                                                                        \
          {                                                                                                    \
            int64_t p = k;                                                                                     \
            for (int64_t i = k + 1; i < m; i++)                                                                \
              if (fabs (a[i * m + k]) > fabs (a[p * m + k]))                                                   \
                p = i;                                                                                         \
            if (a[p * m + k] == 0.0)                                                                           \
              {                                                                                                \
                det = 0.0;                                                                                     \
                break;                                                                                         \
              }                                                                                                \
            if (p != k)                                                                                        \
              {                                                                                                \
                for (int64_t j = 0; j < m; j++)                                                                \
                  {                                                                                            \
                    double t = a[k * m + j];                                                                   \
                    a[k * m + j] = a[p * m + j];                                                               \
                    a[p * m + j] = t;                                                                          \
                  }                                                                                            \
                det = -det;                                                                                    \
              }                                                                                                \
            double pivot = a[k * m + k];                                                                       \
            det *= pivot;                                                                                      \
            for (int64_t i = k + 1; i < m; i++)                                                                \
              {                                                                                                \
                double f = a[i * m + k] / pivot;                                                               \
                for (int64_t j = k + 1; j < m; j++)                                                            \
                  a[i * m + j] -= f * a[k * m + j];                                                            \
              }                                                                                                \
          }                                                                                                    \
        y[b] = (T) det;                                                                                        \
      }                                                                                                        \
  }
OWB_CPU_FOR_FLOATS (DEFINE_DET)

static gboolean
det_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *out = require_output (ctx, 0, error);
  if (!out)
    return FALSE;
  if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2] || out->dtype != x->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input must hold square matrices");
      return FALSE;
    }
  int64_t m = x->dims[x->rank - 1], count = _owb_cpu_product (x->dims, 0, x->rank - 2);
  if (out->nelems != count)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output has the wrong size");
      return FALSE;
    }
  g_autofree double *a = g_new (double, MAX (m * m, 1));
  switch (x->dtype)
    {
#define CASE(T, N) case OWB_TYPE_##N: det_##N (x->data, out->data, count, m, a); return TRUE;
      OWB_CPU_FOR_FLOATS (CASE)
#undef CASE
    default:
      return _owb_cpu_unsupported_type (ctx, x->dtype, error);
    }
}

/* ---- MaxUnpool ---- */

/* Indices address the unpooled shape the attributes give (as MaxPool's do); an output_shape only
 * widens the output, each value keeping its coordinates. */
static gboolean
max_unpool_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0], *ind = ctx->inputs[1];
  OwbTensor *out = require_output (ctx, 0, error);
  if (!out)
    return FALSE;
  int rank = x->rank, n = rank - 2, nk, ns, np;
  const int64_t *k = owb_node_get_ints (ctx->node, "kernel_shape", &nk);
  const int64_t *s = owb_node_get_ints (ctx->node, "strides", &ns);
  const int64_t *p = owb_node_get_ints (ctx->node, "pads", &np);
  if (rank < 3 || nk != n || out->rank != rank || out->dtype != x->dtype || !owb_tensor_same_shape (x, ind)
      || ind->dtype != OWB_TYPE_INT64)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input, indices and kernel_shape do not agree");
      return FALSE;
    }
  int64_t full[OWB_MAX_RANK];
  full[0] = x->dims[0];
  full[1] = x->dims[1];
  for (int i = 0; i < n; i++)
    full[i + 2] = (x->dims[i + 2] - 1) * (s ? s[i] : 1) - (p ? p[i] + p[i + n] : 0) + k[i];
  int64_t total = 1;
  for (int i = 0; i < rank; i++)
    total *= MAX (full[i], 0);
  gboolean same = memcmp (full, out->dims, sizeof (int64_t) * rank) == 0;
  int64_t ostrides[OWB_MAX_RANK];
  _owb_cpu_strides (rank, out->dims, ostrides);
  gsize es = _owb_cpu_elem_size (x->dtype);
  clear_tensor (out);
  const int64_t *idx = ind->data;
  for (int64_t e = 0; e < x->nelems; e++)
    {
      int64_t v = idx[e], off = v;
      if (v < 0 || v >= total)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,
                                "index %" G_GINT64_FORMAT " is outside the unpooled tensor", v);
          return FALSE;
        }
      if (!same)
        {
          off = 0;
          for (int d = rank - 1; d >= 0; d--)
            {
              int64_t c = v % full[d];
              v /= full[d];
              if (c >= out->dims[d])
                {
                  owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,
                                        "index %" G_GINT64_FORMAT " falls outside output_shape", idx[e]);
                  return FALSE;
                }
              off += c * ostrides[d];
            }
        }
      memcpy ((char *) out->data + off * es, (const char *) x->data + e * es, es);
    }
  return TRUE;
}

/* ---- CenterCropPad ---- */

static gboolean
center_crop_pad_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *out = require_output (ctx, 0, error);
  if (!out)
    return FALSE;
  if (out->rank != x->rank || out->dtype != x->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output rank differs from the input");
      return FALSE;
    }
  int r = x->rank;
  int64_t src0[OWB_MAX_RANK], dst0[OWB_MAX_RANK], len[OWB_MAX_RANK], ss[OWB_MAX_RANK], ds[OWB_MAX_RANK];
  int64_t count = 1;
  for (int d = 0; d < r; d++)
    {
      int64_t in = x->dims[d], o = out->dims[d];
      /* Both crop and pad start at floor(difference / 2): the odd one goes to the end. */
      src0[d] = o < in ? (in - o) / 2 : 0;
      dst0[d] = o > in ? (o - in) / 2 : 0;
      len[d] = MIN (in, o);
      count *= len[d];
    }
  _owb_cpu_strides (r, x->dims, ss);
  _owb_cpu_strides (r, out->dims, ds);
  gsize es = _owb_cpu_elem_size (x->dtype);
  gboolean strings = x->dtype == OWB_TYPE_STRING;
  clear_tensor (out);
  if (count == 0)
    return TRUE;
  if (r == 0)
    {
      _owb_cpu_copy_elements (out->data, x->data, 1, es, strings);
      return TRUE;
    }
  /* Copy rows of the last axis, walking the other axes with an odometer. */
  int64_t at[OWB_MAX_RANK] = { 0 };
  int64_t row = len[r - 1];
  for (;;)
    {
      int64_t so = src0[r - 1], dof = dst0[r - 1];
      for (int d = 0; d < r - 1; d++)
        {
          so += (src0[d] + at[d]) * ss[d];
          dof += (dst0[d] + at[d]) * ds[d];
        }
      _owb_cpu_copy_elements ((char *) out->data + dof * es, (const char *) x->data + so * es, row, es, strings);
      int d = r - 2;
      for (; d >= 0; d--)
        {
          if (++at[d] < len[d])
            break;
          at[d] = 0;
        }
      if (d < 0)
        break;
    }
  return TRUE;
}

/* ---- Col2Im ---- */

typedef struct {
  int n;                       /* spatial dims */
  int64_t batch, channels, kernel, blocks, image_size;
  int64_t image[OWB_MAX_RANK], block[OWB_MAX_RANK], cols[OWB_MAX_RANK];
  int64_t dil[OWB_MAX_RANK], pad[OWB_MAX_RANK], stride[OWB_MAX_RANK];
} Col2ImShape;

/* Adds each column entry to the image pixel it came from; the last axis is the inner loop. */
#define DEFINE_COL2IM(T, N)                                                                                    \
  static void col2im_##N (const T *x, T *y, const Col2ImShape *s)                                              \
  {                                                                                                            \
    int n = s->n, last = n - 1;                                                                                \
    int64_t img_stride[OWB_MAX_RANK];                                                                          \
    _owb_cpu_strides (n, s->image, img_stride);                                                                \
    for (int64_t bc = 0; bc < s->batch * s->channels; bc++)                                                    \
      {                                                                                                        \
        T *plane = y + bc * s->image_size;                                                                     \
        int64_t koff[OWB_MAX_RANK] = { 0 };                                                                    \
        for (int64_t kk = 0; kk < s->kernel; kk++)                                                             \
          {                                                                                                    \
            const T *src = x + (bc * s->kernel + kk) * s->blocks;                                              \
            int64_t at[OWB_MAX_RANK] = { 0 };                                                                  \
            for (int64_t l = 0; l < s->blocks; l += s->cols[last])                                             \
              {                                                                                                \
                int64_t base = 0;                                                                              \
                gboolean inside = TRUE;                                                                        \
                for (int d = 0; d < last; d++)                                                                 \
                  {                                                                                            \
                    int64_t p = at[d] * s->stride[d] - s->pad[d] + koff[d] * s->dil[d];                        \
                    inside &= p >= 0 && p < s->image[d];                                                       \
                    base += p * img_stride[d];                                                                 \
                  }                                                                                            \
                if (inside)                                                                                    \
                  {                                                                                            \
                    int64_t start = -s->pad[last] + koff[last] * s->dil[last], st = s->stride[last];           \
                    for (int64_t j = 0; j < s->cols[last]; j++)                                                \
                      {                                                                                        \
                        int64_t p = start + j * st;                                                            \
                        if (p >= 0 && p < s->image[last])                                                      \
                          plane[base + p] += src[l + j];                                                       \
                      }                                                                                        \
                  }                                                                                            \
                for (int d = last - 1; d >= 0; d--)                                                            \
                  {                                                                                            \
                    if (++at[d] < s->cols[d])                                                                  \
                      break;                                                                                   \
                    at[d] = 0;                                                                                 \
                  }                                                                                            \
              }                                                                                                \
            for (int d = last; d >= 0; d--)                                                                    \
              {                                                                                                \
                if (++koff[d] < s->block[d])                                                                   \
                  break;                                                                                       \
                koff[d] = 0;                                                                                   \
              }                                                                                                \
          }                                                                                                    \
      }                                                                                                        \
  }
OWB_CPU_FOR_NUMERIC (DEFINE_COL2IM)

static gboolean
col2im_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0], *image = ctx->inputs[1], *block = ctx->inputs[2];
  OwbTensor *out = require_output (ctx, 0, error);
  if (!out)
    return FALSE;
  Col2ImShape s = { 0 };
  s.n = (int) image->nelems;
  if (x->rank != 3 || s.n < 1 || s.n != block->nelems || out->rank != s.n + 2 || out->dtype != x->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input, image_shape and block_shape do not agree");
      return FALSE;
    }
  int nd, np, ns;
  const int64_t *dil = owb_node_get_ints (ctx->node, "dilations", &nd);
  const int64_t *pads = owb_node_get_ints (ctx->node, "pads", &np);
  const int64_t *str = owb_node_get_ints (ctx->node, "strides", &ns);
  s.batch = x->dims[0];
  s.kernel = 1;
  s.blocks = 1;
  s.image_size = 1;
  for (int i = 0; i < s.n; i++)
    {
      s.image[i] = owb_tensor_get_int64 (image, i);
      s.block[i] = owb_tensor_get_int64 (block, i);
      s.dil[i] = dil ? dil[i] : 1;
      s.stride[i] = str ? str[i] : 1;
      s.pad[i] = pads ? pads[i] : 0;
      int64_t span = s.image[i] + (pads ? pads[i] + pads[i + s.n] : 0) - (s.dil[i] * (s.block[i] - 1) + 1);
      s.cols[i] = span / s.stride[i] + 1;
      if (s.image[i] != out->dims[i + 2] || s.block[i] < 1 || span < 0)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "block of axis %d does not fit the image", i);
          return FALSE;
        }
      s.kernel *= s.block[i];
      s.blocks *= s.cols[i];
      s.image_size *= s.image[i];
    }
  s.channels = out->dims[1];
  if (x->dims[1] != s.channels * s.kernel || x->dims[2] != s.blocks || out->dims[0] != s.batch)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input shape does not match the blocks of the image");
      return FALSE;
    }
  clear_tensor (out);
  if (x->nelems == 0)
    return TRUE;
  switch (x->dtype)
    {
#define CASE(T, N) case OWB_TYPE_##N: col2im_##N (x->data, out->data, &s); return TRUE;
      OWB_CPU_FOR_NUMERIC (CASE)
#undef CASE
    default:
      return _owb_cpu_unsupported_type (ctx, x->dtype, error);
    }
}

/* Every dtype with a byte size: what the data-movement kernels take. */
#define ANY 0
#define FLOATS OWB_CPU_TYPES_FLOATS
#define HALF_TOO (OWB_CPU_TYPES_FLOATS | OWB_TYPE_BIT (OWB_TYPE_FLOAT16) | OWB_TYPE_BIT (OWB_TYPE_BFLOAT16))

const OwbKernelDef _owb_cpu_kernels_misc[] = {
  { "NegativeLogLikelihoodLoss", "", 12, 0, FLOATS, 0, NULL, NULL, loss_compute },
  { "SoftmaxCrossEntropyLoss", "", 12, 0, FLOATS, 0, NULL, NULL, loss_compute },
  { "CumSum", "", 11, 0, OWB_CPU_TYPES_NUMERIC, 0, NULL, NULL, cumsum_compute },
  { "CumProd", "", 26, 0, OWB_CPU_TYPES_NUMERIC, 0, NULL, NULL, cumprod_compute },
  { "Unique", "", 11, 0, OWB_CPU_TYPES_ALL | OWB_TYPE_BIT (OWB_TYPE_STRING), 0, NULL, NULL, unique_compute },
  { "Compress", "", 9, 0, ANY, 0, NULL, NULL, compress_compute },
  { "ReverseSequence", "", 10, 0, ANY, 0, NULL, NULL, reverse_sequence_compute },
  { "EyeLike", "", 9, 0, ANY, 0, NULL, NULL, eye_like_compute },
  { "RandomUniform", "", 1, 0, FLOATS, -1, random_prepare, random_free, random_compute },
  { "RandomNormal", "", 1, 0, FLOATS, -1, random_prepare, random_free, random_compute },
  { "RandomUniformLike", "", 1, 0, FLOATS, -1, random_prepare, random_free, random_compute },
  { "RandomNormalLike", "", 1, 0, FLOATS, -1, random_prepare, random_free, random_compute },
  { "Bernoulli", "", 15, 0, FLOATS, 0, random_prepare, random_free, bernoulli_compute },
  { "Multinomial", "", 7, 0, FLOATS, 0, random_prepare, random_free, multinomial_compute },
  { "BitCast", "", 26, 0, ANY, 0, NULL, NULL, bitcast_compute },
  { "Det", "", 11, 0, FLOATS, 0, NULL, NULL, det_compute },
  { "MaxUnpool", "", 9, 0, HALF_TOO, 0, NULL, NULL, max_unpool_compute },
  { "CenterCropPad", "", 18, 0, ANY, 0, NULL, NULL, center_crop_pad_compute },
  { "Col2Im", "", 18, 0, OWB_CPU_TYPES_NUMERIC, 0, NULL, NULL, col2im_compute },
  { NULL }
};
