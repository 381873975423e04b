/* reduce.c: schemas and shape inference of the reduction family (Reduce*, ArgMax/ArgMin, TopK),
 * Einsum, and the resampling ops Resize and Upsample. */
#include "owb-ops-private.h"

#include <owb/owb-error.h>
#include <math.h>
#include <string.h>

/* Attribute and input values are untrusted: counts beyond this are refused rather than read. */
#define MAX_LIST 4096

/* Reads the known value of input i as integers into vals (at most max); FALSE if the value is not
 * known. *n receives the element count; more than max elements is an error. */
static gboolean
read_input_ints (OwbInferContext *ctx, int i, int64_t *vals, int max, int *n, gboolean *known, GError **error)
{
  const OwbTensor *t = (i < ctx->n_inputs && ctx->input_values) ? ctx->input_values[i] : NULL;

  ctx->values_read = TRUE;
  *known = FALSE;
  *n = 0;
  if (t == NULL)
    return TRUE;
  if (t->dtype != OWB_TYPE_INT64 && t->dtype != OWB_TYPE_INT32) {
    owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d must be int64, not %s", i, owb_data_type_name (t->dtype));
    return FALSE;
  }
  if (t->nelems > max) {
    owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %d has %" G_GINT64_FORMAT " values, more than the %d allowed",
                         i, t->nelems, max);
    return FALSE;
  }
  for (int64_t k = 0; k < t->nelems; k++)
    vals[k] = owb_tensor_get_int64 (t, k);
  *n = (int) t->nelems;
  *known = TRUE;
  return TRUE;
}

static const OwbValueType *
input_type (OwbInferContext *ctx, int i)
{
  return i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}

/* Normalises axes into [0, rank) and marks them in mask; errors on out-of-range or repeated axes. */
static gboolean
axes_to_mask (OwbInferContext *ctx, const int64_t *axes, int n, int rank, gboolean *mask, GError **error)
{
  for (int d = 0; d < OWB_MAX_RANK; d++)
    mask[d] = FALSE;
  for (int k = 0; k < n; k++) {
    int64_t a = axes[k];
    if (a < -rank || a >= rank) {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "axis %" G_GINT64_FORMAT " is out of range for rank %d", a, rank);
      return FALSE;
    }
    if (a < 0)
      a += rank;
    if (mask[a]) {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "axis %" G_GINT64_FORMAT " is repeated", axes[k]);
      return FALSE;
    }
    mask[a] = TRUE;
  }
  return TRUE;
}

/* ---- Reduce* ---- */

static gboolean
infer_reduce (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *in = ctx->inputs[0];
  OwbValueType *out = &ctx->outputs[0];
  const char *op = ctx->node->op_type;
  gboolean axes_input = ctx->opset >= 18 || (ctx->opset >= 13 && strcmp (op, "ReduceSum") == 0);
  gboolean keepdims = owb_node_get_int (ctx->node, "keepdims", 1) != 0;
  gboolean noop = axes_input && owb_node_get_int (ctx->node, "noop_with_empty_axes", 0) != 0;
  int64_t axes[OWB_MAX_RANK];
  int n_axes = 0;
  gboolean mask[OWB_MAX_RANK];

  if (in->dtype == OWB_TYPE_STRING) {
    owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "%s does not accept string tensors", op);
    return FALSE;
  }
  if (in->dtype == OWB_TYPE_BOOL && strcmp (op, "ReduceMax") != 0 && strcmp (op, "ReduceMin") != 0) {
    owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "%s does not accept bool tensors", op);
    return FALSE;
  }
  out->kind = OWB_VALUE_TENSOR;
  out->dtype = in->dtype;

  if (axes_input) {
    const OwbValueType *at = input_type (ctx, 1);
    gboolean known = TRUE;
    if (at != NULL && !read_input_ints (ctx, 1, axes, OWB_MAX_RANK, &n_axes, &known, error))
      return FALSE;
    if (!known) {
      /* Axes only known at run time: the rank survives when dims are kept. */
      if (in->rank < 0) {
        out->rank = -1;
      } else if (at->rank == 1 && at->dims[0].value == 0 && noop) {
        owb_infer_copy (ctx, 0, 0);
      } else if (at->rank == 1 && at->dims[0].value == 0) {
        /* Known to be empty: everything is reduced. */
        out->rank = keepdims ? in->rank : 0;
        for (int d = 0; d < out->rank; d++)
          out->dims[d] = OWB_DIM_VALUE (1);
      } else if (keepdims) {
        out->rank = in->rank;
        for (int d = 0; d < in->rank; d++)
          out->dims[d] = OWB_DIM_UNKNOWN;
      } else if (!noop && at->rank == 1 && at->dims[0].value > 0 && at->dims[0].value <= in->rank) {
        out->rank = in->rank - (int) at->dims[0].value;
        for (int d = 0; d < out->rank; d++)
          out->dims[d] = OWB_DIM_UNKNOWN;
      } else {
        out->rank = -1;
      }
      return TRUE;
    }
  } else {
    int n = 0;
    const int64_t *a = owb_node_get_ints (ctx->node, "axes", &n);
    if (n > OWB_MAX_RANK) {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "%d axes are more than the rank allows", n);
      return FALSE;
    }
    for (int k = 0; k < n; k++)
      axes[k] = a[k];
    n_axes = n;
  }

  if (in->rank < 0) {
    out->rank = -1;
    return TRUE;
  }
  if (n_axes == 0 && noop) {
    owb_infer_copy (ctx, 0, 0);
    return TRUE;
  }
  if (!axes_to_mask (ctx, axes, n_axes, in->rank, mask, error))
    return FALSE;
  if (n_axes == 0)
    for (int d = 0; d < in->rank; d++)
      mask[d] = TRUE;

  out->rank = 0;
  for (int d = 0; d < in->rank; d++) {
    if (!mask[d])
      out->dims[out->rank++] = in->dims[d];
    else if (keepdims)
      out->dims[out->rank++] = OWB_DIM_VALUE (1);
  }
  return TRUE;
}

/* ---- ArgMax / ArgMin ---- */

static gboolean
infer_arg (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *in = ctx->inputs[0];
  OwbValueType *out = &ctx->outputs[0];
  gboolean keepdims = owb_node_get_int (ctx->node, "keepdims", 1) != 0;
  int64_t axis = owb_node_get_int (ctx->node, "axis", 0);
  int ax;

  if (in->dtype == OWB_TYPE_STRING || in->dtype == OWB_TYPE_BOOL) {
    owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "%s does not accept %s tensors", ctx->node->op_type,
                         owb_data_type_name (in->dtype));
    return FALSE;
  }
  out->kind = OWB_VALUE_TENSOR;
  out->dtype = OWB_TYPE_INT64;
  if (in->rank < 0) {
    out->rank = -1;
    return TRUE;
  }
  if (in->rank == 0) {
    owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "the input must have rank 1 or more");
    return FALSE;
  }
  if (!owb_infer_axis (ctx, axis, in->rank, &ax, error))
    return FALSE;
  out->rank = 0;
  for (int d = 0; d < in->rank; d++) {
    if (d != ax)
      out->dims[out->rank++] = in->dims[d];
    else if (keepdims)
      out->dims[out->rank++] = OWB_DIM_VALUE (1);
  }
  return TRUE;
}

/* ---- TopK ---- */

static gboolean
infer_topk (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *in = ctx->inputs[0];
  int64_t axis = owb_node_get_int (ctx->node, "axis", -1);
  int64_t k = -1;
  gboolean k_known = FALSE;
  int ax;

  if (in->dtype == OWB_TYPE_STRING || in->dtype == OWB_TYPE_BOOL) {
    owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "TopK does not accept %s tensors", owb_data_type_name (in->dtype));
    return FALSE;
  }
  if (ctx->opset < 10) {
    const OwbAttribute *a = owb_node_get_attribute (ctx->node, "k");
    if (a == NULL || a->type != OWB_ATTR_INT) {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute 'k' is required");
      return FALSE;
    }
    k = a->i;
    k_known = TRUE;
  } else {
    int64_t v[1];
    int n = 0;
    const OwbValueType *kt = input_type (ctx, 1);
    if (kt == NULL) {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "input 'K' is required");
      return FALSE;
    }
    if (kt->rank > 1) {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "'K' must be a 1-D tensor of one value");
      return FALSE;
    }
    if (!read_input_ints (ctx, 1, v, 1, &n, &k_known, error))
      return FALSE;
    if (k_known) {
      if (n != 1) {
        owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "'K' must hold one value, not %d", n);
        return FALSE;
      }
      k = v[0];
    }
  }
  if (k_known && k < 0) {
    owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "k = %" G_GINT64_FORMAT " must not be negative", k);
    return FALSE;
  }

  for (int o = 0; o < 2 && o < ctx->n_outputs; o++) {
    ctx->outputs[o].kind = OWB_VALUE_TENSOR;
    ctx->outputs[o].dtype = o == 0 ? in->dtype : OWB_TYPE_INT64;
    ctx->outputs[o].rank = -1;
  }
  if (in->rank < 0)
    return TRUE;
  if (in->rank == 0) {
    owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "the input must have rank 1 or more");
    return FALSE;
  }
  if (!owb_infer_axis (ctx, axis, in->rank, &ax, error))
    return FALSE;
  if (k_known && owb_dim_is_known (in->dims[ax]) && k > in->dims[ax].value) {
    owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "k = %" G_GINT64_FORMAT " is larger than the axis (%" G_GINT64_FORMAT ")",
                         k, in->dims[ax].value);
    return FALSE;
  }
  for (int o = 0; o < 2 && o < ctx->n_outputs; o++) {
    OwbValueType *out = &ctx->outputs[o];
    out->rank = in->rank;
    for (int d = 0; d < in->rank; d++)
      out->dims[d] = in->dims[d];
    out->dims[ax] = k_known ? OWB_DIM_VALUE (k) : OWB_DIM_UNKNOWN;
  }
  return TRUE;
}

/* ---- Einsum ---- */

/* Shared with the CPU kernel (declared there too): parses an Einsum equation for operands of the
 * given ranks. labels[i * OWB_MAX_RANK + d] receives the label of dim d of operand i: 0-25 for
 * 'A'-'Z', 26-51 for 'a'-'z' (so label order is ASCII order), 52 + j for the j-th broadcast dim
 * of '...' (right-aligned over the operands). out_labels receives the output's labels. On error
 * returns FALSE with a newly allocated *message. */
gboolean _owb_einsum_parse (const char *equation, int n_operands, const int *ranks, int *labels, int *out_rank,
                            int *out_labels, char **message);

static int
einsum_letter (char c)
{
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return 26 + (c - 'a');
  return -1;
}

/* Splits one term into letter labels, with -1 marking where '...' stands; returns the number of
 * entries, or -1 on a bad character. */
static int
einsum_term (const char *s, const char *end, int *items, int max, gboolean *has_ellipsis, char **message)
{
  int n = 0;
  *has_ellipsis = FALSE;
  while (s < end) {
    if (*s == ' ') {
      s++;
      continue;
    }
    if (*s == '.') {
      if (end - s < 3 || s[1] != '.' || s[2] != '.' || *has_ellipsis) {
        *message = g_strdup ("'.' must appear as one '...' per term");
        return -1;
      }
      *has_ellipsis = TRUE;
      if (n >= max)
        goto too_many;
      items[n++] = -1;
      s += 3;
      continue;
    }
    int l = einsum_letter (*s);
    if (l < 0) {
      *message = g_strdup_printf ("unexpected character '%c'", *s);
      return -1;
    }
    if (n >= max)
      goto too_many;
    items[n++] = l;
    s++;
  }
  return n;
too_many:
  *message = g_strdup_printf ("a term has more than %d indices", max);
  return -1;
}

gboolean
_owb_einsum_parse (const char *equation, int n_operands, const int *ranks, int *labels, int *out_rank,
                   int *out_labels, char **message)
{
  const char *arrow = strstr (equation, "->");
  const char *lhs_end = arrow ? arrow : equation + strlen (equation);
  const char *s = equation;
  int counts[52] = { 0 };
  int n_ell = 0; /* broadcast dims of '...' over all operands */
  int ell_dims[64];
  int items[OWB_MAX_RANK + 1];

  *message = NULL;
  if (n_operands > 64) {
    *message = g_strdup ("too many operands");
    return FALSE;
  }
  for (int i = 0; i < n_operands; i++) {
    const char *comma = memchr (s, ',', lhs_end - s);
    const char *term_end = comma ? comma : lhs_end;
    gboolean has_ell;
    int n, n_letters, e;

    if (comma == NULL && i != n_operands - 1) {
      *message = g_strdup_printf ("the equation has %d terms for %d inputs", i + 1, n_operands);
      return FALSE;
    }
    n = einsum_term (s, term_end, items, OWB_MAX_RANK + 1, &has_ell, message);
    if (n < 0)
      return FALSE;
    n_letters = has_ell ? n - 1 : n;
    e = ranks[i] - n_letters;
    if (e < 0 || (!has_ell && e != 0)) {
      *message = g_strdup_printf ("term %d has %d indices for an input of rank %d", i, n_letters, ranks[i]);
      return FALSE;
    }
    ell_dims[i] = has_ell ? e : 0;
    if (ell_dims[i] > n_ell)
      n_ell = ell_dims[i];
    /* Ellipsis labels are assigned after all terms are read (they are right-aligned). */
    int d = 0;
    for (int k = 0; k < n; k++) {
      if (items[k] < 0) {
        for (int j = 0; j < e; j++)
          labels[i * OWB_MAX_RANK + d++] = -1 - j;
      } else {
        labels[i * OWB_MAX_RANK + d++] = items[k];
        counts[items[k]]++;
      }
    }
    s = term_end + 1;
    if (i == n_operands - 1 && comma != NULL) {
      *message = g_strdup_printf ("the equation has more terms than the %d inputs", n_operands);
      return FALSE;
    }
  }
  if (n_ell > OWB_MAX_RANK) {
    *message = g_strdup ("'...' stands for too many dims");
    return FALSE;
  }
  for (int i = 0; i < n_operands; i++)
    for (int d = 0; d < ranks[i]; d++) {
      int *l = &labels[i * OWB_MAX_RANK + d];
      if (*l < 0)
        *l = 52 + (n_ell - ell_dims[i]) + (-1 - *l);
    }

  *out_rank = 0;
  if (arrow) {
    gboolean has_ell;
    gboolean seen[52] = { FALSE };
    int n = einsum_term (arrow + 2, arrow + strlen (arrow), items, OWB_MAX_RANK + 1, &has_ell, message);
    if (n < 0)
      return FALSE;
    for (int k = 0; k < n; k++) {
      if (items[k] < 0) {
        for (int j = 0; j < n_ell; j++) {
          if (*out_rank >= OWB_MAX_RANK)
            goto rank_too_large;
          out_labels[(*out_rank)++] = 52 + j;
        }
        continue;
      }
      if (counts[items[k]] == 0) {
        *message = g_strdup_printf ("output index '%c' is not in any input",
                                      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"[items[k]]);
        return FALSE;
      }
      if (seen[items[k]]) {
        *message = g_strdup ("an output index is repeated");
        return FALSE;
      }
      seen[items[k]] = TRUE;
      if (*out_rank >= OWB_MAX_RANK)
        goto rank_too_large;
      out_labels[(*out_rank)++] = items[k];
    }
  } else {
    for (int j = 0; j < n_ell; j++)
      out_labels[(*out_rank)++] = 52 + j;
    for (int l = 0; l < 52; l++)
      if (counts[l] == 1) {
        if (*out_rank >= OWB_MAX_RANK)
          goto rank_too_large;
        out_labels[(*out_rank)++] = l;
      }
  }
  return TRUE;
rank_too_large:
  *message = g_strdup_printf ("the output would have more than %d dims", OWB_MAX_RANK);
  return FALSE;
}

static gboolean
infer_einsum (OwbInferContext *ctx, GError **error)
{
  const char *eq = owb_node_get_string (ctx->node, "equation", NULL);
  OwbValueType *out = &ctx->outputs[0];
  int ranks[64], out_labels[OWB_MAX_RANK], out_rank;
  int *labels;
  char *message = NULL;
  OwbDim sizes[52 + OWB_MAX_RANK];
  gboolean ok;

  if (eq == NULL) {
    owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute 'equation' is required");
    return FALSE;
  }
  if (ctx->n_inputs > 64) {
    owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%d inputs are more than Einsum supports", ctx->n_inputs);
    return FALSE;
  }
  out->kind = OWB_VALUE_TENSOR;
  out->dtype = ctx->inputs[0]->dtype;
  out->rank = -1;
  for (int i = 0; i < ctx->n_inputs; i++) {
    const OwbValueType *t = ctx->inputs[i];
    if (t == NULL) {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "input %d is missing", i);
      return FALSE;
    }
    if (t->dtype != out->dtype && t->dtype != OWB_TYPE_UNDEFINED && out->dtype != OWB_TYPE_UNDEFINED) {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d is %s but input 0 is %s", i, owb_data_type_name (t->dtype),
                           owb_data_type_name (out->dtype));
      return FALSE;
    }
    if (t->dtype == OWB_TYPE_STRING || t->dtype == OWB_TYPE_BOOL) {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "Einsum does not accept %s tensors", owb_data_type_name (t->dtype));
      return FALSE;
    }
    if (t->rank < 0)
      return TRUE;
    ranks[i] = t->rank;
  }

  labels = g_new (int, ctx->n_inputs * OWB_MAX_RANK);
  ok = _owb_einsum_parse (eq, ctx->n_inputs, ranks, labels, &out_rank, out_labels, &message);
  if (!ok) {
    owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "bad equation \"%s\": %s", eq, message);
    g_free (message);
    g_free (labels);
    return FALSE;
  }

  /* A label's size: a known size above 1 wins (size 1 broadcasts), then a symbolic one. */
  for (int l = 0; l < 52 + OWB_MAX_RANK; l++)
    sizes[l] = (OwbDim) { -2, NULL };
  for (int i = 0; i < ctx->n_inputs && ok; i++)
    for (int d = 0; d < ranks[i]; d++) {
      int l = labels[i * OWB_MAX_RANK + d];
      OwbDim dim = ctx->inputs[i]->dims[d];
      OwbDim *s = &sizes[l];
      if (s->value == -2) {
        *s = dim;
      } else if (owb_dim_is_known (dim) && owb_dim_is_known (*s)) {
        if (dim.value != s->value && dim.value != 1 && s->value != 1) {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "index sizes %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT
                               " of equation \"%s\" do not agree", s->value, dim.value, eq);
          ok = FALSE;
        } else if (s->value == 1) {
          *s = dim;
        }
      } else if (owb_dim_is_known (dim)) {
        if (dim.value != 1)
          *s = dim;
      } else if (owb_dim_is_known (*s) && s->value == 1) {
        *s = dim;
      } else if (s->param == NULL && dim.param != NULL) {
        *s = dim;
      }
    }
  if (ok) {
    out->rank = out_rank;
    for (int d = 0; d < out_rank; d++)
      out->dims[d] = sizes[out_labels[d]].value == -2 ? OWB_DIM_VALUE (1) : sizes[out_labels[d]];
  }
  g_free (labels);
  return ok;
}

/* ---- Resize / Upsample ---- */

static gboolean
check_choice (OwbInferContext *ctx, const char *attr, const char *value, const char *const *allowed, GError **error)
{
  for (int i = 0; allowed[i]; i++)
    if (strcmp (value, allowed[i]) == 0)
      return TRUE;
  owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "unsupported %s \"%s\"", attr, value);
  return FALSE;
}

/* The output length of a dim scaled by a factor, as the ONNX reference computes it. */
static gboolean
scaled_dim (OwbInferContext *ctx, OwbDim in, double scale, OwbDim *out, GError **error)
{
  if (scale == 1.0) {
    *out = in;
    return TRUE;
  }
  if (!owb_dim_is_known (in)) {
    *out = OWB_DIM_UNKNOWN;
    return TRUE;
  }
  double v = floor (scale * (double) in.value);
  if (!(v >= 0) || v > (double) (G_GINT64_CONSTANT (1) << 40)) {
    owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "scale %g makes an absurd output size", scale);
    return FALSE;
  }
  *out = OWB_DIM_VALUE ((int64_t) v);
  return TRUE;
}

static gboolean
infer_resize (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *in = ctx->inputs[0];
  OwbValueType *out = &ctx->outputs[0];
  const char *op = ctx->node->op_type;
  gboolean upsample = strcmp (op, "Upsample") == 0;
  int scales_input = -1, sizes_input = -1, rank = in->rank;
  double scales[OWB_MAX_RANK];
  gboolean have_scales = FALSE, values_unknown = FALSE;
  int64_t sizes[OWB_MAX_RANK];
  int n_sizes = 0;
  int axes[OWB_MAX_RANK], n_axes;
  static const char *const modes_10[] = { "nearest", "linear", NULL };
  static const char *const modes_1[] = { "nearest", "bilinear", "linear", NULL };
  static const char *const modes[] = { "nearest", "linear", "cubic", NULL };
  static const char *const coords[] = { "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                        "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn", NULL };
  static const char *const nearest_modes[] = { "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL };
  static const char *const policies[] = { "stretch", "not_larger", "not_smaller", NULL };
  const char *mode = owb_node_get_string (ctx->node, "mode", "nearest");
  const char *policy = "stretch";

  out->kind = OWB_VALUE_TENSOR;
  out->dtype = in->dtype;
  out->rank = rank;

  if (!check_choice (ctx, "mode", mode, upsample ? (ctx->opset < 7 ? modes_1 : modes_10) : (ctx->opset < 11 ? modes_10 : modes),
                     error))
    return FALSE;
  if (!upsample && ctx->opset >= 11) {
    const char *coord = owb_node_get_string (ctx->node, "coordinate_transformation_mode", "half_pixel");
    const char *nearest = owb_node_get_string (ctx->node, "nearest_mode", "round_prefer_floor");
    if (!check_choice (ctx, "coordinate_transformation_mode", coord, coords, error) ||
        !check_choice (ctx, "nearest_mode", nearest, nearest_modes, error))
      return FALSE;
    if (strcmp (coord, "half_pixel_symmetric") == 0 && ctx->opset < 19) {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "half_pixel_symmetric needs opset 19");
      return FALSE;
    }
  }
  if (!upsample && ctx->opset >= 18) {
    policy = owb_node_get_string (ctx->node, "keep_aspect_ratio_policy", "stretch");
    if (!check_choice (ctx, "keep_aspect_ratio_policy", policy, policies, error))
      return FALSE;
  }
  if (in->dtype == OWB_TYPE_STRING && strcmp (mode, "nearest") != 0) {
    owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "mode %s does not accept string tensors", mode);
    return FALSE;
  }
  if (rank < 0)
    return TRUE;
  for (int d = 0; d < rank; d++)
    out->dims[d] = OWB_DIM_UNKNOWN;

  /* Which axes the scales/sizes refer to. */
  n_axes = rank;
  for (int d = 0; d < rank; d++)
    axes[d] = d;
  if (!upsample && ctx->opset >= 18) {
    int n = 0;
    const int64_t *a = owb_node_get_ints (ctx->node, "axes", &n);
    if (a != NULL) {
      gboolean mask[OWB_MAX_RANK];
      if (n > rank) {
        owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "%d axes for rank %d", n, rank);
        return FALSE;
      }
      if (!axes_to_mask (ctx, a, n, rank, mask, error))
        return FALSE;
      for (int k = 0; k < n; k++)
        axes[k] = (int) (a[k] < 0 ? a[k] + rank : a[k]);
      n_axes = n;
    }
  }

  if (upsample && ctx->opset < 7) {
    if (rank != 4) {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "Upsample-1 needs a 4-D input, not rank %d", rank);
      return FALSE;
    }
    scales[0] = scales[1] = 1.0;
    scales[2] = owb_node_get_float (ctx->node, "height_scale", 1.0f);
    scales[3] = owb_node_get_float (ctx->node, "width_scale", 1.0f);
    have_scales = TRUE;
  } else if (upsample && ctx->opset < 9) {
    int n = 0;
    const float *f = owb_node_get_floats (ctx->node, "scales", &n);
    if (f == NULL || n != rank) {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute 'scales' must have %d values", rank);
      return FALSE;
    }
    for (int d = 0; d < rank; d++)
      scales[d] = f[d];
    have_scales = TRUE;
  } else {
    const OwbTensor *sv, *zv;
    if (upsample || ctx->opset < 11) {
      scales_input = 1;
    } else {
      scales_input = 2;
      sizes_input = 3;
    }
    if (input_type (ctx, scales_input) == NULL && (sizes_input < 0 || input_type (ctx, sizes_input) == NULL)) {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "one of 'scales' and 'sizes' is required");
      return FALSE;
    }
    ctx->values_read = TRUE;
    sv = input_type (ctx, scales_input) && ctx->input_values ? ctx->input_values[scales_input] : NULL;
    zv = sizes_input >= 0 && input_type (ctx, sizes_input) && ctx->input_values ? ctx->input_values[sizes_input] : NULL;
    if (input_type (ctx, scales_input) && sv == NULL && !(input_type (ctx, scales_input)->rank == 1 &&
                                                          input_type (ctx, scales_input)->dims[0].value == 0))
      values_unknown = TRUE;
    if (sizes_input >= 0 && input_type (ctx, sizes_input) && zv == NULL)
      values_unknown = TRUE;
    if (sv != NULL && sv->nelems > 0) {
      if (sv->dtype != OWB_TYPE_FLOAT && sv->dtype != OWB_TYPE_DOUBLE && sv->dtype != OWB_TYPE_FLOAT16) {
        owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "'scales' must be float, not %s", owb_data_type_name (sv->dtype));
        return FALSE;
      }
      if (sv->nelems != n_axes) {
        owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "'scales' has %" G_GINT64_FORMAT " values for %d axes", sv->nelems,
                             n_axes);
        return FALSE;
      }
      for (int d = 0; d < rank; d++)
        scales[d] = 1.0;
      for (int k = 0; k < n_axes; k++) {
        double s = owb_tensor_get_double (sv, k);
        if (!(s > 0) || !isfinite (s)) {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "scale %g must be positive", s);
          return FALSE;
        }
        scales[axes[k]] = s;
      }
      have_scales = TRUE;
    }
    if (zv != NULL && zv->nelems > 0) {
      gboolean known;
      if (have_scales) {
        owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "only one of 'scales' and 'sizes' may be given");
        return FALSE;
      }
      if (!read_input_ints (ctx, sizes_input, sizes, OWB_MAX_RANK, &n_sizes, &known, error))
        return FALSE;
      if (n_sizes != n_axes) {
        owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "'sizes' has %d values for %d axes", n_sizes, n_axes);
        return FALSE;
      }
      for (int k = 0; k < n_sizes; k++)
        if (sizes[k] < 0 || sizes[k] > (G_GINT64_CONSTANT (1) << 40)) {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "size %" G_GINT64_FORMAT " is out of range", sizes[k]);
          return FALSE;
        }
    }
  }

  if (have_scales) {
    for (int d = 0; d < rank; d++)
      if (!scaled_dim (ctx, in->dims[d], scales[d], &out->dims[d], error))
        return FALSE;
    return TRUE;
  }
  if (n_sizes > 0) {
    gboolean resized[OWB_MAX_RANK] = { FALSE };
    for (int k = 0; k < n_axes; k++)
      resized[axes[k]] = TRUE;
    for (int d = 0; d < rank; d++)
      if (!resized[d])
        out->dims[d] = in->dims[d];
    if (strcmp (policy, "stretch") == 0) {
      for (int k = 0; k < n_axes; k++)
        out->dims[axes[k]] = OWB_DIM_VALUE (sizes[k]);
    } else {
      double scale = strcmp (policy, "not_larger") == 0 ? INFINITY : -INFINITY;
      for (int k = 0; k < n_axes; k++) {
        OwbDim d = in->dims[axes[k]];
        if (!owb_dim_is_known (d))
          return TRUE;
        double s = (double) sizes[k] / (double) d.value;
        scale = strcmp (policy, "not_larger") == 0 ? fmin (scale, s) : fmax (scale, s);
      }
      for (int k = 0; k < n_axes; k++) {
        double v = scale * (double) in->dims[axes[k]].value + 0.5;
        if (!(v >= 0) || v > (double) (G_GINT64_CONSTANT (1) << 40)) {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "'sizes' make an absurd output size");
          return FALSE;
        }
        out->dims[axes[k]] = OWB_DIM_VALUE ((int64_t) v);
      }
    }
    return TRUE;
  }
  if (!values_unknown) {
    owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "one of 'scales' and 'sizes' must be non-empty");
    return FALSE;
  }
  /* Scales or sizes only known at run time: dims outside `axes` pass through. */
  if (n_axes < rank) {
    gboolean resized[OWB_MAX_RANK] = { FALSE };
    for (int k = 0; k < n_axes; k++)
      resized[axes[k]] = TRUE;
    for (int d = 0; d < rank; d++)
      if (!resized[d])
        out->dims[d] = in->dims[d];
  }
  return TRUE;
}

const OwbOpSchema _owb_ops_reduce[] = {
  { "ReduceMean", "", 1, 1, 2, 1, 1, infer_reduce },
  { "ReduceSum", "", 1, 1, 2, 1, 1, infer_reduce },
  { "ReduceMax", "", 1, 1, 2, 1, 1, infer_reduce },
  { "ReduceMin", "", 1, 1, 2, 1, 1, infer_reduce },
  { "ReduceProd", "", 1, 1, 2, 1, 1, infer_reduce },
  { "ReduceL1", "", 1, 1, 2, 1, 1, infer_reduce },
  { "ReduceL2", "", 1, 1, 2, 1, 1, infer_reduce },
  { "ReduceLogSum", "", 1, 1, 2, 1, 1, infer_reduce },
  { "ReduceLogSumExp", "", 1, 1, 2, 1, 1, infer_reduce },
  { "ReduceSumSquare", "", 1, 1, 2, 1, 1, infer_reduce },
  { "ArgMax", "", 1, 1, 1, 1, 1, infer_arg },
  { "ArgMin", "", 1, 1, 1, 1, 1, infer_arg },
  { "TopK", "", 1, 1, 1, 2, 2, infer_topk },
  { "TopK", "", 10, 2, 2, 2, 2, infer_topk },
  { "Einsum", "", 12, 1, -1, 1, 1, infer_einsum },
  { "Resize", "", 10, 2, 2, 1, 1, infer_resize },
  { "Resize", "", 11, 1, 4, 1, 1, infer_resize },
  { "Upsample", "", 1, 1, 1, 1, 1, infer_resize },
  { "Upsample", "", 9, 2, 2, 1, 1, infer_resize },
  { NULL }
};
