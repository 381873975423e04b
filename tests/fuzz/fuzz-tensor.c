/* fuzz-tensor.c: the tensor-file readers (.pb TensorProto / SequenceProto / MapProto /
 * OptionalProto, and .npy) on arbitrary bytes, and a write back of what they accept. */
#include "fuzz-common.h"

#include <string.h>

/* Reads every byte the value claims to hold, so that the sanitizers see a wrong size. */
static guint
touch (const OwbTensor *tensor)
{
  guint sum = 0;
  if (tensor->sequence)
    for (guint i = 0; i < tensor->sequence->len; i++)
      sum += touch (g_ptr_array_index (tensor->sequence, i));
  if (tensor->kind == OWB_VALUE_TENSOR && tensor->dtype == OWB_TYPE_STRING && tensor->data)
    {
      char **strings = tensor->data;
      for (int64_t i = 0; i < tensor->nelems; i++)
        sum += strings[i] ? (guint) strlen (strings[i]) : 0;
    }
  else if (tensor->data)
    for (gsize i = 0; i < tensor->nbytes; i++)
      sum += ((const guint8 *) tensor->data)[i];
  g_free (owb_tensor_shape_to_string (tensor));
  return sum;
}

static void
check (OwbTensor *tensor, GError *error)
{
  if (!tensor)
    {
      g_assert (error != NULL);
      g_error_free (error);
      return;
    }
  volatile guint sum = touch (tensor);
  (void) sum;
  owb_tensor_unref (tensor);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  GError *error = NULL;
  char *name = NULL;
  OwbTensor *tensor = owb_tensor_load_pb_data (data, size, &name, &error);
  check (tensor, error);
  g_free (name);
  error = NULL;
  tensor = owb_tensor_load_npy_data (data, size, &error);
  check (tensor, error);
  return 0;
}
