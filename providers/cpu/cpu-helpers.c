/* cpu-helpers.c: stride arithmetic shared by the CPU kernels. */
#include "cpu-kernels-private.h"

#include <stdarg.h>
#include <string.h>

void
_owb_cpu_strides (int rank, const int64_t *dims, int64_t *strides)
{
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--)
    {
      strides[i] = s;
      s *= dims[i];
    }
}

gboolean
_owb_cpu_normalize_axis (OwbKernelContext *ctx, int64_t axis, int rank, int *out, GError **error)
{
  if (axis < -rank || axis >= rank)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "axis %" G_GINT64_FORMAT " is out of range for rank %d",
                            axis, rank);
      return FALSE;
    }
  *out = (int) (axis < 0 ? axis + rank : axis);
  return TRUE;
}

static double *
expand_tail (const OwbTensor *t, int rank, const int64_t *dims, int64_t count)
{
  double *out = g_new (double, MAX (count, 1));
  if (t->nelems == count)
    {
      for (int64_t i = 0; i < count; i++)
        out[i] = owb_tensor_get_double (t, i);
      return out;
    }
  int64_t strides[OWB_MAX_RANK], idx[OWB_MAX_RANK] = { 0 };
  int64_t stride = 1;
  for (int k = rank - 1; k >= 0; k--)
    {
      int tk = k - (rank - t->rank);
      strides[k] = tk >= 0 && t->dims[tk] != 1 ? stride : 0;
      if (tk >= 0)
        stride *= t->dims[tk];
    }
  int64_t src = 0;
  for (int64_t i = 0; i < count; i++)
    {
      out[i] = owb_tensor_get_double (t, src);
      for (int k = rank - 1; k >= 0; k--)
        {
          src += strides[k];
          if (++idx[k] < dims[k])
            break;
          src -= strides[k] * dims[k];
          idx[k] = 0;
        }
    }
  return out;
}

static void *
doubles_dup_as (const double *v, int64_t n, OwbDataType dtype)
{
  if (!v)
    return NULL;
  if (dtype == OWB_TYPE_DOUBLE)
    return g_memdup2 (v, MAX (n, 1) * sizeof (double));
  float *f = g_new (float, MAX (n, 1));
  for (int64_t i = 0; i < n; i++)
    f[i] = (float) v[i];
  return f;
}

void *
_owb_cpu_expand_parameter (OwbKernelContext *ctx, const OwbTensor *t, int rank, const int64_t *dims, int64_t count,
                           OwbDataType dtype, const char *what, GError **error)
{
  if (!t)
    return NULL;
  gboolean ok = t->rank <= rank;
  for (int k = 0; ok && k < t->rank; k++)
    ok = t->dims[k] == 1 || t->dims[k] == dims[rank - t->rank + k];
  if (!ok)
    {
      g_autofree char *s = owb_tensor_shape_to_string (t);
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "%s %s does not broadcast to the normalized dims", what, s);
      return NULL;
    }
  g_autofree double *values = expand_tail (t, rank, dims, count);
  return doubles_dup_as (values, count, dtype);
}

void
_owb_cpu_broadcast_strides (int in_rank, const int64_t *in_dims, int out_rank, const int64_t *out_dims,
                            int64_t *strides)
{
  int64_t s = 1;
  for (int i = out_rank - 1; i >= 0; i--)
    {
      int k = i - (out_rank - in_rank);
      if (k < 0 || in_dims[k] == 1)
        strides[i] = 0;
      else
        strides[i] = s;
      if (k >= 0)
        s *= in_dims[k];
    }
  (void) out_dims;
}

gboolean
_owb_cpu_matmul_batch_check (int a_rank, const int64_t *a_dims, int b_rank, const int64_t *b_dims, int rank,
                             const int64_t *dims, int64_t *batch)
{
  *batch = 1;
  if (rank < 0 || rank < a_rank || rank < b_rank)
    return FALSE;
  for (int i = 0; i < rank; i++)
    {
      int64_t da = i - (rank - a_rank) >= 0 ? a_dims[i - (rank - a_rank)] : 1;
      int64_t db = i - (rank - b_rank) >= 0 ? b_dims[i - (rank - b_rank)] : 1;
      if (!((da == dims[i] || da == 1) && (db == dims[i] || db == 1)))
        return FALSE;
      *batch *= dims[i];
    }
  return TRUE;
}

void
_owb_cpu_matmul_batch_offsets (int a_rank, const int64_t *a_dims, int b_rank, const int64_t *b_dims, int rank,
                               const int64_t *dims, int64_t batch, int64_t a_size, int64_t b_size,
                               int64_t *a_off, int64_t *b_off)
{
  int64_t sa[OWB_MAX_RANK], sb[OWB_MAX_RANK], idx[OWB_MAX_RANK] = { 0 };
  _owb_cpu_broadcast_strides (a_rank, a_dims, rank, dims, sa);
  _owb_cpu_broadcast_strides (b_rank, b_dims, rank, dims, sb);
  /* Walks the output's batch index like an odometer, carrying the two matrix indexes along. */
  int64_t oa = 0, ob = 0;
  for (int64_t i = 0; i < batch; i++)
    {
      a_off[i] = oa * a_size;
      b_off[i] = ob * b_size;
      for (int d = rank - 1; d >= 0; d--)
        {
          idx[d]++;
          oa += sa[d];
          ob += sb[d];
          if (idx[d] < dims[d])
            break;
          oa -= sa[d] * idx[d];
          ob -= sb[d] * idx[d];
          idx[d] = 0;
        }
    }
}

gboolean
_owb_cpu_has_avx2_fma (void)
{
#if defined(__x86_64__) && defined(__GNUC__)
  static int have = -1;
  if (g_atomic_int_get (&have) < 0)
    {
      __builtin_cpu_init ();
      g_atomic_int_set (&have, __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma"));
    }
  return g_atomic_int_get (&have);
#else
  return FALSE;
#endif
}

gboolean
_owb_cpu_has_avx512 (void)
{
#if defined(__x86_64__) && defined(__GNUC__)
  static int have = -1;
  if (g_atomic_int_get (&have) < 0)
    {
      __builtin_cpu_init ();
      /* libgcc sets these only where the OS saves the zmm state too. OWB_CPU_NO_AVX512 (set, not
       * "0") takes the AVX2 paths on a CPU that has AVX-512, so that a machine with it can measure
       * and test what CPUs without it run; every AVX-512 kernel (and VNNI, VBMI, AMX) asks here. */
      const char *off = g_getenv ("OWB_CPU_NO_AVX512");
      gboolean forced_off = off && *off && strcmp (off, "0") != 0;
      g_atomic_int_set (&have, !forced_off && _owb_cpu_has_avx2_fma () && __builtin_cpu_supports ("avx512f")
                                   && __builtin_cpu_supports ("avx512vl") && __builtin_cpu_supports ("avx512dq")
                                   && __builtin_cpu_supports ("avx512bw"));
    }
  return g_atomic_int_get (&have);
#else
  return FALSE;
#endif
}

gboolean
_owb_cpu_node_error (const OwbNode *node, GError **error, int code, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  char *msg = g_strdup_vprintf (format, args);
  va_end (args);
  char *who = owb_node_describe (node);
  g_set_error (error, OWB_ERROR, code, "%s: %s", who, msg);
  g_free (who);
  g_free (msg);
  return FALSE;
}

gboolean
_owb_cpu_unsupported_type (OwbKernelContext *ctx, OwbDataType t, GError **error)
{
  owb_kernel_set_error (ctx, error, OWB_ERROR_UNSUPPORTED_OP, "type %s is not supported", owb_data_type_name (t));
  return FALSE;
}

void *
_owb_cpu_scratch_new (OwbKernelContext *ctx, int64_t count, gsize size, const char *what, GError **error)
{
  if (count < 0 || (size != 0 && (guint64) count > G_MAXSIZE / size))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "the %s would need %" G_GINT64_FORMAT " × %" G_GSIZE_FORMAT
                            " bytes", what, count, size);
      return NULL;
    }
  gsize bytes = MAX ((gsize) count * size, 1);
  /* counted with the run's tensors, so --memory-limit bounds scratch as well */
  if (!owb_kernel_context_check_interrupt (ctx, bytes, error))
    return NULL;
  void *p = g_try_malloc (bytes);
  if (!p)
    owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "cannot allocate the %s (%" G_GSIZE_FORMAT " bytes)", what,
                          bytes);
  return p;
}

void
_owb_cpu_copy_elements (void *dst, const void *src, int64_t n, gsize es, gboolean strings)
{
  if (n <= 0)
    return;
  if (!strings)
    {
      memcpy (dst, src, (gsize) n * es);
      return;
    }
  char **d = dst;
  char *const *s = src;
  for (int64_t i = 0; i < n; i++)
    {
      g_free (d[i]);
      d[i] = g_strdup (s[i] ? s[i] : "");
    }
}
