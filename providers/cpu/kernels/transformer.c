/* transformer.c: CPU kernels of the transformer-era ops: Attention, FlexAttention, RotaryEmbedding,
 * RMSNormalization, Swish, SwiGLU, TensorScatter, CausalConvWithState and LinearAttention. */
#include "../cpu-kernels-private.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* Query rows per Attention work unit: bounds the score scratch to ROW_BLOCK x total_len per thread and
 * gives the pool work even when batch * heads is small (long prefill). */
#define ROW_BLOCK 64
/* Elements per chunk of the element-wise kernels. */
#define ELEMENTWISE_GRAIN 16384

static inline float exp_FLOAT (float x) { return expf (x); }
static inline double exp_DOUBLE (double x) { return exp (x); }
static inline float tanh_FLOAT (float x) { return tanhf (x); }
static inline double tanh_DOUBLE (double x) { return tanh (x); }
static inline float sqrt_FLOAT (float x) { return sqrtf (x); }
static inline double sqrt_DOUBLE (double x) { return sqrt (x); }

/* C = alpha * A B (or A B^T with tb), row-major with leading dimensions; handles the sizes BLAS rejects.
 * Callers have checked that every size fits in an int. */
static void
gemm_FLOAT (gboolean tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda, const float *b,
            int64_t ldb, float *c, int64_t ldc)
{
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0)
    {
      for (int64_t i = 0; i < m; i++)
        memset (c + i * ldc, 0, n * sizeof (float));
      return;
    }
  cblas_sgemm (CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int) m, (int) n, (int) k, alpha, a,
               (int) lda, b, (int) ldb, 0.0f, c, (int) ldc);
}

static void
gemm_DOUBLE (gboolean tb, int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t lda,
             const double *b, int64_t ldb, double *c, int64_t ldc)
{
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0)
    {
      for (int64_t i = 0; i < m; i++)
        memset (c + i * ldc, 0, n * sizeof (double));
      return;
    }
  cblas_dgemm (CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int) m, (int) n, (int) k, alpha, a,
               (int) lda, b, (int) ldb, 0.0, c, (int) ldc);
}

static gboolean
fits_int (int64_t v)
{
  return v >= 0 && v <= G_MAXINT;
}

static gsize
element_size (const OwbTensor *t)
{
  return t->dtype == OWB_TYPE_STRING ? sizeof (char *) : t->nelems > 0 ? t->nbytes / t->nelems
                                                                        : owb_data_type_size (t->dtype);
}

static int64_t
pool_size (OwbThreadPool *pool)
{
  return pool ? owb_thread_pool_get_n_threads (pool) : 1;
}

/* The pool for work units that call BLAS: none when OpenBLAS runs its own threads, since BLAS calls from
 * several pool threads at once would each start OpenBLAS's threads and oversubscribe the cores (measured
 * 10x slower); OpenBLAS then parallelizes inside each product instead. */
static OwbThreadPool *
blas_units_pool (OwbThreadPool *pool)
{
  return openblas_get_num_threads () > 1 ? NULL : pool;
}

/* ---- Attention -------------------------------------------------------------------------------- */

typedef struct {
  gboolean causal;
  gboolean has_scale;
  double scale;
  int64_t q_heads, kv_heads; /* 0: not given */
  double softcap;
  int mode;
  int64_t left, right; /* window bounds; -1: unbounded */
} AttentionParams;

static gboolean
attention_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                   GError **error)
{
  AttentionParams *p = g_new0 (AttentionParams, 1);
  p->causal = owb_node_get_int (node, "is_causal", 0) != 0;
  p->has_scale = owb_node_get_attribute (node, "scale") != NULL;
  p->scale = owb_node_get_float (node, "scale", 1.0f);
  p->q_heads = owb_node_get_int (node, "q_num_heads", 0);
  p->kv_heads = owb_node_get_int (node, "kv_num_heads", 0);
  p->softcap = owb_node_get_float (node, "softcap", 0.0f);
  if (!owb_node_get_int32 (node, "qk_matmul_output_mode", 0, 0, 3, &p->mode, error))
    {
      g_free (p);
      return FALSE;
    }
  p->left = opset >= 25 ? owb_node_get_int (node, "left_window_size", -1) : -1;
  p->right = opset >= 25 ? owb_node_get_int (node, "right_window_size", -1) : -1;
  if (p->q_heads < 0 || p->kv_heads < 0 || p->mode < 0 || p->mode > 3 || p->left < -1 || p->right < -1
      || (p->has_scale && !(p->scale >= 0)))
    {
      /* A negative scale cannot be split into the sqrt(scale) factors of Q and K the spec prescribes. */
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   "Attention '%s': invalid attribute values (head counts, qk_matmul_output_mode, window sizes or scale)",
                   node->name ? node->name : "");
      g_free (p);
      return FALSE;
    }
  *state = p;
  return TRUE;
}

/* A 3-D or 4-D Q/K/V/Y operand seen as per-(batch, head) matrices of rows. */
typedef struct {
  int64_t batch_stride, head_stride, ld;
} HeadLayout;

static HeadLayout
head_layout (gboolean is_3d, int64_t heads, int64_t seq, int64_t size)
{
  if (is_3d) /* (batch, seq, heads * size) */
    return (HeadLayout){ seq * heads * size, size, heads * size };
  return (HeadLayout){ heads * seq * size, seq * size, size }; /* (batch, heads, seq, size) */
}

typedef struct {
  const AttentionParams *p;
  int64_t Hq, Hkv, Sq, total, D, Dv, group, n_blocks;
  gboolean merge;          /* a unit's query heads go through one product (rows evenly spaced) */
  int64_t q_ld_merged, y_ld_merged;
  double alpha;
  const void *q, *k, *v;
  void *y, *qk;
  HeadLayout lq, lk, lv, ly;
  const void *mask;
  gboolean mask_bool;
  int64_t mask_len, ms[4];
  const int64_t *offset;  /* per batch: keys before the query block (causal and window alignment) */
  const int64_t *nonpad;  /* per batch, or NULL */
} AttentionJob;

/* The keys [lo, hi) that may be attended by query rows [i0, i0 + rows) of batch b: causal, window, padding and a
 * short mask exclude the others for every row, so the products skip them. With a raw-score output wanted
 * (qk_matmul_output modes 0-2) every key is kept. */
static void
attention_key_range (const AttentionJob *j, int64_t b, int64_t i0, int64_t rows, int64_t *lo, int64_t *hi)
{
  const AttentionParams *p = j->p;
  *lo = 0;
  *hi = j->total;
  if (j->qk && p->mode != 3)
    return;
  int64_t first = i0 + j->offset[b], last = i0 + rows - 1 + j->offset[b];
  if (p->causal)
    *hi = MIN (*hi, last + 1);
  if (p->right >= 0)
    *hi = MIN (*hi, last + p->right + 1);
  if (j->nonpad)
    *hi = MIN (*hi, j->nonpad[b]);
  if (j->mask)
    *hi = MIN (*hi, j->mask_len);
  if (p->left >= 0)
    *lo = MAX (*lo, first - p->left);
  *lo = MIN (*lo, j->total);
  *hi = MAX (*hi, *lo);
}

/* Bias, soft cap, softmax (with the fully-masked-row guard) and the qk_matmul_output capture of one score
 * row, in place. The row holds keys [lo, lo + width); keys outside are masked for this row anyway.
 * Causal, window, padding and a short mask each allow an interval of keys, so the bias is that interval plus
 * the mask; the per-key path is kept for the raw-score outputs (modes 0-2), which need every key's value. */
#define DEFINE_ATTENTION(T, NAME)                                                                              \
  static void attention_row_##NAME (const AttentionJob *j, int64_t b, int64_t h, int64_t i, T *row, int64_t lo, \
                                    int64_t width)                                                             \
  {                                                                                                            \
    const AttentionParams *p = j->p;                                                                           \
    T *qk = j->qk ? (T *) j->qk + ((b * j->Hq + h) * j->Sq + i) * j->total : NULL;                           \
    const int64_t mbase = b * j->ms[0] + h * j->ms[1] + i * j->ms[2], mstep = j->ms[3];                      \
    const uint8_t *mb = j->mask && j->mask_bool ? (const uint8_t *) j->mask + mbase : NULL;                  \
    const T *mf = j->mask && !j->mask_bool ? (const T *) j->mask + mbase : NULL;                             \
    const int64_t pos = i + j->offset[b];                                                                      \
    const T sc = (T) p->softcap;                                                                               \
    /* Keys allowed by the interval constraints, in row coordinates. */                                      \
    int64_t a = p->left >= 0 ? pos - p->left : 0, z = j->nonpad ? j->nonpad[b] : j->total;                    \
    if (p->causal)                                                                                             \
      z = MIN (z, pos + 1);                                                                                    \
    if (p->right >= 0)                                                                                         \
      z = MIN (z, pos + p->right + 1);                                                                         \
    if (j->mask)                                                                                               \
      z = MIN (z, j->mask_len);                                                                                \
    a = CLAMP (a - lo, 0, width);                                                                              \
    z = CLAMP (z - lo, a, width);                                                                              \
    gboolean any = FALSE;                                                                                      \
    T max = -INFINITY;                                                                                         \
    if (qk && p->mode != 3)                                                                                    \
      {                                                                                                        \
        for (int64_t x = 0; x < width; x++)                                                                    \
          {                                                                                                    \
            const int64_t c = lo + x;                                                                          \
            T s = row[x];                                                                                      \
            if (p->mode == 0)                                                                                  \
              qk[c] = s;                                                                                       \
            if (sc != 0)                                                                                       \
              s = sc * tanh_##NAME (s / sc);                                                                   \
            if (p->mode == 1)                                                                                  \
              qk[c] = s;                                                                                       \
            T bias = 0;                                                                                        \
            if (mb && c < j->mask_len)                                                                         \
              bias = mb[c * mstep] ? 0 : -INFINITY;                                                            \
            else if (mf && c < j->mask_len)                                                                    \
              bias = mf[c * mstep];                                                                            \
            if (x < a || x >= z)                                                                               \
              bias += -INFINITY;                                                                               \
            any |= bias != -INFINITY;                                                                          \
            s += bias;                                                                                         \
            row[x] = s;                                                                                        \
            if (p->mode == 2)                                                                                  \
              qk[c] = s;                                                                                       \
            max = s > max ? s : max;                                                                           \
          }                                                                                                    \
        a = 0;                                                                                                 \
        z = width;                                                                                             \
      }                                                                                                        \
    else                                                                                                       \
      {                                                                                                        \
        T *r = row + a;                                                                                        \
        const int64_t n = z - a, c0 = lo + a;                                                                  \
        if (sc != 0)                                                                                           \
          for (int64_t x = 0; x < n; x++)                                                                      \
            r[x] = sc * tanh_##NAME (r[x] / sc);                                                               \
        if (mb)                                                                                                \
          for (int64_t x = 0; x < n; x++)                                                                      \
            {                                                                                                  \
              gboolean keep = mb[(c0 + x) * mstep] != 0;                                                       \
              any |= keep;                                                                                     \
              r[x] = keep ? r[x] : -INFINITY;                                                                  \
            }                                                                                                  \
        else if (mf)                                                                                           \
          for (int64_t x = 0; x < n; x++)                                                                      \
            {                                                                                                  \
              T m = mf[(c0 + x) * mstep];                                                                      \
              any |= m != -INFINITY;                                                                           \
              r[x] += m;                                                                                       \
            }                                                                                                  \
        else                                                                                                   \
          any = n > 0;                                                                                         \
        for (int64_t x = 0; x < n; x++)                                                                        \
          max = r[x] > max ? r[x] : max;                                                                       \
      }                                                                                                        \
    /* Keys outside [a, z) get probability 0; a row with no key left is all zero (not NaN). */               \
    memset (row, 0, a * sizeof (T));                                                                           \
    memset (row + z, 0, (width - z) * sizeof (T));                                                             \
    if (!any || max == -INFINITY)                                                                              \
      memset (row + a, 0, (z - a) * sizeof (T));                                                               \
    else                                                                                                       \
      {                                                                                                        \
        double sum = 0;                                                                                        \
        for (int64_t x = a; x < z; x++)                                                                        \
          {                                                                                                    \
            T e = exp_##NAME (row[x] - max);                                                                   \
            row[x] = e;                                                                                        \
            sum += e;                                                                                          \
          }                                                                                                    \
        T inv = (T) (1.0 / sum);                                                                               \
        for (int64_t x = a; x < z; x++)                                                                        \
          row[x] *= inv;                                                                                       \
      }                                                                                                        \
    if (qk && p->mode == 3)                                                                                    \
      {                                                                                                        \
        memset (qk, 0, lo * sizeof (T));                                                                       \
        memcpy (qk + lo, row, width * sizeof (T));                                                             \
        memset (qk + lo + width, 0, (j->total - lo - width) * sizeof (T));                                    \
      }                                                                                                        \
  }                                                                                                            \
                                                                                                               \
  /* One unit: a block of query rows of every query head that shares key/value head g. */                    \
  static void attention_units_##NAME (int64_t begin, int64_t end, gpointer data)                             \
  {                                                                                                            \
    const AttentionJob *j = data;                                                                              \
    T *scores = g_new (T, ROW_BLOCK * MAX (j->total, 1));                                                      \
    for (int64_t u = begin; u < end; u++)                                                                      \
      {                                                                                                        \
        int64_t blk = u % j->n_blocks, bg = u / j->n_blocks;                                                   \
        int64_t g = bg % j->Hkv, b = bg / j->Hkv;                                                              \
        int64_t i0 = blk * ROW_BLOCK, rows = MIN (ROW_BLOCK, j->Sq - i0), lo, hi;                              \
        attention_key_range (j, b, i0, rows, &lo, &hi);                                                        \
        const T *k = (const T *) j->k + b * j->lk.batch_stride + g * j->lk.head_stride + lo * j->lk.ld;       \
        const T *v = (const T *) j->v + b * j->lv.batch_stride + g * j->lv.head_stride + lo * j->lv.ld;       \
        /* Heads whose rows are evenly spaced share one product (decode, or 4-D with one block). */         \
        int64_t step = j->merge ? j->group : 1;                                                                \
        for (int64_t h0 = g * j->group; h0 < (g + 1) * j->group; h0 += step)                                  \
          {                                                                                                    \
            int64_t m = step * rows;                                                                           \
            const T *q = (const T *) j->q + b * j->lq.batch_stride + h0 * j->lq.head_stride + i0 * j->lq.ld;  \
            T *y = (T *) j->y + b * j->ly.batch_stride + h0 * j->ly.head_stride + i0 * j->ly.ld;              \
            int64_t q_ld = j->merge ? j->q_ld_merged : j->lq.ld, y_ld = j->merge ? j->y_ld_merged : j->ly.ld;  \
            if (hi <= lo)                                                                                      \
              {                                                                                                \
                /* Every key masked for these rows: zero output rows (and probabilities). */                 \
                memset (scores, 0, m * sizeof (T));                                                            \
                for (int64_t r = 0; r < m; r++)                                                                \
                  {                                                                                            \
                    memset (y + r * y_ld, 0, j->Dv * sizeof (T));                                              \
                    if (j->qk)                                                                                 \
                      attention_row_##NAME (j, b, h0 + r / rows, i0 + r % rows, scores, 0, 0);                 \
                  }                                                                                            \
                continue;                                                                                      \
              }                                                                                                \
            gemm_##NAME (TRUE, m, hi - lo, j->D, (T) j->alpha, q, q_ld, k, j->lk.ld, scores, hi - lo);         \
            for (int64_t r = 0; r < m; r++)                                                                    \
              attention_row_##NAME (j, b, h0 + r / rows, i0 + r % rows, scores + r * (hi - lo), lo, hi - lo);  \
            gemm_##NAME (FALSE, m, j->Dv, hi - lo, 1, scores, hi - lo, v, j->lv.ld, y, y_ld);                  \
          }                                                                                                    \
      }                                                                                                        \
    g_free (scores);                                                                                           \
  }

OWB_CPU_FOR_FLOATS (DEFINE_ATTENTION)

/* Copies K (or V) of one batch and head, 3-D or 4-D, into rows [at, at + seq) of a (batch, heads, total, size)
 * cache. */
static void
copy_head_rows (char *dst, const char *src, HeadLayout l, int64_t b, int64_t g, int64_t heads, int64_t seq,
                int64_t total, int64_t at, int64_t size, gsize es)
{
  char *d = dst + (((b * heads + g) * total + at) * size) * es;
  const char *s = src + (b * l.batch_stride + g * l.head_stride) * es;
  if (l.ld == size)
    memcpy (d, s, seq * size * es);
  else
    for (int64_t r = 0; r < seq; r++)
      memcpy (d + r * size * es, s + r * l.ld * es, size * es);
}

static gboolean
attention_compute (OwbKernelContext *ctx, GError **error)
{
  const AttentionParams *p = ctx->state;
  OwbTensor *q = ctx->inputs[0], *k = ctx->inputs[1], *v = ctx->inputs[2];
  OwbTensor *mask = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  OwbTensor *past_k = ctx->n_inputs > 4 ? ctx->inputs[4] : NULL;
  OwbTensor *past_v = ctx->n_inputs > 5 ? ctx->inputs[5] : NULL;
  OwbTensor *nonpad = ctx->n_inputs > 6 ? ctx->inputs[6] : NULL;
  OwbTensor *present_k = ctx->n_outputs > 1 ? ctx->outputs[1] : NULL;
  OwbTensor *present_v = ctx->n_outputs > 2 ? ctx->outputs[2] : NULL;
  OwbTensor *qk_out = ctx->n_outputs > 3 ? ctx->outputs[3] : NULL;
  OwbDataType dtype = q->dtype;
  gsize es = owb_data_type_size (dtype);

  if (k->dtype != dtype || v->dtype != dtype || (past_k && past_k->dtype != dtype) || (past_v && past_v->dtype != dtype))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "Q, K, V and the past key/value must have one element type");
      return FALSE;
    }
  if ((q->rank != 3 && q->rank != 4) || k->rank != q->rank || v->rank != q->rank)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "Q, K and V must all have rank 3 or all rank 4");
      return FALSE;
    }
  if (!past_k != !past_v)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "past_key and past_value must be given together");
      return FALSE;
    }
  gboolean is_3d = q->rank == 3;
  int64_t B = q->dims[0], Hq, Hkv, Sq, Skv, D, Dv;
  if (is_3d)
    {
      Hq = p->q_heads;
      Hkv = p->kv_heads;
      if (Hq <= 0 || Hkv <= 0 || q->dims[2] % Hq || k->dims[2] % Hkv || v->dims[2] % Hkv)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                                "3-D inputs need q_num_heads and kv_num_heads dividing the hidden sizes");
          return FALSE;
        }
      Sq = q->dims[1];
      Skv = k->dims[1];
      D = q->dims[2] / Hq;
      Dv = v->dims[2] / Hkv;
      if (k->dims[2] / Hkv != D || v->dims[1] != Skv)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "Q, K and V shapes do not agree");
          return FALSE;
        }
    }
  else
    {
      Hq = q->dims[1];
      Sq = q->dims[2];
      D = q->dims[3];
      Hkv = k->dims[1];
      Skv = k->dims[2];
      Dv = v->dims[3];
      if (k->dims[3] != D || v->dims[1] != Hkv || v->dims[2] != Skv)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "Q, K and V shapes do not agree");
          return FALSE;
        }
    }
  if (k->dims[0] != B || v->dims[0] != B)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "Q, K and V batch sizes differ");
      return FALSE;
    }
  if (Hkv <= 0 || Hq % Hkv != 0)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "the query head count %" G_GINT64_FORMAT " is not a multiple of the key/value head count %"
                            G_GINT64_FORMAT, Hq, Hkv);
      return FALSE;
    }
  int64_t P = 0;
  if (past_k)
    {
      if (past_k->rank != 4 || past_v->rank != 4 || past_k->dims[0] != B || past_v->dims[0] != B
          || past_k->dims[1] != Hkv || past_v->dims[1] != Hkv || past_k->dims[3] != D || past_v->dims[3] != Dv
          || past_k->dims[2] != past_v->dims[2])
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                                "past_key/past_value must be (batch, kv_num_heads, past_length, head_size)");
          return FALSE;
        }
      P = past_k->dims[2];
    }
  int64_t T = P + Skv;
  if (nonpad && (nonpad->dtype != OWB_TYPE_INT64 || nonpad->nelems != B))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "nonpad_kv_seqlen must be int64 of shape (batch)");
      return FALSE;
    }
  if (!fits_int (Hq * D) || !fits_int (Hkv * MAX (D, Dv)) || !fits_int (Hq * Dv) || !fits_int (T)
      || !fits_int (Sq))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "Attention sizes exceed what the BLAS interface accepts");
      return FALSE;
    }

  /* The mask: right-aligned broadcast to (batch, q_heads, q_len, mask_len); keys past mask_len are masked. */
  g_autoptr (OwbTensor) mask_cast = NULL;
  int64_t ms[4] = { 0, 0, 0, 0 }, mask_len = 0;
  if (mask)
    {
      if (mask->rank < 1 || mask->rank > 4)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "attn_mask must have rank 1 to 4");
          return FALSE;
        }
      mask_len = mask->dims[mask->rank - 1];
      int64_t target[4] = { B, Hq, Sq, mask_len };
      for (int d = 0; d < mask->rank; d++)
        {
          int64_t md = mask->dims[d], td = target[4 - mask->rank + d];
          if (md != 1 && md != td)
            {
              owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                                    "attn_mask does not broadcast to (batch, heads, q_len, total_len)");
              return FALSE;
            }
        }
      if (mask_len > T)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                                "attn_mask's last dimension %" G_GINT64_FORMAT " is longer than the %" G_GINT64_FORMAT
                                " keys", mask_len, T);
          return FALSE;
        }
      _owb_cpu_broadcast_strides (mask->rank, mask->dims, 4, target, ms);
      if (mask->dtype != OWB_TYPE_BOOL && mask->dtype != dtype)
        {
          mask_cast = owb_tensor_cast (mask, dtype, error);
          if (!mask_cast)
            return FALSE;
          mask = mask_cast;
        }
    }

  /* Keys and values: past + new in one (batch, kv_heads, total, size) buffer when there is a past or a
   * present output to fill; otherwise read in place. */
  g_autofree char *k_tmp = NULL, *v_tmp = NULL;
  const void *kd = k->data, *vd = v->data;
  HeadLayout lk = head_layout (is_3d, Hkv, Skv, D), lv = head_layout (is_3d, Hkv, Skv, Dv);
  if (past_k || present_k || present_v)
    {
      char *kc = present_k ? present_k->data : (k_tmp = g_malloc (MAX (B * Hkv * T * D * es, 1)));
      char *vc = present_v ? present_v->data : (v_tmp = g_malloc (MAX (B * Hkv * T * Dv * es, 1)));
      if ((present_k && present_k->nelems != B * Hkv * T * D) || (present_v && present_v->nelems != B * Hkv * T * Dv))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "present_key/present_value have unexpected shapes");
          return FALSE;
        }
      for (int64_t b = 0; b < B; b++)
        for (int64_t g = 0; g < Hkv; g++)
          {
            if (P > 0)
              {
                copy_head_rows (kc, past_k->data, head_layout (FALSE, Hkv, P, D), b, g, Hkv, P, T, 0, D, es);
                copy_head_rows (vc, past_v->data, head_layout (FALSE, Hkv, P, Dv), b, g, Hkv, P, T, 0, Dv, es);
              }
            copy_head_rows (kc, k->data, lk, b, g, Hkv, Skv, T, P, D, es);
            copy_head_rows (vc, v->data, lv, b, g, Hkv, Skv, T, P, Dv, es);
          }
      kd = kc;
      vd = vc;
      lk = head_layout (FALSE, Hkv, T, D);
      lv = head_layout (FALSE, Hkv, T, Dv);
    }

  /* Causal and window alignment: an internal cache puts the queries after the past keys; an external one
   * (nonpad_kv_seqlen) after nonpad - q_len keys. Clamping keeps the arithmetic exact without overflow. */
  g_autofree int64_t *offset = g_new0 (int64_t, MAX (B, 1));
  g_autofree int64_t *limits = nonpad ? g_new (int64_t, MAX (B, 1)) : NULL;
  const int64_t bound = G_GINT64_CONSTANT (1) << 40;
  for (int64_t b = 0; b < B; b++)
    {
      if (nonpad)
        {
          int64_t n = CLAMP (((const int64_t *) nonpad->data)[b], -bound, bound);
          limits[b] = n;
          if (!past_k)
            offset[b] = n - Sq;
        }
      if (past_k)
        offset[b] = P;
    }

  double scale = p->has_scale ? p->scale : D > 0 ? 1.0 / sqrt ((double) D) : 1.0;
  double root = sqrt (scale);
  AttentionJob job = {
    .p = p, .Hq = Hq, .Hkv = Hkv, .Sq = Sq, .total = T, .D = D, .Dv = Dv, .group = Hq / Hkv,
    .n_blocks = MAX ((Sq + ROW_BLOCK - 1) / ROW_BLOCK, 1),
    /* Q and K are each scaled by sqrt(scale) in the input type, as the spec's function body does. */
    .alpha = dtype == OWB_TYPE_FLOAT ? (double) ((float) root * (float) root) : root * root,
    .q = q->data, .k = kd, .v = vd, .y = ctx->outputs[0]->data, .qk = qk_out ? qk_out->data : NULL,
    .lq = head_layout (is_3d, Hq, Sq, D), .lk = lk, .lv = lv, .ly = head_layout (is_3d, Hq, Sq, Dv),
    .mask = mask ? mask->data : NULL, .mask_bool = mask && mask->dtype == OWB_TYPE_BOOL, .mask_len = mask_len,
    .offset = offset, .nonpad = limits,
  };
  memcpy (job.ms, ms, sizeof ms);
  /* Rows of a unit's heads are evenly spaced when the unit covers every query row and either there is one
   * (the head stride is then the row stride) or heads follow each other (4-D). */
  if (job.group > 1 && job.n_blocks == 1 && job.group * Sq <= ROW_BLOCK
      && (Sq == 1 || (job.lq.head_stride == Sq * job.lq.ld && job.ly.head_stride == Sq * job.ly.ld)))
    {
      job.merge = TRUE;
      job.q_ld_merged = Sq == 1 ? job.lq.head_stride : job.lq.ld;
      job.y_ld_merged = Sq == 1 ? job.ly.head_stride : job.ly.ld;
    }
  if (qk_out && qk_out->nelems != B * Hq * Sq * T)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "qk_matmul_output has an unexpected shape");
      return FALSE;
    }
  if (B * Hq * Sq == 0)
    return TRUE;
  int64_t units = B * Hkv * job.n_blocks;
  int64_t grain = MAX (1, units / (4 * pool_size (ctx->pool)));
  owb_parallel_for (blas_units_pool (ctx->pool), units, grain,
                    dtype == OWB_TYPE_DOUBLE ? attention_units_DOUBLE : attention_units_FLOAT, &job);
  return TRUE;
}

/* ---- FlexAttention ---------------------------------------------------------------------------- */

typedef struct {
  int64_t Hq, L, S, E, Ev, group;
  double alpha;
  const void *q, *k, *v;
  void *scores, *y;
} FlexJob;

#define DEFINE_FLEX(T, NAME)                                                                                  \
  static void flex_scores_##NAME (int64_t begin, int64_t end, gpointer data)                                 \
  {                                                                                                           \
    const FlexJob *j = data;                                                                                  \
    for (int64_t u = begin; u < end; u++)                                                                     \
      {                                                                                                       \
        int64_t b = u / j->Hq, h = u % j->Hq, g = h / j->group, hkv = j->Hq / j->group;                       \
        gemm_##NAME (TRUE, j->L, j->S, j->E, (T) j->alpha, (const T *) j->q + u * j->L * j->E, j->E,          \
                     (const T *) j->k + (b * hkv + g) * j->S * j->E, j->E, (T *) j->scores + u * j->L * j->S, \
                     j->S);                                                                                   \
      }                                                                                                       \
  }                                                                                                           \
  static void flex_output_##NAME (int64_t begin, int64_t end, gpointer data)                                 \
  {                                                                                                           \
    const FlexJob *j = data;                                                                                  \
    for (int64_t u = begin; u < end; u++)                                                                     \
      {                                                                                                       \
        int64_t b = u / j->Hq, h = u % j->Hq, g = h / j->group, hkv = j->Hq / j->group;                       \
        gemm_##NAME (FALSE, j->L, j->Ev, j->S, 1, (const T *) j->scores + u * j->L * j->S, j->S,              \
                     (const T *) j->v + (b * hkv + g) * j->S * j->Ev, j->Ev, (T *) j->y + u * j->L * j->Ev,   \
                     j->Ev);                                                                                  \
      }                                                                                                       \
  }                                                                                                           \
  /* Plain softmax over the last axis, as the Softmax op of the function body computes it. */                \
  static void softmax_rows_##NAME (T *x, int64_t rows, int64_t n)                                             \
  {                                                                                                           \
    for (int64_t r = 0; r < rows; r++, x += n)                                                                \
      {                                                                                                       \
        T max = -INFINITY;                                                                                    \
        for (int64_t c = 0; c < n; c++)                                                                       \
          max = x[c] > max ? x[c] : max;                                                                      \
        double sum = 0;                                                                                       \
        for (int64_t c = 0; c < n; c++)                                                                       \
          sum += x[c] = exp_##NAME (x[c] - max);                                                              \
        T inv = (T) (1.0 / sum);                                                                              \
        for (int64_t c = 0; c < n; c++)                                                                       \
          x[c] *= inv;                                                                                        \
      }                                                                                                       \
  }

OWB_CPU_FOR_FLOATS (DEFINE_FLEX)

/* Runs a modifier graph on `*t` (replacing it) and checks it kept the shape; the result is brought back to
 * `dtype`. */
static gboolean
run_modifier (OwbKernelContext *ctx, const char *name, OwbTensor **t, OwbDataType dtype, GError **error)
{
  const OwbAttribute *a = owb_node_get_attribute (ctx->node, name);
  if (!a || a->type != OWB_ATTR_GRAPH || !a->g)
    return TRUE;
  OwbTensor *out = NULL;
  if (!owb_kernel_context_run_subgraph (ctx, a->g, 1, t, &out, error))
    return FALSE;
  if (!out || out->kind != OWB_VALUE_TENSOR || !owb_tensor_same_shape (out, *t))
    {
      if (out)
        owb_tensor_unref (out);
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "the %s graph must return a tensor of its input's shape",
                            name);
      return FALSE;
    }
  if (out->dtype != dtype)
    {
      OwbTensor *c = owb_tensor_cast (out, dtype, error);
      owb_tensor_unref (out);
      if (!c)
        return FALSE;
      out = c;
    }
  owb_tensor_unref (*t);
  *t = out;
  return TRUE;
}

static gboolean
flex_attention_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *q = ctx->inputs[0], *k = ctx->inputs[1], *v = ctx->inputs[2];
  OwbDataType dtype = q->dtype;
  if (k->dtype != dtype || v->dtype != dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "Q, K and V must have one element type");
      return FALSE;
    }
  if (q->rank != 4 || k->rank != 4 || v->rank != 4)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "Q, K and V must have rank 4");
      return FALSE;
    }
  int64_t B = q->dims[0], Hq = q->dims[1], L = q->dims[2], E = q->dims[3];
  int64_t Hkv = k->dims[1], S = k->dims[2], Ev = v->dims[3];
  if (k->dims[0] != B || v->dims[0] != B || v->dims[1] != Hkv || v->dims[2] != S || k->dims[3] != E || Hkv <= 0
      || Hq % Hkv != 0)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "Q, K and V shapes do not agree");
      return FALSE;
    }
  if (!fits_int (E) || !fits_int (Ev) || !fits_int (S) || !fits_int (L))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "FlexAttention sizes exceed what the BLAS interface accepts");
      return FALSE;
    }
  /* Scores and probabilities live in softmax_precision (default float, or double for double inputs). */
  int64_t precision = owb_node_get_int (ctx->node, "softmax_precision", dtype == OWB_TYPE_DOUBLE ? 11 : 1);
  OwbDataType pt = (OwbDataType) precision;
  if (pt != OWB_TYPE_FLOAT && pt != OWB_TYPE_DOUBLE && pt != OWB_TYPE_FLOAT16 && pt != OWB_TYPE_BFLOAT16)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "unsupported softmax_precision %" G_GINT64_FORMAT,
                            precision);
      return FALSE;
    }

  int64_t dims[4] = { B, Hq, L, S };
  OwbTensor *scores = owb_tensor_new_uninit (dtype, 4, dims, error);
  if (!scores)
    return FALSE;
  const OwbAttribute *scale_attr = owb_node_get_attribute (ctx->node, "scale");
  float scale = scale_attr ? scale_attr->f : E > 0 ? (float) (1.0 / sqrt ((double) E)) : 1.0f;
  double root = sqrtf (scale);
  FlexJob job = {
    .Hq = Hq, .L = L, .S = S, .E = E, .Ev = Ev, .group = Hq / Hkv,
    .alpha = dtype == OWB_TYPE_FLOAT ? (double) ((float) root * (float) root) : root * root,
    .q = q->data, .k = k->data, .v = v->data, .scores = scores->data, .y = ctx->outputs[0]->data,
  };
  int64_t units = B * Hq;
  gboolean dbl = dtype == OWB_TYPE_DOUBLE;
  owb_parallel_for (blas_units_pool (ctx->pool), units, 1, dbl ? flex_scores_DOUBLE : flex_scores_FLOAT, &job);

  gboolean ok = TRUE;
  if (pt != dtype)
    {
      OwbTensor *c = owb_tensor_cast (scores, pt, error);
      owb_tensor_unref (scores);
      if (!(scores = c))
        return FALSE;
    }
  ok = run_modifier (ctx, "score_mod", &scores, pt, error);
  /* Half precisions: softmax through float, rounding the result back to the precision. */
  if (ok && (pt == OWB_TYPE_FLOAT16 || pt == OWB_TYPE_BFLOAT16))
    {
      OwbTensor *f = owb_tensor_cast (scores, OWB_TYPE_FLOAT, error);
      if (!f)
        ok = FALSE;
      else
        {
          softmax_rows_FLOAT (f->data, B * Hq * L, S);
          OwbTensor *c = owb_tensor_cast (f, pt, error);
          owb_tensor_unref (f);
          ok = c != NULL;
          if (c)
            {
              owb_tensor_unref (scores);
              scores = c;
            }
        }
    }
  else if (ok && pt == OWB_TYPE_DOUBLE)
    softmax_rows_DOUBLE (scores->data, B * Hq * L, S);
  else if (ok)
    softmax_rows_FLOAT (scores->data, B * Hq * L, S);
  ok = ok && run_modifier (ctx, "prob_mod", &scores, pt, error);
  if (ok && scores->dtype != dtype)
    {
      OwbTensor *c = owb_tensor_cast (scores, dtype, error);
      ok = c != NULL;
      if (c)
        {
          owb_tensor_unref (scores);
          scores = c;
        }
    }
  if (ok)
    {
      job.scores = scores->data;
      owb_parallel_for (blas_units_pool (ctx->pool), units, 1, dbl ? flex_output_DOUBLE : flex_output_FLOAT, &job);
    }
  owb_tensor_unref (scores);
  return ok;
}

/* ---- RotaryEmbedding -------------------------------------------------------------------------- */

typedef struct {
  gboolean interleaved;
  int64_t rotary_dim, num_heads;
} RotaryParams;

static gboolean
rotary_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state, GError **error)
{
  RotaryParams *p = g_new0 (RotaryParams, 1);
  p->interleaved = owb_node_get_int (node, "interleaved", 0) != 0;
  p->rotary_dim = owb_node_get_int (node, "rotary_embedding_dim", 0);
  p->num_heads = owb_node_get_int (node, "num_heads", 0);
  if (p->rotary_dim < 0 || p->rotary_dim % 2 || p->num_heads < 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "RotaryEmbedding '%s': invalid attribute values",
                   node->name ? node->name : "");
      g_free (p);
      return FALSE;
    }
  *state = p;
  return TRUE;
}

typedef struct {
  const RotaryParams *p;
  int64_t H, S, D, rd, cache_rows, ids_batch, cache_batch;
  gboolean is_3d;
  const float *x, *cos, *sin;
  const int64_t *ids;
  float *y;
  gboolean bad_id;
} RotaryJob;

static void
rotary_rows (int64_t begin, int64_t end, gpointer data)
{
  RotaryJob *j = data;
  int64_t half = j->rd / 2;
  for (int64_t u = begin; u < end; u++)
    {
      /* u walks (batch, head, seq) for 4-D and (batch, seq, head) for 3-D: the storage order of each. */
      int64_t b, s;
      if (j->is_3d)
        {
          b = u / (j->S * j->H);
          s = (u / j->H) % j->S;
        }
      else
        {
          b = u / (j->H * j->S);
          s = u % j->S;
        }
      const float *x = j->x + u * j->D;
      float *y = j->y + u * j->D;
      int64_t row;
      if (j->ids)
        {
          row = j->ids[(j->ids_batch == 1 ? 0 : b) * j->S + s];
          if (row < 0 || row >= j->cache_rows)
            {
              j->bad_id = TRUE;
              row = 0;
            }
        }
      else
        row = (j->cache_batch == 1 ? 0 : b) * j->S + s;
      const float *c = j->cos + row * half, *sn = j->sin + row * half;
      if (j->p->interleaved)
        for (int64_t i = 0; i < half; i++)
          {
            float x1 = x[2 * i], x2 = x[2 * i + 1];
            y[2 * i] = c[i] * x1 - sn[i] * x2;
            y[2 * i + 1] = sn[i] * x1 + c[i] * x2;
          }
      else
        for (int64_t i = 0; i < half; i++)
          {
            float x1 = x[i], x2 = x[half + i];
            y[i] = c[i] * x1 - sn[i] * x2;
            y[half + i] = sn[i] * x1 + c[i] * x2;
          }
      if (j->D > j->rd)
        memcpy (y + j->rd, x + j->rd, (j->D - j->rd) * sizeof (float));
    }
}

static gboolean
rotary_compute (OwbKernelContext *ctx, GError **error)
{
  const RotaryParams *p = ctx->state;
  OwbTensor *x = ctx->inputs[0], *cos_t = ctx->inputs[1], *sin_t = ctx->inputs[2];
  OwbTensor *ids = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  if (cos_t->dtype != OWB_TYPE_FLOAT || sin_t->dtype != OWB_TYPE_FLOAT)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "cos_cache and sin_cache must have X's element type");
      return FALSE;
    }
  if (x->rank != 3 && x->rank != 4)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "X must have rank 3 or 4");
      return FALSE;
    }
  RotaryJob job = { .p = p, .is_3d = x->rank == 3, .x = x->data, .cos = cos_t->data, .sin = sin_t->data,
                    .y = ctx->outputs[0]->data };
  int64_t B = x->dims[0];
  if (job.is_3d)
    {
      if (p->num_heads <= 0 || x->dims[2] % p->num_heads)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "a 3-D X needs num_heads dividing its hidden size");
          return FALSE;
        }
      job.S = x->dims[1];
      job.H = p->num_heads;
      job.D = x->dims[2] / p->num_heads;
    }
  else
    {
      job.H = x->dims[1];
      job.S = x->dims[2];
      job.D = x->dims[3];
    }
  job.rd = p->rotary_dim ? p->rotary_dim : job.D;
  if (job.rd > job.D || job.rd % 2)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "the rotary dimension %" G_GINT64_FORMAT " must be even and at most the head size %"
                            G_GINT64_FORMAT, job.rd, job.D);
      return FALSE;
    }
  int64_t half = job.rd / 2;
  if (!owb_tensor_same_shape (cos_t, sin_t) || cos_t->dims[cos_t->rank - 1] != half)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "cos_cache and sin_cache must have the same shape, ending in rotary_dim / 2 = %"
                            G_GINT64_FORMAT, half);
      return FALSE;
    }
  if (ids)
    {
      if (ids->dtype != OWB_TYPE_INT64 || ids->rank != 2 || (ids->dims[0] != B && ids->dims[0] != 1)
          || ids->dims[1] != job.S || cos_t->rank != 2)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                                "position_ids must be int64 (batch, seq) with 2-D caches (max_position, rotary_dim / 2)");
          return FALSE;
        }
      job.ids = ids->data;
      job.ids_batch = ids->dims[0];
      job.cache_rows = cos_t->dims[0];
    }
  else if (cos_t->rank != 3 || (cos_t->dims[0] != B && cos_t->dims[0] != 1) || cos_t->dims[1] != job.S)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "without position_ids the caches must be (batch, seq, rotary_dim / 2)");
      return FALSE;
    }
  else
    job.cache_batch = cos_t->dims[0];
  int64_t rows = B * job.H * job.S;
  if (job.D > 0)
    owb_parallel_for (ctx->pool, rows, MAX (1, ELEMENTWISE_GRAIN / job.D), rotary_rows, &job);
  if (job.bad_id)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,
                            "a position id is outside the %" G_GINT64_FORMAT " rows of the caches", job.cache_rows);
      return FALSE;
    }
  return TRUE;
}

/* ---- RMSNormalization ------------------------------------------------------------------------- */

typedef struct {
  int64_t n, w_stride; /* w_stride: 0 when one weight row serves every row */
  double epsilon;
  const void *x, *w;
  void *y;
} RmsJob;

#define DEFINE_RMS(T, NAME)                                                                                   \
  static void rms_rows_##NAME (int64_t begin, int64_t end, gpointer data)                                    \
  {                                                                                                           \
    const RmsJob *j = data;                                                                                   \
    for (int64_t r = begin; r < end; r++)                                                                     \
      {                                                                                                       \
        const T *x = (const T *) j->x + r * j->n, *w = (const T *) j->w + r * j->w_stride;                   \
        T *y = (T *) j->y + r * j->n;                                                                         \
        double ss = 0;                                                                                        \
        for (int64_t i = 0; i < j->n; i++)                                                                    \
          ss += (double) x[i] * x[i];                                                                         \
        T inv = (T) (1.0 / sqrt (ss / (double) j->n + j->epsilon));                                           \
        for (int64_t i = 0; i < j->n; i++)                                                                    \
          y[i] = x[i] * inv * w[i];                                                                           \
      }                                                                                                       \
  }

OWB_CPU_FOR_FLOATS (DEFINE_RMS)

static gboolean
rms_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  int64_t axis = owb_node_get_int (ctx->node, "axis", -1);
  if (axis < -x->rank || axis >= x->rank)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "axis %" G_GINT64_FORMAT " is out of range", axis);
      return FALSE;
    }
  if (axis < 0)
    axis += x->rank;
  if (w->rank > x->rank)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "scale does not broadcast to X");
      return FALSE;
    }
  for (int d = 0; d < w->rank; d++)
    if (w->dims[d] != 1 && w->dims[d] != x->dims[x->rank - w->rank + d])
      {
        owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "scale does not broadcast to X");
        return FALSE;
      }
  g_autoptr (OwbTensor) w_cast = NULL;
  if (w->dtype != x->dtype)
    {
      if (!(w_cast = owb_tensor_cast (w, x->dtype, error)))
        return FALSE;
      w = w_cast;
    }
  int64_t outer = 1, n = 1;
  for (int d = 0; d < x->rank; d++)
    {
      if (d < axis)
        outer *= x->dims[d];
      else
        n *= x->dims[d];
    }
  if (x->nelems == 0)
    return TRUE;

  /* Expand the scale to one row (when it does not vary across the outer axes) or to X's full shape. */
  int64_t strides[OWB_MAX_RANK];
  _owb_cpu_broadcast_strides (w->rank, w->dims, x->rank, x->dims, strides);
  gboolean per_row = FALSE;
  for (int d = 0; d < axis; d++)
    per_row |= strides[d] != 0;
  gsize es = owb_data_type_size (x->dtype);
  int64_t count = per_row ? x->nelems : n;
  g_autofree char *wx = NULL;
  const void *wd = w->data;
  if (w->nelems != count)
    {
      wx = _owb_cpu_scratch_new (ctx, count, es, "expanded scale", error);
      if (!wx)
        return FALSE;
      int first = per_row ? 0 : (int) axis;
      int64_t idx[OWB_MAX_RANK] = { 0 }, off = 0;
      for (int64_t i = 0; i < count; i++)
        {
          memcpy (wx + i * es, (const char *) w->data + off * es, es);
          for (int d = x->rank - 1; d >= first; d--)
            {
              off += strides[d];
              if (++idx[d] < x->dims[d])
                break;
              off -= strides[d] * x->dims[d];
              idx[d] = 0;
            }
        }
      wd = wx;
    }
  RmsJob job = { .n = n, .w_stride = per_row ? n : 0, .epsilon = owb_node_get_float (ctx->node, "epsilon", 1e-5f),
                 .x = x->data, .w = wd, .y = ctx->outputs[0]->data };
  owb_parallel_for (ctx->pool, outer, MAX (1, ELEMENTWISE_GRAIN / MAX (n, 1)),
                    x->dtype == OWB_TYPE_DOUBLE ? rms_rows_DOUBLE : rms_rows_FLOAT, &job);
  return TRUE;
}

/* ---- Swish, SwiGLU ---------------------------------------------------------------------------- */

typedef struct {
  double alpha;
  const void *a, *b;
  void *y;
} GateJob;

#define DEFINE_GATES(T, NAME)                                                                                 \
  static void swish_range_##NAME (int64_t begin, int64_t end, gpointer data)                                \
  {                                                                                                           \
    const GateJob *j = data;                                                                                  \
    const T *a = j->a;                                                                                        \
    T *y = j->y, alpha = (T) j->alpha;                                                                        \
    for (int64_t i = begin; i < end; i++)                                                                     \
      y[i] = a[i] / (1 + exp_##NAME (-alpha * a[i]));                                                         \
  }                                                                                                           \
  static void swiglu_range_##NAME (int64_t begin, int64_t end, gpointer data)                                \
  {                                                                                                           \
    const GateJob *j = data;                                                                                  \
    const T *a = j->a, *b = j->b;                                                                             \
    T *y = j->y, alpha = (T) j->alpha;                                                                        \
    for (int64_t i = begin; i < end; i++)                                                                     \
      y[i] = a[i] / (1 + exp_##NAME (-alpha * a[i])) * b[i];                                                  \
  }

OWB_CPU_FOR_FLOATS (DEFINE_GATES)

static gboolean
swish_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *x = ctx->inputs[0];
  GateJob job = { owb_node_get_float (ctx->node, "alpha", 1.0f), x->data, NULL, ctx->outputs[0]->data };
  owb_parallel_for (ctx->pool, x->nelems, ELEMENTWISE_GRAIN,
                    x->dtype == OWB_TYPE_DOUBLE ? swish_range_DOUBLE : swish_range_FLOAT, &job);
  return TRUE;
}

static gboolean
swiglu_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  if (a->dtype != b->dtype || !owb_tensor_same_shape (a, b) || a->rank != b->rank)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "A and B must have the same shape and element type");
      return FALSE;
    }
  GateJob job = { owb_node_get_float (ctx->node, "alpha", 1.0f), a->data, b->data, ctx->outputs[0]->data };
  owb_parallel_for (ctx->pool, a->nelems, ELEMENTWISE_GRAIN,
                    a->dtype == OWB_TYPE_DOUBLE ? swiglu_range_DOUBLE : swiglu_range_FLOAT, &job);
  return TRUE;
}

/* ---- TensorScatter ---------------------------------------------------------------------------- */

static gboolean
tensor_scatter_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *cache = ctx->inputs[0], *update = ctx->inputs[1], *out = ctx->outputs[0];
  OwbTensor *indices = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  gboolean circular = strcmp (owb_node_get_string (ctx->node, "mode", "linear"), "circular") == 0;
  int rank = cache->rank;
  int64_t axis = owb_node_get_int (ctx->node, "axis", -2);
  if (axis < 0)
    axis += rank;
  if (axis <= 0 || axis >= rank || update->rank != rank || update->dtype != cache->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "bad axis, or past_cache and update ranks/types differ");
      return FALSE;
    }
  for (int d = 0; d < rank; d++)
    if (d == axis ? update->dims[d] > cache->dims[d] : update->dims[d] != cache->dims[d])
      {
        owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "update does not fit past_cache on axis %d", d);
        return FALSE;
      }
  int64_t batch = cache->dims[0];
  if (indices && (indices->dtype != OWB_TYPE_INT64 || indices->nelems != batch))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "write_indices must be int64 of shape (batch)");
      return FALSE;
    }
  gsize es = element_size (cache);
  _owb_cpu_copy_elements (out->data, cache->data, cache->nelems, es, cache->dtype == OWB_TYPE_STRING);
  int64_t prefix = 1, inner = 1, max_len = cache->dims[axis], len = update->dims[axis];
  for (int d = 0; d < axis; d++)
    prefix *= cache->dims[d];
  for (int d = axis + 1; d < rank; d++)
    inner *= cache->dims[d];
  if (prefix == 0 || len == 0 || inner == 0)
    return TRUE;
  int64_t per_batch = prefix / batch;
  const int64_t *w = indices ? indices->data : NULL;
  for (int64_t b = 0; b < batch; b++)
    {
      int64_t start = w ? w[b] : 0;
      if (!circular && (start < 0 || start > max_len - len))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,
                                "write index %" G_GINT64_FORMAT " with %" G_GINT64_FORMAT
                                " updates overruns the cache length %" G_GINT64_FORMAT, start, len, max_len);
          return FALSE;
        }
      for (int64_t p = b * per_batch; p < (b + 1) * per_batch; p++)
        {
          const char *src = (const char *) update->data + p * len * inner * es;
          char *dst = (char *) out->data + p * max_len * inner * es;
          if (!circular)
            {
              _owb_cpu_copy_elements (dst + start * inner * es, src, len * inner, es, cache->dtype == OWB_TYPE_STRING);
              continue;
            }
          int64_t at = ((start % max_len) + max_len) % max_len;
          for (int64_t s = 0; s < len; s++, at = at + 1 == max_len ? 0 : at + 1)
            _owb_cpu_copy_elements (dst + at * inner * es, src + s * inner * es, inner, es, cache->dtype == OWB_TYPE_STRING);
        }
    }
  return TRUE;
}

/* ---- CausalConvWithState ---------------------------------------------------------------------- */

typedef struct {
  int64_t C, L, K;
  gboolean silu;
  const float *x, *w, *bias, *past;
  float *y, *state;
} CausalConvJob;

static void
causal_conv_channels (int64_t begin, int64_t end, gpointer data)
{
  const CausalConvJob *j = data;
  int64_t km1 = j->K - 1, n = j->L + km1;
  float *padded = g_new (float, MAX (n, 1));
  for (int64_t u = begin; u < end; u++)
    {
      int64_t c = u % j->C;
      if (j->past)
        memcpy (padded, j->past + u * km1, km1 * sizeof (float));
      else
        memset (padded, 0, km1 * sizeof (float));
      memcpy (padded + km1, j->x + u * j->L, j->L * sizeof (float));
      const float *w = j->w + c * j->K;
      float b = j->bias ? j->bias[c] : 0.0f;
      float *y = j->y + u * j->L;
      for (int64_t t = 0; t < j->L; t++)
        {
          float s = b;
          for (int64_t i = 0; i < j->K; i++)
            s += w[i] * padded[t + i];
          y[t] = j->silu ? s / (1.0f + expf (-s)) : s;
        }
      if (j->state)
        memcpy (j->state + u * km1, padded + j->L, km1 * sizeof (float));
    }
  g_free (padded);
}

static gboolean
causal_conv_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  OwbTensor *bias = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL, *past = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  OwbTensor *state = ctx->n_outputs > 1 ? ctx->outputs[1] : NULL;
  if (x->rank != 3 || w->rank != 3 || w->dims[0] != x->dims[1] || w->dims[1] != 1 || w->dims[2] < 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input must be (batch, channels, length), weight (channels, 1, k)");
      return FALSE;
    }
  int64_t B = x->dims[0], C = x->dims[1], K = w->dims[2];
  if ((bias && (bias->rank != 1 || bias->dims[0] != C))
      || (past && (past->rank != 3 || past->dims[0] != B || past->dims[1] != C || past->dims[2] != K - 1))
      || (state && state->nelems != B * C * (K - 1)))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "bias must be (channels) and past_state (batch, channels, k - 1)");
      return FALSE;
    }
  const char *act = owb_node_get_string (ctx->node, "activation", "none");
  CausalConvJob job = { .C = C, .L = x->dims[2], .K = K,
                        .silu = strcmp (act, "silu") == 0 || strcmp (act, "swish") == 0,
                        .x = x->data, .w = w->data, .bias = bias ? bias->data : NULL,
                        .past = past ? past->data : NULL, .y = ctx->outputs[0]->data,
                        .state = state ? state->data : NULL };
  owb_parallel_for (ctx->pool, B * C, MAX (1, ELEMENTWISE_GRAIN / MAX (job.L * K, 1)), causal_conv_channels, &job);
  return TRUE;
}

/* ---- LinearAttention -------------------------------------------------------------------------- */

typedef struct {
  int64_t T, Hq, Hkv, dk, dv, group, decay_width, beta_width;
  gboolean gated, delta;
  float scale;
  const float *q, *k, *v, *past, *decay, *beta;
  float *y, *state;
} LinearJob;

static void
linear_attention_heads (int64_t begin, int64_t end, gpointer data)
{
  const LinearJob *j = data;
  int64_t dk = j->dk, dv = j->dv;
  float *s = g_new (float, MAX (dk * dv, 1));
  float *upd = g_new (float, MAX (dv, 1));
  for (int64_t u = begin; u < end; u++)
    {
      int64_t b = u / j->Hkv, g = u % j->Hkv;
      if (j->past)
        memcpy (s, j->past + u * dk * dv, dk * dv * sizeof (float));
      else
        memset (s, 0, dk * dv * sizeof (float));
      for (int64_t t = 0; t < j->T; t++)
        {
          int64_t bt = b * j->T + t;
          const float *k = j->k + bt * j->Hkv * dk + g * dk;
          const float *v = j->v + bt * j->Hkv * dv + g * dv;
          if (j->gated)
            {
              /* Per-head scalar decay, or one per key dimension. */
              const float *dcy = j->decay + bt * j->decay_width;
              for (int64_t d = 0; d < dk; d++)
                {
                  float f = expf (j->decay_width == j->Hkv ? dcy[g] : dcy[g * dk + d]);
                  float *row = s + d * dv;
                  for (int64_t m = 0; m < dv; m++)
                    row[m] *= f;
                }
            }
          if (j->delta)
            {
              float beta = j->beta[bt * j->beta_width + (j->beta_width == 1 ? 0 : g)];
              for (int64_t m = 0; m < dv; m++)
                upd[m] = 0;
              for (int64_t d = 0; d < dk; d++)
                for (int64_t m = 0; m < dv; m++)
                  upd[m] += s[d * dv + m] * k[d];
              for (int64_t m = 0; m < dv; m++)
                upd[m] = beta * (v[m] - upd[m]);
            }
          else
            memcpy (upd, v, dv * sizeof (float));
          for (int64_t d = 0; d < dk; d++)
            for (int64_t m = 0; m < dv; m++)
              s[d * dv + m] += k[d] * upd[m];
          for (int64_t r = 0; r < j->group; r++)
            {
              int64_t h = g * j->group + r;
              const float *q = j->q + bt * j->Hq * dk + h * dk;
              float *y = j->y + bt * j->Hq * dv + h * dv;
              for (int64_t m = 0; m < dv; m++)
                y[m] = 0;
              for (int64_t d = 0; d < dk; d++)
                for (int64_t m = 0; m < dv; m++)
                  y[m] += q[d] * s[d * dv + m];
              for (int64_t m = 0; m < dv; m++)
                y[m] *= j->scale;
            }
        }
      if (j->state)
        memcpy (j->state + u * dk * dv, s, dk * dv * sizeof (float));
    }
  g_free (s);
  g_free (upd);
}

static gboolean
linear_attention_compute (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *in[6] = { NULL };
  for (int i = 0; i < 6 && i < ctx->n_inputs; i++)
    in[i] = ctx->inputs[i];
  OwbTensor *q = in[0], *k = in[1], *v = in[2], *past = in[3], *decay = in[4], *beta = in[5];
  OwbTensor *state = ctx->n_outputs > 1 ? ctx->outputs[1] : NULL;
  const char *rule = owb_node_get_string (ctx->node, "update_rule", "gated_delta");
  int64_t Hq = owb_node_get_int (ctx->node, "q_num_heads", 0), Hkv = owb_node_get_int (ctx->node, "kv_num_heads", 0);
  LinearJob job = { .gated = strcmp (rule, "gated") == 0 || strcmp (rule, "gated_delta") == 0,
                    .delta = strcmp (rule, "delta") == 0 || strcmp (rule, "gated_delta") == 0 };
  for (int i = 0; i < 6; i++)
    if (in[i] && in[i]->dtype != OWB_TYPE_FLOAT)
      {
        owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "input %d has an unsupported element type", i);
        return FALSE;
      }
  if (Hq <= 0 || Hkv <= 0 || Hq % Hkv || job.gated != (decay != NULL) || job.delta != (beta != NULL))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                            "bad head counts, or decay/beta inputs not matching update_rule \"%s\"", rule);
      return FALSE;
    }
  if (q->rank != 3 || k->rank != 3 || v->rank != 3 || q->dims[2] % Hq || k->dims[2] % Hkv || v->dims[2] % Hkv)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "query, key and value must be (batch, seq, heads * size)");
      return FALSE;
    }
  int64_t B = q->dims[0], T = q->dims[1];
  job.T = T;
  job.Hq = Hq;
  job.Hkv = Hkv;
  job.group = Hq / Hkv;
  job.dk = q->dims[2] / Hq;
  job.dv = v->dims[2] / Hkv;
  gboolean ok = k->dims[2] / Hkv == job.dk;
  for (int i = 1; i < 6; i++)
    if (i != 3 && in[i])
      ok = ok && in[i]->rank == 3 && in[i]->dims[0] == B && in[i]->dims[1] == T;
  if (decay)
    {
      job.decay_width = decay->dims[2];
      ok = ok && (job.decay_width == Hkv || job.decay_width == Hkv * job.dk);
    }
  if (beta)
    {
      job.beta_width = beta->dims[2];
      ok = ok && (job.beta_width == Hkv || job.beta_width == 1);
    }
  if (past)
    ok = ok && past->rank == 4 && past->dims[0] == B && past->dims[1] == Hkv && past->dims[2] == job.dk
         && past->dims[3] == job.dv;
  if (state)
    ok = ok && state->nelems == B * Hkv * job.dk * job.dv;
  if (!ok)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input shapes do not agree");
      return FALSE;
    }
  float scale = owb_node_get_float (ctx->node, "scale", 0.0f);
  job.scale = scale != 0.0f ? scale : (float) (1.0 / sqrt ((double) MAX (job.dk, 1)));
  job.q = q->data;
  job.k = k->data;
  job.v = v->data;
  job.past = past ? past->data : NULL;
  job.decay = decay ? decay->data : NULL;
  job.beta = beta ? beta->data : NULL;
  job.y = ctx->outputs[0]->data;
  job.state = state ? state->data : NULL;
  owb_parallel_for (ctx->pool, B * Hkv, 1, linear_attention_heads, &job);
  return TRUE;
}

static void
free_state (gpointer p)
{
  g_free (p);
}

const OwbKernelDef _owb_cpu_kernels_transformer[] = {
  { "Attention", "", 23, 0, OWB_CPU_TYPES_FLOATS, 0, attention_prepare, free_state, attention_compute },
  { "FlexAttention", "ai.onnx.preview", 1, 0, OWB_CPU_TYPES_FLOATS, 0, NULL, NULL, flex_attention_compute },
  { "RotaryEmbedding", "", 23, 0, OWB_TYPE_BIT (OWB_TYPE_FLOAT), 0, rotary_prepare, free_state, rotary_compute },
  { "RMSNormalization", "", 23, 0, OWB_CPU_TYPES_FLOATS, 0, NULL, NULL, rms_compute },
  { "Swish", "", 24, 0, OWB_CPU_TYPES_FLOATS, 0, NULL, NULL, swish_compute },
  { "SwiGLU", "", 28, 0, OWB_CPU_TYPES_FLOATS, 0, NULL, NULL, swiglu_compute },
  { "TensorScatter", "", 24, 0, 0, 0, NULL, NULL, tensor_scatter_compute },
  { "CausalConvWithState", "", 27, 0, OWB_TYPE_BIT (OWB_TYPE_FLOAT), 0, NULL, NULL, causal_conv_compute },
  { "LinearAttention", "", 27, 0, OWB_TYPE_BIT (OWB_TYPE_FLOAT), 0, NULL, NULL, linear_attention_compute },
  { NULL }
};
