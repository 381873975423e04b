/* cpu-direct-conv.c: convolutions whose input has few channels. With C = 3 an im2col row is 27
 * (3x3) or 147 (7x7) values gathered in runs of 3 to 21, and writing then re-reading that matrix
 * cost more than the GEMM on it. Here a register tile of 6 output pixels x 16 output channels walks
 * the packed weights tap by tap and broadcasts each tap's input value from where it lies in X,
 * through a table of offsets, so one loop reads NHWC or NCHW X (the model's own input needs no
 * Transpose first).
 *
 * Taps are ordered (kh, kw, c) like the rows of the packed weight, so the taps of the kernel rows
 * that fall inside X are one contiguous range: rows at the top or bottom border just run a shorter
 * range. Pixels whose taps cross the left or right border run one at a time, kernel row by kernel
 * row, over their valid columns. */
#include "cpu-direct-conv-private.h"
#include "cpu-simd-private.h"

#include <string.h>

/* output pixels of one register tile (6 x 2 accumulators, 2 weight vectors, 1 broadcast) */
#define PIXELS 6
/* tap offsets kept on the caller's stack up to this many taps (a 7x7 RGB stem has 147) */
#define TAPS_ON_STACK 1024

enum { L = 8 };

typedef struct {
  const OwbCpuConvGeom *g;
  const OwbSgemmPacked *w;
  const float *x, *bias, *z;
  float *y;
  const int64_t *off;            /* per tap (kh, kw, c): its element's offset from the pixel's first tap */
  int64_t xs_n, xs_c, xs_h, xs_w; /* element strides of X */
  int64_t ow_lo, ow_hi;          /* output columns whose taps all lie inside X's width */
  OwbSgemmRowsFunc rows_fn;
  gconstpointer rows_data;
} Job;

gboolean
_owb_direct_conv_suits (const OwbCpuConvGeom *g, const OwbSgemmPacked *w)
{
  return g->nsp == 2 && g->group == 1 && _owb_sgemm_packed_k (w) == g->k[0] * g->k[1] * g->C
         && _owb_sgemm_packed_n (w) == g->M;
}

/* Stores R pixels x V vectors of acc (+ z) at y (pixel stride M), keeping ncols columns. */
static inline __attribute__ ((always_inline)) void
store (const int R, const int V, vf acc[][2], const float *z, float *y, int64_t M, int ncols)
{
  _Pragma ("GCC unroll 8") for (int r = 0; r < R; r++)
    {
      if (ncols == V * L)
        {
          _Pragma ("GCC unroll 2") for (int v = 0; v < V; v++)
            vstore (y + r * M + v * L, z ? acc[r][v] + vload (z + r * M + v * L) : acc[r][v]);
          continue;
        }
      float tmp[2 * L];
      _Pragma ("GCC unroll 2") for (int v = 0; v < V; v++)
        vstore (tmp + v * L, acc[r][v]);
      for (int c = 0; c < ncols; c++)
        y[r * M + c] = z ? tmp[c] + z[r * M + c] : tmp[c];
    }
}

/* R consecutive pixels of one output row (the first one's first tap at x[base], the next ones
 * xstep further each) over taps [t0, t1) of a panel V vectors wide. */
static inline __attribute__ ((always_inline)) void
tile (const int R, const int V, const float *x, int64_t base, int64_t xstep, const int64_t *off, int64_t t0,
      int64_t t1, const float *bp, const float *bias, const float *z, float *y, int64_t M, int ncols)
{
  vf acc[PIXELS][2];
  _Pragma ("GCC unroll 8") for (int r = 0; r < R; r++)
    _Pragma ("GCC unroll 2") for (int v = 0; v < V; v++)
      acc[r][v] = vload (bias + v * L);
  for (int64_t t = t0; t < t1; t++)
    {
      const float *xt = x + (base + off[t]);
      const float *wt = bp + t * V * L;
      vf b0 = vload (wt), b1 = V == 2 ? vload (wt + L) : b0;
      _Pragma ("GCC unroll 8") for (int r = 0; r < R; r++)
        {
          float a = xt[r * xstep];
          acc[r][0] += a * b0;
          if (V == 2)
            acc[r][1] += a * b1;
        }
    }
  store (R, V, acc, z, y, M, ncols);
}

/* One pixel whose taps cross X's left or right border: kernel rows [kh0, kh1), columns [kw0, kw1). */
static inline __attribute__ ((always_inline)) void
border_pixel (const int V, const Job *j, int64_t base, int64_t kh0, int64_t kh1, int64_t kw0, int64_t kw1,
              const float *bp, const float *bias, const float *z, float *y, int ncols)
{
  const OwbCpuConvGeom *g = j->g;
  int64_t KW = g->k[1], C = g->C;
  vf acc[1][2];
  acc[0][0] = vload (bias);
  acc[0][1] = V == 2 ? vload (bias + L) : acc[0][0];
  for (int64_t kh = kh0; kh < kh1; kh++)
    for (int64_t t = (kh * KW + kw0) * C; t < (kh * KW + kw1) * C; t++)
      {
        float a = j->x[base + j->off[t]];
        acc[0][0] += a * vload (bp + t * V * L);
        if (V == 2)
          acc[0][1] += a * vload (bp + t * V * L + L);
      }
  store (1, V, acc, z, y, g->M, ncols);
}

#define TILE_CASE(R, V)                                                                                          \
  case (R) * 2 + (V) - 1:                                                                                        \
    tile ((R), (V), j->x, base, xstep, j->off, t0, t1, bp, bias, zp, yp, M, ncols);                            \
    break

/* Where output row `row` reads: its first image row's element offset in X, its valid kernel rows. */
static inline void
row_taps (const Job *j, int64_t row, int64_t *rowbase, int64_t *kh0, int64_t *kh1)
{
  const OwbCpuConvGeom *g = j->g;
  int64_t n = row / g->out[0], ih0 = row % g->out[0] * g->s[0] - g->pad[0];
  _owb_cpu_conv_valid_range (ih0, g->d[0], g->in[0], g->k[0], kh0, kh1);
  *rowbase = n * j->xs_n + ih0 * j->xs_h;
}

/* Output row `row`, the columns of panel jp, in 8-lane vectors. */
static inline __attribute__ ((always_inline)) void
panel_row (const Job *j, int64_t row, int64_t jp)
{
  const OwbCpuConvGeom *g = j->g;
  int64_t OW = g->out[1], IW = g->in[1], KW = g->k[1], C = g->C, M = g->M, xstep = g->s[1] * j->xs_w;
  int64_t rowbase, kh0, kh1;
  row_taps (j, row, &rowbase, &kh0, &kh1);
  int64_t t0 = kh0 * KW * C, t1 = kh1 * KW * C;
  float *yrow = j->y + row * OW * M;
  const float *zrow = j->z ? j->z + row * OW * M : NULL;
  int width;
  const float *bp = _owb_sgemm_packed_panel (j->w, jp, &width);
  int64_t j0 = jp * 16;
  int ncols = (int) MIN (width, M - j0), V = width / L;
  float bias[2 * L] = { 0 };
  if (j->bias)
    memcpy (bias, j->bias + j0, ncols * sizeof (float));
  for (int64_t ow = 0; ow < OW;)
    {
      int64_t iw0 = ow * g->s[1] - g->pad[1], base = rowbase + iw0 * j->xs_w;
      float *yp = yrow + ow * M + j0;
      const float *zp = zrow ? zrow + ow * M + j0 : NULL;
      if (ow < j->ow_lo || ow >= j->ow_hi)
        {
          int64_t kw0, kw1;
          _owb_cpu_conv_valid_range (iw0, g->d[1], IW, KW, &kw0, &kw1);
          if (V == 2)
            border_pixel (2, j, base, kh0, kh1, kw0, kw1, bp, bias, zp, yp, ncols);
          else
            border_pixel (1, j, base, kh0, kh1, kw0, kw1, bp, bias, zp, yp, ncols);
          ow++;
          continue;
        }
      int R = (int) MIN (PIXELS, j->ow_hi - ow);
      switch (R * 2 + V - 1)
        {
          TILE_CASE (1, 1);
          TILE_CASE (1, 2);
          TILE_CASE (2, 1);
          TILE_CASE (2, 2);
          TILE_CASE (3, 1);
          TILE_CASE (3, 2);
          TILE_CASE (4, 1);
          TILE_CASE (4, 2);
          TILE_CASE (5, 1);
          TILE_CASE (5, 2);
          TILE_CASE (6, 1);
          TILE_CASE (6, 2);
        default:
          g_assert_not_reached ();
        }
      ow += R;
    }
}

SIMD_CLONES static void
direct_rows (int64_t begin, int64_t end, gpointer data)
{
  const Job *j = data;
  int64_t npanels = (j->g->M + 15) / 16;
  for (int64_t row = begin; row < end; row++)
    {
      for (int64_t jp = 0; jp < npanels; jp++)
        panel_row (j, row, jp);
      if (j->rows_fn)
        j->rows_fn (j->y + row * j->g->out[1] * j->g->M, j->g->out[1], j->g->M, j->g->M, j->rows_data);
    }
}

/* ---- AVX-512 ----
 * A tile is R pixels x P whole 16-wide panels, one zmm per panel: up to 6 x 4 (64 output
 * channels: four weight loads and six broadcasts per 24 FMAs) or 12 x 2 and 12 x 1. The 8-lane
 * tile above holds 6 x 16 channels. An 8-wide last panel runs the 8-lane code. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "cpu-avx512-private.h"
#define HAVE_AVX512_CODE 1
#define AI OWB_AVX512_INLINE

/* R pixels x P panels (the last panel's columns under mask m) over taps [t0, t1). base, xstep,
 * off as in tile; bias and z at the first panel's column 0 (either may be NULL). */
AI void
tile512 (const int R, const int P, const Job *j, int64_t base, int64_t xstep, int64_t t0, int64_t t1,
         const float *bp, int64_t pstride, const float *bias, const float *z, float *y, __mmask16 m)
{
  const int64_t M = j->g->M;
  const int64_t *off = j->off;
  const float *x = j->x;
  __m512 acc[12][4];
#pragma GCC unroll 4
  for (int p = 0; p < P; p++)
    {
      __mmask16 mp = p == P - 1 ? m : 0xffff;
      __m512 b = bias ? _mm512_maskz_loadu_ps (mp, bias + p * 16) : _mm512_setzero_ps ();
#pragma GCC unroll 12
      for (int r = 0; r < R; r++)
        acc[r][p] = b;
    }
  for (int64_t t = t0; t < t1; t++)
    {
      const float *xt = x + (base + off[t]);
      __m512 w[4];
#pragma GCC unroll 4
      for (int p = 0; p < P; p++)
        w[p] = _mm512_load_ps (bp + p * pstride + t * 16);
#pragma GCC unroll 12
      for (int r = 0; r < R; r++)
        {
          __m512 a = _mm512_set1_ps (xt[r * xstep]);
#pragma GCC unroll 4
          for (int p = 0; p < P; p++)
            acc[r][p] = _mm512_fmadd_ps (a, w[p], acc[r][p]);
        }
    }
#pragma GCC unroll 12
  for (int r = 0; r < R; r++)
#pragma GCC unroll 4
    for (int p = 0; p < P; p++)
      {
        __mmask16 mp = p == P - 1 ? m : 0xffff;
        __m512 v = acc[r][p];
        if (z)
          v = _mm512_add_ps (v, _mm512_maskz_loadu_ps (mp, z + r * M + p * 16));
        _mm512_mask_storeu_ps (y + r * M + p * 16, mp, v);
      }
}

/* One pixel whose taps cross X's left or right border, P panels: kernel rows [kh0, kh1), columns
 * [kw0, kw1). */
AI void
border512 (const int P, const Job *j, int64_t base, int64_t kh0, int64_t kh1, int64_t kw0, int64_t kw1,
           const float *bp, int64_t pstride, const float *bias, const float *z, float *y, __mmask16 m)
{
  const int64_t KW = j->g->k[1], C = j->g->C;
  __m512 acc[4];
#pragma GCC unroll 4
  for (int p = 0; p < P; p++)
    acc[p] = bias ? _mm512_maskz_loadu_ps (p == P - 1 ? m : 0xffff, bias + p * 16) : _mm512_setzero_ps ();
  for (int64_t kh = kh0; kh < kh1; kh++)
    for (int64_t t = (kh * KW + kw0) * C; t < (kh * KW + kw1) * C; t++)
      {
        __m512 a = _mm512_set1_ps (j->x[base + j->off[t]]);
#pragma GCC unroll 4
        for (int p = 0; p < P; p++)
          acc[p] = _mm512_fmadd_ps (a, _mm512_load_ps (bp + p * pstride + t * 16), acc[p]);
      }
#pragma GCC unroll 4
  for (int p = 0; p < P; p++)
    {
      __mmask16 mp = p == P - 1 ? m : 0xffff;
      __m512 v = acc[p];
      if (z)
        v = _mm512_add_ps (v, _mm512_maskz_loadu_ps (mp, z + p * 16));
      _mm512_mask_storeu_ps (y + p * 16, mp, v);
    }
}

/* Output row `row`, panels [jp, jp + P) (all 16 wide). */
AI void
panels_row512 (const int P, const Job *j, int64_t row, int64_t jp)
{
  const OwbCpuConvGeom *g = j->g;
  const int RMAX = P == 4 ? 6 : 12;
  int64_t OW = g->out[1], IW = g->in[1], KW = g->k[1], C = g->C, M = g->M, xstep = g->s[1] * j->xs_w;
  int64_t rowbase, kh0, kh1;
  row_taps (j, row, &rowbase, &kh0, &kh1);
  int64_t t0 = kh0 * KW * C, t1 = kh1 * KW * C;
  int width;
  const float *bp = _owb_sgemm_packed_panel (j->w, jp, &width);
  int64_t pstride = 16 * _owb_sgemm_packed_k (j->w); /* floats from one panel to the next */
  int64_t j0 = jp * 16, left = M - (j0 + (P - 1) * 16);
  __mmask16 m = left >= 16 ? 0xffff : (__mmask16) ((1u << left) - 1);
  const float *bias = j->bias ? j->bias + j0 : NULL;
  float *yrow = j->y + row * OW * M + j0;
  const float *zrow = j->z ? j->z + row * OW * M + j0 : NULL;
  for (int64_t ow = 0; ow < OW;)
    {
      int64_t iw0 = ow * g->s[1] - g->pad[1], base = rowbase + iw0 * j->xs_w;
      float *yp = yrow + ow * M;
      const float *zp = zrow ? zrow + ow * M : NULL;
      if (ow < j->ow_lo || ow >= j->ow_hi)
        {
          int64_t kw0, kw1;
          _owb_cpu_conv_valid_range (iw0, g->d[1], IW, KW, &kw0, &kw1);
          border512 (P, j, base, kh0, kh1, kw0, kw1, bp, pstride, bias, zp, yp, m);
          ow++;
          continue;
        }
      int R = (int) MIN (RMAX, j->ow_hi - ow);
      switch (R)
        {
#define TILE512(N)                                                                                       \
  case N:                                                                                                \
    tile512 (N, P, j, base, xstep, t0, t1, bp, pstride, bias, zp, yp, m);                                \
    break;
          TILE512 (1) TILE512 (2) TILE512 (3) TILE512 (4) TILE512 (5) TILE512 (6)
        default:
          if (RMAX > 6)
            switch (R)
              {
                TILE512 (7) TILE512 (8) TILE512 (9) TILE512 (10) TILE512 (11)
              default:
                tile512 (RMAX, P, j, base, xstep, t0, t1, bp, pstride, bias, zp, yp, m);
                break;
              }
          break;
#undef TILE512
        }
      ow += R;
    }
}

static OWB_AVX512 void
direct_rows_avx512 (int64_t begin, int64_t end, gpointer data)
{
  const Job *j = data;
  int64_t M = j->g->M, npanels = (M + 15) / 16;
  int width;
  _owb_sgemm_packed_panel (j->w, npanels - 1, &width);
  int64_t full = width == 16 ? npanels : npanels - 1; /* panels 16 wide (an 8-wide last one is not) */
  for (int64_t row = begin; row < end; row++)
    {
      for (int64_t jp = 0; jp < npanels;)
        {
          if (jp + 4 <= full)
            {
              panels_row512 (4, j, row, jp);
              jp += 4;
            }
          else if (jp + 2 <= full)
            {
              panels_row512 (2, j, row, jp);
              jp += 2;
            }
          else if (jp < full)
            {
              panels_row512 (1, j, row, jp);
              jp += 1;
            }
          else
            {
              panel_row (j, row, jp);
              jp += 1;
            }
        }
      if (j->rows_fn)
        j->rows_fn (j->y + row * j->g->out[1] * M, j->g->out[1], M, M, j->rows_data);
    }
}
#endif

void
_owb_direct_conv_run (OwbThreadPool *pool, const OwbSgemmPacked *w, const OwbCpuConvGeom *g, const float *x,
                      gboolean x_nchw, const float *bias, const float *z, float *y, OwbSgemmRowsFunc rows_fn,
                      gconstpointer rows_data)
{
  g_return_if_fail (_owb_direct_conv_suits (g, w));
  int64_t IH = g->in[0], IW = g->in[1], KH = g->k[0], KW = g->k[1], C = g->C;
  Job j = { .g = g, .w = w, .x = x, .bias = bias, .z = z, .y = y, .rows_fn = rows_fn, .rows_data = rows_data };
  j.xs_n = C * IH * IW;
  if (x_nchw)
    {
      j.xs_c = IH * IW;
      j.xs_h = IW;
      j.xs_w = 1;
    }
  else
    {
      j.xs_c = 1;
      j.xs_h = IW * C;
      j.xs_w = C;
    }
  int64_t taps = KH * KW * C;
  int64_t stack_off[TAPS_ON_STACK];
  int64_t *off = taps <= TAPS_ON_STACK ? stack_off : g_new (int64_t, taps);
  for (int64_t kh = 0; kh < KH; kh++)
    for (int64_t kw = 0; kw < KW; kw++)
      for (int64_t c = 0; c < C; c++)
        off[(kh * KW + kw) * C + c] = kh * g->d[0] * j.xs_h + kw * g->d[1] * j.xs_w + c * j.xs_c;
  j.off = off;
  _owb_cpu_conv_valid_range (-g->pad[1], g->s[1], IW - (KW - 1) * g->d[1], g->out[1], &j.ow_lo, &j.ow_hi);
  OwbParallelFunc rows = direct_rows;
#ifdef HAVE_AVX512_CODE
  if (_owb_sgemm_uses_avx512 ())
    rows = direct_rows_avx512;
#endif
  owb_parallel_for (pool, g->N * g->out[0], 1, rows, &j);
  if (off != stack_off)
    g_free (off);
}
