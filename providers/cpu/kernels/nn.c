/* nn.c: CPU kernels of the nn op family: Conv, ConvTranspose, MatMul, Gemm and their integer forms,
 * with OpenBLAS doing the floating-point matrix products. */
#include "../cpu-conv-private.h"
#include "../cpu-gemv-private.h"
#include "../cpu-sgemm-private.h"
#include "../cpu-qgemm-private.h"
#include "conv-im2col-private.h"

#include <cblas.h>
#include <limits.h>
#include <string.h>

#define MAX_SP OWB_MAX_RANK
/* Elements of one im2col/col2im tile: large enough for an efficient GEMM, small enough to stay in
 * the outer caches and to bound memory on large images. */
#define COL_BUDGET (G_GINT64_CONSTANT (1) << 19)
#define MIN_TILE 64
/* Below this many multiply-adds a GEMM is not worth splitting over threads. */
#define PARALLEL_GEMM_WORK (G_GINT64_CONSTANT (1) << 21)

typedef OwbCpuConvParams ConvParams;
typedef OwbCpuConvGeom ConvGeom;

/* ---- attributes and geometry (shared with FusedConv: cpu-conv.c) ---- */

static gboolean
conv_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state, GError **error)
{
  ConvParams *p = g_new (ConvParams, 1);
  if (!_owb_cpu_conv_params_parse (node, p, error))
    {
      g_free (p);
      return FALSE;
    }
  *state = p;
  return TRUE;
}



/* ---- typed building blocks, stamped per float type ---- */

/* 16-byte GCC vectors (SSE/NEON) for the loops that BLAS does not cover: the build's -O2 does not
 * auto-vectorize, and these loops run over every output element. */
#define DEFINE_VECTOR_HELPERS(T, NAME)                                                                    \
  OWB_CPU_DEFINE_VEC16 (T, NAME)                                                                          \
  /* y[i] = a */                                                                                          \
  static inline void fill_##NAME (T *y, T a, int64_t n)                                                   \
  {                                                                                                       \
    vec_##NAME va = (vec_##NAME) {} + a;                                                                  \
    int64_t i = 0;                                                                                        \
    for (; i + LANES_##NAME <= n; i += LANES_##NAME)                                                      \
      vstore_##NAME (y + i, va);                                                                          \
    for (; i < n; i++)                                                                                    \
      y[i] = a;                                                                                           \
  }                                                                                                       \
  /* y[i] += x[i] */                                                                                      \
  static inline void add_##NAME (T *restrict y, const T *restrict x, int64_t n)                           \
  {                                                                                                       \
    int64_t i = 0;                                                                                        \
    for (; i + LANES_##NAME <= n; i += LANES_##NAME)                                                      \
      vstore_##NAME (y + i, vload_##NAME (y + i) + vload_##NAME (x + i));                                 \
    for (; i < n; i++)                                                                                    \
      y[i] += x[i];                                                                                       \
  }

OWB_CPU_FOR_FLOATS (DEFINE_VECTOR_HELPERS)

/* C = alpha op(A) op(B) + beta C through BLAS; handles the degenerate sizes BLAS rejects. */
#define BLAS_GEMM_FLOAT cblas_sgemm
#define BLAS_GEMM_DOUBLE cblas_dgemm

#define DEFINE_FLOAT_BLOCKS(T, NAME)                                                                              \
  static void gemm_##NAME (gboolean ta, gboolean tb, int64_t m, int64_t n, int64_t k, double alpha, const T *a,  \
                           int64_t lda, const T *b, int64_t ldb, double beta, T *c, int64_t ldc)                 \
  {                                                                                                             \
    if (m <= 0 || n <= 0)                                                                                       \
      return;                                                                                                   \
    if (k <= 0)                                                                                                 \
      {                                                                                                         \
        for (int64_t i = 0; i < m; i++)                                                                         \
          for (int64_t j = 0; j < n; j++)                                                                       \
            c[i * ldc + j] = beta == 0 ? (T) 0 : (T) (beta * c[i * ldc + j]);                                   \
        return;                                                                                                 \
      }                                                                                                         \
    BLAS_GEMM_##NAME (CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int) m,    \
                      (int) n, (int) k, (T) alpha, a, (int) MAX (lda, 1), b, (int) MAX (ldb, 1), (T) beta, c,   \
                      (int) MAX (ldc, 1));                                                                      \
  }                                                                                                             \
                                                                                                                \
  /* ConvTranspose: scatters col rows (output channel m, kernel offset) of input positions                     \
   * [q0, q0 + len) into the output planes of channels [m0, m1), adding. */                                    \
  static void col2im_##NAME (const ConvGeom *g, const T *col, int64_t q0, int64_t len, int64_t m0, int64_t m1,   \
                             T *y)                                                                              \
  {                                                                                                             \
    int last = g->nsp - 1;                                                                                      \
    int64_t in_last = g->in[last], out_last = g->out[last], s = g->s[last];                                     \
    for (int64_t m = m0; m < m1; m++)                                                                            \
      for (int64_t kk = 0; kk < g->ksize; kk++)                                                                  \
        {                                                                                                       \
          int64_t kc[MAX_SP], ic[MAX_SP];                                                                       \
          for (int64_t a = last, rest = kk; a >= 0; a--)                                                        \
            {                                                                                                   \
              kc[a] = rest % g->k[a];                                                                           \
              rest /= g->k[a];                                                                                  \
            }                                                                                                   \
          for (int64_t a = last, rest = q0; a >= 0; a--)                                                        \
            {                                                                                                   \
              ic[a] = rest % g->in[a];                                                                          \
              rest /= g->in[a];                                                                                 \
            }                                                                                                   \
          T *yc = y + m * g->out_size;                                                                          \
          const T *src = col + (m * g->ksize + kk) * len;                                                       \
          int64_t off = kc[last] * g->d[last] - g->pad[last];                                                   \
          /* input positions i with 0 <= i * s + off < out_last */                                              \
          int64_t lo, hi;                                                                                       \
          _owb_cpu_conv_valid_range (off, s, out_last, in_last, &lo, &hi);                                                    \
          for (int64_t q = 0; q < len;)                                                                         \
            {                                                                                                   \
              int64_t i0 = ic[last], run = MIN (in_last - i0, len - q);                                         \
              gboolean inside = TRUE;                                                                           \
              int64_t base = 0;                                                                                 \
              for (int a = 0; a < last; a++)                                                                    \
                {                                                                                               \
                  int64_t o = ic[a] * g->s[a] - g->pad[a] + kc[a] * g->d[a];                                    \
                  if (o < 0 || o >= g->out[a])                                                                  \
                    {                                                                                           \
                      inside = FALSE;                                                                           \
                      break;                                                                                    \
                    }                                                                                           \
                  base = base * g->out[a] + o;                                                                  \
                }                                                                                               \
              if (inside)                                                                                       \
                {                                                                                               \
                  T *dst = yc + base * out_last + off;                                                          \
                  const T *sv = src + q - i0;                                                                   \
                  int64_t a0 = CLAMP (lo, i0, i0 + run), a1 = CLAMP (hi, a0, i0 + run);                         \
                  if (s == 1)                                                                                   \
                    add_##NAME (dst + a0, sv + a0, a1 - a0);                                                    \
                  else                                                                                          \
                    for (int64_t i = a0; i < a1; i++)                                                           \
                      dst[i * s] += sv[i];                                                                      \
                }                                                                                               \
              q += run;                                                                                         \
              ic[last] += run;                                                                                  \
              for (int a = last; a > 0 && ic[a] >= g->in[a]; a--)                                               \
                {                                                                                               \
                  ic[a] = 0;                                                                                    \
                  ic[a - 1]++;                                                                                  \
                }                                                                                               \
            }                                                                                               \
        }                                                                                                       \
  }                                                                                                             \
                                                                                                                \
  /* Rows [0, rows) of y (row stride ld), columns [p0, p0 + len), set to their channel's bias. */           \
  static void fill_bias_##NAME (T *y, const T *bias, int64_t rows, int64_t ld, int64_t p0, int64_t len)        \
  {                                                                                                             \
    for (int64_t m = 0; m < rows; m++)                                                                          \
      fill_##NAME (y + m * ld + p0, bias[m], len);                                                              \
  }

OWB_CPU_FOR_FLOATS (DEFINE_FLOAT_BLOCKS)
OWB_CPU_FOR_FLOATS (OWB_CPU_DEFINE_IM2COL)

/* ---- GEMM split over the thread pool ---- */

typedef struct {
  OwbDataType dtype;
  gboolean ta, tb, split_m;
  gboolean gemv; /* float with at most OWB_CPU_GEMV_MAX_M rows: cpu-gemv.c instead of sgemm */
  int64_t m, n, k, lda, ldb, ldc;
  double alpha, beta;
  const void *a, *b;
  void *c;
} GemmJob;

static void
gemm_job_run (GemmJob *j, int64_t begin, int64_t end)
{
  gsize es = owb_data_type_size (j->dtype);
  const char *a = j->a, *b = j->b;
  char *c = j->c;
  int64_t m = j->m, n = j->n;
  if (j->split_m)
    {
      a += (j->ta ? begin : begin * j->lda) * es;
      c += begin * j->ldc * es;
      m = end - begin;
    }
  else
    {
      b += (j->tb ? begin * j->ldb : begin) * es;
      c += begin * es;
      n = end - begin;
    }
  if (j->gemv)
    {
      _owb_cpu_gemv (j->tb, m, n, j->k, (float) j->alpha, (const float *) a, j->ta ? 1 : j->lda, j->ta ? j->lda : 1,
                     (const float *) b, j->ldb, j->beta != 0, (float *) c, j->ldc);
      return;
    }
  OWB_CPU_CALL_FLOATS (j->dtype, gemm, j->ta, j->tb, m, n, j->k, j->alpha, (const void *) a, j->lda,
                       (const void *) b, j->ldb, j->beta, (void *) c, j->ldc);
}

static void
gemm_job_chunk (int64_t begin, int64_t end, gpointer data)
{
  gemm_job_run (data, begin, end);
}

/* C = alpha op(A) op(B) + beta C for float/double, split by rows (or columns) over the pool when big.
 * longer_side: split along the longer of m and n, since each row block packs all of B again and each
 * column block all of A (Gemm/MatMul; the convolutions keep their rule). */
static void
gemm_par_split (OwbThreadPool *pool, OwbDataType dtype, gboolean ta, gboolean tb, int64_t m, int64_t n, int64_t k,
                double alpha, const void *a, int64_t lda, const void *b, int64_t ldb, double beta, void *c,
                int64_t ldc, gboolean longer_side)
{
  GemmJob j = { dtype, ta, tb, TRUE, FALSE, m, n, k, lda, ldb, ldc, alpha, beta, a, b, c };
  int threads = _owb_cpu_pool_threads (pool);
  if (threads <= 1 || m * n * MAX (k, 1) < PARALLEL_GEMM_WORK || (m < 32 && n < 32))
    {
      gemm_job_run (&j, 0, m);
      return;
    }
  j.split_m = m >= n || (!longer_side && m >= 16 * threads);
  int64_t len = j.split_m ? m : n;
  int64_t grain = MAX ((len + threads - 1) / threads, 16);
  if (!j.split_m)
    grain = (grain + 15) / 16 * 16;
  owb_parallel_for (pool, len, grain, gemm_job_chunk, &j);
}

static void
gemm_par (OwbThreadPool *pool, OwbDataType dtype, gboolean ta, gboolean tb, int64_t m, int64_t n, int64_t k,
          double alpha, const void *a, int64_t lda, const void *b, int64_t ldb, double beta, void *c, int64_t ldc)
{
  gemm_par_split (pool, dtype, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, FALSE);
}

/* gemm_par for Gemm and MatMul (beta 0 or 1): a float product of at most OWB_CPU_GEMV_MAX_M rows
 * (batch-1 Linear layers) goes to the GEMV kernels, which read B once where sgemm packs it all
 * first, split over the pool by blocks of columns. */
static void
gemm_par_mm (OwbThreadPool *pool, OwbDataType dtype, gboolean ta, gboolean tb, int64_t m, int64_t n, int64_t k,
             double alpha, const void *a, int64_t lda, const void *b, int64_t ldb, double beta, void *c, int64_t ldc)
{
  if (dtype != OWB_TYPE_FLOAT || m > OWB_CPU_GEMV_MAX_M || m <= 0 || n <= 0 || (beta != 0 && beta != 1))
    {
      gemm_par_split (pool, dtype, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, TRUE);
      return;
    }
  GemmJob j = { dtype, ta, tb, FALSE, TRUE, m, n, k, lda, ldb, ldc, alpha, beta, a, b, c };
  int threads = _owb_cpu_pool_threads (pool);
  if (threads <= 1 || m * n * MAX (k, 1) < OWB_CPU_GEMV_PARALLEL_WORK)
    gemm_job_run (&j, 0, n);
  else
    owb_parallel_for (pool, n, _owb_cpu_gemv_block (tb, n, k, threads), gemm_job_chunk, &j);
}

/* ---- Conv ---- */

typedef struct {
  const ConvGeom *g;
  OwbDataType dtype;
  const void *x, *w, *bias;
  void *y;
  gboolean pointwise;
  int64_t tile, ntiles;
} ConvJob;

#define DEFINE_CONV_UNITS(T, NAME)                                                                           \
  static void conv_units_##NAME (const ConvJob *job, int64_t begin, int64_t end)                             \
  {                                                                                                          \
    const ConvGeom *g = job->g;                                                                              \
    int64_t rows = g->Cg * g->ksize;                                                                         \
    T *col = job->pointwise ? NULL : g_new (T, rows * job->tile);                                            \
    for (int64_t u = begin; u < end; u++)                                                                    \
      {                                                                                                      \
        int64_t n = u / (g->group * job->ntiles), gi = u / job->ntiles % g->group, t = u % job->ntiles;      \
        const T *xg = (const T *) job->x + (n * g->C + gi * g->Cg) * g->in_size;                             \
        const T *wg = (const T *) job->w + gi * g->Mg * rows;                                                \
        T *yg = (T *) job->y + (n * g->M + gi * g->Mg) * g->out_size;                                        \
        int64_t p0 = t * job->tile, len = MIN (job->tile, g->out_size - p0);                                 \
        /* The bias goes in first so that the GEMM accumulates onto it (beta 1) instead of zeroing. */      \
        if (job->bias)                                                                                       \
          fill_bias_##NAME (yg, (const T *) job->bias + gi * g->Mg, g->Mg, g->out_size, p0, len);            \
        double beta = job->bias ? 1 : 0;                                                                     \
        if (job->pointwise)                                                                                  \
          gemm_##NAME (FALSE, FALSE, g->Mg, len, rows, 1, wg, rows, xg + p0, g->in_size, beta, yg + p0,      \
                       g->out_size);                                                                         \
        else                                                                                                 \
          {                                                                                                  \
            im2col_##NAME (g, xg, p0, len, col);                                                             \
            gemm_##NAME (FALSE, FALSE, g->Mg, len, rows, 1, wg, rows, col, len, beta, yg + p0, g->out_size); \
          }                                                                                                  \
      }                                                                                                      \
    g_free (col);                                                                                            \
  }

OWB_CPU_FOR_FLOATS (DEFINE_CONV_UNITS)

static void
conv_units_chunk (int64_t begin, int64_t end, gpointer data)
{
  ConvJob *job = data;
  OWB_CPU_CALL_FLOATS (job->dtype, conv_units, job, begin, end);
}

/* Runs a resolved convolution on raw buffers of dtype float or double. */
static void
conv_run (OwbThreadPool *pool, const ConvGeom *g, OwbDataType dtype, const void *x, const void *w, const void *bias,
          void *y)
{
  ConvJob job = { g, dtype, x, w, bias, y, FALSE, 0, 0 };
  int threads = _owb_cpu_pool_threads (pool);
  if (g->N == 0 || g->M == 0 || g->out_size == 0)
    return;
  if (_owb_cpu_conv_is_depthwise (g))
    {
      _owb_cpu_depthwise_conv (pool, g, dtype, x, w, bias, y, NULL, NULL);
      return;
    }
  job.pointwise = TRUE;
  for (int i = 0; i < g->nsp; i++)
    if (g->k[i] != 1 || g->s[i] != 1 || g->pad[i] != 0 || g->out[i] != g->in[i])
      job.pointwise = FALSE;
  int64_t rows = MAX (g->Cg * g->ksize, 1);
  int64_t tile = g->out_size;
  if (!job.pointwise)
    tile = MIN (tile, MAX (COL_BUDGET / rows, MIN_TILE));
  /* Enough units for every thread: split the output columns further when batch x groups is small. */
  int64_t images = g->N * g->group;
  if (threads > 1 && images * ((g->out_size + tile - 1) / tile) < 2 * threads)
    {
      int64_t want = (2 * threads + images - 1) / images;
      tile = MIN (tile, MAX ((g->out_size + want - 1) / want, MIN_TILE));
    }
  job.tile = tile;
  job.ntiles = (g->out_size + tile - 1) / tile;
  owb_parallel_for (pool, images * job.ntiles, 1, conv_units_chunk, &job);
}

/* The geometry of a Conv (transpose FALSE) or ConvTranspose from its inputs X, W and optional B,
 * checked against its output. */
static gboolean
conv_geometry (OwbKernelContext *ctx, gboolean transpose, ConvGeom *g, GError **error)
{
  const OwbTensor *x = ctx->inputs[0], *b = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  return _owb_cpu_conv_geometry (ctx, ctx->state, x, ctx->inputs[1], ctx->outputs[0], transpose, g, error)
         && _owb_cpu_conv_check_bias (ctx, b, g, x->dtype, error);
}

static gboolean
compute_conv (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  const OwbTensor *b = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  OwbTensor *y = ctx->outputs[0];
  ConvGeom g;
  if (!conv_geometry (ctx, FALSE, &g, error))
    return FALSE;
  conv_run (ctx->pool, &g, x->dtype, x->data, w->data, b ? b->data : NULL, y->data);
  return TRUE;
}

/* ---- ConvTranspose ---- */

typedef struct {
  const ConvGeom *g;
  OwbDataType dtype;
  const void *x, *w, *bias;
  void *y;
  int64_t tile;
  const void *col;
  int64_t q0, len;
  void *yg;
} ConvTransposeJob;

static void
col2im_chunk (int64_t begin, int64_t end, gpointer data)
{
  ConvTransposeJob *job = data;
  OWB_CPU_CALL_FLOATS (job->dtype, col2im, job->g, job->col, job->q0, job->len, begin, end, job->yg);
}

/* One (image, group) of a ConvTranspose: col = W_g^T X_g tile by tile, scattered into Y by col2im. The
 * pool (NULL when the caller already runs units in parallel) splits the GEMM and the channels. */
static void
conv_transpose_unit (const ConvTransposeJob *base, int64_t u, OwbThreadPool *pool)
{
  const ConvGeom *g = base->g;
  gsize es = owb_data_type_size (base->dtype);
  int64_t n = u / g->group, gi = u % g->group;
  int64_t rows = g->Mg * g->ksize;
  ConvTransposeJob job = *base;
  const char *xg = (const char *) base->x + (n * g->C + gi * g->Cg) * g->in_size * es;
  const char *wg = (const char *) base->w + gi * g->Cg * rows * es;
  char *yg = (char *) base->y + (n * g->M + gi * g->Mg) * g->out_size * es;
  void *col = g_malloc (rows * base->tile * es);
  /* Start from the bias (or zero); col2im adds every tap onto it. */
#define CASE(T, NAME)                                                                                     \
  case OWB_TYPE_##NAME:                                                                                   \
    for (int64_t m = 0; m < g->Mg; m++)                                                                   \
      fill_##NAME ((T *) yg + m * g->out_size, base->bias ? ((const T *) base->bias)[gi * g->Mg + m] : 0, \
                   g->out_size);                                                                          \
    break;
  switch (base->dtype)
    {
      OWB_CPU_FOR_FLOATS (CASE)
    default:
      g_assert_not_reached ();
    }
#undef CASE
  job.yg = yg;
  job.col = col;
  for (int64_t q0 = 0; q0 < g->in_size; q0 += base->tile)
    {
      int64_t len = MIN (base->tile, g->in_size - q0);
      gemm_par (pool, base->dtype, TRUE, FALSE, rows, len, g->Cg, 1, wg, rows, xg + q0 * es, g->in_size, 0, col, len);
      job.q0 = q0;
      job.len = len;
      owb_parallel_for (pool, g->Mg, 1, col2im_chunk, &job);
    }
  g_free (col);
}

static void
conv_transpose_units_chunk (int64_t begin, int64_t end, gpointer data)
{
  for (int64_t u = begin; u < end; u++)
    conv_transpose_unit (data, u, NULL);
}

static gboolean
compute_conv_transpose (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  const OwbTensor *b = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  OwbTensor *y = ctx->outputs[0];
  ConvGeom g;
  if (!conv_geometry (ctx, TRUE, &g, error))
    return FALSE;
  if (y->nelems == 0)
    return TRUE;
  int64_t rows = MAX (g.Mg * g.ksize, 1);
  ConvTransposeJob job = { &g, x->dtype, x->data, w->data, b ? b->data : NULL, y->data };
  job.tile = MAX (MIN (g.in_size, MAX (COL_BUDGET / rows, MIN_TILE)), 1);
  int64_t units = g.N * g.group;
  int threads = _owb_cpu_pool_threads (ctx->pool);
  if (threads > 1 && units >= threads)
    owb_parallel_for (ctx->pool, units, 1, conv_transpose_units_chunk, &job);
  else
    for (int64_t u = 0; u < units; u++)
      conv_transpose_unit (&job, u, ctx->pool);
  return TRUE;
}

/* ---- MatMul ---- */

/* numpy.matmul over batches: batch i multiplies the M x K matrix at a + a_off[i] with the K x N one at
 * b + b_off[i] into y + i * M * N (offsets in elements). */
typedef struct {
  int64_t batch, m, n, k;
  int64_t *a_off, *b_off;
} MatMulPlan;

static void
matmul_plan_clear (MatMulPlan *plan)
{
  g_free (plan->a_off);
  g_free (plan->b_off);
}

static gboolean
matmul_plan_init (OwbKernelContext *ctx, int ra, const int64_t *ad, int rb, const int64_t *bd, const OwbTensor *y,
                  MatMulPlan *plan, GError **error)
{
  memset (plan, 0, sizeof *plan);
  if (ra < 1 || rb < 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "MatMul operands must have rank >= 1");
      return FALSE;
    }
  plan->m = ra >= 2 ? ad[ra - 2] : 1;
  plan->k = ad[ra - 1];
  plan->n = rb >= 2 ? bd[rb - 1] : 1;
  int64_t kb = rb >= 2 ? bd[rb - 2] : bd[0];
  int abr = MAX (ra - 2, 0), bbr = MAX (rb - 2, 0);
  int br = y->rank - (ra >= 2) - (rb >= 2);
  int64_t batch;
  gboolean ok = kb == plan->k && _owb_cpu_matmul_batch_check (abr, ad, bbr, bd, br, y->dims, &batch);
  if (ok && ra >= 2)
    ok = y->dims[br] == plan->m;
  if (ok && rb >= 2)
    ok = y->dims[y->rank - 1] == plan->n;
  if (!ok)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "operand shapes do not match for MatMul");
      return FALSE;
    }
  if (plan->m > INT_MAX || plan->n > INT_MAX || plan->k > INT_MAX)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "matrix is too large for 32-bit BLAS indices");
      return FALSE;
    }
  /* B without batch axes: the batch folds into the rows of one big product. */
  if (bbr == 0 && plan->m * batch <= INT_MAX)
    {
      plan->m *= batch;
      batch = 1;
    }
  plan->batch = batch;
  plan->a_off = g_new0 (int64_t, MAX (batch, 1));
  plan->b_off = g_new0 (int64_t, MAX (batch, 1));
  if (batch > 1)
    _owb_cpu_matmul_batch_offsets (abr, ad, bbr, bd, br, y->dims, batch, plan->m * plan->k, plan->k * plan->n,
                                   plan->a_off, plan->b_off);
  return TRUE;
}

typedef struct {
  const MatMulPlan *plan;
  OwbDataType dtype;
  const void *a, *b;
  void *y;
} MatMulJob;

static void
matmul_float_chunk (int64_t begin, int64_t end, gpointer data)
{
  MatMulJob *job = data;
  const MatMulPlan *p = job->plan;
  gsize es = owb_data_type_size (job->dtype);
  for (int64_t i = begin; i < end; i++)
    gemm_par_mm (NULL, job->dtype, FALSE, FALSE, p->m, p->n, p->k, 1, (const char *) job->a + p->a_off[i] * es,
                 p->k, (const char *) job->b + p->b_off[i] * es, p->n, 0, (char *) job->y + i * p->m * p->n * es, p->n);
}

/* Integer MatMul: one output row per unit, the inner loop running along contiguous rows of B. */
#define DEFINE_MATMUL_ROWS(T, NAME)                                                                     \
  static void matmul_rows_##NAME (int64_t begin, int64_t end, gpointer data)                            \
  {                                                                                                     \
    MatMulJob *job = data;                                                                              \
    const MatMulPlan *p = job->plan;                                                                    \
    for (int64_t u = begin; u < end; u++)                                                               \
      {                                                                                                 \
        int64_t bi = u / p->m, i = u % p->m;                                                            \
        const T *arow = (const T *) job->a + p->a_off[bi] + i * p->k;                                   \
        const T *bm = (const T *) job->b + p->b_off[bi];                                                \
        T *yrow = (T *) job->y + u * p->n;                                                              \
        for (int64_t j = 0; j < p->n; j++)                                                              \
          yrow[j] = 0;                                                                                  \
        for (int64_t kk = 0; kk < p->k; kk++)                                                           \
          {                                                                                             \
            T av = arow[kk];                                                                            \
            const T *brow = bm + kk * p->n;                                                             \
            for (int64_t j = 0; j < p->n; j++)                                                          \
              yrow[j] += av * brow[j];                                                                  \
          }                                                                                             \
      }                                                                                                 \
  }

OWB_CPU_FOR_INTS (DEFINE_MATMUL_ROWS)

static void
matmul_run (OwbThreadPool *pool, const MatMulPlan *p, OwbDataType dtype, const void *a, const void *b, void *y)
{
  MatMulJob job = { p, dtype, a, b, y };
  if (p->batch * p->m * p->n == 0)
    return;
  if (dtype == OWB_TYPE_FLOAT || dtype == OWB_TYPE_DOUBLE)
    {
      if (p->batch >= _owb_cpu_pool_threads (pool) && p->batch > 1)
        owb_parallel_for (pool, p->batch, 1, matmul_float_chunk, &job);
      else
        {
          gsize es = owb_data_type_size (dtype);
          for (int64_t i = 0; i < p->batch; i++)
            gemm_par_mm (pool, dtype, FALSE, FALSE, p->m, p->n, p->k, 1, (const char *) a + p->a_off[i] * es, p->k,
                         (const char *) b + p->b_off[i] * es, p->n, 0, (char *) y + i * p->m * p->n * es, p->n);
        }
      return;
    }
  int64_t grain = MAX (4096 / MAX (p->n * MAX (p->k, 1), 1), 1);
#define CASE(T, NAME)                                                                 \
  case OWB_TYPE_##NAME:                                                               \
    owb_parallel_for (pool, p->batch * p->m, grain, matmul_rows_##NAME, &job);        \
    break;
  switch (dtype)
    {
      OWB_CPU_FOR_INTS (CASE)
    default:
      g_assert_not_reached ();
    }
#undef CASE
}

/* ---- MatMul / Gemm on a constant B packed once ---- */

/* A float B that is an initializer is packed at prepare (transB resolved, Gemm's alpha folded in) for
 * cpu-sgemm.c; products of more than OWB_CPU_GEMV_MAX_M rows use the pack while B is that very tensor
 * (a reference is held, so the address cannot be reused). A MatMul whose A is known to be a matrix
 * at prepare, or a Gemm whose C fits the pack, always runs on the pack, so the session may free B's
 * own storage (packed_b_holds); then fewer rows run on the pack too. */
typedef struct {
  OwbTensor *b;
  OwbSgemmPacked *pack;
  gboolean holds; /* every run takes the pack: a MatMul with an A of rank 2 or more, see gemm_always_packed */
} PackedB;

static void
packed_b_free (gpointer data)
{
  PackedB *p = data;
  if (p)
    {
      _owb_sgemm_packed_free (p->pack);
      owb_tensor_unref (p->b);
      g_free (p);
    }
}

/* Whether every run of this Gemm takes the pack of its B (n columns): A not transposed, and C
 * absent, scaled by 0, or a row or full addend (the shapes compute_gemm hands the pack). */
static gboolean
gemm_always_packed (const OwbNode *node, const OwbValueType *const *input_types, int64_t n)
{
  if (owb_node_get_int (node, "transA", 0) != 0 || !input_types || !input_types[0]
      || input_types[0]->dtype != OWB_TYPE_FLOAT)
    return FALSE;
  float beta = owb_node_get_float (node, "beta", 1.0f);
  if (node->n_inputs <= 2 || !node->inputs[2][0] || beta == 0)
    return TRUE;
  /* C's last axis: from the initializer where it is one (its inferred type may not be there) */
  const OwbTensor *ct = node->graph ? owb_graph_get_initializer (node->graph, node->inputs[2]) : NULL;
  const OwbValueType *c = input_types[2];
  int rank = ct ? ct->rank : c ? c->rank : -1;
  int64_t last = ct ? (rank > 0 ? ct->dims[rank - 1] : -1)
                    : rank > 0 && owb_dim_is_known (c->dims[rank - 1]) ? c->dims[rank - 1].value : -1;
  return beta == 1 && n > 1 && (rank == 1 || rank == 2) && last == n;
}

static gboolean
packed_b_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                  GError **error)
{
  gboolean gemm = strcmp (node->op_type, "Gemm") == 0;
  OwbTensor *b = NULL;
  OwbSgemmPacked *pack = _owb_sgemm_pack_constant_b (
    node, input_types, gemm, gemm && owb_node_get_int (node, "transA", 0) != 0,
    gemm && owb_node_get_int (node, "transB", 0) != 0, gemm ? owb_node_get_float (node, "alpha", 1.0f) : 1.0f, &b);
  *state = NULL;
  if (pack)
    {
      PackedB *p = g_new0 (PackedB, 1);
      p->pack = pack;
      p->b = b;
      p->holds = gemm ? gemm_always_packed (node, input_types, _owb_sgemm_packed_n (pack))
                      : input_types && input_types[0] && input_types[0]->rank >= 2;
      *state = p;
    }
  return TRUE;
}

static gboolean
packed_b_holds (const void *state, int input)
{
  const PackedB *p = state;
  return p && p->holds && input == 1;
}

/* Y [rows, n] = A B' (+ bias row or full [rows, n] z) on the pack; FALSE when it does not apply. */
static gboolean
packed_b_run (OwbKernelContext *ctx, const OwbTensor *b, int64_t rows, int64_t n, int64_t k, const float *a,
              const float *bias, const float *z, float *y)
{
  const PackedB *p = ctx->state;
  /* (a B whose storage the session freed has only the pack, whatever the rows) */
  if (!p || b != p->b || (rows <= OWB_CPU_GEMV_MAX_M && b->data) || _owb_sgemm_packed_k (p->pack) != k
      || _owb_sgemm_packed_n (p->pack) != n)
    return FALSE;
  OwbSgemmEpilogue ep = { .bias = bias, .z = z, .ldz = n };
  _owb_sgemm_packed (ctx->pool, p->pack, rows, a, k, y, n, &ep);
  return TRUE;
}

static gboolean
compute_matmul (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  OwbTensor *y = ctx->outputs[0];
  if (a->dtype != b->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "operands have different types");
      return FALSE;
    }
  MatMulPlan plan;
  if (!matmul_plan_init (ctx, a->rank, a->dims, b->rank, b->dims, y, &plan, error))
    return FALSE;
  /* B without batch axes: A's batch is one [batch m, k] matrix */
  if (a->dtype == OWB_TYPE_FLOAT && a->rank >= 2 && b->rank == 2
      && packed_b_run (ctx, b, plan.batch * plan.m, plan.n, plan.k, a->data, NULL, NULL, y->data))
    {
      matmul_plan_clear (&plan);
      return TRUE;
    }
  if (!b->data && b->nelems > 0)
    {
      matmul_plan_clear (&plan);
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,
                            "B's values are held only packed, for an A of rank 2 or more");
      return FALSE;
    }
  matmul_run (ctx->pool, &plan, a->dtype, a->data, b->data, y->data);
  matmul_plan_clear (&plan);
  return TRUE;
}

/* ---- Gemm ---- */

/* Integer Gemm: Y = alpha A'B' + beta C accumulated in T; the scaling goes through double only when
 * alpha or beta is not 1, so plain integer products stay exact. */
#define DEFINE_GEMM_NAIVE(T, NAME)                                                                          \
  static void gemm_naive_##NAME (gboolean ta, gboolean tb, int64_t m, int64_t n, int64_t k, double alpha,   \
                                 const T *a, const T *b, double beta, const T *c, const int64_t *cs, T *y)  \
  {                                                                                                         \
    int64_t sai = ta ? 1 : k, sak = ta ? m : 1, sbk = tb ? 1 : n, sbj = tb ? k : 1;                         \
    for (int64_t i = 0; i < m; i++)                                                                         \
      {                                                                                                     \
        T *yrow = y + i * n;                                                                                \
        for (int64_t j = 0; j < n; j++)                                                                     \
          yrow[j] = 0;                                                                                      \
        for (int64_t kk = 0; kk < k; kk++)                                                                  \
          {                                                                                                 \
            T av = a[i * sai + kk * sak];                                                                   \
            const T *bp = b + kk * sbk;                                                                     \
            for (int64_t j = 0; j < n; j++)                                                                 \
              yrow[j] += av * bp[j * sbj];                                                                  \
          }                                                                                                 \
        for (int64_t j = 0; j < n; j++)                                                                     \
          {                                                                                                 \
            T cv = c ? c[i * cs[0] + j * cs[1]] : (T) 0;                                                    \
            if (alpha == 1 && beta == 1)                                                                    \
              yrow[j] += cv;                                                                                \
            else                                                                                            \
              yrow[j] = (T) (alpha * (double) yrow[j] + beta * (double) cv);                                \
          }                                                                                                 \
      }                                                                                                     \
  }

OWB_CPU_FOR_INTS (DEFINE_GEMM_NAIVE)

#define DEFINE_GEMM_FILL(T, NAME)                                                                 \
  static void gemm_fill_c_##NAME (int64_t m, int64_t n, double beta, const T *c, const int64_t *cs, T *y) \
  {                                                                                               \
    for (int64_t i = 0; i < m; i++)                                                               \
      for (int64_t j = 0; j < n; j++)                                                             \
        y[i * n + j] = (T) (beta * c[i * cs[0] + j * cs[1]]);                                     \
  }

OWB_CPU_FOR_FLOATS (DEFINE_GEMM_FILL)

static gboolean
compute_gemm (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  const OwbTensor *c = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  OwbTensor *y = ctx->outputs[0];
  gboolean ta = owb_node_get_int (ctx->node, "transA", 0) != 0;
  gboolean tb = owb_node_get_int (ctx->node, "transB", 0) != 0;
  double alpha = owb_node_get_float (ctx->node, "alpha", 1.0f);
  double beta = owb_node_get_float (ctx->node, "beta", 1.0f);
  if (a->rank != 2 || b->rank != 2 || y->rank != 2 || a->dtype != b->dtype || (c && c->dtype != a->dtype))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "A and B must be 2-D tensors of one type");
      return FALSE;
    }
  int64_t m = ta ? a->dims[1] : a->dims[0], k = ta ? a->dims[0] : a->dims[1];
  int64_t kb = tb ? b->dims[1] : b->dims[0], n = tb ? b->dims[0] : b->dims[1];
  if (k != kb || y->dims[0] != m || y->dims[1] != n || m > INT_MAX || n > INT_MAX || k > INT_MAX)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "A'(%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT ") and B'(%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                            ") do not multiply",
                            m, k, kb, n);
      return FALSE;
    }
  int64_t cs[2] = { 0, 0 };
  if (c)
    {
      gboolean ok = c->rank <= 2;
      for (int i = 0; ok && i < c->rank; i++)
        ok = c->dims[i] == 1 || c->dims[i] == y->dims[2 - c->rank + i];
      if (!ok)
        {
          char *s = owb_tensor_shape_to_string (c);
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "C %s does not broadcast to [%" G_GINT64_FORMAT
                                ", %" G_GINT64_FORMAT "]", s, m, n);
          g_free (s);
          return FALSE;
        }
      _owb_cpu_broadcast_strides (c->rank, c->dims, 2, y->dims, cs);
    }
  if (m == 0 || n == 0)
    return TRUE;
  /* the pack takes C as a bias row or a full [m, n] addend, beta 1 */
  if (a->dtype == OWB_TYPE_FLOAT && !ta && (!c || beta == 0 || (beta == 1 && cs[1] == 1 && (cs[0] == 0 || cs[0] == n)))
      && packed_b_run (ctx, b, m, n, k, a->data, c && beta != 0 && cs[0] == 0 ? c->data : NULL,
                       c && beta != 0 && cs[0] == n ? c->data : NULL, y->data))
    return TRUE;
  if (!b->data && b->nelems > 0)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,
                            "B's values are held only packed, for a float A and C as prepared");
      return FALSE;
    }
  switch (a->dtype)
    {
#define CASE(T, NAME)                                                                                      \
  case OWB_TYPE_##NAME:                                                                                    \
    if (c && beta != 0)                                                                                    \
      gemm_fill_c_##NAME (m, n, beta, c->data, cs, y->data);                                               \
    gemm_par_mm (ctx->pool, a->dtype, ta, tb, m, n, k, alpha, a->data, a->dims[1], b->data, b->dims[1],   \
              c && beta != 0 ? 1 : 0, y->data, n);                                                         \
    break;
      OWB_CPU_FOR_FLOATS (CASE)
#undef CASE
#define CASE(T, NAME)                                                                                      \
  case OWB_TYPE_##NAME:                                                                                    \
    gemm_naive_##NAME (ta, tb, m, n, k, alpha, a->data, b->data, beta, c ? c->data : NULL, cs, y->data);   \
    break;
      OWB_CPU_FOR_INTS (CASE)
#undef CASE
    default:
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "unsupported type %s", owb_data_type_name (a->dtype));
      return FALSE;
    }
  return TRUE;
}

/* ---- MatMulInteger / ConvInteger ---- */

/* The integer ops run through the double GEMM on (value - zero point): products of 8-bit values summed
 * in double are exact far beyond any real K, and the int32 result wraps as the spec allows. */
static double *
to_double_minus_zp (const OwbTensor *t, const OwbTensor *zp, int64_t group, int64_t period)
{
  double *out = g_new (double, MAX (t->nelems, 1));
  const uint8_t *u = t->data;
  const int8_t *s = t->data;
  gboolean is_signed = t->dtype == OWB_TYPE_INT8;
  int64_t nzp = zp ? zp->nelems : 0;
  for (int64_t i = 0; i < t->nelems; i++)
    {
      double z = 0;
      if (nzp == 1)
        z = owb_tensor_get_double (zp, 0);
      else if (nzp > 1)
        z = owb_tensor_get_double (zp, (i / group) % period % nzp);
      out[i] = (is_signed ? s[i] : u[i]) - z;
    }
  return out;
}

static void
double_to_int32 (const double *v, int64_t n, int32_t *out)
{
  for (int64_t i = 0; i < n; i++)
    out[i] = (int32_t) (uint32_t) (int64_t) v[i];
}

static gboolean
check_zero_point (OwbKernelContext *ctx, const OwbTensor *data, const OwbTensor *zp, const char *name, GError **error)
{
  if (zp && zp->dtype != data->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "%s must have the type of its input", name);
      return FALSE;
    }
  return TRUE;
}

static gboolean
compute_matmul_integer (OwbKernelContext *ctx, GError **error)
{
  /* B packed at prepare: the integer GEMM core (cpu-qgemm-matmul.c) */
  if (_owb_cpu_qgemm_matmul_run (ctx))
    return TRUE;
  const OwbTensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  const OwbTensor *azp = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  const OwbTensor *bzp = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  OwbTensor *y = ctx->outputs[0];
  if (!check_zero_point (ctx, a, azp, "a_zero_point", error) || !check_zero_point (ctx, b, bzp, "b_zero_point", error))
    return FALSE;
  MatMulPlan plan;
  if (!matmul_plan_init (ctx, a->rank, a->dims, b->rank, b->dims, y, &plan, error))
    return FALSE;
  /* a_zero_point: one value, or one per row of A ([M] or [..., M, 1]); b_zero_point: one, or one per
   * column of B ([N] or [..., 1, N]). */
  int64_t k = a->dims[a->rank - 1];
  int64_t m = a->rank >= 2 ? a->dims[a->rank - 2] : 1, n = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
  int64_t a_rows = k ? a->nelems / k : 0, b_mats = b->nelems / MAX (k * n, 1);
  gboolean ok = !azp || azp->nelems == 1 || (azp->nelems % m == 0 && a_rows % azp->nelems == 0);
  ok = ok && (!bzp || bzp->nelems == 1 || (bzp->nelems % n == 0 && (b_mats * n) % bzp->nelems == 0));
  if (!ok)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "zero point shapes do not match A and B");
      matmul_plan_clear (&plan);
      return FALSE;
    }
  double *ad = to_double_minus_zp (a, azp, k ? k : 1, G_MAXINT64);
  /* B element i is column i % n of matrix i / (k n): its zero point is (matrix * n + column) % count. */
  double *bd = g_new (double, MAX (b->nelems, 1));
  {
    double *raw = to_double_minus_zp (b, NULL, 1, 1);
    int64_t nz = bzp ? bzp->nelems : 0;
    for (int64_t i = 0; i < b->nelems; i++)
      {
        double z = 0;
        if (nz == 1)
          z = owb_tensor_get_double (bzp, 0);
        else if (nz > 1)
          z = owb_tensor_get_double (bzp, ((i / MAX (k * n, 1)) * n + i % n) % nz);
        bd[i] = raw[i] - z;
      }
    g_free (raw);
  }
  double *yd = g_new (double, MAX (y->nelems, 1));
  matmul_run (ctx->pool, &plan, OWB_TYPE_DOUBLE, ad, bd, yd);
  double_to_int32 (yd, y->nelems, y->data);
  g_free (ad);
  g_free (bd);
  g_free (yd);
  matmul_plan_clear (&plan);
  return TRUE;
}

static gboolean
compute_conv_integer (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  const OwbTensor *xzp = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  const OwbTensor *wzp = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  OwbTensor *y = ctx->outputs[0];
  ConvGeom g;
  if (!check_zero_point (ctx, x, xzp, "x_zero_point", error) || !check_zero_point (ctx, w, wzp, "w_zero_point", error)
      || !_owb_cpu_conv_geometry (ctx, ctx->state, x, w, y, FALSE, &g, error))
    return FALSE;
  if ((xzp && xzp->nelems != 1) || (wzp && wzp->nelems != 1 && wzp->nelems != g.M))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "x_zero_point must be a scalar and w_zero_point a scalar or one value per output channel");
      return FALSE;
    }
  double *xd = to_double_minus_zp (x, xzp, 1, G_MAXINT64);
  /* W is [M, C/group, k...]: output channel = element / (C/group * kernel size). */
  double *wd = to_double_minus_zp (w, wzp, MAX (g.Cg * g.ksize, 1), G_MAXINT64);
  double *yd = g_new0 (double, MAX (y->nelems, 1));
  conv_run (ctx->pool, &g, OWB_TYPE_DOUBLE, xd, wd, NULL, yd);
  double_to_int32 (yd, y->nelems, y->data);
  g_free (xd);
  g_free (wd);
  g_free (yd);
  return TRUE;
}

#define FLOATS OWB_CPU_TYPES_FLOATS
#define INT8S (OWB_TYPE_BIT (OWB_TYPE_UINT8) | OWB_TYPE_BIT (OWB_TYPE_INT8))

const OwbKernelDef _owb_cpu_kernels_nn[] = {
  { "Conv", "", 1, 0, FLOATS, 0, conv_prepare, g_free, compute_conv },
  { "ConvTranspose", "", 1, 0, FLOATS, 0, conv_prepare, g_free, compute_conv_transpose },
  { "ConvInteger", "", 10, 0, INT8S, 0, conv_prepare, g_free, compute_conv_integer },
  { "MatMul", "", 1, 0, OWB_CPU_TYPES_NUMERIC, 0, packed_b_prepare, packed_b_free, compute_matmul, packed_b_holds },
  { "MatMulInteger", "", 10, 0, INT8S, 0, _owb_cpu_qgemm_matmul_prepare, _owb_cpu_qgemm_matmul_free,
    compute_matmul_integer },
  { "Gemm", "", 1, 0, OWB_CPU_TYPES_NUMERIC, 0, packed_b_prepare, packed_b_free, compute_gemm, packed_b_holds },
  { NULL }
};
