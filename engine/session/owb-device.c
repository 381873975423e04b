/* owb-device.c: tensors in device memory, and copies between devices and the host. */
#include <owb/owb-device.h>
#include <owb/owb-error.h>
#include <owb/owb-op.h>

#include "../owb-tensor-private.h"

#include <string.h>

typedef struct {
  OwbDevice *device;
  void *ptr;
  gsize size;
} DeviceBuffer;

static void
device_buffer_free (gpointer data)
{
  DeviceBuffer *b = data;
  b->device->free (b->device, b->ptr, b->size);
  g_free (b);
}

const char *
owb_device_get_name (const OwbDevice *device)
{
  return device ? device->name : "host";
}

static gboolean
device_storable (OwbDataType dtype, const char *where, GError **error)
{
  if (_owb_data_type_memory_size (dtype) > 0)
    return TRUE;
  g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "a %s tensor cannot live in %s memory", owb_data_type_name (dtype),
               where);
  return FALSE;
}

OwbTensor *
owb_device_new_tensor (OwbDevice *device, OwbDataType dtype, int rank, const int64_t *dims, GError **error)
{
  if (!device)
    return owb_tensor_new_uninit (dtype, rank, dims, error);
  if (!device_storable (dtype, device->name, error))
    return NULL;
  int64_t n;
  if (!owb_shape_count (rank, dims, &n, "tensor", error))
    return NULL;
  gsize elem = _owb_data_type_memory_size (dtype);
  if ((guint64) n > G_MAXSIZE / elem)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_NOMEM, "a tensor of %" G_GINT64_FORMAT " elements is too large", n);
      return NULL;
    }
  gsize size = (gsize) n * elem;
  DeviceBuffer *b = g_new0 (DeviceBuffer, 1);
  b->device = device;
  b->size = size;
  /* Zero-byte tensors still get a distinct buffer of one byte: a device pointer is never NULL. */
  b->ptr = device->alloc (device, MAX (size, 1), error);
  if (!b->ptr)
    {
      g_free (b);
      return NULL;
    }
  b->size = MAX (size, 1);
  OwbTensor *t = owb_tensor_new_wrap (dtype, rank, dims, b->ptr, device_buffer_free, b, error);
  if (!t)
    {
      device_buffer_free (b);
      return NULL;
    }
  t->device = device;
  return t;
}

gboolean
owb_tensor_copy_into (OwbTensor *dst, const OwbTensor *src, GError **error)
{
  if (src->kind != OWB_VALUE_TENSOR || dst->kind != OWB_VALUE_TENSOR || src->dtype != dst->dtype
      || src->nelems != dst->nelems || src->nbytes != dst->nbytes)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "cannot copy a %s tensor of %" G_GINT64_FORMAT " elements into a %s tensor of %" G_GINT64_FORMAT,
                   owb_data_type_name (src->dtype), src->nelems, owb_data_type_name (dst->dtype), dst->nelems);
      return FALSE;
    }
  gsize n = src->nbytes;
  if (n == 0)
    return TRUE;
  OwbDevice *from = src->device, *to = dst->device;
  if (!from && !to)
    {
      if (dst->dtype == OWB_TYPE_STRING)
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "string tensors are not copied byte-wise");
          return FALSE;
        }
      memcpy (dst->data, src->data, n);
      return TRUE;
    }
  if (!from)
    return to->copy_from_host (to, dst->data, src->data, n, error);
  if (!to)
    return from->copy_to_host (from, dst->data, src->data, n, error);
  if (from == to)
    return to->copy (to, dst->data, src->data, n, error);
  /* Two devices: through a host buffer. */
  void *host = g_try_malloc (n);
  if (!host)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_NOMEM, "cannot allocate %" G_GSIZE_FORMAT " bytes to copy from %s to %s",
                   n, from->name, to->name);
      return FALSE;
    }
  gboolean ok = from->copy_to_host (from, host, src->data, n, error) && to->copy_from_host (to, dst->data, host, n, error);
  g_free (host);
  return ok;
}

OwbTensor *
owb_tensor_copy_to_device (const OwbTensor *tensor, OwbDevice *device, GError **error)
{
  if (tensor->kind != OWB_VALUE_TENSOR)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_TYPE, "a %s cannot be copied to %s memory",
                   owb_value_kind_name (tensor->kind), owb_device_get_name (device));
      return NULL;
    }
  if (!tensor->device && !device)
    return owb_tensor_dup (tensor);
  if (!device_storable (tensor->dtype, device ? device->name : tensor->device->name, error))
    return NULL;
  OwbTensor *copy = owb_device_new_tensor (device, tensor->dtype, tensor->rank, tensor->dims, error);
  if (!copy)
    return NULL;
  if (!owb_tensor_copy_into (copy, tensor, error))
    {
      owb_tensor_unref (copy);
      return NULL;
    }
  return copy;
}
