/* layout-deconv.c: the channels-last upsampling kernels: NhwcConvTranspose (domain ai.onnx.workbench)
 * as packed GEMMs of input rows against one kernel row of W each, scattered into NHWC output rows,
 * and the Resize path for [N, H, W, C] tensors whose channels are not resized, which resize.c's
 * Resize calls: every sample then blends whole runs of C contiguous channels. */
#include "../cpu-conv-private.h"
#include "../cpu-sgemm-private.h"

#include <string.h>

/* Output elements a thread should get at least per chunk of rows. */
#define ROW_GRAIN_ELEMS (G_GINT64_CONSTANT (1) << 14)

/* ---- NhwcConvTranspose ---- */

/* W [C, kH, kW, M/group]: for group gi and kernel row kh, the rows c of the group hold kW x M/group
 * contiguous values at a stride of kH kW M/group, packed once as one [C/group, kW M/group] matrix,
 * so that an input row times it gives, per input pixel, the kW taps of that kernel row. */
typedef struct {
  OwbCpuConvParams conv;
  OwbTensor *w; /* the initializer the packs were made from, or NULL */
  int64_t n_packs;
  OwbSgemmPacked **packs; /* [group * kH] */
} DeconvParams;

static OwbSgemmPacked **
pack_weight (const float *w, int64_t C, int64_t KH, int64_t KW, int64_t Mg, int64_t group)
{
  int64_t Cg = C / group;
  OwbSgemmPacked **packs = g_new (OwbSgemmPacked *, group * KH);
  for (int64_t gi = 0; gi < group; gi++)
    for (int64_t kh = 0; kh < KH; kh++)
      packs[gi * KH + kh] = _owb_sgemm_pack (Cg, KW * Mg, w + (gi * Cg * KH + kh) * KW * Mg, KH * KW * Mg);
  return packs;
}

static void
free_packs (OwbSgemmPacked **packs, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    _owb_sgemm_packed_free (packs[i]);
  g_free (packs);
}

static void
deconv_free (gpointer data)
{
  DeconvParams *p = data;
  free_packs (p->packs, p->n_packs);
  if (p->w)
    owb_tensor_unref (p->w);
  g_free (p);
}

static gboolean
deconv_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                GError **error)
{
  DeconvParams *p = g_new0 (DeconvParams, 1);
  if (!_owb_cpu_conv_params_parse (node, &p->conv, error))
    {
      g_free (p);
      return FALSE;
    }
  const char *name = node->n_inputs > 1 ? node->inputs[1] : "";
  OwbTensor *w = name[0] && node->graph ? owb_graph_get_initializer (node->graph, name) : NULL;
  /* a bad group or shape is reported by compute, with the shapes at hand */
  if (w && w->dtype == OWB_TYPE_FLOAT && w->rank == 4 && w->nelems > 0 && p->conv.group >= 1
      && w->dims[0] % p->conv.group == 0)
    {
      p->n_packs = p->conv.group * w->dims[1];
      p->packs = pack_weight (w->data, w->dims[0], w->dims[1], w->dims[2], w->dims[3], p->conv.group);
      p->w = owb_tensor_ref (w);
    }
  *state = p;
  return TRUE;
}

typedef struct {
  const OwbCpuConvGeom *g;
  const float *x, *bias;
  float *y;
  OwbSgemmPacked *const *packs;
  const float *bias_taps; /* bias repeated for the kW taps of a kernel row (direct case) */
} DeconvJob;

/* stride == kernel, no padding or dilation, one group: the taps of distinct input pixels never
 * meet, so input row (n, ih) times kernel row kh is output row ih kH + kh exactly, pixel iw's kW
 * taps side by side at iw kW: the GEMM writes it in place, bias included. Units: (n, ih, kh). */
static void
deconv_direct_rows (int64_t begin, int64_t end, gpointer data)
{
  const DeconvJob *job = data;
  const OwbCpuConvGeom *g = job->g;
  int64_t IW = g->in[1], KH = g->k[0], KW = g->k[1], OW = g->out[1], C = g->C, M = g->M;
  OwbSgemmEpilogue ep = { .bias = job->bias_taps };
  for (int64_t u = begin; u < end; u++)
    {
      int64_t row = u / KH, kh = u % KH; /* row: n IH + ih */
      const float *a = job->x + row * IW * C;
      float *c = job->y + (row * KH + kh) * OW * M;
      _owb_sgemm_packed_run (job->packs[kh], IW, a, C, 0, KW * M, c, KW * M, &ep);
    }
}

/* Any geometry: units are output rows (n, oh), so no two threads write one pixel. Each contributing
 * (input row, kernel row) pair is multiplied once, into tmp, and added tap by tap. */
static void
deconv_general_rows (int64_t begin, int64_t end, gpointer data)
{
  const DeconvJob *job = data;
  const OwbCpuConvGeom *g = job->g;
  int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1], KH = g->k[0], KW = g->k[1];
  int64_t C = g->C, Cg = g->Cg, M = g->M, Mg = g->Mg;
  int64_t sh = g->s[0], sw = g->s[1], dh = g->d[0], dw = g->d[1];
  float *tmp = g_new (float, MAX (IW * KW * Mg, 1));
  for (int64_t u = begin; u < end; u++)
    {
      int64_t n = u / OH, oh = u % OH;
      float *yrow = job->y + u * OW * M;
      if (job->bias)
        for (int64_t ow = 0; ow < OW; ow++)
          memcpy (yrow + ow * M, job->bias, M * sizeof (float));
      else
        memset (yrow, 0, OW * M * sizeof (float));
      for (int64_t kh = 0; kh < KH; kh++)
        {
          int64_t t = oh + g->pad[0] - kh * dh;
          if (t < 0 || t % sh != 0 || t / sh >= IH)
            continue;
          int64_t ih = t / sh;
          for (int64_t gi = 0; gi < g->group; gi++)
            {
              const float *a = job->x + (n * IH + ih) * IW * C + gi * Cg;
              _owb_sgemm_packed_run (job->packs[gi * KH + kh], IW, a, C, 0, KW * Mg, tmp, KW * Mg, NULL);
              for (int64_t kw = 0; kw < KW; kw++)
                {
                  /* input pixels iw with 0 <= iw sw + kw dw - pad < OW */
                  int64_t lo, hi;
                  _owb_cpu_conv_valid_range (kw * dw - g->pad[1], sw, OW, IW, &lo, &hi);
                  for (int64_t iw = lo; iw < hi; iw++)
                    {
                      float *restrict dst = yrow + (iw * sw + kw * dw - g->pad[1]) * M + gi * Mg;
                      const float *restrict src = tmp + (iw * KW + kw) * Mg;
                      for (int64_t m = 0; m < Mg; m++)
                        dst[m] += src[m];
                    }
                }
            }
        }
    }
  g_free (tmp);
}

static gboolean
compute_nhwc_conv_transpose (OwbKernelContext *ctx, GError **error)
{
  const DeconvParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  const OwbTensor *b = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  OwbTensor *y = ctx->outputs[0];
  if (x->rank != 4 || w->rank != 4 || y->rank != 4 || x->dtype != OWB_TYPE_FLOAT || w->dtype != OWB_TYPE_FLOAT)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "X and W must be 4-D float tensors");
      return FALSE;
    }
  /* W [C, kH, kW, M/group] viewed as [C, M/group, kH, kW] */
  OwbTensor xv = _owb_cpu_conv_nchw_view (x), yv = _owb_cpu_conv_nchw_view (y), wv = *w;
  wv.dims[1] = w->dims[3];
  wv.dims[2] = w->dims[1];
  wv.dims[3] = w->dims[2];
  OwbCpuConvGeom g;
  if (!_owb_cpu_conv_geometry (ctx, &p->conv, &xv, &wv, &yv, TRUE, &g, error))
    return FALSE;
  if (g.nsp != 2)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "only 2-D transposed convolutions run channels-last");
      return FALSE;
    }
  if (!_owb_cpu_conv_check_bias (ctx, b, &g, OWB_TYPE_FLOAT, error))
    return FALSE;
  if (y->nelems == 0)
    return TRUE;
  OwbSgemmPacked **packs = p->packs, **own = NULL;
  int64_t n_packs = g.group * g.k[0];
  if (!packs || w != p->w || p->n_packs != n_packs)
    packs = own = pack_weight (w->data, g.C, g.k[0], g.k[1], g.Mg, g.group);

  DeconvJob job = { .g = &g, .x = x->data, .bias = b ? b->data : NULL, .y = y->data, .packs = packs };
  gboolean direct = g.group == 1;
  for (int i = 0; i < 2; i++)
    direct = direct && g.s[i] == g.k[i] && (g.d[i] == 1 || g.k[i] == 1) && g.pad[i] == 0 && g.out[i] == g.in[i] * g.k[i];
  float *bias_taps = NULL;
  if (direct)
    {
      if (job.bias)
        {
          bias_taps = g_new (float, g.k[1] * g.M);
          for (int64_t kw = 0; kw < g.k[1]; kw++)
            memcpy (bias_taps + kw * g.M, job.bias, g.M * sizeof (float));
        }
      job.bias_taps = bias_taps;
      int64_t work = MAX (g.in[1] * g.k[1] * g.M, 1);
      owb_parallel_for (ctx->pool, g.N * g.in[0] * g.k[0], MAX (1, ROW_GRAIN_ELEMS / work), deconv_direct_rows, &job);
    }
  else
    {
      int64_t work = MAX (g.out[1] * g.M, 1);
      owb_parallel_for (ctx->pool, g.N * g.out[0], MAX (1, ROW_GRAIN_ELEMS / work), deconv_general_rows, &job);
    }
  g_free (bias_taps);
  if (own)
    free_packs (own, n_packs);
  return TRUE;
}

/* ---- Resize, channels innermost ---- */

typedef struct {
  const OwbCpuResizeAxis *h, *w;
  int64_t IH, IW, OH, OW, C;
  gsize es;
  const void *x;
  void *y;
  const void *fill; /* one element */
  float fillf;
  gboolean h_first;
} ResizeJob;

static void
nearest_rows (int64_t begin, int64_t end, gpointer data)
{
  const ResizeJob *job = data;
  const OwbCpuResizeAxis *h = job->h, *w = job->w;
  gsize px = job->C * job->es;
  for (int64_t r = begin; r < end; r++)
    {
      int64_t n = r / job->OH, oh = r % job->OH;
      char *dst = (char *) job->y + r * job->OW * px;
      gboolean out_row = h->outside && h->outside[oh];
      int64_t ih = h->index ? h->index[oh] : oh;
      const char *src = (const char *) job->x + (n * job->IH + ih) * job->IW * px;
      if (!out_row && !w->index)
        {
          memcpy (dst, src, job->OW * px);
          continue;
        }
      for (int64_t ow = 0; ow < job->OW; ow++, dst += px)
        {
          if (out_row || (w->outside && w->outside[ow]))
            for (int64_t c = 0; c < job->C; c++)
              memcpy (dst + c * job->es, job->fill, job->es);
          else
            memcpy (dst, src + w->index[ow] * px, px);
        }
    }
}

static void
fill_floats (float *d, float v, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    d[i] = v;
}

/* d = sum of w[t] s[t], as the general kernel's passes sum it: the first tap always, the others
 * when their weight is not zero. */
static inline void
blend (float *restrict d, int n, const double *wt, const float *const *s, int64_t len)
{
  const float w0 = (float) wt[0];
  const float *restrict s0 = s[0];
  for (int64_t j = 0; j < len; j++)
    d[j] = w0 * s0[j];
  for (int t = 1; t < n; t++)
    {
      const float wv = (float) wt[t];
      const float *restrict st = s[t];
      if (wv == 0)
        continue;
      for (int64_t j = 0; j < len; j++)
        d[j] += wv * st[j];
    }
}

#define MAX_TAPS 16

/* One row of the W pass: in [IW, C] -> out [OW, C]. */
static void
resample_w (const ResizeJob *job, const float *in, float *out)
{
  const OwbCpuResizeAxis *w = job->w;
  int64_t C = job->C;
  int n = w->n_taps;
  for (int64_t ow = 0; ow < job->OW; ow++)
    {
      float *d = out + ow * C;
      if (w->outside && w->outside[ow])
        {
          fill_floats (d, job->fillf, C);
          continue;
        }
      const float *s[MAX_TAPS] = { NULL };
      for (int t = 0; t < n; t++)
        s[t] = in + w->index[ow * n + t] * C;
      blend (d, n, w->weight + ow * n, s, C);
    }
}

/* W pass first: each input row resampled along W once per chunk (kept while the next output rows
 * still need it), then output rows blended from those. */
static void
linear_rows_w_first (int64_t begin, int64_t end, gpointer data)
{
  const ResizeJob *job = data;
  const OwbCpuResizeAxis *h = job->h;
  int64_t rowlen = job->OW * job->C;
  int n = h->index ? h->n_taps : 1;
  float *bufs[MAX_TAPS];
  int64_t held[MAX_TAPS];
  for (int t = 0; t < n; t++)
    {
      bufs[t] = job->w->index && h->index ? g_new (float, MAX (rowlen, 1)) : NULL;
      held[t] = -1;
    }
  for (int64_t r = begin; r < end; r++)
    {
      int64_t nb = r / job->OH, oh = r % job->OH;
      float *dst = (float *) job->y + r * rowlen;
      const float *xn = (const float *) job->x + nb * job->IH * job->IW * job->C;
      if (!h->index)
        {
          resample_w (job, xn + oh * job->IW * job->C, dst);
          continue;
        }
      if (h->outside && h->outside[oh])
        {
          fill_floats (dst, job->fillf, rowlen);
          continue;
        }
      const int64_t *idx = h->index + oh * n;
      const float *s[MAX_TAPS] = { NULL };
      for (int t = 0; t < n; t++)
        {
          int64_t key = nb * job->IH + idx[t];
          if (!job->w->index)
            {
              s[t] = xn + idx[t] * job->IW * job->C;
              continue;
            }
          int slot = -1;
          for (int k = 0; k < n && slot < 0; k++)
            if (held[k] == key)
              slot = k;
          if (slot < 0)
            {
              /* a slot whose row this output row does not need */
              for (int k = 0; k < n && slot < 0; k++)
                {
                  gboolean needed = FALSE;
                  for (int q = 0; q < n && !needed; q++)
                    needed = held[k] == nb * job->IH + idx[q];
                  if (!needed)
                    slot = k;
                }
              g_assert (slot >= 0);
              resample_w (job, xn + idx[t] * job->IW * job->C, bufs[slot]);
              held[slot] = key;
            }
          s[t] = bufs[slot];
        }
      blend (dst, n, h->weight + oh * n, s, rowlen);
    }
  for (int t = 0; t < n; t++)
    g_free (bufs[t]);
}

/* H pass first (when H shrinks more): the output row's input rows blended into tmp [IW, C], then
 * resampled along W. */
static void
linear_rows_h_first (int64_t begin, int64_t end, gpointer data)
{
  const ResizeJob *job = data;
  const OwbCpuResizeAxis *h = job->h;
  int64_t inlen = job->IW * job->C;
  int n = h->n_taps;
  float *tmp = g_new (float, MAX (inlen, 1));
  for (int64_t r = begin; r < end; r++)
    {
      int64_t nb = r / job->OH, oh = r % job->OH;
      const float *xn = (const float *) job->x + nb * job->IH * inlen;
      if (h->outside && h->outside[oh])
        fill_floats (tmp, job->fillf, inlen);
      else
        {
          const float *s[MAX_TAPS] = { NULL };
          for (int t = 0; t < n; t++)
            s[t] = xn + h->index[oh * n + t] * inlen;
          blend (tmp, n, h->weight + oh * n, s, inlen);
        }
      resample_w (job, tmp, (float *) job->y + r * job->OW * job->C);
    }
  g_free (tmp);
}

gboolean
_owb_cpu_resize_channels_last (OwbThreadPool *pool, const OwbTensor *x, OwbTensor *y, gboolean nearest,
                               const OwbCpuResizeAxis *h, const OwbCpuResizeAxis *w, gboolean h_first,
                               const void *fill, double fill_value)
{
  if (x->rank != 4 || y->rank != 4 || x->dims[0] != y->dims[0] || x->dims[3] != y->dims[3] || (!h->index && !w->index))
    return FALSE;
  gsize es = owb_data_type_size (x->dtype);
  if (nearest)
    {
      if (es != 1 && es != 2 && es != 4 && es != 8)
        return FALSE;
    }
  else if (x->dtype != OWB_TYPE_FLOAT || x->dims[3] < 2 || (h->index && (h->n_taps > MAX_TAPS || !h->weight))
           || (w->index && (w->n_taps > MAX_TAPS || !w->weight)))
    return FALSE;
  ResizeJob job = { h, w, x->dims[1], x->dims[2], y->dims[1], y->dims[2], x->dims[3], es, x->data, y->data, fill,
                    (float) fill_value, h_first && h->index && w->index };
  int64_t rows = y->dims[0] * job.OH, grain = MAX (1, ROW_GRAIN_ELEMS / MAX (job.OW * job.C, 1));
  if (y->nelems == 0)
    return TRUE;
  if (nearest)
    owb_parallel_for (pool, rows, grain, nearest_rows, &job);
  else
    owb_parallel_for (pool, rows, grain, job.h_first ? linear_rows_h_first : linear_rows_w_first, &job);
  return TRUE;
}

const OwbKernelDef _owb_cpu_kernels_layout_deconv[] = {
  { "NhwcConvTranspose", OWB_DOMAIN, 1, 0, OWB_TYPE_BIT (OWB_TYPE_FLOAT), 0, deconv_prepare, deconv_free,
    compute_nhwc_conv_transpose },
  { NULL }
};
