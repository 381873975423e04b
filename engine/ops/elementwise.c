/* elementwise.c: schemas and shape inference of the elementwise op family (math, activations,
 * comparisons, logic, bitwise ops, Where, Cast). */
#include "owb-ops-private.h"
#include <owb/owb-error.h>

#include <string.h>

static gboolean
check_same_dtype (OwbInferContext *ctx, int i, int j, GError **error)
{
  const OwbValueType *a = ctx->inputs[i], *b = ctx->inputs[j];
  if (!a || !b || a->dtype == OWB_TYPE_UNDEFINED || b->dtype == OWB_TYPE_UNDEFINED || a->dtype == b->dtype)
    return TRUE;
  owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d is %s but input %d is %s", i,
                       owb_data_type_name (a->dtype), j, owb_data_type_name (b->dtype));
  return FALSE;
}

static gboolean
check_dtype (OwbInferContext *ctx, int i, OwbDataType want, GError **error)
{
  const OwbValueType *t = ctx->inputs[i];
  if (!t || t->dtype == OWB_TYPE_UNDEFINED || t->dtype == want)
    return TRUE;
  owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d must be %s, not %s", i, owb_data_type_name (want),
                       owb_data_type_name (t->dtype));
  return FALSE;
}

/* Before opset 7, binary ops broadcast only with broadcast=1: B is matched to a run of A's dims
 * starting at `axis` (by default B's dims are A's trailing ones). The output has A's shape. */
static gboolean
infer_legacy_broadcast (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *a = ctx->inputs[0], *b = ctx->inputs[1];
  OwbValueType *out = &ctx->outputs[0];
  *out = *a;
  out->kind = OWB_VALUE_TENSOR;
  if (a->rank < 0 || b->rank < 0)
    return TRUE;
  if (b->rank > a->rank)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "with broadcast=1, B (rank %d) cannot have a larger rank than A (rank %d)",
                           b->rank, a->rank);
      return FALSE;
    }
  int64_t axis = owb_node_get_int (ctx->node, "axis", a->rank - b->rank);
  if (axis < 0)
    axis += a->rank;
  if (axis < 0 || axis + b->rank > a->rank)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "broadcast axis %" G_GINT64_FORMAT
                           " does not fit B (rank %d) into A (rank %d)", owb_node_get_int (ctx->node, "axis", 0),
                           b->rank, a->rank);
      return FALSE;
    }
  for (int i = 0; i < b->rank; i++)
    {
      OwbDim db = b->dims[i], da = a->dims[axis + i];
      if (owb_dim_is_known (db) && owb_dim_is_known (da) && db.value != 1 && db.value != da.value)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "cannot broadcast B dimension %d (%" G_GINT64_FORMAT
                               ") to A dimension %" G_GINT64_FORMAT " (%" G_GINT64_FORMAT ")",
                               i, db.value, axis + i, da.value);
          return FALSE;
        }
    }
  return TRUE;
}

/* Numpy broadcasting of all present inputs (legacy broadcast for the two-input ops that had
 * the attribute before opset 7); the output takes `dtype`, or input 0's when UNDEFINED. */
static gboolean
infer_broadcast_to (OwbInferContext *ctx, OwbDataType dtype, gboolean legacy_attr, GError **error)
{
  OwbValueType *out = &ctx->outputs[0];
  if (legacy_attr && ctx->opset < 7 && ctx->n_inputs == 2 && owb_node_get_int (ctx->node, "broadcast", 0) != 0)
    {
      if (!infer_legacy_broadcast (ctx, error))
        return FALSE;
    }
  else if (!owb_infer_broadcast (ctx, ctx->n_inputs, ctx->inputs, out, error))
    return FALSE;
  out->kind = OWB_VALUE_TENSOR;
  out->dtype = dtype != OWB_TYPE_UNDEFINED ? dtype : ctx->inputs[0]->dtype;
  return TRUE;
}

static gboolean
infer_unary (OwbInferContext *ctx, GError **error)
{
  owb_infer_copy (ctx, 0, 0);
  ctx->outputs[0].kind = OWB_VALUE_TENSOR;
  return TRUE;
}

static gboolean
infer_unary_bool (OwbInferContext *ctx, GError **error)
{
  infer_unary (ctx, error);
  ctx->outputs[0].dtype = OWB_TYPE_BOOL;
  return TRUE;
}

static gboolean
infer_not (OwbInferContext *ctx, GError **error)
{
  return check_dtype (ctx, 0, OWB_TYPE_BOOL, error) && infer_unary (ctx, error);
}

static gboolean
infer_gelu (OwbInferContext *ctx, GError **error)
{
  const char *approximate = owb_node_get_string (ctx->node, "approximate", "none");
  if (strcmp (approximate, "none") != 0 && strcmp (approximate, "tanh") != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "approximate must be \"none\" or \"tanh\", not \"%s\"",
                           approximate);
      return FALSE;
    }
  return infer_unary (ctx, error);
}

static gboolean
infer_celu (OwbInferContext *ctx, GError **error)
{
  if (owb_node_get_float (ctx->node, "alpha", 1.0f) == 0.0f)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "alpha must not be 0");
      return FALSE;
    }
  return infer_unary (ctx, error);
}

static gboolean
infer_isinf (OwbInferContext *ctx, GError **error)
{
  return _owb_infer_get_flag (ctx, "detect_negative", 1, NULL, error)
         && _owb_infer_get_flag (ctx, "detect_positive", 1, NULL, error) && infer_unary_bool (ctx, error);
}

/* Add, Sub, Mul, Div and the bitwise ops: same-typed inputs, broadcast, output of that type. */
static gboolean
infer_binary (OwbInferContext *ctx, GError **error)
{
  return check_same_dtype (ctx, 0, 1, error) && infer_broadcast_to (ctx, OWB_TYPE_UNDEFINED, TRUE, error);
}

static gboolean
infer_compare (OwbInferContext *ctx, GError **error)
{
  return check_same_dtype (ctx, 0, 1, error) && infer_broadcast_to (ctx, OWB_TYPE_BOOL, TRUE, error);
}

static gboolean
infer_logic (OwbInferContext *ctx, GError **error)
{
  return check_dtype (ctx, 0, OWB_TYPE_BOOL, error) && check_dtype (ctx, 1, OWB_TYPE_BOOL, error)
         && infer_broadcast_to (ctx, OWB_TYPE_BOOL, TRUE, error);
}

static gboolean
infer_bitshift (OwbInferContext *ctx, GError **error)
{
  const char *direction = owb_node_get_string (ctx->node, "direction", "");
  if (strcmp (direction, "LEFT") != 0 && strcmp (direction, "RIGHT") != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "direction must be \"LEFT\" or \"RIGHT\", not \"%s\"",
                           direction);
      return FALSE;
    }
  return infer_binary (ctx, error);
}

static gboolean
infer_mod (OwbInferContext *ctx, GError **error)
{
  return _owb_infer_get_flag (ctx, "fmod", 0, NULL, error) && infer_binary (ctx, error);
}

/* From opset 12 the exponent may have another type than the base. */
static gboolean
infer_pow (OwbInferContext *ctx, GError **error)
{
  if (ctx->opset < 12 && !check_same_dtype (ctx, 0, 1, error))
    return FALSE;
  return infer_broadcast_to (ctx, OWB_TYPE_UNDEFINED, TRUE, error);
}

/* Min, Max, Sum, Mean: any number of same-typed inputs, broadcast together (before opset 8 the
 * shapes had to be equal, which broadcasting accepts too). */
static gboolean
infer_variadic (OwbInferContext *ctx, GError **error)
{
  for (int i = 1; i < ctx->n_inputs; i++)
    if (!check_same_dtype (ctx, 0, i, error))
      return FALSE;
  return infer_broadcast_to (ctx, OWB_TYPE_UNDEFINED, FALSE, error);
}

static gboolean
infer_where (OwbInferContext *ctx, GError **error)
{
  if (!check_dtype (ctx, 0, OWB_TYPE_BOOL, error) || !check_same_dtype (ctx, 1, 2, error))
    return FALSE;
  return infer_broadcast_to (ctx, ctx->inputs[1]->dtype, FALSE, error);
}

/* The slope broadcasts to X one way (opset 7+); before, it was one value or one per channel. */
static gboolean
infer_prelu (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0], *slope = ctx->inputs[1];
  if (!check_same_dtype (ctx, 0, 1, error))
    return FALSE;
  infer_unary (ctx, error);
  if (x->rank < 0 || slope->rank < 0)
    return TRUE;
  if (ctx->opset < 7 && slope->rank == 1 && x->rank >= 2)
    {
      OwbDim c = slope->dims[0];
      if (!owb_dim_is_known (c) || c.value == 1 || !owb_dim_is_known (x->dims[1]) || c.value == x->dims[1].value)
        return TRUE;
    }
  if (slope->rank > x->rank)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "slope (rank %d) does not broadcast to X (rank %d)", slope->rank,
                           x->rank);
      return FALSE;
    }
  for (int i = 0; i < slope->rank; i++)
    {
      OwbDim ds = slope->dims[i], dx = x->dims[x->rank - slope->rank + i];
      if (owb_dim_is_known (ds) && owb_dim_is_known (dx) && ds.value != 1 && ds.value != dx.value)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "slope dimension %d (%" G_GINT64_FORMAT
                               ") does not broadcast to X dimension %" G_GINT64_FORMAT,
                               i, ds.value, dx.value);
          return FALSE;
        }
    }
  return TRUE;
}

/* Before opset 11 min/max are attributes; after, optional scalar inputs of X's type. */
static gboolean
infer_clip (OwbInferContext *ctx, GError **error)
{
  for (int i = 1; i < ctx->n_inputs; i++)
    {
      const OwbValueType *t = ctx->inputs[i];
      if (!t)
        continue;
      if (!check_same_dtype (ctx, 0, i, error))
        return FALSE;
      for (int d = 0; d < t->rank; d++)
        if (owb_dim_is_known (t->dims[d]) && t->dims[d].value != 1)
          {
            owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %d (%s) must be a scalar", i, i == 1 ? "min" : "max");
            return FALSE;
          }
    }
  return infer_unary (ctx, error);
}

/* Cast-1 names the target type in a string. */
static const struct {
  const char *name;
  OwbDataType type;
} cast_names[] = {
  { "FLOAT", OWB_TYPE_FLOAT },   { "UINT8", OWB_TYPE_UINT8 },   { "INT8", OWB_TYPE_INT8 },
  { "UINT16", OWB_TYPE_UINT16 }, { "INT16", OWB_TYPE_INT16 },   { "INT32", OWB_TYPE_INT32 },
  { "INT64", OWB_TYPE_INT64 },   { "STRING", OWB_TYPE_STRING }, { "BOOL", OWB_TYPE_BOOL },
  { "FLOAT16", OWB_TYPE_FLOAT16 }, { "DOUBLE", OWB_TYPE_DOUBLE }, { "UINT32", OWB_TYPE_UINT32 },
  { "UINT64", OWB_TYPE_UINT64 },
};

/* round_mode (opset 24+, for float8e8m0 targets) is checked whatever the target, as a bad value is
 * a bad model. */
static gboolean
check_round_mode (OwbInferContext *ctx, GError **error)
{
  const char *mode = owb_node_get_string (ctx->node, "round_mode", "up");
  if (strcmp (mode, "up") == 0 || strcmp (mode, "down") == 0 || strcmp (mode, "nearest") == 0)
    return TRUE;
  owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "round_mode must be \"up\", \"down\" or \"nearest\", not \"%s\"",
                       mode);
  return FALSE;
}

static gboolean
infer_cast (OwbInferContext *ctx, GError **error)
{
  int64_t to = OWB_TYPE_UNDEFINED;
  if (!check_round_mode (ctx, error))
    return FALSE;
  const OwbAttribute *attr = owb_node_get_attribute (ctx->node, "to");
  if (attr && attr->type == OWB_ATTR_STRING)
    {
      for (guint i = 0; i < G_N_ELEMENTS (cast_names); i++)
        if (g_ascii_strcasecmp (attr->s, cast_names[i].name) == 0)
          to = cast_names[i].type;
      if (to == OWB_TYPE_UNDEFINED)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "unknown target type \"%s\"", attr->s);
          return FALSE;
        }
    }
  else if (attr && attr->type == OWB_ATTR_INT)
    to = attr->i;
  else
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "the attribute \"to\" is missing");
      return FALSE;
    }
  if (to <= OWB_TYPE_UNDEFINED || to > G_MAXINT || !owb_data_type_is_valid ((int) to)
      || to == OWB_TYPE_COMPLEX64 || to == OWB_TYPE_COMPLEX128)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "cannot cast to element type %" G_GINT64_FORMAT, to);
      return FALSE;
    }
  infer_unary (ctx, error);
  ctx->outputs[0].dtype = (OwbDataType) to;
  return TRUE;
}

static gboolean
infer_castlike (OwbInferContext *ctx, GError **error)
{
  if (!check_round_mode (ctx, error))
    return FALSE;
  infer_unary (ctx, error);
  ctx->outputs[0].dtype = ctx->inputs[1]->dtype;
  return TRUE;
}

/* Each op has one row from its first version; infer branches on ctx->opset where versions differ
 * (legacy broadcast before 7, Clip inputs from 11, mixed Pow types from 12, Cast-1's string `to`). */
const OwbOpSchema _owb_ops_elementwise[] = {
  /* Arithmetic */
  { "Add", "", 1, 2, 2, 1, 1, infer_binary },
  { "Sub", "", 1, 2, 2, 1, 1, infer_binary },
  { "Mul", "", 1, 2, 2, 1, 1, infer_binary },
  { "Div", "", 1, 2, 2, 1, 1, infer_binary },
  { "Pow", "", 1, 2, 2, 1, 1, infer_pow },
  { "Mod", "", 10, 2, 2, 1, 1, infer_mod },
  { "BitShift", "", 11, 2, 2, 1, 1, infer_bitshift },
  /* Unary math */
  { "Sqrt", "", 1, 1, 1, 1, 1, infer_unary },
  { "Exp", "", 1, 1, 1, 1, 1, infer_unary },
  { "Log", "", 1, 1, 1, 1, 1, infer_unary },
  { "Neg", "", 1, 1, 1, 1, 1, infer_unary },
  { "Abs", "", 1, 1, 1, 1, 1, infer_unary },
  { "Reciprocal", "", 1, 1, 1, 1, 1, infer_unary },
  { "Floor", "", 1, 1, 1, 1, 1, infer_unary },
  { "Ceil", "", 1, 1, 1, 1, 1, infer_unary },
  { "Round", "", 11, 1, 1, 1, 1, infer_unary },
  { "Sign", "", 9, 1, 1, 1, 1, infer_unary },
  { "Erf", "", 9, 1, 1, 1, 1, infer_unary },
  { "Sin", "", 7, 1, 1, 1, 1, infer_unary },
  { "Cos", "", 7, 1, 1, 1, 1, infer_unary },
  { "Tan", "", 7, 1, 1, 1, 1, infer_unary },
  { "Asin", "", 7, 1, 1, 1, 1, infer_unary },
  { "Acos", "", 7, 1, 1, 1, 1, infer_unary },
  { "Atan", "", 7, 1, 1, 1, 1, infer_unary },
  { "Sinh", "", 9, 1, 1, 1, 1, infer_unary },
  { "Cosh", "", 9, 1, 1, 1, 1, infer_unary },
  { "Asinh", "", 9, 1, 1, 1, 1, infer_unary },
  { "Acosh", "", 9, 1, 1, 1, 1, infer_unary },
  { "Atanh", "", 9, 1, 1, 1, 1, infer_unary },
  /* Activations */
  { "Relu", "", 1, 1, 1, 1, 1, infer_unary },
  { "LeakyRelu", "", 1, 1, 1, 1, 1, infer_unary },
  { "Sigmoid", "", 1, 1, 1, 1, 1, infer_unary },
  { "Tanh", "", 1, 1, 1, 1, 1, infer_unary },
  { "Clip", "", 1, 1, 1, 1, 1, infer_clip },
  { "Clip", "", 11, 1, 3, 1, 1, infer_clip },
  { "HardSigmoid", "", 1, 1, 1, 1, 1, infer_unary },
  { "HardSwish", "", 14, 1, 1, 1, 1, infer_unary },
  { "Gelu", "", 20, 1, 1, 1, 1, infer_gelu },
  { "Softplus", "", 1, 1, 1, 1, 1, infer_unary },
  { "Softsign", "", 1, 1, 1, 1, 1, infer_unary },
  { "Elu", "", 1, 1, 1, 1, 1, infer_unary },
  { "Selu", "", 1, 1, 1, 1, 1, infer_unary },
  { "Celu", "", 12, 1, 1, 1, 1, infer_celu },
  { "ThresholdedRelu", "", 10, 1, 1, 1, 1, infer_unary },
  { "Mish", "", 18, 1, 1, 1, 1, infer_unary },
  { "Shrink", "", 9, 1, 1, 1, 1, infer_unary },
  { "PRelu", "", 1, 2, 2, 1, 1, infer_prelu },
  /* Variadic */
  { "Min", "", 1, 1, -1, 1, 1, infer_variadic },
  { "Max", "", 1, 1, -1, 1, 1, infer_variadic },
  { "Sum", "", 1, 1, -1, 1, 1, infer_variadic },
  { "Mean", "", 1, 1, -1, 1, 1, infer_variadic },
  /* Selection, comparison, logic */
  { "Where", "", 9, 3, 3, 1, 1, infer_where },
  { "Equal", "", 1, 2, 2, 1, 1, infer_compare },
  { "Less", "", 1, 2, 2, 1, 1, infer_compare },
  { "Greater", "", 1, 2, 2, 1, 1, infer_compare },
  { "LessOrEqual", "", 12, 2, 2, 1, 1, infer_compare },
  { "GreaterOrEqual", "", 12, 2, 2, 1, 1, infer_compare },
  { "Not", "", 1, 1, 1, 1, 1, infer_not },
  { "And", "", 1, 2, 2, 1, 1, infer_logic },
  { "Or", "", 1, 2, 2, 1, 1, infer_logic },
  { "Xor", "", 1, 2, 2, 1, 1, infer_logic },
  { "BitwiseAnd", "", 18, 2, 2, 1, 1, infer_binary },
  { "BitwiseOr", "", 18, 2, 2, 1, 1, infer_binary },
  { "BitwiseXor", "", 18, 2, 2, 1, 1, infer_binary },
  { "BitwiseNot", "", 18, 1, 1, 1, 1, infer_unary },
  { "IsNaN", "", 9, 1, 1, 1, 1, infer_unary_bool },
  { "IsInf", "", 10, 1, 1, 1, 1, infer_isinf },
  /* Conversion */
  { "Cast", "", 1, 1, 1, 1, 1, infer_cast },
  { "CastLike", "", 15, 2, 2, 1, 1, infer_castlike },
  { NULL }
};
