/* cpu-winograd.c: Winograd's minimal filtering F(m x m, 3x3), m = 2 or 4, for channels-last float
 * convolutions (Lavin and Gray). Each m x m output tile reads an a x a input patch d (a = m + 2);
 * with the weight transformed once to U = G g G^T (a x a per input/output channel pair) the tile is
 * A^T [U (.) B^T d B] A, so the work is a^2 GEMMs of [tiles x C] by [C x M], one per position of the
 * transform, in place of one GEMM nine taps deep: 2.25 times fewer multiply-adds for m = 2, 4 times
 * for m = 4. F(2x2) only adds, subtracts and halves (exact); F(4x4) scales by small integers and
 * 1/4, 1/6, 1/24, which costs a few units of rounding (within 1e-5 relative on our tests), and
 * keeps 36/9 = 4 times the weight where F(2x2) keeps 16/9.
 *
 * Tiles are taken in blocks whose transformed inputs and GEMM outputs stay in cache; blocks are
 * split over the pool, and each writes its own output pixels. */
#include "cpu-winograd-private.h"
#include "cpu-simd-private.h"

#include <string.h>

/* Bytes of one block's transformed inputs and GEMM outputs (a^2 x tiles x (C + M) floats): a
 * thread's share of L3, so that the weights (a^2 x C x M) are read once per block from there. */
#define BLOCK_BYTES (2 << 20)
#define MIN_BLOCK 24
#define MAX_BLOCK 252

#define MAX_XI 36

struct _OwbWinograd {
  int64_t C, M;
  int m, a; /* output tile m x m, input patch a x a */
  OwbSgemmPacked *u[MAX_XI];
};

/* 8 channels at a time in 32-byte GCC vectors (compiled for AVX2 and for the baseline by
 * target_clones); the last 1..7 channels go through the same code on partial loads and stores. */

static inline __attribute__ ((always_inline)) vf
load (const float *p, int n)
{
  vf v = { 0 };
  memcpy (&v, p, n * sizeof (float));
  return v;
}

static inline __attribute__ ((always_inline)) void
store (float *p, vf v, int n)
{
  memcpy (p, &v, n * sizeof (float));
}

/* u = G g for one column of 3 weights (8 output channels at a time): F(2x2) G = [1 0 0; 1/2 1/2 1/2;
 * 1/2 -1/2 1/2; 0 0 1], F(4x4) G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6;
 * 1/24 -1/12 1/6; 0 0 1]. Divisions as written, so that every lane rounds as the scalar formula. */
static inline __attribute__ ((always_inline)) void
weight_column (int m, vf g0, vf g1, vf g2, vf *u)
{
  if (m == 2)
    {
      u[0] = g0;
      u[1] = 0.5f * (g0 + g1 + g2);
      u[2] = 0.5f * (g0 - g1 + g2);
      u[3] = g2;
    }
  else
    {
      u[0] = g0 / 4;
      u[1] = -(g0 + g1 + g2) / 6;
      u[2] = -(g0 - g1 + g2) / 6;
      u[3] = g0 / 24 + g1 / 12 + g2 / 6;
      u[4] = g0 / 24 - g1 / 12 + g2 / 6;
      u[5] = g2;
    }
}

/* U = G g G^T for every (c, m) pair of w [3, 3, C, M] into u [a * a][C * M]: contiguous runs of
 * output channels, vectors of 8 (the scalar form, 45 divisions per pair, was most of unet_small's
 * session creation). */
SIMD_CLONES static void
transform_weights (int64_t C, int64_t M, const float *w, int tile, float *u)
{
  const int a = tile + 2;
  const int64_t cm = C * M;
  for (int64_t c = 0; c < C; c++)
    for (int64_t m = 0; m < M; m += 8)
      {
        int n = (int) MIN (8, M - m);
        vf g[9], t[6][3], r[6];
        for (int k = 0; k < 9; k++)
          g[k] = load (w + k * cm + c * M + m, n);
        /* t = G g (a x 3), then each row of U = t G^T */
        for (int j = 0; j < 3; j++)
          {
            vf col[6];
            weight_column (tile, g[j], g[3 + j], g[6 + j], col);
            for (int i = 0; i < a; i++)
              t[i][j] = col[i];
          }
        for (int i = 0; i < a; i++)
          {
            weight_column (tile, t[i][0], t[i][1], t[i][2], r);
            for (int j = 0; j < a; j++)
              store (u + (i * a + j) * cm + c * M + m, r[j], n);
          }
      }
}

OwbWinograd *
_owb_winograd_new (int64_t C, int64_t M, const float *w, int tile)
{
  g_return_val_if_fail (tile == 2 || tile == 4, NULL);
  OwbWinograd *wg = g_new0 (OwbWinograd, 1);
  wg->C = C;
  wg->M = M;
  wg->m = tile;
  wg->a = tile + 2;
  const int a = wg->a;
  const int64_t cm = C * M;
  float *u = g_new (float, a * a * cm);
  transform_weights (C, M, w, tile, u);
  for (int xi = 0; xi < a * a; xi++)
    wg->u[xi] = _owb_sgemm_pack (C, M, u + xi * cm, M);
  g_free (u);
  return wg;
}

void
_owb_winograd_free (OwbWinograd *wg)
{
  if (!wg)
    return;
  for (int xi = 0; xi < wg->a * wg->a; xi++)
    _owb_sgemm_packed_free (wg->u[xi]);
  g_free (wg);
}

int64_t
_owb_winograd_get_c (const OwbWinograd *wg)
{
  return wg->C;
}

int64_t
_owb_winograd_get_m (const OwbWinograd *wg)
{
  return wg->M;
}

int
_owb_winograd_get_tile (const OwbWinograd *wg)
{
  return wg->m;
}

gboolean
_owb_winograd_suits (const OwbCpuConvGeom *g, int tile, int64_t min_tiles)
{
  if (g->nsp != 2 || g->group != 1)
    return FALSE;
  for (int i = 0; i < 2; i++)
    if (g->k[i] != 3 || g->s[i] != 1 || g->d[i] != 1 || g->out[i] < 1)
      return FALSE;
  int64_t tiles = g->N * ((g->out[0] + tile - 1) / tile) * ((g->out[1] + tile - 1) / tile);
  return tiles >= min_tiles;
}

/* V = B^T d B for n channels from c: src[4 i + j] is the input pixel at patch row i, column j (a
 * row of zeros outside the image), dst[xi] the tile's row of V_xi.
 * B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]. */
#define PATCH2(i, j) (grid ? load (x0 + (i) * rs + (j) * cs + c, n) : load (src[(i) * 4 + (j)] + c, n))

static inline __attribute__ ((always_inline)) void
input_channels (const float *const *src, const float *x0, int64_t rs, int64_t cs, float *d, int64_t ds,
                const int grid, int64_t c, int n)
{
  vf s[4][4];
#pragma GCC unroll 4
  for (int j = 0; j < 4; j++)
    {
      vf d0 = PATCH2 (0, j), d1 = PATCH2 (1, j), d2 = PATCH2 (2, j), d3 = PATCH2 (3, j);
      s[0][j] = d0 - d2;
      s[1][j] = d1 + d2;
      s[2][j] = d2 - d1;
      s[3][j] = d1 - d3;
    }
#pragma GCC unroll 4
  for (int a = 0; a < 4; a++)
    {
      store (d + (a * 4 + 0) * ds + c, s[a][0] - s[a][2], n);
      store (d + (a * 4 + 1) * ds + c, s[a][1] + s[a][2], n);
      store (d + (a * 4 + 2) * ds + c, s[a][2] - s[a][1], n);
      store (d + (a * 4 + 3) * ds + c, s[a][1] - s[a][3], n);
    }
}

#undef PATCH2

/* Y = A^T m A for n channels from m0, + bias + z: src[xi] the tile's row of the GEMM output xi,
 * dst[2 i + j] the output pixel at tile row i, column j (NULL outside the image), z likewise (or
 * NULL). A^T = [1 1 1 0; 0 1 -1 -1]. */
static inline __attribute__ ((always_inline)) void
output_channels (const float *s0, int64_t ss, float *const *dst, const float *const *z, float *y0, const float *z0,
                 int64_t rs, int64_t cs, const float *bias, const int grid, int64_t m0, int n)
{
  vf r[2][4];
#pragma GCC unroll 4
  for (int b = 0; b < 4; b++)
    {
      vf m0v = load (s0 + b * ss + m0, n), m1 = load (s0 + (4 + b) * ss + m0, n),
         m2 = load (s0 + (8 + b) * ss + m0, n), m3 = load (s0 + (12 + b) * ss + m0, n);
      r[0][b] = m0v + m1 + m2;
      r[1][b] = m1 - m2 - m3;
    }
  vf add = bias ? load (bias + m0, n) : (vf){ 0 };
#pragma GCC unroll 2
  for (int i = 0; i < 2; i++)
    {
      vf y[2] = { r[i][0] + r[i][1] + r[i][2] + add, r[i][1] - r[i][2] - r[i][3] + add };
#pragma GCC unroll 2
      for (int j = 0; j < 2; j++)
        {
          if (grid)
            store (y0 + i * rs + j * cs + m0, z0 ? y[j] + load (z0 + i * rs + j * cs + m0, n) : y[j], n);
          else if (dst[2 * i + j])
            store (dst[2 * i + j] + m0, z ? y[j] + load (z[2 * i + j] + m0, n) : y[j], n);
        }
    }
}

/* F(4x4): V = B^T d B over a 6x6 patch, B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0;
 * 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1], one dimension at a time. */
static inline __attribute__ ((always_inline)) void
input_1d_4 (vf d0, vf d1, vf d2, vf d3, vf d4, vf d5, vf *t)
{
  vf four = d0 - d0 + 4.0f, five = four + 1.0f, two = four - 2.0f;
  t[0] = four * d0 - five * d2 + d4;
  t[1] = d3 + d4 - four * (d1 + d2);
  t[2] = d4 - d3 + four * (d1 - d2);
  t[3] = d4 - d2 + two * (d3 - d1);
  t[4] = d4 - d2 - two * (d3 - d1);
  t[5] = four * d1 - five * d3 + d5;
}

/* The patch pixel (i, j): from the pointer array (a tile on the image border, zeros outside), or, for
 * a tile inside the image (grid), at x0 + i rs + j cs: addresses computed, not 36 pointers loaded. */
#define PATCH(i, j) (grid ? load (x0 + (i) * rs + (j) * cs + c, n) : load (src[(i) * 6 + (j)] + c, n))

static inline __attribute__ ((always_inline)) void
input_channels_4 (const float *const *src, const float *x0, int64_t rs, int64_t cs, float *d, int64_t ds,
                  const int grid, int64_t c, int n)
{
  vf s[6][6];
#pragma GCC unroll 6
  for (int j = 0; j < 6; j++)
    {
      vf t[6];
      input_1d_4 (PATCH (0, j), PATCH (1, j), PATCH (2, j), PATCH (3, j), PATCH (4, j), PATCH (5, j), t);
#pragma GCC unroll 6
      for (int i = 0; i < 6; i++)
        s[i][j] = t[i];
    }
#pragma GCC unroll 6
  for (int i = 0; i < 6; i++)
    {
      vf t[6];
      input_1d_4 (s[i][0], s[i][1], s[i][2], s[i][3], s[i][4], s[i][5], t);
#pragma GCC unroll 6
      for (int j = 0; j < 6; j++)
        store (d + (i * 6 + j) * ds + c, t[j], n);
    }
}

#undef PATCH

/* F(4x4): Y = A^T m A, A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]. */
static inline __attribute__ ((always_inline)) void
output_1d_4 (vf m0, vf m1, vf m2, vf m3, vf m4, vf m5, vf *y)
{
  vf p = m1 + m2, q = m1 - m2, r = m3 + m4, s = m3 - m4;
  y[0] = m0 + p + r;
  y[1] = q + (s + s);
  y[2] = p + 4.0f * r;
  y[3] = q + 8.0f * s + m5;
}

/* Output pixel (i, j) of the tile and its residual: at y0 + i rs + j cs for a tile inside the image
 * (grid), else through the pointer arrays (NULL outside the image). */
static inline __attribute__ ((always_inline)) void
output_channels_4 (const float *s0, int64_t ss, float *const *dst, const float *const *z, float *y0,
                   const float *z0, int64_t rs, int64_t cs, const float *bias, const int grid, int64_t m0, int n)
{
  vf r[4][6];
#pragma GCC unroll 6
  for (int b = 0; b < 6; b++)
    {
      vf y[4];
      output_1d_4 (load (s0 + b * ss + m0, n), load (s0 + (6 + b) * ss + m0, n), load (s0 + (12 + b) * ss + m0, n),
                   load (s0 + (18 + b) * ss + m0, n), load (s0 + (24 + b) * ss + m0, n),
                   load (s0 + (30 + b) * ss + m0, n), y);
#pragma GCC unroll 4
      for (int i = 0; i < 4; i++)
        r[i][b] = y[i];
    }
  vf add = bias ? load (bias + m0, n) : (vf){ 0 };
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++)
    {
      vf y[4];
      output_1d_4 (r[i][0], r[i][1], r[i][2], r[i][3], r[i][4], r[i][5], y);
#pragma GCC unroll 4
      for (int j = 0; j < 4; j++)
        {
          vf out = y[j] + add;
          if (grid)
            store (y0 + i * rs + j * cs + m0, z0 ? out + load (z0 + i * rs + j * cs + m0, n) : out, n);
          else if (dst[4 * i + j])
            store (dst[4 * i + j] + m0, z ? out + load (z[4 * i + j] + m0, n) : out, n);
        }
    }
}

/* FN (..., c, n) over C channels: 8 at a time (n a constant for the compiler), then the rest. */
#define CHANNELS(FN, C, ...)                                                                                       \
  do                                                                                                               \
    {                                                                                                              \
      int64_t c_ = 0;                                                                                              \
      for (; c_ + 8 <= (C); c_ += 8)                                                                               \
        FN (__VA_ARGS__, c_, 8);                                                                                   \
      if (c_ < (C))                                                                                                \
        FN (__VA_ARGS__, c_, (int) ((C) - c_));                                                                    \
    }                                                                                                              \
  while (0)

/* V for one tile of F(tm x tm): rows xi of V at d + xi * C (contiguous per tile); x0 non-NULL for a
 * tile inside the image, whose pixel (i, j) is at x0 + i rs + j C (addresses computed); src, the
 * patch's pixel pointers, otherwise. The pointer array is copied to a local: with
 * -fno-strict-aliasing every float store could otherwise rewrite the caller's array, and each
 * pointer would be reloaded after each store. */
SIMD_CLONES static void
input_tile (int tm, const float *const *src_in, const float *x0, int64_t rs, float *d, int64_t C)
{
  const float *src[MAX_XI];
  if (!x0)
    memcpy (src, src_in, (tm + 2) * (tm + 2) * sizeof *src);
  if (tm == 2 && x0)
    CHANNELS (input_channels, C, NULL, x0, rs, C, d, C, 1);
  else if (tm == 2)
    CHANNELS (input_channels, C, src, NULL, 0, 0, d, C, 0);
  else if (x0)
    CHANNELS (input_channels_4, C, NULL, x0, rs, C, d, C, 1);
  else
    CHANNELS (input_channels_4, C, src, NULL, 0, 0, d, C, 0);
}

/* Y for one tile of F(tm x tm) from its (tm + 2)^2 GEMM output rows at s0 + xi * M: into y0
 * (+ i rs + j M, residual at z0 likewise) for a tile inside the image, else through dst_in and z_in
 * (copied to locals, as in input_tile). */
SIMD_CLONES static void
output_tile (int tm, const float *s0, float *const *dst_in, const float *const *z_in, float *y0, const float *z0,
             int64_t rs, const float *bias, int64_t M)
{
  const float *zs[16], *const *z = z_in ? zs : NULL;
  float *dst[16];
  if (!y0)
    {
      memcpy (dst, dst_in, tm * tm * sizeof *dst);
      if (z_in)
        memcpy (zs, z_in, tm * tm * sizeof *zs);
    }
  if (tm == 2 && y0)
    CHANNELS (output_channels, M, s0, M, NULL, NULL, y0, z0, rs, M, bias, 1);
  else if (tm == 2)
    CHANNELS (output_channels, M, s0, M, dst, z, NULL, NULL, 0, 0, bias, 0);
  else if (y0)
    CHANNELS (output_channels_4, M, s0, M, NULL, NULL, y0, z0, rs, M, bias, 1);
  else
    CHANNELS (output_channels_4, M, s0, M, dst, z, NULL, NULL, 0, 0, bias, 0);
}

typedef struct {
  const OwbWinograd *wg;
  const OwbCpuConvGeom *g;
  const float *x, *bias, *z;
  float *y;
  const float *zeros; /* C zeros: the input outside the image */
  int64_t tiles_h, tiles_w, tiles, block;
  OwbSgemmRowsFunc rows_fn;
  gconstpointer rows_data;
} Job;

static void
run_blocks (int64_t begin, int64_t end, gpointer data)
{
  const Job *job = data;
  const OwbCpuConvGeom *g = job->g;
  const int64_t C = g->C, M = g->M, IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1];
  const int64_t tb = job->block;
  const int tm = job->wg->m, a = job->wg->a, nxi = a * a;
  float *v = g_new (float, nxi * tb * (C + M)), *mo = v + nxi * tb * C;
  for (int64_t blk = begin; blk < end; blk++)
    {
      int64_t t0 = blk * tb, nt = MIN (tb, job->tiles - t0);
      for (int64_t t = 0; t < nt; t++)
        {
          int64_t tile = t0 + t, n = tile / (job->tiles_h * job->tiles_w);
          int64_t th = tile / job->tiles_w % job->tiles_h, tw = tile % job->tiles_w;
          int64_t ih0 = tm * th - g->pad[0], iw0 = tm * tw - g->pad[1];
          gboolean inside = ih0 >= 0 && ih0 + a <= IH && iw0 >= 0 && iw0 + a <= IW;
          const float *x0 = inside ? job->x + ((n * IH + ih0) * IW + iw0) * C : NULL;
          /* a border tile's patch pixels one by one, a row of zeros outside the image */
          const float *src[MAX_XI];
          for (int i = 0; !inside && i < a; i++)
            for (int j = 0; j < a; j++)
              {
                int64_t ih = ih0 + i, iw = iw0 + j;
                src[a * i + j] = ih >= 0 && ih < IH && iw >= 0 && iw < IW ? job->x + ((n * IH + ih) * IW + iw) * C
                                                                          : job->zeros;
              }
          /* a tile's a x a transformed rows are contiguous: one stream of stores, not a^2 */
          input_tile (tm, src, x0, IW * C, v + t * nxi * C, C);
        }
      for (int xi = 0; xi < nxi; xi++)
        _owb_sgemm_packed_run (job->wg->u[xi], nt, v + xi * C, nxi * C, 0, M, mo + xi * M, nxi * M, NULL);
      for (int64_t t = 0; t < nt; t++)
        {
          int64_t tile = t0 + t, n = tile / (job->tiles_h * job->tiles_w);
          int64_t th = tile / job->tiles_w % job->tiles_h, tw = tile % job->tiles_w;
          float *dst[16];
          const float *z[16];
          for (int i = 0; i < tm; i++)
            for (int j = 0; j < tm; j++)
              {
                int64_t oh = tm * th + i, ow = tm * tw + j, at = ((n * OH + oh) * OW + ow) * M;
                gboolean inside = oh < OH && ow < OW;
                dst[tm * i + j] = inside ? job->y + at : NULL;
                z[tm * i + j] = inside && job->z ? job->z + at : NULL;
              }
          int64_t at = ((n * OH + tm * th) * OW + tm * tw) * M;
          gboolean inside = tm * th + tm <= OH && tm * tw + tm <= OW;
          float *y0 = inside ? job->y + at : NULL;
          const float *z0 = inside && job->z ? job->z + at : NULL;
          output_tile (tm, mo + t * nxi * M, dst, job->z ? z : NULL, y0, z0, OW * M, job->bias, M);
          if (job->rows_fn)
            for (int k = 0; k < tm * tm; k++)
              if (dst[k])
                job->rows_fn (dst[k], 1, M, M, job->rows_data);
        }
    }
  g_free (v);
}

void
_owb_winograd_run (OwbThreadPool *pool, const OwbWinograd *wg, const OwbCpuConvGeom *g, const float *x,
                   const float *bias, const float *z, float *y, OwbSgemmRowsFunc rows_fn, gconstpointer rows_data)
{
  g_return_if_fail (g->C == wg->C && g->M == wg->M);
  Job job = { .wg = wg, .g = g, .x = x, .bias = bias, .z = z, .y = y, .rows_fn = rows_fn, .rows_data = rows_data };
  job.tiles_h = (g->out[0] + wg->m - 1) / wg->m;
  job.tiles_w = (g->out[1] + wg->m - 1) / wg->m;
  job.tiles = g->N * job.tiles_h * job.tiles_w;
  if (job.tiles == 0)
    return;
  int64_t block = BLOCK_BYTES / (wg->a * wg->a * (int64_t) sizeof (float) * (g->C + g->M));
  block = CLAMP (block, MIN_BLOCK, MAX_BLOCK) / 6 * 6;
  /* at least two blocks per thread, for balance */
  int threads = pool ? MAX (owb_thread_pool_get_n_threads (pool), 1) : 1;
  int64_t fair = (job.tiles + 2 * threads - 1) / (2 * threads);
  job.block = MAX (MIN (block, (fair + 5) / 6 * 6), 6);
  float *zeros = g_new0 (float, g->C);
  job.zeros = zeros;
  owb_parallel_for (pool, (job.tiles + job.block - 1) / job.block, 1, run_blocks, &job);
  g_free (zeros);
}
