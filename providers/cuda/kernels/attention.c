/* attention.c: the engine's MultiHeadAttention (query, key?, value?, attention_bias?) on the GPU,
 * unfused: heads are gathered into [batch, heads, seq, head_size] by the strided copy, scores and
 * context are two strided-batched cuBLASLt products, the bias is a broadcast Add, softmax the
 * provider's row kernel. Packed QKV (no key and value: query's last axis holds Q, K and V) and
 * seq_first layouts are index maps, not extra copies. */
#include "../cuda-private.h"

#include <math.h>
#include <string.h>

/* A scratch tensor on the kernel's device; freed buffers return to the provider's cache and are
 * reused in stream order, so dropping it right after queuing its last use is safe. */
static OwbTensor *
scratch (OwbKernelContext *ctx, OwbDataType dtype, int rank, const int64_t *dims, GError **error)
{
  GError *local = NULL;
  OwbTensor *t = owb_device_new_tensor (ctx->device, dtype, rank, dims, &local);
  if (!t)
    {
      owb_kernel_set_error (ctx, error, local->code, "attention scratch: %s", local->message);
      g_error_free (local);
    }
  return t;
}

/* Copies heads out of x ([batch, seq, width] or [seq, batch, width]) starting at column `col`
 * into dst [batch, heads, seq, size]. */
static gboolean
gather_heads (OwbKernelContext *ctx, OwbCudaContext *cx, const OwbTensor *x, int64_t col, gboolean seq_first,
              int64_t heads, int64_t size, OwbTensor *dst, GError **error)
{
  int64_t batch = x->dims[seq_first ? 1 : 0], seq = x->dims[seq_first ? 0 : 1], width = x->dims[2];
  OwbCudaCopyMap map = { .rank = 4, .dims = { batch, heads, seq, size } };
  map.src_strides[0] = seq_first ? width : seq * width;
  map.src_strides[1] = size;
  map.src_strides[2] = seq_first ? batch * width : width;
  map.src_strides[3] = 1;
  map.src_offset = col;
  map.dst_strides[0] = heads * seq * size;
  map.dst_strides[1] = seq * size;
  map.dst_strides[2] = size;
  map.dst_strides[3] = 1;
  return _owb_cuda_check (ctx, error,
                          _owb_cuda_copy_strided ((int) owb_data_type_size (x->dtype), x->data, dst->data, &map, cx->stream),
                          "attention heads");
}

static gboolean
compute_mha (OwbKernelContext *ctx, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const OwbTensor *q = ctx->inputs[0];
  const OwbTensor *k = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  const OwbTensor *v = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  const OwbTensor *bias = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  OwbCudaFloat t;
  if (!cx || !_owb_cuda_float_type (ctx, q->dtype, &t, error))
    return FALSE;
  int64_t heads = owb_node_get_int (ctx->node, "num_heads", 0);
  gboolean seq_first = owb_node_get_int (ctx->node, "seq_first", 0) != 0;
  gboolean packed = k == NULL;
  if (heads < 1 || q->rank != 3 || (!packed && (!v || k->rank != 3 || v->rank != 3)) || (k && k->dtype != q->dtype)
      || (v && v->dtype != q->dtype) || (bias && (bias->dtype != q->dtype || bias->rank > 4)))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "query, key and value must be rank 3 of one type, with num_heads");
      return FALSE;
    }
  int bx = seq_first ? 1 : 0, sx = seq_first ? 0 : 1;
  int64_t batch = q->dims[bx], sq = q->dims[sx];
  int64_t hidden_q = packed ? q->dims[2] / 3 : q->dims[2];
  int64_t hidden_v = packed ? hidden_q : v->dims[2];
  int64_t skv = packed ? sq : k->dims[sx];
  if (hidden_q % heads || hidden_v % heads || (packed && q->dims[2] % 3)
      || (!packed && (k->dims[2] != hidden_q || k->dims[bx] != batch || v->dims[bx] != batch || v->dims[sx] != skv)))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "query, key and value do not agree with num_heads %" G_GINT64_FORMAT,
                            heads);
      return FALSE;
    }
  int64_t dq = hidden_q / heads, dv = hidden_v / heads;
  float scale = owb_node_get_float (ctx->node, "scale", dq > 0 ? 1.0f / sqrtf ((float) dq) : 1.0f);
  int64_t out_dims[3] = { q->dims[0], q->dims[1], hidden_v };
  OwbTensor *y = _owb_cuda_output (ctx, 0, q->dtype, 3, out_dims, error);
  if (!y)
    return FALSE;
  if (y->nelems == 0)
    return TRUE;
  int64_t qd[4] = { batch, heads, sq, dq }, kd[4] = { batch, heads, skv, dq }, vd[4] = { batch, heads, skv, dv };
  int64_t sd[4] = { batch, heads, sq, skv }, cd[4] = { batch, heads, sq, dv };
  OwbTensor *qh = scratch (ctx, q->dtype, 4, qd, error), *kh = qh ? scratch (ctx, q->dtype, 4, kd, error) : NULL;
  OwbTensor *vh = kh ? scratch (ctx, q->dtype, 4, vd, error) : NULL;
  OwbTensor *scores = vh ? scratch (ctx, q->dtype, 4, sd, error) : NULL;
  OwbTensor *context = scores ? scratch (ctx, q->dtype, 4, cd, error) : NULL;
  gboolean ok = context != NULL;
  ok = ok && gather_heads (ctx, cx, q, 0, seq_first, heads, dq, qh, error)
       && gather_heads (ctx, cx, packed ? q : k, packed ? hidden_q : 0, seq_first, heads, dq, kh, error)
       && gather_heads (ctx, cx, packed ? q : v, packed ? 2 * hidden_q : 0, seq_first, heads, dv, vh, error);
  if (ok)
    {
      /* scores = scale Q K^T per (batch, head) */
      OwbCudaProduct p = { FALSE, TRUE, sq, skv, dq, batch * heads, sq * dq, skv * dq, sq * skv, scale, 0.0f, NULL, FALSE };
      ok = _owb_cuda_gemm (ctx, cx, q->dtype, qh->data, kh->data, scores->data, &p, error);
    }
  if (ok && bias)
    {
      const OwbTensor *in[2] = { scores, bias };
      int rank;
      int64_t dims[OWB_MAX_RANK];
      OwbCudaBroadcast map;
      ok = _owb_cuda_broadcast_shape (ctx, 2, in, &rank, dims, error);
      if (ok && (rank != 4 || memcmp (dims, sd, sizeof sd) != 0))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "attention_bias does not broadcast to the scores");
          ok = FALSE;
        }
      ok = ok && _owb_cuda_broadcast_map (4, sd, 2, in, &map)
           && _owb_cuda_check (ctx, error,
                               _owb_cuda_binary (t, OWB_CUDA_BINARY_ADD, scores->data, bias->data, scores->data,
                                                 scores->nelems, &map, cx->stream),
                               "attention bias");
    }
  ok = ok && _owb_cuda_check (ctx, error,
                              _owb_cuda_softmax (t, FALSE, scores->data, scores->data, batch * heads * sq, skv, 1,
                                                 cx->stream),
                              "attention softmax");
  if (ok)
    {
      /* context = P V per (batch, head) */
      OwbCudaProduct p = { FALSE, FALSE, sq, dv, skv, batch * heads, sq * skv, skv * dv, sq * dv, 1.0f, 0.0f, NULL, FALSE };
      ok = _owb_cuda_gemm (ctx, cx, q->dtype, scores->data, vh->data, context->data, &p, error);
    }
  if (ok)
    {
      /* heads back into [batch, seq, hidden] (or [seq, batch, hidden]) */
      OwbCudaCopyMap map = { .rank = 4, .dims = { batch, heads, sq, dv } };
      map.src_strides[0] = heads * sq * dv;
      map.src_strides[1] = sq * dv;
      map.src_strides[2] = dv;
      map.src_strides[3] = 1;
      map.dst_strides[0] = seq_first ? hidden_v : sq * hidden_v;
      map.dst_strides[1] = dv;
      map.dst_strides[2] = seq_first ? batch * hidden_v : hidden_v;
      map.dst_strides[3] = 1;
      ok = _owb_cuda_check (ctx, error,
                            _owb_cuda_copy_strided ((int) owb_data_type_size (q->dtype), context->data, y->data, &map,
                                                    cx->stream),
                            "attention output");
    }
  g_clear_pointer (&qh, owb_tensor_unref);
  g_clear_pointer (&kh, owb_tensor_unref);
  g_clear_pointer (&vh, owb_tensor_unref);
  g_clear_pointer (&scores, owb_tensor_unref);
  g_clear_pointer (&context, owb_tensor_unref);
  return ok;
}

char *
_owb_cuda_attention_check (const OwbNode *node, int opset, const OwbValueType *const *in, const OwbValueType *out)
{
  if (strcmp (node->op_type, "MultiHeadAttention") != 0 || !node->domain || strcmp (node->domain, OWB_DOMAIN) != 0)
    return NULL;
  for (int i = 1; i < node->n_inputs && i < 4; i++)
    if (in[i] && in[0] && in[i]->dtype != OWB_TYPE_UNDEFINED && in[i]->dtype != in[0]->dtype)
      return g_strdup ("the CUDA MultiHeadAttention needs inputs of one type");
  return NULL;
}

const OwbKernelDef _owb_cuda_kernels_attention[] = {
  { "MultiHeadAttention", OWB_DOMAIN, 1, 0, OWB_CUDA_TYPES_FLOAT, 0, NULL, NULL, compute_mha },
  { NULL }
};
