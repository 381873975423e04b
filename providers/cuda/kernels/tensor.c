/* tensor.c: the CUDA provider's data-movement ops: Transpose, Concat, Split, Slice, Expand
 * (one strided copy kernel), Gather, and the ops that only rename a buffer's shape (Reshape,
 * Flatten, Squeeze, Unsqueeze, Identity, Dropout at inference) as one device-to-device copy.
 * Shape-like inputs (Reshape's shape, Slice's starts, ...) arrive in host memory. */
#include "../cuda-private.h"

#include <string.h>

#define ANY OWB_CUDA_TYPES_COPY

static gboolean
rank_error (OwbKernelContext *ctx, GError **error)
{
  owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "the CUDA kernel handles at most %d axes", OWB_CUDA_MAX_RANK);
  return FALSE;
}

/* The CUDA context of a kernel whose strided copy takes an input of `rank` axes: NULL, with an
 * error, past OWB_CUDA_MAX_RANK. */
static OwbCudaContext *
context_for_rank (OwbKernelContext *ctx, int rank, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  if (cx && rank > OWB_CUDA_MAX_RANK)
    {
      rank_error (ctx, error);
      return NULL;
    }
  return cx;
}

/* The CUDA context and the node's axis attribute (default 0) made non-negative for `rank` (Concat,
 * Split); NULL with an error. */
static OwbCudaContext *
context_with_axis (OwbKernelContext *ctx, int rank, int *axis, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  if (!cx || !_owb_cuda_axis (ctx, owb_node_get_int (ctx->node, "axis", 0), rank, axis, error))
    return NULL;
  return cx;
}

static void
row_major_strides (int rank, const int64_t *dims, int64_t *strides)
{
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--)
    {
      strides[d] = s;
      s *= dims[d];
    }
}

static gboolean
copy_strided (OwbKernelContext *ctx, OwbCudaContext *cx, int elem_size, const void *src, void *dst,
              const OwbCudaCopyMap *map, GError **error)
{
  return _owb_cuda_check (ctx, error, _owb_cuda_copy_strided (elem_size, src, dst, map, cx->stream), "copy kernel");
}

/* Reads a host int64/int32 tensor (a shape-like input). */
static gboolean
host_ints (OwbKernelContext *ctx, int i, int64_t **values, int64_t *n, GError **error)
{
  const OwbTensor *t = ctx->inputs[i];
  if (t->device || (t->dtype != OWB_TYPE_INT64 && t->dtype != OWB_TYPE_INT32))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "input %d ('%s') must be int64 or int32 in host memory", i,
                            ctx->node->inputs[i]);
      return FALSE;
    }
  *n = t->nelems;
  *values = g_new (int64_t, MAX (t->nelems, 1));
  for (int64_t k = 0; k < t->nelems; k++)
    (*values)[k] = owb_tensor_get_int64 (t, k);
  return TRUE;
}

/* Output 0 as input 0's bytes under another shape. */
static gboolean
copy_as (OwbKernelContext *ctx, int rank, const int64_t *dims, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const OwbTensor *x = ctx->inputs[0];
  int64_t n = 1;
  for (int d = 0; d < rank; d++)
    n *= dims[d];
  if (!cx)
    return FALSE;
  if (n != x->nelems)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "cannot view %" G_GINT64_FORMAT " elements as %" G_GINT64_FORMAT,
                            x->nelems, n);
      return FALSE;
    }
  OwbTensor *y = _owb_cuda_output (ctx, 0, x->dtype, rank, dims, error);
  return y && _owb_cuda_copy_device (ctx, cx, y->data, x->data, x->nbytes, error);
}

static gboolean
compute_identity (OwbKernelContext *ctx, GError **error)
{
  return copy_as (ctx, ctx->inputs[0]->rank, ctx->inputs[0]->dims, error);
}

static gboolean
compute_reshape (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  g_autofree int64_t *shape = NULL;
  int64_t n;
  if (!host_ints (ctx, 1, &shape, &n, error))
    return FALSE;
  if (n > OWB_MAX_RANK)
    return rank_error (ctx, error);
  gboolean allowzero = ctx->opset >= 14 && owb_node_get_int (ctx->node, "allowzero", 0) != 0;
  int64_t dims[OWB_MAX_RANK], known = 1;
  int infer = -1;
  for (int d = 0; d < n; d++)
    {
      dims[d] = shape[d];
      if (shape[d] == 0 && !allowzero)
        {
          if (d >= x->rank)
            {
              owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "shape[%d] is 0 but the input has rank %d", d, x->rank);
              return FALSE;
            }
          dims[d] = x->dims[d];
        }
      if (dims[d] == -1 && infer < 0)
        infer = d;
      else if (dims[d] < 0)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "shape[%d] is %" G_GINT64_FORMAT, d, dims[d]);
          return FALSE;
        }
      else
        known *= dims[d];
    }
  if (infer >= 0)
    {
      if (known == 0 || x->nelems % known != 0)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "cannot infer the -1 of the shape");
          return FALSE;
        }
      dims[infer] = x->nelems / known;
    }
  return copy_as (ctx, (int) n, dims, error);
}

static gboolean
compute_flatten (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  int64_t axis = owb_node_get_int (ctx->node, "axis", 1);
  if (axis < 0)
    axis += x->rank;
  if (axis < 0 || axis > x->rank)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "axis out of range");
      return FALSE;
    }
  int64_t dims[2] = { 1, 1 };
  for (int d = 0; d < x->rank; d++)
    dims[d < axis ? 0 : 1] *= x->dims[d];
  return copy_as (ctx, 2, dims, error);
}

/* Squeeze / Unsqueeze axes: attribute before opset 13, host input 1 since. */
static gboolean
axes_of (OwbKernelContext *ctx, int64_t **axes, int64_t *n, GError **error)
{
  if (ctx->opset >= 13)
    {
      if (ctx->n_inputs > 1 && ctx->inputs[1])
        return host_ints (ctx, 1, axes, n, error);
      *axes = NULL;
      *n = 0;
      return TRUE;
    }
  int na = 0;
  const int64_t *a = owb_node_get_ints (ctx->node, "axes", &na);
  *axes = a ? g_memdup2 (a, sizeof (int64_t) * na) : NULL;
  *n = a ? na : 0;
  return TRUE;
}

static gboolean
compute_squeeze (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  g_autofree int64_t *axes = NULL;
  int64_t n;
  if (!axes_of (ctx, &axes, &n, error))
    return FALSE;
  gboolean drop[OWB_MAX_RANK] = { FALSE };
  for (int64_t k = 0; k < n; k++)
    {
      int64_t a = axes[k] < 0 ? axes[k] + x->rank : axes[k];
      if (a < 0 || a >= x->rank || x->dims[a] != 1)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "axis %" G_GINT64_FORMAT " cannot be squeezed", axes[k]);
          return FALSE;
        }
      drop[a] = TRUE;
    }
  int64_t dims[OWB_MAX_RANK];
  int rank = 0;
  for (int d = 0; d < x->rank; d++)
    if (!(n == 0 ? x->dims[d] == 1 : drop[d]))
      dims[rank++] = x->dims[d];
  return copy_as (ctx, rank, dims, error);
}

static gboolean
compute_unsqueeze (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  g_autofree int64_t *axes = NULL;
  int64_t n;
  if (!axes_of (ctx, &axes, &n, error))
    return FALSE;
  int rank = x->rank + (int) n;
  if (rank > OWB_MAX_RANK)
    return rank_error (ctx, error);
  gboolean added[OWB_MAX_RANK] = { FALSE };
  for (int64_t k = 0; k < n; k++)
    {
      int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
      if (a < 0 || a >= rank || added[a])
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "bad axis %" G_GINT64_FORMAT, axes[k]);
          return FALSE;
        }
      added[a] = TRUE;
    }
  int64_t dims[OWB_MAX_RANK];
  for (int d = 0, s = 0; d < rank; d++)
    dims[d] = added[d] ? 1 : x->dims[s++];
  return copy_as (ctx, rank, dims, error);
}

static gboolean
compute_transpose (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbCudaContext *cx = context_for_rank (ctx, x->rank, error);
  if (!cx)
    return FALSE;
  int n = 0;
  const int64_t *perm = owb_node_get_ints (ctx->node, "perm", &n);
  int64_t p[OWB_MAX_RANK];
  gboolean used[OWB_MAX_RANK] = { FALSE };
  for (int d = 0; d < x->rank; d++)
    {
      p[d] = perm ? (perm[d] < 0 ? perm[d] + x->rank : perm[d]) : x->rank - 1 - d;
      if ((perm && n != x->rank) || p[d] < 0 || p[d] >= x->rank || used[p[d]])
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "perm is not a permutation of %d axes", x->rank);
          return FALSE;
        }
      used[p[d]] = TRUE;
    }
  int64_t in_strides[OWB_MAX_RANK], dims[OWB_MAX_RANK];
  row_major_strides (x->rank, x->dims, in_strides);
  OwbCudaCopyMap map = { .rank = MAX (x->rank, 1) };
  map.dims[0] = 1;
  for (int d = 0; d < x->rank; d++)
    {
      dims[d] = x->dims[p[d]];
      map.dims[d] = dims[d];
      map.src_strides[d] = in_strides[p[d]];
    }
  row_major_strides (x->rank, dims, map.dst_strides);
  OwbTensor *y = _owb_cuda_output (ctx, 0, x->dtype, x->rank, dims, error);
  return y && copy_strided (ctx, cx, (int) owb_data_type_size (x->dtype), x->data, y->data, &map, error);
}

/* Copies `part` into the block of `whole` that starts at `offset` along `axis` (Concat), or the
 * other way round (Split). */
static gboolean
copy_block (OwbKernelContext *ctx, OwbCudaContext *cx, const OwbTensor *whole, const OwbTensor *part, int axis,
            int64_t offset, gboolean into_whole, GError **error)
{
  if (part->nelems == 0)
    return TRUE;
  int64_t ws[OWB_MAX_RANK], ps[OWB_MAX_RANK];
  row_major_strides (whole->rank, whole->dims, ws);
  row_major_strides (part->rank, part->dims, ps);
  /* Three axes are enough: [outer, axis, inner] of the part. */
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++)
    outer *= part->dims[d];
  for (int d = axis + 1; d < part->rank; d++)
    inner *= part->dims[d];
  OwbCudaCopyMap map = { .rank = 3, .dims = { outer, part->dims[axis], inner } };
  int64_t w_strides[3] = { whole->dims[axis] * inner, inner, 1 }, p_strides[3] = { part->dims[axis] * inner, inner, 1 };
  for (int k = 0; k < 3; k++)
    {
      map.src_strides[k] = into_whole ? p_strides[k] : w_strides[k];
      map.dst_strides[k] = into_whole ? w_strides[k] : p_strides[k];
    }
  if (into_whole)
    map.dst_offset = offset * inner;
  else
    map.src_offset = offset * inner;
  return into_whole ? copy_strided (ctx, cx, (int) owb_data_type_size (whole->dtype), part->data, whole->data, &map, error)
                    : copy_strided (ctx, cx, (int) owb_data_type_size (whole->dtype), whole->data, part->data, &map, error);
}

static gboolean
compute_concat (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *first = ctx->inputs[0];
  int axis;
  OwbCudaContext *cx = context_with_axis (ctx, first->rank, &axis, error);
  if (!cx)
    return FALSE;
  int64_t dims[OWB_MAX_RANK];
  memcpy (dims, first->dims, sizeof (int64_t) * first->rank);
  dims[axis] = 0;
  for (int i = 0; i < ctx->n_inputs; i++)
    {
      const OwbTensor *t = ctx->inputs[i];
      gboolean ok = t && t->rank == first->rank && t->dtype == first->dtype;
      for (int d = 0; ok && d < t->rank; d++)
        ok = d == axis || t->dims[d] == first->dims[d];
      if (!ok)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input %d ('%s') does not match input 0 off axis %d", i,
                                ctx->node->inputs[i], (int) axis);
          return FALSE;
        }
      dims[axis] += t->dims[axis];
    }
  OwbTensor *y = _owb_cuda_output (ctx, 0, first->dtype, first->rank, dims, error);
  if (!y)
    return FALSE;
  int64_t offset = 0;
  for (int i = 0; i < ctx->n_inputs; i++)
    {
      if (!copy_block (ctx, cx, y, ctx->inputs[i], (int) axis, offset, TRUE, error))
        return FALSE;
      offset += ctx->inputs[i]->dims[axis];
    }
  return TRUE;
}

static gboolean
compute_split (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  int axis;
  OwbCudaContext *cx = context_with_axis (ctx, x->rank, &axis, error);
  if (!cx)
    return FALSE;
  int n_out = ctx->n_outputs;
  g_autofree int64_t *sizes = NULL;
  int64_t n_sizes = 0;
  if (ctx->opset >= 13 && ctx->n_inputs > 1 && ctx->inputs[1])
    {
      if (!host_ints (ctx, 1, &sizes, &n_sizes, error))
        return FALSE;
    }
  else if (ctx->opset < 13)
    {
      int na = 0;
      const int64_t *a = owb_node_get_ints (ctx->node, "split", &na);
      if (a)
        {
          sizes = g_memdup2 (a, sizeof (int64_t) * na);
          n_sizes = na;
        }
    }
  if (!sizes)
    {
      /* Equal parts, the last one smaller when the axis does not divide (opset 18). */
      int64_t len = x->dims[axis], part = (len + n_out - 1) / n_out;
      sizes = g_new (int64_t, n_out);
      n_sizes = n_out;
      for (int o = 0; o < n_out; o++)
        sizes[o] = MAX (0, MIN (part, len - part * o));
    }
  int64_t total = 0;
  for (int64_t k = 0; k < n_sizes; k++)
    total += sizes[k];
  if (n_sizes != n_out || total != x->dims[axis])
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "split sizes do not cover axis %d of %" G_GINT64_FORMAT,
                            (int) axis, x->dims[axis]);
      return FALSE;
    }
  int64_t offset = 0;
  for (int o = 0; o < n_out; o++)
    {
      int64_t dims[OWB_MAX_RANK];
      memcpy (dims, x->dims, sizeof (int64_t) * x->rank);
      dims[axis] = sizes[o];
      OwbTensor *y = _owb_cuda_output (ctx, o, x->dtype, x->rank, dims, error);
      if (!y || !copy_block (ctx, cx, x, y, (int) axis, offset, FALSE, error))
        return FALSE;
      offset += sizes[o];
    }
  return TRUE;
}

static gboolean
compute_slice (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbCudaContext *cx = context_for_rank (ctx, x->rank, error);
  if (!cx)
    return FALSE;
  g_autofree int64_t *starts = NULL, *ends = NULL, *axes = NULL, *steps = NULL;
  int64_t n = 0, n_ends = 0, n_axes = -1, n_steps = -1;
  if (ctx->opset >= 10)
    {
      if (!host_ints (ctx, 1, &starts, &n, error) || !host_ints (ctx, 2, &ends, &n_ends, error))
        return FALSE;
      if (ctx->n_inputs > 3 && ctx->inputs[3] && !host_ints (ctx, 3, &axes, &n_axes, error))
        return FALSE;
      if (ctx->n_inputs > 4 && ctx->inputs[4] && !host_ints (ctx, 4, &steps, &n_steps, error))
        return FALSE;
    }
  else
    {
      int a = 0, b = 0, c = -1;
      const int64_t *s = owb_node_get_ints (ctx->node, "starts", &a);
      const int64_t *e = owb_node_get_ints (ctx->node, "ends", &b);
      const int64_t *ax = owb_node_get_ints (ctx->node, "axes", &c);
      starts = s ? g_memdup2 (s, sizeof (int64_t) * a) : NULL;
      ends = e ? g_memdup2 (e, sizeof (int64_t) * b) : NULL;
      n = a;
      n_ends = b;
      if (ax)
        {
          axes = g_memdup2 (ax, sizeof (int64_t) * c);
          n_axes = c;
        }
    }
  if (n != n_ends || (n_axes >= 0 && n_axes != n) || (n_steps >= 0 && n_steps != n))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "starts, ends, axes and steps differ in length");
      return FALSE;
    }
  int64_t first[OWB_MAX_RANK], count[OWB_MAX_RANK], step[OWB_MAX_RANK];
  for (int d = 0; d < x->rank; d++)
    {
      first[d] = 0;
      count[d] = x->dims[d];
      step[d] = 1;
    }
  gboolean seen[OWB_MAX_RANK] = { FALSE };
  for (int64_t k = 0; k < n; k++)
    {
      int64_t a = axes ? axes[k] : k;
      if (a < 0)
        a += x->rank;
      int64_t st = steps ? steps[k] : 1;
      if (a < 0 || a >= x->rank || seen[a] || st == 0)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "bad axis or step at position %" G_GINT64_FORMAT, k);
          return FALSE;
        }
      seen[a] = TRUE;
      /* The schema's and the CPU kernel's clamping, so the three agree on the shape (a step of
       * INT64_MIN cannot be negated: -INT64_MAX reads the same one element). */
      step[a] = MAX (st, -G_MAXINT64);
      count[a] = owb_op_slice_count (x->dims[a], starts[k], ends[k], step[a], &first[a]);
    }
  int64_t in_strides[OWB_MAX_RANK];
  row_major_strides (x->rank, x->dims, in_strides);
  OwbCudaCopyMap map = { .rank = MAX (x->rank, 1) };
  map.dims[0] = 1;
  for (int d = 0; d < x->rank; d++)
    {
      map.dims[d] = count[d];
      /* stepped only along an axis of two or more (a step near INT64_MAX would overflow) */
      map.src_strides[d] = count[d] > 1 ? in_strides[d] * step[d] : 0;
      if (count[d] > 0)
        map.src_offset += first[d] * in_strides[d];
    }
  row_major_strides (x->rank, count, map.dst_strides);
  OwbTensor *y = _owb_cuda_output (ctx, 0, x->dtype, x->rank, count, error);
  return y && copy_strided (ctx, cx, (int) owb_data_type_size (x->dtype), x->data, y->data, &map, error);
}

static gboolean
compute_expand (OwbKernelContext *ctx, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const OwbTensor *x = ctx->inputs[0];
  g_autofree int64_t *shape = NULL;
  int64_t n;
  if (!cx || !host_ints (ctx, 1, &shape, &n, error))
    return FALSE;
  int rank = (int) MAX (n, x->rank);
  if (rank > OWB_CUDA_MAX_RANK)
    return rank_error (ctx, error);
  int64_t dims[OWB_MAX_RANK];
  for (int d = 0; d < rank; d++)
    {
      int xd = d - (rank - x->rank), sd = d - (rank - (int) n);
      int64_t a = xd >= 0 ? x->dims[xd] : 1, b = sd >= 0 ? shape[sd] : 1;
      if (a != b && a != 1 && b != 1)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "cannot expand axis %d of %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT,
                                d, a, b);
          return FALSE;
        }
      dims[d] = a == 1 ? b : a;
    }
  OwbCudaCopyMap map = { .rank = MAX (rank, 1) };
  map.dims[0] = 1;
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--)
    {
      int xd = d - (rank - x->rank);
      int64_t a = xd >= 0 ? x->dims[xd] : 1;
      map.dims[d] = dims[d];
      map.src_strides[d] = a == 1 ? 0 : s;
      s *= a;
    }
  row_major_strides (rank, dims, map.dst_strides);
  OwbTensor *y = _owb_cuda_output (ctx, 0, x->dtype, rank, dims, error);
  return y && copy_strided (ctx, cx, (int) owb_data_type_size (x->dtype), x->data, y->data, &map, error);
}

static gboolean
compute_gather (OwbKernelContext *ctx, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const OwbTensor *x = ctx->inputs[0], *idx = ctx->inputs[1];
  if (!cx)
    return FALSE;
  int64_t axis = owb_node_get_int (ctx->node, "axis", 0);
  if (axis < 0)
    axis += x->rank;
  if (axis < 0 || axis >= x->rank || x->rank + idx->rank - 1 > OWB_MAX_RANK)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "axis out of range for rank %d", x->rank);
      return FALSE;
    }
  int64_t dims[OWB_MAX_RANK], outer = 1, inner = 1;
  int rank = 0;
  for (int d = 0; d < axis; d++)
    {
      dims[rank++] = x->dims[d];
      outer *= x->dims[d];
    }
  for (int d = 0; d < idx->rank; d++)
    dims[rank++] = idx->dims[d];
  for (int d = (int) axis + 1; d < x->rank; d++)
    {
      dims[rank++] = x->dims[d];
      inner *= x->dims[d];
    }
  OwbTensor *y = _owb_cuda_output (ctx, 0, x->dtype, rank, dims, error);
  if (!y)
    return FALSE;
  /* Bad indices are flagged on the device; the flag is read back after the gather, which costs a
   * synchronisation but keeps "index out of range" an error, as on the CPU. */
  int zero = 0, bad = 0;
  return _owb_cuda_check (ctx, error, cudaMemcpyAsync (cx->flag, &zero, sizeof zero, cudaMemcpyHostToDevice, cx->stream),
                          "Gather")
         && _owb_cuda_check (ctx, error,
                             _owb_cuda_gather ((int) owb_data_type_size (x->dtype), x->data, idx->data,
                                               idx->dtype == OWB_TYPE_INT64, y->data, outer, x->dims[axis], inner,
                                               idx->nelems, cx->flag, cx->stream),
                             "Gather kernel")
         && _owb_cuda_check (ctx, error, cudaMemcpyAsync (&bad, cx->flag, sizeof bad, cudaMemcpyDeviceToHost, cx->stream),
                             "Gather")
         && _owb_cuda_check (ctx, error, cudaStreamSynchronize (cx->stream), "Gather")
         && (bad == 0 || (owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,
                                                "an index is out of range for axis %d of %" G_GINT64_FORMAT, (int) axis,
                                                x->dims[axis]),
                          FALSE));
}

char *
_owb_cuda_tensor_check (const OwbNode *node, int opset, const OwbValueType *const *in, const OwbValueType *out)
{
  if (node->domain && node->domain[0])
    return NULL;
  const char *op = node->op_type;
  if (strcmp (op, "Gather") == 0 && in[1] && in[1]->dtype != OWB_TYPE_INT64 && in[1]->dtype != OWB_TYPE_INT32
      && in[1]->dtype != OWB_TYPE_UNDEFINED)
    return g_strdup_printf ("the CUDA Gather takes int32 or int64 indices, not %s", owb_data_type_name (in[1]->dtype));
  if (strcmp (op, "Dropout") == 0 && node->n_outputs > 1 && node->outputs[1][0])
    return g_strdup ("the CUDA Dropout does not make a mask");
  if ((strcmp (op, "Transpose") == 0 || strcmp (op, "Slice") == 0 || strcmp (op, "Expand") == 0) && out
      && out[0].rank > OWB_CUDA_MAX_RANK)
    return g_strdup_printf ("the CUDA %s handles at most %d axes", op, OWB_CUDA_MAX_RANK);
  return NULL;
}

const OwbKernelDef _owb_cuda_kernels_tensor[] = {
  { "Identity", "", 1, 0, ANY, 0, NULL, NULL, compute_identity },
  { "Dropout", "", 1, 0, OWB_CUDA_TYPES_FLOAT, 0, NULL, NULL, compute_identity },
  { "Reshape", "", 5, 0, ANY, 0, NULL, NULL, compute_reshape },
  { "Flatten", "", 1, 0, ANY, 0, NULL, NULL, compute_flatten },
  { "Squeeze", "", 1, 0, ANY, 0, NULL, NULL, compute_squeeze },
  { "Unsqueeze", "", 1, 0, ANY, 0, NULL, NULL, compute_unsqueeze },
  { "Transpose", "", 1, 0, ANY, 0, NULL, NULL, compute_transpose },
  { "Concat", "", 4, 0, ANY, 0, NULL, NULL, compute_concat },
  { "Split", "", 2, 0, ANY, 0, NULL, NULL, compute_split },
  { "Slice", "", 1, 0, ANY, 0, NULL, NULL, compute_slice },
  { "Expand", "", 8, 0, ANY, 0, NULL, NULL, compute_expand },
  { "Gather", "", 1, 0, ANY, 0, NULL, NULL, compute_gather },
  { NULL }
};
