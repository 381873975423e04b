/* norm.c: schemas and shape inference of pooling, normalization, softmax-like and Dropout ops. */
#include "owb-ops-private.h"
#include "owb-norm-private.h"
#include <owb/owb-error.h>

#include <math.h>
#include <string.h>

/* Attribute sizes beyond this are refused: they can only come from a broken or hostile model and
 * would overflow the window arithmetic. */
#define ATTR_LIMIT (G_GINT64_CONSTANT (1) << 31)

/* Input i must be a tensor of a floating type (or, with allow_8bit, int8/uint8 as MaxPool-12 allows).
 * An unknown dtype (load time, untyped edge) passes. */
static gboolean
check_input (OwbInferContext *ctx, int i, gboolean allow_8bit, GError **error)
{
  const OwbValueType *t = ctx->inputs[i];
  if (t->kind != OWB_VALUE_TENSOR && t->kind != OWB_VALUE_UNKNOWN_KIND)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d must be a tensor", i);
      return FALSE;
    }
  if (t->dtype == OWB_TYPE_UNDEFINED || _owb_data_type_is_float (t->dtype))
    return TRUE;
  if (allow_8bit && (t->dtype == OWB_TYPE_INT8 || t->dtype == OWB_TYPE_UINT8))
    return TRUE;
  owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d has element type %s; a floating type is required%s", i,
                       owb_data_type_name (t->dtype), allow_8bit ? " (or int8/uint8)" : "");
  return FALSE;
}

static gboolean
check_min_rank (OwbInferContext *ctx, int i, int min_rank, GError **error)
{
  int rank = ctx->inputs[i]->rank;
  if (rank >= 0 && rank < min_rank)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %d has rank %d; at least %d is required", i, rank,
                           min_rank);
      return FALSE;
    }
  return TRUE;
}

/* Optional input i is present in the node. */
static gboolean
has_input (OwbInferContext *ctx, int i)
{
  return i < ctx->n_inputs && ctx->inputs[i] != NULL;
}

/* ---- pooling ---------------------------------------------------------------------------------- */

typedef enum { AUTO_PAD_NOTSET, AUTO_PAD_SAME_UPPER, AUTO_PAD_SAME_LOWER, AUTO_PAD_VALID } AutoPad;

typedef struct {
  int n; /* spatial rank */
  int64_t kernel[OWB_MAX_RANK], strides[OWB_MAX_RANK], dilations[OWB_MAX_RANK], pads[2 * OWB_MAX_RANK];
  AutoPad auto_pad;
  gboolean ceil_mode;
} PoolAttrs;

/* Reads an ints attribute of exactly `n` entries in [lo, ATTR_LIMIT) into out; absent: fill. */
static gboolean
read_ints_attr (OwbInferContext *ctx, const char *name, int n, int64_t lo, int64_t fill, int64_t *out,
                GError **error)
{
  int len = 0;
  const int64_t *v = owb_node_get_ints (ctx->node, name, &len);
  if (!v || len == 0)
    {
      for (int i = 0; i < n; i++)
        out[i] = fill;
      return TRUE;
    }
  if (len != n)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute %s has %d values, expected %d", name, len, n);
      return FALSE;
    }
  for (int i = 0; i < n; i++)
    {
      if (v[i] < lo || v[i] >= ATTR_LIMIT)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute %s[%d] = %" G_GINT64_FORMAT
                               " is out of range", name, i, v[i]);
          return FALSE;
        }
      out[i] = v[i];
    }
  return TRUE;
}

static gboolean
parse_auto_pad (OwbInferContext *ctx, AutoPad *out, GError **error)
{
  const char *s = owb_node_get_string (ctx->node, "auto_pad", "NOTSET");
  if (!s[0] || strcmp (s, "NOTSET") == 0)
    *out = AUTO_PAD_NOTSET;
  else if (strcmp (s, "SAME_UPPER") == 0)
    *out = AUTO_PAD_SAME_UPPER;
  else if (strcmp (s, "SAME_LOWER") == 0)
    *out = AUTO_PAD_SAME_LOWER;
  else if (strcmp (s, "VALID") == 0)
    *out = AUTO_PAD_VALID;
  else
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "unknown auto_pad value '%s'", s);
      return FALSE;
    }
  return TRUE;
}

static gboolean
pool_has_ceil_mode (OwbPoolKind kind, int opset)
{
  return (kind != OWB_POOL_LP && opset >= 10) || (kind == OWB_POOL_LP && opset >= 18);
}

static gboolean
parse_pool_attrs (OwbInferContext *ctx, OwbPoolKind kind, PoolAttrs *a, GError **error)
{
  int len = 0;
  const int64_t *kernel = owb_node_get_ints (ctx->node, "kernel_shape", &len);
  int rank = ctx->inputs[0]->rank;
  if (!kernel || len == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute kernel_shape is required");
      return FALSE;
    }
  if (len > OWB_MAX_RANK - 2 || (rank >= 0 && len != rank - 2))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "kernel_shape has %d values but the input has rank %d (expected rank - 2)", len, rank);
      return FALSE;
    }
  a->n = len;
  if (!read_ints_attr (ctx, "kernel_shape", len, 1, 1, a->kernel, error)
      || !read_ints_attr (ctx, "strides", len, 1, 1, a->strides, error)
      || !read_ints_attr (ctx, "pads", 2 * len, 0, 0, a->pads, error))
    return FALSE;
  if (_owb_pool_has_dilations (kind, ctx->opset))
    {
      if (!read_ints_attr (ctx, "dilations", len, 1, 1, a->dilations, error))
        return FALSE;
    }
  else
    for (int i = 0; i < len; i++)
      a->dilations[i] = 1;
  a->ceil_mode = pool_has_ceil_mode (kind, ctx->opset) && owb_node_get_int (ctx->node, "ceil_mode", 0) != 0;
  if (!parse_auto_pad (ctx, &a->auto_pad, error))
    return FALSE;
  if (kind == OWB_POOL_MAX && ctx->opset >= 8 && !_owb_infer_get_flag (ctx, "storage_order", 0, NULL, error))
    return FALSE;
  if (kind == OWB_POOL_LP)
    {
      double p = ctx->opset < 2 ? owb_node_get_float (ctx->node, "p", 2.0f)
                                : (double) owb_node_get_int (ctx->node, "p", 2);
      if (!(p > 0) || !isfinite (p))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "p must be positive, not %g", p);
          return FALSE;
        }
    }
  return TRUE;
}

/* Output length of spatial axis i, or -1 when the window never fits. */
static int64_t
pool_output_length (const PoolAttrs *a, int i, int64_t in)
{
  int64_t extent = (a->kernel[i] - 1) * a->dilations[i] + 1;
  int64_t s = a->strides[i];
  if (a->auto_pad == AUTO_PAD_SAME_UPPER || a->auto_pad == AUTO_PAD_SAME_LOWER)
    return (in + s - 1) / s;
  int64_t begin = a->auto_pad == AUTO_PAD_VALID ? 0 : a->pads[i];
  int64_t end = a->auto_pad == AUTO_PAD_VALID ? 0 : a->pads[i + a->n];
  int64_t span = in + begin + end - extent;
  if (span < 0)
    return -1;
  int64_t out = (a->ceil_mode ? (span + s - 1) / s : span / s) + 1;
  /* With ceil_mode, a last window that would start past the input and its begin padding is dropped. */
  if (a->ceil_mode && (out - 1) * s >= in + begin)
    out--;
  return out;
}

static gboolean
infer_pool (OwbInferContext *ctx, OwbPoolKind kind, GError **error)
{
  if (!check_input (ctx, 0, kind == OWB_POOL_MAX && ctx->opset >= 12, error) || !check_min_rank (ctx, 0, 3, error))
    return FALSE;
  if (kind == OWB_POOL_MAX && ctx->opset < 8 && ctx->n_outputs > 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "the Indices output exists from opset 8 on");
      return FALSE;
    }
  PoolAttrs a;
  if (!parse_pool_attrs (ctx, kind, &a, error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0];
  OwbValueType *y = &ctx->outputs[0];
  owb_value_type_init_unknown (y);
  y->dtype = x->dtype;
  y->rank = x->rank;
  if (x->rank >= 0)
    {
      y->dims[0] = x->dims[0];
      y->dims[1] = x->dims[1];
      for (int i = 0; i < a.n; i++)
        {
          OwbDim d = x->dims[i + 2];
          if (!owb_dim_is_known (d))
            {
              y->dims[i + 2] = OWB_DIM_UNKNOWN;
              continue;
            }
          int64_t out = pool_output_length (&a, i, d.value);
          if (out < 1)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                                   "the pooling window (kernel %" G_GINT64_FORMAT ", dilation %" G_GINT64_FORMAT
                                   ") does not fit spatial axis %d of length %" G_GINT64_FORMAT " with its padding",
                                   a.kernel[i], a.dilations[i], i, d.value);
              return FALSE;
            }
          y->dims[i + 2] = OWB_DIM_VALUE (out);
        }
    }
  if (ctx->n_outputs > 1)
    {
      ctx->outputs[1] = *y;
      ctx->outputs[1].dtype = OWB_TYPE_INT64;
    }
  return TRUE;
}

static gboolean
infer_max_pool (OwbInferContext *ctx, GError **error)
{
  return infer_pool (ctx, OWB_POOL_MAX, error);
}

static gboolean
infer_average_pool (OwbInferContext *ctx, GError **error)
{
  return infer_pool (ctx, OWB_POOL_AVERAGE, error);
}

static gboolean
infer_lp_pool (OwbInferContext *ctx, GError **error)
{
  return infer_pool (ctx, OWB_POOL_LP, error);
}

static gboolean
infer_global_pool (OwbInferContext *ctx, GError **error)
{
  if (!check_input (ctx, 0, FALSE, error) || !check_min_rank (ctx, 0, 2, error))
    return FALSE;
  if (strcmp (ctx->node->op_type, "GlobalLpPool") == 0)
    {
      double p = ctx->opset < 2 ? owb_node_get_float (ctx->node, "p", 2.0f)
                                : (double) owb_node_get_int (ctx->node, "p", 2);
      if (!(p > 0) || !isfinite (p))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "p must be positive, not %g", p);
          return FALSE;
        }
    }
  owb_infer_copy (ctx, 0, 0);
  OwbValueType *y = &ctx->outputs[0];
  for (int i = 2; i < y->rank; i++)
    y->dims[i] = OWB_DIM_VALUE (1);
  return TRUE;
}

/* ---- normalizations --------------------------------------------------------------------------- */

/* A per-channel parameter (input i) must be a vector of `count` elements when both are known. */
static gboolean
check_vector (OwbInferContext *ctx, int i, OwbDim count, const char *what, GError **error)
{
  const OwbValueType *t = ctx->inputs[i];
  if (t->rank < 0)
    return TRUE;
  if (t->rank != 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "%s (input %d) must have rank 1, not %d", what, i, t->rank);
      return FALSE;
    }
  if (owb_dim_is_known (t->dims[0]) && owb_dim_is_known (count) && t->dims[0].value != count.value)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "%s (input %d) has %" G_GINT64_FORMAT " elements, expected %" G_GINT64_FORMAT, what, i,
                           t->dims[0].value, count.value);
      return FALSE;
    }
  return TRUE;
}

static gboolean
infer_batch_normalization (OwbInferContext *ctx, GError **error)
{
  for (int i = 0; i < 5; i++)
    if (!check_input (ctx, i, FALSE, error))
      return FALSE;
  if (ctx->opset >= 14 && ctx->n_outputs > 3)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "has %d outputs; from opset 14 on at most 3",
                           ctx->n_outputs);
      return FALSE;
    }
  if (!_owb_infer_check_epsilon (ctx, error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0];
  if (x->rank == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input X must have rank 1 or more");
      return FALSE;
    }
  /* spatial = 0 (before opset 9) keeps one statistic per element of a sample instead of per channel. */
  gboolean spatial = ctx->opset >= 9 || owb_node_get_int (ctx->node, "spatial", 1) != 0;
  if (x->rank >= 0 && spatial)
    {
      OwbDim channels = x->rank >= 2 ? x->dims[1] : OWB_DIM_VALUE (1);
      static const char *const names[] = { "scale", "B", "input_mean", "input_var" };
      for (int i = 1; i < 5; i++)
        if (!check_vector (ctx, i, channels, names[i - 1], error))
          return FALSE;
    }
  owb_infer_copy (ctx, 0, 0);
  /* Running mean/var (and, before opset 14, the saved batch mean/var) follow the parameters. */
  for (int i = 1; i < ctx->n_outputs; i++)
    owb_infer_copy (ctx, i, i % 2 == 1 ? 3 : 4);
  return TRUE;
}

static gboolean
infer_instance_normalization (OwbInferContext *ctx, GError **error)
{
  for (int i = 0; i < 3; i++)
    if (!check_input (ctx, i, FALSE, error))
      return FALSE;
  if (!check_min_rank (ctx, 0, 2, error) || !_owb_infer_check_epsilon (ctx, error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0];
  if (x->rank >= 0)
    for (int i = 1; i < 3; i++)
      if (!check_vector (ctx, i, x->dims[1], i == 1 ? "scale" : "B", error))
        return FALSE;
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

static gboolean
stash_dtype (OwbInferContext *ctx, OwbDataType *out, GError **error)
{
  int64_t stash = owb_node_get_int (ctx->node, "stash_type", OWB_TYPE_FLOAT);
  if (stash != OWB_TYPE_FLOAT && stash != OWB_TYPE_DOUBLE && stash != OWB_TYPE_FLOAT16 && stash != OWB_TYPE_BFLOAT16)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "stash_type %" G_GINT64_FORMAT " is not a floating type",
                           stash);
      return FALSE;
    }
  *out = (OwbDataType) stash;
  return TRUE;
}

/* Input i must broadcast (unidirectionally) to the trailing dims of x from `axis` on. */
static gboolean
check_broadcasts_to_tail (OwbInferContext *ctx, int i, int axis, GError **error)
{
  const OwbValueType *t = ctx->inputs[i], *x = ctx->inputs[0];
  if (t->rank < 0 || x->rank < 0)
    return TRUE;
  int tail = x->rank - axis;
  if (t->rank > tail)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %d has rank %d; at most %d (the normalized axes)", i,
                           t->rank, tail);
      return FALSE;
    }
  for (int k = 0; k < t->rank; k++)
    {
      OwbDim d = t->dims[k], want = x->dims[x->rank - t->rank + k];
      if (owb_dim_is_known (d) && d.value != 1 && owb_dim_is_known (want) && d.value != want.value)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "input %d does not broadcast to the normalized shape: dimension %d is %" G_GINT64_FORMAT
                               ", expected %" G_GINT64_FORMAT " or 1",
                               i, k, d.value, want.value);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
infer_layer_normalization (OwbInferContext *ctx, GError **error)
{
  for (int i = 0; i < ctx->n_inputs; i++)
    if (ctx->inputs[i] && !check_input (ctx, i, FALSE, error))
      return FALSE;
  OwbDataType stash;
  if (!_owb_infer_check_epsilon (ctx, error) || !stash_dtype (ctx, &stash, error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0];
  owb_infer_copy (ctx, 0, 0);
  int axis = 0;
  if (x->rank >= 0)
    {
      if (!owb_infer_axis (ctx, owb_node_get_int (ctx->node, "axis", -1), x->rank, &axis, error))
        return FALSE;
      if (x->rank == 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input X must have rank 1 or more");
          return FALSE;
        }
      for (int i = 1; i < 3; i++)
        if (has_input (ctx, i) && !check_broadcasts_to_tail (ctx, i, axis, error))
          return FALSE;
    }
  for (int i = 1; i < ctx->n_outputs && i < 3; i++)
    {
      OwbValueType *o = &ctx->outputs[i];
      *o = *x;
      o->dtype = stash;
      for (int k = axis; k < x->rank; k++)
        o->dims[k] = OWB_DIM_VALUE (1);
    }
  return TRUE;
}

static gboolean
infer_group_normalization (OwbInferContext *ctx, GError **error)
{
  for (int i = 0; i < 3; i++)
    if (!check_input (ctx, i, FALSE, error))
      return FALSE;
  if (!check_min_rank (ctx, 0, 2, error) || !_owb_infer_check_epsilon (ctx, error))
    return FALSE;
  if (ctx->opset >= 21)
    {
      OwbDataType stash;
      if (!stash_dtype (ctx, &stash, error))
        return FALSE;
    }
  const OwbAttribute *attr = owb_node_get_attribute (ctx->node, "num_groups");
  if (!attr || attr->type != OWB_ATTR_INT)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute num_groups (int) is required");
      return FALSE;
    }
  int64_t groups = attr->i;
  const OwbValueType *x = ctx->inputs[0];
  if (groups < 1 || groups >= ATTR_LIMIT)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "num_groups must be positive, not %" G_GINT64_FORMAT,
                           groups);
      return FALSE;
    }
  if (x->rank >= 0 && owb_dim_is_known (x->dims[1]))
    {
      int64_t channels = x->dims[1].value;
      if (channels % groups != 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "%" G_GINT64_FORMAT " channels cannot be split into %" G_GINT64_FORMAT " groups",
                               channels, groups);
          return FALSE;
        }
    }
  /* Opset 18 has one scale/bias per group, opset 21 one per channel. */
  OwbDim count = ctx->opset >= 21 ? (x->rank >= 0 ? x->dims[1] : OWB_DIM_UNKNOWN) : OWB_DIM_VALUE (groups);
  for (int i = 1; i < 3; i++)
    if (!check_vector (ctx, i, count, i == 1 ? "scale" : "bias", error))
      return FALSE;
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

static gboolean
infer_mean_variance_normalization (OwbInferContext *ctx, GError **error)
{
  if (!check_input (ctx, 0, FALSE, error))
    return FALSE;
  int rank = ctx->inputs[0]->rank;
  int n = 0;
  const int64_t *axes = _owb_mvn_axes (ctx->node, &n);
  if (rank >= 0)
    {
      gboolean seen[OWB_MAX_RANK] = { FALSE };
      for (int i = 0; i < n; i++)
        {
          int a;
          if (!owb_infer_axis (ctx, axes[i], rank, &a, error))
            return FALSE;
          if (seen[a])
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "axis %d appears twice in axes", a);
              return FALSE;
            }
          seen[a] = TRUE;
        }
    }
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

static gboolean
infer_lp_normalization (OwbInferContext *ctx, GError **error)
{
  if (!check_input (ctx, 0, FALSE, error))
    return FALSE;
  int64_t p = owb_node_get_int (ctx->node, "p", 2);
  if (p != 1 && p != 2)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "p must be 1 or 2, not %" G_GINT64_FORMAT, p);
      return FALSE;
    }
  int axis;
  int rank = ctx->inputs[0]->rank;
  if (rank >= 0 && !owb_infer_axis (ctx, owb_node_get_int (ctx->node, "axis", -1), rank, &axis, error))
    return FALSE;
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

static gboolean
infer_lrn (OwbInferContext *ctx, GError **error)
{
  if (!check_input (ctx, 0, FALSE, error) || !check_min_rank (ctx, 0, 2, error))
    return FALSE;
  const OwbAttribute *size = owb_node_get_attribute (ctx->node, "size");
  if (!size || size->type != OWB_ATTR_INT)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute size (int) is required");
      return FALSE;
    }
  if (size->i < 1 || size->i >= ATTR_LIMIT)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "size must be positive, not %" G_GINT64_FORMAT, size->i);
      return FALSE;
    }
  float alpha = owb_node_get_float (ctx->node, "alpha", 1e-4f), beta = owb_node_get_float (ctx->node, "beta", 0.75f),
        bias = owb_node_get_float (ctx->node, "bias", 1.0f);
  if (!isfinite (alpha) || !isfinite (beta) || !isfinite (bias))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "alpha, beta and bias must be finite");
      return FALSE;
    }
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

/* Softmax, LogSoftmax, Hardmax: before opset 13 the input is seen as 2D, split at `axis`
 * (default 1, which may equal the rank); from 13 on the op works along one axis (default -1). */
static gboolean
infer_softmax (OwbInferContext *ctx, GError **error)
{
  if (!check_input (ctx, 0, FALSE, error))
    return FALSE;
  int rank = ctx->inputs[0]->rank;
  if (rank >= 0)
    {
      if (ctx->opset >= 13)
        {
          int axis;
          if (rank == 0)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have rank 1 or more");
              return FALSE;
            }
          if (!owb_infer_axis (ctx, owb_node_get_int (ctx->node, "axis", -1), rank, &axis, error))
            return FALSE;
        }
      else
        {
          int64_t axis = owb_node_get_int (ctx->node, "axis", 1);
          if (axis < -rank || axis > rank)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                                   "axis %" G_GINT64_FORMAT " is out of range for rank %d", axis, rank);
              return FALSE;
            }
        }
    }
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

/* ---- Dropout ---------------------------------------------------------------------------------- */

static gboolean
infer_dropout (OwbInferContext *ctx, GError **error)
{
  if (!check_input (ctx, 0, FALSE, error))
    return FALSE;
  if (ctx->opset < 12 && ctx->n_inputs > 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "ratio and training_mode inputs exist from opset 12 on");
      return FALSE;
    }
  if (has_input (ctx, 1))
    {
      if (!check_input (ctx, 1, FALSE, error))
        return FALSE;
      if (ctx->inputs[1]->rank > 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "ratio must be a scalar");
          return FALSE;
        }
    }
  if (has_input (ctx, 2))
    {
      const OwbValueType *t = ctx->inputs[2];
      if (t->dtype != OWB_TYPE_UNDEFINED && t->dtype != OWB_TYPE_BOOL)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "training_mode must be a bool tensor, not %s",
                               owb_data_type_name (t->dtype));
          return FALSE;
        }
      if (t->rank > 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "training_mode must be a scalar");
          return FALSE;
        }
    }
  if (ctx->opset < 12)
    {
      float ratio = owb_node_get_float (ctx->node, "ratio", 0.5f);
      if (!(ratio >= 0.0f && ratio <= 1.0f))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "ratio must be in [0, 1], not %g", ratio);
          return FALSE;
        }
    }
  owb_infer_copy (ctx, 0, 0);
  if (ctx->n_outputs > 1)
    {
      owb_infer_copy (ctx, 1, 0);
      /* The mask has X's type before opset 10 and is bool since. */
      if (ctx->opset >= 10)
        ctx->outputs[1].dtype = OWB_TYPE_BOOL;
    }
  return TRUE;
}

const OwbOpSchema _owb_ops_norm[] = {
  { "MaxPool", "", 1, 1, 1, 1, 2, infer_max_pool },
  { "AveragePool", "", 1, 1, 1, 1, 1, infer_average_pool },
  { "LpPool", "", 1, 1, 1, 1, 1, infer_lp_pool },
  { "GlobalMaxPool", "", 1, 1, 1, 1, 1, infer_global_pool },
  { "GlobalAveragePool", "", 1, 1, 1, 1, 1, infer_global_pool },
  { "GlobalLpPool", "", 1, 1, 1, 1, 1, infer_global_pool },
  { "BatchNormalization", "", 1, 5, 5, 1, 5, infer_batch_normalization },
  { "InstanceNormalization", "", 1, 3, 3, 1, 1, infer_instance_normalization },
  { "LayerNormalization", "", 17, 2, 3, 1, 3, infer_layer_normalization },
  { "GroupNormalization", "", 18, 3, 3, 1, 1, infer_group_normalization },
  { "MeanVarianceNormalization", "", 9, 1, 1, 1, 1, infer_mean_variance_normalization },
  { "LpNormalization", "", 1, 1, 1, 1, 1, infer_lp_normalization },
  { "LRN", "", 1, 1, 1, 1, 1, infer_lrn },
  { "Softmax", "", 1, 1, 1, 1, 1, infer_softmax },
  { "LogSoftmax", "", 1, 1, 1, 1, 1, infer_softmax },
  { "Hardmax", "", 1, 1, 1, 1, 1, infer_softmax },
  { "Dropout", "", 1, 1, 3, 1, 2, infer_dropout },
  { NULL }
};
