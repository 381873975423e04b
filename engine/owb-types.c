/* owb-types.c: element type facts, value types and overflow-checked shape arithmetic. */
#include <owb/owb-types.h>
#include <owb/owb-error.h>

#include <string.h>

static const struct {
  const char *name;
  gsize size;
} type_info[OWB_TYPE_LAST_] = {
  [OWB_TYPE_UNDEFINED] = { "undefined", 0 },
  [OWB_TYPE_FLOAT] = { "float32", 4 },
  [OWB_TYPE_UINT8] = { "uint8", 1 },
  [OWB_TYPE_INT8] = { "int8", 1 },
  [OWB_TYPE_UINT16] = { "uint16", 2 },
  [OWB_TYPE_INT16] = { "int16", 2 },
  [OWB_TYPE_INT32] = { "int32", 4 },
  [OWB_TYPE_INT64] = { "int64", 8 },
  [OWB_TYPE_STRING] = { "string", 0 },
  [OWB_TYPE_BOOL] = { "bool", 1 },
  [OWB_TYPE_FLOAT16] = { "float16", 2 },
  [OWB_TYPE_DOUBLE] = { "float64", 8 },
  [OWB_TYPE_UINT32] = { "uint32", 4 },
  [OWB_TYPE_UINT64] = { "uint64", 8 },
  [OWB_TYPE_COMPLEX64] = { "complex64", 8 },
  [OWB_TYPE_COMPLEX128] = { "complex128", 16 },
  [OWB_TYPE_BFLOAT16] = { "bfloat16", 2 },
  [OWB_TYPE_FLOAT8E4M3FN] = { "float8e4m3fn", 1 },
  [OWB_TYPE_FLOAT8E4M3FNUZ] = { "float8e4m3fnuz", 1 },
  [OWB_TYPE_FLOAT8E5M2] = { "float8e5m2", 1 },
  [OWB_TYPE_FLOAT8E5M2FNUZ] = { "float8e5m2fnuz", 1 },
  [OWB_TYPE_UINT4] = { "uint4", 0 },
  [OWB_TYPE_INT4] = { "int4", 0 },
  [OWB_TYPE_FLOAT4E2M1] = { "float4e2m1", 0 },
  [OWB_TYPE_FLOAT8E8M0] = { "float8e8m0", 1 },
  [OWB_TYPE_UINT2] = { "uint2", 0 },
  [OWB_TYPE_INT2] = { "int2", 0 },
  [OWB_TYPE_FLOAT6E2M3] = { "float6e2m3", 0 },
  [OWB_TYPE_FLOAT6E3M2] = { "float6e3m2", 0 },
};

gboolean
owb_data_type_is_valid (int type)
{
  return type > OWB_TYPE_UNDEFINED && type < OWB_TYPE_LAST_;
}

gsize
owb_data_type_size (OwbDataType type)
{
  return owb_data_type_is_valid (type) ? type_info[type].size : 0;
}

int
owb_data_type_packed_bits (OwbDataType type)
{
  switch (type)
    {
    case OWB_TYPE_UINT4:
    case OWB_TYPE_INT4:
    case OWB_TYPE_FLOAT4E2M1:
      return 4;
    case OWB_TYPE_UINT2:
    case OWB_TYPE_INT2:
      return 2;
    case OWB_TYPE_FLOAT6E2M3:
    case OWB_TYPE_FLOAT6E3M2:
      return 6;
    default:
      return 0;
    }
}

const char *
owb_data_type_name (OwbDataType type)
{
  return owb_data_type_is_valid (type) ? type_info[type].name : "undefined";
}

void
owb_value_type_init_unknown (OwbValueType *type)
{
  memset (type, 0, sizeof *type);
  type->kind = OWB_VALUE_TENSOR;
  type->rank = -1;
  for (int i = 0; i < OWB_MAX_RANK; i++)
    type->dims[i] = OWB_DIM_UNKNOWN;
}

void
owb_value_type_init_tensor (OwbValueType *type, OwbDataType dtype, int rank, const int64_t *dims)
{
  owb_value_type_init_unknown (type);
  type->dtype = dtype;
  type->rank = rank;
  for (int i = 0; i < rank && i < OWB_MAX_RANK; i++)
    type->dims[i] = dims ? OWB_DIM_VALUE (dims[i]) : OWB_DIM_UNKNOWN;
}

gboolean
owb_value_type_is_fully_known (const OwbValueType *type)
{
  if (type->rank < 0)
    return FALSE;
  for (int i = 0; i < type->rank; i++)
    if (!owb_dim_is_known (type->dims[i]))
      return FALSE;
  return TRUE;
}

char *
owb_value_type_to_string (const OwbValueType *type)
{
  GString *s = g_string_new (NULL);
  switch (type->kind)
    {
    case OWB_VALUE_SEQUENCE:
      g_string_append (s, "seq(");
      break;
    case OWB_VALUE_OPTIONAL:
      g_string_append (s, "optional(");
      break;
    case OWB_VALUE_MAP:
      g_string_append_printf (s, "map(%s, ", owb_data_type_name (type->key_dtype));
      break;
    default:
      break;
    }
  g_string_append (s, owb_data_type_name (type->dtype));
  if (type->rank < 0)
    g_string_append (s, "[?]");
  else
    {
      g_string_append_c (s, '[');
      for (int i = 0; i < type->rank; i++)
        {
          if (i)
            g_string_append_c (s, ',');
          if (type->dims[i].param)
            g_string_append (s, type->dims[i].param);
          else if (type->dims[i].value >= 0)
            g_string_append_printf (s, "%" G_GINT64_FORMAT, type->dims[i].value);
          else
            g_string_append_c (s, '?');
        }
      g_string_append_c (s, ']');
    }
  if (type->kind == OWB_VALUE_SEQUENCE || type->kind == OWB_VALUE_OPTIONAL || type->kind == OWB_VALUE_MAP)
    g_string_append_c (s, ')');
  return g_string_free (s, FALSE);
}

gboolean
owb_shape_count (int rank, const int64_t *dims, int64_t *count, const char *what, GError **error)
{
  int64_t n = 1;
  if (rank < 0 || rank > OWB_MAX_RANK)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_SHAPE, "%s: rank %d is outside 0..%d", what ? what : "tensor", rank,
                   OWB_MAX_RANK);
      return FALSE;
    }
  for (int i = 0; i < rank; i++)
    {
      if (dims[i] < 0)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_SHAPE, "%s: dimension %d is negative (%" G_GINT64_FORMAT ")",
                       what ? what : "tensor", i, dims[i]);
          return FALSE;
        }
      if (dims[i] != 0 && n > G_MAXINT64 / dims[i])
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_SHAPE, "%s: element count overflows 64 bits at dimension %d",
                       what ? what : "tensor", i);
          return FALSE;
        }
      n *= dims[i];
    }
  *count = n;
  return TRUE;
}
