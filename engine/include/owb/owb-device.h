/* owb-device.h: memory that is not the host's. A device provider (CUDA, or the test provider of
 * tests/providers/testdev) owns one OwbDevice: an allocator and the copies between its memory and
 * the host's. Tensors whose `device` is not NULL hold a pointer into that device's memory in
 * `data`; only that device's kernels and copies may touch it. Host memory has no OwbDevice: a
 * tensor with device NULL is an ordinary host tensor.
 *
 * The contract (what a device must do; the session does the rest):
 *   alloc / free      raw device buffers. alloc fails with OWB_ERROR_NOMEM and a message, never
 *                     aborts. free may be called from any thread, and only with what alloc gave.
 *   copy_from_host    host -> device; copy_to_host: device -> host, returning once the host
 *                     memory holds the data (it synchronizes with the device's queued work);
 *                     copy: device -> device, both buffers of this device.
 *   synchronize       waits for all work queued on the device (kernels and copies).
 * Work may be queued asynchronously (a CUDA stream) as long as the device runs it in the order it
 * was queued: the session issues kernels and copies in graph order and synchronizes only where the
 * host reads a result (copy_to_host) and at the end of a run. */
#pragma once

#include <owb/owb-api.h>
#include <owb/owb-tensor.h>

G_BEGIN_DECLS

struct _OwbDevice {
  const char *name; /* "testdev", "cuda:0": shown in claim maps and errors */
  void *(*alloc) (OwbDevice *device, gsize size, GError **error);
  void (*free) (OwbDevice *device, void *ptr, gsize size);
  gboolean (*copy_from_host) (OwbDevice *device, void *dst, const void *src, gsize size, GError **error);
  gboolean (*copy_to_host) (OwbDevice *device, void *dst, const void *src, gsize size, GError **error);
  gboolean (*copy) (OwbDevice *device, void *dst, const void *src, gsize size, GError **error);
  gboolean (*synchronize) (OwbDevice *device, GError **error);
  gpointer priv;
};

/* A tensor in the device's memory, contents undefined (device NULL: a host tensor). Only plain
 * tensors of fixed-size element types live on devices (no strings, sequences, maps). */
OWB_API OwbTensor *owb_device_new_tensor (OwbDevice *device, OwbDataType dtype, int rank, const int64_t *dims,
                                          GError **error);
/* A copy of `tensor` in the memory of `device` (NULL: the host), from wherever it is now: host to
 * device, device to host, or between two devices through the host. */
OWB_API OwbTensor *owb_tensor_copy_to_device (const OwbTensor *tensor, OwbDevice *device, GError **error);
/* Copies src's bytes into dst, a tensor of the same dtype and element count, wherever either is. */
OWB_API gboolean owb_tensor_copy_into (OwbTensor *dst, const OwbTensor *src, GError **error);
/* The device's name, or "host" for NULL. */
OWB_API const char *owb_device_get_name (const OwbDevice *device);

G_END_DECLS
