/* owb-infer-helpers.c: checks and helpers shared by the inference functions of all op families. */
#include <owb/owb-op.h>
#include <owb/owb-error.h>

#include <stdarg.h>
#include <string.h>

void
owb_infer_set_error (OwbInferContext *ctx, GError **error, int code, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  char *msg = g_strdup_vprintf (format, args);
  va_end (args);
  char *who = owb_node_describe (ctx->node);
  g_set_error (error, OWB_ERROR, code, "%s: %s", who, msg);
  g_free (who);
  g_free (msg);
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
  ctx->values_read = TRUE;
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
