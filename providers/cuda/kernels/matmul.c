/* matmul.c: MatMul, Gemm and the engine's FusedMatMul / FusedGemm on cuBLASLt. Row-major
 * Y [M, N] = A [M, K] B [K, N] is computed as the column-major Y^T = B^T A^T, so no operand is
 * transposed in memory. float32 computes in float32 (no TF32: parity with the CPU within 1e-5),
 * float16 in float32 accumulators. A bias of N values and Relu run in cuBLASLt's epilogue; other
 * activations in one pass after it. */
#include "../cuda-private.h"

#include <string.h>

/* The same product on classic cuBLAS (strided batched, float accumulation), for shapes and
 * alignments cuBLASLt's heuristics offer nothing for; the epilogue runs after it. */
static gboolean
classic_gemm (OwbKernelContext *ctx, OwbCudaContext *cx, OwbDataType dtype, const void *a, const void *b, void *y,
              const OwbCudaProduct *p, GError **error)
{
  cudaDataType_t dt = dtype == OWB_TYPE_FLOAT16 ? CUDA_R_16F : CUDA_R_32F;
  cublasOperation_t op_a = p->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = p->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  int lda = (int) (p->trans_b ? p->k : p->n), ldb = (int) (p->trans_a ? p->m : p->k);
  if (!_owb_cuda_check_blas (ctx, error,
                             cublasGemmStridedBatchedEx (cx->blas, op_a, op_b, (int) p->n, (int) p->m, (int) p->k,
                                                         &p->alpha, b, dt, lda, p->stride_b, a, dt, ldb, p->stride_a,
                                                         &p->beta, y, dt, (int) p->n, p->stride_y,
                                                         (int) MAX (p->batch, 1), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                             "matmul"))
    return FALSE;
  if (!p->bias && !p->relu)
    return TRUE;
  return _owb_cuda_check (ctx, error,
                          _owb_cuda_bias_activation (dtype == OWB_TYPE_FLOAT16 ? OWB_CUDA_F16 : OWB_CUDA_F32,
                                                     p->relu ? OWB_CUDA_UNARY_RELU : OWB_CUDA_UNARY_IDENTITY, 0, 0, y,
                                                     p->bias, NULL, p->m * p->n * MAX (p->batch, 1), p->n, 1,
                                                     cx->stream),
                          "matmul epilogue");
}

gboolean
_owb_cuda_gemm (OwbKernelContext *ctx, OwbCudaContext *cx, OwbDataType dtype, const void *a, const void *b, void *y,
                const OwbCudaProduct *p, GError **error)
{
  cudaDataType_t dt = dtype == OWB_TYPE_FLOAT16 ? CUDA_R_16F : CUDA_R_32F;
  cublasLtMatmulDesc_t desc = NULL;
  cublasLtMatrixLayout_t la = NULL, lb = NULL, ly = NULL;
  cublasLtMatmulPreference_t pref = NULL;
  gboolean ok = FALSE;
  /* cuBLASLt's "A" is our B (N x K column-major), its "B" our A (K x M). */
  cublasOperation_t op_a = p->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = p->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  uint64_t a_rows = p->trans_b ? p->k : p->n, a_cols = p->trans_b ? p->n : p->k;
  uint64_t b_rows = p->trans_a ? p->m : p->k, b_cols = p->trans_a ? p->k : p->m;
  if (!_owb_cuda_check_blas (ctx, error, cublasLtMatmulDescCreate (&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul descriptor")
      || !_owb_cuda_check_blas (ctx, error, cublasLtMatmulDescSetAttribute (desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a), "matmul descriptor")
      || !_owb_cuda_check_blas (ctx, error, cublasLtMatmulDescSetAttribute (desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b), "matmul descriptor")
      || !_owb_cuda_check_blas (ctx, error, cublasLtMatrixLayoutCreate (&la, dt, a_rows, a_cols, (int64_t) a_rows), "matmul layout")
      || !_owb_cuda_check_blas (ctx, error, cublasLtMatrixLayoutCreate (&lb, dt, b_rows, b_cols, (int64_t) b_rows), "matmul layout")
      || !_owb_cuda_check_blas (ctx, error, cublasLtMatrixLayoutCreate (&ly, dt, p->n, p->m, p->n), "matmul layout"))
    goto out;
  if (p->bias || p->relu)
    {
      cublasLtEpilogue_t epi = p->bias ? (p->relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                       : CUBLASLT_EPILOGUE_RELU;
      if (!_owb_cuda_check_blas (ctx, error, cublasLtMatmulDescSetAttribute (desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi), "matmul epilogue"))
        goto out;
      if (p->bias && !_owb_cuda_check_blas (ctx, error, cublasLtMatmulDescSetAttribute (desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p->bias, sizeof p->bias), "matmul bias"))
        goto out;
    }
  if (p->batch > 1)
    {
      int32_t count = (int32_t) p->batch;
      cublasLtMatrixLayout_t layouts[3] = { la, lb, ly };
      int64_t strides[3] = { p->stride_b, p->stride_a, p->stride_y };
      for (int i = 0; i < 3; i++)
        if (!_owb_cuda_check_blas (ctx, error, cublasLtMatrixLayoutSetAttribute (layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count), "matmul batch")
            || !_owb_cuda_check_blas (ctx, error, cublasLtMatrixLayoutSetAttribute (layouts[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[i], sizeof strides[i]), "matmul batch"))
          goto out;
    }
  g_mutex_lock (&cx->workspace_lock);
  {
    GError *local = NULL;
    gsize ws_size = (gsize) 32 << 20;
    void *ws = _owb_cuda_workspace (cx, ws_size, &local);
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    if (!ws)
      {
        owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "%s", local->message);
        g_error_free (local);
      }
    else if (_owb_cuda_check_blas (ctx, error, cublasLtMatmulPreferenceCreate (&pref), "matmul preference")
             && _owb_cuda_check_blas (ctx, error, cublasLtMatmulPreferenceSetAttribute (pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_size, sizeof ws_size), "matmul preference")
             && _owb_cuda_check_blas (ctx, error, cublasLtMatmulAlgoGetHeuristic (cx->lt, desc, la, lb, ly, ly, pref, 1, &result, &found), "matmul algorithm"))
      {
        if (found == 0)
          ok = classic_gemm (ctx, cx, dtype, a, b, y, p, error);
        else
          ok = _owb_cuda_check_blas (ctx, error,
                                     cublasLtMatmul (cx->lt, desc, &p->alpha, b, la, a, lb, &p->beta, y, ly, y, ly,
                                                     &result.algo, ws, ws_size, cx->stream),
                                     "matmul");
      }
  }
  g_mutex_unlock (&cx->workspace_lock);
out:
  if (pref)
    cublasLtMatmulPreferenceDestroy (pref);
  if (ly)
    cublasLtMatrixLayoutDestroy (ly);
  if (lb)
    cublasLtMatrixLayoutDestroy (lb);
  if (la)
    cublasLtMatrixLayoutDestroy (la);
  if (desc)
    cublasLtMatmulDescDestroy (desc);
  return ok;
}

/* Activation after the product (and the bias when the epilogue could not take it). */
static gboolean
finish (OwbKernelContext *ctx, OwbCudaContext *cx, OwbTensor *y, int64_t n, const void *bias, OwbCudaUnaryOp act,
        float p0, float p1, GError **error)
{
  OwbCudaFloat t = y->dtype == OWB_TYPE_FLOAT16 ? OWB_CUDA_F16 : OWB_CUDA_F32;
  return _owb_cuda_check (ctx, error,
                          _owb_cuda_bias_activation (t, act, p0, p1, y->data, bias, NULL, y->nelems, n, 1, cx->stream),
                          "matmul epilogue");
}

/* numpy.matmul of A and B (with the fused op's transA/transB, alpha, bias [N] and activation). */
static gboolean
run_matmul (OwbKernelContext *ctx, gboolean trans_a, gboolean trans_b, float alpha, const OwbTensor *bias,
            OwbCudaUnaryOp act, float p0, float p1, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const OwbTensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  if (!cx)
    return FALSE;
  if (a->dtype != b->dtype || a->rank < 1 || b->rank < 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "A and B must be tensors of one type");
      return FALSE;
    }
  /* Operand shapes as matrices: a 1-D A is one row, a 1-D B one column. */
  int64_t am = a->rank == 1 ? 1 : a->dims[a->rank - 2], ak = a->dims[a->rank - 1];
  int64_t bk = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2], bn = b->rank == 1 ? 1 : b->dims[b->rank - 1];
  if (trans_a)
    {
      int64_t t = am;
      am = ak;
      ak = t;
    }
  if (trans_b)
    {
      int64_t t = bk;
      bk = bn;
      bn = t;
    }
  if (ak != bk)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "A has %" G_GINT64_FORMAT " columns but B %" G_GINT64_FORMAT " rows",
                            ak, bk);
      return FALSE;
    }
  int a_batch_rank = MAX (a->rank - 2, 0), b_batch_rank = MAX (b->rank - 2, 0);
  int batch_rank = MAX (a_batch_rank, b_batch_rank);
  int64_t bdims[OWB_MAX_RANK], batch = 1;
  for (int d = 0; d < batch_rank; d++)
    {
      int ad = d - (batch_rank - a_batch_rank), bd = d - (batch_rank - b_batch_rank);
      int64_t x = ad >= 0 ? a->dims[ad] : 1, z = bd >= 0 ? b->dims[bd] : 1;
      if (x != z && x != 1 && z != 1)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "batch axes do not broadcast");
          return FALSE;
        }
      bdims[d] = x == 1 ? z : x;
      batch *= bdims[d];
    }
  int64_t dims[OWB_MAX_RANK];
  int rank = 0;
  for (int d = 0; d < batch_rank; d++)
    dims[rank++] = bdims[d];
  if (a->rank > 1)
    dims[rank++] = am;
  if (b->rank > 1)
    dims[rank++] = bn;
  if (bias && (bias->nelems != bn || bias->dtype != a->dtype))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "bias must have %" G_GINT64_FORMAT " values of A's type", bn);
      return FALSE;
    }
  OwbTensor *y = _owb_cuda_output (ctx, 0, a->dtype, rank, dims, error);
  if (!y)
    return FALSE;
  if (y->nelems == 0)
    return TRUE;
  gsize es = owb_data_type_size (a->dtype);
  OwbCudaProduct p = { trans_a, trans_b, am, bn, ak, 1, 0, 0, 0, alpha, 0.0f, NULL, FALSE };
  gboolean epi_bias = bias != NULL && (act == OWB_CUDA_UNARY_IDENTITY || act == OWB_CUDA_UNARY_RELU);
  if (epi_bias || (act == OWB_CUDA_UNARY_RELU && !bias))
    {
      p.bias = epi_bias ? bias->data : NULL;
      p.relu = act == OWB_CUDA_UNARY_RELU;
    }
  gboolean fused_epilogue = p.bias != NULL || p.relu;
  int64_t b_count = 1;
  for (int d = 0; d < b_batch_rank; d++)
    b_count *= b->dims[d];
  gboolean ok;
  if (ak == 0)
    {
      /* An empty sum: zeros (then bias and activation). */
      ok = _owb_cuda_check (ctx, error, cudaMemsetAsync (y->data, 0, y->nbytes, cx->stream), "matmul");
      fused_epilogue = FALSE;
    }
  else if (b_count == 1 && !trans_a)
    {
      /* B is one matrix: A's batches are more rows of one product. */
      p.m = am * batch;
      ok = _owb_cuda_gemm (ctx, cx, a->dtype, a->data, b->data, y->data, &p, error);
    }
  else if (a_batch_rank == b_batch_rank && memcmp (a->dims, b->dims, sizeof (int64_t) * a_batch_rank) == 0)
    {
      p.batch = batch;
      p.stride_a = am * ak;
      p.stride_b = ak * bn;
      p.stride_y = am * bn;
      ok = _owb_cuda_gemm (ctx, cx, a->dtype, a->data, b->data, y->data, &p, error);
    }
  else
    {
      /* General broadcasting: one product per output batch. */
      ok = TRUE;
      for (int64_t i = 0; ok && i < batch; i++)
        {
          int64_t ai = 0, bi = 0, as = 1, bs = 1, r = i;
          for (int d = batch_rank - 1; d >= 0; d--)
            {
              int64_t c = r % bdims[d];
              r /= bdims[d];
              int ad = d - (batch_rank - a_batch_rank), bd = d - (batch_rank - b_batch_rank);
              if (ad >= 0)
                {
                  ai += (a->dims[ad] == 1 ? 0 : c) * as;
                  as *= a->dims[ad];
                }
              if (bd >= 0)
                {
                  bi += (b->dims[bd] == 1 ? 0 : c) * bs;
                  bs *= b->dims[bd];
                }
            }
          ok = _owb_cuda_gemm (ctx, cx, a->dtype, (const char *) a->data + ai * am * ak * es,
                          (const char *) b->data + bi * ak * bn * es, (char *) y->data + i * am * bn * es, &p, error);
        }
    }
  if (!ok)
    return FALSE;
  if (fused_epilogue && (epi_bias || !bias) && (act == OWB_CUDA_UNARY_IDENTITY || act == OWB_CUDA_UNARY_RELU))
    return TRUE;
  return finish (ctx, cx, y, bn, bias && !(fused_epilogue && epi_bias) ? bias->data : NULL, act, p0, p1, error);
}

static gboolean
compute_matmul (OwbKernelContext *ctx, GError **error)
{
  return run_matmul (ctx, FALSE, FALSE, 1.0f, NULL, OWB_CUDA_UNARY_IDENTITY, 0, 0, error);
}

static gboolean
compute_fused_matmul (OwbKernelContext *ctx, GError **error)
{
  OwbCudaUnaryOp act;
  float p0, p1;
  char *why = NULL;
  if (!_owb_cuda_activation (ctx->node, &act, &p0, &p1, &why))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%s", why);
      g_free (why);
      return FALSE;
    }
  return run_matmul (ctx, owb_node_get_int (ctx->node, "transA", 0) != 0, owb_node_get_int (ctx->node, "transB", 0) != 0,
                     owb_node_get_float (ctx->node, "alpha", 1.0f), ctx->n_inputs > 2 ? ctx->inputs[2] : NULL, act, p0,
                     p1, error);
}

/* Gemm (A, B, C?): Y = alpha op(A) op(B) + beta C, C broadcast to [M, N]; FusedGemm adds an
 * activation. A C of N values with beta 1 is the epilogue's bias; any other C is first copied
 * into Y and accumulated with beta. */
static gboolean
compute_gemm (OwbKernelContext *ctx, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const OwbTensor *a = ctx->inputs[0], *b = ctx->inputs[1], *c = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  OwbCudaUnaryOp act = OWB_CUDA_UNARY_IDENTITY;
  float p0 = 0, p1 = 0;
  char *why = NULL;
  if (!cx)
    return FALSE;
  if (strcmp (ctx->node->op_type, "FusedGemm") == 0 && !_owb_cuda_activation (ctx->node, &act, &p0, &p1, &why))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%s", why);
      g_free (why);
      return FALSE;
    }
  gboolean ta = owb_node_get_int (ctx->node, "transA", 0) != 0, tb = owb_node_get_int (ctx->node, "transB", 0) != 0;
  float alpha = owb_node_get_float (ctx->node, "alpha", 1.0f), beta = owb_node_get_float (ctx->node, "beta", 1.0f);
  if (a->rank != 2 || b->rank != 2 || a->dtype != b->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "A and B must be matrices of one type");
      return FALSE;
    }
  int64_t m = ta ? a->dims[1] : a->dims[0], k = ta ? a->dims[0] : a->dims[1];
  int64_t kb = tb ? b->dims[1] : b->dims[0], n = tb ? b->dims[0] : b->dims[1];
  if (k != kb)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "A has %" G_GINT64_FORMAT " columns but B %" G_GINT64_FORMAT " rows", k, kb);
      return FALSE;
    }
  int64_t dims[2] = { m, n };
  OwbTensor *y = _owb_cuda_output (ctx, 0, a->dtype, 2, dims, error);
  if (!y)
    return FALSE;
  if (y->nelems == 0)
    return TRUE;
  OwbCudaProduct p = { ta, tb, m, n, k, 1, 0, 0, 0, alpha, 0.0f, NULL, FALSE };
  gboolean use_c = c && beta != 0.0f;
  gboolean c_is_bias = use_c && beta == 1.0f && c->nelems == n && (c->rank == 1 || (c->rank == 2 && c->dims[0] == 1));
  if (use_c && c->dtype != a->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "C must have A's type");
      return FALSE;
    }
  if (use_c && !c_is_bias)
    {
      /* Y = broadcast (C), then Y = alpha A B + beta Y. */
      if (c->rank > 2 || (c->rank >= 1 && c->dims[c->rank - 1] != n && c->dims[c->rank - 1] != 1)
          || (c->rank == 2 && c->dims[0] != m && c->dims[0] != 1))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "C does not broadcast to [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]", m, n);
          return FALSE;
        }
      OwbCudaCopyMap map = { .rank = 2, .dims = { m, n }, .dst_strides = { n, 1 } };
      map.src_strides[1] = c->rank >= 1 && c->dims[c->rank - 1] != 1 ? 1 : 0;
      map.src_strides[0] = c->rank == 2 && c->dims[0] != 1 ? c->dims[1] : 0;
      if (!_owb_cuda_check (ctx, error, _owb_cuda_copy_strided ((int) owb_data_type_size (a->dtype), c->data, y->data, &map, cx->stream), "Gemm C"))
        return FALSE;
      p.beta = beta;
    }
  gboolean epi_ok = act == OWB_CUDA_UNARY_IDENTITY || act == OWB_CUDA_UNARY_RELU;
  if (c_is_bias && epi_ok)
    p.bias = c->data;
  if (epi_ok)
    p.relu = act == OWB_CUDA_UNARY_RELU;
  if (k == 0)
    {
      if (!use_c && !_owb_cuda_check (ctx, error, cudaMemsetAsync (y->data, 0, y->nbytes, cx->stream), "Gemm"))
        return FALSE;
      return finish (ctx, cx, y, n, c_is_bias ? c->data : NULL, act, p0, p1, error);
    }
  if (!_owb_cuda_gemm (ctx, cx, a->dtype, a->data, b->data, y->data, &p, error))
    return FALSE;
  if (epi_ok)
    return TRUE;
  return finish (ctx, cx, y, n, c_is_bias ? c->data : NULL, act, p0, p1, error);
}

char *
_owb_cuda_matmul_check (const OwbNode *node, int opset, const OwbValueType *const *in, const OwbValueType *out)
{
  const char *op = node->op_type;
  gboolean fused = node->domain && strcmp (node->domain, OWB_DOMAIN) == 0;
  if (fused && (strcmp (op, "FusedMatMul") == 0 || strcmp (op, "FusedGemm") == 0))
    {
      OwbCudaUnaryOp act;
      float p0, p1;
      char *why = NULL;
      if (!_owb_cuda_activation (node, &act, &p0, &p1, &why))
        return why;
    }
  if (!fused && strcmp (op, "MatMul") != 0 && strcmp (op, "Gemm") != 0)
    return NULL;
  if ((strcmp (op, "MatMul") == 0 || strcmp (op, "FusedMatMul") == 0 || strcmp (op, "Gemm") == 0
       || strcmp (op, "FusedGemm") == 0)
      && in[0] && in[1] && in[1]->dtype != OWB_TYPE_UNDEFINED && in[0]->dtype != in[1]->dtype)
    return g_strdup_printf ("the CUDA %s needs A and B of one type", op);
  return NULL;
}

#define FLOATS OWB_CUDA_TYPES_FLOAT

const OwbKernelDef _owb_cuda_kernels_matmul[] = {
  { "MatMul", "", 1, 0, FLOATS, 0, NULL, NULL, compute_matmul },
  { "Gemm", "", 7, 0, FLOATS, 0, NULL, NULL, compute_gemm },
  { "FusedMatMul", OWB_DOMAIN, 1, 0, FLOATS, 0, NULL, NULL, compute_fused_matmul },
  { "FusedGemm", OWB_DOMAIN, 1, 0, FLOATS, 0, NULL, NULL, compute_gemm },
  { NULL }
};
