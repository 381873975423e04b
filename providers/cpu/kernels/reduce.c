/* reduce.c: CPU kernels of the reduction family (Reduce*, ArgMax/ArgMin, TopK) and Einsum. The
 * resampling ops Resize and Upsample are in resize.c. */
#include "../cpu-kernels-private.h"
#include "numeric-private.h"
#include "../cpu-simd-private.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <string.h>

/* Shared with engine/ops/reduce.c, where it is defined and documented. */
gboolean _owb_einsum_parse (const char *equation, int n_operands, const int *ranks, int *labels, int *out_rank,
                            int *out_labels, char **message);

/* Work below this many elements is not worth handing to another thread. */
#define PARALLEL_GRAIN 32768

static int64_t
grain_for (int64_t work_per_unit)
{
  return MAX (1, PARALLEL_GRAIN / MAX (1, work_per_unit));
}

/* Per-type traits, named by the OWB_TYPE suffix the X-macros pass. ACC_: the accumulator of
 * sums and products (integers wrap as in the element type once cast back). */
#define ACC_FLOAT float
#define ACC_DOUBLE double
#define ACC_INT8 int64_t
#define ACC_INT16 int64_t
#define ACC_INT32 int64_t
#define ACC_INT64 int64_t
#define ACC_UINT8 uint64_t
#define ACC_UINT16 uint64_t
#define ACC_UINT32 uint64_t
#define ACC_UINT64 uint64_t

#define ABS_FLOAT(v) fabsf (v)
#define ABS_DOUBLE(v) fabs (v)
#define ABS_SIGNED_(v) ((v) < 0 ? -(v) : (v))
#define ABS_INT8(v) ABS_SIGNED_ (v)
#define ABS_INT16(v) ABS_SIGNED_ (v)
#define ABS_INT32(v) ABS_SIGNED_ (v)
#define ABS_INT64(v) ABS_SIGNED_ (v)
#define ABS_UINT8(v) (v)
#define ABS_UINT16(v) (v)
#define ABS_UINT32(v) (v)
#define ABS_UINT64(v) (v)

/* Float working type of a dtype: float stays float, everything else computes in double. */
#define WORK_FLOAT float
#define WORK_DOUBLE double
#define WORK_INT8 double
#define WORK_INT16 double
#define WORK_INT32 double
#define WORK_INT64 double
#define WORK_UINT8 double
#define WORK_UINT16 double
#define WORK_UINT32 double
#define WORK_UINT64 double


/* NaN-aware comparisons in which a NaN `a` wins against a number (numpy's argmax and argmin both
 * pick NaN; TopK's largest puts it first). */
#define NAN_GT(a, b) ((a) > (b) || ((a) != (a) && (b) == (b)))
#define NAN_LT(a, b) ((a) < (b) || ((a) != (a) && (b) == (b)))

/* ------------------------------------------------------------------------------------------ */
/* Reduce*                                                                                      */

typedef enum {
  RED_SUM,
  RED_MEAN,
  RED_MAX,
  RED_MIN,
  RED_PROD,
  RED_L1,
  RED_L2,
  RED_LOG_SUM,
  RED_LOG_SUM_EXP,
  RED_SUM_SQUARE
} ReduceKind;

static const struct {
  const char *op;
  ReduceKind kind;
} reduce_ops[] = {
  { "ReduceSum", RED_SUM },         { "ReduceMean", RED_MEAN },     { "ReduceMax", RED_MAX },
  { "ReduceMin", RED_MIN },         { "ReduceProd", RED_PROD },     { "ReduceL1", RED_L1 },
  { "ReduceL2", RED_L2 },           { "ReduceLogSum", RED_LOG_SUM }, { "ReduceLogSumExp", RED_LOG_SUM_EXP },
  { "ReduceSumSquare", RED_SUM_SQUARE },
};

typedef struct {
  ReduceKind kind;
  gboolean axes_input; /* axes come from input 1 (ReduceSum-13, the others from 18) */
  gboolean keepdims;
  gboolean noop_with_empty_axes;
  int n_axes;          /* attribute axes (before axes became an input) */
  int64_t axes[OWB_MAX_RANK];
} ReduceParams;

static gboolean
reduce_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state, GError **error)
{
  ReduceParams *p = g_new0 (ReduceParams, 1);
  gboolean found = FALSE;

  for (guint i = 0; i < G_N_ELEMENTS (reduce_ops); i++)
    if (strcmp (node->op_type, reduce_ops[i].op) == 0) {
      p->kind = reduce_ops[i].kind;
      found = TRUE;
    }
  if (!found) {
    g_free (p);
    _owb_cpu_node_error (node, error, OWB_ERROR_UNSUPPORTED_OP, "not a reduction");
    return FALSE;
  }
  p->axes_input = opset >= 18 || (opset >= 13 && p->kind == RED_SUM);
  p->keepdims = owb_node_get_int (node, "keepdims", 1) != 0;
  p->noop_with_empty_axes = p->axes_input && owb_node_get_int (node, "noop_with_empty_axes", 0) != 0;
  if (!p->axes_input) {
    int n = 0;
    const int64_t *a = owb_node_get_ints (node, "axes", &n);
    if (n > OWB_MAX_RANK) {
      g_free (p);
      _owb_cpu_node_error (node, error, OWB_ERROR_SHAPE, "%d axes are more than the rank allows", n);
      return FALSE;
    }
    if (n > 0) /* a is NULL when the attribute is absent */
      memcpy (p->axes, a, sizeof (int64_t) * n);
    p->n_axes = n;
  }
  *state = p;
  return TRUE;
}

/* The iteration of a reduction after dims of size 1 are dropped and neighbouring dims that are
 * both reduced or both kept are merged. Either the innermost run is reduced (each output is a
 * sum over contiguous runs: "last_reduced"), or it is kept (each output row accumulates
 * contiguous input rows). */
typedef struct {
  gboolean last_reduced;
  int64_t len;                  /* length of the contiguous innermost run */
  int n_outer;                  /* kept dims that index units */
  int64_t outer_dims[OWB_MAX_RANK];
  int64_t outer_strides[OWB_MAX_RANK];
  int64_t n_units;              /* outputs (last_reduced) or output rows of len */
  int64_t n_blocks;             /* runs per unit */
  int64_t *block_offsets;
  int64_t count;                /* input elements reduced into each output */
} ReducePlan;

static gboolean
reduce_plan_init (ReducePlan *p, int rank, const int64_t *dims, const gboolean *mask, GError **error)
{
  int64_t mdims[OWB_MAX_RANK + 1], mstrides[OWB_MAX_RANK + 1];
  gboolean mred[OWB_MAX_RANK + 1];
  int nm = 0, last;
  int red_dims[OWB_MAX_RANK];
  int n_red = 0;

  memset (p, 0, sizeof (*p));
  for (int d = 0; d < rank; d++) {
    if (dims[d] == 1)
      continue;
    if (nm > 0 && mred[nm - 1] == mask[d]) {
      mdims[nm - 1] *= dims[d];
    } else {
      mdims[nm] = dims[d];
      mred[nm] = mask[d];
      nm++;
    }
  }
  if (nm == 0) {
    mdims[0] = 1;
    mred[0] = TRUE;
    nm = 1;
  }
  mstrides[nm - 1] = 1;
  for (int d = nm - 2; d >= 0; d--)
    mstrides[d] = mstrides[d + 1] * mdims[d + 1];

  last = nm - 1;
  p->last_reduced = mred[last];
  p->len = mdims[last];
  p->count = 1;
  p->n_units = 1;
  for (int d = 0; d < nm; d++) {
    if (mred[d]) {
      p->count *= mdims[d];
      if (d != last)
        red_dims[n_red++] = d;
    } else if (d != last) {
      p->outer_dims[p->n_outer] = mdims[d];
      p->outer_strides[p->n_outer] = mstrides[d];
      p->n_outer++;
      p->n_units *= mdims[d];
    }
  }
  p->n_blocks = 1;
  for (int k = 0; k < n_red; k++)
    p->n_blocks *= mdims[red_dims[k]];
  p->block_offsets = g_try_new (int64_t, MAX (1, p->n_blocks));
  if (p->block_offsets == NULL) {
    g_set_error (error, OWB_ERROR, OWB_ERROR_NOMEM, "out of memory planning a reduction");
    return FALSE;
  }
  /* Offsets of the runs of one unit, in row-major order of the reduced dims. */
  {
    int64_t idx[OWB_MAX_RANK] = { 0 };
    int64_t off = 0;
    for (int64_t b = 0; b < p->n_blocks; b++) {
      p->block_offsets[b] = off;
      for (int k = n_red - 1; k >= 0; k--) {
        int d = red_dims[k];
        idx[k]++;
        off += mstrides[d];
        if (idx[k] < mdims[d])
          break;
        off -= mstrides[d] * mdims[d];
        idx[k] = 0;
      }
    }
  }
  return TRUE;
}

static inline int64_t
plan_unit_offset (const ReducePlan *p, int64_t u)
{
  int64_t off = 0;
  for (int d = p->n_outer - 1; d >= 0; d--) {
    int64_t n = p->outer_dims[d];
    off += (u % n) * p->outer_strides[d];
    u /= n;
  }
  return off;
}

typedef struct {
  const ReducePlan *plan;
  ReduceKind kind;
  OwbDataType dtype;
  const void *x;
  void *y;
} ReduceJob;

/* Accumulation steps, as statements on an accumulator `a` and an input element `v`. */
#define STEP_SUM(N, A, a, v) a += (A) (v)
#define STEP_ABS(N, A, a, v) a += ABS_##N ((A) (v))
#define STEP_SQUARE(N, A, a, v) \
  do {                          \
    A t_ = (A) (v);             \
    a += t_ * t_;               \
  } while (0)
#define STEP_PROD(N, A, a, v) a *= (A) (v)
/* max/min keep NaN (as numpy does); written as selects so that row loops vectorise. */
#define STEP_MAX(N, A, a, v)             \
  do {                                   \
    A t_ = (A) (v);                      \
    a = (t_ > a || t_ != t_) ? t_ : a;   \
  } while (0)
#define STEP_MIN(N, A, a, v)             \
  do {                                   \
    A t_ = (A) (v);                      \
    a = (t_ < a || t_ != t_) ? t_ : a;   \
  } while (0)
#define MERGE_SUM(N, A, a, b) a += b
#define MERGE_PROD(N, A, a, b) a *= b
#define MERGE_MAX(N, A, a, b) STEP_MAX (N, A, a, b)
#define MERGE_MIN(N, A, a, b) STEP_MIN (N, A, a, b)

/* One reduction loop over units [begin, end) for one accumulation (STEP/MERGE) and start value. */
#define REDUCE_LOOP(T, N, A, INIT, STEP, MERGE)                                                        \
  do {                                                                                                 \
    const ReducePlan *p = job->plan;                                                                   \
    const T *x = job->x;                                                                               \
    T *y = job->y;                                                                                     \
    const int64_t len = p->len;                                                                        \
    if (p->last_reduced) {                                                                             \
      for (int64_t u = begin; u < end; u++) {                                                          \
        const T *base = x + plan_unit_offset (p, u);                                                   \
        A a0 = INIT, a1 = INIT, a2 = INIT, a3 = INIT;                                                  \
        for (int64_t b = 0; b < p->n_blocks; b++) {                                                    \
          const T *q = base + p->block_offsets[b];                                                     \
          int64_t j = 0;                                                                               \
          for (; j + 4 <= len; j += 4) {                                                               \
            STEP (N, A, a0, q[j]);                                                                     \
            STEP (N, A, a1, q[j + 1]);                                                                 \
            STEP (N, A, a2, q[j + 2]);                                                                 \
            STEP (N, A, a3, q[j + 3]);                                                                 \
          }                                                                                            \
          for (; j < len; j++)                                                                         \
            STEP (N, A, a0, q[j]);                                                                     \
        }                                                                                              \
        MERGE (N, A, a0, a1);                                                                          \
        MERGE (N, A, a2, a3);                                                                          \
        MERGE (N, A, a0, a2);                                                                          \
        y[u] = finish_##N (a0, job->kind, p->count);                                                   \
      }                                                                                                \
    } else {                                                                                           \
      A *acc = g_new (A, len);                                                                         \
      for (int64_t u = begin; u < end; u++) {                                                          \
        const T *base = x + plan_unit_offset (p, u);                                                   \
        T *yrow = y + u * len;                                                                         \
        for (int64_t j = 0; j < len; j++)                                                              \
          acc[j] = INIT;                                                                               \
        for (int64_t b = 0; b < p->n_blocks; b++) {                                                    \
          const T *restrict q = base + p->block_offsets[b];                                            \
          A *restrict ar = acc;                                                                        \
          for (int64_t j = 0; j < len; j++)                                                            \
            STEP (N, A, ar[j], q[j]);                                                                  \
        }                                                                                              \
        for (int64_t j = 0; j < len; j++)                                                              \
          yrow[j] = finish_##N (acc[j], job->kind, p->count);                                          \
      }                                                                                                \
      g_free (acc);                                                                                    \
    }                                                                                                  \
  } while (0)

/* LogSumExp: the maximum first, so that exp never overflows. */
#define LSE_LOOP(T, N)                                                                                 \
  do {                                                                                                 \
    typedef WORK_##N W;                                                                                \
    const ReducePlan *p = job->plan;                                                                   \
    const T *x = job->x;                                                                               \
    T *y = job->y;                                                                                     \
    const int64_t len = p->len;                                                                        \
    if (p->last_reduced) {                                                                             \
      for (int64_t u = begin; u < end; u++) {                                                          \
        const T *base = x + plan_unit_offset (p, u);                                                   \
        W m = -INFINITY, s = 0;                                                                        \
        for (int64_t b = 0; b < p->n_blocks; b++)                                                      \
          for (int64_t j = 0; j < len; j++)                                                            \
            STEP_MAX (N, W, m, base[p->block_offsets[b] + j]);                                         \
        if (!isfinite (m))                                                                             \
          m = isnan (m) ? m : 0;                                                                       \
        for (int64_t b = 0; b < p->n_blocks; b++)                                                      \
          for (int64_t j = 0; j < len; j++)                                                            \
            s += work_exp ((W) base[p->block_offsets[b] + j] - m);                                     \
        y[u] = from_double_##N ((double) (work_log (s) + m));                                          \
      }                                                                                                \
    } else {                                                                                           \
      W *m = g_new (W, 2 * len);                                                                       \
      W *s = m + len;                                                                                  \
      for (int64_t u = begin; u < end; u++) {                                                          \
        const T *base = x + plan_unit_offset (p, u);                                                   \
        T *yrow = y + u * len;                                                                         \
        for (int64_t j = 0; j < len; j++) {                                                            \
          m[j] = -INFINITY;                                                                            \
          s[j] = 0;                                                                                    \
        }                                                                                              \
        for (int64_t b = 0; b < p->n_blocks; b++)                                                      \
          for (int64_t j = 0; j < len; j++)                                                            \
            STEP_MAX (N, W, m[j], base[p->block_offsets[b] + j]);                                      \
        for (int64_t j = 0; j < len; j++)                                                              \
          if (!isfinite (m[j]))                                                                        \
            m[j] = isnan (m[j]) ? m[j] : 0;                                                            \
        for (int64_t b = 0; b < p->n_blocks; b++)                                                      \
          for (int64_t j = 0; j < len; j++)                                                            \
            s[j] += work_exp ((W) base[p->block_offsets[b] + j] - m[j]);                               \
        for (int64_t j = 0; j < len; j++)                                                              \
          yrow[j] = from_double_##N ((double) (work_log (s[j]) + m[j]));                               \
      }                                                                                                \
      g_free (m);                                                                                      \
    }                                                                                                  \
  } while (0)

#define work_exp(w) _Generic ((w), float: expf, default: exp) (w)
#define work_log(w) _Generic ((w), float: logf, default: log) (w)

/* Turns an accumulator into the output element. */
#define DEFINE_FINISH(T, N)                                                                           \
  static inline T finish_##N (ACC_##N a, ReduceKind kind, int64_t count)                              \
  {                                                                                                   \
    switch (kind) {                                                                                   \
    case RED_MEAN:                                                                                    \
      if (IS_FLOAT_##N)                                                                               \
        return (T) (a / (ACC_##N) count);                                                             \
      return count ? (T) (a / (ACC_##N) count) : (T) 0;                                               \
    case RED_L2:                                                                                      \
      return from_double_##N (sqrt ((double) a));                                                     \
    case RED_LOG_SUM:                                                                                 \
      return IS_FLOAT_##N ? (T) log ((double) a) : from_double_##N (log ((double) a));                \
    default:                                                                                          \
      return (T) a;                                                                                   \
    }                                                                                                 \
  }
OWB_CPU_FOR_NUMERIC (DEFINE_FINISH)

/* float runs reduced with explicit 4-lane vectors (cpu-simd-private.h; two of them, for latency):
 * strict IEEE order forbids the compiler from vectorising a scalar sum itself. */
static void
reduce_float_runs (const ReduceJob *job, int64_t begin, int64_t end)
{
  const ReducePlan *p = job->plan;
  const float *x = job->x;
  float *y = job->y;
  const int64_t len = p->len;
  const ReduceKind kind = job->kind;
  const gboolean is_max = kind == RED_MAX, is_min = kind == RED_MIN;
  const float init = is_max ? -INFINITY : is_min ? INFINITY : 0.0f;

  for (int64_t u = begin; u < end; u++) {
    const float *base = x + plan_unit_offset (p, u);
    v4f a0 = { init, init, init, init }, a1 = a0;
    float tail = init;
    for (int64_t b = 0; b < p->n_blocks; b++) {
      const float *q = base + p->block_offsets[b];
      int64_t j = 0;
      switch (kind) {
      case RED_L1: {
        const v4i abs_mask = { 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff };
        for (; j + 8 <= len; j += 8) {
          a0 += (v4f) ((v4i) load4 (q + j) & abs_mask);
          a1 += (v4f) ((v4i) load4 (q + j + 4) & abs_mask);
        }
        for (; j < len; j++)
          tail += fabsf (q[j]);
        break;
      }
      case RED_L2:
      case RED_SUM_SQUARE:
        for (; j + 8 <= len; j += 8) {
          v4f v0 = load4 (q + j), v1 = load4 (q + j + 4);
          a0 += v0 * v0;
          a1 += v1 * v1;
        }
        for (; j < len; j++)
          tail += q[j] * q[j];
        break;
      case RED_MAX:
      case RED_MIN:
        for (; j + 8 <= len; j += 8) {
          v4f v0 = load4 (q + j), v1 = load4 (q + j + 4);
          v4i m0 = (is_max ? (v0 > a0) : (v0 < a0)) | (v0 != v0);
          v4i m1 = (is_max ? (v1 > a1) : (v1 < a1)) | (v1 != v1);
          a0 = select4 (m0, v0, a0);
          a1 = select4 (m1, v1, a1);
        }
        for (; j < len; j++) {
          if (is_max)
            STEP_MAX (FLOAT, float, tail, q[j]);
          else
            STEP_MIN (FLOAT, float, tail, q[j]);
        }
        break;
      default:
        for (; j + 8 <= len; j += 8) {
          a0 += load4 (q + j);
          a1 += load4 (q + j + 4);
        }
        for (; j < len; j++)
          tail += q[j];
        break;
      }
    }
    if (is_max || is_min) {
      for (int l = 0; l < 4; l++) {
        if (is_max) {
          STEP_MAX (FLOAT, float, tail, a0[l]);
          STEP_MAX (FLOAT, float, tail, a1[l]);
        } else {
          STEP_MIN (FLOAT, float, tail, a0[l]);
          STEP_MIN (FLOAT, float, tail, a1[l]);
        }
      }
    } else {
      v4f a = a0 + a1;
      tail += (a[0] + a[1]) + (a[2] + a[3]);
    }
    y[u] = finish_FLOAT (tail, kind, p->count);
  }
}

#define DEFINE_REDUCE(T, N)                                                                           \
  static void reduce_units_##N (int64_t begin, int64_t end, gpointer data)                            \
  {                                                                                                   \
    const ReduceJob *job = data;                                                                      \
    if (job->dtype == OWB_TYPE_FLOAT && job->plan->last_reduced && job->plan->len >= 16 &&           \
        job->kind != RED_PROD && job->kind != RED_LOG_SUM_EXP) {                                      \
      reduce_float_runs (job, begin, end);                                                            \
      return;                                                                                         \
    }                                                                                                 \
    switch (job->kind) {                                                                              \
    case RED_SUM:                                                                                     \
    case RED_MEAN:                                                                                    \
    case RED_LOG_SUM:                                                                                 \
      REDUCE_LOOP (T, N, ACC_##N, 0, STEP_SUM, MERGE_SUM);                                            \
      break;                                                                                          \
    case RED_L1:                                                                                      \
      REDUCE_LOOP (T, N, ACC_##N, 0, STEP_ABS, MERGE_SUM);                                            \
      break;                                                                                          \
    case RED_L2:                                                                                      \
    case RED_SUM_SQUARE:                                                                              \
      REDUCE_LOOP (T, N, ACC_##N, 0, STEP_SQUARE, MERGE_SUM);                                         \
      break;                                                                                          \
    case RED_PROD:                                                                                    \
      REDUCE_LOOP (T, N, ACC_##N, 1, STEP_PROD, MERGE_PROD);                                          \
      break;                                                                                          \
    case RED_MAX:                                                                                     \
      REDUCE_LOOP (T, N, ACC_##N, (ACC_##N) LOWEST_##N, STEP_MAX, MERGE_MAX);                         \
      break;                                                                                          \
    case RED_MIN:                                                                                     \
      REDUCE_LOOP (T, N, ACC_##N, (ACC_##N) HIGHEST_##N, STEP_MIN, MERGE_MIN);                        \
      break;                                                                                          \
    case RED_LOG_SUM_EXP:                                                                             \
      LSE_LOOP (T, N);                                                                                \
      break;                                                                                          \
    }                                                                                                 \
  }
OWB_CPU_FOR_NUMERIC (DEFINE_REDUCE)

static gboolean
reduce_compute (OwbKernelContext *ctx, GError **error)
{
  const ReduceParams *params = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = ctx->outputs[0];
  int64_t axes[OWB_MAX_RANK];
  int n_axes = 0;
  gboolean mask[OWB_MAX_RANK] = { FALSE };
  ReducePlan plan;
  ReduceJob job;
  OwbParallelFunc fn = NULL;
  OwbDataType dtype = x->dtype;

  if (params->axes_input) {
    const OwbTensor *a = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
    if (a != NULL) {
      if (a->nelems > OWB_MAX_RANK) {
        owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "%" G_GINT64_FORMAT " axes are more than the rank allows",
                              a->nelems);
        return FALSE;
      }
      for (int64_t k = 0; k < a->nelems; k++)
        axes[k] = owb_tensor_get_int64 (a, k);
      n_axes = (int) a->nelems;
    }
  } else {
    memcpy (axes, params->axes, sizeof (int64_t) * params->n_axes);
    n_axes = params->n_axes;
  }

  if (n_axes == 0 && params->noop_with_empty_axes) {
    if (y->nbytes != x->nbytes) {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output size does not match the input");
      return FALSE;
    }
    if (x->nbytes)
      memcpy (y->data, x->data, x->nbytes);
    return TRUE;
  }
  for (int k = 0; k < n_axes; k++) {
    int64_t a = axes[k] < 0 ? axes[k] + x->rank : axes[k];
    if (a < 0 || a >= x->rank || mask[a]) {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "axis %" G_GINT64_FORMAT " is out of range or repeated", axes[k]);
      return FALSE;
    }
    mask[a] = TRUE;
  }
  if (n_axes == 0)
    for (int d = 0; d < x->rank; d++)
      mask[d] = TRUE;

  if (y->nelems == 0)
    return TRUE;
  if (!reduce_plan_init (&plan, x->rank, x->dims, mask, error))
    return FALSE;
  if (plan.n_units * (plan.last_reduced ? 1 : plan.len) != y->nelems) {
    g_free (plan.block_offsets);
    owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output has %" G_GINT64_FORMAT " elements, expected %" G_GINT64_FORMAT,
                          y->nelems, plan.n_units * (plan.last_reduced ? 1 : plan.len));
    return FALSE;
  }

  if (dtype == OWB_TYPE_BOOL) {
    if (params->kind != RED_MAX && params->kind != RED_MIN) {
      g_free (plan.block_offsets);
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "bool is only supported by ReduceMax and ReduceMin");
      return FALSE;
    }
    dtype = OWB_TYPE_UINT8;
  }
  switch (dtype) {
#define CASE(T, N)                \
  case OWB_TYPE_##N:              \
    fn = reduce_units_##N;        \
    break;
    OWB_CPU_FOR_NUMERIC (CASE)
#undef CASE
  default:
    break;
  }
  if (fn == NULL) {
    g_free (plan.block_offsets);
    owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "type %s is not supported", owb_data_type_name (x->dtype));
    return FALSE;
  }
  /* An empty input has no data (NULL): the loops add zero offsets to it and read nothing, but
   * arithmetic on a null pointer is undefined, so they get a valid address instead. */
  static const int64_t no_elements[1];
  job = (ReduceJob) { &plan, params->kind, dtype, x->data ? x->data : (const void *) no_elements, y->data };
  owb_parallel_for (ctx->pool, plan.n_units, grain_for (plan.count * (plan.last_reduced ? 1 : plan.len)), fn, &job);

  /* The empty AND of bools is true; uint8's largest value is not. */
  if (x->dtype == OWB_TYPE_BOOL && params->kind == RED_MIN && plan.count == 0)
    memset (y->data, 1, y->nelems);
  g_free (plan.block_offsets);
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* ArgMax / ArgMin                                                                              */

typedef struct {
  gboolean is_max;
  gboolean select_last;
  int64_t axis;
} ArgParams;

static gboolean
arg_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state, GError **error)
{
  ArgParams *p = g_new0 (ArgParams, 1);
  p->is_max = strcmp (node->op_type, "ArgMax") == 0;
  p->select_last = opset >= 12 && owb_node_get_int (node, "select_last_index", 0) != 0;
  p->axis = owb_node_get_int (node, "axis", 0);
  *state = p;
  return TRUE;
}

typedef struct {
  const void *x;
  int64_t *y;
  int64_t n, inner;
  int mode; /* bit 0: max, bit 1: select last index */
} ArgJob;

/* `better (v, b)`: v replaces the best so far. Ties keep the first index unless the last is
 * wanted; NaN wins as numpy's argmax/argmin have it. */
#define ARG_BETTER_0(v, b) NAN_LT (v, b)
#define ARG_BETTER_1(v, b) NAN_GT (v, b)
#define ARG_BETTER_2(v, b) (!NAN_LT (b, v))
#define ARG_BETTER_3(v, b) (!NAN_GT (b, v))

#define ARG_LOOP(T, BETTER)                                                                           \
  for (int64_t o = begin; o < end; o++) {                                                             \
    const T *base = (const T *) job->x + o * n * inner;                                               \
    int64_t *out = job->y + o * inner;                                                                \
    if (inner == 1) {                                                                                 \
      T bv = base[0];                                                                                 \
      int64_t bi = 0;                                                                                 \
      for (int64_t i = 1; i < n; i++)                                                                 \
        if (BETTER (base[i], bv)) {                                                                   \
          bv = base[i];                                                                               \
          bi = i;                                                                                     \
        }                                                                                             \
      out[0] = bi;                                                                                    \
    } else {                                                                                          \
      memcpy (best, base, sizeof (T) * inner);                                                        \
      for (int64_t j = 0; j < inner; j++)                                                             \
        out[j] = 0;                                                                                   \
      for (int64_t i = 1; i < n; i++) {                                                               \
        const T *row = base + i * inner;                                                              \
        for (int64_t j = 0; j < inner; j++)                                                           \
          if (BETTER (row[j], best[j])) {                                                             \
            best[j] = row[j];                                                                         \
            out[j] = i;                                                                               \
          }                                                                                           \
      }                                                                                               \
    }                                                                                                 \
  }

/* A contiguous float row: the extreme value with vectors first (NaN kept), then where it is. */
static int64_t
arg_float_row (const float *q, int64_t n, gboolean is_max, gboolean last)
{
  v4f a0 = { q[0], q[0], q[0], q[0] }, a1 = a0;
  float m = q[0];
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    v4f v0 = load4 (q + j), v1 = load4 (q + j + 4);
    v4i m0 = (is_max ? (v0 > a0) : (v0 < a0)) | (v0 != v0);
    v4i m1 = (is_max ? (v1 > a1) : (v1 < a1)) | (v1 != v1);
    a0 = select4 (m0, v0, a0);
    a1 = select4 (m1, v1, a1);
  }
  for (int l = 0; l < 4; l++) {
    if (is_max) {
      STEP_MAX (FLOAT, float, m, a0[l]);
      STEP_MAX (FLOAT, float, m, a1[l]);
    } else {
      STEP_MIN (FLOAT, float, m, a0[l]);
      STEP_MIN (FLOAT, float, m, a1[l]);
    }
  }
  for (; j < n; j++) {
    if (is_max)
      STEP_MAX (FLOAT, float, m, q[j]);
    else
      STEP_MIN (FLOAT, float, m, q[j]);
  }
  if (m != m) {
    if (last) {
      for (int64_t i = n - 1; i > 0; i--)
        if (q[i] != q[i])
          return i;
      return 0;
    }
    for (int64_t i = 0; i < n; i++)
      if (q[i] != q[i])
        return i;
  }
  if (last) {
    for (int64_t i = n - 1; i > 0; i--)
      if (q[i] == m)
        return i;
    return 0;
  }
  for (int64_t i = 0; i < n; i++)
    if (q[i] == m)
      return i;
  return 0;
}

#define DEFINE_ARG(T, N)                                                                              \
  static void arg_units_##N (int64_t begin, int64_t end, gpointer data)                               \
  {                                                                                                   \
    const ArgJob *job = data;                                                                         \
    const int64_t n = job->n, inner = job->inner;                                                     \
    if (IS_FLOAT_##N && sizeof (T) == 4 && inner == 1) {                                              \
      for (int64_t o = begin; o < end; o++)                                                           \
        job->y[o] = arg_float_row ((const float *) job->x + o * n, n, job->mode & 1, job->mode & 2);   \
      return;                                                                                         \
    }                                                                                                 \
    T *best = inner > 1 ? g_new (T, inner) : NULL;                                                    \
    switch (job->mode) {                                                                              \
    case 0:                                                                                           \
      ARG_LOOP (T, ARG_BETTER_0);                                                                     \
      break;                                                                                          \
    case 1:                                                                                           \
      ARG_LOOP (T, ARG_BETTER_1);                                                                     \
      break;                                                                                          \
    case 2:                                                                                           \
      ARG_LOOP (T, ARG_BETTER_2);                                                                     \
      break;                                                                                          \
    default:                                                                                          \
      ARG_LOOP (T, ARG_BETTER_3);                                                                     \
      break;                                                                                          \
    }                                                                                                 \
    g_free (best);                                                                                    \
  }
OWB_CPU_FOR_NUMERIC (DEFINE_ARG)

static gboolean
arg_compute (OwbKernelContext *ctx, GError **error)
{
  const ArgParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = ctx->outputs[0];
  int64_t axis = p->axis < 0 ? p->axis + x->rank : p->axis;
  int64_t outer = 1, inner = 1, n;
  OwbParallelFunc fn = NULL;
  ArgJob job;

  if (axis < 0 || axis >= x->rank) {
    owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "axis %" G_GINT64_FORMAT " is out of range for rank %d", p->axis,
                          x->rank);
    return FALSE;
  }
  for (int d = 0; d < axis; d++)
    outer *= x->dims[d];
  for (int d = axis + 1; d < x->rank; d++)
    inner *= x->dims[d];
  n = x->dims[axis];
  if (outer * inner == 0)
    return TRUE;
  if (n == 0) {
    owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "cannot take %s over an empty axis", ctx->node->op_type);
    return FALSE;
  }
  switch (x->dtype) {
#define CASE(T, N)           \
  case OWB_TYPE_##N:         \
    fn = arg_units_##N;      \
    break;
    OWB_CPU_FOR_NUMERIC (CASE)
#undef CASE
  default:
    owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "type %s is not supported", owb_data_type_name (x->dtype));
    return FALSE;
  }
  job = (ArgJob) { x->data, y->data, n, inner, (p->is_max ? 1 : 0) | (p->select_last ? 2 : 0) };
  owb_parallel_for (ctx->pool, outer, grain_for (n * inner), fn, &job);
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* TopK                                                                                         */

typedef struct {
  int64_t axis;
  gboolean largest;
  int64_t k_attr; /* before opset 10 */
  gboolean k_from_input;
} TopKParams;

static gboolean
topk_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state, GError **error)
{
  TopKParams *p = g_new0 (TopKParams, 1);
  p->axis = owb_node_get_int (node, "axis", -1);
  p->largest = opset < 11 || owb_node_get_int (node, "largest", 1) != 0;
  p->k_from_input = opset >= 10;
  p->k_attr = owb_node_get_int (node, "k", -1);
  *state = p;
  return TRUE;
}

typedef struct {
  const void *x;
  void *values;
  int64_t *indices;
  int64_t n, inner, k;
  gboolean largest;
} TopKJob;

/* Whether value a comes before value b in the result: largest first with NaN first (as numpy's
 * sort puts it last), or smallest first with NaN last. Equal values go by lower index. */
#define TOPK_VBEFORE_1(a, b) NAN_GT (a, b)
#define TOPK_VBEFORE_0(a, b) ((a) < (b) || ((b) != (b) && (a) == (a)))

/* Heap of k (value, index) items whose root is the one that comes last; scanning in index order,
 * a candidate replaces the root only when its value comes strictly before (its index is higher
 * than any in the heap). O(n log k). The heap is then unwound into the output, best first. */
#define DEFINE_TOPK_VARIANT(T, N, L)                                                                  \
  static inline gboolean topk_before_##N##_##L (TopKItem_##N a, TopKItem_##N b)                       \
  {                                                                                                   \
    return TOPK_VBEFORE_##L (a.v, b.v) || (!TOPK_VBEFORE_##L (b.v, a.v) && a.i < b.i);                \
  }                                                                                                   \
  static void topk_sift_##N##_##L (TopKItem_##N *heap, int64_t size, int64_t at)                      \
  {                                                                                                   \
    TopKItem_##N item = heap[at];                                                                     \
    for (;;) {                                                                                        \
      int64_t c = 2 * at + 1;                                                                         \
      if (c >= size)                                                                                  \
        break;                                                                                        \
      if (c + 1 < size && topk_before_##N##_##L (heap[c], heap[c + 1]))                               \
        c++;                                                                                          \
      if (!topk_before_##N##_##L (item, heap[c]))                                                     \
        break;                                                                                        \
      heap[at] = heap[c];                                                                             \
      at = c;                                                                                         \
    }                                                                                                 \
    heap[at] = item;                                                                                  \
  }                                                                                                   \
  static void topk_units_##N##_##L (int64_t begin, int64_t end, gpointer data)                        \
  {                                                                                                   \
    const TopKJob *job = data;                                                                        \
    const int64_t n = job->n, inner = job->inner, k = job->k;                                         \
    T *tmp = inner > 1 ? g_new (T, n) : NULL;                                                         \
    TopKItem_##N *heap = g_new (TopKItem_##N, k);                                                     \
    for (int64_t s = begin; s < end; s++) {                                                           \
      int64_t o = s / inner, j = s % inner;                                                           \
      const T *src = (const T *) job->x + o * n * inner + j;                                          \
      const T *v;                                                                                     \
      T *vals = (T *) job->values + o * k * inner + j;                                                \
      int64_t *idx = job->indices + o * k * inner + j;                                                \
      if (inner == 1) {                                                                               \
        v = src;                                                                                      \
      } else {                                                                                        \
        for (int64_t i = 0; i < n; i++)                                                               \
          tmp[i] = src[i * inner];                                                                    \
        v = tmp;                                                                                      \
      }                                                                                               \
      if (k == 1) {                                                                                   \
        T best = v[0];                                                                                \
        int64_t b = 0;                                                                                \
        for (int64_t i = 1; i < n; i++)                                                               \
          if (TOPK_VBEFORE_##L (v[i], best)) {                                                        \
            best = v[i];                                                                              \
            b = i;                                                                                    \
          }                                                                                           \
        vals[0] = best;                                                                               \
        idx[0] = b;                                                                                   \
        continue;                                                                                     \
      }                                                                                               \
      for (int64_t i = 0; i < k; i++)                                                                 \
        heap[i] = (TopKItem_##N) { v[i], i };                                                         \
      for (int64_t i = k / 2 - 1; i >= 0; i--)                                                        \
        topk_sift_##N##_##L (heap, k, i);                                                             \
      T last = heap[0].v;                                                                             \
      for (int64_t i = k; i < n; i++)                                                                 \
        if (TOPK_VBEFORE_##L (v[i], last)) {                                                          \
          heap[0] = (TopKItem_##N) { v[i], i };                                                       \
          topk_sift_##N##_##L (heap, k, 0);                                                           \
          last = heap[0].v;                                                                           \
        }                                                                                             \
      for (int64_t e = k - 1; e >= 0; e--) {                                                          \
        vals[e * inner] = heap[0].v;                                                                  \
        idx[e * inner] = heap[0].i;                                                                   \
        heap[0] = heap[e];                                                                            \
        topk_sift_##N##_##L (heap, e, 0);                                                             \
      }                                                                                               \
    }                                                                                                 \
    g_free (heap);                                                                                    \
    g_free (tmp);                                                                                     \
  }
#define DEFINE_TOPK(T, N)                                                                             \
  typedef struct {                                                                                    \
    T v;                                                                                              \
    int64_t i;                                                                                        \
  } TopKItem_##N;                                                                                     \
  DEFINE_TOPK_VARIANT (T, N, 0)                                                                       \
  DEFINE_TOPK_VARIANT (T, N, 1)
OWB_CPU_FOR_NUMERIC (DEFINE_TOPK)

static gboolean
topk_compute (OwbKernelContext *ctx, GError **error)
{
  const TopKParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *values = ctx->outputs[0], *indices = ctx->outputs[1];
  int64_t axis = p->axis < 0 ? p->axis + x->rank : p->axis;
  int64_t k = p->k_attr, outer = 1, inner = 1, n;
  OwbParallelFunc fn = NULL;
  TopKJob job;

  if (p->k_from_input) {
    const OwbTensor *kt = ctx->inputs[1];
    if (kt == NULL || kt->nelems != 1) {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "'K' must hold one value");
      return FALSE;
    }
    k = owb_tensor_get_int64 (kt, 0);
  }
  if (axis < 0 || axis >= x->rank) {
    owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "axis %" G_GINT64_FORMAT " is out of range for rank %d", p->axis,
                          x->rank);
    return FALSE;
  }
  n = x->dims[axis];
  if (k < 0 || k > n) {
    owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "k = %" G_GINT64_FORMAT " is out of range for an axis of %" G_GINT64_FORMAT,
                          k, n);
    return FALSE;
  }
  if (values == NULL || indices == NULL || values->dims[axis] != k || indices->dims[axis] != k) {
    owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "outputs do not have k = %" G_GINT64_FORMAT " along the axis", k);
    return FALSE;
  }
  for (int d = 0; d < axis; d++)
    outer *= x->dims[d];
  for (int d = axis + 1; d < x->rank; d++)
    inner *= x->dims[d];
  if (k == 0 || outer * inner == 0)
    return TRUE;
  switch (x->dtype) {
#define CASE(T, N)                                                \
  case OWB_TYPE_##N:                                              \
    fn = p->largest ? topk_units_##N##_1 : topk_units_##N##_0;    \
    break;
    OWB_CPU_FOR_NUMERIC (CASE)
#undef CASE
  default:
    owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "type %s is not supported", owb_data_type_name (x->dtype));
    return FALSE;
  }
  job = (TopKJob) { x->data, values->data, indices->data, n, inner, k, p->largest };
  owb_parallel_for (ctx->pool, outer * inner, grain_for (n * 4), fn, &job);
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* Einsum                                                                                       */

/* Labels as _owb_einsum_parse numbers them: 52 letters, then the dims of '...'. */
#define EIN_LABELS (52 + OWB_MAX_RANK)
/* Intermediate results above this many elements are refused. */
#define EIN_MAX_ELEMENTS (G_GINT64_CONSTANT (1) << 36)

/* An operand seen through its labels: each label has one stride (summed over repeated labels,
 * which walks the diagonal; zero where a dim of 1 broadcasts). */
typedef struct {
  const void *data;
  gboolean has[EIN_LABELS];
  int64_t strides[EIN_LABELS];
} EinView;

/* The loop nest of a contraction: dims to iterate, with each operand's and the output's stride. */
typedef struct {
  int n;
  int64_t sizes[EIN_LABELS + 1];
  int64_t sa[EIN_LABELS + 1], sb[EIN_LABELS + 1], so[EIN_LABELS + 1];
} EinLoop;

/* out += a * b (or out += a) over the loop nest; the innermost dim is the last one. */
#define DEFINE_EIN_GENERIC(T, N)                                                                      \
  static void ein_generic_##N (const EinLoop *l, const T *a, const T *b, T *out)                      \
  {                                                                                                   \
    const int last = l->n - 1;                                                                        \
    const int64_t n_in = l->sizes[last], ia = l->sa[last], ib = l->sb[last], io = l->so[last];        \
    int64_t outer = 1, idx[EIN_LABELS + 1] = { 0 }, oa = 0, ob = 0, oo = 0;                           \
    for (int d = 0; d < last; d++)                                                                    \
      outer *= l->sizes[d];                                                                           \
    if (outer == 0 || n_in == 0)                                                                      \
      return;                                                                                         \
    for (int64_t it = 0; it < outer; it++) {                                                          \
      if (b != NULL) {                                                                                \
        if (io == 0) {                                                                                \
          T s = 0;                                                                                    \
          for (int64_t t = 0; t < n_in; t++)                                                          \
            s += a[oa + t * ia] * b[ob + t * ib];                                                     \
          out[oo] += s;                                                                               \
        } else {                                                                                      \
          for (int64_t t = 0; t < n_in; t++)                                                          \
            out[oo + t * io] += a[oa + t * ia] * b[ob + t * ib];                                      \
        }                                                                                             \
      } else {                                                                                        \
        if (io == 0) {                                                                                \
          T s = 0;                                                                                    \
          for (int64_t t = 0; t < n_in; t++)                                                          \
            s += a[oa + t * ia];                                                                      \
          out[oo] += s;                                                                               \
        } else {                                                                                      \
          for (int64_t t = 0; t < n_in; t++)                                                          \
            out[oo + t * io] += a[oa + t * ia];                                                       \
        }                                                                                             \
      }                                                                                               \
      for (int d = last - 1; d >= 0; d--) {                                                           \
        idx[d]++;                                                                                     \
        oa += l->sa[d];                                                                               \
        ob += l->sb[d];                                                                               \
        oo += l->so[d];                                                                               \
        if (idx[d] < l->sizes[d])                                                                     \
          break;                                                                                      \
        oa -= l->sa[d] * l->sizes[d];                                                                 \
        ob -= l->sb[d] * l->sizes[d];                                                                 \
        oo -= l->so[d] * l->sizes[d];                                                                 \
        idx[d] = 0;                                                                                   \
      }                                                                                               \
    }                                                                                                 \
  }
OWB_CPU_FOR_NUMERIC (DEFINE_EIN_GENERIC)

/* Row-major strides of a contiguous buffer holding labels in the given order; returns the
 * element count, or -1 when it is absurd. */
static int64_t
ein_contiguous (const int *labels, int n, const int64_t *sizes, int64_t *strides /* by label */)
{
  int64_t count = 1;
  for (int k = n - 1; k >= 0; k--) {
    strides[labels[k]] = count;
    if (sizes[labels[k]] != 0 && count > EIN_MAX_ELEMENTS / sizes[labels[k]])
      return -1;
    count *= sizes[labels[k]];
  }
  return count;
}

/* dest (contiguous, labels dest_labels in order) = sum over the other labels of A (* B). */
/* A new intermediate laid out [batch, first, second] (labels in that order, contiguous): its
 * labels in order (*no of them), its view (strides, has; data is the buffer) and the buffer
 * (zeroed when asked) in *buf. FALSE with an error when it would be too large. */
static gboolean
ein_new_intermediate (OwbKernelContext *ctx, const int *batch, int nb, const int *first, int nf, const int *second,
                      int ns, const int64_t *sizes, gsize es, gboolean zero, int *order, int *no, EinView *view,
                      void **buf, GError **error)
{
  int64_t count;
  memcpy (order, batch, nb * sizeof (int));
  memcpy (order + nb, first, nf * sizeof (int));
  memcpy (order + nb + nf, second, ns * sizeof (int));
  *no = nb + nf + ns;
  count = ein_contiguous (order, *no, sizes, view->strides);
  if (count < 0 || (*buf = zero ? g_try_malloc0 (MAX (1, count) * es) : g_try_malloc (MAX (1, count) * es)) == NULL) {
    owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "an Einsum intermediate would be too large");
    return FALSE;
  }
  view->data = *buf;
  for (int q = 0; q < *no; q++)
    view->has[order[q]] = TRUE;
  return TRUE;
}

static gboolean
ein_generic (OwbKernelContext *ctx, OwbDataType dtype, const EinView *a, const EinView *b, const int *dest_labels,
             int n_dest, const int64_t *sizes, void *dest, GError **error)
{
  EinLoop loop;
  int64_t dest_strides[EIN_LABELS];
  gboolean in_dest[EIN_LABELS] = { FALSE };
  int64_t count = ein_contiguous (dest_labels, n_dest, sizes, dest_strides);

  if (count < 0) {
    owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "an Einsum intermediate would be too large");
    return FALSE;
  }
  if (count > 0) /* an empty output has no data: memset (NULL, 0, 0) is undefined */
    memset (dest, 0, count * owb_data_type_size (dtype));
  loop.n = 0;
  for (int k = 0; k < n_dest; k++) {
    int l = dest_labels[k];
    in_dest[l] = TRUE;
    loop.sizes[loop.n] = sizes[l];
    loop.sa[loop.n] = a->has[l] ? a->strides[l] : 0;
    loop.sb[loop.n] = b && b->has[l] ? b->strides[l] : 0;
    loop.so[loop.n] = dest_strides[l];
    loop.n++;
  }
  for (int l = 0; l < EIN_LABELS; l++)
    if (!in_dest[l] && (a->has[l] || (b && b->has[l]))) {
      loop.sizes[loop.n] = sizes[l];
      loop.sa[loop.n] = a->has[l] ? a->strides[l] : 0;
      loop.sb[loop.n] = b && b->has[l] ? b->strides[l] : 0;
      loop.so[loop.n] = 0;
      loop.n++;
    }
  if (loop.n == 0) {
    loop.sizes[0] = 1;
    loop.sa[0] = loop.sb[0] = loop.so[0] = 0;
    loop.n = 1;
  }
  switch (dtype) {
#define CASE(T, N)                                                                    \
  case OWB_TYPE_##N:                                                                  \
    ein_generic_##N (&loop, a->data, b ? (const T *) b->data : NULL, dest);           \
    break;
    OWB_CPU_FOR_NUMERIC (CASE)
#undef CASE
  default:
    owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "type %s is not supported", owb_data_type_name (dtype));
    return FALSE;
  }
  return TRUE;
}

/* Orders labels by descending stride in a view (its physical order when it is contiguous). */
static void
ein_sort_by_stride (int *labels, int n, const EinView *v)
{
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v->strides[labels[j]] > v->strides[labels[j - 1]]; j--) {
      int t = labels[j];
      labels[j] = labels[j - 1];
      labels[j - 1] = t;
    }
}

/* Whether a group of labels can be walked as one flat index; *stride receives its step (0 when
 * the group holds a single element). */
static gboolean
ein_group_flat (const int64_t *strides, const int *labels, int n, const int64_t *sizes, int64_t *stride)
{
  int prev = -1;
  for (int k = 0; k < n; k++) {
    int l = labels[k];
    if (sizes[l] == 1)
      continue;
    if (prev >= 0 && strides[prev] != strides[l] * sizes[l])
      return FALSE;
    prev = l;
  }
  *stride = prev >= 0 ? strides[prev] : 0;
  return TRUE;
}

/* How a GEMM operand (rows x cols) lies in memory, if it can be used in place. */
static gboolean
ein_matrix_layout (int64_t rows, int64_t cols, int64_t rs, int64_t cs, gboolean *trans, int64_t *ld)
{
  if (cs == 1 || cols <= 1) {
    *ld = rows <= 1 ? MAX (1, cols) : rs;
    if (*ld >= MAX (1, cols) && *ld <= INT_MAX) {
      *trans = FALSE;
      return TRUE;
    }
  }
  if (rs == 1 || rows <= 1) {
    *ld = cols <= 1 ? MAX (1, rows) : cs;
    if (*ld >= MAX (1, rows) && *ld <= INT_MAX) {
      *trans = TRUE;
      return TRUE;
    }
  }
  return FALSE;
}

/* Operand x as a [batch, rows, cols] matrix over the label groups rows (R values) and cols (C):
 * in place when its strides allow, else copied into *buf, viewed by *v (summing the labels only it
 * holds, `only`, taking diagonals, broadcasting). Sets the row and column strides, whether it is
 * transposed and its leading dimension; FALSE when the copy fails or no layout fits. */
static gboolean
ein_operand_matrix (OwbKernelContext *ctx, OwbDataType dtype, const EinView *x, gboolean only, const int *batch, int nb,
                    const int *rows, int nr, const int *cols, int nc, int64_t R, int64_t C, const int64_t *sizes, gsize es,
                    EinView *v, void **buf, int64_t *sr, int64_t *sc, gboolean *trans, int64_t *ld, GError **error)
{
  if (!only && ein_group_flat (x->strides, rows, nr, sizes, sr) && ein_group_flat (x->strides, cols, nc, sizes, sc) &&
      ein_matrix_layout (R, C, *sr, *sc, trans, ld))
    return TRUE;
  int order[EIN_LABELS], no;
  memset (v, 0, sizeof (*v));
  if (!ein_new_intermediate (ctx, batch, nb, rows, nr, cols, nc, sizes, es, FALSE, order, &no, v, buf, error)
      || !ein_generic (ctx, dtype, x, NULL, order, no, sizes, *buf, error))
    return FALSE;
  ein_group_flat (v->strides, rows, nr, sizes, sr);
  ein_group_flat (v->strides, cols, nc, sizes, sc);
  return ein_matrix_layout (R, C, *sr, *sc, trans, ld);
}

/* Contracts A and B into a new operand holding the labels in `keep` (the output's when `out`
 * is given, written there in out_labels order). float/double go through batched GEMM with the
 * operands used in place where their layout allows; other types through the generic loop. */
static gboolean
ein_pair (OwbKernelContext *ctx, OwbDataType dtype, const EinView *a, const EinView *b, const gboolean *keep,
          const int64_t *sizes, OwbTensor *out, const int *out_labels, int out_rank, EinView *result, void **result_buf,
          GError **error)
{
  int batch[EIN_LABELS], m[EIN_LABELS], n[EIN_LABELS], k[EIN_LABELS];
  int nb = 0, nm = 0, nn = 0, nk = 0;
  gboolean a_only = FALSE, b_only = FALSE;
  int64_t M = 1, N = 1, K = 1, B = 1;
  gsize es = owb_data_type_size (dtype);
  void *a_buf = NULL, *b_buf = NULL, *c_buf = NULL;
  EinView av = *a, bv = *b;
  int64_t c_strides[EIN_LABELS] = { 0 };
  void *c_data;
  gboolean ta, tb, ok = FALSE;
  int64_t lda, ldb, ldc, sm, sk, sn, skb, smc, snc;

  memset (result, 0, sizeof (*result));
  *result_buf = NULL;
  for (int l = 0; l < EIN_LABELS; l++) {
    gboolean ha = a->has[l], hb = b->has[l];
    if (!ha && !hb)
      continue;
    if (ha && hb) {
      if (keep[l]) {
        batch[nb++] = l;
        B *= sizes[l];
      } else {
        k[nk++] = l;
        K *= sizes[l];
      }
    } else if (keep[l]) {
      if (ha) {
        m[nm++] = l;
        M *= sizes[l];
      } else {
        n[nn++] = l;
        N *= sizes[l];
      }
    } else if (ha) {
      a_only = TRUE;
    } else {
      b_only = TRUE;
    }
  }

  /* GEMM for float/double unless the products are too small to repay a BLAS call each
   * (elementwise products, dot products); else the generic loop, with the result in out_labels
   * order, or in label order. */
  if ((dtype != OWB_TYPE_FLOAT && dtype != OWB_TYPE_DOUBLE) || M > INT_MAX || N > INT_MAX || K > INT_MAX ||
      (double) M * (double) N * (double) K < 64) {
    int dest[EIN_LABELS], nd = 0;
    int64_t strides[EIN_LABELS], count;
    if (out != NULL)
      return ein_generic (ctx, dtype, a, b, out_labels, out_rank, sizes, out->data, error);
    for (int l = 0; l < EIN_LABELS; l++)
      if (keep[l] && (a->has[l] || b->has[l]))
        dest[nd++] = l;
    count = ein_contiguous (dest, nd, sizes, strides);
    if (count < 0 || (*result_buf = g_try_malloc (MAX (1, count) * es)) == NULL) {
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "an Einsum intermediate would be too large");
      return FALSE;
    }
    if (!ein_generic (ctx, dtype, a, b, dest, nd, sizes, *result_buf, error))
      return FALSE;
    result->data = *result_buf;
    for (int q = 0; q < nd; q++) {
      result->has[dest[q]] = TRUE;
      result->strides[dest[q]] = strides[dest[q]];
    }
    return TRUE;
  }

  if (K == 0 || B == 0 || M == 0 || N == 0) {
    /* Empty sums (or an empty result): zeros, in the layout the caller expects. */
    int order[EIN_LABELS], no;
    if (out != NULL) {
      memset (out->data, 0, out->nbytes);
      return TRUE;
    }
    return ein_new_intermediate (ctx, batch, nb, m, nm, n, nn, sizes, es, TRUE, order, &no, result, result_buf, error);
  }

  ein_sort_by_stride (batch, nb, a);
  ein_sort_by_stride (m, nm, a);
  ein_sort_by_stride (k, nk, a);
  ein_sort_by_stride (n, nn, b);

  /* A as [batch, M, K] and B as [batch, K, N]; copied (summing labels only they hold, taking
   * diagonals, broadcasting) when they cannot be used in place. */
  if (!ein_operand_matrix (ctx, dtype, a, a_only, batch, nb, m, nm, k, nk, M, K, sizes, es, &av, &a_buf, &sm, &sk, &ta,
                           &lda, error)
      || !ein_operand_matrix (ctx, dtype, b, b_only, batch, nb, k, nk, n, nn, K, N, sizes, es, &bv, &b_buf, &skb, &sn,
                              &tb, &ldb, error))
    goto out;

  /* C as [batch, M, N]: straight into the output when its layout allows, else a buffer. */
  {
    gboolean direct = FALSE;
    if (out != NULL) {
      ein_contiguous (out_labels, out_rank, sizes, c_strides);
      if (ein_group_flat (c_strides, m, nm, sizes, &smc) && ein_group_flat (c_strides, n, nn, sizes, &snc) &&
          (snc == 1 || N <= 1)) {
        ldc = M <= 1 ? MAX (1, N) : smc;
        direct = ldc >= MAX (1, N) && ldc <= INT_MAX;
      }
    }
    if (direct) {
      c_data = out->data;
    } else {
      int order[EIN_LABELS], no = 0;
      int64_t count;
      memcpy (order, batch, nb * sizeof (int));
      no = nb;
      memcpy (order + no, m, nm * sizeof (int));
      no += nm;
      memcpy (order + no, n, nn * sizeof (int));
      no += nn;
      memset (c_strides, 0, sizeof (c_strides));
      count = ein_contiguous (order, no, sizes, c_strides);
      if (count < 0 || (c_buf = g_try_malloc (MAX (1, count) * es)) == NULL) {
        owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "an Einsum intermediate would be too large");
        goto out;
      }
      c_data = c_buf;
      ldc = MAX (1, N);
      result->data = c_buf;
      for (int q = 0; q < no; q++) {
        result->has[order[q]] = TRUE;
        result->strides[order[q]] = c_strides[order[q]];
      }
    }
  }

  if (B > 0 && M > 0 && N > 0) {
    int64_t idx[EIN_LABELS] = { 0 }, oa = 0, ob = 0, oc = 0;
    for (int64_t it = 0; it < B; it++) {
      if (dtype == OWB_TYPE_FLOAT)
        cblas_sgemm (CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int) M, (int) N,
                     (int) K, 1.0f, (const float *) av.data + oa, (int) lda, (const float *) bv.data + ob, (int) ldb,
                     0.0f, (float *) c_data + oc, (int) ldc);
      else
        cblas_dgemm (CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int) M, (int) N,
                     (int) K, 1.0, (const double *) av.data + oa, (int) lda, (const double *) bv.data + ob, (int) ldb,
                     0.0, (double *) c_data + oc, (int) ldc);
      for (int d = nb - 1; d >= 0; d--) {
        int l = batch[d];
        idx[d]++;
        oa += av.strides[l];
        ob += bv.strides[l];
        oc += c_strides[l];
        if (idx[d] < sizes[l])
          break;
        oa -= av.strides[l] * sizes[l];
        ob -= bv.strides[l] * sizes[l];
        oc -= c_strides[l] * sizes[l];
        idx[d] = 0;
      }
    }
  }

  if (out != NULL && c_buf != NULL) {
    /* The buffer holds [batch, M, N]; the output wants out_labels order. */
    EinView cv = *result;
    if (!ein_generic (ctx, dtype, &cv, NULL, out_labels, out_rank, sizes, out->data, error))
      goto out;
    memset (result, 0, sizeof (*result));
  } else if (c_buf != NULL) {
    *result_buf = c_buf;
    c_buf = NULL;
  }
  ok = TRUE;
out:
  if (!ok && error && *error == NULL)
    owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "Einsum operands have an unexpected layout");
  g_free (a_buf);
  g_free (b_buf);
  g_free (c_buf);
  return ok;
}

static gboolean
einsum_compute (OwbKernelContext *ctx, GError **error)
{
  const char *eq = owb_node_get_string (ctx->node, "equation", NULL);
  int n_ops = ctx->n_inputs, out_rank;
  int ranks[64], out_labels[OWB_MAX_RANK];
  int *labels = NULL;
  int64_t sizes[EIN_LABELS];
  EinView *views = NULL, cur;
  void *cur_buf = NULL;
  OwbTensor *y = ctx->outputs[0];
  OwbDataType dtype = ctx->inputs[0]->dtype;
  char *message = NULL;
  gboolean ok = FALSE;

  if (eq == NULL || n_ops > 64 || n_ops < 1) {
    owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "Einsum needs an equation and 1 to 64 inputs");
    return FALSE;
  }
  for (int i = 0; i < n_ops; i++) {
    if (ctx->inputs[i] == NULL || ctx->inputs[i]->dtype != dtype) {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "Einsum inputs must all be present and of one type");
      return FALSE;
    }
    ranks[i] = ctx->inputs[i]->rank;
  }
  labels = g_new (int, n_ops * OWB_MAX_RANK);
  if (!_owb_einsum_parse (eq, n_ops, ranks, labels, &out_rank, out_labels, &message)) {
    owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "bad equation \"%s\": %s", eq, message);
    goto out;
  }

  for (int l = 0; l < EIN_LABELS; l++)
    sizes[l] = 1;
  for (int i = 0; i < n_ops; i++)
    for (int d = 0; d < ranks[i]; d++) {
      int l = labels[i * OWB_MAX_RANK + d];
      int64_t v = ctx->inputs[i]->dims[d];
      if (v != 1 && sizes[l] != 1 && v != sizes[l]) {
        owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "index sizes %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT
                              " of equation \"%s\" do not agree", sizes[l], v, eq);
        goto out;
      }
      if (v != 1)
        sizes[l] = v;
    }
  if (y->rank != out_rank) {
    owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output rank %d, expected %d", y->rank, out_rank);
    goto out;
  }
  for (int d = 0; d < out_rank; d++)
    if (y->dims[d] != sizes[out_labels[d]]) {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output dim %d is %" G_GINT64_FORMAT ", expected %" G_GINT64_FORMAT, d,
                            y->dims[d], sizes[out_labels[d]]);
      goto out;
    }

  views = g_new0 (EinView, n_ops);
  for (int i = 0; i < n_ops; i++) {
    const OwbTensor *t = ctx->inputs[i];
    int64_t st = 1;
    views[i].data = t->data;
    for (int d = t->rank - 1; d >= 0; d--) {
      int l = labels[i * OWB_MAX_RANK + d];
      views[i].has[l] = TRUE;
      if (t->dims[d] != 1)
        views[i].strides[l] += st;
      st *= t->dims[d];
    }
  }

  if (n_ops == 1) {
    ok = ein_generic (ctx, dtype, &views[0], NULL, out_labels, out_rank, sizes, y->data, error);
    goto out;
  }
  cur = views[0];
  for (int i = 1; i < n_ops; i++) {
    gboolean keep[EIN_LABELS] = { FALSE };
    gboolean last = i == n_ops - 1;
    EinView next;
    void *next_buf = NULL;
    for (int d = 0; d < out_rank; d++)
      keep[out_labels[d]] = TRUE;
    for (int j = i + 1; j < n_ops; j++)
      for (int l = 0; l < EIN_LABELS; l++)
        keep[l] |= views[j].has[l];
    if (!ein_pair (ctx, dtype, &cur, &views[i], keep, sizes, last ? y : NULL, out_labels, out_rank, &next, &next_buf,
                   error)) {
      g_free (next_buf);
      goto out;
    }
    g_free (cur_buf);
    cur = next;
    cur_buf = next_buf;
  }
  ok = TRUE;
out:
  g_free (cur_buf);
  g_free (views);
  g_free (labels);
  g_free (message);
  return ok;
}

const OwbKernelDef _owb_cpu_kernels_reduce[] = {
  { "ReduceSum", "", 1, 0, OWB_CPU_TYPES_NUMERIC, 0, reduce_prepare, g_free, reduce_compute },
  { "ReduceMean", "", 1, 0, OWB_CPU_TYPES_NUMERIC, 0, reduce_prepare, g_free, reduce_compute },
  { "ReduceMax", "", 1, 0, OWB_CPU_TYPES_ALL, 0, reduce_prepare, g_free, reduce_compute },
  { "ReduceMin", "", 1, 0, OWB_CPU_TYPES_ALL, 0, reduce_prepare, g_free, reduce_compute },
  { "ReduceProd", "", 1, 0, OWB_CPU_TYPES_NUMERIC, 0, reduce_prepare, g_free, reduce_compute },
  { "ReduceL1", "", 1, 0, OWB_CPU_TYPES_NUMERIC, 0, reduce_prepare, g_free, reduce_compute },
  { "ReduceL2", "", 1, 0, OWB_CPU_TYPES_NUMERIC, 0, reduce_prepare, g_free, reduce_compute },
  { "ReduceLogSum", "", 1, 0, OWB_CPU_TYPES_NUMERIC, 0, reduce_prepare, g_free, reduce_compute },
  { "ReduceLogSumExp", "", 1, 0, OWB_CPU_TYPES_NUMERIC, 0, reduce_prepare, g_free, reduce_compute },
  { "ReduceSumSquare", "", 1, 0, OWB_CPU_TYPES_NUMERIC, 0, reduce_prepare, g_free, reduce_compute },
  { "ArgMax", "", 1, 0, OWB_CPU_TYPES_NUMERIC, 0, arg_prepare, g_free, arg_compute },
  { "ArgMin", "", 1, 0, OWB_CPU_TYPES_NUMERIC, 0, arg_prepare, g_free, arg_compute },
  { "TopK", "", 1, 0, OWB_CPU_TYPES_NUMERIC, 0, topk_prepare, g_free, topk_compute },
  { "Einsum", "", 12, 0, OWB_CPU_TYPES_NUMERIC, 0, NULL, NULL, einsum_compute },
  { NULL }
};
