/* owb-cuda-provider.c: the CUDA execution provider: claims the nodes its kernel tables cover on
 * float32/float16 (and the data-movement ops on any fixed-size type), and gives the session an
 * OwbDevice over the GPU's memory: a caching allocator over cudaMalloc, copies queued on the
 * provider's one stream through pinned staging buffers. Without a GPU it is still there: it
 * claims nothing and each decline says so, naming whether this build has a kernel for the op, so
 * the claim map shows what CUDA would take. */
#include "cuda-private.h"

#include <string.h>

#define STAGING_SIZE ((gsize) 8 << 20)

static const OwbKernelDef *const tables[] = {
  _owb_cuda_kernels_elementwise, _owb_cuda_kernels_tensor, _owb_cuda_kernels_reduce,
  _owb_cuda_kernels_norm,        _owb_cuda_kernels_matmul, _owb_cuda_kernels_conv,
  _owb_cuda_kernels_attention,    _owb_cuda_kernels_resize,
};

static const OwbCudaCheckFunc checks[] = {
  _owb_cuda_elementwise_check, _owb_cuda_tensor_check, _owb_cuda_reduce_check,
  _owb_cuda_norm_check,        _owb_cuda_matmul_check, _owb_cuda_conv_check, _owb_cuda_attention_check,
  _owb_cuda_resize_check,
};

const OwbKernelDef *const *
_owb_cuda_get_tables (guint *n_tables)
{
  *n_tables = G_N_ELEMENTS (tables);
  return tables;
}

/* ---- memory ---- */

/* Sizes are rounded so that freed buffers serve later requests of about the same size: to 512
 * bytes below 1 MiB, above that to an eighth of the power of two below (at most 12.5% waste). */
static gsize
round_size (gsize size)
{
  if (size < ((gsize) 1 << 20))
    return (size + 511) & ~(gsize) 511;
  gsize top = (gsize) 1 << (63 - __builtin_clzll (size));
  gsize step = top / 8;
  return (size + step - 1) / step * step;
}

static void
free_cache_locked (OwbCudaContext *cx)
{
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init (&it, cx->cache);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      for (GSList *l = value; l; l = l->next)
        cudaFree (l->data);
      g_slist_free (value);
      g_hash_table_iter_remove (&it);
    }
  cx->cached_bytes = 0;
}

static void *
cuda_alloc (OwbDevice *device, gsize size, GError **error)
{
  OwbCudaContext *cx = device->priv;
  gsize rounded = round_size (MAX (size, 1));
  g_mutex_lock (&cx->alloc_lock);
  GSList *list = g_hash_table_lookup (cx->cache, GSIZE_TO_POINTER (rounded));
  if (list)
    {
      /* Reuse is safe without waiting: every user of the buffer is queued on the same stream. */
      void *ptr = list->data;
      g_hash_table_insert (cx->cache, GSIZE_TO_POINTER (rounded), g_slist_delete_link (list, list));
      cx->cached_bytes -= rounded;
      g_mutex_unlock (&cx->alloc_lock);
      return ptr;
    }
  void *ptr = NULL;
  cudaError_t st = cudaMalloc (&ptr, rounded);
  if (st == cudaErrorMemoryAllocation && cx->cached_bytes > 0)
    {
      /* Give the cached buffers back and try once more. */
      cudaGetLastError ();
      cudaStreamSynchronize (cx->stream);
      free_cache_locked (cx);
      st = cudaMalloc (&ptr, rounded);
    }
  g_mutex_unlock (&cx->alloc_lock);
  if (st != cudaSuccess)
    {
      cudaGetLastError ();
      g_set_error (error, OWB_ERROR, OWB_ERROR_NOMEM, "%s: cannot allocate %" G_GSIZE_FORMAT " bytes: %s", cx->name, size,
                   cudaGetErrorString (st));
      return NULL;
    }
  return ptr;
}

static void
cuda_free (OwbDevice *device, void *ptr, gsize size)
{
  OwbCudaContext *cx = device->priv;
  gsize rounded = round_size (MAX (size, 1));
  g_mutex_lock (&cx->alloc_lock);
  GSList *list = g_hash_table_lookup (cx->cache, GSIZE_TO_POINTER (rounded));
  g_hash_table_insert (cx->cache, GSIZE_TO_POINTER (rounded), g_slist_prepend (list, ptr));
  cx->cached_bytes += rounded;
  g_mutex_unlock (&cx->alloc_lock);
}

static gboolean
copy_error (OwbCudaContext *cx, GError **error, cudaError_t st, const char *what)
{
  if (st == cudaSuccess)
    return TRUE;
  g_set_error (error, OWB_ERROR, OWB_ERROR_DEVICE, "%s: %s: %s", cx->name, what, cudaGetErrorString (st));
  return FALSE;
}

/* Host to device through the two pinned buffers in turn: while one chunk is copied by the GPU the
 * next is written into the other; a buffer is reused once the event of its last copy passed. */
static gboolean
cuda_copy_from_host (OwbDevice *device, void *dst, const void *src, gsize size, GError **error)
{
  OwbCudaContext *cx = device->priv;
  gboolean ok = TRUE;
  g_mutex_lock (&cx->copy_lock);
  for (gsize off = 0, k = 0; ok && off < size; off += STAGING_SIZE, k++)
    {
      gsize n = MIN (STAGING_SIZE, size - off);
      int b = k & 1;
      ok = copy_error (cx, error, cudaEventSynchronize (cx->staging_free[b]), "waiting for a staging buffer");
      if (!ok)
        break;
      memcpy (cx->staging[b], (const char *) src + off, n);
      ok = copy_error (cx, error,
                       cudaMemcpyAsync ((char *) dst + off, cx->staging[b], n, cudaMemcpyHostToDevice, cx->stream),
                       "copy to the device")
           && copy_error (cx, error, cudaEventRecord (cx->staging_free[b], cx->stream), "copy to the device");
    }
  g_mutex_unlock (&cx->copy_lock);
  return ok;
}

/* Device to host: chunk k+1 is queued before chunk k is read out of its staging buffer. */
static gboolean
cuda_copy_to_host (OwbDevice *device, void *dst, const void *src, gsize size, GError **error)
{
  OwbCudaContext *cx = device->priv;
  gboolean ok = TRUE;
  gsize n_chunks = (size + STAGING_SIZE - 1) / STAGING_SIZE;
  g_mutex_lock (&cx->copy_lock);
  for (gsize k = 0; ok && k <= n_chunks; k++)
    {
      if (k < n_chunks)
        {
          int b = k & 1;
          gsize off = k * STAGING_SIZE, n = MIN (STAGING_SIZE, size - off);
          ok = copy_error (cx, error, cudaEventSynchronize (cx->staging_free[b]), "waiting for a staging buffer")
               && copy_error (cx, error,
                              cudaMemcpyAsync (cx->staging[b], (const char *) src + off, n, cudaMemcpyDeviceToHost,
                                               cx->stream),
                              "copy to the host")
               && copy_error (cx, error, cudaEventRecord (cx->staging_free[b], cx->stream), "copy to the host");
        }
      if (ok && k > 0)
        {
          gsize j = k - 1;
          int b = j & 1;
          gsize off = j * STAGING_SIZE, n = MIN (STAGING_SIZE, size - off);
          ok = copy_error (cx, error, cudaEventSynchronize (cx->staging_free[b]), "copy to the host");
          if (ok)
            memcpy ((char *) dst + off, cx->staging[b], n);
        }
    }
  g_mutex_unlock (&cx->copy_lock);
  return ok;
}

static gboolean
cuda_copy (OwbDevice *device, void *dst, const void *src, gsize size, GError **error)
{
  OwbCudaContext *cx = device->priv;
  return copy_error (cx, error, cudaMemcpyAsync (dst, src, size, cudaMemcpyDeviceToDevice, cx->stream),
                     "copy on the device");
}

static gboolean
cuda_synchronize (OwbDevice *device, GError **error)
{
  OwbCudaContext *cx = device->priv;
  return copy_error (cx, error, cudaStreamSynchronize (cx->stream), "synchronize");
}

/* ---- the provider ---- */

typedef struct {
  OwbCudaContext *cx;  /* NULL without a device */
  char *no_device;     /* why there is none ("no CUDA device") */
  char *description;
} CudaProvider;

static void
context_free (OwbCudaContext *cx)
{
  if (!cx)
    return;
  if (cx->stream)
    cudaStreamSynchronize (cx->stream);
  g_mutex_lock (&cx->alloc_lock);
  free_cache_locked (cx);
  g_mutex_unlock (&cx->alloc_lock);
  g_hash_table_unref (cx->cache);
  for (int b = 0; b < 2; b++)
    {
      if (cx->staging[b])
        cudaFreeHost (cx->staging[b]);
      if (cx->staging_free[b])
        cudaEventDestroy (cx->staging_free[b]);
    }
  if (cx->workspace)
    cudaFree (cx->workspace);
  if (cx->flag)
    cudaFree (cx->flag);
  if (cx->cudnn)
    cudnnDestroy (cx->cudnn);
  if (cx->lt)
    cublasLtDestroy (cx->lt);
  if (cx->blas)
    cublasDestroy (cx->blas);
  if (cx->stream)
    cudaStreamDestroy (cx->stream);
  g_mutex_clear (&cx->alloc_lock);
  g_mutex_clear (&cx->copy_lock);
  g_mutex_clear (&cx->workspace_lock);
  g_free (cx);
}

/* The context of device `ordinal`, or NULL with *why set. */
static OwbCudaContext *
context_new (int ordinal, char **why)
{
  OwbCudaContext *cx = g_new0 (OwbCudaContext, 1);
  g_mutex_init (&cx->alloc_lock);
  g_mutex_init (&cx->copy_lock);
  g_mutex_init (&cx->workspace_lock);
  cx->cache = g_hash_table_new (g_direct_hash, g_direct_equal);
  cx->ordinal = ordinal;
  g_snprintf (cx->name, sizeof cx->name, "cuda:%d", ordinal);
  cudaError_t st = cudaSetDevice (ordinal);
  if (st == cudaSuccess)
    st = cudaStreamCreateWithFlags (&cx->stream, cudaStreamNonBlocking);
  for (int b = 0; b < 2 && st == cudaSuccess; b++)
    {
      st = cudaHostAlloc (&cx->staging[b], STAGING_SIZE, cudaHostAllocDefault);
      if (st == cudaSuccess)
        st = cudaEventCreateWithFlags (&cx->staging_free[b], cudaEventDisableTiming);
    }
  if (st == cudaSuccess)
    st = cudaMalloc ((void **) &cx->flag, sizeof (int));
  if (st != cudaSuccess)
    {
      *why = g_strdup_printf ("CUDA device %d cannot be used: %s", ordinal, cudaGetErrorString (st));
      cudaGetLastError ();
      context_free (cx);
      return NULL;
    }
  if (cublasLtCreate (&cx->lt) != CUBLAS_STATUS_SUCCESS || cublasCreate (&cx->blas) != CUBLAS_STATUS_SUCCESS
      || cublasSetStream (cx->blas, cx->stream) != CUBLAS_STATUS_SUCCESS
      || cublasSetMathMode (cx->blas, CUBLAS_PEDANTIC_MATH) != CUBLAS_STATUS_SUCCESS)
    {
      *why = g_strdup ("cuBLAS cannot be initialised");
      context_free (cx);
      return NULL;
    }
  cudnnStatus_t ds = cudnnCreate (&cx->cudnn);
  if (ds == CUDNN_STATUS_SUCCESS)
    ds = cudnnSetStream (cx->cudnn, cx->stream);
  if (ds != CUDNN_STATUS_SUCCESS)
    {
      *why = g_strdup_printf ("cuDNN cannot be initialised: %s", cudnnGetErrorString (ds));
      context_free (cx);
      return NULL;
    }
  cx->device.name = cx->name;
  cx->device.alloc = cuda_alloc;
  cx->device.free = cuda_free;
  cx->device.copy_from_host = cuda_copy_from_host;
  cx->device.copy_to_host = cuda_copy_to_host;
  cx->device.copy = cuda_copy;
  cx->device.synchronize = cuda_synchronize;
  cx->device.priv = cx;
  return cx;
}

/* One context per process, shared by every CUDA provider: creating the stream and the cuBLAS and
 * cuDNN handles costs tens of milliseconds, which a program making a session per model (the
 * conformance suite, the parity test) would pay each time. It lives until the process ends; when
 * the last provider goes its cached device memory is given back. Sessions then share the stream,
 * so their GPU work runs in turn. */
static GMutex shared_lock;
static OwbCudaContext *shared_context;
static char *shared_error;
static int shared_users;

static OwbCudaContext *
context_acquire (char **why)
{
  g_mutex_lock (&shared_lock);
  if (!shared_context && !shared_error)
    shared_context = context_new (0, &shared_error);
  if (shared_context)
    shared_users++;
  else
    *why = g_strdup (shared_error);
  OwbCudaContext *cx = shared_context;
  g_mutex_unlock (&shared_lock);
  return cx;
}

static void
context_release (OwbCudaContext *cx)
{
  if (!cx)
    return;
  g_mutex_lock (&shared_lock);
  if (--shared_users == 0)
    {
      cudaStreamSynchronize (cx->stream);
      g_mutex_lock (&cx->alloc_lock);
      free_cache_locked (cx);
      g_mutex_unlock (&cx->alloc_lock);
    }
  g_mutex_unlock (&shared_lock);
}

static gboolean
has_op (const OwbNode *node)
{
  for (guint t = 0; t < G_N_ELEMENTS (tables); t++)
    for (const OwbKernelDef *def = tables[t]; def->op_type; def++)
      if (strcmp (def->op_type, node->op_type) == 0
          && strcmp (def->domain, node->domain ? node->domain : "") == 0)
        return TRUE;
  return FALSE;
}

/* The kernel row this build would run the node with, or NULL with *reason: the question
 * supports and claim share, asked with or without a device. */
static const OwbKernelDef *
find_kernel (const OwbNode *node, int opset, const OwbValueType *const *input_types,
             const OwbValueType *output_types, char **reason)
{
  if (!has_op (node))
    {
      *reason = g_strdup_printf ("no CUDA kernel for %s", node->op_type);
      return NULL;
    }
  char *why = NULL;
  const OwbKernelDef *def = owb_kernel_table_lookup (tables, G_N_ELEMENTS (tables), node, opset, input_types,
                                                     output_types, &why);
  if (!def)
    {
      /* Name the dtype the way users read it when that was the reason. */
      const char *on = why ? strstr (why, " on ") : NULL;
      if (on)
        *reason = g_strdup_printf ("dtype %s not supported by the CUDA %s", on + 4, node->op_type);
      else
        *reason = g_strdup_printf ("CUDA: %s", why ? why : "no kernel");
      g_free (why);
      return NULL;
    }
  g_free (why);
  for (guint c = 0; c < G_N_ELEMENTS (checks); c++)
    {
      char *r = checks[c] (node, opset, input_types, output_types);
      if (r)
        {
          *reason = r;
          return NULL;
        }
    }
  return def;
}

static gboolean
cuda_supports (OwbProvider *provider, const OwbNode *node, int opset, const OwbValueType *const *input_types,
               const OwbValueType *output_types, char **reason)
{
  CudaProvider *p = provider->priv;
  char *why = NULL;
  const OwbKernelDef *def = find_kernel (node, opset, input_types, output_types, &why);
  if (!p->cx)
    {
      /* Still say what this build would do, so that the claim map is useful without a GPU. */
      if (def)
        *reason = g_strdup_printf ("%s (this build has a CUDA kernel for %s)", p->no_device, node->op_type);
      else
        *reason = g_strdup_printf ("%s (and %s)", p->no_device, why);
      g_free (why);
      return FALSE;
    }
  if (!def)
    {
      *reason = why;
      return FALSE;
    }
  return TRUE;
}

static gboolean
cuda_claim (OwbProvider *provider, const OwbNode *node, int opset, const OwbValueType *const *input_types,
            const OwbValueType *output_types, OwbKernelChoice *choice, char **reason, GError **error)
{
  if (!cuda_supports (provider, node, opset, input_types, output_types, reason))
    return FALSE;
  const OwbKernelDef *def = find_kernel (node, opset, input_types, output_types, reason);
  void *state = NULL;
  if (def->prepare && !def->prepare (node, opset, input_types, &state, error))
    return FALSE;
  choice->def = def;
  choice->state = state;
  choice->via_float32 = FALSE;
  return TRUE;
}

static void
cuda_free_provider (OwbProvider *provider)
{
  CudaProvider *p = provider->priv;
  context_release (p->cx);
  g_free (p->no_device);
  g_free (p->description);
  g_free (p);
  g_free (provider);
}

/* The module's one export: libowb's loader (owb-cuda-loader.c) looks it up by name. */
__attribute__ ((visibility ("default"))) OwbProvider *owb_cuda_module_provider_new (void);

OwbProvider *
owb_cuda_module_provider_new (void)
{
  CudaProvider *p = g_new0 (CudaProvider, 1);
  int count = 0;
  cudaError_t st = cudaGetDeviceCount (&count);
  if (st != cudaSuccess || count == 0)
    {
      /* No driver, or a driver and no GPU: both mean there is nothing to run on. */
      p->no_device = g_strdup ("no CUDA device");
      p->description = st == cudaSuccess ? g_strdup ("CUDA: no device")
                                         : g_strdup_printf ("CUDA: no device (%s)", cudaGetErrorString (st));
      cudaGetLastError ();
    }
  else
    {
      struct cudaDeviceProp prop;
      char *why = NULL;
      if (cudaGetDeviceProperties (&prop, 0) == cudaSuccess)
        p->description = g_strdup_printf ("%s (compute capability %d.%d, %.0f GiB)", prop.name, prop.major,
                                          prop.minor, prop.totalGlobalMem / 1073741824.0);
      else
        p->description = g_strdup ("CUDA device 0");
      p->cx = context_acquire (&why);
      if (!p->cx)
        {
          p->no_device = why;
          g_free (p->description);
          p->description = g_strdup_printf ("CUDA: %s", why);
        }
    }
  OwbProvider *provider = g_new0 (OwbProvider, 1);
  provider->name = "cuda";
  provider->description = p->description;
  provider->device = p->cx ? &p->cx->device : NULL;
  provider->supports = cuda_supports;
  provider->claim = cuda_claim;
  provider->release = owb_kernel_choice_release;
  provider->free = cuda_free_provider;
  provider->priv = p;
  return provider;
}
