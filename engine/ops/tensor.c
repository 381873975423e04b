/* tensor.c: schemas and shape inference of the tensor op family (shape manipulation, data movement). */
#include "owb-ops-private.h"

#include <owb/owb-error.h>

#include <math.h>
#include <string.h>

/* ---- helpers ---- */

static const OwbValueType *
in_type (OwbInferContext *ctx, int i)
{
  return i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}

static const OwbTensor *
in_value (OwbInferContext *ctx, int i)
{
  owb_infer_note_value_read (ctx, i);
  if (i >= ctx->n_inputs || !ctx->input_values || !ctx->inputs[i])
    return NULL;
  const OwbTensor *t = ctx->input_values[i];
  return t && t->kind == OWB_VALUE_TENSOR ? t : NULL;
}

/* A tensor of the given dtype and rank whose dims are all unknown (rank < 0: unknown rank). */
static gboolean
check_rank (OwbInferContext *ctx, int64_t rank, GError **error)
{
  if (rank > OWB_MAX_RANK)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "output rank %" G_GINT64_FORMAT " exceeds the maximum of %d",
                           rank, OWB_MAX_RANK);
      return FALSE;
    }
  return TRUE;
}

/* An input that must hold integers (shape, axes, pads...): int64, or int32 where models use it. */
static gboolean
check_int_input (OwbInferContext *ctx, int i, const char *what, GError **error)
{
  const OwbValueType *t = in_type (ctx, i);
  if (t && t->dtype != OWB_TYPE_UNDEFINED && t->dtype != OWB_TYPE_INT64 && t->dtype != OWB_TYPE_INT32)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input '%s' must be int64, not %s", what,
                           owb_data_type_name (t->dtype));
      return FALSE;
    }
  return TRUE;
}

/* The length of a 1-D input when its shape says so, else -1. */
static int64_t
known_length (OwbInferContext *ctx, int i)
{
  const OwbValueType *t = in_type (ctx, i);
  if (!t || t->kind != OWB_VALUE_TENSOR)
    return -1;
  if (t->rank == 0)
    return 1;
  if (t->rank == 1 && owb_dim_is_known (t->dims[0]))
    return t->dims[0].value;
  return -1;
}

/* A shape input's value as far as data propagation knows it: known elements in shape, the others
 * (named or unknown dims) in sym; FALSE when not even its length is known. */
static gboolean
get_shape_data (OwbInferContext *ctx, int i, int64_t **shape, int64_t *n, const OwbInferElement **sym)
{
  const OwbInferData *d = owb_infer_get_data (ctx, i);
  if (!d)
    return FALSE;
  *n = d->n;
  *shape = g_new (int64_t, MAX (d->n, 1));
  for (int k = 0; k < d->n; k++)
    (*shape)[k] = d->elements[k].known ? d->elements[k].value : 0;
  *sym = d->elements;
  return TRUE;
}

/* Element k of a shape that data propagation only partly knows, as a dim (never -1 or 0: a named
 * dim stands for a size). */
static gboolean
sym_unknown (const OwbInferElement *sym, int k)
{
  return sym && !sym[k].known;
}

static OwbDim
sym_dim (const OwbInferElement *sym, int k)
{
  return (OwbDim) { -1, sym[k].param };
}

/* a * b keeping a named dim when the other factor is 1. */
static OwbDim
dim_mul (OwbDim a, OwbDim b)
{
  if (owb_dim_is_known (a) && owb_dim_is_known (b))
    {
      if (a.value != 0 && b.value > G_MAXINT64 / a.value)
        return OWB_DIM_UNKNOWN;
      return OWB_DIM_VALUE (a.value * b.value);
    }
  if (owb_dim_is_known (a) && a.value == 1)
    return b;
  if (owb_dim_is_known (b) && b.value == 1)
    return a;
  if ((owb_dim_is_known (a) && a.value == 0) || (owb_dim_is_known (b) && b.value == 0))
    return OWB_DIM_VALUE (0);
  return OWB_DIM_UNKNOWN;
}

static OwbDim
dims_product (const OwbDim *dims, int from, int to)
{
  OwbDim p = OWB_DIM_VALUE (1);
  for (int i = from; i < to; i++)
    p = dim_mul (p, dims[i]);
  return p;
}

static gboolean
normalize_axes (OwbInferContext *ctx, const int64_t *axes, int64_t n, int rank, int *out, GError **error)
{
  if (n > rank)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%" G_GINT64_FORMAT " axes for a rank-%d input", n, rank);
      return FALSE;
    }
  gboolean seen[OWB_MAX_RANK] = { 0 };
  for (int64_t i = 0; i < n; i++)
    {
      if (!owb_infer_axis (ctx, axes[i], rank, &out[i], error))
        return FALSE;
      if (seen[out[i]])
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "axis %" G_GINT64_FORMAT " is repeated", axes[i]);
          return FALSE;
        }
      seen[out[i]] = TRUE;
    }
  return TRUE;
}

/* The ints attribute `name` (the form of shape, axes and split before they became inputs) as a new
 * array in *vals (*n of them); FALSE when it is absent, and then an error too if `required`. */
static gboolean
dup_ints_attribute (OwbInferContext *ctx, const char *name, gboolean required, int64_t **vals, int64_t *n,
                    GError **error)
{
  int na;
  const int64_t *a = owb_node_get_ints (ctx->node, name, &na);
  if (!a)
    {
      if (required)
        owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute '%s' is missing", name);
      return FALSE;
    }
  *vals = g_memdup2 (a, sizeof (int64_t) * MAX (na, 1));
  *n = na;
  return TRUE;
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze, Transpose ---- */

static gboolean
infer_reshape (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *data = ctx->inputs[0];
  OwbValueType *out = &ctx->outputs[0];
  g_autofree int64_t *shape = NULL;
  int64_t n = 0;
  const OwbInferElement *sym = NULL;
  gboolean allowzero = ctx->opset >= 14 && owb_node_get_int (ctx->node, "allowzero", 0) != 0;

  if (ctx->opset < 5)
    {
      if (!dup_ints_attribute (ctx, "shape", TRUE, &shape, &n, error))
        return FALSE;
    }
  else
    {
      if (!check_int_input (ctx, 1, "shape", error))
        return FALSE;
      if (!owb_infer_get_ints (ctx, 1, &shape, &n) && !get_shape_data (ctx, 1, &shape, &n, &sym))
        {
          int64_t len = known_length (ctx, 1);
          if (len > OWB_MAX_RANK)
            return check_rank (ctx, len, error);
          _owb_infer_set_tensor (out, data->dtype, (int) len);
          return TRUE;
        }
    }
  if (!check_rank (ctx, n, error))
    return FALSE;

  _owb_infer_set_tensor (out, data->dtype, (int) n);
  int infer_at = -1;
  gboolean has_zero = FALSE;
  gboolean unknown_entry = FALSE;
  for (int i = 0; i < n; i++)
    {
      if (sym_unknown (sym, i))
        {
          /* An unknown entry may be the -1 or a 0 that copies: nothing is said of where -1 goes. */
          out->dims[i] = sym_dim (sym, i);
          unknown_entry |= !sym[i].param;
          continue;
        }
      if (shape[i] == -1)
        {
          if (infer_at >= 0)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "shape has more than one -1");
              return FALSE;
            }
          infer_at = i;
        }
      else if (shape[i] < -1)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "shape value %" G_GINT64_FORMAT " is invalid", shape[i]);
          return FALSE;
        }
      else if (shape[i] == 0 && !allowzero)
        {
          if (data->rank >= 0 && i >= data->rank)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                                   "shape value 0 at position %d copies a dimension the rank-%d input lacks", i,
                                   data->rank);
              return FALSE;
            }
          out->dims[i] = data->rank >= 0 ? data->dims[i] : OWB_DIM_UNKNOWN;
        }
      else
        {
          has_zero |= shape[i] == 0;
          out->dims[i] = OWB_DIM_VALUE (shape[i]);
        }
    }
  if (has_zero && infer_at >= 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "with allowzero=1, shape cannot hold both 0 and -1");
      return FALSE;
    }
  if (data->rank < 0 || (unknown_entry && infer_at >= 0))
    return TRUE;

  /* Element counts on both sides, cancelling named dims that appear on both. */
  int64_t in_known = 1, out_known = 1;
  int in_unknown = 0, out_unknown = 0;
  const char *in_params[OWB_MAX_RANK];
  int n_in_params = 0;
  for (int i = 0; i < data->rank; i++)
    {
      OwbDim d = data->dims[i];
      if (owb_dim_is_known (d))
        in_known = d.value != 0 && in_known > G_MAXINT64 / d.value ? -1 : in_known * d.value;
      else if (d.param)
        in_params[n_in_params++] = d.param;
      else
        in_unknown++;
      if (in_known < 0)
        return TRUE;
    }
  for (int i = 0; i < n; i++)
    {
      if (i == infer_at)
        continue;
      OwbDim d = out->dims[i];
      if (owb_dim_is_known (d))
        out_known = d.value != 0 && out_known > G_MAXINT64 / d.value ? -1 : out_known * d.value;
      else if (d.param)
        {
          int j;
          for (j = 0; j < n_in_params && in_params[j] != d.param; j++)
            ;
          if (j < n_in_params)
            in_params[j] = in_params[--n_in_params];
          else
            out_unknown++;
        }
      else
        out_unknown++;
      if (out_known < 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "shape overflows");
          return FALSE;
        }
    }
  if (in_unknown || out_unknown)
    return TRUE;
  if (infer_at < 0)
    {
      if (n_in_params == 0 && in_known != out_known)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "cannot reshape %" G_GINT64_FORMAT " elements into %" G_GINT64_FORMAT, in_known,
                               out_known);
          return FALSE;
        }
      return TRUE;
    }
  if (n_in_params == 0)
    {
      if (out_known == 0 || in_known % out_known != 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "cannot reshape %" G_GINT64_FORMAT " elements with -1 and the other dims giving %"
                               G_GINT64_FORMAT, in_known, out_known);
          return FALSE;
        }
      out->dims[infer_at] = OWB_DIM_VALUE (in_known / out_known);
    }
  else if (n_in_params == 1 && in_known == out_known)
    out->dims[infer_at] = (OwbDim) { -1, in_params[0] };
  return TRUE;
}

static gboolean
infer_flatten (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  int64_t axis = owb_node_get_int (ctx->node, "axis", 1);
  _owb_infer_set_tensor (&ctx->outputs[0], x->dtype, 2);
  if (x->rank < 0)
    return TRUE;
  if (axis < -(int64_t) x->rank || axis > x->rank || (axis < 0 && ctx->opset < 11))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "axis %" G_GINT64_FORMAT " is out of range for rank %d",
                           axis, x->rank);
      return FALSE;
    }
  int a = (int) (axis < 0 ? axis + x->rank : axis);
  ctx->outputs[0].dims[0] = dims_product (x->dims, 0, a);
  ctx->outputs[0].dims[1] = dims_product (x->dims, a, x->rank);
  return TRUE;
}

static gboolean
infer_squeeze (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  OwbValueType *out = &ctx->outputs[0];
  g_autofree int64_t *axes = NULL;
  int64_t n = 0;
  gboolean have_axes;

  if (ctx->opset < 13)
    have_axes = dup_ints_attribute (ctx, "axes", FALSE, &axes, &n, NULL);
  else if (in_type (ctx, 1))
    {
      if (!check_int_input (ctx, 1, "axes", error))
        return FALSE;
      have_axes = TRUE;
      if (!owb_infer_get_ints (ctx, 1, &axes, &n))
        {
          int64_t len = known_length (ctx, 1);
          _owb_infer_set_tensor (out, x->dtype, x->rank >= 0 && len >= 0 && len <= x->rank ? x->rank - (int) len : -1);
          return TRUE;
        }
    }
  else
    have_axes = FALSE;
  /* An empty list squeezes every axis of size 1, as no list does. */
  if (have_axes && n == 0)
    have_axes = FALSE;

  if (x->rank < 0)
    {
      _owb_infer_set_tensor (out, x->dtype, -1);
      return TRUE;
    }
  gboolean drop[OWB_MAX_RANK] = { 0 };
  if (have_axes)
    {
      int norm[OWB_MAX_RANK];
      if (!normalize_axes (ctx, axes, n, x->rank, norm, error))
        return FALSE;
      for (int i = 0; i < n; i++)
        {
          OwbDim d = x->dims[norm[i]];
          if (owb_dim_is_known (d) && d.value != 1)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                                   "cannot squeeze axis %d of size %" G_GINT64_FORMAT, norm[i], d.value);
              return FALSE;
            }
          drop[norm[i]] = TRUE;
        }
    }
  else
    {
      for (int i = 0; i < x->rank; i++)
        {
          if (!owb_dim_is_known (x->dims[i]))
            {
              /* Whether this dim is 1 decides the rank. */
              _owb_infer_set_tensor (out, x->dtype, -1);
              return TRUE;
            }
          drop[i] = x->dims[i].value == 1;
        }
    }
  _owb_infer_set_tensor (out, x->dtype, 0);
  for (int i = 0; i < x->rank; i++)
    if (!drop[i])
      out->dims[out->rank++] = x->dims[i];
  return TRUE;
}

static gboolean
infer_unsqueeze (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  OwbValueType *out = &ctx->outputs[0];
  g_autofree int64_t *axes = NULL;
  int64_t n = 0;

  if (ctx->opset < 13)
    {
      if (!dup_ints_attribute (ctx, "axes", TRUE, &axes, &n, error))
        return FALSE;
    }
  else
    {
      if (!check_int_input (ctx, 1, "axes", error))
        return FALSE;
      if (!owb_infer_get_ints (ctx, 1, &axes, &n))
        {
          int64_t len = known_length (ctx, 1);
          int64_t rank = x->rank >= 0 && len >= 0 ? x->rank + len : -1;
          if (!check_rank (ctx, rank, error))
            return FALSE;
          _owb_infer_set_tensor (out, x->dtype, (int) rank);
          return TRUE;
        }
    }
  if (x->rank < 0)
    {
      _owb_infer_set_tensor (out, x->dtype, -1);
      return TRUE;
    }
  int64_t rank = x->rank + n;
  if (!check_rank (ctx, rank, error))
    return FALSE;
  int norm[OWB_MAX_RANK];
  if (!normalize_axes (ctx, axes, n, (int) rank, norm, error))
    return FALSE;
  gboolean added[OWB_MAX_RANK] = { 0 };
  for (int i = 0; i < n; i++)
    added[norm[i]] = TRUE;
  _owb_infer_set_tensor (out, x->dtype, (int) rank);
  for (int i = 0, j = 0; i < rank; i++)
    out->dims[i] = added[i] ? OWB_DIM_VALUE (1) : x->dims[j++];
  return TRUE;
}

static gboolean
infer_transpose (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  OwbValueType *out = &ctx->outputs[0];
  int np;
  const int64_t *perm = owb_node_get_ints (ctx->node, "perm", &np);
  if (!perm)
    {
      _owb_infer_set_tensor (out, x->dtype, x->rank);
      for (int i = 0; i < x->rank; i++)
        out->dims[i] = x->dims[x->rank - 1 - i];
      return TRUE;
    }
  if (x->rank >= 0 && np != x->rank)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "perm has %d entries for a rank-%d input", np,
                           x->rank);
      return FALSE;
    }
  if (!check_rank (ctx, np, error))
    return FALSE;
  gboolean seen[OWB_MAX_RANK] = { 0 };
  for (int i = 0; i < np; i++)
    {
      if (perm[i] < 0 || perm[i] >= np || seen[perm[i]])
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "perm is not a permutation of 0..%d", np - 1);
          return FALSE;
        }
      seen[perm[i]] = TRUE;
    }
  _owb_infer_set_tensor (out, x->dtype, np);
  if (x->rank >= 0)
    for (int i = 0; i < np; i++)
      out->dims[i] = x->dims[perm[i]];
  return TRUE;
}

/* ---- Concat, Split, Slice ---- */

static gboolean
infer_concat (OwbInferContext *ctx, GError **error)
{
  OwbValueType *out = &ctx->outputs[0];
  const OwbAttribute *attr = owb_node_get_attribute (ctx->node, "axis");
  if (!attr && ctx->opset >= 4)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute 'axis' is missing");
      return FALSE;
    }
  int64_t axis = owb_node_get_int (ctx->node, "axis", 1);
  const OwbValueType *first = NULL;
  for (int i = 0; i < ctx->n_inputs; i++)
    {
      const OwbValueType *t = ctx->inputs[i];
      if (!t)
        continue;
      if (!first)
        first = t;
      else if (t->dtype != first->dtype && t->dtype != OWB_TYPE_UNDEFINED && first->dtype != OWB_TYPE_UNDEFINED)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d is %s but input 0 is %s", i,
                               owb_data_type_name (t->dtype), owb_data_type_name (first->dtype));
          return FALSE;
        }
    }
  if (!first)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "has no inputs");
      return FALSE;
    }
  int rank = -1;
  for (int i = 0; i < ctx->n_inputs; i++)
    {
      const OwbValueType *t = ctx->inputs[i];
      if (!t || t->rank < 0)
        continue;
      if (rank >= 0 && t->rank != rank)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %d has rank %d but an earlier input has rank %d",
                               i, t->rank, rank);
          return FALSE;
        }
      rank = t->rank;
    }
  _owb_infer_set_tensor (out, first->dtype, rank);
  if (rank < 0)
    return TRUE;
  if (rank == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "cannot concatenate scalars");
      return FALSE;
    }
  int a;
  if (!owb_infer_axis (ctx, axis, rank, &a, error))
    return FALSE;
  gboolean all_ranks = TRUE;
  for (int i = 0; i < ctx->n_inputs; i++)
    if (ctx->inputs[i] && ctx->inputs[i]->rank < 0)
      all_ranks = FALSE;
  OwbDim sum = OWB_DIM_VALUE (0);
  for (int i = 0; i < ctx->n_inputs; i++)
    {
      const OwbValueType *t = ctx->inputs[i];
      if (!t || t->rank < 0)
        continue;
      for (int d = 0; d < rank; d++)
        {
          OwbDim v = t->dims[d];
          if (d == a)
            {
              if (owb_dim_is_known (sum) && owb_dim_is_known (v))
                sum.value += v.value;
              else
                sum = OWB_DIM_UNKNOWN;
              continue;
            }
          OwbDim *o = &out->dims[d];
          if (owb_dim_is_known (v))
            {
              if (owb_dim_is_known (*o) && o->value != v.value)
                {
                  owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                                       "input %d has size %" G_GINT64_FORMAT " on axis %d, expected %" G_GINT64_FORMAT,
                                       i, v.value, d, o->value);
                  return FALSE;
                }
              *o = v;
            }
          else if (v.param && !owb_dim_is_known (*o) && !o->param)
            *o = v;
        }
    }
  out->dims[a] = all_ranks ? sum : OWB_DIM_UNKNOWN;
  return TRUE;
}

static gboolean
infer_split (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  int n_out = ctx->n_outputs;
  g_autofree int64_t *split = NULL;
  int64_t n_split = 0;
  gboolean have_split = FALSE, split_unknown = FALSE;
  int64_t axis = owb_node_get_int (ctx->node, "axis", 0);

  if (ctx->opset < 13)
    have_split = dup_ints_attribute (ctx, "split", FALSE, &split, &n_split, NULL);
  if (!have_split && (ctx->opset < 2 || ctx->opset >= 13) && in_type (ctx, 1))
    {
      if (!check_int_input (ctx, 1, "split", error))
        return FALSE;
      have_split = TRUE;
      split_unknown = !owb_infer_get_ints (ctx, 1, &split, &n_split);
    }
  const OwbAttribute *num_attr = ctx->opset >= 18 ? owb_node_get_attribute (ctx->node, "num_outputs") : NULL;
  if (num_attr)
    {
      int64_t num = owb_node_get_int (ctx->node, "num_outputs", 0);
      if (have_split)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "has both 'split' and 'num_outputs'");
          return FALSE;
        }
      if (num < 1 || num != n_out)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                               "num_outputs is %" G_GINT64_FORMAT " but the node has %d outputs", num, n_out);
          return FALSE;
        }
    }
  if (have_split && !split_unknown && n_split != n_out)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "split has %" G_GINT64_FORMAT " sizes for %d outputs",
                           n_split, n_out);
      return FALSE;
    }
  for (int i = 0; have_split && !split_unknown && i < n_split; i++)
    if (split[i] < 0)
      {
        owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "split size %" G_GINT64_FORMAT " is negative", split[i]);
        return FALSE;
      }

  for (int i = 0; i < n_out; i++)
    _owb_infer_set_tensor (&ctx->outputs[i], x->dtype, x->rank);
  if (x->rank < 0)
    return TRUE;
  int a;
  if (!owb_infer_axis (ctx, axis, x->rank, &a, error))
    return FALSE;
  if (x->rank == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "cannot split a scalar");
      return FALSE;
    }
  for (int i = 0; i < n_out; i++)
    for (int d = 0; d < x->rank; d++)
      ctx->outputs[i].dims[d] = x->dims[d];
  OwbDim total = x->dims[a];
  if (have_split)
    {
      if (split_unknown)
        {
          for (int i = 0; i < n_out; i++)
            ctx->outputs[i].dims[a] = OWB_DIM_UNKNOWN;
          return TRUE;
        }
      int64_t sum = 0;
      for (int i = 0; i < n_out; i++)
        {
          sum += split[i];
          ctx->outputs[i].dims[a] = OWB_DIM_VALUE (split[i]);
        }
      if (owb_dim_is_known (total) && sum != total.value)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "split sizes add up to %" G_GINT64_FORMAT " but axis %d has size %" G_GINT64_FORMAT,
                               sum, a, total.value);
          return FALSE;
        }
      return TRUE;
    }
  if (!owb_dim_is_known (total))
    {
      for (int i = 0; i < n_out; i++)
        ctx->outputs[i].dims[a] = n_out == 1 ? total : OWB_DIM_UNKNOWN;
      return TRUE;
    }
  /* Equal parts; from opset 18 the last one may be smaller. */
  int64_t chunk = (total.value + n_out - 1) / n_out;
  int64_t last = total.value - chunk * (n_out - 1);
  if ((ctx->opset < 18 && total.value % n_out != 0) || last < 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "axis %d of size %" G_GINT64_FORMAT " cannot be split in %d",
                           a, total.value, n_out);
      return FALSE;
    }
  for (int i = 0; i < n_out; i++)
    ctx->outputs[i].dims[a] = OWB_DIM_VALUE (i == n_out - 1 ? last : chunk);
  return TRUE;
}

/* Public (owb/owb-op.h): the Slice kernels clamp by the same rule. */
int64_t
owb_op_slice_count (int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first)
{
  if (step < -G_MAXINT64)
    step = -G_MAXINT64;
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0)
    {
      start = CLAMP (start, 0, dim);
      end = CLAMP (end, 0, dim);
      *first = start;
      return end > start ? (end - start - 1) / step + 1 : 0;
    }
  start = CLAMP (start, 0, dim - 1);
  end = CLAMP (end, -1, dim - 1);
  *first = start;
  return start > end ? (start - end - 1) / (-step) + 1 : 0;
}

static gboolean
infer_slice (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  OwbValueType *out = &ctx->outputs[0];
  g_autofree int64_t *starts = NULL, *ends = NULL, *axes = NULL, *steps = NULL;
  int64_t ns = 0, ne = 0, na = -1, nst = -1;
  gboolean known = TRUE, axes_known = TRUE;

  _owb_infer_set_tensor (out, x->dtype, x->rank);
  if (ctx->opset < 10)
    {
      int n1, n2, n3;
      const int64_t *s = owb_node_get_ints (ctx->node, "starts", &n1);
      const int64_t *e = owb_node_get_ints (ctx->node, "ends", &n2);
      const int64_t *a = owb_node_get_ints (ctx->node, "axes", &n3);
      if (!s || !e)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attributes 'starts' and 'ends' are required");
          return FALSE;
        }
      starts = g_memdup2 (s, sizeof (int64_t) * MAX (n1, 1)), ns = n1;
      ends = g_memdup2 (e, sizeof (int64_t) * MAX (n2, 1)), ne = n2;
      if (a)
        axes = g_memdup2 (a, sizeof (int64_t) * MAX (n3, 1)), na = n3;
    }
  else
    {
      for (int i = 1; i < 5; i++)
        if (!check_int_input (ctx, i, i == 1 ? "starts" : i == 2 ? "ends" : i == 3 ? "axes" : "steps", error))
          return FALSE;
      known &= owb_infer_get_ints (ctx, 1, &starts, &ns);
      known &= owb_infer_get_ints (ctx, 2, &ends, &ne);
      if (in_type (ctx, 3))
        axes_known = owb_infer_get_ints (ctx, 3, &axes, &na);
      if (in_type (ctx, 4))
        known &= owb_infer_get_ints (ctx, 4, &steps, &nst);
    }
  if (x->rank < 0)
    return TRUE;
  if (!axes_known)
    return TRUE; /* any dim may change */
  int norm[OWB_MAX_RANK];
  int64_t n = known ? ns : (axes ? na : known_length (ctx, 1));
  if (axes && known && na != ns)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "axes has %" G_GINT64_FORMAT " entries but starts has %" G_GINT64_FORMAT, na, ns);
      return FALSE;
    }
  if (axes)
    {
      if (!normalize_axes (ctx, axes, na, x->rank, norm, error))
        return FALSE;
    }
  else
    {
      if (n < 0)
        return TRUE;
      if (n > x->rank)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%" G_GINT64_FORMAT " starts for a rank-%d input",
                               n, x->rank);
          return FALSE;
        }
      for (int i = 0; i < n; i++)
        norm[i] = i;
    }
  for (int d = 0; d < x->rank; d++)
    out->dims[d] = x->dims[d];
  if (!known)
    {
      for (int i = 0; i < n; i++)
        out->dims[norm[i]] = OWB_DIM_UNKNOWN;
      return TRUE;
    }
  if (ne != ns || (steps && nst != ns))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "starts, ends, axes and steps differ in length");
      return FALSE;
    }
  for (int i = 0; i < ns; i++)
    {
      int64_t step = steps ? steps[i] : 1;
      if (step == 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "step of axis %d is 0", norm[i]);
          return FALSE;
        }
      OwbDim d = x->dims[norm[i]];
      if (!owb_dim_is_known (d))
        {
          /* The whole axis keeps a named dim. */
          if (!(step == 1 && starts[i] == 0 && ends[i] == G_MAXINT64))
            out->dims[norm[i]] = OWB_DIM_UNKNOWN;
          continue;
        }
      int64_t first;
      out->dims[norm[i]] = OWB_DIM_VALUE (owb_op_slice_count (d.value, starts[i], ends[i], step, &first));
    }
  return TRUE;
}

/* ---- Gather family, Scatter family ---- */

static gboolean
check_indices (OwbInferContext *ctx, int i, GError **error)
{
  const OwbValueType *t = in_type (ctx, i);
  if (t && t->dtype != OWB_TYPE_UNDEFINED && t->dtype != OWB_TYPE_INT64 && t->dtype != OWB_TYPE_INT32)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "indices must be int32 or int64, not %s",
                           owb_data_type_name (t->dtype));
      return FALSE;
    }
  return TRUE;
}

static gboolean
infer_gather (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *data = ctx->inputs[0], *ind = ctx->inputs[1];
  OwbValueType *out = &ctx->outputs[0];
  if (!check_indices (ctx, 1, error))
    return FALSE;
  if (data->rank < 0 || ind->rank < 0)
    {
      _owb_infer_set_tensor (out, data->dtype, -1);
      return TRUE;
    }
  if (data->rank == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "data must have rank >= 1");
      return FALSE;
    }
  int a;
  if (!owb_infer_axis (ctx, owb_node_get_int (ctx->node, "axis", 0), data->rank, &a, error))
    return FALSE;
  int rank = data->rank - 1 + ind->rank;
  if (!check_rank (ctx, rank, error))
    return FALSE;
  _owb_infer_set_tensor (out, data->dtype, rank);
  int k = 0;
  for (int d = 0; d < a; d++)
    out->dims[k++] = data->dims[d];
  for (int d = 0; d < ind->rank; d++)
    out->dims[k++] = ind->dims[d];
  for (int d = a + 1; d < data->rank; d++)
    out->dims[k++] = data->dims[d];
  return TRUE;
}

static gboolean
infer_gather_elements (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *data = ctx->inputs[0], *ind = ctx->inputs[1];
  if (!check_indices (ctx, 1, error))
    return FALSE;
  _owb_infer_set_tensor (&ctx->outputs[0], data->dtype, ind->rank);
  for (int d = 0; d < ind->rank; d++)
    ctx->outputs[0].dims[d] = ind->dims[d];
  if (data->rank >= 0 && ind->rank >= 0)
    {
      int a;
      if (data->rank != ind->rank || data->rank == 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "data (rank %d) and indices (rank %d) must have the same rank >= 1",
                               data->rank, ind->rank);
          return FALSE;
        }
      if (!owb_infer_axis (ctx, owb_node_get_int (ctx->node, "axis", 0), data->rank, &a, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
infer_gather_nd (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *data = ctx->inputs[0], *ind = ctx->inputs[1];
  OwbValueType *out = &ctx->outputs[0];
  int64_t b = ctx->opset >= 12 ? owb_node_get_int (ctx->node, "batch_dims", 0) : 0;
  if (ind->dtype != OWB_TYPE_UNDEFINED && ind->dtype != OWB_TYPE_INT64)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "indices must be int64, not %s", owb_data_type_name (ind->dtype));
      return FALSE;
    }
  _owb_infer_set_tensor (out, data->dtype, -1);
  if (b < 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "batch_dims %" G_GINT64_FORMAT " is negative", b);
      return FALSE;
    }
  if (data->rank < 0 || ind->rank < 0)
    return TRUE;
  if (data->rank < 1 || ind->rank < 1 || b >= MIN (data->rank, ind->rank))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "needs data rank %d and indices rank %d >= 1 and batch_dims %" G_GINT64_FORMAT " below both",
                           data->rank, ind->rank, b);
      return FALSE;
    }
  OwbDim last = ind->dims[ind->rank - 1];
  if (!owb_dim_is_known (last))
    return TRUE;
  if (last.value < 1 || last.value > data->rank - b)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "indices' last dimension %" G_GINT64_FORMAT " must be in [1, %" G_GINT64_FORMAT "]",
                           last.value, data->rank - b);
      return FALSE;
    }
  int rank = (int) (ind->rank - 1 + data->rank - b - last.value);
  _owb_infer_set_tensor (out, data->dtype, rank);
  int k = 0;
  for (int d = 0; d < ind->rank - 1; d++)
    {
      OwbDim v = ind->dims[d];
      if (d < b && !owb_dim_is_known (v))
        v = data->dims[d];
      if (d < b && owb_dim_is_known (v) && owb_dim_is_known (data->dims[d]) && v.value != data->dims[d].value)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "batch dimension %d differs between data and indices", d);
          return FALSE;
        }
      out->dims[k++] = v;
    }
  for (int d = (int) (b + last.value); d < data->rank; d++)
    out->dims[k++] = data->dims[d];
  return TRUE;
}

static gboolean
infer_scatter (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *data = ctx->inputs[0], *upd = ctx->inputs[2];
  if (!check_indices (ctx, 1, error))
    return FALSE;
  if (upd->dtype != data->dtype && upd->dtype != OWB_TYPE_UNDEFINED && data->dtype != OWB_TYPE_UNDEFINED)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "updates are %s but data is %s", owb_data_type_name (upd->dtype),
                           owb_data_type_name (data->dtype));
      return FALSE;
    }
  const char *red = owb_node_get_string (ctx->node, "reduction", "none");
  int max_red = strcmp (ctx->node->op_type, "Scatter") == 0 ? 0 : ctx->opset >= 18 ? 4 : ctx->opset >= 16 ? 2 : 0;
  const char *names[] = { "add", "mul", "max", "min" };
  gboolean ok = strcmp (red, "none") == 0;
  for (int i = 0; i < max_red; i++)
    ok |= strcmp (red, names[i]) == 0;
  if (!ok)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "reduction '%s' is not supported at this opset", red);
      return FALSE;
    }
  if (strcmp (ctx->node->op_type, "ScatterND") != 0 && data->rank >= 0)
    {
      int a;
      if (data->rank == 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "data must have rank >= 1");
          return FALSE;
        }
      if (!owb_infer_axis (ctx, owb_node_get_int (ctx->node, "axis", 0), data->rank, &a, error))
        return FALSE;
    }
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

/* ---- Shape, Size, ConstantOfShape, Expand, Tile, Range, Constant, Identity ---- */

static gboolean
infer_shape (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  _owb_infer_set_tensor (&ctx->outputs[0], OWB_TYPE_INT64, 1);
  if (x->rank < 0)
    return TRUE;
  int64_t r = x->rank;
  int64_t start = ctx->opset >= 15 ? owb_node_get_int (ctx->node, "start", 0) : 0;
  int64_t end = ctx->opset >= 15 ? owb_node_get_int (ctx->node, "end", r) : r;
  if (start < 0)
    start += r;
  if (end < 0)
    end += r;
  start = CLAMP (start, 0, r);
  end = CLAMP (end, 0, r);
  ctx->outputs[0].dims[0] = OWB_DIM_VALUE (MAX (end - start, 0));
  return TRUE;
}

static gboolean
infer_size (OwbInferContext *ctx, GError **error)
{
  _owb_infer_set_tensor (&ctx->outputs[0], OWB_TYPE_INT64, 0);
  return TRUE;
}

static gboolean
infer_constant_of_shape (OwbInferContext *ctx, GError **error)
{
  const OwbAttribute *value = owb_node_get_attribute (ctx->node, "value");
  OwbDataType dtype = OWB_TYPE_FLOAT;
  if (value)
    {
      if (value->type != OWB_ATTR_TENSOR || !value->t || value->t->nelems != 1)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute 'value' must be a one-element tensor");
          return FALSE;
        }
      dtype = value->t->dtype;
    }
  if (!check_int_input (ctx, 0, "input", error))
    return FALSE;
  g_autofree int64_t *shape = NULL;
  int64_t n;
  const OwbInferElement *sym = NULL;
  if (!owb_infer_get_ints (ctx, 0, &shape, &n) && !get_shape_data (ctx, 0, &shape, &n, &sym))
    {
      int64_t len = known_length (ctx, 0);
      if (!check_rank (ctx, len, error))
        return FALSE;
      _owb_infer_set_tensor (&ctx->outputs[0], dtype, (int) len);
      return TRUE;
    }
  if (!check_rank (ctx, n, error))
    return FALSE;
  _owb_infer_set_tensor (&ctx->outputs[0], dtype, (int) n);
  for (int i = 0; i < n; i++)
    {
      if (sym_unknown (sym, i))
        {
          ctx->outputs[0].dims[i] = sym_dim (sym, i);
          continue;
        }
      if (shape[i] < 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "shape value %" G_GINT64_FORMAT " is negative", shape[i]);
          return FALSE;
        }
      ctx->outputs[0].dims[i] = OWB_DIM_VALUE (shape[i]);
    }
  return TRUE;
}

static gboolean
infer_expand (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  g_autofree int64_t *shape = NULL;
  int64_t n;
  const OwbInferElement *sym = NULL;
  if (!check_int_input (ctx, 1, "shape", error))
    return FALSE;
  if (!owb_infer_get_ints (ctx, 1, &shape, &n) && !get_shape_data (ctx, 1, &shape, &n, &sym))
    {
      int64_t len = known_length (ctx, 1);
      int64_t rank = len >= 0 && x->rank >= 0 ? MAX (len, x->rank) : -1;
      if (!check_rank (ctx, rank, error))
        return FALSE;
      _owb_infer_set_tensor (&ctx->outputs[0], x->dtype, (int) rank);
      return TRUE;
    }
  if (!check_rank (ctx, n, error))
    return FALSE;
  OwbValueType st;
  _owb_infer_set_tensor (&st, x->dtype, (int) n);
  for (int i = 0; i < n; i++)
    {
      if (sym_unknown (sym, i))
        {
          st.dims[i] = sym_dim (sym, i);
          continue;
        }
      if (shape[i] < 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "shape value %" G_GINT64_FORMAT " is negative", shape[i]);
          return FALSE;
        }
      st.dims[i] = OWB_DIM_VALUE (shape[i]);
    }
  const OwbValueType *types[2] = { x, &st };
  if (!owb_infer_broadcast (ctx, 2, types, &ctx->outputs[0], error))
    return FALSE;
  ctx->outputs[0].kind = OWB_VALUE_TENSOR;
  ctx->outputs[0].dtype = x->dtype;
  return TRUE;
}

static gboolean
infer_tile (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  OwbValueType *out = &ctx->outputs[0];
  _owb_infer_set_tensor (out, x->dtype, x->rank);
  if (x->rank < 0)
    return TRUE;
  for (int d = 0; d < x->rank; d++)
    out->dims[d] = x->dims[d];
  if (ctx->opset < 6)
    {
      /* Tile-1: a scalar count of copies along a scalar axis. */
      const OwbTensor *tiles = in_value (ctx, 1), *axis = in_value (ctx, 2);
      if (!axis)
        {
          for (int d = 0; d < x->rank; d++)
            out->dims[d] = OWB_DIM_UNKNOWN;
          return TRUE;
        }
      int a;
      if (axis->nelems != 1 || !owb_infer_axis (ctx, owb_tensor_get_int64 (axis, 0), x->rank, &a, error))
        {
          if (axis->nelems != 1)
            owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "axis must be a scalar");
          return FALSE;
        }
      if (!tiles || tiles->nelems != 1)
        {
          out->dims[a] = OWB_DIM_UNKNOWN;
          return TRUE;
        }
      int64_t t = owb_tensor_get_int64 (tiles, 0);
      if (t < 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "tiles %" G_GINT64_FORMAT " is negative", t);
          return FALSE;
        }
      out->dims[a] = dim_mul (x->dims[a], OWB_DIM_VALUE (t));
      return TRUE;
    }
  if (!check_int_input (ctx, 1, "repeats", error))
    return FALSE;
  g_autofree int64_t *rep = NULL;
  int64_t n;
  if (!owb_infer_get_ints (ctx, 1, &rep, &n))
    {
      for (int d = 0; d < x->rank; d++)
        out->dims[d] = OWB_DIM_UNKNOWN;
      return TRUE;
    }
  if (n != x->rank)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "repeats has %" G_GINT64_FORMAT " entries for a rank-%d input",
                           n, x->rank);
      return FALSE;
    }
  for (int d = 0; d < x->rank; d++)
    {
      if (rep[d] < 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "repeat %" G_GINT64_FORMAT " is negative", rep[d]);
          return FALSE;
        }
      out->dims[d] = dim_mul (x->dims[d], OWB_DIM_VALUE (rep[d]));
      if (owb_dim_is_known (x->dims[d]) && x->dims[d].value > 0 && !owb_dim_is_known (out->dims[d]))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "tiled size of axis %d overflows", d);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
infer_range (OwbInferContext *ctx, GError **error)
{
  OwbDataType dtype = ctx->inputs[0]->dtype;
  for (int i = 1; i < 3; i++)
    if (ctx->inputs[i]->dtype != dtype && ctx->inputs[i]->dtype != OWB_TYPE_UNDEFINED && dtype != OWB_TYPE_UNDEFINED)
      {
        owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "start, limit and delta must have the same type");
        return FALSE;
      }
  _owb_infer_set_tensor (&ctx->outputs[0], dtype, 1);
  const OwbTensor *v[3];
  for (int i = 0; i < 3; i++)
    {
      v[i] = in_value (ctx, i);
      if (!v[i])
        {
          /* Range (0, n, 1) over a named dim n (a sequence length) has n elements. */
          const OwbInferData *limit = owb_infer_get_data (ctx, 1);
          const OwbTensor *start = in_value (ctx, 0), *delta = in_value (ctx, 2);
          if (i == 1 && limit && limit->n == 1 && limit->elements[0].param && start && delta && start->nelems == 1
              && delta->nelems == 1 && owb_tensor_get_double (start, 0) == 0 && owb_tensor_get_double (delta, 0) == 1)
            ctx->outputs[0].dims[0] = (OwbDim) { -1, limit->elements[0].param };
          return TRUE;
        }
      if (v[i]->nelems != 1)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %d must be a scalar", i);
          return FALSE;
        }
    }
  int64_t count;
  if (dtype == OWB_TYPE_INT64 || dtype == OWB_TYPE_INT32 || dtype == OWB_TYPE_INT16 || dtype == OWB_TYPE_INT8)
    {
      int64_t start = owb_tensor_get_int64 (v[0], 0), limit = owb_tensor_get_int64 (v[1], 0);
      int64_t delta = owb_tensor_get_int64 (v[2], 0);
      if (delta == 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "delta is 0");
          return FALSE;
        }
      /* Differences of int64s may overflow: go through 128 bits. */
      __int128 diff = (__int128) limit - start;
      __int128 c = delta > 0 ? (diff + delta - 1) / delta : (diff + delta + 1) / delta;
      if ((delta > 0 && diff <= 0) || (delta < 0 && diff >= 0))
        c = 0;
      count = (int64_t) MIN (c, (__int128) G_MAXINT64);
    }
  else
    {
      double start = owb_tensor_get_double (v[0], 0), limit = owb_tensor_get_double (v[1], 0);
      double delta = owb_tensor_get_double (v[2], 0);
      if (delta == 0 || !isfinite (start) || !isfinite (limit) || !isfinite (delta))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "start, limit and delta must be finite, delta non-zero");
          return FALSE;
        }
      /* The difference in the input's precision, the division in double (as ONNX Runtime counts). */
      double diff = dtype == OWB_TYPE_DOUBLE ? limit - start : (double) ((float) limit - (float) start);
      double c = ceil (diff / delta);
      if (c > 1e15)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "range of %g elements is too large", c);
          return FALSE;
        }
      count = c > 0 ? (int64_t) c : 0;
    }
  ctx->outputs[0].dims[0] = OWB_DIM_VALUE (count);
  return TRUE;
}

static gboolean
infer_constant (OwbInferContext *ctx, GError **error)
{
  const OwbAttribute *found = NULL;
  for (int i = 0; i < ctx->node->n_attributes; i++)
    {
      const OwbAttribute *a = &ctx->node->attributes[i];
      if (!g_str_has_prefix (a->name, "value") && strcmp (a->name, "sparse_value") != 0)
        continue;
      if (found)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "has both '%s' and '%s'", found->name, a->name);
          return FALSE;
        }
      found = a;
    }
  if (!found)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "has no value attribute");
      return FALSE;
    }
  OwbValueType *out = &ctx->outputs[0];
  const char *name = found->name;
  if (strcmp (name, "value") == 0 && found->type == OWB_ATTR_TENSOR && found->t)
    owb_tensor_get_value_type (found->t, out);
  else if (strcmp (name, "value_float") == 0 && found->type == OWB_ATTR_FLOAT)
    _owb_infer_set_tensor (out, OWB_TYPE_FLOAT, 0);
  else if (strcmp (name, "value_int") == 0 && found->type == OWB_ATTR_INT)
    _owb_infer_set_tensor (out, OWB_TYPE_INT64, 0);
  else if (strcmp (name, "value_string") == 0 && found->type == OWB_ATTR_STRING)
    _owb_infer_set_tensor (out, OWB_TYPE_STRING, 0);
  else if ((strcmp (name, "value_floats") == 0 && found->type == OWB_ATTR_FLOATS)
           || (strcmp (name, "value_ints") == 0 && found->type == OWB_ATTR_INTS)
           || (strcmp (name, "value_strings") == 0 && found->type == OWB_ATTR_STRINGS))
    {
      _owb_infer_set_tensor (out, found->type == OWB_ATTR_FLOATS ? OWB_TYPE_FLOAT
                       : found->type == OWB_ATTR_INTS ? OWB_TYPE_INT64 : OWB_TYPE_STRING, 1);
      out->dims[0] = OWB_DIM_VALUE (found->n);
    }
  else if (strcmp (name, "sparse_value") == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_UNSUPPORTED_OP, "sparse_value is not supported");
      return FALSE;
    }
  else
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute '%s' is unknown or of the wrong type", name);
      return FALSE;
    }
  if (ctx->opset < 12 && strcmp (name, "value") != 0 && strcmp (name, "sparse_value") != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute '%s' needs opset 12", name);
      return FALSE;
    }
  return TRUE;
}

static gboolean
infer_identity (OwbInferContext *ctx, GError **error)
{
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

/* ---- Pad ---- */

static gboolean
infer_pad (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  OwbValueType *out = &ctx->outputs[0];
  const char *mode = owb_node_get_string (ctx->node, "mode", "constant");
  if (strcmp (mode, "constant") != 0 && strcmp (mode, "reflect") != 0 && strcmp (mode, "edge") != 0
      && strcmp (mode, "wrap") != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "mode '%s' is not constant, reflect, edge or wrap", mode);
      return FALSE;
    }
  _owb_infer_set_tensor (out, x->dtype, x->rank);
  g_autofree int64_t *pads = NULL, *axes = NULL;
  int64_t np = 0, na = -1;
  if (ctx->opset < 11)
    {
      int n;
      const int64_t *p = owb_node_get_ints (ctx->node, ctx->opset < 2 ? "paddings" : "pads", &n);
      if (!p)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute '%s' is missing",
                               ctx->opset < 2 ? "paddings" : "pads");
          return FALSE;
        }
      pads = g_memdup2 (p, sizeof (int64_t) * MAX (n, 1));
      np = n;
    }
  else
    {
      if (!check_int_input (ctx, 1, "pads", error) || !check_int_input (ctx, 3, "axes", error))
        return FALSE;
      const OwbValueType *cv = in_type (ctx, 2);
      if (cv && cv->dtype != x->dtype && cv->dtype != OWB_TYPE_UNDEFINED && x->dtype != OWB_TYPE_UNDEFINED)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "constant_value is %s but data is %s",
                               owb_data_type_name (cv->dtype), owb_data_type_name (x->dtype));
          return FALSE;
        }
      if (!owb_infer_get_ints (ctx, 1, &pads, &np))
        return TRUE;
      if (in_type (ctx, 3) && !owb_infer_get_ints (ctx, 3, &axes, &na))
        return TRUE;
    }
  if (x->rank < 0)
    return TRUE;
  int norm[OWB_MAX_RANK];
  int64_t n = axes ? na : x->rank;
  if (axes)
    {
      if (!normalize_axes (ctx, axes, na, x->rank, norm, error))
        return FALSE;
    }
  else
    for (int i = 0; i < x->rank; i++)
      norm[i] = i;
  if (np != 2 * n)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "pads has %" G_GINT64_FORMAT " values, expected %" G_GINT64_FORMAT, np, 2 * n);
      return FALSE;
    }
  for (int d = 0; d < x->rank; d++)
    out->dims[d] = x->dims[d];
  for (int i = 0; i < n; i++)
    {
      int64_t b = pads[i], e = pads[i + n];
      int d = norm[i];
      if (b == 0 && e == 0)
        continue;
      if (b > G_MAXINT32 || e > G_MAXINT32 || b < -G_MAXINT32 || e < -G_MAXINT32)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "pads of axis %d are out of range", d);
          return FALSE;
        }
      if (!owb_dim_is_known (x->dims[d]))
        {
          out->dims[d] = OWB_DIM_UNKNOWN;
          continue;
        }
      int64_t size = x->dims[d].value + b + e;
      if (size < 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "pads make axis %d negative", d);
          return FALSE;
        }
      if (strcmp (mode, "constant") != 0 && x->dims[d].value == 0 && size > 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "cannot pad empty axis %d in %s mode", d, mode);
          return FALSE;
        }
      out->dims[d] = OWB_DIM_VALUE (size);
    }
  return TRUE;
}

/* ---- DepthToSpace, SpaceToDepth, Trilu, OneHot, CumSum, NonZero ---- */

static gboolean
infer_depth_space (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  OwbValueType *out = &ctx->outputs[0];
  gboolean to_space = strcmp (ctx->node->op_type, "DepthToSpace") == 0;
  int64_t b = owb_node_get_int (ctx->node, "blocksize", 0);
  const char *mode = owb_node_get_string (ctx->node, "mode", "DCR");
  if (b < 1 || b > 65536)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "blocksize %" G_GINT64_FORMAT " is invalid", b);
      return FALSE;
    }
  if (strcmp (mode, "DCR") != 0 && strcmp (mode, "CRD") != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "mode '%s' is not DCR or CRD", mode);
      return FALSE;
    }
  _owb_infer_set_tensor (out, x->dtype, 4);
  if (x->rank < 0)
    return TRUE;
  if (x->rank != 4)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have rank 4, not %d", x->rank);
      return FALSE;
    }
  out->dims[0] = x->dims[0];
  OwbDim c = x->dims[1], h = x->dims[2], w = x->dims[3];
  if (to_space)
    {
      if (owb_dim_is_known (c) && c.value % (b * b) != 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "channels %" G_GINT64_FORMAT " are not a multiple of %"
                               G_GINT64_FORMAT, c.value, b * b);
          return FALSE;
        }
      out->dims[1] = owb_dim_is_known (c) ? OWB_DIM_VALUE (c.value / (b * b)) : OWB_DIM_UNKNOWN;
      out->dims[2] = dim_mul (h, OWB_DIM_VALUE (b));
      out->dims[3] = dim_mul (w, OWB_DIM_VALUE (b));
    }
  else
    {
      if ((owb_dim_is_known (h) && h.value % b != 0) || (owb_dim_is_known (w) && w.value % b != 0))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "height and width must be multiples of %" G_GINT64_FORMAT, b);
          return FALSE;
        }
      out->dims[1] = dim_mul (c, OWB_DIM_VALUE (b * b));
      out->dims[2] = owb_dim_is_known (h) ? OWB_DIM_VALUE (h.value / b) : OWB_DIM_UNKNOWN;
      out->dims[3] = owb_dim_is_known (w) ? OWB_DIM_VALUE (w.value / b) : OWB_DIM_UNKNOWN;
      if (b == 1)
        out->dims[2] = h, out->dims[3] = w;
    }
  return TRUE;
}

static gboolean
infer_trilu (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  if (x->rank >= 0 && x->rank < 2)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have rank >= 2, not %d", x->rank);
      return FALSE;
    }
  if (!check_int_input (ctx, 1, "k", error))
    return FALSE;
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

static gboolean
infer_one_hot (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *ind = ctx->inputs[0];
  OwbValueType *out = &ctx->outputs[0];
  OwbDataType dtype = ctx->inputs[2]->dtype;
  if (ind->rank < 0)
    {
      _owb_infer_set_tensor (out, dtype, -1);
      return TRUE;
    }
  int rank = ind->rank + 1;
  if (!check_rank (ctx, rank, error))
    return FALSE;
  int a;
  if (!owb_infer_axis (ctx, owb_node_get_int (ctx->node, "axis", -1), rank, &a, error))
    return FALSE;
  _owb_infer_set_tensor (out, dtype, rank);
  for (int i = 0, j = 0; i < rank; i++)
    if (i != a)
      out->dims[i] = ind->dims[j++];
  const OwbTensor *depth = in_value (ctx, 1);
  if (depth)
    {
      double d = depth->nelems == 1 ? owb_tensor_get_double (depth, 0) : -1;
      if (!(d >= 1 && d < 1e12))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "depth must be a positive scalar");
          return FALSE;
        }
      out->dims[a] = OWB_DIM_VALUE ((int64_t) d);
    }
  return TRUE;
}

static gboolean
infer_cumsum (OwbInferContext *ctx, GError **error)
{
  if (!check_int_input (ctx, 1, "axis", error))
    return FALSE;
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

static gboolean
infer_non_zero (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  _owb_infer_set_tensor (&ctx->outputs[0], OWB_TYPE_INT64, 2);
  if (x->rank >= 0)
    ctx->outputs[0].dims[0] = OWB_DIM_VALUE (x->rank);
  return TRUE;
}

const OwbOpSchema _owb_ops_tensor[] = {
  { "Reshape", "", 1, 1, 1, 1, 1, infer_reshape },
  { "Reshape", "", 5, 2, 2, 1, 1, infer_reshape },
  { "Flatten", "", 1, 1, 1, 1, 1, infer_flatten },
  { "Transpose", "", 1, 1, 1, 1, 1, infer_transpose },
  { "Squeeze", "", 1, 1, 1, 1, 1, infer_squeeze },
  { "Squeeze", "", 13, 1, 2, 1, 1, infer_squeeze },
  { "Unsqueeze", "", 1, 1, 1, 1, 1, infer_unsqueeze },
  { "Unsqueeze", "", 13, 2, 2, 1, 1, infer_unsqueeze },
  { "Concat", "", 1, 1, -1, 1, 1, infer_concat },
  { "Split", "", 1, 1, 2, 1, -1, infer_split },
  { "Split", "", 2, 1, 1, 1, -1, infer_split },
  { "Split", "", 13, 1, 2, 1, -1, infer_split },
  { "Slice", "", 1, 1, 1, 1, 1, infer_slice },
  { "Slice", "", 10, 3, 5, 1, 1, infer_slice },
  { "Gather", "", 1, 2, 2, 1, 1, infer_gather },
  { "GatherElements", "", 11, 2, 2, 1, 1, infer_gather_elements },
  { "GatherND", "", 11, 2, 2, 1, 1, infer_gather_nd },
  { "Scatter", "", 9, 3, 3, 1, 1, infer_scatter },
  { "ScatterElements", "", 11, 3, 3, 1, 1, infer_scatter },
  { "ScatterND", "", 11, 3, 3, 1, 1, infer_scatter },
  { "Shape", "", 1, 1, 1, 1, 1, infer_shape },
  { "Size", "", 1, 1, 1, 1, 1, infer_size },
  { "ConstantOfShape", "", 9, 1, 1, 1, 1, infer_constant_of_shape },
  { "Expand", "", 8, 2, 2, 1, 1, infer_expand },
  { "Tile", "", 1, 3, 3, 1, 1, infer_tile },
  { "Tile", "", 6, 2, 2, 1, 1, infer_tile },
  { "Range", "", 11, 3, 3, 1, 1, infer_range },
  { "Constant", "", 1, 0, 0, 1, 1, infer_constant },
  { "Identity", "", 1, 1, 1, 1, 1, infer_identity },
  { "Pad", "", 1, 1, 1, 1, 1, infer_pad },
  { "Pad", "", 11, 2, 3, 1, 1, infer_pad },
  { "Pad", "", 18, 2, 4, 1, 1, infer_pad },
  { "DepthToSpace", "", 1, 1, 1, 1, 1, infer_depth_space },
  { "SpaceToDepth", "", 1, 1, 1, 1, 1, infer_depth_space },
  { "Trilu", "", 14, 1, 2, 1, 1, infer_trilu },
  { "OneHot", "", 9, 3, 3, 1, 1, infer_one_hot },
  { "CumSum", "", 11, 2, 2, 1, 1, infer_cumsum },
  { "NonZero", "", 9, 1, 1, 1, 1, infer_non_zero },
  { NULL }
};
