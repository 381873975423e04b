/* owb-infer-helpers.c: checks and helpers shared by the inference functions of all op families. */
#include "ir/owb-ir-private.h"
#include "owb-ops-private.h"
#include <owb/owb-op.h>
#include <owb/owb-error.h>

#include <math.h>
#include <stdarg.h>
#include <string.h>

void
owb_infer_set_error (OwbInferContext *ctx, GError **error, int code, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  _owb_node_set_error_valist (ctx->node, error, code, format, args);
  va_end (args);
}

const char *
owb_value_kind_name (OwbValueKind kind)
{
  switch (kind)
    {
    case OWB_VALUE_TENSOR:
      return "tensor";
    case OWB_VALUE_SEQUENCE:
      return "sequence";
    case OWB_VALUE_OPTIONAL:
      return "optional";
    case OWB_VALUE_MAP:
      return "map";
    case OWB_VALUE_SPARSE_TENSOR:
      return "sparse tensor";
    default:
      return "value of unknown kind";
    }
}

/* The few ops of sequences and optionals (and the control-flow ops that pass any value through)
 * say which kinds they take where; every other op reads its inputs as tensors, and a kernel fed a
 * sequence would read its element list as tensor data. */
gboolean
owb_op_input_accepts_kind (const char *domain, const char *op_type, int input, OwbValueKind kind)
{
  if (kind == OWB_VALUE_TENSOR || kind == OWB_VALUE_UNKNOWN_KIND)
    {
      /* These read a sequence at input 0 and nothing else there. */
      static const char *const sequence_first[] = { "SequenceInsert", "SequenceErase", "SequenceAt",
                                                    "SequenceLength", "ConcatFromSequence", "SequenceMap" };
      if (kind == OWB_VALUE_TENSOR && input == 0 && (op_type[0] == 'S' || op_type[0] == 'C')
          && _owb_domain_is_default (domain))
        for (guint i = 0; i < G_N_ELEMENTS (sequence_first); i++)
          if (strcmp (op_type, sequence_first[i]) == 0)
            return FALSE;
      return TRUE;
    }
  if (!_owb_domain_is_default (domain))
    return FALSE;
  if (strcmp (op_type, "Identity") == 0 || strcmp (op_type, "Optional") == 0
      || strcmp (op_type, "OptionalHasElement") == 0 || strcmp (op_type, "OptionalGetElement") == 0)
    return kind != OWB_VALUE_SPARSE_TENSOR;
  if (strcmp (op_type, "Loop") == 0)
    return input >= 2 && kind != OWB_VALUE_SPARSE_TENSOR;
  if (kind != OWB_VALUE_SEQUENCE)
    return FALSE;
  if (strcmp (op_type, "SequenceInsert") == 0 || strcmp (op_type, "SequenceErase") == 0
      || strcmp (op_type, "SequenceAt") == 0 || strcmp (op_type, "SequenceLength") == 0
      || strcmp (op_type, "ConcatFromSequence") == 0)
    return input == 0;
  if (strcmp (op_type, "SequenceMap") == 0)
    return TRUE;
  return FALSE;
}

gboolean
owb_value_type_kind_is_known (const OwbValueType *type)
{
  /* An unknown type reads as a tensor of undefined element type and rank (owb_value_type_init_unknown):
   * it may be a sequence (a Loop body's outer value, a function's input), so it is checked when
   * its value is there, at run time. */
  return type && type->kind != OWB_VALUE_UNKNOWN_KIND
         && !(type->kind == OWB_VALUE_TENSOR && type->dtype == OWB_TYPE_UNDEFINED && type->rank < 0);
}

gboolean
owb_op_check_input_kinds (const OwbNode *node, int n_inputs, const OwbValueType *const *inputs, GError **error)
{
  for (int i = 0; i < n_inputs; i++)
    {
      if (!owb_value_type_kind_is_known (inputs[i])
          || owb_op_input_accepts_kind (node->domain, node->op_type, i, inputs[i]->kind))
        continue;
      OwbValueKind wanted = OWB_VALUE_TENSOR;
      if (!owb_op_input_accepts_kind (node->domain, node->op_type, i, OWB_VALUE_TENSOR))
        wanted = owb_op_input_accepts_kind (node->domain, node->op_type, i, OWB_VALUE_SEQUENCE) ? OWB_VALUE_SEQUENCE
                                                                                               : OWB_VALUE_OPTIONAL;
      char *who = owb_node_describe (node);
      g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "%s: input %d ('%s') is a %s; %s takes a %s there", who, i,
                   i < node->n_inputs && node->inputs[i] ? node->inputs[i] : "", owb_value_kind_name (inputs[i]->kind),
                   node->op_type, owb_value_kind_name (wanted));
      g_free (who);
      return FALSE;
    }
  return TRUE;
}

gboolean
owb_op_infer (const OwbOpSchema *schema, OwbInferContext *ctx, GError **error)
{
  int present = ctx->n_inputs;
  if (ctx->n_inputs < schema->min_inputs || (schema->max_inputs >= 0 && ctx->n_inputs > schema->max_inputs))
    {
      if (schema->max_inputs < 0)
        owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "has %d inputs, expected at least %d", present,
                             schema->min_inputs);
      else
        owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "has %d inputs, expected %d to %d", present,
                             schema->min_inputs, schema->max_inputs);
      return FALSE;
    }
  for (int i = 0; i < schema->min_inputs && i < ctx->n_inputs; i++)
    if (!ctx->inputs[i])
      {
        owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "required input %d is missing", i);
        return FALSE;
      }
  if (ctx->n_outputs < schema->min_outputs || (schema->max_outputs >= 0 && ctx->n_outputs > schema->max_outputs))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "has %d outputs, expected %d to %d", ctx->n_outputs,
                           schema->min_outputs, schema->max_outputs);
      return FALSE;
    }
  if (!owb_op_check_input_kinds (ctx->node, ctx->n_inputs, ctx->inputs, error))
    return FALSE;
  for (int i = 0; i < ctx->n_outputs; i++)
    owb_value_type_init_unknown (&ctx->outputs[i]);
  if (!schema->infer)
    return TRUE;
  return schema->infer (ctx, error);
}

gboolean
owb_infer_broadcast (OwbInferContext *ctx, int n, const OwbValueType *const *types, OwbValueType *out,
                     GError **error)
{
  int rank = 0;
  OwbDataType dtype = OWB_TYPE_UNDEFINED;
  for (int i = 0; i < n; i++)
    {
      if (!types[i])
        continue;
      if (dtype == OWB_TYPE_UNDEFINED)
        dtype = types[i]->dtype;
      if (types[i]->rank < 0)
        {
          owb_value_type_init_unknown (out);
          out->dtype = dtype;
          return TRUE;
        }
      rank = MAX (rank, types[i]->rank);
    }
  owb_value_type_init_unknown (out);
  out->dtype = dtype;
  out->rank = rank;
  for (int d = 0; d < rank; d++)
    {
      OwbDim result = OWB_DIM_VALUE (1);
      gboolean have_unknown = FALSE;
      for (int i = 0; i < n; i++)
        {
          if (!types[i])
            continue;
          int k = d - (rank - types[i]->rank);
          if (k < 0)
            continue;
          OwbDim dim = types[i]->dims[k];
          if (owb_dim_is_known (dim))
            {
              if (dim.value == 1)
                continue;
              if (owb_dim_is_known (result) && result.value != 1 && result.value != dim.value)
                {
                  owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                                       "cannot broadcast dimension %" G_GINT64_FORMAT " with %" G_GINT64_FORMAT
                                       " (input %d, axis %d)",
                                       result.value, dim.value, i, k);
                  return FALSE;
                }
              result = dim;
            }
          else if (dim.param)
            {
              /* A named dim wins over 1; two different names stay unknown. */
              if (owb_dim_is_known (result) && result.value == 1)
                result = dim;
              else if (!owb_dim_is_known (result) && result.param != dim.param)
                have_unknown = TRUE;
            }
          else
            have_unknown = TRUE;
        }
      if (have_unknown && !(owb_dim_is_known (result) && result.value != 1))
        result = OWB_DIM_UNKNOWN;
      out->dims[d] = result;
    }
  return TRUE;
}

void
owb_infer_copy (OwbInferContext *ctx, int out, int in)
{
  if (in < ctx->n_inputs && ctx->inputs[in])
    ctx->outputs[out] = *ctx->inputs[in];
}

gboolean
owb_infer_get_ints (OwbInferContext *ctx, int input, int64_t **values, int64_t *n)
{
  owb_infer_note_value_read (ctx, input);
  if (input >= ctx->n_inputs || !ctx->input_values || !ctx->input_values[input])
    return FALSE;
  const OwbTensor *t = ctx->input_values[input];
  if (t->kind != OWB_VALUE_TENSOR || (t->dtype != OWB_TYPE_INT64 && t->dtype != OWB_TYPE_INT32))
    return FALSE;
  *n = t->nelems;
  *values = g_new (int64_t, MAX (t->nelems, 1));
  for (int64_t i = 0; i < t->nelems; i++)
    (*values)[i] = owb_tensor_get_int64 (t, i);
  return TRUE;
}

const OwbInferData *
owb_infer_get_data (OwbInferContext *ctx, int input)
{
  owb_infer_note_value_read (ctx, input);
  if (input < 0 || input >= ctx->n_inputs || !ctx->input_data)
    return NULL;
  return ctx->input_data[input];
}

gboolean
owb_infer_axis (OwbInferContext *ctx, int64_t axis, int rank, int *out, GError **error)
{
  if (axis < -rank || axis >= rank || (rank == 0 && axis != 0))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "axis %" G_GINT64_FORMAT " is out of range for rank %d",
                           axis, rank);
      return FALSE;
    }
  *out = (int) (axis < 0 ? axis + rank : axis);
  return TRUE;
}

/* Reads the known value of input i as integers into vals (at most max); FALSE if the value is not
 * known. *n receives the element count; more than max elements is an error. */
gboolean
_owb_infer_read_input_ints (OwbInferContext *ctx, int i, int64_t *vals, int max, int *n, gboolean *known, GError **error)
{
  const OwbTensor *t = (i < ctx->n_inputs && ctx->input_values) ? ctx->input_values[i] : NULL;

  owb_infer_note_value_read (ctx, i);
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

/* Normalises axes into [0, rank) and marks them in mask; errors on out-of-range or repeated axes. */
gboolean
_owb_infer_axes_to_mask (OwbInferContext *ctx, const int64_t *axes, int n, int rank, gboolean *mask, GError **error)
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

gboolean
_owb_infer_get_conv_ints (OwbInferContext *ctx, const char *name, int want, int64_t def, int64_t lo, int64_t *out,
                          gboolean *present, GError **error)
{
  int n = 0;
  const int64_t *v = owb_node_get_ints (ctx->node, name, &n);
  if (present)
    *present = v != NULL;
  if (!v)
    {
      for (int i = 0; i < want; i++)
        out[i] = def;
      return TRUE;
    }
  if (n != want)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute %s has %d values, expected %d", name, n,
                           want);
      return FALSE;
    }
  for (int i = 0; i < n; i++)
    {
      if (v[i] < lo || v[i] > (G_GINT64_CONSTANT (1) << 31))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                               "attribute %s[%d] = %" G_GINT64_FORMAT " is out of range (%" G_GINT64_FORMAT
                               " to 2^31)",
                               name, i, v[i], lo);
          return FALSE;
        }
      out[i] = v[i];
    }
  return TRUE;
}

OwbDim
_owb_infer_dim (const OwbValueType *t, int i)
{
  if (!t || t->rank < 0 || i < 0 || i >= t->rank)
    return OWB_DIM_UNKNOWN;
  return t->dims[i];
}

gboolean
_owb_infer_check_same_dim (OwbInferContext *ctx, OwbDim a, OwbDim b, const char *what, GError **error)
{
  if (owb_dim_is_known (a) && owb_dim_is_known (b) && a.value != b.value)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "%s: %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT " differ",
                           what, a.value, b.value);
      return FALSE;
    }
  return TRUE;
}

gboolean
_owb_infer_check_input_type (OwbInferContext *ctx, int i, gboolean (*ok) (OwbDataType), const char *what,
                             GError **error)
{
  const OwbValueType *t = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
  if (!t || t->dtype == OWB_TYPE_UNDEFINED || ok (t->dtype))
    return TRUE;
  owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d must be %s, not %s", i, what,
                       owb_data_type_name (t->dtype));
  return FALSE;
}

gboolean
_owb_infer_get_flag (OwbInferContext *ctx, const char *name, int64_t def, int64_t *out, GError **error)
{
  int64_t v = owb_node_get_int (ctx->node, name, def);
  if (v != 0 && v != 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%s must be 0 or 1, not %" G_GINT64_FORMAT, name, v);
      return FALSE;
    }
  if (out)
    *out = v;
  return TRUE;
}

gboolean
_owb_infer_check_epsilon (OwbInferContext *ctx, GError **error)
{
  float eps = owb_node_get_float (ctx->node, "epsilon", 1e-5f);
  if (!isfinite (eps) || eps < 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "epsilon must be a non-negative number, not %g", eps);
      return FALSE;
    }
  return TRUE;
}

OwbDim
_owb_infer_element_count (const OwbValueType *t)
{
  if (!t || t->rank < 0)
    return OWB_DIM_UNKNOWN;
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++)
    {
      if (!owb_dim_is_known (t->dims[i]) || (t->dims[i].value > 0 && n > G_MAXINT64 / t->dims[i].value))
        return t->rank == 1 ? t->dims[0] : OWB_DIM_UNKNOWN;
      n *= t->dims[i].value;
    }
  return OWB_DIM_VALUE (n);
}

gboolean
_owb_infer_check_residual (OwbInferContext *ctx, const OwbValueType *z, OwbValueType *y, GError **error)
{
  if (!z)
    return TRUE;
  if (z->dtype != OWB_TYPE_UNDEFINED && y->dtype != OWB_TYPE_UNDEFINED && z->dtype != y->dtype)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "residual Z is %s but the convolution gives %s",
                           owb_data_type_name (z->dtype), owb_data_type_name (y->dtype));
      return FALSE;
    }
  if (z->rank < 0 || y->rank < 0)
    return TRUE;
  gboolean ok = z->rank == y->rank;
  for (int i = 0; ok && i < y->rank; i++)
    if (owb_dim_is_known (z->dims[i]) && owb_dim_is_known (y->dims[i]))
      ok = z->dims[i].value == y->dims[i].value;
  if (!ok)
    {
      g_autofree char *zs = owb_value_type_to_string (z), *ys = owb_value_type_to_string (y);
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "residual Z %s does not have the output's shape %s", zs, ys);
      return FALSE;
    }
  for (int i = 0; i < y->rank; i++)
    if (!owb_dim_is_known (y->dims[i]) && !y->dims[i].param)
      y->dims[i] = z->dims[i];
  return TRUE;
}

void
_owb_infer_set_tensor (OwbValueType *t, OwbDataType dtype, int rank)
{
  owb_value_type_init_unknown (t); /* a tensor, every dim unknown */
  t->dtype = dtype;
  t->rank = rank;
}
