/* reduce.c: schemas and shape inference of the reduction family (Reduce*, ArgMax/ArgMin, TopK) and
 * Einsum. The resampling ops Resize and Upsample are in resize.c. */
#include "owb-ops-private.h"

#include <owb/owb-error.h>
#include <math.h>
#include <string.h>

/* Attribute and input values are untrusted: counts beyond this are refused rather than read. */
#define MAX_LIST 4096

static const OwbValueType *
input_type (OwbInferContext *ctx, int i)
{
  return i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}

/* ---- Reduce* ---- */

/* The output of a reduction over the masked axes of in: they go, or stay as 1 with keepdims. */
static void
reduced_shape (const OwbValueType *in, const gboolean *mask, gboolean keepdims, OwbValueType *out)
{
  out->rank = 0;
  for (int d = 0; d < in->rank; d++) {
    if (!mask[d])
      out->dims[out->rank++] = in->dims[d];
    else if (keepdims)
      out->dims[out->rank++] = OWB_DIM_VALUE (1);
  }
}

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
    if (at != NULL && !_owb_infer_read_input_ints (ctx, 1, axes, OWB_MAX_RANK, &n_axes, &known, error))
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
  if (!_owb_infer_axes_to_mask (ctx, axes, n_axes, in->rank, mask, error))
    return FALSE;
  if (n_axes == 0)
    for (int d = 0; d < in->rank; d++)
      mask[d] = TRUE;

  reduced_shape (in, mask, keepdims, out);
  return TRUE;
}

/* ---- ArgMax / ArgMin and TopK: an ordering along one axis ---- */

/* The input's elements are compared: not strings or booleans. */
static gboolean
check_ordered_type (OwbInferContext *ctx, const OwbValueType *in, GError **error)
{
  if (in->dtype == OWB_TYPE_STRING || in->dtype == OWB_TYPE_BOOL) {
    owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "%s does not accept %s tensors", ctx->node->op_type,
                         owb_data_type_name (in->dtype));
    return FALSE;
  }
  return TRUE;
}

/* The axis (attribute value `axis`) of an input of known rank, which must be 1 or more. */
static gboolean
ordered_axis (OwbInferContext *ctx, const OwbValueType *in, int64_t axis, int *ax, GError **error)
{
  if (in->rank == 0) {
    owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "the input must have rank 1 or more");
    return FALSE;
  }
  return owb_infer_axis (ctx, axis, in->rank, ax, error);
}

static gboolean
infer_arg (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *in = ctx->inputs[0];
  OwbValueType *out = &ctx->outputs[0];
  gboolean keepdims = owb_node_get_int (ctx->node, "keepdims", 1) != 0;
  int64_t axis = owb_node_get_int (ctx->node, "axis", 0);
  int ax;

  if (!check_ordered_type (ctx, in, error))
    return FALSE;
  out->kind = OWB_VALUE_TENSOR;
  out->dtype = OWB_TYPE_INT64;
  if (in->rank < 0) {
    out->rank = -1;
    return TRUE;
  }
  if (!ordered_axis (ctx, in, axis, &ax, error))
    return FALSE;
  gboolean mask[OWB_MAX_RANK] = { FALSE };
  mask[ax] = TRUE;
  reduced_shape (in, mask, keepdims, out);
  return TRUE;
}

static gboolean
infer_topk (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *in = ctx->inputs[0];
  int64_t axis = owb_node_get_int (ctx->node, "axis", -1);
  int64_t k = -1;
  gboolean k_known = FALSE;
  int ax;

  if (!check_ordered_type (ctx, in, error))
    return FALSE;
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
    if (!_owb_infer_read_input_ints (ctx, 1, v, 1, &n, &k_known, error))
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
  if (!ordered_axis (ctx, in, axis, &ax, error))
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
  { NULL }
};
