/* cpu-qgemm-matmul.c: QLinearMatMul and MatMulInteger on the packed integer GEMM (cpu-qgemm.c)
 * when B is a constant 2-D int8/uint8 initializer with constant zero points: B is packed at
 * prepare, and a run whose other operands the core handles (per-tensor A and Y parameters, float
 * scales) goes through it; any other run takes the reference kernels in quant.c and nn.c. */
#include "cpu-qgemm-private.h"

#include <string.h>

struct _OwbQgemmMatMul {
  OwbTensor *b; /* the packed initializer, so that a run can check its input is that same tensor */
  OwbQgemmPacked *pack;
  gboolean qlinear; /* QLinearMatMul (B is input 3), else MatMulInteger (input 1) */
};

void
_owb_cpu_qgemm_matmul_free (gpointer data)
{
  OwbQgemmMatMul *s = data;
  if (!s)
    return;
  _owb_qgemm_packed_free (s->pack);
  owb_tensor_unref (s->b);
  g_free (s);
}

OwbTensor *
_owb_cpu_q_initializer (const OwbNode *node, int input)
{
  if (input >= node->n_inputs || !node->inputs[input][0] || !node->graph)
    return NULL;
  return owb_graph_get_initializer (node->graph, node->inputs[input]);
}

gboolean
_owb_cpu_q_is_8bit (OwbDataType t)
{
  return t == OWB_TYPE_UINT8 || t == OWB_TYPE_INT8;
}

gboolean
_owb_cpu_qgemm_matmul_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                               GError **error)
{
  (void) opset;
  (void) error;
  *state = NULL;
  gboolean qlinear = strcmp (node->op_type, "QLinearMatMul") == 0;
  /* DynamicQuantizeMatMul reads B and its zero point where MatMulInteger does, and a float A */
  gboolean dynamic = strcmp (node->op_type, "DynamicQuantizeMatMul") == 0;
  int bi = qlinear ? 3 : 1, zi = qlinear ? 5 : 3;
  OwbTensor *b = _owb_cpu_q_initializer (node, bi);
  const OwbValueType *at = input_types ? input_types[0] : NULL;
  if (!b || b->rank != 2 || !_owb_cpu_q_is_8bit (b->dtype) || b->nelems == 0 || !at
      || !(dynamic ? at->dtype == OWB_TYPE_FLOAT : _owb_cpu_q_is_8bit (at->dtype)))
    return TRUE;
  int64_t K = b->dims[0], N = b->dims[1];
  /* B's zero point: absent (MatMulInteger), or a constant of B's type, per tensor or per column */
  OwbTensor *zbt = _owb_cpu_q_initializer (node, zi);
  gboolean zb_given = zi < node->n_inputs && node->inputs[zi][0];
  if (zb_given && (!zbt || zbt->dtype != b->dtype || (zbt->nelems != 1 && zbt->nelems != N)))
    return TRUE;
  int64_t nzb = zbt ? zbt->nelems : 0;
  int32_t *zb = g_new (int32_t, MAX (nzb, 1));
  for (int64_t i = 0; i < nzb; i++)
    zb[i] = (int32_t) owb_tensor_get_double (zbt, i);
  OwbQgemmPacked *pack = _owb_qgemm_pack (K, N, b->data, N, b->dtype == OWB_TYPE_UINT8, zb, nzb);
  g_free (zb);
  if (!pack)
    return TRUE;
  OwbQgemmMatMul *s = g_new0 (OwbQgemmMatMul, 1);
  s->b = owb_tensor_ref (b);
  s->pack = pack;
  s->qlinear = qlinear;
  *state = s;
  return TRUE;
}

/* A as uint8: itself, or (for int8) a shifted copy A + 128 with its zero point shifted alike, so
 * that A - za is unchanged. *copy receives what to free. */
static const uint8_t *
unsigned_a (const OwbTensor *a, int32_t *za, uint8_t **copy)
{
  *copy = NULL;
  if (a->dtype == OWB_TYPE_UINT8)
    return a->data;
  uint8_t *u = g_malloc (MAX (a->nelems, 1));
  const uint8_t *src = a->data;
  for (int64_t i = 0; i < a->nelems; i++)
    u[i] = src[i] ^ 0x80;
  *za += 128;
  *copy = u;
  return u;
}

/* Y [rows, N] for A [..., M, K] against the pack, when the shapes are what it was packed for. */
static gboolean
shapes_fit (const OwbQgemmMatMul *s, const OwbTensor *a, const OwbTensor *b, const OwbTensor *y, int64_t *rows)
{
  int64_t K = _owb_qgemm_packed_k (s->pack), N = _owb_qgemm_packed_n (s->pack);
  if (b != s->b || !y || a->rank < 2 || a->dims[a->rank - 1] != K || y->rank != a->rank
      || y->dims[y->rank - 1] != N)
    return FALSE;
  for (int i = 0; i < a->rank - 1; i++)
    if (y->dims[i] != a->dims[i])
      return FALSE;
  *rows = K ? a->nelems / K : 0;
  return TRUE;
}

static gboolean
run_matmul_integer (OwbKernelContext *ctx, const OwbQgemmMatMul *s)
{
  const OwbTensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  const OwbTensor *azp = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  OwbTensor *y = ctx->outputs[0];
  int64_t rows;
  if (!shapes_fit (s, a, b, y, &rows) || y->dtype != OWB_TYPE_INT32 || (azp && (azp->nelems != 1 || azp->dtype != a->dtype)))
    return FALSE;
  int32_t za = azp ? (int32_t) owb_tensor_get_double (azp, 0) : 0;
  uint8_t *copy;
  const uint8_t *au = unsigned_a (a, &za, &copy);
  OwbQgemmEpilogue ep = { .output = OWB_QGEMM_OUT_INT32 };
  int64_t N = _owb_qgemm_packed_n (s->pack);
  _owb_qgemm_packed (ctx->pool, s->pack, rows, au, _owb_qgemm_packed_k (s->pack), za, y->data, N, &ep);
  g_free (copy);
  return TRUE;
}

static gboolean
run_qlinear_matmul (OwbKernelContext *ctx, const OwbQgemmMatMul *s)
{
  const OwbTensor *a = ctx->inputs[0], *as = ctx->inputs[1], *azp = ctx->inputs[2];
  const OwbTensor *b = ctx->inputs[3], *bs = ctx->inputs[4];
  const OwbTensor *ys = ctx->inputs[6], *yzp = ctx->inputs[7];
  OwbTensor *y = ctx->outputs[0];
  int64_t rows, N = _owb_qgemm_packed_n (s->pack);
  if (!shapes_fit (s, a, b, y, &rows) || !as || !azp || !bs || !ys || !yzp || !_owb_cpu_q_is_8bit (y->dtype))
    return FALSE;
  /* the float32 scales the reference computes its multiplier in; per-tensor a and y */
  if (as->dtype != OWB_TYPE_FLOAT || bs->dtype != OWB_TYPE_FLOAT || ys->dtype != OWB_TYPE_FLOAT
      || as->nelems != 1 || azp->nelems != 1 || ys->nelems != 1 || yzp->nelems != 1
      || (bs->nelems != 1 && bs->nelems != N) || azp->dtype != a->dtype || yzp->dtype != y->dtype)
    return FALSE;
  if (y->nelems == 0)
    return TRUE;
  float asf = ((const float *) as->data)[0], ysf = ((const float *) ys->data)[0];
  const float *bsf = bs->data;
  float *scale = g_new (float, N);
  /* as the reference: (a_scale b_scale) rounded to float, divided by y_scale, rounded to float */
  for (int64_t n = 0; n < N; n++)
    scale[n] = (float) ((double) (float) ((double) asf * bsf[bs->nelems == 1 ? 0 : n]) / ysf);
  int32_t za = (int32_t) owb_tensor_get_double (azp, 0);
  uint8_t *copy;
  const uint8_t *au = unsigned_a (a, &za, &copy);
  OwbQgemmEpilogue ep = { .output = y->dtype == OWB_TYPE_UINT8 ? OWB_QGEMM_OUT_UINT8 : OWB_QGEMM_OUT_INT8,
                          .scale = scale, .y_zero_point = (int32_t) owb_tensor_get_double (yzp, 0) };
  _owb_qgemm_packed (ctx->pool, s->pack, rows, au, _owb_qgemm_packed_k (s->pack), za, y->data, N, &ep);
  g_free (copy);
  g_free (scale);
  return TRUE;
}

gboolean
_owb_cpu_qgemm_matmul_run (OwbKernelContext *ctx)
{
  const OwbQgemmMatMul *s = ctx->state;
  if (!s || ctx->n_outputs < 1)
    return FALSE;
  return s->qlinear ? run_qlinear_matmul (ctx, s) : run_matmul_integer (ctx, s);
}

/* ---- DynamicQuantizeMatMul (ai.onnx.workbench) ----
 * What fuse_dynamic_quant_matmul makes of DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul
 * (a_scale b_scale) [-> Add bias]: A quantized to uint8 as DynamicQuantizeLinear does (the same
 * range and quantize passes), the integer product on the packed GEMM, and the unfused float32
 * steps in its epilogue: (float) acc * (float) (a_scale b_scale[n]) [+ bias[n]], each rounded to
 * float32 as the Cast, Mul and Add round (the epilogue does not contract them into an FMA). The
 * result is the unfused graph's to the bit. */

/* B's zero points as int32 (0, 1 or N of them), or FALSE when the count or type is wrong. */
static gboolean
zero_points (const OwbTensor *b, const OwbTensor *zbt, int32_t **zb, int64_t *nzb)
{
  int64_t N = b->dims[1];
  *zb = NULL;
  *nzb = 0;
  if (!zbt)
    return TRUE;
  if (zbt->dtype != b->dtype || (zbt->nelems != 1 && zbt->nelems != N))
    return FALSE;
  *nzb = zbt->nelems;
  *zb = g_new (int32_t, MAX (*nzb, 1));
  for (int64_t i = 0; i < *nzb; i++)
    (*zb)[i] = (int32_t) owb_tensor_get_double (zbt, i);
  return TRUE;
}

gboolean
_owb_cpu_dynamic_quantize_matmul (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *a = ctx->inputs[0], *b = ctx->inputs[1], *bs = ctx->inputs[2];
  const OwbTensor *bzp = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL, *bias = ctx->n_inputs > 4 ? ctx->inputs[4] : NULL;
  if (a->dtype != OWB_TYPE_FLOAT || bs->dtype != OWB_TYPE_FLOAT || (bias && bias->dtype != OWB_TYPE_FLOAT))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "A, b_scale and bias must be float32");
      return FALSE;
    }
  if (b->rank != 2 || !_owb_cpu_q_is_8bit (b->dtype) || a->rank < 1 || a->dims[a->rank - 1] != b->dims[0])
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "A [..., K] and B [K, N] (int8 or uint8) do not multiply");
      return FALSE;
    }
  int64_t K = b->dims[0], N = b->dims[1];
  if ((bs->nelems != 1 && bs->nelems != N) || (bias && bias->nelems != 1 && bias->nelems != N))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "b_scale and bias must hold one value or %" G_GINT64_FORMAT, N);
      return FALSE;
    }
  int64_t dims[OWB_MAX_RANK];
  memcpy (dims, a->dims, sizeof (int64_t) * (size_t) a->rank);
  dims[a->rank - 1] = N;
  OwbTensor *y = ctx->outputs[0];
  if (!y && !(y = owb_kernel_context_new_output (ctx, 0, OWB_TYPE_FLOAT, a->rank, dims, error)))
    return FALSE;
  if (y->dtype != OWB_TYPE_FLOAT || y->rank != a->rank || memcmp (y->dims, dims, sizeof (int64_t) * (size_t) a->rank) != 0)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "Y must be float32 of A's shape with %" G_GINT64_FORMAT " columns", N);
      return FALSE;
    }
  /* B packed at prepare, or (another B) packed for this run */
  const OwbQgemmMatMul *s = ctx->state;
  OwbQgemmPacked *own = NULL;
  const OwbQgemmPacked *pack = s && s->b == b ? s->pack : NULL;
  if (!pack)
    {
      int32_t *zb;
      int64_t nzb;
      if (!zero_points (b, bzp, &zb, &nzb))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "b_zero_point must be of B's type and hold one value or %" G_GINT64_FORMAT, N);
          return FALSE;
        }
      pack = own = _owb_qgemm_pack (K, N, b->data, N, b->dtype == OWB_TYPE_UINT8, zb, nzb);
      g_free (zb);
    }
  if (y->nelems == 0)
    {
      _owb_qgemm_packed_free (own);
      return TRUE;
    }
  /* DynamicQuantizeLinear of A: its range, scale and zero point, then A in uint8 */
  float lo, hi, a_scale;
  int32_t za;
  _owb_cpu_float_range (ctx->pool, a->data, a->nelems, &lo, &hi);
  _owb_cpu_dynamic_quant_params (lo, hi, &a_scale, &za);
  uint8_t *aq = g_malloc (MAX (a->nelems, 1));
  _owb_cpu_quantize_u8 (ctx->pool, a->data, aq, a->nelems, a_scale, za);
  /* the unfused Mul (a_scale, b_scale): a float32 product per column */
  float *scale = g_new (float, N), *fbias = bias ? g_new (float, N) : NULL;
  const float *bsf = bs->data, *bf = bias ? bias->data : NULL;
  for (int64_t n = 0; n < N; n++)
    {
      scale[n] = a_scale * bsf[bs->nelems == 1 ? 0 : n];
      if (fbias)
        fbias[n] = bf[bias->nelems == 1 ? 0 : n];
    }
  OwbQgemmEpilogue ep = { .output = OWB_QGEMM_OUT_FLOAT, .scale = scale, .float_bias = fbias };
  _owb_qgemm_packed (ctx->pool, pack, K ? a->nelems / K : 0, aq, K, za, y->data, N, &ep);
  g_free (aq);
  g_free (scale);
  g_free (fbias);
  _owb_qgemm_packed_free (own);
  return TRUE;
}
