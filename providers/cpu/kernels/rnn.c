/* rnn.c: CPU kernels of the recurrent ops LSTM, GRU and RNN (float32 and float64, OpenBLAS GEMM). */
#include "../cpu-kernels-private.h"
#include "../cpu-activation-private.h"
#include "../cpu-gemv-private.h"
#include "../cpu-sgemm-private.h"

#include <cblas.h>
#include <limits.h>
#include <string.h>
#include <tgmath.h>

typedef enum {
  ACT_SIGMOID,
  ACT_TANH,
  ACT_RELU,
  ACT_HARD_SIGMOID,
  ACT_LEAKY_RELU,
  ACT_THRESHOLDED_RELU,
  ACT_SCALED_TANH,
  ACT_AFFINE,
  ACT_ELU,
  ACT_SOFTSIGN,
  ACT_SOFTPLUS,
} ActKind;

/* Defaults are those of the ONNX operators of the same name, as the spec asks. */
static const struct {
  const char *name;
  ActKind kind;
  gboolean uses_alpha, uses_beta;
  float alpha, beta;
} activation_table[] = {
  { "Sigmoid", ACT_SIGMOID, FALSE, FALSE, 0.f, 0.f },
  { "Tanh", ACT_TANH, FALSE, FALSE, 0.f, 0.f },
  { "Relu", ACT_RELU, FALSE, FALSE, 0.f, 0.f },
  { "HardSigmoid", ACT_HARD_SIGMOID, TRUE, TRUE, 0.2f, 0.5f },
  { "LeakyRelu", ACT_LEAKY_RELU, TRUE, FALSE, 0.01f, 0.f },
  { "ThresholdedRelu", ACT_THRESHOLDED_RELU, TRUE, FALSE, 1.f, 0.f },
  { "ScaledTanh", ACT_SCALED_TANH, TRUE, TRUE, 1.f, 1.f },
  { "Affine", ACT_AFFINE, TRUE, TRUE, 1.f, 0.f },
  { "Elu", ACT_ELU, TRUE, FALSE, 1.f, 0.f },
  { "Softsign", ACT_SOFTSIGN, FALSE, FALSE, 0.f, 0.f },
  { "Softplus", ACT_SOFTPLUS, FALSE, FALSE, 0.f, 0.f },
};

typedef struct {
  ActKind kind;
  float alpha, beta;
} Activation;

typedef enum { CELL_RNN, CELL_GRU, CELL_LSTM } CellKind;

typedef struct {
  CellKind cell;
  int gates;         /* weight blocks per direction: 1, 3 or 4 */
  int n_acts;        /* activations per direction: 1, 2 or 3 */
  int n_directions;
  gboolean reverse;  /* direction == "reverse" (one direction, run backwards) */
  int64_t hidden;    /* hidden_size attribute, or -1 to take it from R */
  int layout;
  gboolean has_clip;
  float clip;
  gboolean input_forget;
  gboolean linear_before_reset;
  Activation acts[6]; /* n_acts per direction, forward first */
  /* A constant float W [directions, G*H, input] packed once as the B of the input projection
   * X W^T (K = input, N = directions * G*H), for cpu-sgemm.c; NULL otherwise. */
  OwbSgemmPacked *w_pack;
  OwbTensor *w;
} RnnParams;

static void
rnn_free (gpointer data)
{
  RnnParams *p = data;
  _owb_sgemm_packed_free (p->w_pack);
  owb_tensor_unref (p->w);
  g_free (p);
}

/* Input projection column biases kept on the stack up to this many (directions x gates x hidden). */
#define COL_BIAS_ON_STACK 4096

/* OpenBLAS packs W again on every call, about a third of gru_tagger's run: pack it once here. */
static void
pack_constant_w (const OwbNode *node, RnnParams *p)
{
  const char *name = node->n_inputs > 1 ? node->inputs[1] : "";
  OwbTensor *w = name[0] && node->graph ? owb_graph_get_initializer (node->graph, name) : NULL;
  if (!w || w->dtype != OWB_TYPE_FLOAT || w->rank != 3 || w->nelems == 0)
    return;
  int64_t n = w->dims[0] * w->dims[1], k = w->dims[2];
  p->w_pack = _owb_sgemm_pack_transposed (k, n, w->data, k, 1.0f);
  p->w = owb_tensor_ref (w);
}

static gboolean
params_error (const OwbNode *node, GError **error, const char *message)
{
  g_autofree char *what = owb_node_describe (node);
  g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "%s: %s", what, message);
  return FALSE;
}

static gboolean
rnn_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state, GError **error)
{
  g_autofree RnnParams *p = g_new0 (RnnParams, 1);
  if (strcmp (node->op_type, "LSTM") == 0)
    p->cell = CELL_LSTM, p->gates = 4, p->n_acts = 3;
  else if (strcmp (node->op_type, "GRU") == 0)
    p->cell = CELL_GRU, p->gates = 3, p->n_acts = 2;
  else
    p->cell = CELL_RNN, p->gates = 1, p->n_acts = 1;

  const char *direction = owb_node_get_string (node, "direction", "forward");
  if (strcmp (direction, "forward") == 0)
    p->n_directions = 1;
  else if (strcmp (direction, "reverse") == 0)
    p->n_directions = 1, p->reverse = TRUE;
  else if (strcmp (direction, "bidirectional") == 0)
    p->n_directions = 2;
  else
    return params_error (node, error, "direction is not forward, reverse or bidirectional");

  p->hidden = -1;
  if (owb_node_get_attribute (node, "hidden_size") != NULL)
    {
      p->hidden = owb_node_get_int (node, "hidden_size", -1);
      if (p->hidden <= 0 || p->hidden > INT_MAX)
        return params_error (node, error, "hidden_size is out of range");
    }
  int64_t layout = opset >= 14 ? owb_node_get_int (node, "layout", 0) : 0;
  if (layout != 0 && layout != 1)
    return params_error (node, error, "layout is not 0 or 1");
  p->layout = (int) layout;
  if (owb_node_get_attribute (node, "clip") != NULL)
    {
      p->has_clip = TRUE;
      p->clip = owb_node_get_float (node, "clip", 0.f);
      if (!(p->clip > 0.f))
        return params_error (node, error, "clip must be positive");
    }
  int64_t input_forget = owb_node_get_int (node, "input_forget", 0);
  int64_t linear_before_reset = owb_node_get_int (node, "linear_before_reset", 0);
  if ((input_forget != 0 && input_forget != 1) || (linear_before_reset != 0 && linear_before_reset != 1))
    return params_error (node, error, "input_forget and linear_before_reset must be 0 or 1");
  p->input_forget = p->cell == CELL_LSTM && input_forget;
  p->linear_before_reset = p->cell == CELL_GRU && linear_before_reset;

  static const ActKind defaults[3][3] = {
    { ACT_TANH }, { ACT_SIGMOID, ACT_TANH }, { ACT_SIGMOID, ACT_TANH, ACT_TANH },
  };
  int n = p->n_acts * p->n_directions;
  const OwbAttribute *names = owb_node_get_attribute (node, "activations");
  if (names != NULL && (names->type != OWB_ATTR_STRINGS || names->n != n))
    return params_error (node, error, "activations must list one name per gate function and direction");
  int n_alpha = 0, n_beta = 0, next_alpha = 0, next_beta = 0;
  const float *alphas = owb_node_get_floats (node, "activation_alpha", &n_alpha);
  const float *betas = owb_node_get_floats (node, "activation_beta", &n_beta);
  for (int i = 0; i < n; i++)
    {
      guint k = 0;
      if (names != NULL)
        {
          while (k < G_N_ELEMENTS (activation_table)
                 && g_ascii_strcasecmp (names->strings[i], activation_table[k].name) != 0)
            k++;
          if (k == G_N_ELEMENTS (activation_table))
            return params_error (node, error, "unknown activation function");
        }
      else
        while (activation_table[k].kind != defaults[p->cell][i % p->n_acts])
          k++;
      Activation *a = &p->acts[i];
      a->kind = activation_table[k].kind;
      a->alpha = activation_table[k].alpha;
      a->beta = activation_table[k].beta;
      /* alpha and beta lists are consumed in order by the functions that take them (as ONNX Runtime does). */
      if (activation_table[k].uses_alpha && next_alpha < n_alpha)
        a->alpha = alphas[next_alpha++];
      if (activation_table[k].uses_beta && next_beta < n_beta)
        a->beta = betas[next_beta++];
    }
  pack_constant_w (node, p);
  *state = g_steal_pointer (&p);
  return TRUE;
}

/* Sizes of one run, checked against every input. */
typedef struct {
  int64_t seq, batch, input, hidden;
  int nd;
} RnnDims;

/* One direction's recurrence: reads the input projection xw (rows as X's, with the direction's
 * G*H columns at offset d*G*H of a row of n_directions*G*H), writes its slices of Y, Y_h, Y_c. */
typedef struct _RnnJob {
  const RnnParams *p;
  const RnnDims *dims;
  const void *xw;
  const void *w, *r, *b, *p_peep, *initial_h, *initial_c;
  const int64_t *lens; /* NULL: every sequence is seq long */
  void *y, *y_h, *y_c;
  void (*direction) (const struct _RnnJob *job, int d); /* the typed recurrence */
} RnnJob;

/* The input projection of all steps, split by columns over the pool: with OpenBLAS on one thread it
 * would otherwise run on one core while the other waits for the recurrence. */
typedef struct {
  const RnnJob *job;
  const void *x;
  void *xw;
} ProjectJob;

static int64_t
x_row (const RnnDims *s, int layout, int64_t t, int64_t b)
{
  return layout == 0 ? t * s->batch + b : b * s->seq + t;
}

/* Offset of (direction d, batch b) in Y_h/Y_c/initial_h/initial_c, in units of hidden vectors. */
static int64_t
state_row (const RnnDims *s, int layout, int d, int64_t b)
{
  return layout == 0 ? d * s->batch + b : b * s->nd + d;
}

static int64_t
y_row (const RnnDims *s, int layout, int64_t t, int d, int64_t b)
{
  return layout == 0 ? (t * s->nd + d) * s->batch + b : (b * s->seq + t) * s->nd + d;
}

/* float has vector kernels (cpu-gemv.c) for the per-step products of a few batch rows, which sgemm
 * would spend packing R for, and for the gate activations; double keeps BLAS and libm. */
static gboolean
small_gemm_nt_FLOAT (int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
                     gboolean accumulate, float *c, int64_t ldc)
{
  if (m > OWB_CPU_GEMV_MAX_M)
    return FALSE;
  _owb_cpu_gemv (TRUE, m, n, k, 1.f, a, lda, 1, b, ldb, accumulate, c, ldc);
  return TRUE;
}

static gboolean
small_gemm_nt_DOUBLE (int64_t m, int64_t n, int64_t k, const double *a, int64_t lda, const double *b, int64_t ldb,
                      gboolean accumulate, double *c, int64_t ldc)
{
  return FALSE;
}

static gboolean
vector_activate_FLOAT (ActKind kind, float *x, int64_t n)
{
  if (kind == ACT_SIGMOID)
    _owb_cpu_sigmoid_f32 (x, n);
  else if (kind == ACT_TANH)
    _owb_cpu_tanh_f32 (x, n);
  else
    return FALSE;
  return TRUE;
}

static gboolean
vector_activate_DOUBLE (ActKind kind, double *x, int64_t n)
{
  return FALSE;
}

/* Typed code, stamped once per float type. GEMMs are row-major C = A * B^T (+ C when accumulate). */
#define RNN_DEFINE(T, N, GEMM, GEMV)                                                                                  \
  static void gemm_nt_##N (int64_t m, int64_t n, int64_t k, const T *a, int64_t lda, const T *b, int64_t ldb,     \
                           gboolean accumulate, T *c, int64_t ldc)                                                  \
  {                                                                                                                \
    if (m == 0 || n == 0)                                                                                          \
      return;                                                                                                      \
    if (k == 0)                                                                                                    \
      {                                                                                                            \
        if (!accumulate)                                                                                           \
          for (int64_t i = 0; i < m; i++)                                                                          \
            memset (c + i * ldc, 0, n * sizeof (T));                                                               \
        return;                                                                                                    \
      }                                                                                                            \
    if (small_gemm_nt_##N (m, n, k, a, lda, b, ldb, accumulate, c, ldc))                                          \
      return;                                                                                                      \
    /* One batch row (the usual inference case): GEMV avoids GEMM's packing overhead. */                          \
    if (m == 1)                                                                                                    \
      {                                                                                                            \
        GEMV (CblasRowMajor, CblasNoTrans, (int) n, (int) k, 1, b, (int) ldb, a, 1, accumulate ? 1 : 0, c, 1);     \
        return;                                                                                                    \
      }                                                                                                            \
    GEMM (CblasRowMajor, CblasNoTrans, CblasTrans, (int) m, (int) n, (int) k, 1, a, (int) lda, b, (int) ldb,        \
          accumulate ? 1 : 0, c, (int) ldc);                                                                       \
  }                                                                                                                \
                                                                                                                   \
  static void clip_##N (T *x, int64_t n, const RnnParams *p)                                                       \
  {                                                                                                                \
    if (!p->has_clip)                                                                                              \
      return;                                                                                                      \
    T hi = (T) p->clip, lo = -hi;                                                                                  \
    for (int64_t i = 0; i < n; i++)                                                                                \
      x[i] = x[i] < lo ? lo : x[i] > hi ? hi : x[i];                                                               \
  }                                                                                                                \
                                                                                                                   \
  /* In place over a vector: one switch per call, plain loops inside. */                                          \
  static void activate_##N (const Activation *a, T *x, int64_t n)                                                  \
  {                                                                                                                \
    T alpha = (T) a->alpha, beta = (T) a->beta;                                                                    \
    if (vector_activate_##N (a->kind, x, n))                                                                       \
      return;                                                                                                      \
    switch (a->kind)                                                                                               \
      {                                                                                                            \
      case ACT_SIGMOID:                                                                                            \
        for (int64_t i = 0; i < n; i++)                                                                            \
          x[i] = 1 / (1 + exp (-x[i]));                                                                            \
        break;                                                                                                     \
      case ACT_TANH:                                                                                               \
        for (int64_t i = 0; i < n; i++)                                                                            \
          x[i] = tanh (x[i]);                                                                                      \
        break;                                                                                                     \
      case ACT_RELU:                                                                                               \
        for (int64_t i = 0; i < n; i++)                                                                            \
          x[i] = x[i] > 0 ? x[i] : 0;                                                                              \
        break;                                                                                                     \
      case ACT_HARD_SIGMOID:                                                                                       \
        for (int64_t i = 0; i < n; i++)                                                                            \
          {                                                                                                        \
            T v = alpha * x[i] + beta;                                                                             \
            x[i] = v < 0 ? 0 : v > 1 ? 1 : v;                                                                      \
          }                                                                                                        \
        break;                                                                                                     \
      case ACT_LEAKY_RELU:                                                                                         \
        for (int64_t i = 0; i < n; i++)                                                                            \
          x[i] = x[i] >= 0 ? x[i] : alpha * x[i];                                                                  \
        break;                                                                                                     \
      case ACT_THRESHOLDED_RELU:                                                                                   \
        for (int64_t i = 0; i < n; i++)                                                                            \
          x[i] = x[i] > alpha ? x[i] : 0;                                                                          \
        break;                                                                                                     \
      case ACT_SCALED_TANH:                                                                                        \
        for (int64_t i = 0; i < n; i++)                                                                            \
          x[i] = alpha * tanh (beta * x[i]);                                                                       \
        break;                                                                                                     \
      case ACT_AFFINE:                                                                                             \
        for (int64_t i = 0; i < n; i++)                                                                            \
          x[i] = alpha * x[i] + beta;                                                                              \
        break;                                                                                                     \
      case ACT_ELU:                                                                                                \
        for (int64_t i = 0; i < n; i++)                                                                            \
          x[i] = x[i] >= 0 ? x[i] : alpha * (exp (x[i]) - 1);                                                      \
        break;                                                                                                     \
      case ACT_SOFTSIGN:                                                                                           \
        for (int64_t i = 0; i < n; i++)                                                                            \
          x[i] = x[i] / (1 + fabs (x[i]));                                                                         \
        break;                                                                                                     \
      case ACT_SOFTPLUS: /* written so that exp never overflows */                                                \
        for (int64_t i = 0; i < n; i++)                                                                            \
          x[i] = x[i] > 0 ? x[i] + log1p (exp (-x[i])) : log1p (exp (x[i]));                                      \
        break;                                                                                                     \
      }                                                                                                            \
  }                                                                                                                \
                                                                                                                   \
  /* The time index batch b reads at step s, or -1 once its sequence has ended. */                                \
  static inline int64_t step_time_##N (const RnnJob *job, gboolean backwards, int64_t s, int64_t b)                \
  {                                                                                                                \
    int64_t len = job->lens ? job->lens[b] : job->dims->seq;                                                       \
    if (s >= len)                                                                                                  \
      return -1;                                                                                                   \
    return backwards ? len - 1 - s : s;                                                                            \
  }                                                                                                                \
                                                                                                                   \
  static void direction_##N (const RnnJob *job, int d)                                                             \
  {                                                                                                                \
    const RnnParams *p = job->p;                                                                                   \
    const RnnDims *s = job->dims;                                                                                  \
    const int64_t H = s->hidden, B = s->batch, GH = p->gates * H, ldx = s->nd * GH;                                \
    const gboolean backwards = p->reverse || d == 1;                                                               \
    const Activation *acts = p->acts + d * p->n_acts;                                                              \
    const T *xw = (const T *) job->xw + d * GH;                                                                    \
    const T *r = (const T *) job->r + d * GH * H;                                                                  \
    const T *rb = job->b ? (const T *) job->b + d * 2 * GH + GH : NULL;                                            \
    const T *peep = job->p_peep ? (const T *) job->p_peep + d * 3 * H : NULL;                                      \
    T *y = job->y, *y_h = job->y_h, *y_c = job->y_c;                                                               \
    /* h, c: states [B, H]; hr: recurrent projection [B, GH]; tmp: [B, H] scratch. */                             \
    T *h = g_new0 (T, B * H), *c = g_new0 (T, B * H), *hr = g_new (T, B * GH), *tmp = g_new0 (T, B * H);           \
    for (int64_t b = 0; b < B; b++)                                                                                \
      {                                                                                                            \
        if (job->initial_h)                                                                                        \
          memcpy (h + b * H, (const T *) job->initial_h + state_row (s, p->layout, d, b) * H, H * sizeof (T));     \
        if (job->initial_c)                                                                                        \
          memcpy (c + b * H, (const T *) job->initial_c + state_row (s, p->layout, d, b) * H, H * sizeof (T));     \
      }                                                                                                            \
    for (int64_t step = 0; step < s->seq; step++)                                                                  \
      {                                                                                                            \
        if (job->lens)                                                                                             \
          {                                                                                                        \
            gboolean any = FALSE;                                                                                  \
            for (int64_t b = 0; b < B && !any; b++)                                                                \
              any = step < job->lens[b];                                                                           \
            if (!any)                                                                                              \
              break;                                                                                               \
          }                                                                                                        \
        if (p->cell == CELL_GRU && !p->linear_before_reset)                                                        \
          {                                                                                                        \
            /* The candidate's recurrent term needs r (.) h first: project z and r, then (r (.) h) Rh^T. */       \
            gemm_nt_##N (B, 2 * H, H, h, H, r, H, FALSE, hr, GH);                                                  \
            for (int64_t b = 0; b < B; b++)                                                                        \
              {                                                                                                    \
                int64_t t = step_time_##N (job, backwards, step, b);                                               \
                T *g = hr + b * GH, *hb = h + b * H, *rh = tmp + b * H;                                            \
                if (t < 0)                                                                                         \
                  {                                                                                                \
                    memset (rh, 0, H * sizeof (T));                                                                \
                    continue;                                                                                      \
                  }                                                                                                \
                const T *xr = xw + x_row (s, p->layout, t, b) * ldx;                                               \
                for (int64_t j = 0; j < 2 * H; j++)                                                                \
                  g[j] += xr[j];                                                                                   \
                clip_##N (g, 2 * H, p);                                                                            \
                activate_##N (&acts[0], g, 2 * H);                                                                 \
                for (int64_t j = 0; j < H; j++)                                                                    \
                  rh[j] = g[H + j] * hb[j];                                                                        \
              }                                                                                                    \
            gemm_nt_##N (B, H, H, tmp, H, r + 2 * H * H, H, FALSE, hr + 2 * H, GH);                                \
          }                                                                                                        \
        else                                                                                                       \
          gemm_nt_##N (B, GH, H, h, H, r, H, FALSE, hr, GH);                                                       \
        for (int64_t b = 0; b < B; b++)                                                                            \
          {                                                                                                        \
            int64_t t = step_time_##N (job, backwards, step, b);                                                   \
            if (t < 0)                                                                                             \
              continue;                                                                                            \
            const T *xr = xw + x_row (s, p->layout, t, b) * ldx;                                                   \
            T *g = hr + b * GH, *hb = h + b * H, *cb = c + b * H, *tb = tmp + b * H;                               \
            switch (p->cell)                                                                                       \
              {                                                                                                    \
              case CELL_RNN:                                                                                       \
                for (int64_t j = 0; j < H; j++)                                                                    \
                  g[j] += xr[j];                                                                                   \
                clip_##N (g, H, p);                                                                                \
                activate_##N (&acts[0], g, H);                                                                     \
                memcpy (hb, g, H * sizeof (T));                                                                    \
                break;                                                                                             \
              case CELL_GRU:                                                                                       \
                {                                                                                                  \
                  T *z = g, *rg = g + H, *n = g + 2 * H;                                                           \
                  if (p->linear_before_reset)                                                                      \
                    {                                                                                              \
                      for (int64_t j = 0; j < 2 * H; j++)                                                          \
                        g[j] += xr[j];                                                                             \
                      clip_##N (g, 2 * H, p);                                                                      \
                      activate_##N (&acts[0], g, 2 * H);                                                           \
                      if (rb)                                                                                      \
                        for (int64_t j = 0; j < H; j++)                                                            \
                          n[j] = xr[2 * H + j] + rg[j] * (n[j] + rb[2 * H + j]);                                   \
                      else                                                                                         \
                        for (int64_t j = 0; j < H; j++)                                                            \
                          n[j] = xr[2 * H + j] + rg[j] * n[j];                                                     \
                    }                                                                                              \
                  else                                                                                             \
                    for (int64_t j = 0; j < H; j++)                                                                \
                      n[j] += xr[2 * H + j];                                                                       \
                  clip_##N (n, H, p);                                                                              \
                  activate_##N (&acts[1], n, H);                                                                   \
                  for (int64_t j = 0; j < H; j++)                                                                  \
                    hb[j] = (1 - z[j]) * n[j] + z[j] * hb[j];                                                       \
                  break;                                                                                           \
                }                                                                                                  \
              case CELL_LSTM:                                                                                      \
                {                                                                                                  \
                  /* Gate blocks in W, R and B are ordered i, o, f, c; peepholes i, o, f. */                      \
                  T *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;                                        \
                  for (int64_t j = 0; j < GH; j++)                                                                 \
                    g[j] += xr[j];                                                                                 \
                  if (peep)                                                                                        \
                    for (int64_t j = 0; j < H; j++)                                                                \
                      {                                                                                            \
                        gi[j] += peep[j] * cb[j];                                                                  \
                        gf[j] += peep[2 * H + j] * cb[j];                                                          \
                      }                                                                                            \
                  clip_##N (gi, H, p);                                                                             \
                  activate_##N (&acts[0], gi, H);                                                                  \
                  if (p->input_forget)                                                                             \
                    for (int64_t j = 0; j < H; j++)                                                                \
                      gf[j] = 1 - gi[j];                                                                           \
                  else                                                                                             \
                    {                                                                                              \
                      clip_##N (gf, H, p);                                                                         \
                      activate_##N (&acts[0], gf, H);                                                              \
                    }                                                                                              \
                  clip_##N (gc, H, p);                                                                             \
                  activate_##N (&acts[1], gc, H);                                                                  \
                  for (int64_t j = 0; j < H; j++)                                                                  \
                    cb[j] = gf[j] * cb[j] + gi[j] * gc[j];                                                         \
                  if (peep)                                                                                        \
                    for (int64_t j = 0; j < H; j++)                                                                \
                      go[j] += peep[H + j] * cb[j];                                                                \
                  clip_##N (go, H, p);                                                                             \
                  activate_##N (&acts[0], go, H);                                                                  \
                  memcpy (tb, cb, H * sizeof (T));                                                                 \
                  activate_##N (&acts[2], tb, H);                                                                  \
                  for (int64_t j = 0; j < H; j++)                                                                  \
                    hb[j] = go[j] * tb[j];                                                                         \
                  break;                                                                                           \
                }                                                                                                  \
              }                                                                                                    \
            if (y)                                                                                                 \
              memcpy (y + y_row (s, p->layout, t, d, b) * H, hb, H * sizeof (T));                                  \
          }                                                                                                        \
      }                                                                                                            \
    for (int64_t b = 0; b < B; b++)                                                                                \
      {                                                                                                            \
        /* ONNX Runtime reports zero states for empty sequences; so do we. */                                      \
        gboolean empty = job->lens && job->lens[b] == 0;                                                           \
        int64_t o = state_row (s, p->layout, d, b) * H;                                                            \
        if (y_h)                                                                                                   \
          {                                                                                                        \
            if (empty)                                                                                             \
              memset (y_h + o, 0, H * sizeof (T));                                                                 \
            else                                                                                                   \
              memcpy (y_h + o, h + b * H, H * sizeof (T));                                                         \
          }                                                                                                        \
        if (y_c)                                                                                                   \
          {                                                                                                        \
            if (empty)                                                                                             \
              memset (y_c + o, 0, H * sizeof (T));                                                                 \
            else                                                                                                   \
              memcpy (y_c + o, c + b * H, H * sizeof (T));                                                         \
          }                                                                                                        \
      }                                                                                                            \
    g_free (h);                                                                                                    \
    g_free (c);                                                                                                    \
    g_free (hr);                                                                                                   \
    g_free (tmp);                                                                                                  \
  }                                                                                                                \
                                                                                                                   \
  /* Columns [begin, end) of xw = X W^T for every time step and direction at once, with the biases   \
   * that sit outside the recurrence. */                                                                          \
  static void project_cols_##N (int64_t begin, int64_t end, gpointer data)                                         \
  {                                                                                                                \
    const ProjectJob *pj = data;                                                                                   \
    const RnnJob *job = pj->job;                                                                                   \
    const RnnParams *p = job->p;                                                                                   \
    const RnnDims *s = job->dims;                                                                                  \
    const int64_t H = s->hidden, GH = p->gates * H, ldx = s->nd * GH, rows = s->seq * s->batch;                    \
    const T *bias = job->b, *x = pj->x;                                                                            \
    T *xw = pj->xw;                                                                                                \
    if (bias)                                                                                                      \
      {                                                                                                            \
        T *row0 = xw;                                                                                              \
        for (int64_t col = begin; col < end; col++)                                                                \
          {                                                                                                        \
            int64_t d = col / GH, j = col % GH;                                                                    \
            const T *wb = bias + d * 2 * GH, *rb = wb + GH;                                                        \
            /* GRU with linear_before_reset keeps Rbh inside r (.) (...), added per step. */                      \
            int64_t n_rb = p->linear_before_reset ? 2 * H : GH;                                                    \
            row0[col] = wb[j] + (j < n_rb ? rb[j] : 0);                                                            \
          }                                                                                                        \
        for (int64_t i = 1; i < rows; i++)                                                                         \
          memcpy (xw + i * ldx + begin, row0 + begin, (end - begin) * sizeof (T));                                 \
      }                                                                                                            \
    gemm_nt_##N (rows, end - begin, s->input, x, s->input, (const T *) job->w + begin * s->input, s->input,        \
                 bias != NULL, xw + begin, ldx);                                                                   \
  }

RNN_DEFINE (float, FLOAT, cblas_sgemm, cblas_sgemv)
RNN_DEFINE (double, DOUBLE, cblas_dgemm, cblas_dgemv)

static void
run_directions (int64_t begin, int64_t end, gpointer data)
{
  const RnnJob *job = data;
  for (int64_t d = begin; d < end; d++)
    job->direction (job, (int) d);
}

static gboolean
check_shape (OwbKernelContext *ctx, GError **error, const OwbTensor *t, const char *what, int rank,
             const int64_t *want)
{
  gboolean ok = t->rank == rank;
  for (int i = 0; ok && i < rank; i++)
    ok = t->dims[i] == want[i];
  if (ok)
    return TRUE;
  g_autofree char *have = owb_tensor_shape_to_string (t);
  GString *expected = g_string_new ("[");
  for (int i = 0; i < rank; i++)
    g_string_append_printf (expected, "%s%" G_GINT64_FORMAT, i ? "," : "", want[i]);
  g_string_append_c (expected, ']');
  owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input %s has shape %s, expected %s", what, have, expected->str);
  g_string_free (expected, TRUE);
  return FALSE;
}

static OwbTensor *
optional_input (OwbKernelContext *ctx, int i)
{
  return i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}

/* Output i with the given shape: the one allocated from inference, or a new one; NULL if unused. */
static gboolean
get_output (OwbKernelContext *ctx, GError **error, int i, OwbDataType dtype, int rank, const int64_t *dims,
            OwbTensor **out)
{
  *out = NULL;
  if (i >= ctx->n_outputs)
    return TRUE;
  OwbTensor *t = ctx->outputs[i];
  if (t == NULL)
    {
      if (ctx->output_wanted != NULL && !ctx->output_wanted[i])
        return TRUE;
      t = owb_kernel_context_new_output (ctx, i, dtype, rank, dims, error);
      if (t == NULL)
        return FALSE;
    }
  gboolean ok = t->dtype == dtype && t->rank == rank;
  for (int k = 0; ok && k < rank; k++)
    ok = t->dims[k] == dims[k];
  if (!ok)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output %d was allocated with another shape or type", i);
      return FALSE;
    }
  *out = t;
  return TRUE;
}

static gboolean
rnn_compute (OwbKernelContext *ctx, GError **error)
{
  const RnnParams *p = ctx->state;
  OwbTensor *x = ctx->inputs[0], *w = ctx->inputs[1], *r = ctx->inputs[2];
  OwbTensor *bias = optional_input (ctx, 3), *lens = optional_input (ctx, 4);
  OwbTensor *initial_h = optional_input (ctx, 5);
  OwbTensor *initial_c = p->cell == CELL_LSTM ? optional_input (ctx, 6) : NULL;
  OwbTensor *peep = p->cell == CELL_LSTM ? optional_input (ctx, 7) : NULL;
  OwbDataType dtype = x->dtype;

  if (dtype != OWB_TYPE_FLOAT && dtype != OWB_TYPE_DOUBLE)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "X has type %s", owb_data_type_name (dtype));
      return FALSE;
    }
  OwbTensor *same_type[] = { w, r, bias, initial_h, initial_c, peep };
  for (guint i = 0; i < G_N_ELEMENTS (same_type); i++)
    if (same_type[i] != NULL && same_type[i]->dtype != dtype)
      {
        owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "inputs W, R, B, initial_h, initial_c and P must be %s like X",
                              owb_data_type_name (dtype));
        return FALSE;
      }
  if (lens != NULL && lens->dtype != OWB_TYPE_INT32 && lens->dtype != OWB_TYPE_INT64)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "sequence_lens must be int32");
      return FALSE;
    }
  if (x->rank != 3 || r->rank != 3)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "X and R must have rank 3");
      return FALSE;
    }

  RnnDims s;
  s.nd = p->n_directions;
  s.seq = x->dims[p->layout == 0 ? 0 : 1];
  s.batch = x->dims[p->layout == 0 ? 1 : 0];
  s.input = x->dims[2];
  s.hidden = p->hidden >= 0 ? p->hidden : r->dims[2];
  const int64_t GH = p->gates * s.hidden;
  int64_t want_w[] = { s.nd, GH, s.input }, want_r[] = { s.nd, GH, s.hidden }, want_b[] = { s.nd, 2 * GH };
  int64_t want_state[] = { s.nd, s.batch, s.hidden }, want_p[] = { s.nd, 3 * s.hidden };
  if (p->layout == 1)
    want_state[0] = s.batch, want_state[1] = s.nd;
  if (!check_shape (ctx, error, w, "W", 3, want_w) || !check_shape (ctx, error, r, "R", 3, want_r)
      || (bias && !check_shape (ctx, error, bias, "B", 2, want_b))
      || (lens && !check_shape (ctx, error, lens, "sequence_lens", 1, &s.batch))
      || (initial_h && !check_shape (ctx, error, initial_h, "initial_h", 3, want_state))
      || (initial_c && !check_shape (ctx, error, initial_c, "initial_c", 3, want_state))
      || (peep && !check_shape (ctx, error, peep, "P", 2, want_p)))
    return FALSE;
  /* OpenBLAS takes int sizes. */
  if (s.seq > INT_MAX / MAX (s.batch, 1) || s.nd * GH > INT_MAX || s.input > INT_MAX)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "sizes exceed what the GEMM library accepts");
      return FALSE;
    }

  g_autofree int64_t *seq_lens = NULL;
  gboolean ragged = FALSE;
  if (lens != NULL)
    {
      seq_lens = g_new (int64_t, MAX (s.batch, 1));
      for (int64_t b = 0; b < s.batch; b++)
        {
          seq_lens[b] = lens->dtype == OWB_TYPE_INT32 ? ((const int32_t *) lens->data)[b]
                                                      : ((const int64_t *) lens->data)[b];
          if (seq_lens[b] < 0 || seq_lens[b] > s.seq)
            {
              owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT,
                                    "sequence_lens[%" G_GINT64_FORMAT "] = %" G_GINT64_FORMAT
                                    " is outside [0, %" G_GINT64_FORMAT "]",
                                    b, seq_lens[b], s.seq);
              return FALSE;
            }
          ragged |= seq_lens[b] != s.seq;
        }
    }

  int64_t y_dims[4], state_dims[3];
  if (p->layout == 0)
    y_dims[0] = s.seq, y_dims[1] = s.nd, y_dims[2] = s.batch;
  else
    y_dims[0] = s.batch, y_dims[1] = s.seq, y_dims[2] = s.nd;
  y_dims[3] = s.hidden;
  memcpy (state_dims, want_state, sizeof state_dims);
  OwbTensor *y, *y_h, *y_c;
  if (!get_output (ctx, error, 0, dtype, 4, y_dims, &y) || !get_output (ctx, error, 1, dtype, 3, state_dims, &y_h)
      || !get_output (ctx, error, 2, dtype, 3, state_dims, &y_c))
    return FALSE;
  if (s.batch == 0 || s.hidden == 0)
    return TRUE; /* every output is empty */
  /* Steps past a sequence's end are never written. */
  if (y != NULL && ragged && y->nbytes > 0)
    memset (y->data, 0, y->nbytes);

  gsize elem = owb_data_type_size (dtype);
  int64_t rows = s.seq * s.batch, ldx = s.nd * GH;
  void *xw = NULL;
  if (rows > 0 && ldx > 0)
    {
      if ((guint64) rows > G_MAXSIZE / elem / (guint64) ldx || (xw = g_try_malloc ((gsize) (rows * ldx) * elem)) == NULL)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "cannot allocate the input projection (%" G_GINT64_FORMAT
                                " x %" G_GINT64_FORMAT " values)", rows, ldx);
          return FALSE;
        }
    }

  RnnJob job = {
    .p = p, .dims = &s, .xw = xw, .w = w->data, .r = r->data, .b = bias ? bias->data : NULL,
    .p_peep = peep ? peep->data : NULL, .initial_h = initial_h ? initial_h->data : NULL,
    .initial_c = initial_c ? initial_c->data : NULL, .lens = ragged ? seq_lens : NULL,
    .y = y ? y->data : NULL, .y_h = y_h ? y_h->data : NULL, .y_c = y_c ? y_c->data : NULL,
  };
  ProjectJob pj = { &job, x->data, xw };
  OwbParallelFunc project = dtype == OWB_TYPE_FLOAT ? project_cols_FLOAT : project_cols_DOUBLE;
  job.direction = dtype == OWB_TYPE_FLOAT ? direction_FLOAT : direction_DOUBLE;
  if (rows > OWB_CPU_GEMV_MAX_M && ldx > 0 && p->w_pack && w == p->w && dtype == OWB_TYPE_FLOAT
      && _owb_sgemm_packed_k (p->w_pack) == s.input && _owb_sgemm_packed_n (p->w_pack) == ldx)
    {
      /* the biases outside the recurrence are the epilogue's column bias (on the stack for the
       * usual sizes: no allocation per run) */
      float stack_bias[COL_BIAS_ON_STACK];
      g_autofree float *heap_bias = bias && ldx > COL_BIAS_ON_STACK ? g_new (float, ldx) : NULL;
      float *col_bias = heap_bias ? heap_bias : bias ? stack_bias : NULL;
      for (int64_t col = 0; bias && col < ldx; col++)
        {
          int64_t d = col / GH, j = col % GH;
          const float *wb = (const float *) bias->data + d * 2 * GH, *rb = wb + GH;
          int64_t n_rb = p->linear_before_reset ? 2 * s.hidden : GH;
          col_bias[col] = wb[j] + (j < n_rb ? rb[j] : 0);
        }
      OwbSgemmEpilogue ep = { .bias = col_bias };
      _owb_sgemm_packed (ctx->pool, p->w_pack, rows, x->data, s.input, xw, ldx, &ep);
    }
  else if (rows > 0 && ldx > 0)
    {
      /* Blocks of 64 columns at least (sgemm's packing of X repeats per block); serial below ~1M
       * multiply-adds, or when OpenBLAS threads the product itself. */
      gboolean par = rows * ldx * s.input >= (1 << 20) && openblas_get_num_threads () <= 1;
      owb_parallel_for (par ? ctx->pool : NULL, ldx, MAX (64, ldx / 8), project, &pj);
    }
  /* The two directions are independent: run them side by side, unless OpenBLAS already spreads each
   * GEMM over threads (both at once would oversubscribe the cores). */
  if (s.nd > 1 && openblas_get_num_threads () <= 1)
    owb_parallel_for (ctx->pool, s.nd, 1, run_directions, &job);
  else
    run_directions (0, s.nd, &job);
  g_free (xw);
  return TRUE;
}

#define RNN_TYPES OWB_CPU_TYPES_FLOATS

const OwbKernelDef _owb_cpu_kernels_rnn[] = {
  { "LSTM", "", 1, 0, RNN_TYPES, 0, rnn_prepare, rnn_free, rnn_compute },
  { "GRU", "", 1, 0, RNN_TYPES, 0, rnn_prepare, rnn_free, rnn_compute },
  { "RNN", "", 1, 0, RNN_TYPES, 0, rnn_prepare, rnn_free, rnn_compute },
  { NULL }
};
