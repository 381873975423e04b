/* owb-tensor-random.c: the one generator of random input values, so that a seed gives the same
 * inputs in `owb run --random`, the Run page and the quantizer's random calibration set. */
#include <owb/owb-graph.h>
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

OwbTensor *
owb_tensor_new_random_for_input (const OwbValueInfo *input, GHashTable *dims, GRand *rand, gsize *budget,
                                 GError **error)
{
  const OwbValueType *type = &input->type;
  const char *name = input->name;
  int64_t shape[OWB_MAX_RANK];
  OwbTensor *t;

  if (!input->has_type)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "input '%s' has no declared type, so no random value can be made for it", name);
      return NULL;
    }
  if (type->kind != OWB_VALUE_TENSOR)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "input '%s' is not a tensor; random values are made only for tensors", name);
      return NULL;
    }
  if (type->rank < 0 || type->rank > OWB_MAX_RANK)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "input '%s' has no declared shape; give its value in a file", name);
      return NULL;
    }
  for (int d = 0; d < type->rank; d++)
    {
      const OwbDim *dim = &type->dims[d];
      const gint64 *given;
      if (owb_dim_is_known (*dim))
        shape[d] = dim->value;
      else if (dim->param != NULL && dims != NULL && (given = g_hash_table_lookup (dims, dim->param)) != NULL)
        shape[d] = *given;
      else
        shape[d] = 1;
    }

  if (budget != NULL)
    {
      /* A declared [2^28] input is 1 GiB of random floats made before the run (and its limit)
       * starts: refuse it here, not after a minute of filling. */
      guint64 bytes = owb_data_type_size (type->dtype);
      gboolean over = FALSE;
      for (int d = 0; d < type->rank; d++)
        if (shape[d] == 0)
          bytes = 0; /* empty whatever the other dims */
      for (int d = 0; d < type->rank && !over && bytes > 0; d++)
        {
          if (shape[d] < 0 || bytes > *budget / (guint64) shape[d])
            over = TRUE;
          else
            bytes *= (guint64) shape[d];
        }
      if (over || bytes > *budget)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_NOMEM,
                       "input '%s': its random values would pass the memory limit (%" G_GSIZE_FORMAT " bytes left)",
                       name, *budget);
          return NULL;
        }
      *budget -= bytes;
    }
  t = owb_tensor_new_random (type->dtype, type->rank, shape, rand, error);
  if (t == NULL)
    g_prefix_error (error, "input '%s': ", name);
  return t;
}
