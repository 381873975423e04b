/* layout.c: CPU kernels of the channels-last ops (domain ai.onnx.workbench) that the layout
 * optimization level creates: NhwcConv, NhwcMaxPool, NhwcAveragePool, NhwcGlobalAveragePool.
 * In NHWC the channels of a pixel are contiguous, so a 1x1 convolution is one GEMM on X itself,
 * im2col copies runs of C values, a depthwise convolution vectorises across channels, and the
 * bias/residual/activation epilogue is one pass over a contiguous tile. Constant weights are
 * packed at prepare time for cpu-sgemm.c, which applies that epilogue in registers. */
#include "../cpu-activation-private.h"
#include "../cpu-conv-private.h"
#include "../cpu-direct-conv-private.h"
#include "../cpu-qgemm-private.h"
#include "../cpu-sgemm-private.h"
#include "../cpu-depthwise-avx512-private.h"
#include "../cpu-simd-private.h"
#include "../cpu-winograd-private.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

/* Elements of one im2col tile and of one output tile (both meant to stay in L2). */
#define COL_BUDGET (G_GINT64_CONSTANT (1) << 18)
#define OUT_BUDGET (G_GINT64_CONSTANT (1) << 16)
#define MIN_TILE 16
/* With packed weights the im2col rows of a tile are A's strips: kept in L2 (256 KiB), but at least
 * 9 strips of 6 pixels, so that a weight block fetched from memory serves enough pixels. */
#define PACKED_COL_BUDGET (G_GINT64_CONSTANT (1) << 16)
#define PACKED_MIN_TILE 54
/* With up to this many output channels per group and a GEMM depth of at least this, GEMMs run on
 * transposed tiles: OpenBLAS 0.3.21 (one thread) does [64 x 576] x [576 x 3136] in half the time of
 * [3136 x 576] x [576 x 64]; with shallower GEMMs (the 7x7 RGB stem, 1x1 projections) the
 * transposition back costs more than it saves (test-kernels-layout -m perf). */
#define TRANSPOSED_MAX_M 64
#define TRANSPOSED_MIN_K 256
/* Output tiles (N x OH/m x OW/m) from which Winograd's F(m x m, 3x3) beats im2col. F(2x2): on
 * resnet18 at one thread it takes 14x14 images (49 tiles) from 3.7 to 2.4 ms, and makes 7x7 ones
 * (16 tiles) slower, 4.2 to 5.9. F(4x4) where there are enough 4x4 tiles (see winograd_tile). */
#define WINOGRAD2_MIN_TILES 32
#define WINOGRAD4_MIN_TILES 64

/* ---- activation epilogue (the FusedConv set) ---- */

/* Lanes of a vector (cpu-simd-private.h). */
enum { L = 8 };

static inline vf
vsel (vi m, vf a, vf b)
{
  return (vf) ((m & (vi) a) | (~m & (vi) b));
}

/* e^x by Cephes' expf scheme (2^n in the exponent bits times a degree-6 polynomial of the rest),
 * clamped to [-87, 88]; within a few ulp of expf. */
static inline vf
vexp (vf x)
{
  const vf zero = (vf){}, magic = zero + 12582912.0f;
  x = vsel (x < zero - 87.0f, zero - 87.0f, x);
  x = vsel (x > zero + 88.0f, zero + 88.0f, x);
  vf n = (x * 1.44269504088896341f + magic) - magic;
  vf r = x - n * 0.693359375f + n * 2.12194440e-4f;
  vf p = zero + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  vi e = (__builtin_convertvector (n, vi) + 127) << 23;
  return p * (vf) e;
}

static inline float
clamp01 (float x)
{
  return x < 0 ? 0.0f : (x > 1 ? 1.0f : x);
}

/* The activations without exp, on a vector and on one value; comparisons written so that NaN passes
 * through. */
static inline __attribute__ ((always_inline)) vf
act_vector (vf y, OwbCpuActivationKind kind, float p0, float p1)
{
  const vf zero = (vf){}, one = zero + 1.0f;
  vf t;
  switch (kind)
    {
    case OWB_CPU_ACT_RELU:
      return vsel (y < zero, zero, y);
    case OWB_CPU_ACT_LEAKY_RELU:
      return vsel (y < zero, y * p0, y);
    case OWB_CPU_ACT_CLIP:
      y = vsel (y < zero + p0, zero + p0, y);
      return vsel (y > zero + p1, zero + p1, y);
    case OWB_CPU_ACT_HARD_SIGMOID:
    case OWB_CPU_ACT_HARD_SWISH:
      t = y * p0 + p1;
      t = vsel (t < zero, zero, t);
      t = vsel (t > one, one, t);
      return kind == OWB_CPU_ACT_HARD_SWISH ? y * t : t;
    default:
      return y;
    }
}

static inline __attribute__ ((always_inline)) float
act_scalar (float y, OwbCpuActivationKind kind, float p0, float p1)
{
  switch (kind)
    {
    case OWB_CPU_ACT_RELU:
      return y < 0 ? 0.0f : y;
    case OWB_CPU_ACT_LEAKY_RELU:
      return y < 0 ? y * p0 : y;
    case OWB_CPU_ACT_CLIP:
      return y < p0 ? p0 : (y > p1 ? p1 : y);
    case OWB_CPU_ACT_HARD_SIGMOID:
      return clamp01 (y * p0 + p1);
    case OWB_CPU_ACT_HARD_SWISH:
      return y * clamp01 (y * p0 + p1);
    default:
      return y;
    }
}

/* One loop per in-register kind, so that the kind is a constant inside it. */
#define ACT_LOOP(KIND)                                                                                             \
  case KIND:                                                                                                       \
    for (; j + L <= n; j += L)                                                                                     \
      vstore (y + j, act_vector (vload (y + j), KIND, p0, p1));                                                    \
    for (; j < n; j++)                                                                                             \
      y[j] = act_scalar (y[j], KIND, p0, p1);                                                                      \
    break

static inline void
add_residual (float *restrict y, const float *restrict z, int64_t n)
{
  int64_t j = 0;
  for (; j + L <= n; j += L)
    vstore (y + j, vload (y + j) + vload (z + j));
  for (; j < n; j++)
    y[j] += z[j];
}

/* y = act (y) over n contiguous values. */
SIMD_CLONES static void
activate (float *restrict y, int64_t n, const OwbCpuActivation *act)
{
  const float p0 = act->p0, p1 = act->p1;
  const vf zero = (vf){}, one = zero + 1.0f;
  int64_t j = 0;
  switch (act->kind)
    {
    case OWB_CPU_ACT_NONE:
      break;
      ACT_LOOP (OWB_CPU_ACT_RELU);
      ACT_LOOP (OWB_CPU_ACT_LEAKY_RELU);
      ACT_LOOP (OWB_CPU_ACT_CLIP);
      ACT_LOOP (OWB_CPU_ACT_HARD_SIGMOID);
      ACT_LOOP (OWB_CPU_ACT_HARD_SWISH);
    case OWB_CPU_ACT_SIGMOID:
    case OWB_CPU_ACT_SWISH:
      {
        gboolean swish = act->kind == OWB_CPU_ACT_SWISH;
        if (_owb_cpu_sigmoid_vector (y, n, swish))
          break;
        for (; j + L <= n; j += L)
          {
            vf x = vload (y + j);
            vstore (y + j, (swish ? x : one) / (one + vexp (-x)));
          }
        for (; j < n; j++)
          y[j] = (swish ? y[j] : 1.0f) / (1.0f + expf (-y[j]));
      }
      break;
    case OWB_CPU_ACT_TANH:
      for (; j < n; j++)
        y[j] = tanhf (y[j]);
      break;
    case OWB_CPU_ACT_GELU:
      for (; j < n; j++)
        y[j] = 0.5f * y[j] * (1.0f + erff (y[j] * 0.70710678118654752440f));
      break;
    case OWB_CPU_ACT_FAST_GELU:
      for (; j + L <= n; j += L)
        {
          vf x = vload (y + j);
          vstore (y + j, x / (one + vexp (x * (-1.5957691216057308f + -0.0713548162726f * x * x))));
        }
      for (; j < n; j++)
        {
          float x = y[j];
          y[j] = x / (1.0f + expf (x * (-1.5957691216057308f + -0.0713548162726f * x * x)));
        }
      break;
    }
}

/* ---- NhwcConv ---- */

/* W, when it is an initializer, is packed once per group for cpu-sgemm.c; runs use the packs
 * only while W is that very tensor (a reference is held, so the address cannot be reused). */
typedef struct {
  OwbCpuConvParams conv;
  OwbCpuActivation act;
  OwbTensor *w;
  int64_t n_packs;
  OwbSgemmPacked **packs;
  OwbWinograd *winograd; /* in place of packs, for 3x3 stride-1 convolutions on large enough images */
  gboolean nchw_input;   /* X is [N, C, H, W] (attribute nchw_input) */
} NhwcConvParams;

static void
nhwc_conv_free (gpointer data)
{
  NhwcConvParams *p = data;
  for (int64_t i = 0; i < p->n_packs; i++)
    _owb_sgemm_packed_free (p->packs[i]);
  g_free (p->packs);
  _owb_winograd_free (p->winograd);
  if (p->w)
    owb_tensor_unref (p->w);
  g_free (p);
}

/* The Winograd tile (4 or 2) that runs this convolution, or 0: W [3, 3, C, M] in one group, stride
 * and dilation 1, and X's spatial size known at prepare and large enough that the GEMMs have rows to
 * share their weights (below that im2col's single deep GEMM wins). */
static int
winograd_tile (const NhwcConvParams *p, const OwbTensor *w, const OwbValueType *xt)
{
  const OwbCpuConvParams *cp = &p->conv;
  if (w->dims[0] != 3 || w->dims[1] != 3 || cp->group != 1 || !xt || xt->rank != 4 || w->dims[2] < 8
      || w->dims[3] < 16)
    return 0;
  for (int i = 0; i < cp->n_strides; i++)
    if (cp->strides[i] != 1)
      return 0;
  for (int i = 0; i < cp->n_dilations; i++)
    if (cp->dilations[i] != 1)
      return 0;
  for (int i = 0; i < 3; i++)
    if (!owb_dim_is_known (xt->dims[i]))
      return 0;
  int64_t n = xt->dims[0].value, h = xt->dims[1].value, wd = xt->dims[2].value;
  if (n * ((h + 3) / 4) * ((wd + 3) / 4) >= WINOGRAD4_MIN_TILES)
    return 4;
  if (n * ((h + 1) / 2) * ((wd + 1) / 2) >= WINOGRAD2_MIN_TILES)
    return 2;
  return 0;
}

static void
pack_constant_weights (const OwbNode *node, const OwbValueType *xt, NhwcConvParams *p)
{
  const char *name = node->n_inputs > 1 ? node->inputs[1] : "";
  OwbTensor *w = name[0] && node->graph ? owb_graph_get_initializer (node->graph, name) : NULL;
  if (!w || w->dtype != OWB_TYPE_FLOAT || w->rank != 4 || w->nelems == 0 || p->conv.group < 1)
    return;
  int64_t K = w->dims[0] * w->dims[1] * w->dims[2], M = w->dims[3], group = p->conv.group;
  /* depthwise has its own kernel; a bad group is reported by compute */
  if (M % group != 0 || (w->dims[2] == 1 && M == group))
    return;
  p->w = owb_tensor_ref (w);
  int tile = winograd_tile (p, w, xt);
  if (tile)
    {
      p->winograd = _owb_winograd_new (w->dims[2], M, w->data, tile);
      return;
    }
  int64_t Mg = M / group;
  p->packs = g_new (OwbSgemmPacked *, group);
  for (int64_t gi = 0; gi < group; gi++)
    p->packs[gi] = _owb_sgemm_pack (K, Mg, (const float *) w->data + gi * Mg, M);
  p->n_packs = group;
}

static gboolean
nhwc_conv_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                   GError **error)
{
  NhwcConvParams *p = g_new0 (NhwcConvParams, 1);
  if (!_owb_cpu_conv_params_parse (node, &p->conv, error) || !_owb_cpu_activation_parse (node, &p->act, error))
    {
      g_free (p);
      return FALSE;
    }
  p->nchw_input = owb_node_get_int (node, "nchw_input", 0) != 0;
  /* the weights are chosen for X's NHWC shape */
  const OwbValueType *xt = input_types ? input_types[0] : NULL;
  OwbValueType xt_nhwc;
  if (xt && p->nchw_input && xt->rank == 4)
    {
      xt_nhwc = *xt;
      xt_nhwc.dims[1] = xt->dims[2];
      xt_nhwc.dims[2] = xt->dims[3];
      xt_nhwc.dims[3] = xt->dims[1];
      xt = &xt_nhwc;
    }
  pack_constant_weights (node, xt, p);
  *state = p;
  return TRUE;
}

typedef struct {
  const OwbCpuConvGeom *g;
  const OwbCpuActivation *act;
  const float *x, *w, *bias, *z;
  float *y;
  int64_t P;           /* output pixels, N * OH * OW */
  int64_t K;           /* GEMM depth of one group: kH * kW * C/group */
  gboolean direct;     /* 1x1, stride 1, no padding: X's rows are the GEMM operand */
  gboolean transposed; /* compute Y^T tiles (few output channels per group) */
  int64_t tile, ntiles;
  int64_t mblock, nmblocks;
  OwbSgemmPacked *const *packs; /* per group, or NULL: OpenBLAS on W as it is */
} ConvJob;

/* Short runs (an RGB stem's 3 taps x 3 channels) are copied inline: a libc call per 36 bytes cost
 * more than the stem's GEMM. */
static inline void
copy_run (float *restrict dst, const float *restrict src, int64_t n)
{
  if (n > 32)
    memcpy (dst, src, n * sizeof (float));
  else
    for (int64_t i = 0; i < n; i++)
      dst[i] = src[i];
}

static inline void
zero_run (float *dst, int64_t n)
{
  if (n > 32)
    memset (dst, 0, n * sizeof (float));
  else
    for (int64_t i = 0; i < n; i++)
      dst[i] = 0.0f;
}

/* Rows [p0, p0 + len) of the im2col matrix of group gi: row p holds, for every tap (kh, kw), the
 * C/group input channels under it (zeros in the padding). */
static void
im2col (const ConvJob *job, int64_t gi, int64_t p0, int64_t len, float *restrict col)
{
  const OwbCpuConvGeom *g = job->g;
  int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1], KH = g->k[0], KW = g->k[1];
  int64_t C = g->C, Cg = g->Cg;
  int64_t run = Cg;
  /* a whole row of taps is one copy when the taps are adjacent and channels are not split */
  gboolean whole_rows = g->d[1] == 1 && Cg == C;
  int64_t oh = p0 / OW % OH, ow = p0 % OW, n = p0 / (OH * OW);
  for (int64_t p = 0; p < len; p++)
    {
      float *dst = col + p * job->K;
      const float *xn = job->x + n * IH * IW * C + gi * Cg;
      int64_t ih0 = oh * g->s[0] - g->pad[0], iw0 = ow * g->s[1] - g->pad[1];
      gboolean w_inside = iw0 >= 0 && iw0 + (KW - 1) * g->d[1] < IW;
      for (int64_t kh = 0; kh < KH; kh++, dst += KW * Cg)
        {
          int64_t ih = ih0 + kh * g->d[0];
          if (ih < 0 || ih >= IH)
            {
              zero_run (dst, KW * run);
              continue;
            }
          const float *xr = xn + ih * IW * C;
          if (whole_rows && w_inside)
            {
              copy_run (dst, xr + iw0 * C, KW * run);
              continue;
            }
          for (int64_t kw = 0; kw < KW; kw++)
            {
              int64_t iw = iw0 + kw * g->d[1];
              if (iw < 0 || iw >= IW)
                zero_run (dst + kw * Cg, run);
              else
                copy_run (dst + kw * Cg, xr + iw * C, run);
            }
        }
      if (++ow == OW)
        {
          ow = 0;
          if (++oh == OH)
            {
              oh = 0;
              n++;
            }
        }
    }
}

/* Y[p, m] of rows [p0, p0 + len), columns [m0, m0 + mn) from yt [mn, len]: + bias + residual. */
SIMD_CLONES static void
untranspose_tile (const ConvJob *job, const float *restrict yt, int64_t p0, int64_t len, int64_t m0, int64_t mn)
{
  int64_t M = job->g->M;
  for (int64_t p = 0; p < len; p++)
    {
      float *restrict yr = job->y + (p0 + p) * M + m0;
      for (int64_t m = 0; m < mn; m++)
        yr[m] = yt[m * len + p];
      if (job->bias)
        for (int64_t m = 0; m < mn; m++)
          yr[m] += job->bias[m0 + m];
      if (job->z)
        {
          const float *zr = job->z + (p0 + p) * M + m0;
          for (int64_t m = 0; m < mn; m++)
            yr[m] += zr[m];
        }
    }
}

static void
conv_units (int64_t begin, int64_t end, gpointer data)
{
  const ConvJob *job = data;
  const OwbCpuConvGeom *g = job->g;
  int64_t M = g->M, Mg = g->Mg, Cg = g->Cg, K = job->K;
  float *col = job->direct ? NULL : g_new (float, MAX (job->tile * K, 1));
  float *yt = job->transposed ? g_new (float, MAX (job->tile * MIN (Mg, job->mblock), 1)) : NULL;
  for (int64_t u = begin; u < end; u++)
    {
      int64_t t = u / job->nmblocks, mb = u % job->nmblocks;
      int64_t p0 = t * job->tile, len = MIN (job->tile, job->P - p0);
      int64_t m0 = mb * job->mblock, mn = MIN (job->mblock, M - m0);
      float *y = job->y + p0 * M + m0;
      float beta = 0;
      if (!job->transposed && (job->bias || job->z))
        {
          const float *bias = job->bias ? job->bias + m0 : NULL;
          for (int64_t p = 0; p < len; p++)
            {
              float *yr = y + p * M;
              const float *zr = job->z ? job->z + (p0 + p) * M + m0 : NULL;
              if (bias && zr)
                for (int64_t m = 0; m < mn; m++)
                  yr[m] = bias[m] + zr[m];
              else if (bias)
                memcpy (yr, bias, mn * sizeof (float));
              else
                memcpy (yr, zr, mn * sizeof (float));
            }
          beta = 1;
        }
      /* m blocks only split single-group convolutions, so a unit covers whole groups */
      int64_t g0 = m0 / Mg, g1 = (m0 + mn + Mg - 1) / Mg;
      for (int64_t gi = g0; gi < g1; gi++)
        {
          int64_t gm0 = MAX (gi * Mg, m0), gmn = MIN ((gi + 1) * Mg, m0 + mn) - gm0;
          const float *w = job->w + gm0;
          float *yg = job->y + p0 * M + gm0;
          const float *a = job->x + p0 * g->C + gi * Cg;
          int64_t lda = g->C;
          if (!job->direct)
            {
              im2col (job, gi, p0, len, col);
              a = col;
              lda = K;
            }
          /* With few output channels OpenBLAS is faster on the transposed product Y^T = W^T A^T
           * (the channels as its rows); the tile is transposed back while in cache. */
          if (job->transposed)
            {
              cblas_sgemm (CblasRowMajor, CblasTrans, CblasTrans, (int) gmn, (int) len, (int) K, 1.0f, w, (int) M, a,
                           (int) lda, 0.0f, yt, (int) len);
              untranspose_tile (job, yt, p0, len, gm0, gmn);
            }
          else
            cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) len, (int) gmn, (int) K, 1.0f, a, (int) lda,
                         w, (int) M, beta, yg, (int) M);
        }
      if (job->act->kind != OWB_CPU_ACT_NONE)
        {
          if (mn == M)
            activate (y, len * M, job->act);
          else
            for (int64_t p = 0; p < len; p++)
              activate (y + p * M, mn, job->act);
        }
    }
  g_free (col);
  g_free (yt);
}

static void
activate_rows (float *c, int64_t rows, int64_t cols, int64_t ldc, gconstpointer data)
{
  if (cols == ldc)
    activate (c, rows * cols, data);
  else
    for (int64_t r = 0; r < rows; r++)
      activate (c + r * ldc, cols, data);
}

/* Units of (pixel tile, group, column block) on the packed weights: A is X itself (1x1) or the
 * tile's im2col rows; the epilogue runs inside the GEMM, per 6-pixel strip. */
static void
packed_units (int64_t begin, int64_t end, gpointer data)
{
  const ConvJob *job = data;
  const OwbCpuConvGeom *g = job->g;
  int64_t M = g->M, Mg = g->Mg, Cg = g->Cg, K = job->K, G = g->group;
  float *col = job->direct ? NULL : g_new (float, MAX (job->tile * K, 1));
  OwbSgemmEpilogue ep = { .ldz = M };
  _owb_sgemm_epilogue_set_activation (&ep, job->act, activate_rows);
  int64_t last_t = -1, last_g = -1;
  for (int64_t u = begin; u < end; u++)
    {
      int64_t t = u / (G * job->nmblocks), gi = u / job->nmblocks % G, mb = u % job->nmblocks;
      int64_t p0 = t * job->tile, len = MIN (job->tile, job->P - p0);
      int64_t n0 = mb * job->mblock;
      const float *a = job->x + p0 * g->C + gi * Cg;
      int64_t lda = g->C;
      if (!job->direct)
        {
          /* consecutive column blocks of one tile share its im2col rows */
          if (t != last_t || gi != last_g)
            im2col (job, gi, p0, len, col);
          last_t = t;
          last_g = gi;
          a = col;
          lda = K;
        }
      ep.bias = job->bias ? job->bias + gi * Mg : NULL;
      ep.z = job->z ? job->z + p0 * M + gi * Mg : NULL;
      _owb_sgemm_packed_run (job->packs[gi], len, a, lda, n0, n0 + job->mblock, job->y + p0 * M + gi * Mg, M, &ep);
    }
  g_free (col);
}

/* What one output row reads: the input rows under its valid tap rows [kh0, kh1), the first at
 * `first` and each next one rstep floats further (rows of X, or of a pointwise convolution's output
 * in a buffer, see NhwcPointwiseDepthwise); the activation applied as each output vector is stored
 * (KIND below: a constant in each copy of the kernels). A table of row pointers instead cost the
 * stride-1 kernels 15-20%. */
typedef struct {
  const float *first;
  int64_t rstep;
  const float *w, *bias;
  int64_t C, KW, dw, kh0, kh1;
  float p0, p1;
} DwRow;

/* The input row under tap row kh (kh0 <= kh < kh1). */
static inline __attribute__ ((always_inline)) const float *
dw_tap_row (const DwRow *d, int64_t kh)
{
  return d->first + (kh - d->kh0) * d->rstep;
}

/* The taps of one output pixel over channels [c0, c0 + NV * L), NV vector accumulators. */
static inline __attribute__ ((always_inline)) void
dw_vectors (const DwRow *d, float *yp, int64_t iw0, int64_t kw0, int64_t kw1, int64_t c0, const int NV,
            const OwbCpuActivationKind KIND)
{
  const int64_t C = d->C, KW = d->KW;
  vf acc[4];
#pragma GCC unroll 4
  for (int v = 0; v < NV; v++)
    acc[v] = d->bias ? vload (d->bias + c0 + v * L) : (vf){};
  for (int64_t kh = d->kh0; kh < d->kh1; kh++)
    {
      const float *xr = dw_tap_row (d, kh) + c0, *wr = d->w + kh * KW * C + c0;
      for (int64_t kw = kw0; kw < kw1; kw++)
        {
          const float *xp = xr + (iw0 + kw * d->dw) * C, *wp = wr + kw * C;
#pragma GCC unroll 4
          for (int v = 0; v < NV; v++)
            acc[v] += vload (xp + v * L) * vload (wp + v * L);
        }
    }
#pragma GCC unroll 4
  for (int v = 0; v < NV; v++)
    vstore (yp + c0 + v * L, act_vector (acc[v], KIND, d->p0, d->p1));
}

/* One output pixel, channels [c0, C): vectors of 4 and 1, then single channels. */
static inline __attribute__ ((always_inline)) void
dw_pixel (const DwRow *d, float *yp, int64_t iw0, int64_t kw0, int64_t kw1, int64_t c0,
          const OwbCpuActivationKind KIND)
{
  const float *w = d->w, *bias = d->bias;
  const int64_t C = d->C, KW = d->KW, dw = d->dw;
  for (; c0 + 4 * L <= C; c0 += 4 * L)
    dw_vectors (d, yp, iw0, kw0, kw1, c0, 4, KIND);
  for (; c0 + L <= C; c0 += L)
    dw_vectors (d, yp, iw0, kw0, kw1, c0, 1, KIND);
  for (; c0 < C; c0++)
    {
      float acc = bias ? bias[c0] : 0.0f;
      for (int64_t kh = d->kh0; kh < d->kh1; kh++)
        for (int64_t kw = kw0; kw < kw1; kw++)
          acc += dw_tap_row (d, kh)[(iw0 + kw * dw) * C + c0] * w[(kh * KW + kw) * C + c0];
      yp[c0] = act_scalar (acc, KIND, d->p0, d->p1);
    }
}

/* Four adjacent output pixels whose taps all lie inside the row, NV (1 or 2) vectors of channels
 * from c0: each weight vector, loaded once, serves the four (one load per multiply-add instead of
 * two), and the four pixels are independent chains of multiply-adds. */
static inline __attribute__ ((always_inline)) void
dw_four_pixels (const DwRow *d, float *yp, int64_t iw0, int64_t sw, int64_t c0, const int64_t KW, const int NV,
                const OwbCpuActivationKind KIND)
{
  const int64_t C = d->C;
  vf acc[4][2];
#pragma GCC unroll 4
  for (int p = 0; p < 4; p++)
#pragma GCC unroll 2
    for (int v = 0; v < NV; v++)
      acc[p][v] = d->bias ? vload (d->bias + c0 + v * L) : (vf){};
  for (int64_t kh = d->kh0; kh < d->kh1; kh++)
    {
      const float *xr = dw_tap_row (d, kh) + iw0 * C + c0, *wr = d->w + kh * KW * C + c0;
      for (int64_t kw = 0; kw < KW; kw++)
        {
          const float *xp = xr + kw * d->dw * C, *wp = wr + kw * C;
          vf w0 = vload (wp), w1 = NV > 1 ? vload (wp + L) : w0;
#pragma GCC unroll 4
          for (int p = 0; p < 4; p++)
            {
              acc[p][0] += vload (xp + p * sw * C) * w0;
              if (NV > 1)
                acc[p][1] += vload (xp + p * sw * C + L) * w1;
            }
        }
    }
#pragma GCC unroll 4
  for (int p = 0; p < 4; p++)
#pragma GCC unroll 2
    for (int v = 0; v < NV; v++)
      vstore (yp + p * C + c0 + v * L, act_vector (acc[p][v], KIND, d->p0, d->p1));
}

/* dw_four_pixels with 3 and 5 wide kernels (nearly every depthwise one) as constants, so that the
 * tap loop unrolls. */
static inline __attribute__ ((always_inline)) void
dw_four_pixels_kw (const DwRow *d, float *yp, int64_t iw0, int64_t sw, int64_t c0, int64_t KW, const int NV,
                   const OwbCpuActivationKind KIND)
{
  if (KW == 3)
    dw_four_pixels (d, yp, iw0, sw, c0, 3, NV, KIND);
  else if (KW == 5)
    dw_four_pixels (d, yp, iw0, sw, c0, 5, NV, KIND);
  else
    dw_four_pixels (d, yp, iw0, sw, c0, KW, NV, KIND);
}

/* Stride and dilation 1, NV (1 or 2) vectors of channels from c0: the four pixels read KW + 3
 * adjacent input pixels per tap row, each loaded once and used by up to KW of them (0.75 loads per
 * multiply-add for 3x3 instead of 1.25). Two vectors make eight independent chains of
 * multiply-adds, which four could not keep the FMA units busy with. */
static inline __attribute__ ((always_inline)) void
dw_four_pixels_s1 (const DwRow *d, float *yp, int64_t iw0, int64_t c0, const int KW, const int NV,
                   const OwbCpuActivationKind KIND)
{
  const int64_t C = d->C;
  vf acc[2][4];
#pragma GCC unroll 2
  for (int v = 0; v < NV; v++)
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++)
      acc[v][p] = d->bias ? vload (d->bias + c0 + v * L) : (vf){};
  for (int64_t kh = d->kh0; kh < d->kh1; kh++)
    {
      const float *xr = dw_tap_row (d, kh) + iw0 * C + c0, *wr = d->w + kh * KW * C + c0;
#pragma GCC unroll 2
      for (int v = 0; v < NV; v++)
        {
          vf x[8];
#pragma GCC unroll 8
          for (int i = 0; i < KW + 3; i++)
            x[i] = vload (xr + i * C + v * L);
#pragma GCC unroll 5
          for (int kw = 0; kw < KW; kw++)
            {
              vf wv = vload (wr + kw * C + v * L);
#pragma GCC unroll 4
              for (int p = 0; p < 4; p++)
                acc[v][p] += x[p + kw] * wv;
            }
        }
    }
#pragma GCC unroll 2
  for (int v = 0; v < NV; v++)
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++)
      vstore (yp + p * C + c0 + v * L, act_vector (acc[v][p], KIND, d->p0, d->p1));
}

/* Four interior pixels from yp, every channel: stride 1 with 3 or 5 taps slides a window, the rest
 * reuse each weight vector over the four. */
static inline __attribute__ ((always_inline)) void
dw_four_interior (const DwRow *d, float *yp, int64_t iw0, int64_t sw, const OwbCpuActivationKind KIND)
{
  const int64_t C = d->C, KW = d->KW;
  int64_t c0 = 0;
  if (sw == 1 && d->dw == 1 && (KW == 3 || KW == 5))
    {
      if (KW == 3)
        for (; c0 + 2 * L <= C; c0 += 2 * L)
          dw_four_pixels_s1 (d, yp, iw0, c0, 3, 2, KIND);
      for (; c0 + L <= C; c0 += L)
        {
          if (KW == 3)
            dw_four_pixels_s1 (d, yp, iw0, c0, 3, 1, KIND);
          else
            dw_four_pixels_s1 (d, yp, iw0, c0, 5, 1, KIND);
        }
    }
  for (; c0 + 2 * L <= C; c0 += 2 * L)
    dw_four_pixels_kw (d, yp, iw0, sw, c0, KW, 2, KIND);
  /* a last single vector (24, 40, 72, 120... channels) */
  if (c0 + L <= C)
    {
      dw_four_pixels_kw (d, yp, iw0, sw, c0, KW, 1, KIND);
      c0 += L;
    }
  if (c0 < C)
    for (int p = 0; p < 4; p++)
      dw_pixel (d, yp + p * C, iw0 + p * sw, 0, KW, c0, KIND);
}

/* One output row of a depthwise convolution of geometry g (X's channels, width, strides, pads):
 * first, rstep and [kh0, kh1) as in DwRow, KIND applied as it is stored. */
static inline __attribute__ ((always_inline)) void
dw_output_row (const OwbCpuConvGeom *g, const float *w, const float *bias, const OwbCpuActivation *act,
               const float *first, int64_t rstep, int64_t kh0, int64_t kh1, float *yrow,
               const OwbCpuActivationKind KIND)
{
  int64_t IW = g->in[1], OW = g->out[1], KW = g->k[1], C = g->C, sw = g->s[1], dw = g->d[1], pw = g->pad[1];
  DwRow d = { .first = first, .rstep = rstep, .w = w, .bias = bias, .C = C, .KW = KW, .dw = dw, .kh0 = kh0,
              .kh1 = kh1, .p0 = act->p0, .p1 = act->p1 };
  for (int64_t ow = 0; ow < OW;)
    {
      int64_t iw0 = ow * sw - pw;
      float *yp = yrow + ow * C;
      if (C >= L && ow + 4 <= OW && iw0 >= 0 && iw0 + 3 * sw + (KW - 1) * dw < IW)
        {
          dw_four_interior (&d, yp, iw0, sw, KIND);
          ow += 4;
          continue;
        }
      int64_t kw0 = 0, kw1 = KW;
      if (iw0 < 0 || iw0 + (KW - 1) * dw >= IW)
        _owb_cpu_conv_valid_range (iw0, dw, IW, KW, &kw0, &kw1);
      dw_pixel (&d, yp, iw0, kw0, kw1, 0, KIND);
      ow++;
    }
}

/* The activation kinds applied in registers as depthwise outputs are stored; the others take a
 * pass over the row (activate). */
static inline gboolean
dw_in_register (OwbCpuActivationKind kind)
{
  return kind == OWB_CPU_ACT_RELU || kind == OWB_CPU_ACT_CLIP || kind == OWB_CPU_ACT_HARD_SWISH;
}

/* dw_output_row with the activation's kind as a constant (NONE for a kind dw_in_register refuses:
 * the caller runs activate on the row then). */
static inline __attribute__ ((always_inline)) void
dw_output_row_act (const OwbCpuConvGeom *g, const float *w, const float *bias, const OwbCpuActivation *act,
                   OwbCpuActivationKind kind, const float *first, int64_t rstep, int64_t kh0, int64_t kh1,
                   float *yrow)
{
  switch (kind)
    {
    case OWB_CPU_ACT_RELU:
      dw_output_row (g, w, bias, act, first, rstep, kh0, kh1, yrow, OWB_CPU_ACT_RELU);
      break;
    case OWB_CPU_ACT_CLIP:
      dw_output_row (g, w, bias, act, first, rstep, kh0, kh1, yrow, OWB_CPU_ACT_CLIP);
      break;
    case OWB_CPU_ACT_HARD_SWISH:
      dw_output_row (g, w, bias, act, first, rstep, kh0, kh1, yrow, OWB_CPU_ACT_HARD_SWISH);
      break;
    default:
      dw_output_row (g, w, bias, act, first, rstep, kh0, kh1, yrow, OWB_CPU_ACT_NONE);
      break;
    }
}

/* Depthwise (group == C == M): units are output rows (n, oh); every pixel accumulates its taps
 * across contiguous channels, four interior pixels at a time. ReLU, Clip and HardSwish (the
 * activations of mobile networks) are applied in registers as the outputs are stored; a residual
 * or another activation takes a pass over the row, still in cache. */
SIMD_CLONES static void
depthwise_rows (int64_t begin, int64_t end, gpointer data)
{
  const ConvJob *job = data;
  const OwbCpuConvGeom *g = job->g;
  int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1], KH = g->k[0], C = g->C;
  gboolean wide = _owb_cpu_dw_avx512_usable ();
  gboolean in_register = wide ? _owb_cpu_dw_avx512_in_register (job->act->kind) : dw_in_register (job->act->kind);
  OwbCpuActivationKind kind = !job->z && in_register ? job->act->kind : OWB_CPU_ACT_NONE;
  for (int64_t r = begin; r < end; r++)
    {
      int64_t n = r / OH, oh = r % OH, ih0 = oh * g->s[0] - g->pad[0], kh0, kh1;
      _owb_cpu_conv_valid_range (ih0, g->d[0], IH, KH, &kh0, &kh1);
      const float *first = job->x + (n * IH + ih0 + kh0 * g->d[0]) * IW * C;
      float *yrow = job->y + r * OW * C;
      if (wide)
        _owb_cpu_dw_row_avx512 (g, job->w, job->bias, job->act, kind, first, g->d[0] * IW * C, kh0, kh1, yrow);
      else
        dw_output_row_act (g, job->w, job->bias, job->act, kind, first, g->d[0] * IW * C, kh0, kh1, yrow);
      if (kind != OWB_CPU_ACT_NONE)
        continue;
      if (job->z)
        add_residual (yrow, job->z + r * OW * C, OW * C);
      activate (yrow, OW * C, job->act);
    }
}

/* ---- grouped convolutions of a few channels per group ---- */

/* A grouped convolution of 2 or 4 channels per group (ResNeXt-50's first stage: 32 groups of 4) as
 * one GEMM per group has 2 or 4 output columns of the packed tile and an im2col copy per group:
 * 13-29 ms for its 56x56x128 3x3 layers at 1 thread where a dense layer of the same work took 1.2.
 * Directly instead: 8 output channels in a vector read exactly the same 8 input channels (groups
 * g..g+8/Mg-1, Mg = Cg), so for each tap and each input channel c of a group a lane permutation of
 * the 8 loaded inputs gives lane j the value of channel (j / Mg) Mg + c, times W's row: 2.0-2.2 ms.
 * Four output pixels share each weight vector (four independent sums). With 8 or more channels a
 * group the packed GEMM stays faster (1.2 and 0.42 ms for ResNeXt's 8 and 16 against 2.0 here).
 * The permutations are in-lane shuffles by an immediate (MG and c constants: GROUPED_MASK) and the
 * pixel loops unrolled: with an index vector built at run time and loops of a variable count, GCC
 * kept the four sums and inputs on the stack and ran a vpermps, a load and a store per FMA.
 * resnext50's 56x56x128 layers at 1 thread, per-node minima: 1.22-1.29 -> 0.42-0.56 ms with
 * AVX-512, 1.82-1.89 -> 0.76-0.93 ms with AVX2 (ORT 1.10). */
#define GROUPED_PIXELS 4

static gboolean
grouped_direct_suits (const OwbCpuConvGeom *g)
{
  if (g->nsp != 2 || g->group < 2 || g->M % 8 != 0 || (g->Cg == 1 && g->Mg == 1))
    return FALSE;
  return g->Mg < 8 && 8 % g->Mg == 0 && g->Cg == g->Mg;
}


/* Output pixels [ow, ow + np) of one row for output channels [m0, m0 + LANES); xrow: input row kh;
 * columns out of the row add nothing. Stamped for 8 lanes (SIMD_CLONES: AVX2, or SSE) and, on
 * x86-64 GCC, 16 (AVX-512, where Mg divides 16 and M is a multiple of it). */
#define DEFINE_GROUPED(SFX, V, VI, LANES, ATTR, INLINE_ATTR)                                                        \
  INLINE_ATTR static inline __attribute__ ((always_inline)) V grouped_load##SFX (const float *p)                   \
  {                                                                                                                \
    V v;                                                                                                           \
    memcpy (&v, p, sizeof v);                                                                                      \
    return v;                                                                                                      \
  }                                                                                                                \
                                                                                                                   \
  INLINE_ATTR static inline __attribute__ ((always_inline)) void grouped_block##SFX (                              \
    const ConvJob *job, const float *xrow, int64_t ow, int np, int64_t m0, const int MG, V *acc, int64_t kh)       \
  {                                                                                                                \
    const OwbCpuConvGeom *g = job->g;                                                                              \
    int64_t C = g->C, M = g->M, KW = g->k[1], IW = g->in[1];                                                       \
    int64_t sw = g->s[1], dw = g->d[1], pw = g->pad[1];                                                            \
    for (int64_t kw = 0; kw < KW; kw++)                                                                            \
      {                                                                                                            \
        const float *wt = job->w + (kh * KW + kw) * MG * M + m0;                                                   \
        V xv[GROUPED_PIXELS];                                                                                      \
        _Pragma ("GCC unroll 8") for (int t = 0; t < np; t++)                                                    \
          {                                                                                                        \
            int64_t iw = (ow + t) * sw - pw + kw * dw;                                                             \
            xv[t] = iw >= 0 && iw < IW ? grouped_load##SFX (xrow + iw * C + m0) : (V){};                          \
          }                                                                                                        \
        _Pragma ("GCC unroll 4") for (int c = 0; c < MG; c++)                                                      \
          {                                                                                                        \
            V wv = grouped_load##SFX (wt + c * M);                                                                 \
            _Pragma ("GCC unroll 8") for (int t = 0; t < np; t++)                                                \
              acc[t] += PERMUTE (xv[t], GROUPED_MASK##SFX (VI, MG, c), LANES) * wv;                                \
          }                                                                                                        \
      }                                                                                                            \
  }                                                                                                                \
                                                                                                                   \
  INLINE_ATTR static inline __attribute__ ((always_inline)) void grouped_rows_mg##SFX (                            \
    const ConvJob *job, int64_t begin, int64_t end, const int MG)                                                  \
  {                                                                                                                \
    const OwbCpuConvGeom *g = job->g;                                                                              \
    int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1], KH = g->k[0], C = g->C, M = g->M;        \
    for (int64_t r = begin; r < end; r++)                                                                          \
      {                                                                                                            \
        int64_t n = r / OH, oh = r % OH, ih0 = oh * g->s[0] - g->pad[0], kh0, kh1;                                 \
        _owb_cpu_conv_valid_range (ih0, g->d[0], IH, KH, &kh0, &kh1);                                              \
        float *yrow = job->y + r * OW * M;                                                                         \
        for (int64_t ow = 0; ow < OW; ow += GROUPED_PIXELS)                                                        \
          {                                                                                                        \
            int np = (int) MIN (GROUPED_PIXELS, OW - ow);                                                          \
            for (int64_t m0 = 0; m0 < M; m0 += LANES)                                                              \
              {                                                                                                    \
                V b = job->bias ? grouped_load##SFX (job->bias + m0) : (V){};                                     \
                V acc[GROUPED_PIXELS];                                                                             \
                _Pragma ("GCC unroll 8") for (int t = 0; t < GROUPED_PIXELS; t++)                                \
                  acc[t] = b;                                                                                      \
                for (int64_t kh = kh0; kh < kh1; kh++)                                                             \
                  {                                                                                                \
                    const float *xrow = job->x + ((n * IH + ih0 + kh * g->d[0]) * IW) * C;                         \
                    if (np == GROUPED_PIXELS)                                                                      \
                      grouped_block##SFX (job, xrow, ow, GROUPED_PIXELS, m0, MG, acc, kh);                         \
                    else                                                                                           \
                      grouped_block##SFX (job, xrow, ow, np, m0, MG, acc, kh);                                     \
                  }                                                                                                \
                for (int t = 0; t < np; t++)                                                                       \
                  memcpy (yrow + (ow + t) * M + m0, &acc[t], sizeof acc[t]);                                      \
              }                                                                                                    \
          }                                                                                                        \
        if (job->z)                                                                                                \
          add_residual (yrow, job->z + r * OW * M, OW * M);                                                        \
        activate (yrow, OW * M, job->act);                                                                         \
      }                                                                                                            \
  }                                                                                                                \
                                                                                                                   \
  ATTR static void grouped_rows##SFX (int64_t begin, int64_t end, gpointer data)                                   \
  {                                                                                                                \
    const ConvJob *job = data;                                                                                     \
    if (job->g->Mg == 4)                                                                                           \
      grouped_rows_mg##SFX (job, begin, end, 4);                                                                   \
    else                                                                                                           \
      grouped_rows_mg##SFX (job, begin, end, 2);                                                                   \
  }

/* The lanes that lane j of an input vector takes its value from for input channel c of its group
 * (MG channels a group): (j / MG) MG + c, constants once MG and c are, so that the permutation is one
 * in-lane shuffle by an immediate (vpermilps), not a permutation by an index vector. */
#define GROUPED_LANE(j, MG, c) ((j) / (MG) * (MG) + (c))
#define GROUPED_MASK8(VI, MG, c)                                                                                   \
  ((VI){ GROUPED_LANE (0, MG, c), GROUPED_LANE (1, MG, c), GROUPED_LANE (2, MG, c), GROUPED_LANE (3, MG, c),      \
         GROUPED_LANE (4, MG, c), GROUPED_LANE (5, MG, c), GROUPED_LANE (6, MG, c), GROUPED_LANE (7, MG, c) })
#define GROUPED_MASK16(VI, MG, c)                                                                                  \
  ((VI){ GROUPED_LANE (0, MG, c), GROUPED_LANE (1, MG, c), GROUPED_LANE (2, MG, c), GROUPED_LANE (3, MG, c),      \
         GROUPED_LANE (4, MG, c), GROUPED_LANE (5, MG, c), GROUPED_LANE (6, MG, c), GROUPED_LANE (7, MG, c),      \
         GROUPED_LANE (8, MG, c), GROUPED_LANE (9, MG, c), GROUPED_LANE (10, MG, c), GROUPED_LANE (11, MG, c),    \
         GROUPED_LANE (12, MG, c), GROUPED_LANE (13, MG, c), GROUPED_LANE (14, MG, c), GROUPED_LANE (15, MG, c) })

/* Lane j of v takes lane idx[j]: GCC's __builtin_shuffle; clang (the fuzzing build) lane by lane. */
#if defined(__clang__)
#define PERMUTE(v, idx, LANES)                                                                                     \
  ({                                                                                                               \
    __typeof__ (v) permuted_;                                                                                      \
    for (int lane_ = 0; lane_ < (LANES); lane_++)                                                                  \
      permuted_[lane_] = (v)[(idx)[lane_] & ((LANES) - 1)];                                                        \
    permuted_;                                                                                                     \
  })
#else
#define PERMUTE(v, idx, LANES) __builtin_shuffle ((v), (idx))
#endif

DEFINE_GROUPED (8, vf, vi, 8, SIMD_CLONES, )

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GROUPED_HAVE_16 1
#define GROUPED_AVX512 __attribute__ ((target ("avx512f,avx512vl,avx512dq,avx512bw,fma")))
typedef float vf16 __attribute__ ((vector_size (64)));
typedef int32_t vi16 __attribute__ ((vector_size (64)));
DEFINE_GROUPED (16, vf16, vi16, 16, GROUPED_AVX512, GROUPED_AVX512)
#endif

/* 8 or more channels a group (ResNeXt-50's second to fourth stages) paid an im2col copy per group
 * and a packed GEMM whose panel was half used: 1.19 and 0.40 ms for its 28x28x256 and 14x14x512
 * layers against ONNX Runtime's 0.81 and 0.27. A block of NV vectors of LANES output channels now
 * lies inside one group (Mg a multiple of NV * LANES), so every input channel c of the group is
 * one scalar broadcast times NV weight vectors; NP output pixels share them (NP * NV independent
 * sums, NV + NP loads a NP * NV FMAs). A row's pixels are cut into equal blocks of at most NP
 * (14 = 7 + 7, not 8 + 6), each block size its own unrolled copy. The group's input rows are
 * copied contiguous first (with zeros for the padding) and the weights read from the group's
 * 16-wide SGEMM panels: in place, pixels C floats apart and W's rows M apart (2 KiB at 512) fell
 * into a few L1 sets and evicted each other. Per convolution, 1 thread, six chained ones (loaded
 * machine, minima): 16 a group at 14x14x512 0.41-0.52 -> 0.34-0.37 ms with AVX-512 and
 * 0.42 -> 0.33 with AVX2 (ORT 0.27); 32 a group at 7x7x1024 0.31 -> 0.30 and, AVX2, 0.48 -> 0.32
 * (ORT 0.26); 64 a group at 14x14x512 1.10 -> 1.07 (ORT 1.00). Undilated taps then run as one
 * loop of KW * Cg (their inputs follow each other in the copy as their weight rows do) and the
 * copy's runs of Cg floats are copied inline, not by memcpy: 8 a group at 28x28x256 0.61 -> 0.54
 * (ORT 0.79), 32 a group at 7x7x1024 0.26 with AVX-512 (ORT 0.26). */
#define BCAST_MAX_CG 64

/* The vectors a block (NV) for Mg channels a group in LANES lanes, or 0 where the packed GEMM
 * stays faster. */
static int
grouped_bcast_nv (const OwbCpuConvGeom *g, int lanes)
{
  if (g->nsp != 2 || g->group < 2 || g->Cg > BCAST_MAX_CG || g->Cg < 8)
    return 0;
  if (g->Mg % (2 * lanes) == 0)
    return 2;
  return g->Mg % lanes == 0 ? 1 : 0;
}

#define BCAST_CASE(K, SFX, NP)                                                                                     \
  case K:                                                                                                          \
    if ((K) <= (NP))                                                                                               \
      gbcast_block##SFX (xg, xs, wk, ws, (K), acc, kw_step, kcount, depth);                                         \
    break;

/* Group weights: vector v of the block at wrow[v], row k (tap-major, then input channel) at k * ws:
 * a 16-wide panel of the group's SGEMM pack (rows 64 bytes apart) or W itself (rows M apart). */
#define DEFINE_GROUPED_BCAST(SFX, V, LANES, NV, NP, ATTR, INLINE_ATTR)                                              \
  INLINE_ATTR static inline __attribute__ ((always_inline)) void gbcast_block##SFX (                               \
    const float *xg, int64_t xs, const float *const *wrow, int64_t ws, int np, V (*acc)[NV], int64_t kw_step,      \
    int64_t kcount, int64_t Cg)                                                                                    \
  {                                                                                                                \
    for (int64_t kw = 0; kw < kcount; kw++)                                                                        \
      {                                                                                                            \
        const float *xp = xg + kw * kw_step;                                                                       \
        const float *wk[NV];                                                                                       \
        _Pragma ("GCC unroll 2") for (int v = 0; v < NV; v++) wk[v] = wrow[v] + kw * Cg * ws;                      \
        for (int64_t c = 0; c < Cg; c++)                                                                           \
          {                                                                                                        \
            V wv[NV];                                                                                              \
            _Pragma ("GCC unroll 2") for (int v = 0; v < NV; v++) memcpy (&wv[v], wk[v] + c * ws, sizeof wv[v]);   \
            _Pragma ("GCC unroll 16") for (int t = 0; t < np; t++)                                                 \
            {                                                                                                      \
              float x = xp[t * xs + c];                                                                            \
              _Pragma ("GCC unroll 2") for (int v = 0; v < NV; v++) acc[t][v] += x * wv[v];                        \
            }                                                                                                      \
          }                                                                                                        \
      }                                                                                                            \
  }                                                                                                                \
                                                                                                                   \
  /* units: (output row, chunk of job->mblock channels) */                                                         \
  ATTR static void gbcast_rows##SFX (int64_t begin, int64_t end, gpointer data)                                    \
  {                                                                                                                \
    const ConvJob *job = data;                                                                                     \
    const OwbCpuConvGeom *g = job->g;                                                                              \
    int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1], KH = g->k[0], KW = g->k[1];             \
    int64_t C = g->C, M = g->M, Cg = g->Cg, Mg = g->Mg, sw = g->s[1], dw = g->d[1], pw = g->pad[1];               \
    int64_t nblocks = (OW + NP - 1) / NP, base = OW / nblocks, extra = OW % nblocks;                               \
    /* the group's input rows, columns from -pw on, copied contiguous with zeros for the padding: \
     * read in place, pixels C floats apart (2 KiB at C 512) shared a few L1 sets with each other */ \
    int64_t XW = (OW - 1) * sw + (KW - 1) * dw + 1;                                                                \
    float *xb = g_malloc (KH * XW * Cg * sizeof (float));                                                          \
    for (int64_t u = begin; u < end; u++)                                                                          \
      {                                                                                                            \
        int64_t r = u / job->nmblocks, mlo = u % job->nmblocks * job->mblock, mhi = MIN (mlo + job->mblock, M);    \
        int64_t n = r / OH, oh = r % OH, ih0 = oh * g->s[0] - g->pad[0], kh0, kh1;                                 \
        _owb_cpu_conv_valid_range (ih0, g->d[0], IH, KH, &kh0, &kh1);                                              \
        float *yrow = job->y + r * OW * M;                                                                         \
        int64_t filled = -1;                                                                                       \
        for (int64_t m0 = mlo; m0 < mhi; m0 += NV * LANES)                                                         \
          {                                                                                                        \
            int64_t gi = m0 / Mg, c0 = gi * Cg;                                                                    \
            if (gi != filled)                                                                                      \
              {                                                                                                    \
                for (int64_t kh = kh0; kh < kh1; kh++)                                                             \
                  {                                                                                                \
                    const float *xrow = job->x + ((n * IH + ih0 + kh * g->d[0]) * IW) * C + c0;                    \
                    float *dst = xb + kh * XW * Cg;                                                                \
                    for (int64_t i = 0; i < XW; i++)                                                               \
                      {                                                                                            \
                        int64_t iw = i - pw;                                                                       \
                        if (iw >= 0 && iw < IW)                                                                    \
                          copy_run (dst + i * Cg, xrow + iw * C, Cg);                                                                       \
                        else                                                                                       \
                          zero_run (dst + i * Cg, Cg);                                                                                                 \
                      }                                                                                            \
                  }                                                                                                \
                filled = gi;                                                                                       \
              }                                                                                                    \
            const float *wrow[NV];                                                                                 \
            int64_t ws;                                                                                            \
            if (job->packs)                                                                                        \
              {                                                                                                    \
                int width;                                                                                         \
                for (int v = 0; v < NV; v++)                                                                       \
                  {                                                                                                \
                    int64_t j = m0 - gi * Mg + v * LANES;                                                          \
                    wrow[v] = _owb_sgemm_packed_panel (job->packs[gi], j / 16, &width) + j % 16;                   \
                  }                                                                                                \
                ws = width;                                                                                        \
              }                                                                                                    \
            else                                                                                                   \
              {                                                                                                    \
                for (int v = 0; v < NV; v++)                                                                       \
                  wrow[v] = job->w + m0 + v * LANES;                                                               \
                ws = M;                                                                                            \
              }                                                                                                    \
            V b[NV];                                                                                               \
            for (int v = 0; v < NV; v++)                                                                           \
              {                                                                                                    \
                b[v] = (V){};                                                                                      \
                if (job->bias)                                                                                     \
                  memcpy (&b[v], job->bias + m0 + v * LANES, sizeof b[v]);                                         \
              }                                                                                                    \
            int64_t ow = 0;                                                                                        \
            for (int64_t blk = 0; blk < nblocks; blk++)                                                            \
              {                                                                                                    \
                int np = (int) (base + (blk < extra));                                                             \
                V acc[NP][NV];                                                                                     \
                _Pragma ("GCC unroll 16") for (int t = 0; t < NP; t++)                                             \
                  _Pragma ("GCC unroll 2") for (int v = 0; v < NV; v++) acc[t][v] = b[v];                          \
                for (int64_t kh = kh0; kh < kh1; kh++)                                                             \
                  {                                                                                                \
                    const float *xg = xb + (kh * XW + ow * sw) * Cg;                                               \
                    const float *wk[NV];                                                                           \
                    for (int v = 0; v < NV; v++)                                                                   \
                      wk[v] = wrow[v] + kh * KW * Cg * ws;                                                         \
                    /* undilated: the taps' inputs follow each other as their weight rows do, one loop */ \
                    int64_t xs = sw * Cg, kw_step = dw * Cg, kcount = dw == 1 ? 1 : KW, depth = dw == 1 ? KW * Cg : Cg; \
                    {                                                                                              \
                      switch (np)                                                                                  \
                        {                                                                                          \
                          BCAST_CASE (1, SFX, NP) BCAST_CASE (2, SFX, NP) BCAST_CASE (3, SFX, NP)                  \
                          BCAST_CASE (4, SFX, NP) BCAST_CASE (5, SFX, NP) BCAST_CASE (6, SFX, NP)                  \
                          BCAST_CASE (7, SFX, NP) BCAST_CASE (8, SFX, NP) BCAST_CASE (9, SFX, NP)                  \
                          BCAST_CASE (10, SFX, NP) BCAST_CASE (11, SFX, NP) BCAST_CASE (12, SFX, NP)               \
                          BCAST_CASE (13, SFX, NP) BCAST_CASE (14, SFX, NP)                                        \
                        }                                                                                          \
                    }                                                                                              \
                  }                                                                                                \
                for (int t = 0; t < np; t++)                                                                       \
                  memcpy (yrow + (ow + t) * M + m0, acc[t], sizeof acc[t]);                                        \
                ow += np;                                                                                          \
              }                                                                                                    \
          }                                                                                                        \
        for (int64_t p = 0; p < OW; p++)                                                                           \
          {                                                                                                        \
            if (job->z)                                                                                            \
              add_residual (yrow + p * M + mlo, job->z + (r * OW + p) * M + mlo, mhi - mlo);                       \
            activate (yrow + p * M + mlo, mhi - mlo, job->act);                                                    \
          }                                                                                                        \
      }                                                                                                            \
    g_free (xb);                                                                                                   \
  }

/* 8 lanes (AVX2 or SSE): 1 x 12 and 2 x 6 keep the sums, weights and broadcast in 16 registers */
DEFINE_GROUPED_BCAST (8, vf, 8, 1, 12, SIMD_CLONES, )
DEFINE_GROUPED_BCAST (8x2, vf, 8, 2, 6, SIMD_CLONES, )
#ifdef GROUPED_HAVE_16
/* 16 lanes: 32 registers */
DEFINE_GROUPED_BCAST (16, vf16, 16, 1, 14, GROUPED_AVX512, GROUPED_AVX512)
DEFINE_GROUPED_BCAST (16x2, vf16, 16, 2, 12, GROUPED_AVX512, GROUPED_AVX512)
#endif

/* NhwcConv's W [kH, kW, C/group, M] as the header of Conv's [M, C/group, kH, kW] (dims only), for
 * the shared Conv geometry. */
static OwbTensor
conv_weight_view (const OwbTensor *w)
{
  OwbTensor v = *w;
  v.dims[0] = w->dims[3];
  v.dims[1] = w->dims[2];
  v.dims[2] = w->dims[0];
  v.dims[3] = w->dims[1];
  return v;
}

/* An NHWC copy of the NCHW tensor x. */
static OwbTensor *
nchw_to_nhwc (OwbKernelContext *ctx, const OwbTensor *x, GError **error)
{
  int64_t N = x->dims[0], C = x->dims[1], HW = x->dims[2] * x->dims[3];
  int64_t dims[4] = { N, x->dims[2], x->dims[3], C };
  OwbTensor *t = owb_tensor_new_uninit (OWB_TYPE_FLOAT, 4, dims, NULL);
  if (!t)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "cannot allocate the NHWC copy of X");
      return NULL;
    }
  const float *src = x->data;
  float *dst = t->data;
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t i = 0; i < HW; i++)
        dst[(n * HW + i) * C + c] = src[(n * C + c) * HW + i];
  return t;
}

static gboolean
compute_nhwc_conv (OwbKernelContext *ctx, GError **error)
{
  const NhwcConvParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  const OwbTensor *b = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  const OwbTensor *z = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  OwbTensor *y = ctx->outputs[0];
  if (x->rank != 4 || w->rank != 4 || y->rank != 4 || w->dtype != x->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "X and W must be 4-D tensors of one type");
      return FALSE;
    }
  /* W [kH, kW, C/group, M] viewed as [M, C/group, kH, kW] */
  OwbTensor xv = p->nchw_input ? *x : _owb_cpu_conv_nchw_view (x), yv = _owb_cpu_conv_nchw_view (y);
  OwbTensor wv = conv_weight_view (w);
  OwbCpuConvGeom g;
  if (!_owb_cpu_conv_geometry (ctx, &p->conv, &xv, &wv, &yv, FALSE, &g, error))
    return FALSE;
  if (!_owb_cpu_conv_check_bias (ctx, b, &g, x->dtype, error))
    return FALSE;
  if (z && (!owb_tensor_same_shape (z, y) || z->dtype != y->dtype))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "residual Z must have the output's shape and type");
      return FALSE;
    }
  if (y->nelems == 0)
    return TRUE;
  ConvJob job = { .g = &g, .act = &p->act, .x = x->data, .w = w->data, .bias = b ? b->data : NULL,
                  .z = z ? z->data : NULL, .y = y->data };
  job.P = g.N * g.out_size;
  job.K = g.Cg * g.ksize;
  int threads = _owb_cpu_pool_threads (ctx->pool);
  /* few input and output channels (an RGB stem) or an NCHW X: taps read in place, no im2col matrix */
  if (p->packs && w == p->w && ((g.C <= OWB_DIRECT_CONV_MAX_C && g.M <= OWB_DIRECT_CONV_MAX_M) || p->nchw_input)
      && _owb_direct_conv_suits (&g, p->packs[0]))
    {
      gboolean act = p->act.kind != OWB_CPU_ACT_NONE;
      _owb_direct_conv_run (ctx->pool, p->packs[0], &g, x->data, p->nchw_input, job.bias, job.z, y->data,
                            act ? activate_rows : NULL, act ? &p->act : NULL);
      return TRUE;
    }
  /* every other kernel reads NHWC: an NCHW X is transposed first */
  g_autoptr (OwbTensor) x_nhwc = NULL;
  if (p->nchw_input)
    {
      x_nhwc = nchw_to_nhwc (ctx, x, error);
      if (!x_nhwc)
        return FALSE;
      job.x = x_nhwc->data;
    }
  if (g.Cg == 1 && g.Mg == 1)
    {
      owb_parallel_for (ctx->pool, g.N * g.out[0], 1, depthwise_rows, &job);
      return TRUE;
    }
  if (grouped_direct_suits (&g))
    {
#ifdef GROUPED_HAVE_16
      if (_owb_cpu_dw_avx512_usable () && g.M % 16 == 0)
        {
          owb_parallel_for (ctx->pool, g.N * g.out[0], 1, grouped_rows16, &job);
          return TRUE;
        }
#endif
      owb_parallel_for (ctx->pool, g.N * g.out[0], 1, grouped_rows8, &job);
      return TRUE;
    }
  {
    /* 16 lanes where AVX-512 is there and a vector stays inside a group (not 8 a group); the
     * depthwise switch, so that the tests' 8-lane run reaches the 8-lane kernels too */
    gboolean wide = FALSE;
#ifdef GROUPED_HAVE_16
    wide = _owb_cpu_dw_avx512_usable () && g.Mg % 16 == 0;
#endif
    int nv = grouped_bcast_nv (&g, wide ? 16 : 8);
    if (nv)
      {
        /* few rows (7x7 at the end of a CNN) for the threads: split the channels too */
        int64_t rows = g.N * g.out[0], step = nv * (wide ? 16 : 8), nsteps = g.M / step;
        job.nmblocks = threads > 1 ? MIN (nsteps, MAX (1, (4 * threads + rows - 1) / rows)) : 1;
        job.mblock = (nsteps + job.nmblocks - 1) / job.nmblocks * step;
        job.nmblocks = (g.M + job.mblock - 1) / job.mblock;
        /* the group's 16-wide SGEMM panels hold its weights contiguous */
        job.packs = p->packs && w == p->w && g.group == p->n_packs && _owb_sgemm_packed_k (p->packs[0]) == job.K
                        && _owb_sgemm_packed_n (p->packs[0]) == g.Mg && g.Mg % 16 == 0
                      ? p->packs
                      : NULL;
        OwbParallelFunc fn = nv == 2 ? gbcast_rows8x2 : gbcast_rows8;
#ifdef GROUPED_HAVE_16
        if (wide)
          fn = nv == 2 ? gbcast_rows16x2 : gbcast_rows16;
#endif
        owb_parallel_for (ctx->pool, rows * job.nmblocks, 1, fn, &job);
        return TRUE;
      }
  }
  if (job.P * MAX (g.C, g.M) > INT_MAX)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "convolution is too large for 32-bit BLAS indices");
      return FALSE;
    }
  if (p->winograd && w == p->w && _owb_winograd_suits (&g, _owb_winograd_get_tile (p->winograd), 1) && _owb_winograd_get_c (p->winograd) == g.C
      && _owb_winograd_get_m (p->winograd) == g.M)
    {
      gboolean act = p->act.kind != OWB_CPU_ACT_NONE;
      _owb_winograd_run (ctx->pool, p->winograd, &g, job.x, job.bias, job.z, y->data, act ? activate_rows : NULL,
                         act ? &p->act : NULL);
      return TRUE;
    }
  job.direct = TRUE;
  for (int i = 0; i < 2; i++)
    if (g.k[i] != 1 || g.s[i] != 1 || g.pad[i] != 0 || g.out[i] != g.in[i])
      job.direct = FALSE;
  if (p->packs && w == p->w && g.group == p->n_packs
      && _owb_sgemm_packed_k (p->packs[0]) == job.K && _owb_sgemm_packed_n (p->packs[0]) == g.Mg)
    {
      job.packs = p->packs;
      /* a tile's im2col rows stay in L2; 1x1 tiles are free to be long */
      int64_t max_rows = job.direct ? job.P : MAX (PACKED_COL_BUDGET / MAX (job.K, 1), PACKED_MIN_TILE);
      int split = g.group >= threads ? 1 : threads;
      _owb_sgemm_partition (job.P, g.Mg, job.K, split, max_rows, &job.tile, &job.mblock);
      job.ntiles = (job.P + job.tile - 1) / job.tile;
      job.nmblocks = (g.Mg + job.mblock - 1) / job.mblock;
      owb_parallel_for (ctx->pool, job.ntiles * g.group * job.nmblocks, 1, packed_units, &job);
      return TRUE;
    }
  job.transposed = g.Mg <= TRANSPOSED_MAX_M && job.K >= TRANSPOSED_MIN_K;
  int64_t tile = MAX (OUT_BUDGET / MAX (g.M, 1), MIN_TILE);
  if (!job.direct)
    tile = MIN (tile, MAX (COL_BUDGET / MAX (job.K, 1), MIN_TILE));
  /* two units per thread at least, while tiles stay reasonably tall */
  tile = MIN (tile, MAX ((job.P + 2 * threads - 1) / (2 * threads), MIN_TILE));
  job.tile = MIN (tile, job.P);
  job.ntiles = (job.P + job.tile - 1) / job.tile;
  job.mblock = g.M;
  job.nmblocks = 1;
  /* the small images at the end of a CNN: split the output channels too */
  if (threads > 1 && g.group == 1 && job.ntiles < 2 * threads && g.M >= 64)
    {
      job.nmblocks = MIN ((2 * threads + job.ntiles - 1) / job.ntiles, g.M / 32);
      job.mblock = (g.M + job.nmblocks - 1) / job.nmblocks;
      job.mblock = (job.mblock + 15) / 16 * 16;
      job.nmblocks = (g.M + job.mblock - 1) / job.mblock;
    }
  owb_parallel_for (ctx->pool, job.ntiles * job.nmblocks, 1, conv_units, &job);
  return TRUE;
}

/* ---- pools ---- */

typedef struct {
  OwbCpuConvParams conv;
  gboolean ceil_mode, count_include_pad, is_max;
} PoolParams;

static gboolean
pool_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state, GError **error)
{
  PoolParams *p = g_new0 (PoolParams, 1);
  if (!_owb_cpu_conv_params_parse (node, &p->conv, error))
    {
      g_free (p);
      return FALSE;
    }
  if (p->conv.n_kernel != 2)
    {
      _owb_cpu_node_error (node, error, OWB_ERROR_INVALID_MODEL, "kernel_shape must have 2 values");
      g_free (p);
      return FALSE;
    }
  p->ceil_mode = owb_node_get_int (node, "ceil_mode", 0) != 0;
  p->count_include_pad = owb_node_get_int (node, "count_include_pad", 0) != 0;
  p->is_max = strcmp (node->op_type, "NhwcMaxPool") == 0;
  *state = p;
  return TRUE;
}

typedef struct {
  const PoolParams *p;
  const float *x;
  float *y;
  int64_t N, IH, IW, C, OH, OW, k[2], s[2], d[2], pb[2], pe[2];
} PoolJob;

/* The window of output row r = (n, oh), for the float and the 8-bit kernels: the first input row
 * its taps would read (ih0, before the padding is cut) and the taps [kh0, kh1) inside the image;
 * returns the offset of image n in elements. */
static inline __attribute__ ((always_inline)) int64_t
pool_row_window (const PoolJob *j, int64_t r, int64_t *ih0, int64_t *kh0, int64_t *kh1)
{
  int64_t n = r / j->OH, oh = r % j->OH;
  *ih0 = oh * j->s[0] - j->pb[0];
  _owb_cpu_conv_valid_range (*ih0, j->d[0], j->IH, j->k[0], kh0, kh1);
  return n * j->IH * j->IW * j->C;
}

/* The same across, for output column ow. */
static inline __attribute__ ((always_inline)) void
pool_col_window (const PoolJob *j, int64_t ow, int64_t *iw0, int64_t *kw0, int64_t *kw1)
{
  *iw0 = ow * j->s[1] - j->pb[1];
  _owb_cpu_conv_valid_range (*iw0, j->d[1], j->IW, j->k[1], kw0, kw1);
}

/* One output pixel's channels [c0, c0 + NV * L) over the window's valid taps, in registers: the
 * sum, or the maximum as MaxPool's NCHW kernel takes it (NaN taps skipped, so a window of NaNs
 * gives -inf). */
static inline __attribute__ ((always_inline)) void
pool_vectors (const PoolJob *j, const float *xn, float *yp, int64_t ih0, int64_t iw0, int64_t kh0, int64_t kh1,
              int64_t kw0, int64_t kw1, int64_t c0, float scale, const int NV, const gboolean is_max)
{
  const int64_t C = j->C;
  const vf lowest = (vf){} - INFINITY;
  vf acc[4];
#pragma GCC unroll 4
  for (int v = 0; v < NV; v++)
    acc[v] = is_max ? lowest : (vf){};
  for (int64_t kh = kh0; kh < kh1; kh++)
    for (int64_t kw = kw0; kw < kw1; kw++)
      {
        const float *xp = xn + ((ih0 + kh * j->d[0]) * j->IW + iw0 + kw * j->d[1]) * C + c0;
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++)
          {
            vf x = vload (xp + v * L);
            acc[v] = is_max ? vsel (x > acc[v], x, acc[v]) : acc[v] + x;
          }
      }
#pragma GCC unroll 4
  for (int v = 0; v < NV; v++)
    vstore (yp + c0 + v * L, is_max ? acc[v] : acc[v] * scale);
}

static inline __attribute__ ((always_inline)) void
pool_rows_kind (const PoolJob *j, int64_t begin, int64_t end, const gboolean is_max)
{
  int64_t C = j->C;
  for (int64_t r = begin; r < end; r++)
    {
      int64_t ih0, kh0, kh1;
      const float *xn = j->x + pool_row_window (j, r, &ih0, &kh0, &kh1);
      for (int64_t ow = 0; ow < j->OW; ow++)
        {
          float *yp = j->y + (r * j->OW + ow) * C;
          int64_t iw0, kw0, kw1;
          pool_col_window (j, ow, &iw0, &kw0, &kw1);
          float scale = 1.0f;
          if (!is_max)
            {
              int64_t count;
              if (j->p->count_include_pad)
                {
                  /* taps inside the padded input, as ONNX Runtime counts them (ceil_mode's extra
                   * windows past the end padding are not counted) */
                  int64_t he = MIN (ih0 + (j->k[0] - 1) * j->d[0] + 1, j->IH + j->pe[0]);
                  int64_t we = MIN (iw0 + (j->k[1] - 1) * j->d[1] + 1, j->IW + j->pe[1]);
                  count = ((he - ih0 + j->d[0] - 1) / j->d[0]) * ((we - iw0 + j->d[1] - 1) / j->d[1]);
                }
              else
                count = (kh1 - kh0) * (kw1 - kw0);
              scale = count > 0 ? 1.0f / (float) count : 0.0f;
            }
          int64_t c0 = 0;
          for (; c0 + 4 * L <= C; c0 += 4 * L)
            pool_vectors (j, xn, yp, ih0, iw0, kh0, kh1, kw0, kw1, c0, scale, 4, is_max);
          for (; c0 + L <= C; c0 += L)
            pool_vectors (j, xn, yp, ih0, iw0, kh0, kh1, kw0, kw1, c0, scale, 1, is_max);
          for (; c0 < C; c0++)
            {
              float acc = is_max ? -INFINITY : 0.0f;
              for (int64_t kh = kh0; kh < kh1; kh++)
                for (int64_t kw = kw0; kw < kw1; kw++)
                  {
                    float x = xn[((ih0 + kh * j->d[0]) * j->IW + iw0 + kw * j->d[1]) * C + c0];
                    acc = is_max ? (x > acc ? x : acc) : acc + x;
                  }
              yp[c0] = is_max ? acc : acc * scale;
            }
        }
    }
}

/* NhwcMaxPool of uint8 or int8 (a QDQ model's pool on its bytes, see fuse_qdq_lookup): the
 * maximum byte over the window's valid taps, int8 compared as uint8 after flipping the sign bit;
 * a window with no valid tap gives the type's lowest value. */
typedef struct {
  const PoolJob *j;
  const uint8_t *x;
  uint8_t *y;
  uint8_t flip;
  gboolean vector; /* pool_pixel_8bit_avx512 */
} PoolJob8;

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define POOL8_AVX512 __attribute__ ((target ("avx512f,avx512bw")))
/* One pixel's window, 64 channels a vector (the last masked): vpmaxub over the valid taps, or
 * vpmaxsb for int8, so that no byte is flipped. */
static POOL8_AVX512 void
pool_pixel_8bit_avx512 (const PoolJob *j, const uint8_t *xn, uint8_t *yp, int64_t ih0, int64_t kh0, int64_t kh1,
                        int64_t iw0, int64_t kw0, int64_t kw1, gboolean is_signed)
{
  const int64_t C = j->C;
  const __m512i low = _mm512_set1_epi8 (is_signed ? (char) 0x80 : 0);
  for (int64_t c0 = 0; c0 < C; c0 += 64)
    {
      __mmask64 m = C - c0 >= 64 ? ~(__mmask64) 0 : (((__mmask64) 1 << (C - c0)) - 1);
      __m512i acc = low;
      for (int64_t kh = kh0; kh < kh1; kh++)
        {
          const uint8_t *xr = xn + ((ih0 + kh * j->d[0]) * j->IW + iw0) * C + c0;
          for (int64_t kw = kw0; kw < kw1; kw++)
            {
              __m512i v = _mm512_mask_loadu_epi8 (low, m, xr + kw * j->d[1] * C);
              acc = is_signed ? _mm512_max_epi8 (acc, v) : _mm512_max_epu8 (acc, v);
            }
        }
      _mm512_mask_storeu_epi8 (yp + c0, m, acc);
    }
}
#endif

static void
pool_rows_8bit (int64_t begin, int64_t end, gpointer data)
{
  const PoolJob8 *b = data;
  const PoolJob *j = b->j;
  int64_t C = j->C;
  const uint8_t flip = b->flip;
  for (int64_t r = begin; r < end; r++)
    {
      int64_t ih0, kh0, kh1;
      const uint8_t *xn = b->x + pool_row_window (j, r, &ih0, &kh0, &kh1);
      for (int64_t ow = 0; ow < j->OW; ow++)
        {
          uint8_t *restrict yp = b->y + (r * j->OW + ow) * C;
          int64_t iw0, kw0, kw1;
          pool_col_window (j, ow, &iw0, &kw0, &kw1);
#if defined(__x86_64__) && defined(__GNUC__)
          if (b->vector)
            {
              pool_pixel_8bit_avx512 (j, xn, yp, ih0, kh0, kh1, iw0, kw0, kw1, flip != 0);
              continue;
            }
#endif
          memset (yp, 0, (size_t) C); /* the lowest, flipped */
          for (int64_t kh = kh0; kh < kh1; kh++)
            for (int64_t kw = kw0; kw < kw1; kw++)
              {
                const uint8_t *restrict xp = xn + ((ih0 + kh * j->d[0]) * j->IW + iw0 + kw * j->d[1]) * C;
                for (int64_t c = 0; c < C; c++)
                  {
                    uint8_t v = xp[c] ^ flip;
                    yp[c] = v > yp[c] ? v : yp[c];
                  }
              }
          for (int64_t c = 0; flip && c < C; c++)
            yp[c] ^= flip;
        }
    }
}

/* Units are output rows (n, oh); each pixel's window runs over its channels in vectors. */
SIMD_CLONES static void
pool_rows (int64_t begin, int64_t end, gpointer data)
{
  const PoolJob *j = data;
  if (j->p->is_max)
    pool_rows_kind (j, begin, end, TRUE);
  else
    pool_rows_kind (j, begin, end, FALSE);
}

static gboolean
compute_nhwc_pool (OwbKernelContext *ctx, GError **error)
{
  const PoolParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = ctx->outputs[0];
  if (x->rank != 4 || y->rank != 4 || y->dims[0] != x->dims[0] || y->dims[3] != x->dims[3])
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "X must be a 4-D NHWC tensor");
      return FALSE;
    }
  PoolJob j = { .p = p, .x = x->data, .y = y->data, .N = x->dims[0], .IH = x->dims[1], .IW = x->dims[2],
                .C = x->dims[3], .OH = y->dims[1], .OW = y->dims[2] };
  const OwbCpuConvParams *cp = &p->conv;
  for (int i = 0; i < 2; i++)
    {
      int64_t in = x->dims[1 + i], out = y->dims[1 + i];
      j.k[i] = cp->kernel[i];
      j.s[i] = cp->n_strides ? cp->strides[i] : 1;
      j.d[i] = cp->n_dilations ? cp->dilations[i] : 1;
      int64_t dk = (j.k[i] - 1) * j.d[i] + 1;
      if (cp->auto_pad == OWB_CPU_PAD_SAME_UPPER || cp->auto_pad == OWB_CPU_PAD_SAME_LOWER)
        {
          int64_t total = MAX ((out - 1) * j.s[i] + dk - in, 0);
          j.pb[i] = cp->auto_pad == OWB_CPU_PAD_SAME_UPPER ? total / 2 : total - total / 2;
          j.pe[i] = total - j.pb[i];
        }
      else if (cp->auto_pad == OWB_CPU_PAD_VALID)
        j.pb[i] = j.pe[i] = 0;
      else
        {
          j.pb[i] = cp->n_pads ? cp->pads[i] : 0;
          j.pe[i] = cp->n_pads ? cp->pads[2 + i] : 0;
        }
    }
  if (y->nelems == 0)
    return TRUE;
  if (x->dtype == OWB_TYPE_UINT8 || x->dtype == OWB_TYPE_INT8)
    {
      if (!p->is_max || y->dtype != x->dtype)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "only NhwcMaxPool takes 8-bit X, and Y of its type");
          return FALSE;
        }
      PoolJob8 b = { &j, x->data, y->data, x->dtype == OWB_TYPE_INT8 ? 0x80 : 0,
                     _owb_cpu_has_avx512 () && _owb_qgemm_uses_vnni () };
      owb_parallel_for (ctx->pool, j.N * j.OH, 1, pool_rows_8bit, &b);
      return TRUE;
    }
  owb_parallel_for (ctx->pool, j.N * j.OH, 1, pool_rows, &j);
  return TRUE;
}

typedef struct {
  const float *x;
  float *partial; /* [N * parts, C]: each part's sum over its pixels */
  int64_t HW, C, parts;
} GapJob;

/* Pixels summed at a time, 32 channels in vector registers, before the sums go to the part's row
 * (the block of pixels stays in L1 while its channel blocks are summed). */
#define GAP_PIXELS 64
/* Partial sums of split images kept on the caller's stack up to this many floats. */
#define GAP_STACK_FLOATS 8192

/* Unit u = (image u / parts, part u % parts): the sums over the part's share of the pixels. */
SIMD_CLONES static void
gap_parts (int64_t begin, int64_t end, gpointer data)
{
  const GapJob *j = data;
  int64_t C = j->C, HW = j->HW;
  for (int64_t u = begin; u < end; u++)
    {
      int64_t n = u / j->parts, p = u % j->parts;
      int64_t i0 = HW * p / j->parts, i1 = HW * (p + 1) / j->parts;
      float *acc = j->partial + u * C;
      memset (acc, 0, C * sizeof (float));
      for (int64_t b0 = i0; b0 < i1; b0 += GAP_PIXELS)
        {
          int64_t b1 = MIN (b0 + GAP_PIXELS, i1);
          const float *xb = j->x + (n * HW + b0) * C;
          int64_t c0 = 0;
          for (; c0 + 4 * L <= C; c0 += 4 * L)
            {
              vf s[4] = { 0 };
              for (int64_t i = 0; i < b1 - b0; i++)
                {
                  const float *xp = xb + i * C + c0;
                  _Pragma ("GCC unroll 4") for (int v = 0; v < 4; v++)
                    s[v] += vload (xp + v * L);
                }
              _Pragma ("GCC unroll 4") for (int v = 0; v < 4; v++)
                vstore (acc + c0 + v * L, vload (acc + c0 + v * L) + s[v]);
            }
          /* single vectors (24, 72, 120, 144... channels): four pixels side by side, so that
           * the adds are four independent chains */
          for (; c0 + L <= C; c0 += L)
            {
              vf s[4] = { 0 };
              int64_t i = 0;
              for (; i + 4 <= b1 - b0; i += 4)
                _Pragma ("GCC unroll 4") for (int k = 0; k < 4; k++)
                  s[k] += vload (xb + (i + k) * C + c0);
              for (; i < b1 - b0; i++)
                s[0] += vload (xb + i * C + c0);
              vstore (acc + c0, vload (acc + c0) + ((s[0] + s[1]) + (s[2] + s[3])));
            }
          for (; c0 < C; c0++)
            {
              float t = 0;
              for (int64_t i = 0; i < b1 - b0; i++)
                t += xb[i * C + c0];
              acc[c0] += t;
            }
        }
    }
}

/* [N, H, W, C] -> [N, 1, 1, C]. With fewer images than threads, each image's pixels are split in
 * parts summed side by side (mnasnet and EfficientNet average one image; their squeeze-excite
 * blocks made this a single-threaded pass over a few MiB). */
static gboolean
compute_nhwc_global_average_pool (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = ctx->outputs[0];
  if (x->rank != 4)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "X must be a 4-D NHWC tensor");
      return FALSE;
    }
  if (y->nelems == 0)
    return TRUE;
  int64_t N = x->dims[0], C = x->dims[3];
  GapJob j = { .x = x->data, .HW = x->dims[1] * x->dims[2], .C = C, .parts = 1 };
  int threads = _owb_cpu_pool_threads (ctx->pool);
  if (N < threads && j.HW >= 2 * GAP_PIXELS)
    j.parts = MIN ((threads + N - 1) / N, j.HW / GAP_PIXELS);
  /* one part per image sums straight into Y */
  float stack[GAP_STACK_FLOATS];
  gboolean own = j.parts > 1 && N * j.parts * C > GAP_STACK_FLOATS;
  j.partial = j.parts == 1 ? y->data : own ? g_try_new (float, N * j.parts * C) : stack;
  if (!j.partial)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "cannot allocate the partial sums");
      return FALSE;
    }
  owb_parallel_for (ctx->pool, N * j.parts, 1, gap_parts, &j);
  float inv = j.HW > 0 ? 1.0f / (float) j.HW : NAN;
  float *yp = y->data;
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      {
        float t = 0;
        for (int64_t p = 0; p < j.parts; p++)
          t += j.partial[(n * j.parts + p) * C + c];
        yp[n * C + c] = t * inv;
      }
  if (own)
    g_free (j.partial);
  return TRUE;
}

/* ---- NhwcPointwiseDepthwise ---- */

/* A 1x1 convolution (C -> E channels, its own bias and activation) feeding a depthwise one, run
 * together: the pointwise output rows a band of depthwise output rows needs are computed into a
 * buffer of a few rows, which the depthwise kernel reads while they are in L2, so the expanded
 * tensor (mobile networks' largest: 112x112x64 floats in MobileNetV3) is never written out whole
 * and read back. */

/* The row buffer holds about this many bytes (rows of W x E floats), at least the kernel's height. */
#define PWDW_BUFFER_BYTES (192 * 1024)

typedef struct {
  OwbCpuConvParams conv;        /* the depthwise convolution's attributes */
  OwbCpuActivation act, pw_act; /* the depthwise's and the pointwise's */
  OwbTensor *w1;                /* the pointwise weight the pack is of (a reference) */
  OwbSgemmPacked *pack1;
} PwDwParams;

static void
pwdw_free (gpointer data)
{
  PwDwParams *p = data;
  if (!p)
    return;
  _owb_sgemm_packed_free (p->pack1);
  g_clear_pointer (&p->w1, owb_tensor_unref);
  g_free (p);
}

static gboolean
pwdw_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state, GError **error)
{
  PwDwParams *p = g_new0 (PwDwParams, 1);
  if (!_owb_cpu_conv_params_parse (node, &p->conv, error) || !_owb_cpu_activation_parse (node, &p->act, error)
      || !_owb_cpu_activation_parse_named (node, "pointwise_activation", "pointwise_activation_params", &p->pw_act,
                                           error))
    {
      g_free (p);
      return FALSE;
    }
  const char *name = node->n_inputs > 1 ? node->inputs[1] : "";
  OwbTensor *w1 = name[0] && node->graph ? owb_graph_get_initializer (node->graph, name) : NULL;
  if (w1 && w1->dtype == OWB_TYPE_FLOAT && w1->rank == 4 && w1->dims[0] == 1 && w1->dims[1] == 1 && w1->nelems > 0)
    {
      p->w1 = owb_tensor_ref (w1);
      p->pack1 = _owb_sgemm_pack (w1->dims[2], w1->dims[3], w1->data, w1->dims[3]);
    }
  *state = p;
  return TRUE;
}

typedef struct {
  const OwbCpuConvGeom *g; /* the depthwise convolution's, on the pointwise output [N, H, W, E] */
  const PwDwParams *p;
  const OwbSgemmPacked *pack1;
  const float *x, *b1, *w2, *b2;
  float *y;
  int64_t C, bands;        /* X's channels; output-row bands per image */
  int64_t cap;             /* rows the buffer holds */
  gint failed;             /* atomic: a band could not allocate its buffer */
} PwDwJob;

/* One depthwise output row of the job from pointwise rows at first, rstep apart: the AVX-512 row
 * where `wide`, else the 8-lane one. */
static inline __attribute__ ((always_inline)) void
pwdw_row (const OwbCpuConvGeom *g, const PwDwJob *j, gboolean wide, OwbCpuActivationKind kind, const float *first,
          int64_t rstep, int64_t kh0, int64_t kh1, float *yrow)
{
  if (wide)
    _owb_cpu_dw_row_avx512 (g, j->w2, j->b2, &j->p->act, kind, first, rstep, kh0, kh1, yrow);
  else
    dw_output_row_act (g, j->w2, j->b2, &j->p->act, kind, first, rstep, kh0, kh1, yrow);
}

/* Band u = (image, band): its output rows in order. The buffer holds pointwise rows
 * [lo, lo + filled); when the next output row's window does not fit, the rows it still needs move to
 * the front (a kernel's height less a stride of rows, rarely). */
SIMD_CLONES static void
pwdw_bands (int64_t begin, int64_t end, gpointer data)
{
  PwDwJob *j = data;
  const OwbCpuConvGeom *g = j->g;
  int64_t H = g->in[0], W = g->in[1], E = g->C, OH = g->out[0], OW = g->out[1], KH = g->k[0];
  int64_t row_floats = W * E;
  float *buf = g_try_new (float, j->cap * row_floats);
  if (!buf)
    {
      g_atomic_int_set (&j->failed, 1);
      return;
    }
  OwbSgemmEpilogue ep = { .bias = j->b1 };
  _owb_sgemm_epilogue_set_activation (&ep, &j->p->pw_act, activate_rows);
  gboolean wide = _owb_cpu_dw_avx512_usable ();
  gboolean in_register = wide ? _owb_cpu_dw_avx512_in_register (j->p->act.kind) : dw_in_register (j->p->act.kind);
  OwbCpuActivationKind kind = in_register ? j->p->act.kind : OWB_CPU_ACT_NONE;
  for (int64_t u = begin; u < end; u++)
    {
      int64_t n = u / j->bands, band = u % j->bands;
      int64_t oh0 = OH * band / j->bands, oh1 = OH * (band + 1) / j->bands;
      int64_t lo = 0, filled = 0; /* pointwise rows [lo, lo + filled) are in buf */
      int64_t band_hi = MIN (H, (oh1 - 1) * g->s[0] - g->pad[0] + KH); /* the last row the band reads, + 1 */
      for (int64_t oh = oh0; oh < oh1; oh++)
        {
          int64_t ih0 = oh * g->s[0] - g->pad[0], kh0, kh1;
          _owb_cpu_conv_valid_range (ih0, 1, H, KH, &kh0, &kh1);
          float *yrow = j->y + ((n * OH) + oh) * OW * E;
          if (kh1 <= kh0)
            {
              /* no input row under the window: bias (and activation) alone */
              pwdw_row (g, j, wide, kind, buf, row_floats, 0, 0, yrow);
              if (kind == OWB_CPU_ACT_NONE)
                activate (yrow, OW * E, &j->p->act);
              continue;
            }
          int64_t need_lo = ih0 + kh0, need_hi = ih0 + kh1; /* pointwise rows [need_lo, need_hi) */
          if (filled == 0 || need_lo < lo || need_lo > lo + filled)
            {
              lo = need_lo;
              filled = 0;
            }
          else if (need_hi - lo > j->cap)
            {
              int64_t keep = lo + filled - need_lo;
              memmove (buf, buf + (need_lo - lo) * row_floats, keep * row_floats * sizeof (float));
              lo = need_lo;
              filled = keep;
            }
          /* as many rows as the buffer takes, in one GEMM (its fixed costs are per call) */
          if (need_hi > lo + filled)
            {
              int64_t ih = lo + filled, upto = MAX (need_hi, MIN (lo + j->cap, band_hi));
              _owb_sgemm_packed_run (j->pack1, (upto - ih) * W, j->x + (n * H + ih) * W * j->C, j->C, 0, E,
                                     buf + (ih - lo) * row_floats, E, &ep);
              filled = upto - lo;
            }
          pwdw_row (g, j, wide, kind, buf + (need_lo - lo) * row_floats, row_floats, kh0, kh1, yrow);
          if (kind == OWB_CPU_ACT_NONE)
            activate (yrow, OW * E, &j->p->act);
        }
    }
  g_free (buf);
}

/* NhwcPointwiseDepthwise (X [N, H, W, C], W1 [1, 1, C, E], B1 [E]?, W2 [kH, kW, 1, E], B2 [E]?):
 * Y = act (DepthwiseConv (pointwise_act (Conv1x1 (X, W1) + B1), W2) + B2), all NHWC. */
static gboolean
compute_pwdw (OwbKernelContext *ctx, GError **error)
{
  const PwDwParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0], *w1 = ctx->inputs[1], *w2 = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  const OwbTensor *b1 = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL, *b2 = ctx->n_inputs > 4 ? ctx->inputs[4] : NULL;
  OwbTensor *y = ctx->outputs[0];
  if (!w2 || x->rank != 4 || w1->rank != 4 || w2->rank != 4 || y->rank != 4 || w1->dtype != x->dtype
      || w2->dtype != x->dtype || w1->dims[0] != 1 || w1->dims[1] != 1 || w1->dims[2] != x->dims[3]
      || w2->dims[2] != 1 || w2->dims[3] != w1->dims[3])
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "X [N, H, W, C], W1 [1, 1, C, E] and W2 [kH, kW, 1, E] must agree");
      return FALSE;
    }
  int64_t C = x->dims[3], E = w1->dims[3];
  for (int i = 0; i < 2; i++)
    {
      const OwbTensor *b = i ? b2 : b1;
      if (b && (b->nelems != E || b->dtype != x->dtype))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "bias B%d must be a vector of %" G_GINT64_FORMAT " values",
                                i + 1, E);
          return FALSE;
        }
    }
  /* the depthwise convolution's geometry, on the pointwise output's NCHW view */
  OwbTensor mid = *x;
  mid.dims[3] = E;
  mid.nelems = x->nelems / MAX (C, 1) * E;
  OwbTensor xv = _owb_cpu_conv_nchw_view (&mid), yv = _owb_cpu_conv_nchw_view (y), wv = conv_weight_view (w2);
  OwbCpuConvGeom g;
  if (!_owb_cpu_conv_geometry (ctx, &p->conv, &xv, &wv, &yv, FALSE, &g, error))
    return FALSE;
  if (g.nsp != 2 || g.Cg != 1 || g.Mg != 1 || g.d[0] != 1)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "the second convolution must be a 2-D depthwise one (group = E) without row dilation");
      return FALSE;
    }
  if (y->nelems == 0)
    return TRUE;
  /* W1 fed at run time (not the initializer prepare packed): packed for this run */
  OwbSgemmPacked *own_pack = NULL;
  const OwbSgemmPacked *pack1 = p->pack1;
  if (!pack1 || w1 != p->w1)
    pack1 = own_pack = _owb_sgemm_pack (C, E, w1->data, E);
  int threads = _owb_cpu_pool_threads (ctx->pool);
  int64_t N = x->dims[0], H = x->dims[1], W = x->dims[2], KH = g.k[0];
  PwDwJob job = { .g = &g, .p = p, .pack1 = pack1, .x = x->data, .b1 = b1 ? b1->data : NULL, .w2 = w2->data,
                  .b2 = b2 ? b2->data : NULL, .y = y->data, .C = C };
  /* one band per thread when there are fewer images than threads: each band recomputes the rows
   * it shares with the band before (a kernel's height less a stride) */
  job.bands = N >= threads ? 1 : MIN ((threads + N - 1) / N, g.out[0]);
  int64_t row_bytes = W * E * (int64_t) sizeof (float);
  job.cap = MIN (MAX (KH + g.s[0], PWDW_BUFFER_BYTES / MAX (row_bytes, 1)), H + KH);
  owb_parallel_for (ctx->pool, N * job.bands, 1, pwdw_bands, &job);
  _owb_sgemm_packed_free (own_pack);
  if (g_atomic_int_get (&job.failed))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "cannot allocate the pointwise rows' buffer");
      return FALSE;
    }
  return TRUE;
}

#define FLOAT_ONLY OWB_TYPE_BIT (OWB_TYPE_FLOAT)

/* ---- NhwcQLinearConv ---- */

/* The layout pass makes this op only for a constant 2-D weight with float32 per-tensor x and y
 * parameters, which the integer core runs (cpu-qconv.c); anything else is an error here, as no
 * NCHW reference reads NHWC. */
static gboolean
compute_nhwc_qlinear_conv (OwbKernelContext *ctx, GError **error)
{
  if (_owb_cpu_qconv_run (ctx))
    return TRUE;
  owb_kernel_set_error (ctx, error, OWB_ERROR_UNSUPPORTED_OP,
                        "needs a constant 4-D 8-bit W packed at session creation, float32 scales, per-tensor x and y "
                        "scales and zero points and an int32 bias of one value per output channel");
  return FALSE;
}

#define INT8_ONLY (OWB_TYPE_BIT (OWB_TYPE_UINT8) | OWB_TYPE_BIT (OWB_TYPE_INT8))

const OwbKernelDef _owb_cpu_kernels_layout[] = {
  { "NhwcQLinearConv", OWB_DOMAIN, 1, 0, INT8_ONLY, 0, _owb_cpu_qconv_prepare, _owb_cpu_qconv_free,
    compute_nhwc_qlinear_conv },
  { "NhwcConv", OWB_DOMAIN, 1, 0, FLOAT_ONLY, 0, nhwc_conv_prepare, nhwc_conv_free, compute_nhwc_conv },
  { "NhwcMaxPool", OWB_DOMAIN, 1, 0, FLOAT_ONLY | OWB_TYPE_BIT (OWB_TYPE_UINT8) | OWB_TYPE_BIT (OWB_TYPE_INT8), 0,
    pool_prepare, g_free, compute_nhwc_pool },
  { "NhwcAveragePool", OWB_DOMAIN, 1, 0, FLOAT_ONLY, 0, pool_prepare, g_free, compute_nhwc_pool },
  { "NhwcGlobalAveragePool", OWB_DOMAIN, 1, 0, FLOAT_ONLY, 0, NULL, NULL,
    compute_nhwc_global_average_pool },
  { "NhwcPointwiseDepthwise", OWB_DOMAIN, 1, 0, FLOAT_ONLY, 0, pwdw_prepare, pwdw_free, compute_pwdw },
  { NULL }
};
