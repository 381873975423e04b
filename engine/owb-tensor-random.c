/* owb-tensor-random.c: the one generator of random input values, so that a seed gives the same
 * inputs in `owb run --random`, the Run page and the quantizer's random calibration set. */
#include <owb/owb-tensor.h>
#include <owb/owb-error.h>

OwbTensor *
owb_tensor_new_random (OwbDataType dtype, int rank, const int64_t *dims, GRand *rand, GError **error)
{
  switch (dtype)
    {
    case OWB_TYPE_FLOAT: case OWB_TYPE_DOUBLE: case OWB_TYPE_FLOAT16: case OWB_TYPE_BFLOAT16:
    case OWB_TYPE_UINT8: case OWB_TYPE_INT8: case OWB_TYPE_UINT16: case OWB_TYPE_INT16:
    case OWB_TYPE_INT32: case OWB_TYPE_INT64: case OWB_TYPE_UINT32: case OWB_TYPE_UINT64:
    case OWB_TYPE_BOOL: case OWB_TYPE_STRING:
      break;
    default:
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "random values of type %s are not supported",
                   owb_data_type_name (dtype));
      return NULL;
    }
  OwbTensor *t = owb_tensor_new (dtype, rank, dims, error);
  if (t == NULL)
    return NULL;
  if (dtype == OWB_TYPE_FLOAT)
    {
      float *data = t->data;
      for (int64_t i = 0; i < t->nelems; i++)
        data[i] = (float) g_rand_double_range (rand, -1.0, 1.0);
      return t;
    }
  for (int64_t i = 0; i < t->nelems; i++)
    switch (dtype)
      {
      case OWB_TYPE_DOUBLE: case OWB_TYPE_FLOAT16: case OWB_TYPE_BFLOAT16:
        owb_tensor_set_double (t, i, g_rand_double_range (rand, -1.0, 1.0));
        break;
      case OWB_TYPE_BOOL:
        owb_tensor_set_double (t, i, g_rand_int_range (rand, 0, 2));
        break;
      case OWB_TYPE_STRING:
        /* String tensors own their char * elements (see owb-tensor.h). */
        ((char **) t->data)[i] = g_strdup_printf ("s%d", g_rand_int_range (rand, 0, 10));
        break;
      default:
        /* Small non-negative integers stay valid as indices and sizes in most graphs. */
        owb_tensor_set_double (t, i, g_rand_int_range (rand, 0, 10));
        break;
      }
  return t;
}
