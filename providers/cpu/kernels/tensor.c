/* tensor.c: CPU kernels of the tensor op family: data movement (reshape, transpose, slice, gather,
 * scatter, pad...) and the small shape/constant producers. */
#include "../cpu-kernels-private.h"

#include <math.h>
#include <string.h>

/* Data-movement kernels move elements as raw bytes of their size, so they take every dtype,
 * float16 included. String tensors move their char * like 8-byte elements; strings_dup then gives
 * the output its own copies. */

static gsize
elem_size (OwbDataType t)
{
  if (t == OWB_TYPE_STRING)
    return sizeof (char *);
  if (t == OWB_TYPE_INT4 || t == OWB_TYPE_UINT4 || t == OWB_TYPE_FLOAT4E2M1)
    return 1; /* unpacked: one element per byte */
  return owb_data_type_size (t);
}

/* Before an output's pointers are overwritten with borrowed ones. */
static void
strings_clear (OwbTensor *t)
{
  if (t->dtype != OWB_TYPE_STRING || !t->data)
    return;
  char **s = t->data;
  for (int64_t i = 0; i < t->nelems; i++)
    g_clear_pointer (&s[i], g_free);
}

/* After: the output owns copies of what it points to. */
static void
strings_dup (OwbTensor *t)
{
  if (t->dtype != OWB_TYPE_STRING || !t->data)
    return;
  char **s = t->data;
  for (int64_t i = 0; i < t->nelems; i++)
    s[i] = g_strdup (s[i]);
}

static OwbTensor *
get_output (OwbKernelContext *ctx, int i, GError **error)
{
  OwbTensor *t = i < ctx->n_outputs ? ctx->outputs[i] : NULL;
  if (!t)
    owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output %d was not allocated (its shape is unknown)", i);
  return t;
}

static gboolean
check_size (OwbKernelContext *ctx, const OwbTensor *t, GError **error)
{
  if (elem_size (t->dtype) == 0)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_UNSUPPORTED_OP, "type %s is not supported",
                            owb_data_type_name (t->dtype));
      return FALSE;
    }
  return TRUE;
}

static void
row_strides (int rank, const int64_t *dims, int64_t *strides)
{
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--)
    {
      strides[d] = s;
      s *= dims[d];
    }
}

/* Reads an int32/int64 (or other integer) tensor into a new int64 array. */
static int64_t *
read_ints (const OwbTensor *t)
{
  int64_t *v = g_new (int64_t, MAX (t->nelems, 1));
  if (t->dtype == OWB_TYPE_INT64)
    memcpy (v, t->data, t->nelems * sizeof (int64_t));
  else if (t->dtype == OWB_TYPE_INT32)
    for (int64_t i = 0; i < t->nelems; i++)
      v[i] = ((const int32_t *) t->data)[i];
  else
    for (int64_t i = 0; i < t->nelems; i++)
      v[i] = owb_tensor_get_int64 (t, i);
  return v;
}

static void
run_parallel (OwbKernelContext *ctx, int64_t units, int64_t elems_per_unit, OwbParallelFunc fn, gpointer data)
{
  int64_t grain = MAX (1, 65536 / MAX (elems_per_unit, 1));
  if (units <= 0)
    return;
  if (!ctx->pool || units <= grain)
    fn (0, units, data);
  else
    owb_parallel_for (ctx->pool, units, grain, fn, data);
}

/* ---- element moves, stamped per element size ---- */

static inline void
copy_elem (char *dst, const char *src, gsize es)
{
  switch (es)
    {
    case 1: *dst = *src; break;
    case 2: memcpy (dst, src, 2); break;
    case 4: memcpy (dst, src, 4); break;
    case 8: memcpy (dst, src, 8); break;
    default: memcpy (dst, src, es); break;
    }
}

#define DEFINE_MOVES(T, N)                                                                                     \
  static G_GNUC_UNUSED void gather_row_##N (char *dst, const char *src, int64_t n, int64_t stride)             \
  {                                                                                                            \
    T *d = (T *) dst;                                                                                          \
    const T *s = (const T *) src;                                                                              \
    for (int64_t i = 0; i < n; i++)                                                                            \
      d[i] = s[i * stride];                                                                                    \
  }                                                                                                            \
  static G_GNUC_UNUSED void fill_##N (char *dst, const char *value, int64_t n)                                \
  {                                                                                                            \
    T v;                                                                                                       \
    memcpy (&v, value, sizeof v);                                                                              \
    T *d = (T *) dst;                                                                                          \
    for (int64_t i = 0; i < n; i++)                                                                            \
      d[i] = v;                                                                                                \
  }                                                                                                            \
  /* dst[i * cols + j] = src[i + j * stride] for i in [i0, i1), all j: rows of a 2-D transpose, in 8x8 tiles   \
   * through a local buffer so that source lines are read whole while they are in cache. */                    \
  static G_GNUC_UNUSED void transpose_block_##N (char *dst, const char *src, int64_t i0, int64_t i1,         \
                                                int64_t cols, int64_t stride)                                  \
  {                                                                                                            \
    enum { K = 8 };                                                                                            \
    T *d = (T *) dst;                                                                                          \
    const T *s = (const T *) src;                                                                              \
    T tile[K][K];                                                                                              \
    int64_t iv = i0 + ((i1 - i0) / K) * K, jv = (cols / K) * K;                                                \
    for (int64_t j = 0; j < jv; j += K)                                                                        \
      for (int64_t i = i0; i < iv; i += K)                                                                     \
        {                                                                                                      \
          for (int jj = 0; jj < K; jj++)                                                                       \
            {                                                                                                  \
              const T *sp = s + i + (j + jj) * stride;                                                         \
              for (int ii = 0; ii < K; ii++)                                                                   \
                tile[ii][jj] = sp[ii];                                                                         \
            }                                                                                                  \
          for (int ii = 0; ii < K; ii++)                                                                       \
            memcpy (d + (i + ii) * cols + j, tile[ii], sizeof tile[ii]);                                       \
        }                                                                                                      \
    for (int64_t i = i0; i < i1; i++)                                                                          \
      for (int64_t j = i < iv ? jv : 0; j < cols; j++)                                                         \
        d[i * cols + j] = s[i + j * stride];                                                                   \
  }

DEFINE_MOVES (uint8_t, 1)
DEFINE_MOVES (uint16_t, 2)
DEFINE_MOVES (uint32_t, 4)
DEFINE_MOVES (uint64_t, 8)

#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define HAVE_SHUFFLE 1
#endif
#endif

#ifdef HAVE_SHUFFLE
typedef uint32_t u32x4 __attribute__ ((vector_size (16)));

/* The 4-byte case of transpose_block with 4x4 register transposes, walked in 16x16 tiles. */
static void
transpose_block_4v (char *dst, const char *src, int64_t i0, int64_t i1, int64_t cols, int64_t stride)
{
  uint32_t *d = (uint32_t *) dst;
  const uint32_t *s = (const uint32_t *) src;
  int64_t iv = i0 + ((i1 - i0) / 16) * 16, jv = (cols / 16) * 16;
  for (int64_t tj = 0; tj < jv; tj += 16)
    for (int64_t ti = i0; ti < iv; ti += 16)
      for (int64_t j = tj; j < tj + 16; j += 4)
        for (int64_t i = ti; i < ti + 16; i += 4)
          {
            u32x4 a, b, c, e;
            memcpy (&a, s + i + j * stride, 16);
            memcpy (&b, s + i + (j + 1) * stride, 16);
            memcpy (&c, s + i + (j + 2) * stride, 16);
            memcpy (&e, s + i + (j + 3) * stride, 16);
            u32x4 t0 = __builtin_shufflevector (a, b, 0, 4, 1, 5), t1 = __builtin_shufflevector (a, b, 2, 6, 3, 7);
            u32x4 t2 = __builtin_shufflevector (c, e, 0, 4, 1, 5), t3 = __builtin_shufflevector (c, e, 2, 6, 3, 7);
            u32x4 r0 = __builtin_shufflevector (t0, t2, 0, 1, 4, 5), r1 = __builtin_shufflevector (t0, t2, 2, 3, 6, 7);
            u32x4 r2 = __builtin_shufflevector (t1, t3, 0, 1, 4, 5), r3 = __builtin_shufflevector (t1, t3, 2, 3, 6, 7);
            memcpy (d + i * cols + j, &r0, 16);
            memcpy (d + (i + 1) * cols + j, &r1, 16);
            memcpy (d + (i + 2) * cols + j, &r2, 16);
            memcpy (d + (i + 3) * cols + j, &r3, 16);
          }
  for (int64_t i = i0; i < i1; i++)
    for (int64_t j = i < iv ? jv : 0; j < cols; j++)
      d[i * cols + j] = s[i + j * stride];
}
#else
#define transpose_block_4v transpose_block_4
#endif

static void
gather_row (char *dst, const char *src, int64_t n, int64_t stride, gsize es)
{
  switch (es)
    {
    case 1: gather_row_1 (dst, src, n, stride); break;
    case 2: gather_row_2 (dst, src, n, stride); break;
    case 4: gather_row_4 (dst, src, n, stride); break;
    case 8: gather_row_8 (dst, src, n, stride); break;
    default:
      for (int64_t i = 0; i < n; i++)
        memcpy (dst + i * es, src + i * stride * (int64_t) es, es);
    }
}

static void
fill_elems (char *dst, const char *value, int64_t n, gsize es)
{
  gboolean zero = TRUE;
  for (gsize i = 0; i < es && zero; i++)
    zero = value[i] == 0;
  if (zero)
    {
      memset (dst, 0, n * es);
      return;
    }
  switch (es)
    {
    case 1: memset (dst, value[0], n); break;
    case 2: fill_2 (dst, value, n); break;
    case 4: fill_4 (dst, value, n); break;
    case 8: fill_8 (dst, value, n); break;
    default:
      for (int64_t i = 0; i < n; i++)
        memcpy (dst + i * es, value, es);
    }
}

/* ---- strided copy: the engine of Transpose, Slice, Expand, DepthToSpace, SpaceToDepth ---- */

/* Output (contiguous, dims) element at index (i0..in) = src element at sum i_k * strides[k]. Strides
 * are in elements and may be 0 (broadcast) or negative (reversed slice). */
typedef struct {
  int rank;
  int64_t dims[OWB_MAX_RANK];
  int64_t strides[OWB_MAX_RANK];
  const char *src;
  char *dst;
  gsize es;
} Strided;

/* Drops size-1 axes and merges neighbours that the source walks contiguously, so that a reshape-like
 * copy becomes one row and a 4-D NCHW<->NHWC transpose a batched 2-D one. */
static void
strided_simplify (Strided *s)
{
  int r = 0;
  for (int d = 0; d < s->rank; d++)
    {
      if (s->dims[d] == 1)
        continue;
      if (r > 0 && s->strides[r - 1] == s->strides[d] * s->dims[d])
        {
          s->dims[r - 1] *= s->dims[d];
          s->strides[r - 1] = s->strides[d];
          continue;
        }
      s->dims[r] = s->dims[d];
      s->strides[r] = s->strides[d];
      r++;
    }
  if (r == 0)
    {
      s->dims[0] = 1;
      s->strides[0] = 1;
      r = 1;
    }
  s->rank = r;
}

/* Units are output rows (all axes but the last). */
static void
strided_rows (int64_t begin, int64_t end, gpointer data)
{
  const Strided *s = data;
  int r = s->rank;
  gsize es = s->es;
  int64_t len = s->dims[r - 1], step = s->strides[r - 1];
  int64_t idx[OWB_MAX_RANK];
  int64_t off = 0, rem = begin;
  for (int d = r - 2; d >= 0; d--)
    {
      idx[d] = rem % s->dims[d];
      rem /= s->dims[d];
      off += idx[d] * s->strides[d];
    }
  char *dst = s->dst + begin * len * es;
  for (int64_t row = begin; row < end; row++)
    {
      const char *src = s->src + off * (int64_t) es;
      if (step == 1)
        memcpy (dst, src, len * es);
      else if (step == 0)
        fill_elems (dst, src, len, es);
      else
        gather_row (dst, src, len, step, es);
      dst += len * es;
      for (int d = r - 2; d >= 0; d--)
        {
          off += s->strides[d];
          if (++idx[d] < s->dims[d])
            break;
          off -= s->strides[d] * s->dims[d];
          idx[d] = 0;
        }
    }
}

#define TRANSPOSE_ROWS 64

/* A block of a transpose to 2..4 columns of 4-byte elements (NCHW → NHWC of an image's 3 colour
 * planes): the column loop unrolled by a constant, each source plane one sequential stream. */
static inline __attribute__ ((always_inline)) void
transpose_few_cols (uint32_t *restrict d, const uint32_t *restrict s, int64_t i0, int64_t i1, const int cols,
                    int64_t stride)
{
#ifdef HAVE_SHUFFLE
  /* three planes: 4 pixels from each interleaved by 5 shuffles into 3 vectors */
  if (cols == 3)
    for (; i0 + 4 <= i1; i0 += 4)
      {
        u32x4 a, b, c;
        memcpy (&a, s + i0, 16);
        memcpy (&b, s + i0 + stride, 16);
        memcpy (&c, s + i0 + 2 * stride, 16);
        u32x4 t0 = __builtin_shufflevector (a, b, 0, 4, 1, 5), t1 = __builtin_shufflevector (a, b, 2, 6, 3, 7);
        u32x4 o0 = __builtin_shufflevector (t0, c, 0, 1, 4, 2);
        u32x4 u = __builtin_shufflevector (t0, c, 3, 5, 3, 5);
        u32x4 o1 = __builtin_shufflevector (u, t1, 0, 1, 4, 5);
        u32x4 o2 = __builtin_shufflevector (c, t1, 2, 6, 7, 3);
        memcpy (d + i0 * 3, &o0, 16);
        memcpy (d + i0 * 3 + 4, &o1, 16);
        memcpy (d + i0 * 3 + 8, &o2, 16);
      }
#endif
  for (int64_t i = i0; i < i1; i++)
    for (int j = 0; j < cols; j++)
      d[i * cols + j] = s[i + j * stride];
}

/* Units are (outer index, block of TRANSPOSE_ROWS rows) of a batched 2-D transpose: the axis before
 * the last one has source stride 1, so reading along it and writing along the last is cache-friendly. */
static void
strided_blocks (int64_t begin, int64_t end, gpointer data)
{
  const Strided *s = data;
  int r = s->rank;
  gsize es = s->es;
  int64_t rows = s->dims[r - 2], cols = s->dims[r - 1], stride = s->strides[r - 1];
  int64_t nblk = (rows + TRANSPOSE_ROWS - 1) / TRANSPOSE_ROWS;
  for (int64_t u = begin; u < end; u++)
    {
      int64_t outer = u / nblk, blk = u % nblk, rem = outer, off = 0;
      for (int d = r - 3; d >= 0; d--)
        {
          off += (rem % s->dims[d]) * s->strides[d];
          rem /= s->dims[d];
        }
      char *dst = s->dst + outer * rows * cols * es;
      const char *src = s->src + off * (int64_t) es;
      int64_t i0 = blk * TRANSPOSE_ROWS, i1 = MIN (rows, i0 + TRANSPOSE_ROWS);
      if (es == 4 && cols >= 2 && cols <= 4)
        {
          uint32_t *d = (uint32_t *) dst;
          const uint32_t *sp = (const uint32_t *) src;
          if (cols == 2)
            transpose_few_cols (d, sp, i0, i1, 2, stride);
          else if (cols == 3)
            transpose_few_cols (d, sp, i0, i1, 3, stride);
          else
            transpose_few_cols (d, sp, i0, i1, 4, stride);
          continue;
        }
      if (es == 1 && cols == 3)
        {
          /* a quantized image's 3 planes (a QDQ CNN's input before its NHWC stem): the general
           * byte block read them at 1.6 GB/s */
          uint8_t *restrict d = (uint8_t *) dst;
          const uint8_t *restrict s0 = (const uint8_t *) src, *restrict s1 = s0 + stride, *restrict s2 = s1 + stride;
          for (int64_t i = i0; i < i1; i++)
            {
              d[3 * i] = s0[i];
              d[3 * i + 1] = s1[i];
              d[3 * i + 2] = s2[i];
            }
          continue;
        }
      switch (es)
        {
        case 1: transpose_block_1 (dst, src, i0, i1, cols, stride); break;
        case 2: transpose_block_2 (dst, src, i0, i1, cols, stride); break;
        case 4: transpose_block_4v (dst, src, i0, i1, cols, stride); break;
        case 8: transpose_block_8 (dst, src, i0, i1, cols, stride); break;
        default:
          for (int64_t i = i0; i < i1; i++)
            for (int64_t j = 0; j < cols; j++)
              memcpy (dst + (i * cols + j) * es, src + (i + j * stride) * (int64_t) es, es);
        }
    }
}

static void
strided_run (OwbKernelContext *ctx, Strided *s)
{
  int64_t n = _owb_cpu_product (s->dims, 0, s->rank);
  if (n == 0)
    return;
  strided_simplify (s);
  int r = s->rank;
  if (r >= 2 && s->strides[r - 2] == 1 && s->strides[r - 1] != 1 && s->strides[r - 1] != 0 && s->dims[r - 2] >= 8)
    {
      int64_t nblk = (s->dims[r - 2] + TRANSPOSE_ROWS - 1) / TRANSPOSE_ROWS;
      run_parallel (ctx, _owb_cpu_product (s->dims, 0, r - 2) * nblk, TRANSPOSE_ROWS * s->dims[r - 1], strided_blocks, s);
      return;
    }
  run_parallel (ctx, n / s->dims[r - 1], s->dims[r - 1], strided_rows, s);
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze, Identity ---- */

static gboolean
copy_data (OwbKernelContext *ctx, const OwbTensor *in, OwbTensor *out, GError **error)
{
  if (in->nelems != out->nelems || in->dtype != out->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output holds %" G_GINT64_FORMAT " %s elements, input %"
                            G_GINT64_FORMAT " %s", out->nelems, owb_data_type_name (out->dtype), in->nelems,
                            owb_data_type_name (in->dtype));
      return FALSE;
    }
  if (out->data == in->data || in->nelems == 0)
    return TRUE;
  strings_clear (out);
  memcpy (out->data, in->data, in->nbytes);
  strings_dup (out);
  return TRUE;
}

/* Output 0 becomes a view of `in` read as output 0's shape: the same bytes in the same order (a
 * reshape, or a transpose that only moves axes of size 1), so nothing is copied. Values are never
 * written after their node has run, so sharing is safe; the view holds a reference on `in`, whose
 * memory goes back to the arena only when both are released. Strings are owned per element and
 * are copied. */
static gboolean
share_data (OwbKernelContext *ctx, OwbTensor *in, GError **error)
{
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out)
    return FALSE;
  if (in->kind != OWB_VALUE_TENSOR || in->dtype == OWB_TYPE_STRING || in->nelems != out->nelems
      || in->dtype != out->dtype || in->nelems == 0)
    return copy_data (ctx, in, out, error);
  OwbTensor *view = owb_tensor_new_view (in, out->rank, out->dims, error);
  if (!view)
    return FALSE;
  owb_tensor_unref (out);
  ctx->outputs[0] = view;
  return TRUE;
}

static gboolean
reshape_compute (OwbKernelContext *ctx, GError **error)
{
  return share_data (ctx, ctx->inputs[0], error);
}

static gboolean
identity_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *in = ctx->inputs[0];
  if (in->kind != OWB_VALUE_TENSOR)
    {
      /* Sequences and optionals are immutable values: share them. */
      if (ctx->outputs[0] == in)
        return TRUE;
      g_clear_pointer (&ctx->outputs[0], owb_tensor_unref);
      ctx->outputs[0] = owb_tensor_ref (in);
      return TRUE;
    }
  return share_data (ctx, in, error);
}

/* ---- Transpose, Expand, DepthToSpace, SpaceToDepth ---- */

static gboolean
transpose_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *in = ctx->inputs[0];
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out || !check_size (ctx, in, error))
    return FALSE;
  int np, r = in->rank;
  const int64_t *perm = owb_node_get_ints (ctx->node, "perm", &np);
  int64_t in_strides[OWB_MAX_RANK];
  row_strides (r, in->dims, in_strides);
  if ((perm && np != r) || out->rank != r)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "perm does not match the rank-%d input", r);
      return FALSE;
    }
  Strided s = { .rank = r, .src = in->data, .dst = out->data, .es = elem_size (in->dtype) };
  /* in_order: the axes longer than 1 keep their order (vit's [1, 50, 768] <-> [50, 1, 768]), a
   * reshape */
  int64_t last = -1;
  gboolean in_order = TRUE;
  for (int k = 0; k < r; k++)
    {
      int64_t p = perm ? perm[k] : r - 1 - k;
      if (p < 0 || p >= r || out->dims[k] != in->dims[p])
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "perm is invalid for the input shape");
          return FALSE;
        }
      s.dims[k] = out->dims[k];
      s.strides[k] = in_strides[p];
      if (out->dims[k] != 1)
        {
          in_order = in_order && p > last;
          last = p;
        }
    }
  if (in_order)
    return share_data (ctx, ctx->inputs[0], error);
  strings_clear (out);
  strided_run (ctx, &s);
  strings_dup (out);
  return TRUE;
}

static gboolean
expand_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *in = ctx->inputs[0];
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out || !check_size (ctx, in, error))
    return FALSE;
  int r = out->rank;
  int64_t in_strides[OWB_MAX_RANK];
  row_strides (in->rank, in->dims, in_strides);
  Strided s = { .rank = r, .src = in->data, .dst = out->data, .es = elem_size (in->dtype) };
  if (in->rank > r)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output rank %d is below the input's %d", r, in->rank);
      return FALSE;
    }
  for (int k = 0; k < r; k++)
    {
      int j = k - (r - in->rank);
      s.dims[k] = out->dims[k];
      s.strides[k] = 0;
      if (j < 0)
        continue;
      if (in->dims[j] == out->dims[k])
        s.strides[k] = in_strides[j];
      else if (in->dims[j] != 1)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                                "cannot broadcast input axis %d of size %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT, j,
                                in->dims[j], out->dims[k]);
          return FALSE;
        }
    }
  strings_clear (out);
  strided_run (ctx, &s);
  strings_dup (out);
  return TRUE;
}

static gboolean
depth_space_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *in = ctx->inputs[0];
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out || !check_size (ctx, in, error))
    return FALSE;
  int64_t b = owb_node_get_int (ctx->node, "blocksize", 0);
  gboolean crd = g_strcmp0 (owb_node_get_string (ctx->node, "mode", "DCR"), "CRD") == 0;
  gboolean to_space = strcmp (ctx->node->op_type, "DepthToSpace") == 0;
  if (in->rank != 4 || out->rank != 4 || b < 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "needs a rank-4 input and a positive blocksize");
      return FALSE;
    }
  int64_t n = in->dims[0], c = in->dims[1], h = in->dims[2], w = in->dims[3];
  Strided s = { .rank = 6, .src = in->data, .dst = out->data, .es = elem_size (in->dtype) };
  if (to_space)
    {
      int64_t cc = c / (b * b);
      if (cc * b * b != c || out->dims[1] != cc || out->dims[2] != h * b || out->dims[3] != w * b)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output shape does not match the input and blocksize");
          return FALSE;
        }
      /* Output seen as [N, C', H, b1, W, b2]; the input as [N, b1, b2, C', H, W] (DCR) or
       * [N, C', b1, b2, H, W] (CRD). */
      int64_t sc = crd ? b * b * h * w : h * w;
      int64_t sb1 = crd ? b * h * w : b * cc * h * w;
      int64_t sb2 = crd ? h * w : cc * h * w;
      int64_t dims[6] = { n, cc, h, b, w, b }, strides[6] = { c * h * w, sc, w, sb1, 1, sb2 };
      memcpy (s.dims, dims, sizeof dims);
      memcpy (s.strides, strides, sizeof strides);
    }
  else
    {
      int64_t hh = h / b, ww = w / b;
      if (hh * b != h || ww * b != w || out->dims[1] != c * b * b || out->dims[2] != hh || out->dims[3] != ww)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output shape does not match the input and blocksize");
          return FALSE;
        }
      /* The input seen as [N, C, H', b1, W', b2]; the output as [N, b1, b2, C, H', W'] (DCR) or
       * [N, C, b1, b2, H', W'] (CRD). */
      int64_t sn = c * h * w, sc = h * w, sh = b * w, sb1 = w, sw = b, sb2 = 1;
      if (crd)
        {
          int64_t dims[6] = { n, c, b, b, hh, ww }, strides[6] = { sn, sc, sb1, sb2, sh, sw };
          memcpy (s.dims, dims, sizeof dims);
          memcpy (s.strides, strides, sizeof strides);
        }
      else
        {
          int64_t dims[6] = { n, b, b, c, hh, ww }, strides[6] = { sn, sb1, sb2, sc, sh, sw };
          memcpy (s.dims, dims, sizeof dims);
          memcpy (s.strides, strides, sizeof strides);
        }
    }
  strings_clear (out);
  strided_run (ctx, &s);
  strings_dup (out);
  return TRUE;
}

/* ---- Slice ---- */

static gboolean
slice_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *in = ctx->inputs[0];
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out || !check_size (ctx, in, error))
    return FALSE;
  int r = in->rank;
  g_autofree int64_t *starts = NULL, *ends = NULL, *axes = NULL, *steps = NULL;
  int64_t n, n_ends, n_axes = -1, n_steps = -1;
  if (ctx->opset < 10)
    {
      int a, b, c;
      const int64_t *s = owb_node_get_ints (ctx->node, "starts", &a);
      const int64_t *e = owb_node_get_ints (ctx->node, "ends", &b);
      const int64_t *x = owb_node_get_ints (ctx->node, "axes", &c);
      starts = g_memdup2 (s, sizeof (int64_t) * MAX (a, 1)), n = s ? a : 0;
      ends = g_memdup2 (e, sizeof (int64_t) * MAX (b, 1)), n_ends = e ? b : 0;
      if (x)
        axes = g_memdup2 (x, sizeof (int64_t) * MAX (c, 1)), n_axes = c;
    }
  else
    {
      starts = read_ints (ctx->inputs[1]), n = ctx->inputs[1]->nelems;
      ends = read_ints (ctx->inputs[2]), n_ends = ctx->inputs[2]->nelems;
      if (ctx->n_inputs > 3 && ctx->inputs[3])
        axes = read_ints (ctx->inputs[3]), n_axes = ctx->inputs[3]->nelems;
      if (ctx->n_inputs > 4 && ctx->inputs[4])
        steps = read_ints (ctx->inputs[4]), n_steps = ctx->inputs[4]->nelems;
    }
  if (n > r || n_ends != n || (axes && n_axes != n) || (steps && n_steps != n) || out->rank != r)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "starts, ends, axes and steps do not fit rank %d", r);
      return FALSE;
    }
  int64_t first[OWB_MAX_RANK], step[OWB_MAX_RANK], count[OWB_MAX_RANK];
  gboolean seen[OWB_MAX_RANK] = { 0 };
  for (int d = 0; d < r; d++)
    first[d] = 0, step[d] = 1, count[d] = in->dims[d];
  for (int i = 0; i < n; i++)
    {
      int a;
      if (!_owb_cpu_normalize_axis (ctx, axes ? axes[i] : i, r, &a, error))
        return FALSE;
      if (seen[a] || (steps && steps[i] == 0))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "axis %d is repeated or has step 0", a);
          return FALSE;
        }
      seen[a] = TRUE;
      step[a] = steps ? steps[i] : 1;
      if (step[a] < -G_MAXINT64)
        step[a] = -G_MAXINT64;
      count[a] = owb_op_slice_count (in->dims[a], starts[i], ends[i], step[a], &first[a]);
    }
  int64_t in_strides[OWB_MAX_RANK], base = 0;
  row_strides (r, in->dims, in_strides);
  Strided s = { .rank = r, .dst = out->data, .es = elem_size (in->dtype) };
  for (int d = 0; d < r; d++)
    {
      if (count[d] != out->dims[d])
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output axis %d has size %" G_GINT64_FORMAT
                                ", the slice selects %" G_GINT64_FORMAT, d, out->dims[d], count[d]);
          return FALSE;
        }
      s.dims[d] = count[d];
      /* a stride is only stepped along an axis of two or more; with one, step may be as large
       * as INT64_MAX and the product would overflow */
      s.strides[d] = count[d] > 1 ? in_strides[d] * step[d] : 0;
      base += first[d] * in_strides[d];
    }
  if (out->nelems == 0)
    return TRUE;
  s.src = (const char *) in->data + base * (int64_t) s.es;
  strings_clear (out);
  strided_run (ctx, &s);
  strings_dup (out);
  return TRUE;
}

/* ---- Concat, Split ---- */

typedef struct {
  OwbKernelContext *ctx;
  char *out;
  gsize out_block, inner_bytes;
  int axis;
} ConcatJob;

/* Outer rows [begin, end): each input's contiguous run of the row, in order. */
static void
concat_rows (int64_t begin, int64_t end, gpointer data)
{
  const ConcatJob *job = data;
  for (int64_t o = begin; o < end; o++)
    {
      char *dst = job->out + o * job->out_block;
      for (int i = 0; i < job->ctx->n_inputs; i++)
        {
          const OwbTensor *t = job->ctx->inputs[i];
          gsize block = t->dims[job->axis] * job->inner_bytes;
          if (block)
            memcpy (dst, (const char *) t->data + o * block, block);
          dst += block;
        }
    }
}

static gboolean
concat_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out || !check_size (ctx, out, error))
    return FALSE;
  int r = out->rank, a;
  if (!_owb_cpu_normalize_axis (ctx, owb_node_get_int (ctx->node, "axis", 1), r, &a, error))
    return FALSE;
  gsize es = elem_size (out->dtype);
  int64_t outer = _owb_cpu_product (out->dims, 0, a), inner = _owb_cpu_product (out->dims, a + 1, r);
  int64_t sum = 0;
  for (int i = 0; i < ctx->n_inputs; i++)
    {
      const OwbTensor *t = ctx->inputs[i];
      gboolean ok = t && t->rank == r && t->dtype == out->dtype;
      for (int d = 0; ok && d < r; d++)
        ok = d == a || t->dims[d] == out->dims[d];
      if (!ok)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input %d does not fit the output shape", i);
          return FALSE;
        }
      sum += t->dims[a];
    }
  if (sum != out->dims[a])
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "inputs add up to %" G_GINT64_FORMAT " on axis %d, output has %"
                            G_GINT64_FORMAT, sum, a, out->dims[a]);
      return FALSE;
    }
  if (out->nelems == 0)
    return TRUE;
  strings_clear (out);
  /* channels-last concatenations have many short rows: split them over the pool */
  ConcatJob job = { ctx, out->data, out->dims[a] * inner * es, inner * es, a };
  run_parallel (ctx, outer, out->dims[a] * inner, concat_rows, &job);
  strings_dup (out);
  return TRUE;
}

static gboolean
split_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *in = ctx->inputs[0];
  if (!check_size (ctx, in, error))
    return FALSE;
  int r = in->rank, a, n_out = ctx->n_outputs;
  if (!_owb_cpu_normalize_axis (ctx, owb_node_get_int (ctx->node, "axis", 0), r, &a, error))
    return FALSE;
  g_autofree int64_t *split = NULL;
  int64_t n_split = -1;
  int na;
  const int64_t *attr = ctx->opset < 13 ? owb_node_get_ints (ctx->node, "split", &na) : NULL;
  if (attr)
    split = g_memdup2 (attr, sizeof (int64_t) * MAX (na, 1)), n_split = na;
  else if ((ctx->opset < 2 || ctx->opset >= 13) && ctx->n_inputs > 1 && ctx->inputs[1])
    split = read_ints (ctx->inputs[1]), n_split = ctx->inputs[1]->nelems;
  else
    {
      int64_t chunk = (in->dims[a] + n_out - 1) / n_out;
      split = g_new (int64_t, n_out);
      n_split = n_out;
      for (int i = 0; i < n_out; i++)
        split[i] = i < n_out - 1 ? chunk : in->dims[a] - chunk * (n_out - 1);
    }
  int64_t sum = 0;
  gboolean negative = FALSE;
  for (int i = 0; i < n_split; i++)
    {
      negative |= split[i] < 0;
      sum += split[i];
    }
  if (n_split != n_out || negative || sum != in->dims[a])
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "split sizes do not add up to axis %d of size %" G_GINT64_FORMAT,
                            a, in->dims[a]);
      return FALSE;
    }
  for (int i = 0; i < n_out; i++)
    {
      const OwbTensor *t = ctx->outputs[i];
      gboolean ok = !t || (t->rank == r && t->dtype == in->dtype);
      for (int d = 0; t && ok && d < r; d++)
        ok = t->dims[d] == (d == a ? split[i] : in->dims[d]);
      if (!ok)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output %d does not have the split shape", i);
          return FALSE;
        }
      if (t)
        strings_clear (ctx->outputs[i]);
    }
  gsize es = elem_size (in->dtype);
  int64_t outer = _owb_cpu_product (in->dims, 0, a), inner = _owb_cpu_product (in->dims, a + 1, r);
  gsize in_block = in->dims[a] * inner * es;
  for (int64_t o = 0; o < outer && in->nelems > 0; o++)
    {
      const char *src = (const char *) in->data + o * in_block;
      for (int i = 0; i < n_out; i++)
        {
          gsize block = split[i] * inner * es;
          if (ctx->outputs[i] && block)
            memcpy ((char *) ctx->outputs[i]->data + o * block, src, block);
          src += block;
        }
    }
  for (int i = 0; i < n_out; i++)
    if (ctx->outputs[i])
      strings_dup (ctx->outputs[i]);
  return TRUE;
}

/* ---- Gather, GatherElements, GatherND ---- */

typedef struct {
  const char *src;
  char *dst;
  const int64_t *idx;
  int64_t n_idx, axis_dim;
  gsize block;
} GatherJob;

/* Units are (outer, index) pairs; each copies one block. */
static void
gather_units (int64_t begin, int64_t end, gpointer data)
{
  const GatherJob *g = data;
  gsize block = g->block;
  for (int64_t u = begin; u < end; u++)
    {
      int64_t o = u / g->n_idx, k = u % g->n_idx;
      const char *src = g->src + (o * g->axis_dim + g->idx[k]) * block;
      char *dst = g->dst + u * block;
      switch (block)
        {
        case 4: memcpy (dst, src, 4); break;
        case 8: memcpy (dst, src, 8); break;
        default: memcpy (dst, src, block); break;
        }
    }
}

static gboolean
wrap_index (OwbKernelContext *ctx, int64_t *v, int64_t dim, int axis, GError **error)
{
  int64_t x = *v;
  if (x < -dim || x >= dim)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "index %" G_GINT64_FORMAT " is out of range for axis %d of size %" G_GINT64_FORMAT, x, axis,
                            dim);
      return FALSE;
    }
  *v = x < 0 ? x + dim : x;
  return TRUE;
}

static gboolean
gather_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *in = ctx->inputs[0], *ind = ctx->inputs[1];
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out || !check_size (ctx, in, error))
    return FALSE;
  int r = in->rank, a;
  if (!_owb_cpu_normalize_axis (ctx, owb_node_get_int (ctx->node, "axis", 0), r, &a, error))
    return FALSE;
  int64_t outer = _owb_cpu_product (in->dims, 0, a), inner = _owb_cpu_product (in->dims, a + 1, r);
  if (out->nelems != outer * ind->nelems * inner)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output shape does not match data and indices");
      return FALSE;
    }
  g_autofree int64_t *idx = read_ints (ind);
  for (int64_t i = 0; i < ind->nelems; i++)
    if (!wrap_index (ctx, &idx[i], in->dims[a], a, error))
      return FALSE;
  if (out->nelems == 0)
    return TRUE;
  gsize es = elem_size (in->dtype);
  GatherJob g = { in->data, out->data, idx, ind->nelems, in->dims[a], inner * es };
  strings_clear (out);
  run_parallel (ctx, outer * ind->nelems, inner, gather_units, &g);
  strings_dup (out);
  return TRUE;
}

/* Flat data offsets of the elements that GatherElements/ScatterElements address with `ind`. */
static int64_t *
element_offsets (OwbKernelContext *ctx, const OwbTensor *data, const OwbTensor *ind, GError **error)
{
  int r = data->rank, a;
  if (!_owb_cpu_normalize_axis (ctx, owb_node_get_int (ctx->node, "axis", 0), r, &a, error))
    return NULL;
  if (ind->rank != r)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "indices have rank %d, data %d", ind->rank, r);
      return NULL;
    }
  for (int d = 0; d < r; d++)
    if (d != a && ind->dims[d] > data->dims[d])
      {
        owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                              "indices axis %d of size %" G_GINT64_FORMAT " exceeds data's %" G_GINT64_FORMAT, d,
                              ind->dims[d], data->dims[d]);
        return NULL;
      }
  int64_t ds[OWB_MAX_RANK], c[OWB_MAX_RANK] = { 0 };
  row_strides (r, data->dims, ds);
  int64_t *offs = read_ints (ind);
  int64_t base = 0, dim = data->dims[a];
  for (int64_t i = 0; i < ind->nelems; i++)
    {
      int64_t v = offs[i];
      if (!wrap_index (ctx, &v, dim, a, error))
        {
          g_free (offs);
          return NULL;
        }
      offs[i] = base + v * ds[a];
      for (int d = r - 1; d >= 0; d--)
        {
          if (d != a)
            base += ds[d];
          if (++c[d] < ind->dims[d])
            break;
          if (d != a)
            base -= ds[d] * ind->dims[d];
          c[d] = 0;
        }
    }
  return offs;
}

static void
gather_offsets (char *dst, const char *src, const int64_t *offs, int64_t n, gsize es)
{
  switch (es)
    {
    case 1:
      for (int64_t i = 0; i < n; i++)
        dst[i] = src[offs[i]];
      break;
    case 4:
      for (int64_t i = 0; i < n; i++)
        ((uint32_t *) dst)[i] = ((const uint32_t *) src)[offs[i]];
      break;
    case 8:
      for (int64_t i = 0; i < n; i++)
        ((uint64_t *) dst)[i] = ((const uint64_t *) src)[offs[i]];
      break;
    default:
      for (int64_t i = 0; i < n; i++)
        memcpy (dst + i * es, src + offs[i] * es, es);
    }
}

static gboolean
gather_elements_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *in = ctx->inputs[0], *ind = ctx->inputs[1];
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out || !check_size (ctx, in, error))
    return FALSE;
  if (out->nelems != ind->nelems)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output shape differs from the indices shape");
      return FALSE;
    }
  g_autofree int64_t *offs = element_offsets (ctx, in, ind, error);
  if (!offs)
    return FALSE;
  strings_clear (out);
  gather_offsets (out->data, in->data, offs, ind->nelems, elem_size (in->dtype));
  strings_dup (out);
  return TRUE;
}

/* Flat data offsets of the slices that GatherND/ScatterND address: one per index tuple; the slice
 * length goes to *slice. */
static int64_t *
nd_offsets (OwbKernelContext *ctx, const OwbTensor *data, const OwbTensor *ind, int64_t b, int64_t *n_tuples,
            int64_t *slice, GError **error)
{
  int r = data->rank, q = ind->rank;
  if (q < 1 || r < 1 || b < 0 || b >= MIN (q, r))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "data rank %d, indices rank %d and batch_dims %" G_GINT64_FORMAT
                            " do not fit", r, q, b);
      return NULL;
    }
  int64_t k = ind->dims[q - 1];
  if (k < 1 || k > r - b)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "indices' last dimension %" G_GINT64_FORMAT
                            " must be in [1, %" G_GINT64_FORMAT "]", k, r - b);
      return NULL;
    }
  for (int d = 0; d < b; d++)
    if (ind->dims[d] != data->dims[d])
      {
        owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "batch dimension %d differs between data and indices", d);
        return NULL;
      }
  int64_t ds[OWB_MAX_RANK];
  row_strides (r, data->dims, ds);
  int64_t batch_stride = b > 0 ? ds[b - 1] : 0;
  int64_t per_batch = _owb_cpu_product (ind->dims, (int) b, q - 1);
  int64_t n = _owb_cpu_product (ind->dims, 0, q - 1);
  *slice = _owb_cpu_product (data->dims, (int) (b + k), r);
  *n_tuples = n;
  g_autofree int64_t *idx = read_ints (ind);
  int64_t *offs = g_new (int64_t, MAX (n, 1));
  for (int64_t t = 0; t < n; t++)
    {
      int64_t off = per_batch > 0 ? (t / per_batch) * batch_stride : 0;
      for (int64_t j = 0; j < k; j++)
        {
          int64_t v = idx[t * k + j];
          if (!wrap_index (ctx, &v, data->dims[b + j], (int) (b + j), error))
            {
              g_free (offs);
              return NULL;
            }
          off += v * ds[b + j];
        }
      offs[t] = off;
    }
  return offs;
}

static gboolean
gather_nd_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *in = ctx->inputs[0], *ind = ctx->inputs[1];
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out || !check_size (ctx, in, error))
    return FALSE;
  int64_t n, slice, b = ctx->opset >= 12 ? owb_node_get_int (ctx->node, "batch_dims", 0) : 0;
  g_autofree int64_t *offs = nd_offsets (ctx, in, ind, b, &n, &slice, error);
  if (!offs)
    return FALSE;
  if (out->nelems != n * slice)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output shape does not match data and indices");
      return FALSE;
    }
  gsize es = elem_size (in->dtype);
  strings_clear (out);
  if (slice == 1)
    gather_offsets (out->data, in->data, offs, n, es);
  else
    for (int64_t t = 0; t < n; t++)
      memcpy ((char *) out->data + t * slice * es, (const char *) in->data + offs[t] * es, slice * es);
  strings_dup (out);
  return TRUE;
}

/* ---- Scatter, ScatterElements, ScatterND ---- */

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

#define DEFINE_SCATTER(T, N)                                                                                    \
  static void scatter_##N (T *out, const T *upd, const int64_t *offs, int64_t n, int64_t slice, int red)     \
  {                                                                                                            \
    for (int64_t i = 0; i < n; i++)                                                                            \
      {                                                                                                        \
        T *o = out + offs[i];                                                                                  \
        const T *u = upd + i * slice;                                                                          \
        switch (red)                                                                                           \
          {                                                                                                    \
          case RED_ADD: for (int64_t s = 0; s < slice; s++) o[s] = (T) (o[s] + u[s]); break;                   \
          case RED_MUL: for (int64_t s = 0; s < slice; s++) o[s] = (T) (o[s] * u[s]); break;                   \
          case RED_MAX: for (int64_t s = 0; s < slice; s++) o[s] = u[s] > o[s] ? u[s] : o[s]; break;           \
          default: for (int64_t s = 0; s < slice; s++) o[s] = u[s] < o[s] ? u[s] : o[s]; break;                \
          }                                                                                                    \
      }                                                                                                        \
  }
OWB_CPU_FOR_ALL (DEFINE_SCATTER)

static gboolean
scatter_apply (OwbKernelContext *ctx, const OwbTensor *data, const OwbTensor *upd, OwbTensor *out,
               const int64_t *offs, int64_t n, int64_t slice, GError **error)
{
  const char *name = owb_node_get_string (ctx->node, "reduction", "none");
  int red = !strcmp (name, "add") ? RED_ADD : !strcmp (name, "mul") ? RED_MUL : !strcmp (name, "max") ? RED_MAX
            : !strcmp (name, "min") ? RED_MIN : !strcmp (name, "none") ? RED_NONE : -1;
  if (red < 0)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "reduction '%s' is unknown", name);
      return FALSE;
    }
  if (upd->dtype != data->dtype || upd->nelems != n * slice || out->nelems != data->nelems)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "updates do not match the indices and data");
      return FALSE;
    }
  gsize es = elem_size (data->dtype);
  if (red != RED_NONE && data->dtype == OWB_TYPE_STRING)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_UNSUPPORTED_OP, "reduction '%s' on strings", name);
      return FALSE;
    }
  /* On bools, add is or and mul is and. */
  if (data->dtype == OWB_TYPE_BOOL && (red == RED_ADD || red == RED_MUL))
    red = red == RED_ADD ? RED_MAX : RED_MIN;
  strings_clear (out);
  if (out->data != data->data && data->nbytes)
    memcpy (out->data, data->data, data->nbytes);
  if (red == RED_NONE)
    {
      for (int64_t i = 0; i < n; i++)
        memcpy ((char *) out->data + offs[i] * es, (const char *) upd->data + i * slice * es, slice * es);
      strings_dup (out);
      return TRUE;
    }
  switch (data->dtype)
    {
#define CASE(T, N) case OWB_TYPE_##N: scatter_##N (out->data, upd->data, offs, n, slice, red); break;
      OWB_CPU_FOR_ALL (CASE)
#undef CASE
    default:
      owb_kernel_set_error (ctx, error, OWB_ERROR_UNSUPPORTED_OP, "reduction '%s' on %s", name,
                            owb_data_type_name (data->dtype));
      return FALSE;
    }
  return TRUE;
}

static gboolean
scatter_elements_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *data = ctx->inputs[0], *ind = ctx->inputs[1], *upd = ctx->inputs[2];
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out || !check_size (ctx, data, error))
    return FALSE;
  if (!owb_tensor_same_shape (ind, upd))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "indices and updates differ in shape");
      return FALSE;
    }
  g_autofree int64_t *offs = element_offsets (ctx, data, ind, error);
  return offs && scatter_apply (ctx, data, upd, out, offs, ind->nelems, 1, error);
}

static gboolean
scatter_nd_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *data = ctx->inputs[0], *ind = ctx->inputs[1], *upd = ctx->inputs[2];
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out || !check_size (ctx, data, error))
    return FALSE;
  int64_t n, slice;
  g_autofree int64_t *offs = nd_offsets (ctx, data, ind, 0, &n, &slice, error);
  return offs && scatter_apply (ctx, data, upd, out, offs, n, slice, error);
}

/* ---- Shape, Size, ConstantOfShape, Constant, Range ---- */

static gboolean
shape_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *in = ctx->inputs[0];
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out)
    return FALSE;
  int64_t r = in->rank, start = ctx->opset >= 15 ? owb_node_get_int (ctx->node, "start", 0) : 0;
  if (start < 0)
    start += r;
  start = CLAMP (start, 0, r);
  if (out->dtype != OWB_TYPE_INT64 || out->nelems > r - start)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output does not fit the input's rank");
      return FALSE;
    }
  for (int64_t i = 0; i < out->nelems; i++)
    ((int64_t *) out->data)[i] = in->dims[start + i];
  return TRUE;
}

static gboolean
size_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out)
    return FALSE;
  if (out->dtype != OWB_TYPE_INT64 || out->nelems != 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output must be an int64 scalar");
      return FALSE;
    }
  *(int64_t *) out->data = ctx->inputs[0]->nelems;
  return TRUE;
}

static gboolean
fill_output (OwbKernelContext *ctx, OwbTensor *out, const OwbTensor *value, GError **error)
{
  if (!check_size (ctx, out, error))
    return FALSE;
  if (value->dtype != out->dtype || value->nelems < 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "the fill value does not match the output type");
      return FALSE;
    }
  if (out->nelems == 0)
    return TRUE;
  strings_clear (out);
  fill_elems (out->data, value->data, out->nelems, elem_size (out->dtype));
  strings_dup (out);
  return TRUE;
}

static gboolean
constant_of_shape_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out)
    return FALSE;
  const OwbAttribute *attr = owb_node_get_attribute (ctx->node, "value");
  if (attr && attr->type == OWB_ATTR_TENSOR && attr->t)
    return fill_output (ctx, out, attr->t, error);
  if (out->nelems && out->data)
    memset (out->data, 0, out->nbytes);
  return TRUE;
}

static gboolean
constant_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out)
    return FALSE;
  const OwbAttribute *a = NULL;
  for (int i = 0; i < ctx->node->n_attributes && !a; i++)
    if (g_str_has_prefix (ctx->node->attributes[i].name, "value"))
      a = &ctx->node->attributes[i];
  int64_t n = !a ? -1 : a->type == OWB_ATTR_TENSOR && a->t ? a->t->nelems
            : a->type == OWB_ATTR_FLOATS || a->type == OWB_ATTR_INTS || a->type == OWB_ATTR_STRINGS ? a->n : 1;
  if (!a || n != out->nelems)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "value attribute does not match the output");
      return FALSE;
    }
  strings_clear (out);
  switch (a->type)
    {
    case OWB_ATTR_TENSOR:
      if (a->t->dtype != out->dtype)
        break;
      /* The node's value is a view, not a copy: in a Loop body or If branch a Constant runs every
       * call (28 of speech_gru_if's 56 subgraph nodes), and the attribute outlives every run. */
      if (a->t->dtype != OWB_TYPE_STRING && !a->t->device && !out->device && a->t->nelems)
        return share_data (ctx, a->t, error);
      if (a->t->nbytes)
        memcpy (out->data, a->t->data, a->t->nbytes);
      strings_dup (out);
      return TRUE;
    case OWB_ATTR_FLOAT:
      if (out->dtype != OWB_TYPE_FLOAT)
        break;
      *(float *) out->data = a->f;
      return TRUE;
    case OWB_ATTR_FLOATS:
      if (out->dtype != OWB_TYPE_FLOAT)
        break;
      if (n)
        memcpy (out->data, a->floats, n * sizeof (float));
      return TRUE;
    case OWB_ATTR_INT:
      if (out->dtype != OWB_TYPE_INT64)
        break;
      *(int64_t *) out->data = a->i;
      return TRUE;
    case OWB_ATTR_INTS:
      if (out->dtype != OWB_TYPE_INT64)
        break;
      if (n)
        memcpy (out->data, a->ints, n * sizeof (int64_t));
      return TRUE;
    case OWB_ATTR_STRING:
      if (out->dtype != OWB_TYPE_STRING)
        break;
      ((char **) out->data)[0] = g_strndup (a->s ? a->s : "", a->s_len);
      return TRUE;
    case OWB_ATTR_STRINGS:
      if (out->dtype != OWB_TYPE_STRING)
        break;
      for (int64_t i = 0; i < n; i++)
        ((char **) out->data)[i] = g_strdup (a->strings[i]);
      return TRUE;
    default:
      break;
    }
  owb_kernel_set_error (ctx, error, OWB_ERROR_UNSUPPORTED_OP, "attribute '%s' of this type is not supported", a->name);
  return FALSE;
}

static gboolean
range_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out)
    return FALSE;
  const OwbTensor *start = ctx->inputs[0], *delta = ctx->inputs[2];
  if (start->nelems != 1 || delta->nelems != 1 || start->dtype != out->dtype || delta->dtype != out->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "start and delta must be scalars of the output type");
      return FALSE;
    }
  int64_t n = out->nelems;
  switch (out->dtype)
    {
#define CASE(T, N)                                                                                             \
  case OWB_TYPE_##N:                                                                                           \
    {                                                                                                          \
      T s = *(const T *) start->data, d = *(const T *) delta->data, *o = out->data;                            \
      for (int64_t i = 0; i < n; i++)                                                                          \
        o[i] = (T) (s + (T) i * d);                                                                            \
      return TRUE;                                                                                             \
    }
      OWB_CPU_FOR_NUMERIC (CASE)
#undef CASE
    default:
      owb_kernel_set_error (ctx, error, OWB_ERROR_UNSUPPORTED_OP, "type %s is not supported",
                            owb_data_type_name (out->dtype));
      return FALSE;
    }
}

/* ---- Tile ---- */

typedef struct {
  int rank;
  const int64_t *in_dims, *out_dims;
  int64_t in_strides[OWB_MAX_RANK];
  const char *src;
  char *dst;
  gsize es;
} TileJob;

/* Units are output rows; a row repeats one input row. */
static void
tile_rows (int64_t begin, int64_t end, gpointer data)
{
  const TileJob *t = data;
  int r = t->rank;
  gsize es = t->es;
  int64_t len = t->out_dims[r - 1], in_len = t->in_dims[r - 1];
  int64_t ic[OWB_MAX_RANK], oc[OWB_MAX_RANK], off = 0, rem = begin;
  for (int d = r - 2; d >= 0; d--)
    {
      oc[d] = rem % t->out_dims[d];
      rem /= t->out_dims[d];
      ic[d] = oc[d] % t->in_dims[d];
      off += ic[d] * t->in_strides[d];
    }
  char *dst = t->dst + begin * len * es;
  for (int64_t row = begin; row < end; row++)
    {
      const char *src = t->src + off * es;
      for (int64_t j = 0; j < len; j += in_len)
        memcpy (dst + j * es, src, in_len * es);
      dst += len * es;
      for (int d = r - 2; d >= 0; d--)
        {
          off += t->in_strides[d];
          if (++ic[d] == t->in_dims[d])
            {
              off -= t->in_strides[d] * t->in_dims[d];
              ic[d] = 0;
            }
          if (++oc[d] < t->out_dims[d])
            break;
          oc[d] = 0;
          off -= ic[d] * t->in_strides[d];
          ic[d] = 0;
        }
    }
}

static gboolean
tile_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *in = ctx->inputs[0];
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out || !check_size (ctx, in, error))
    return FALSE;
  if (out->rank != in->rank || out->dtype != in->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output does not match the input's rank");
      return FALSE;
    }
  for (int d = 0; d < in->rank; d++)
    if (in->dims[d] == 0 ? out->dims[d] != 0 : out->dims[d] % in->dims[d] != 0)
      {
        owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output axis %d is not a multiple of the input's", d);
        return FALSE;
      }
  if (out->nelems == 0)
    return TRUE;
  if (in->rank == 0)
    return copy_data (ctx, in, out, error);
  TileJob t = { in->rank, in->dims, out->dims, { 0 }, in->data, out->data, elem_size (in->dtype) };
  row_strides (in->rank, in->dims, t.in_strides);
  strings_clear (out);
  run_parallel (ctx, out->nelems / out->dims[in->rank - 1], out->dims[in->rank - 1], tile_rows, &t);
  strings_dup (out);
  return TRUE;
}

/* ---- Pad ---- */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

typedef struct {
  int rank, mode;
  const int64_t *in_dims, *out_dims;
  int64_t begin[OWB_MAX_RANK], in_strides[OWB_MAX_RANK];
  const char *src, *fill;
  char *dst;
  gsize es;
} PadJob;

/* The input index that output index i - pad maps to on an axis of size n (n > 0). */
static int64_t
pad_map (int64_t i, int64_t n, int mode)
{
  if (mode == PAD_EDGE)
    return CLAMP (i, 0, n - 1);
  if (mode == PAD_WRAP)
    {
      i %= n;
      return i < 0 ? i + n : i;
    }
  if (n == 1)
    return 0;
  int64_t period = 2 * (n - 1);
  i %= period;
  if (i < 0)
    i += period;
  return i < n ? i : period - i;
}

static void
pad_rows (int64_t begin, int64_t end, gpointer data)
{
  const PadJob *p = data;
  int r = p->rank;
  gsize es = p->es;
  int64_t len = p->out_dims[r - 1], n = p->in_dims[r - 1], b = p->begin[r - 1];
  int64_t oc[OWB_MAX_RANK], rem = begin;
  for (int d = r - 2; d >= 0; d--)
    {
      oc[d] = rem % p->out_dims[d];
      rem /= p->out_dims[d];
    }
  int64_t left = CLAMP (b, 0, len), mid = CLAMP (b + n, left, len);
  for (int64_t row = begin; row < end; row++)
    {
      char *dst = p->dst + row * len * es;
      int64_t off = 0;
      gboolean outside = FALSE;
      for (int d = 0; d < r - 1; d++)
        {
          int64_t i = oc[d] - p->begin[d];
          if (i < 0 || i >= p->in_dims[d])
            {
              if (p->mode == PAD_CONSTANT)
                {
                  outside = TRUE;
                  break;
                }
              i = pad_map (i, p->in_dims[d], p->mode);
            }
          off += i * p->in_strides[d];
        }
      if (outside)
        fill_elems (dst, p->fill, len, es);
      else
        {
          const char *src = p->src + off * es;
          if (p->mode == PAD_CONSTANT)
            {
              fill_elems (dst, p->fill, left, es);
              fill_elems (dst + mid * es, p->fill, len - mid, es);
            }
          else
            {
              for (int64_t j = 0; j < left; j++)
                copy_elem (dst + j * es, src + pad_map (j - b, n, p->mode) * es, es);
              for (int64_t j = mid; j < len; j++)
                copy_elem (dst + j * es, src + pad_map (j - b, n, p->mode) * es, es);
            }
          if (mid > left)
            memcpy (dst + left * es, src + (left - b) * es, (mid - left) * es);
        }
      for (int d = r - 2; d >= 0; d--)
        {
          if (++oc[d] < p->out_dims[d])
            break;
          oc[d] = 0;
        }
    }
}

static gboolean
pad_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *in = ctx->inputs[0];
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out || !check_size (ctx, in, error))
    return FALSE;
  int r = in->rank;
  const char *mode_name = owb_node_get_string (ctx->node, "mode", "constant");
  int mode = !strcmp (mode_name, "constant") ? PAD_CONSTANT : !strcmp (mode_name, "reflect") ? PAD_REFLECT
             : !strcmp (mode_name, "edge") ? PAD_EDGE : !strcmp (mode_name, "wrap") ? PAD_WRAP : -1;
  if (mode < 0)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "mode '%s' is unknown", mode_name);
      return FALSE;
    }
  g_autofree int64_t *pads = NULL, *axes = NULL;
  int64_t np, na = r;
  if (ctx->opset < 11)
    {
      int n;
      const int64_t *a = owb_node_get_ints (ctx->node, ctx->opset < 2 ? "paddings" : "pads", &n);
      pads = g_memdup2 (a, sizeof (int64_t) * MAX (n, 1)), np = a ? n : 0;
    }
  else
    {
      pads = read_ints (ctx->inputs[1]), np = ctx->inputs[1]->nelems;
      if (ctx->n_inputs > 3 && ctx->inputs[3])
        axes = read_ints (ctx->inputs[3]), na = ctx->inputs[3]->nelems;
    }
  if (np != 2 * na || na > r)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "pads has %" G_GINT64_FORMAT " values for %"
                            G_GINT64_FORMAT " axes", np, na);
      return FALSE;
    }
  PadJob p = { .rank = r, .mode = mode, .in_dims = in->dims, .out_dims = out->dims, .src = in->data,
               .dst = out->data, .es = elem_size (in->dtype) };
  int64_t end[OWB_MAX_RANK] = { 0 };
  for (int i = 0; i < na; i++)
    {
      int a;
      if (!_owb_cpu_normalize_axis (ctx, axes ? axes[i] : i, r, &a, error))
        return FALSE;
      p.begin[a] = pads[i];
      end[a] = pads[i + na];
    }
  for (int d = 0; d < r; d++)
    if (out->dims[d] != in->dims[d] + p.begin[d] + end[d]
        || (mode != PAD_CONSTANT && in->dims[d] == 0 && out->dims[d] > 0) || out->rank != r)
      {
        owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "pads do not fit axis %d", d);
        return FALSE;
      }
  /* The fill value as raw bytes of the element type. */
  char zero[16] = { 0 };
  g_autoptr (OwbTensor) converted = NULL;
  p.fill = zero;
  if (ctx->opset >= 11 && ctx->n_inputs > 2 && ctx->inputs[2] && ctx->inputs[2]->nelems > 0)
    {
      if (ctx->inputs[2]->dtype != in->dtype)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "constant_value type differs from data");
          return FALSE;
        }
      p.fill = ctx->inputs[2]->data;
    }
  else if (ctx->opset < 11 && owb_node_get_float (ctx->node, "value", 0.0f) != 0.0f && in->dtype != OWB_TYPE_STRING)
    {
      converted = owb_tensor_new (in->dtype, 0, NULL, error);
      if (!converted)
        return FALSE;
      owb_tensor_set_double (converted, 0, owb_node_get_float (ctx->node, "value", 0.0f));
      p.fill = converted->data;
    }
  if (out->nelems == 0)
    return TRUE;
  if (r == 0)
    return copy_data (ctx, in, out, error);
  row_strides (r, in->dims, p.in_strides);
  strings_clear (out);
  run_parallel (ctx, out->nelems / out->dims[r - 1], out->dims[r - 1], pad_rows, &p);
  strings_dup (out);
  return TRUE;
}

/* ---- Trilu, OneHot, CumSum, NonZero ---- */

static gboolean
trilu_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *in = ctx->inputs[0];
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out || !check_size (ctx, in, error))
    return FALSE;
  if (in->rank < 2 || !owb_tensor_same_shape (in, out))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have rank >= 2");
      return FALSE;
    }
  int64_t k = 0;
  if (ctx->n_inputs > 1 && ctx->inputs[1])
    {
      if (ctx->inputs[1]->nelems != 1)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "k must be a scalar");
          return FALSE;
        }
      k = owb_tensor_get_int64 (ctx->inputs[1], 0);
    }
  gboolean upper = owb_node_get_int (ctx->node, "upper", 1) != 0;
  int64_t rows = in->dims[in->rank - 2], cols = in->dims[in->rank - 1];
  k = CLAMP (k, -rows - cols - 1, rows + cols + 1);
  if (out->nelems == 0)
    return TRUE;
  gsize es = elem_size (in->dtype);
  int64_t batches = in->nelems / (rows * cols);
  strings_clear (out);
  for (int64_t bi = 0; bi < batches; bi++)
    for (int64_t i = 0; i < rows; i++)
      {
        int64_t row = (bi * rows + i) * cols;
        char *dst = (char *) out->data + row * es;
        const char *src = (const char *) in->data + row * es;
        /* Upper keeps columns j >= i + k; lower keeps j <= i + k. */
        int64_t split = CLAMP (upper ? i + k : i + k + 1, 0, cols);
        int64_t keep0 = upper ? split : 0, keep1 = upper ? cols : split;
        memset (dst, 0, cols * es);
        if (keep1 > keep0)
          memcpy (dst + keep0 * es, src + keep0 * es, (keep1 - keep0) * es);
      }
  strings_dup (out);
  return TRUE;
}

static gboolean
one_hot_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *ind = ctx->inputs[0], *values = ctx->inputs[2];
  OwbTensor *out = get_output (ctx, 0, error);
  if (!out || !check_size (ctx, values, error))
    return FALSE;
  int a;
  if (!_owb_cpu_normalize_axis (ctx, owb_node_get_int (ctx->node, "axis", -1), out->rank, &a, error))
    return FALSE;
  if (values->nelems != 2 || values->dtype != out->dtype || out->rank != ind->rank + 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "values must hold [off, on] and the output one more axis");
      return FALSE;
    }
  gsize es = elem_size (out->dtype);
  int64_t depth = out->dims[a], outer = _owb_cpu_product (ind->dims, 0, a), inner = _owb_cpu_product (ind->dims, a, ind->rank);
  if (out->nelems == 0)
    return TRUE;
  g_autofree int64_t *idx = read_ints (ind);
  const char *off_value = values->data, *on_value = (const char *) values->data + es;
  strings_clear (out);
  fill_elems (out->data, off_value, out->nelems, es);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++)
      {
        int64_t v = idx[o * inner + i];
        if (v < 0)
          v += depth;
        if (v >= 0 && v < depth)
          copy_elem ((char *) out->data + ((o * depth + v) * inner + i) * es, on_value, es);
      }
  strings_dup (out);
  return TRUE;
}

#define DEFINE_NONZERO(T, N)                                                                                   \
  static void nonzero_mask_##N (const void *data, int64_t n, uint8_t *mask)                                   \
  {                                                                                                            \
    const T *x = data;                                                                                         \
    for (int64_t i = 0; i < n; i++)                                                                            \
      mask[i] = x[i] != 0;                                                                                     \
  }
OWB_CPU_FOR_ALL (DEFINE_NONZERO)

static gboolean
non_zero_compute (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  int64_t n = x->nelems;
  g_autofree uint8_t *mask = g_new (uint8_t, MAX (n, 1));
  switch (x->dtype)
    {
#define CASE(T, N) case OWB_TYPE_##N: nonzero_mask_##N (x->data, n, mask); break;
      OWB_CPU_FOR_ALL (CASE)
#undef CASE
    case OWB_TYPE_FLOAT16:
    case OWB_TYPE_BFLOAT16:
      /* Zero whatever the sign bit. */
      for (int64_t i = 0; i < n; i++)
        mask[i] = (((const uint16_t *) x->data)[i] & 0x7fff) != 0;
      break;
    default:
      owb_kernel_set_error (ctx, error, OWB_ERROR_UNSUPPORTED_OP, "type %s is not supported",
                            owb_data_type_name (x->dtype));
      return FALSE;
    }
  int64_t count = 0;
  for (int64_t i = 0; i < n; i++)
    count += mask[i];
  int r = x->rank;
  int64_t dims[2] = { r, count };
  OwbTensor *given = ctx->outputs[0];
  if (given && (given->rank != 2 || given->dims[0] != r || given->dims[1] != count))
    g_clear_pointer (&ctx->outputs[0], owb_tensor_unref);
  OwbTensor *out = ctx->outputs[0] ? ctx->outputs[0]
                                   : owb_kernel_context_new_output (ctx, 0, OWB_TYPE_INT64, 2, dims, error);
  if (!out)
    return FALSE;
  int64_t *o = out->data, c[OWB_MAX_RANK] = { 0 }, k = 0;
  for (int64_t i = 0; i < n; i++)
    {
      if (mask[i])
        {
          for (int d = 0; d < r; d++)
            o[d * count + k] = c[d];
          k++;
        }
      for (int d = r - 1; d >= 0; d--)
        {
          if (++c[d] < x->dims[d])
            break;
          c[d] = 0;
        }
    }
  return TRUE;
}

/* Every dtype with a byte size: what the data-movement kernels take. */
#define ANY 0

const OwbKernelDef _owb_cpu_kernels_tensor[] = {
  { "Reshape", "", 1, 0, ANY, 0, NULL, NULL, reshape_compute },
  { "Flatten", "", 1, 0, ANY, 0, NULL, NULL, reshape_compute },
  { "Squeeze", "", 1, 0, ANY, 0, NULL, NULL, reshape_compute },
  { "Unsqueeze", "", 1, 0, ANY, 0, NULL, NULL, reshape_compute },
  { "Identity", "", 1, 0, ANY, 0, NULL, NULL, identity_compute },
  { "Transpose", "", 1, 0, ANY, 0, NULL, NULL, transpose_compute },
  { "Expand", "", 8, 0, ANY, 0, NULL, NULL, expand_compute },
  { "DepthToSpace", "", 1, 0, ANY, 0, NULL, NULL, depth_space_compute },
  { "SpaceToDepth", "", 1, 0, ANY, 0, NULL, NULL, depth_space_compute },
  { "Slice", "", 1, 0, ANY, 0, NULL, NULL, slice_compute },
  { "Concat", "", 1, 0, ANY, 0, NULL, NULL, concat_compute },
  { "Split", "", 1, 0, ANY, 0, NULL, NULL, split_compute },
  { "Gather", "", 1, 0, ANY, 0, NULL, NULL, gather_compute },
  { "GatherElements", "", 11, 0, ANY, 0, NULL, NULL, gather_elements_compute },
  { "GatherND", "", 11, 0, ANY, 0, NULL, NULL, gather_nd_compute },
  /* Reductions compute in the element type, so float16 goes through float32. */
  { "Scatter", "", 9, 0, OWB_CPU_TYPES_ALL | OWB_TYPE_BIT (OWB_TYPE_STRING), 0, NULL, NULL, scatter_elements_compute },
  { "ScatterElements", "", 11, 0, OWB_CPU_TYPES_ALL | OWB_TYPE_BIT (OWB_TYPE_STRING), 0, NULL, NULL,
    scatter_elements_compute },
  { "ScatterND", "", 11, 0, OWB_CPU_TYPES_ALL | OWB_TYPE_BIT (OWB_TYPE_STRING), 0, NULL, NULL, scatter_nd_compute },
  { "Shape", "", 1, 0, ANY, 0, NULL, NULL, shape_compute },
  { "Size", "", 1, 0, ANY, 0, NULL, NULL, size_compute },
  { "ConstantOfShape", "", 9, 0, ANY, 0, NULL, NULL, constant_of_shape_compute },
  { "Constant", "", 1, 0, ANY, -1, NULL, NULL, constant_compute },
  { "Range", "", 11, 0, OWB_CPU_TYPES_NUMERIC, 0, NULL, NULL, range_compute },
  { "Tile", "", 1, 0, ANY, 0, NULL, NULL, tile_compute },
  { "Pad", "", 1, 0, ANY, 0, NULL, NULL, pad_compute },
  { "Trilu", "", 14, 0, ANY, 0, NULL, NULL, trilu_compute },
  { "OneHot", "", 9, 0, ANY, 2, NULL, NULL, one_hot_compute },
  { "NonZero", "", 9, 0, ANY, 0, NULL, NULL, non_zero_compute },
  { NULL }
};
