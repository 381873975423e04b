/* owb-tensor.c: tensor storage, reference counting, element access and type conversion. */
#include "owb-tensor-private.h"
#include <owb/owb-error.h>
#include <owb/owb-device.h>

#include <math.h>
#include <string.h>

static void
free_strings (OwbTensor *t)
{
  char **s = t->data;
  for (int64_t i = 0; i < t->nelems; i++)
    g_free (s[i]);
}

/* A new dense tensor's record, one reference, without its size or storage. */
static OwbTensor *
tensor_header (OwbDataType dtype, int rank, const int64_t *dims)
{
  OwbTensor *t = g_new0 (OwbTensor, 1);
  t->ref_count = 1;
  t->kind = OWB_VALUE_TENSOR;
  t->dtype = dtype;
  t->rank = rank;
  if (rank > 0)
    memcpy (t->dims, dims, rank * sizeof (int64_t));
  return t;
}

static OwbTensor *
tensor_alloc (OwbDataType dtype, int rank, const int64_t *dims, gboolean zero, GError **error)
{
  int64_t n;
  gsize elem;
  if (!owb_data_type_is_valid (dtype))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "unknown element type %d", dtype);
      return NULL;
    }
  if (!owb_shape_count (rank, dims, &n, "tensor", error))
    return NULL;
  elem = dtype == OWB_TYPE_STRING ? sizeof (char *) : _owb_data_type_memory_size (dtype);
  if (elem == 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "tensors of type %s are not supported", owb_data_type_name (dtype));
      return NULL;
    }
  if ((guint64) n > G_MAXSIZE / elem)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_NOMEM, "a %s tensor of %" G_GINT64_FORMAT " elements is too large",
                   owb_data_type_name (dtype), n);
      return NULL;
    }
  gsize nbytes = (gsize) n * elem;
  void *data = NULL;
  if (nbytes > 0)
    {
      /* Zeroed strings are NULL pointers, which the accessors treat as "". */
      data = (zero || dtype == OWB_TYPE_STRING) ? g_try_malloc0 (nbytes) : g_try_malloc (nbytes);
      if (!data)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_NOMEM, "cannot allocate %" G_GSIZE_FORMAT " bytes for a %s tensor",
                       nbytes, owb_data_type_name (dtype));
          return NULL;
        }
    }
  OwbTensor *t = tensor_header (dtype, rank, dims);
  t->nelems = n;
  t->nbytes = nbytes;
  t->data = data;
  t->free_func = g_free;
  t->free_data = data;
  return t;
}

gsize
_owb_data_type_memory_size (OwbDataType dtype)
{
  if (dtype == OWB_TYPE_INT4 || dtype == OWB_TYPE_UINT4 || dtype == OWB_TYPE_FLOAT4E2M1 || dtype == OWB_TYPE_INT2
      || dtype == OWB_TYPE_UINT2 || dtype == OWB_TYPE_FLOAT6E2M3 || dtype == OWB_TYPE_FLOAT6E3M2)
    return 1; /* unpacked in memory: one element per byte */
  return dtype == OWB_TYPE_STRING ? 0 : owb_data_type_size (dtype);
}

OwbTensor *
owb_tensor_new (OwbDataType dtype, int rank, const int64_t *dims, GError **error)
{
  return tensor_alloc (dtype, rank, dims, TRUE, error);
}

OwbTensor *
owb_tensor_new_uninit (OwbDataType dtype, int rank, const int64_t *dims, GError **error)
{
  return tensor_alloc (dtype, rank, dims, FALSE, error);
}

/* Every arena output goes through here: the checks of tensor_alloc, done once and without
 * allocating storage that is dropped at once (a tiny node's step spent a sixth of its time making
 * its outputs). */
OwbTensor *
owb_tensor_new_wrap (OwbDataType dtype, int rank, const int64_t *dims, void *data, GDestroyNotify free_func,
                     gpointer free_data, GError **error)
{
  int64_t n;
  if (!owb_data_type_is_valid (dtype))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "unknown element type %d", dtype);
      return NULL;
    }
  if (!owb_shape_count (rank, dims, &n, "tensor", error))
    return NULL;
  if (dtype != OWB_TYPE_STRING && _owb_data_type_memory_size (dtype) == 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "tensors of type %s are not supported", owb_data_type_name (dtype));
      return NULL;
    }
  OwbTensor *t = tensor_header (dtype, rank, dims);
  gsize elem = dtype == OWB_TYPE_STRING ? sizeof (char *) : MAX (owb_data_type_size (dtype), 1);
  t->nelems = n;
  t->nbytes = (gsize) n * elem;
  t->data = data;
  t->free_func = free_func;
  t->free_data = free_data;
  return t;
}

OwbTensor *
owb_tensor_new_scalar_float (float v)
{
  OwbTensor *t = tensor_alloc (OWB_TYPE_FLOAT, 0, NULL, FALSE, NULL);
  *(float *) t->data = v;
  return t;
}

OwbTensor *
owb_tensor_new_scalar_int64 (int64_t v)
{
  OwbTensor *t = tensor_alloc (OWB_TYPE_INT64, 0, NULL, FALSE, NULL);
  *(int64_t *) t->data = v;
  return t;
}

OwbTensor *
owb_tensor_new_sequence (OwbDataType elem_dtype)
{
  OwbTensor *t = g_new0 (OwbTensor, 1);
  t->ref_count = 1;
  t->kind = OWB_VALUE_SEQUENCE;
  t->dtype = elem_dtype;
  t->sequence = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_tensor_unref);
  return t;
}

OwbTensor *
owb_tensor_new_map (OwbTensor *keys, OwbTensor *values)
{
  if (!keys || !values || keys->kind != OWB_VALUE_TENSOR || values->kind != OWB_VALUE_TENSOR
      || (keys->dtype != OWB_TYPE_INT64 && keys->dtype != OWB_TYPE_STRING) || keys->rank != 1 || values->rank != 1
      || keys->dims[0] != values->dims[0])
    {
      owb_tensor_unref (keys);
      owb_tensor_unref (values);
      return NULL;
    }
  OwbTensor *t = owb_tensor_new_sequence (values->dtype);
  t->kind = OWB_VALUE_MAP;
  g_ptr_array_add (t->sequence, keys);
  g_ptr_array_add (t->sequence, values);
  return t;
}

OwbTensor *
owb_tensor_ref (OwbTensor *tensor)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  g_atomic_int_inc (&tensor->ref_count);
  return tensor;
}

void
owb_tensor_unref (OwbTensor *tensor)
{
  if (!tensor)
    return;
  if (!g_atomic_int_dec_and_test (&tensor->ref_count))
    return;
  if (tensor->dtype == OWB_TYPE_STRING && tensor->data && tensor->free_func == g_free)
    free_strings (tensor);
  if (tensor->free_func)
    tensor->free_func (tensor->free_data);
  if (tensor->sequence)
    g_ptr_array_unref (tensor->sequence);
  g_free (tensor);
}

void
_owb_tensor_release_storage (OwbTensor *tensor)
{
  g_return_if_fail (tensor->kind == OWB_VALUE_TENSOR && tensor->dtype != OWB_TYPE_STRING);
  if (tensor->free_func)
    tensor->free_func (tensor->free_data);
  tensor->free_func = NULL;
  tensor->free_data = NULL;
  tensor->data = NULL;
}

OwbTensor *
owb_tensor_dup (const OwbTensor *tensor)
{
  if (tensor->kind != OWB_VALUE_TENSOR)
    {
      OwbTensor *s = owb_tensor_new_sequence (tensor->dtype);
      s->kind = tensor->kind;
      for (guint i = 0; tensor->sequence && i < tensor->sequence->len; i++)
        g_ptr_array_add (s->sequence, owb_tensor_dup (g_ptr_array_index (tensor->sequence, i)));
      return s;
    }
  if (tensor->device)
    return owb_tensor_copy_to_device (tensor, tensor->device, NULL);
  OwbTensor *t = tensor_alloc (tensor->dtype, tensor->rank, tensor->dims, FALSE, NULL);
  if (!t)
    return NULL;
  if (tensor->dtype == OWB_TYPE_STRING)
    {
      char **src = tensor->data, **dst = t->data;
      for (int64_t i = 0; i < tensor->nelems; i++)
        dst[i] = g_strdup (src[i] ? src[i] : "");
    }
  else if (tensor->nbytes)
    memcpy (t->data, tensor->data, tensor->nbytes);
  return t;
}

OwbTensor *
owb_tensor_new_view (OwbTensor *tensor, int rank, const int64_t *dims, GError **error)
{
  int64_t n;
  if (!owb_shape_count (rank, dims, &n, "view", error))
    return NULL;
  if (n != tensor->nelems)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_SHAPE, "cannot view %" G_GINT64_FORMAT " elements as %" G_GINT64_FORMAT,
                   tensor->nelems, n);
      return NULL;
    }
  if (tensor->dtype == OWB_TYPE_STRING)
    {
      /* Strings are owned per element: a view must own copies. */
      OwbTensor *t = owb_tensor_dup (tensor);
      t->rank = rank;
      if (rank)
        memcpy (t->dims, dims, rank * sizeof (int64_t));
      return t;
    }
  OwbTensor *t = tensor_header (tensor->dtype, rank, dims);
  t->nelems = n;
  t->nbytes = tensor->nbytes;
  t->data = tensor->data;
  t->device = tensor->device;
  /* A view of a view holds the tensor that owns the storage, not the view: a Loop that passes a
   * value through Identity a million times would otherwise build a chain of a million views,
   * and releasing it would recurse a million deep. */
  OwbTensor *owner = tensor;
  while (owner->free_func == (GDestroyNotify) owb_tensor_unref && owner->free_data)
    owner = owner->free_data;
  t->free_func = (GDestroyNotify) owb_tensor_unref;
  t->free_data = owb_tensor_ref (owner);
  return t;
}

/* A float's IEEE 754 bits and back (memcpy: the only cast C defines; it compiles to a move). */
static inline uint32_t
float_bits (float f)
{
  uint32_t x;
  memcpy (&x, &f, 4);
  return x;
}

static inline float
float_from_bits (uint32_t bits)
{
  float f;
  memcpy (&f, &bits, 4);
  return f;
}

float
owb_half_to_float (uint16_t h)
{
  uint32_t sign = (uint32_t) (h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0)
    {
      if (mant == 0)
        bits = sign;
      else
        {
          /* Subnormal half: normalise into a float. */
          int e = -1;
          do
            {
              e++;
              mant <<= 1;
            }
          while ((mant & 0x400) == 0);
          bits = sign | ((uint32_t) (127 - 15 - e) << 23) | ((mant & 0x3ff) << 13);
        }
    }
  else if (exp == 0x1f)
    bits = sign | 0x7f800000u | (mant << 13);
  else
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  return float_from_bits (bits);
}

uint16_t
owb_float_to_half (float f)
{
  uint32_t x = float_bits (f);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) /* inf or nan */
    return sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 | ((absx >> 13) & 0x3ff) : 0);
  if (absx >= 0x477ff000u) /* rounds to >= 65520: overflow to inf */
    return sign | 0x7c00;
  if (absx < 0x38800000u) /* below the smallest normal half: subnormal or zero */
    {
      if (absx < 0x33000000u)
        return sign;
      uint32_t mant = (absx & 0x7fffff) | 0x800000;
      /* value = mant * 2^(e-150) and a subnormal half counts units of 2^-24: drop 126-e bits. */
      int total = 126 - (int) (absx >> 23);
      uint32_t h = mant >> total;
      uint32_t rem = mant & ((1u << total) - 1);
      uint32_t half = 1u << (total - 1);
      if (rem > half || (rem == half && (h & 1)))
        h++;
      return sign | h;
    }
  uint32_t h = ((absx - 0x38000000u) >> 13);
  uint32_t rem = absx & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
    h++;
  return sign | h;
}

float
owb_bfloat16_to_float (uint16_t b)
{
  return float_from_bits ((uint32_t) b << 16);
}

uint16_t
owb_float_to_bfloat16 (float f)
{
  uint32_t x = float_bits (f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (x >> 16) | 0x40;
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return (uint16_t) ((x + rounding) >> 16);
}

double
owb_tensor_get_double (const OwbTensor *t, int64_t i)
{
  const void *d = t->data;
  switch (t->dtype)
    {
    case OWB_TYPE_FLOAT: return ((const float *) d)[i];
    case OWB_TYPE_DOUBLE: return ((const double *) d)[i];
    case OWB_TYPE_FLOAT16: return owb_half_to_float (((const uint16_t *) d)[i]);
    case OWB_TYPE_BFLOAT16: return owb_bfloat16_to_float (((const uint16_t *) d)[i]);
    case OWB_TYPE_INT8: return ((const int8_t *) d)[i];
    case OWB_TYPE_UINT8: return ((const uint8_t *) d)[i];
    case OWB_TYPE_BOOL: return ((const uint8_t *) d)[i] != 0;
    case OWB_TYPE_INT16: return ((const int16_t *) d)[i];
    case OWB_TYPE_UINT16: return ((const uint16_t *) d)[i];
    case OWB_TYPE_INT32: return ((const int32_t *) d)[i];
    case OWB_TYPE_UINT32: return ((const uint32_t *) d)[i];
    case OWB_TYPE_INT64: return (double) ((const int64_t *) d)[i];
    case OWB_TYPE_UINT64: return (double) ((const uint64_t *) d)[i];
    default: return NAN;
    }
}

/* v truncated toward zero and saturated to int64 (NaN: 0): converting a double outside the
 * target's range is undefined in C, and callers pass anything a model or a user wrote. */
static int64_t
double_to_int64 (double v)
{
  if (isnan (v))
    return 0;
  if (v >= 9.2233720368547758e18)
    return G_MAXINT64;
  if (v <= -9.2233720368547758e18)
    return G_MININT64;
  return (int64_t) v;
}

int64_t
owb_tensor_get_int64 (const OwbTensor *t, int64_t i)
{
  const void *d = t->data;
  switch (t->dtype)
    {
    case OWB_TYPE_INT64: return ((const int64_t *) d)[i];
    case OWB_TYPE_UINT64: return (int64_t) ((const uint64_t *) d)[i];
    case OWB_TYPE_INT32: return ((const int32_t *) d)[i];
    case OWB_TYPE_UINT32: return ((const uint32_t *) d)[i];
    case OWB_TYPE_INT16: return ((const int16_t *) d)[i];
    case OWB_TYPE_UINT16: return ((const uint16_t *) d)[i];
    case OWB_TYPE_INT8: return ((const int8_t *) d)[i];
    case OWB_TYPE_UINT8: return ((const uint8_t *) d)[i];
    case OWB_TYPE_BOOL: return ((const uint8_t *) d)[i] != 0;
    default:
      {
        return double_to_int64 (owb_tensor_get_double (t, i));
      }
    }
}

void
owb_tensor_set_double (OwbTensor *t, int64_t i, double v)
{
  void *d = t->data;
  /* Narrower integers take the low bits of the int64, as C converts integers; uint64 keeps
   * [2^63, 2^64) and saturates above, and a negative value wraps as its int64 would. */
  int64_t n = t->dtype == OWB_TYPE_FLOAT || t->dtype == OWB_TYPE_DOUBLE ? 0 : double_to_int64 (v);
  switch (t->dtype)
    {
    case OWB_TYPE_FLOAT: ((float *) d)[i] = (float) v; break;
    case OWB_TYPE_DOUBLE: ((double *) d)[i] = v; break;
    case OWB_TYPE_FLOAT16: ((uint16_t *) d)[i] = owb_float_to_half ((float) v); break;
    case OWB_TYPE_BFLOAT16: ((uint16_t *) d)[i] = owb_float_to_bfloat16 ((float) v); break;
    case OWB_TYPE_INT8: ((int8_t *) d)[i] = (int8_t) n; break;
    case OWB_TYPE_UINT8: ((uint8_t *) d)[i] = (uint8_t) n; break;
    case OWB_TYPE_BOOL: ((uint8_t *) d)[i] = v != 0; break;
    case OWB_TYPE_INT16: ((int16_t *) d)[i] = (int16_t) n; break;
    case OWB_TYPE_UINT16: ((uint16_t *) d)[i] = (uint16_t) n; break;
    case OWB_TYPE_INT32: ((int32_t *) d)[i] = (int32_t) n; break;
    case OWB_TYPE_UINT32: ((uint32_t *) d)[i] = (uint32_t) n; break;
    case OWB_TYPE_INT64: ((int64_t *) d)[i] = n; break;
    case OWB_TYPE_UINT64:
      ((uint64_t *) d)[i] = v >= 9.2233720368547758e18 ? (v >= 1.8446744073709552e19 ? G_MAXUINT64 : (uint64_t) v)
                                                      : (uint64_t) n;
      break;
    default: break;
    }
}

void
owb_tensor_get_value_type (const OwbTensor *tensor, OwbValueType *type)
{
  owb_value_type_init_tensor (type, tensor->dtype, tensor->rank, tensor->dims);
  type->kind = tensor->kind;
  if (tensor->kind == OWB_VALUE_MAP)
    {
      const OwbTensor *keys = tensor->sequence && tensor->sequence->len == 2 ? g_ptr_array_index (tensor->sequence, 0) : NULL;
      type->key_dtype = keys ? keys->dtype : OWB_TYPE_UNDEFINED;
      type->rank = -1;
    }
  else if (tensor->kind != OWB_VALUE_TENSOR)
    {
      const OwbTensor *first
          = tensor->sequence && tensor->sequence->len > 0 ? g_ptr_array_index (tensor->sequence, 0) : NULL;
      /* Elements of one sequence share their kind: the first tells whether they are maps. */
      type->elem_kind = OWB_VALUE_TENSOR;
      if (first && first->kind == OWB_VALUE_MAP && first->sequence && first->sequence->len == 2)
        {
          type->elem_kind = OWB_VALUE_MAP;
          type->key_dtype = ((const OwbTensor *) g_ptr_array_index (first->sequence, 0))->dtype;
        }
      type->rank = -1;
    }
}

gboolean
owb_tensor_same_shape (const OwbTensor *a, const OwbTensor *b)
{
  if (a->rank != b->rank)
    return FALSE;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i])
      return FALSE;
  return TRUE;
}

char *
owb_tensor_shape_to_string (const OwbTensor *tensor)
{
  OwbValueType type;
  owb_tensor_get_value_type (tensor, &type);
  return owb_value_type_to_string (&type);
}

OwbTensor *
owb_tensor_cast (const OwbTensor *tensor, OwbDataType to, GError **error)
{
  if (tensor->dtype == OWB_TYPE_STRING || to == OWB_TYPE_STRING || owb_data_type_size (to) == 0
      || owb_data_type_size (tensor->dtype) == 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "cannot convert %s to %s", owb_data_type_name (tensor->dtype),
                   owb_data_type_name (to));
      return NULL;
    }
  OwbTensor *out = owb_tensor_new_uninit (to, tensor->rank, tensor->dims, error);
  if (!out)
    return NULL;
  int64_t n = tensor->nelems;
  if (tensor->dtype == to)
    memcpy (out->data, tensor->data, tensor->nbytes);
  else if (tensor->dtype == OWB_TYPE_FLOAT16 && to == OWB_TYPE_FLOAT)
    for (int64_t i = 0; i < n; i++)
      ((float *) out->data)[i] = owb_half_to_float (((const uint16_t *) tensor->data)[i]);
  else if (tensor->dtype == OWB_TYPE_FLOAT && to == OWB_TYPE_FLOAT16)
    for (int64_t i = 0; i < n; i++)
      ((uint16_t *) out->data)[i] = owb_float_to_half (((const float *) tensor->data)[i]);
  else if (_owb_data_type_is_float (tensor->dtype) || to == OWB_TYPE_BOOL || _owb_data_type_is_float (to))
    for (int64_t i = 0; i < n; i++)
      owb_tensor_set_double (out, i, owb_tensor_get_double (tensor, i));
  else
    /* Integer to integer: go through int64 so 64-bit values keep every bit. */
    for (int64_t i = 0; i < n; i++)
      {
        int64_t v = owb_tensor_get_int64 (tensor, i);
        switch (to)
          {
          case OWB_TYPE_INT8: ((int8_t *) out->data)[i] = (int8_t) v; break;
          case OWB_TYPE_UINT8: ((uint8_t *) out->data)[i] = (uint8_t) v; break;
          case OWB_TYPE_INT16: ((int16_t *) out->data)[i] = (int16_t) v; break;
          case OWB_TYPE_UINT16: ((uint16_t *) out->data)[i] = (uint16_t) v; break;
          case OWB_TYPE_INT32: ((int32_t *) out->data)[i] = (int32_t) v; break;
          case OWB_TYPE_UINT32: ((uint32_t *) out->data)[i] = (uint32_t) v; break;
          case OWB_TYPE_INT64: ((int64_t *) out->data)[i] = v; break;
          case OWB_TYPE_UINT64: ((uint64_t *) out->data)[i] = (uint64_t) v; break;
          default: break;
          }
      }
  return out;
}
