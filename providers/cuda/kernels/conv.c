/* conv.c: Conv, the engine's FusedConv (bias, residual Z and activation), ConvTranspose (cuDNN's
 * backward data), MaxPool and AveragePool on cuDNN. The convolution algorithm is searched once per input shape (cudnnFind...) and kept
 * in the node's state; float32 runs with FMA math only (no TF32), so results match the CPU's to
 * float32 rounding, and float16 on tensor cores. Spatial ranks 1 to 3; 1-D runs as 2-D with a
 * height of one. cuDNN takes symmetric padding only: other pads are declined. */
#include "../cuda-private.h"

#include <string.h>

#define MAX_SPATIAL 3

typedef struct {
  int64_t dims[OWB_MAX_RANK]; /* input shape the entry is for */
  int rank;
  int algo; /* cudnnConvolutionFwdAlgo_t, or cudnnConvolutionBwdDataAlgo_t for ConvTranspose */
  cudnnMathType_t math;
  gsize workspace;
} AlgoEntry;

typedef struct {
  GMutex lock;
  GArray *algos; /* AlgoEntry */
} ConvState;

static void
conv_state_free (gpointer data)
{
  ConvState *s = data;
  g_mutex_clear (&s->lock);
  g_array_unref (s->algos);
  g_free (s);
}

static gboolean
conv_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state, GError **error)
{
  ConvState *s = g_new0 (ConvState, 1);
  g_mutex_init (&s->lock);
  s->algos = g_array_new (FALSE, FALSE, sizeof (AlgoEntry));
  *state = s;
  return TRUE;
}

/* Symmetric pads per spatial axis from the node's attributes; FALSE with *why when cuDNN cannot
 * express them. `n_sp` spatial axes. */
static gboolean
read_geometry (const OwbNode *node, int n_sp, const int64_t *in_sp, const int64_t *k_sp, int *pads, int *strides,
               int *dilations, char **why)
{
  int n = 0;
  const int64_t *v;
  for (int i = 0; i < n_sp; i++)
    {
      pads[i] = 0;
      strides[i] = 1;
      dilations[i] = 1;
    }
  if ((v = owb_node_get_ints (node, "strides", &n)) && n == n_sp)
    for (int i = 0; i < n_sp; i++)
      strides[i] = (int) v[i];
  if ((v = owb_node_get_ints (node, "dilations", &n)) && n == n_sp)
    for (int i = 0; i < n_sp; i++)
      dilations[i] = (int) v[i];
  const char *auto_pad = owb_node_get_string (node, "auto_pad", "NOTSET");
  if (strcmp (auto_pad, "SAME_UPPER") == 0 || strcmp (auto_pad, "SAME_LOWER") == 0)
    {
      if (!in_sp)
        {
          *why = g_strdup_printf ("the CUDA %s takes auto_pad %s only with known input sizes", node->op_type, auto_pad);
          return FALSE;
        }
      for (int i = 0; i < n_sp; i++)
        {
          int64_t out = (in_sp[i] + strides[i] - 1) / strides[i];
          int64_t total = MAX (0, (out - 1) * strides[i] + (k_sp[i] - 1) * dilations[i] + 1 - in_sp[i]);
          if (total % 2)
            {
              *why = g_strdup_printf ("the CUDA %s needs symmetric padding (auto_pad %s pads axis %d unevenly)",
                                      node->op_type, auto_pad, i);
              return FALSE;
            }
          pads[i] = (int) (total / 2);
        }
      return TRUE;
    }
  if ((v = owb_node_get_ints (node, "pads", &n)) && n == 2 * n_sp)
    for (int i = 0; i < n_sp; i++)
      {
        if (v[i] != v[i + n_sp])
          {
            *why = g_strdup_printf ("the CUDA %s needs symmetric pads (axis %d has %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT ")",
                                    node->op_type, i, v[i], v[i + n_sp]);
            return FALSE;
          }
        pads[i] = (int) v[i];
      }
  return TRUE;
}

/* Dims as cuDNN's int arrays, a 1-D problem lifted to 2-D (height one). */
static int
lift (const int64_t *dims, int rank, int *out)
{
  if (rank == 3)
    {
      out[0] = (int) dims[0];
      out[1] = (int) dims[1];
      out[2] = 1;
      out[3] = (int) dims[2];
      return 4;
    }
  for (int i = 0; i < rank; i++)
    out[i] = (int) dims[i];
  return rank;
}

static void
packed_strides (const int *dims, int rank, int *strides)
{
  int s = 1;
  for (int i = rank - 1; i >= 0; i--)
    {
      strides[i] = s;
      s *= dims[i];
    }
}

static gboolean
compute_conv (OwbKernelContext *ctx, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  ConvState *state = ctx->state;
  const OwbTensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  const OwbTensor *b = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  const OwbTensor *z = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  OwbCudaFloat t;
  if (!cx || !_owb_cuda_float_type (ctx, x->dtype, &t, error))
    return FALSE;
  int n_sp = x->rank - 2;
  if (n_sp < 1 || n_sp > MAX_SPATIAL || w->rank != x->rank || w->dtype != x->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "X and W must be [N, C, 1 to 3 spatial axes] of one type");
      return FALSE;
    }
  /* ConvTranspose is the gradient of a convolution with respect to its input: cuDNN's backward
   * data, with X as the gradient and W in the convolution's own [C_in, C_out / group, k...] */
  gboolean transpose = strcmp (ctx->node->op_type, "ConvTranspose") == 0;
  int64_t group = owb_node_get_int (ctx->node, "group", 1);
  if (transpose ? (group < 1 || x->dims[1] != w->dims[0] || w->dims[0] % group != 0)
                : (group < 1 || x->dims[1] != w->dims[1] * group || w->dims[0] % group != 0))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "W's input channels (%" G_GINT64_FORMAT ") times group %" G_GINT64_FORMAT " are not X's %" G_GINT64_FORMAT,
                            w->dims[1], group, x->dims[1]);
      return FALSE;
    }
  int pads[MAX_SPATIAL], strides[MAX_SPATIAL], dil[MAX_SPATIAL];
  char *why = NULL;
  if (!read_geometry (ctx->node, n_sp, x->dims + 2, w->dims + 2, pads, strides, dil, &why))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%s", why);
      g_free (why);
      return FALSE;
    }
  int64_t dims[OWB_MAX_RANK] = { x->dims[0], transpose ? w->dims[1] * group : w->dims[0] };
  int n_op = 0;
  const int64_t *out_pad = transpose ? owb_node_get_ints (ctx->node, "output_padding", &n_op) : NULL;
  for (int i = 0; i < n_sp; i++)
    {
      int64_t ext = (w->dims[2 + i] - 1) * dil[i] + 1;
      if (transpose)
        dims[2 + i] = strides[i] * (x->dims[2 + i] - 1) + (out_pad && n_op == n_sp ? out_pad[i] : 0) + ext - 2 * pads[i];
      else
        dims[2 + i] = (x->dims[2 + i] + 2 * pads[i] - ext) / strides[i] + 1;
      if (dims[2 + i] < 1)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "spatial axis %d is smaller than the kernel", i);
          return FALSE;
        }
    }
  OwbTensor *y = _owb_cuda_output (ctx, 0, x->dtype, x->rank, dims, error);
  if (!y)
    return FALSE;
  if (y->nelems == 0)
    return TRUE;
  int xd[5], wd[5], yd[5], xs[5], ys[5];
  int nd = lift (x->dims, x->rank, xd);
  lift (w->dims, w->rank, wd);
  lift (y->dims, y->rank, yd);
  packed_strides (xd, nd, xs);
  packed_strides (yd, nd, ys);
  int cpad[MAX_SPATIAL], cstr[MAX_SPATIAL], cdil[MAX_SPATIAL], n_conv = nd - 2;
  for (int i = 0, j = 0; i < n_conv; i++)
    {
      gboolean lifted = n_sp == 1 && i == 0;
      cpad[i] = lifted ? 0 : pads[j];
      cstr[i] = lifted ? 1 : strides[j];
      cdil[i] = lifted ? 1 : dil[j];
      if (!lifted)
        j++;
    }
  cudnnDataType_t dt = t == OWB_CUDA_F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  cudnnTensorDescriptor_t xdesc = NULL, ydesc = NULL;
  cudnnFilterDescriptor_t wdesc = NULL;
  cudnnConvolutionDescriptor_t cdesc = NULL;
  gboolean ok = _owb_cuda_check_dnn (ctx, error, cudnnCreateTensorDescriptor (&xdesc), "Conv descriptor")
                && _owb_cuda_check_dnn (ctx, error, cudnnCreateTensorDescriptor (&ydesc), "Conv descriptor")
                && _owb_cuda_check_dnn (ctx, error, cudnnCreateFilterDescriptor (&wdesc), "Conv descriptor")
                && _owb_cuda_check_dnn (ctx, error, cudnnCreateConvolutionDescriptor (&cdesc), "Conv descriptor")
                && _owb_cuda_check_dnn (ctx, error, cudnnSetTensorNdDescriptor (xdesc, dt, nd, xd, xs), "X descriptor")
                && _owb_cuda_check_dnn (ctx, error, cudnnSetTensorNdDescriptor (ydesc, dt, nd, yd, ys), "Y descriptor")
                && _owb_cuda_check_dnn (ctx, error, cudnnSetFilterNdDescriptor (wdesc, dt, CUDNN_TENSOR_NCHW, nd, wd), "W descriptor")
                && _owb_cuda_check_dnn (ctx, error,
                                        cudnnSetConvolutionNdDescriptor (cdesc, n_conv, cpad, cstr, cdil, CUDNN_CROSS_CORRELATION,
                                                                         CUDNN_DATA_FLOAT),
                                        "Conv descriptor")
                && _owb_cuda_check_dnn (ctx, error, cudnnSetConvolutionGroupCount (cdesc, (int) group), "Conv groups")
                && _owb_cuda_check_dnn (ctx, error,
                                        cudnnSetConvolutionMathType (cdesc, t == OWB_CUDA_F16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
                                        "Conv math type");
  if (ok)
    {
      /* The algorithm for this input shape: searched once, then reused. */
      AlgoEntry entry = { .rank = x->rank };
      memcpy (entry.dims, x->dims, sizeof (int64_t) * x->rank);
      gboolean found = FALSE;
      g_mutex_lock (&state->lock);
      for (guint i = 0; i < state->algos->len && !found; i++)
        {
          AlgoEntry *e = &g_array_index (state->algos, AlgoEntry, i);
          if (e->rank == entry.rank && memcmp (e->dims, entry.dims, sizeof (int64_t) * entry.rank) == 0)
            {
              entry = *e;
              found = TRUE;
            }
        }
      g_mutex_unlock (&state->lock);
      if (!found)
        {
          /* The two searches return structs of different types with the same fields: read into one
           * kind, for one choice below. */
          struct {
            cudnnStatus_t status;
            gsize memory;
            cudnnMathType_t math;
            int algo;
          } found_algo[8];
          int n_perf = 0;
#define READ_PERF(perf)                                                                                            \
  for (int i = 0; ok && i < n_perf; i++)                                                                           \
    {                                                                                                              \
      found_algo[i].status = (perf)[i].status;                                                                     \
      found_algo[i].memory = (perf)[i].memory;                                                                     \
      found_algo[i].math = (perf)[i].mathType;                                                                     \
      found_algo[i].algo = (perf)[i].algo;                                                                         \
    }
          if (transpose)
            {
              cudnnConvolutionBwdDataAlgoPerf_t perf[8];
              ok = _owb_cuda_check_dnn (ctx, error,
                                        cudnnFindConvolutionBackwardDataAlgorithm (cx->cudnn, wdesc, xdesc, cdesc, ydesc, 8,
                                                                                   &n_perf, perf),
                                        "ConvTranspose algorithm search");
              READ_PERF (perf);
            }
          else
            {
              cudnnConvolutionFwdAlgoPerf_t perf[8];
              ok = _owb_cuda_check_dnn (ctx, error,
                                        cudnnFindConvolutionForwardAlgorithm (cx->cudnn, xdesc, wdesc, cdesc, ydesc, 8, &n_perf,
                                                                              perf),
                                        "Conv algorithm search");
              READ_PERF (perf);
            }
#undef READ_PERF
          /* The fastest that succeeded within 1 GiB of workspace; in float32 only FMA math (a TF32
           * tensor-core result would miss the CPU's by ~1e-3). */
          int pick = -1;
          for (int i = 0; ok && i < n_perf && pick < 0; i++)
            if (found_algo[i].status == CUDNN_STATUS_SUCCESS && found_algo[i].memory <= ((gsize) 1 << 30)
                && (t == OWB_CUDA_F16 || found_algo[i].math == CUDNN_FMA_MATH || found_algo[i].math == CUDNN_DEFAULT_MATH))
              pick = i;
          if (ok && pick < 0)
            {
              owb_kernel_set_error (ctx, error, OWB_ERROR_DEVICE, "cuDNN has no algorithm for this %s",
                                    transpose ? "transposed convolution" : "convolution");
              ok = FALSE;
            }
          if (ok)
            {
              entry.algo = found_algo[pick].algo;
              entry.math = found_algo[pick].math;
              entry.workspace = found_algo[pick].memory;
              g_mutex_lock (&state->lock);
              g_array_append_val (state->algos, entry);
              g_mutex_unlock (&state->lock);
            }
        }
      if (ok)
        {
          float one = 1.0f, zero = 0.0f;
          GError *local = NULL;
          g_mutex_lock (&cx->workspace_lock);
          void *ws = entry.workspace ? _owb_cuda_workspace (cx, entry.workspace, &local) : NULL;
          if (entry.workspace && !ws)
            {
              owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "%s", local->message);
              g_error_free (local);
              ok = FALSE;
            }
          else if (transpose)
            ok = _owb_cuda_check_dnn (ctx, error, cudnnSetConvolutionMathType (cdesc, entry.math), "Conv math type")
                 && _owb_cuda_check_dnn (ctx, error,
                                         cudnnConvolutionBackwardData (cx->cudnn, &one, wdesc, w->data, xdesc, x->data,
                                                                       cdesc, (cudnnConvolutionBwdDataAlgo_t) entry.algo,
                                                                       ws, entry.workspace, &zero, ydesc, y->data),
                                         "ConvTranspose");
          else
            ok = _owb_cuda_check_dnn (ctx, error, cudnnSetConvolutionMathType (cdesc, entry.math), "Conv math type")
                 && _owb_cuda_check_dnn (ctx, error,
                                      cudnnConvolutionForward (cx->cudnn, &one, xdesc, x->data, wdesc, w->data, cdesc,
                                                               (cudnnConvolutionFwdAlgo_t) entry.algo, ws,
                                                               entry.workspace, &zero, ydesc, y->data),
                                      "Conv");
          g_mutex_unlock (&cx->workspace_lock);
        }
    }
  if (cdesc)
    cudnnDestroyConvolutionDescriptor (cdesc);
  if (wdesc)
    cudnnDestroyFilterDescriptor (wdesc);
  if (ydesc)
    cudnnDestroyTensorDescriptor (ydesc);
  if (xdesc)
    cudnnDestroyTensorDescriptor (xdesc);
  if (!ok)
    return FALSE;
  OwbCudaUnaryOp act = OWB_CUDA_UNARY_IDENTITY;
  float p0 = 0, p1 = 0;
  if (strcmp (ctx->node->op_type, "FusedConv") == 0 && !_owb_cuda_activation (ctx->node, &act, &p0, &p1, &why))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%s", why);
      g_free (why);
      return FALSE;
    }
  if (b && (b->nelems != y->dims[1] || b->dtype != y->dtype))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "B must have %" G_GINT64_FORMAT " values of X's type", y->dims[1]);
      return FALSE;
    }
  if (z && (z->nelems != y->nelems || z->dtype != y->dtype))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "Z must have Y's shape and type");
      return FALSE;
    }
  int64_t inner = y->nelems / (y->dims[0] * y->dims[1]);
  return _owb_cuda_check (ctx, error,
                          _owb_cuda_bias_activation (t, act, p0, p1, y->data, b ? b->data : NULL, z ? z->data : NULL,
                                                     y->nelems, y->dims[1], inner, cx->stream),
                          "Conv epilogue");
}

/* MaxPool / AveragePool (floor mode, symmetric pads, no dilation) on cuDNN. */
static gboolean
compute_pool (OwbKernelContext *ctx, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const OwbTensor *x = ctx->inputs[0];
  OwbCudaFloat t;
  if (!cx || !_owb_cuda_float_type (ctx, x->dtype, &t, error))
    return FALSE;
  int n_sp = x->rank - 2;
  int n = 0;
  const int64_t *ks = owb_node_get_ints (ctx->node, "kernel_shape", &n);
  if (n_sp < 1 || n_sp > MAX_SPATIAL || !ks || n != n_sp)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "X must be [N, C, 1 to 3 spatial axes] with a kernel_shape");
      return FALSE;
    }
  int pads[MAX_SPATIAL], strides[MAX_SPATIAL], dil[MAX_SPATIAL];
  char *why = NULL;
  if (!read_geometry (ctx->node, n_sp, x->dims + 2, ks, pads, strides, dil, &why))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%s", why);
      g_free (why);
      return FALSE;
    }
  int64_t dims[OWB_MAX_RANK] = { x->dims[0], x->dims[1] };
  for (int i = 0; i < n_sp; i++)
    dims[2 + i] = (x->dims[2 + i] + 2 * pads[i] - ks[i]) / strides[i] + 1;
  OwbTensor *y = _owb_cuda_output (ctx, 0, x->dtype, x->rank, dims, error);
  if (!y)
    return FALSE;
  if (y->nelems == 0)
    return TRUE;
  int xd[5], yd[5], xs[5], ys[5], wnd[MAX_SPATIAL], pad[MAX_SPATIAL], str[MAX_SPATIAL];
  int nd = lift (x->dims, x->rank, xd);
  lift (y->dims, y->rank, yd);
  packed_strides (xd, nd, xs);
  packed_strides (yd, nd, ys);
  for (int i = 0, j = 0; i < nd - 2; i++)
    {
      gboolean lifted = n_sp == 1 && i == 0;
      wnd[i] = lifted ? 1 : (int) ks[j];
      pad[i] = lifted ? 0 : pads[j];
      str[i] = lifted ? 1 : strides[j];
      if (!lifted)
        j++;
    }
  cudnnPoolingMode_t mode = CUDNN_POOLING_MAX;
  if (strcmp (ctx->node->op_type, "AveragePool") == 0)
    mode = owb_node_get_int (ctx->node, "count_include_pad", 0) ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                                : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  cudnnDataType_t dt = t == OWB_CUDA_F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  cudnnTensorDescriptor_t xdesc = NULL, ydesc = NULL;
  cudnnPoolingDescriptor_t pdesc = NULL;
  float one = 1.0f, zero = 0.0f;
  gboolean ok = _owb_cuda_check_dnn (ctx, error, cudnnCreateTensorDescriptor (&xdesc), "pool descriptor")
                && _owb_cuda_check_dnn (ctx, error, cudnnCreateTensorDescriptor (&ydesc), "pool descriptor")
                && _owb_cuda_check_dnn (ctx, error, cudnnCreatePoolingDescriptor (&pdesc), "pool descriptor")
                && _owb_cuda_check_dnn (ctx, error, cudnnSetTensorNdDescriptor (xdesc, dt, nd, xd, xs), "X descriptor")
                && _owb_cuda_check_dnn (ctx, error, cudnnSetTensorNdDescriptor (ydesc, dt, nd, yd, ys), "Y descriptor")
                && _owb_cuda_check_dnn (ctx, error,
                                        cudnnSetPoolingNdDescriptor (pdesc, mode, CUDNN_PROPAGATE_NAN, nd - 2, wnd, pad, str),
                                        "pool descriptor")
                && _owb_cuda_check_dnn (ctx, error,
                                        cudnnPoolingForward (cx->cudnn, pdesc, &one, xdesc, x->data, &zero, ydesc, y->data),
                                        ctx->node->op_type);
  if (pdesc)
    cudnnDestroyPoolingDescriptor (pdesc);
  if (ydesc)
    cudnnDestroyTensorDescriptor (ydesc);
  if (xdesc)
    cudnnDestroyTensorDescriptor (xdesc);
  return ok;
}

char *
_owb_cuda_conv_check (const OwbNode *node, int opset, const OwbValueType *const *in, const OwbValueType *out)
{
  const char *op = node->op_type;
  gboolean is_transpose = strcmp (op, "ConvTranspose") == 0 && !(node->domain && node->domain[0]);
  gboolean is_conv = strcmp (op, "Conv") == 0 || is_transpose
                     || (strcmp (op, "FusedConv") == 0 && node->domain && strcmp (node->domain, OWB_DOMAIN) == 0);
  gboolean is_pool = (strcmp (op, "MaxPool") == 0 || strcmp (op, "AveragePool") == 0)
                     && !(node->domain && node->domain[0]);
  if (!is_conv && !is_pool)
    return NULL;
  int rank = in[0] ? in[0]->rank : -1;
  if (rank >= 0 && (rank < 3 || rank > 2 + MAX_SPATIAL))
    return g_strdup_printf ("the CUDA %s takes 1 to %d spatial axes, not %d", op, MAX_SPATIAL, rank - 2);
  if (is_conv && node->n_inputs > 1 && in[1] && in[0] && in[1]->dtype != in[0]->dtype)
    return g_strdup_printf ("the CUDA %s needs X and W of one type", op);
  if (is_transpose)
    {
      const char *auto_pad = owb_node_get_string (node, "auto_pad", "NOTSET");
      if (owb_node_get_attribute (node, "output_shape"))
        return g_strdup ("the CUDA ConvTranspose takes pads, not output_shape");
      if (strcmp (auto_pad, "NOTSET") != 0 && strcmp (auto_pad, "VALID") != 0)
        return g_strdup_printf ("the CUDA ConvTranspose has no auto_pad %s", auto_pad);
      int n = 0, n_st = 0;
      const int64_t *op_pad = owb_node_get_ints (node, "output_padding", &n);
      const int64_t *st = owb_node_get_ints (node, "strides", &n_st);
      for (int i = 0; op_pad && i < n; i++)
        if (op_pad[i] < 0 || op_pad[i] >= (st && i < n_st ? st[i] : 1))
          return g_strdup ("the CUDA ConvTranspose needs output_padding below the stride");
    }
  if (is_conv && strcmp (op, "FusedConv") == 0)
    {
      OwbCudaUnaryOp act;
      float p0, p1;
      char *why = NULL;
      if (!_owb_cuda_activation (node, &act, &p0, &p1, &why))
        return why;
    }
  if (is_pool)
    {
      if (owb_node_get_int (node, "ceil_mode", 0) != 0)
        return g_strdup_printf ("the CUDA %s has no ceil_mode", op);
      int n = 0;
      const int64_t *d = owb_node_get_ints (node, "dilations", &n);
      for (int i = 0; d && i < n; i++)
        if (d[i] != 1)
          return g_strdup_printf ("the CUDA %s has no dilations", op);
      if (node->n_outputs > 1 && node->outputs[1][0])
        return g_strdup ("the CUDA MaxPool makes no Indices");
    }
  /* Padding cuDNN cannot express: read with the sizes known so far. */
  if (rank >= 3)
    {
      int n_sp = rank - 2, pads[MAX_SPATIAL], strides[MAX_SPATIAL], dil[MAX_SPATIAL];
      int64_t in_sp[MAX_SPATIAL], k_sp[MAX_SPATIAL];
      gboolean known = TRUE;
      int nk = 0;
      const int64_t *ks = is_pool ? owb_node_get_ints (node, "kernel_shape", &nk) : NULL;
      for (int i = 0; i < n_sp; i++)
        {
          in_sp[i] = in[0]->dims[2 + i].value;
          known &= in_sp[i] >= 0;
          if (is_pool)
            k_sp[i] = ks && nk == n_sp ? ks[i] : 1;
          else
            {
              k_sp[i] = in[1] && in[1]->rank == rank ? in[1]->dims[2 + i].value : -1;
              known &= k_sp[i] >= 0;
            }
        }
      char *why = NULL;
      if (!read_geometry (node, n_sp, known ? in_sp : NULL, k_sp, pads, strides, dil, &why))
        return why;
    }
  return NULL;
}

#define FLOATS OWB_CUDA_TYPES_FLOAT

const OwbKernelDef _owb_cuda_kernels_conv[] = {
  { "Conv", "", 1, 0, FLOATS, 0, conv_prepare, conv_state_free, compute_conv },
  { "FusedConv", OWB_DOMAIN, 1, 0, FLOATS, 0, conv_prepare, conv_state_free, compute_conv },
  { "ConvTranspose", "", 1, 0, FLOATS, 0, conv_prepare, conv_state_free, compute_conv },
  { "MaxPool", "", 1, 0, FLOATS, 0, NULL, NULL, compute_pool },
  { "AveragePool", "", 1, 0, FLOATS, 0, NULL, NULL, compute_pool },
  { NULL }
};
