/* cpu-winograd.c: Winograd's F(2x2, 3x3) for channels-last float convolutions (Lavin and Gray's
 * minimal filtering). Each 2x2 output tile reads a 4x4 input patch d; with the weight transformed
 * once to U = G g G^T (4x4 per input/output channel pair) the tile is A^T [U (.) B^T d B] A, so the
 * work is 16 GEMMs of [tiles x C] by [C x M], one per position of the 4x4 transform, in place of
 * one GEMM nine taps deep: 2.25 times fewer multiply-adds. The transforms only add and subtract
 * (and halve, exactly, in G), so results stay within rounding of the direct convolution.
 *
 * Tiles are taken in blocks whose transformed inputs and GEMM outputs stay in cache; blocks are
 * split over the pool, and each writes its own output pixels. */
#include "cpu-winograd-private.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SIMD_CLONES __attribute__ ((target_clones ("arch=x86-64-v3", "default")))
#else
#define SIMD_CLONES
#endif

/* Bytes of one block's transformed inputs and GEMM outputs (16 x tiles x (C + M) floats): a
 * thread's share of L3, so that the weights (16 x C x M) are read once per block from there. */
#define BLOCK_BYTES (2 << 20)
#define MIN_BLOCK 24
#define MAX_BLOCK 252

struct _OwbWinograd {
  int64_t C, M;
  OwbSgemmPacked *u[16];
};

OwbWinograd *
_owb_winograd_new (int64_t C, int64_t M, const float *w)
{
  OwbWinograd *wg = g_new0 (OwbWinograd, 1);
  wg->C = C;
  wg->M = M;
  float *u = g_new (float, 16 * C * M);
  const int64_t cm = C * M;
  for (int64_t c = 0; c < C; c++)
    for (int64_t m = 0; m < M; m++)
      {
        float g[3][3], t[4][3];
        for (int i = 0; i < 3; i++)
          for (int j = 0; j < 3; j++)
            g[i][j] = w[(i * 3 + j) * cm + c * M + m];
        /* t = G g, then U = t G^T; G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1] */
        for (int j = 0; j < 3; j++)
          {
            t[0][j] = g[0][j];
            t[1][j] = 0.5f * (g[0][j] + g[1][j] + g[2][j]);
            t[2][j] = 0.5f * (g[0][j] - g[1][j] + g[2][j]);
            t[3][j] = g[2][j];
          }
        for (int a = 0; a < 4; a++)
          {
            float *ua = u + a * 4 * cm + c * M + m;
            ua[0] = t[a][0];
            ua[cm] = 0.5f * (t[a][0] + t[a][1] + t[a][2]);
            ua[2 * cm] = 0.5f * (t[a][0] - t[a][1] + t[a][2]);
            ua[3 * cm] = t[a][2];
          }
      }
  for (int xi = 0; xi < 16; xi++)
    wg->u[xi] = _owb_sgemm_pack (C, M, u + xi * cm, M);
  g_free (u);
  return wg;
}

void
_owb_winograd_free (OwbWinograd *wg)
{
  if (!wg)
    return;
  for (int xi = 0; xi < 16; xi++)
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

gboolean
_owb_winograd_suits (const OwbCpuConvGeom *g, int64_t min_tiles)
{
  if (g->nsp != 2 || g->group != 1)
    return FALSE;
  for (int i = 0; i < 2; i++)
    if (g->k[i] != 3 || g->s[i] != 1 || g->d[i] != 1 || g->out[i] < 1)
      return FALSE;
  int64_t tiles = g->N * ((g->out[0] + 1) / 2) * ((g->out[1] + 1) / 2);
  return tiles >= min_tiles;
}

/* 8 channels at a time in 32-byte GCC vectors (compiled for AVX2 and for the baseline by
 * target_clones); the last 1..7 channels go through the same code on partial loads and stores. */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float vf __attribute__ ((vector_size (32)));

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

/* V = B^T d B for n channels from c: src[4 i + j] is the input pixel at patch row i, column j (a
 * row of zeros outside the image), dst[xi] the tile's row of V_xi.
 * B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]. */
static inline __attribute__ ((always_inline)) void
input_channels (const float *const *src, float *const *dst, int64_t c, int n)
{
  vf s[4][4];
  for (int j = 0; j < 4; j++)
    {
      vf d0 = load (src[j] + c, n), d1 = load (src[4 + j] + c, n), d2 = load (src[8 + j] + c, n),
         d3 = load (src[12 + j] + c, n);
      s[0][j] = d0 - d2;
      s[1][j] = d1 + d2;
      s[2][j] = d2 - d1;
      s[3][j] = d1 - d3;
    }
  for (int a = 0; a < 4; a++)
    {
      store (dst[a * 4 + 0] + c, s[a][0] - s[a][2], n);
      store (dst[a * 4 + 1] + c, s[a][1] + s[a][2], n);
      store (dst[a * 4 + 2] + c, s[a][2] - s[a][1], n);
      store (dst[a * 4 + 3] + c, s[a][1] - s[a][3], n);
    }
}

SIMD_CLONES static void
input_tile (const float *const *src, float *const *dst, int64_t C)
{
  int64_t c = 0;
  for (; c + 8 <= C; c += 8)
    input_channels (src, dst, c, 8);
  if (c < C)
    input_channels (src, dst, c, (int) (C - c));
}

/* Y = A^T m A for n channels from m0, + bias + z: src[xi] the tile's row of the GEMM output xi,
 * dst[2 i + j] the output pixel at tile row i, column j (NULL outside the image), z likewise (or
 * NULL). A^T = [1 1 1 0; 0 1 -1 -1]. */
static inline __attribute__ ((always_inline)) void
output_channels (const float *const *src, float *const *dst, const float *const *z, const float *bias, int64_t m0,
                 int n)
{
  vf r[2][4];
  for (int b = 0; b < 4; b++)
    {
      vf m0v = load (src[b] + m0, n), m1 = load (src[4 + b] + m0, n), m2 = load (src[8 + b] + m0, n),
         m3 = load (src[12 + b] + m0, n);
      r[0][b] = m0v + m1 + m2;
      r[1][b] = m1 - m2 - m3;
    }
  vf add = bias ? load (bias + m0, n) : (vf){ 0 };
  for (int i = 0; i < 2; i++)
    {
      vf y[2] = { r[i][0] + r[i][1] + r[i][2] + add, r[i][1] - r[i][2] - r[i][3] + add };
      for (int j = 0; j < 2; j++)
        if (dst[2 * i + j])
          store (dst[2 * i + j] + m0, z ? y[j] + load (z[2 * i + j] + m0, n) : y[j], n);
    }
}

SIMD_CLONES static void
output_tile (const float *const *src, float *const *dst, const float *const *z, const float *bias, int64_t M)
{
  int64_t m = 0;
  for (; m + 8 <= M; m += 8)
    output_channels (src, dst, z, bias, m, 8);
  if (m < M)
    output_channels (src, dst, z, bias, m, (int) (M - m));
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
  float *v = g_new (float, 16 * tb * (C + M)), *mo = v + 16 * tb * C;
  for (int64_t blk = begin; blk < end; blk++)
    {
      int64_t t0 = blk * tb, nt = MIN (tb, job->tiles - t0);
      for (int64_t t = 0; t < nt; t++)
        {
          int64_t tile = t0 + t, n = tile / (job->tiles_h * job->tiles_w);
          int64_t th = tile / job->tiles_w % job->tiles_h, tw = tile % job->tiles_w;
          int64_t ih0 = 2 * th - g->pad[0], iw0 = 2 * tw - g->pad[1];
          const float *src[16];
          float *dst[16];
          for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
              {
                int64_t ih = ih0 + i, iw = iw0 + j;
                src[4 * i + j] = ih >= 0 && ih < IH && iw >= 0 && iw < IW ? job->x + ((n * IH + ih) * IW + iw) * C
                                                                          : job->zeros;
              }
          for (int xi = 0; xi < 16; xi++)
            dst[xi] = v + (xi * tb + t) * C;
          input_tile (src, dst, C);
        }
      for (int xi = 0; xi < 16; xi++)
        _owb_sgemm_packed_run (job->wg->u[xi], nt, v + xi * tb * C, C, 0, M, mo + xi * tb * M, M, NULL);
      for (int64_t t = 0; t < nt; t++)
        {
          int64_t tile = t0 + t, n = tile / (job->tiles_h * job->tiles_w);
          int64_t th = tile / job->tiles_w % job->tiles_h, tw = tile % job->tiles_w;
          const float *src[16];
          float *dst[4];
          const float *z[4];
          for (int xi = 0; xi < 16; xi++)
            src[xi] = mo + (xi * tb + t) * M;
          for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++)
              {
                int64_t oh = 2 * th + i, ow = 2 * tw + j, at = ((n * OH + oh) * OW + ow) * M;
                gboolean inside = oh < OH && ow < OW;
                dst[2 * i + j] = inside ? job->y + at : NULL;
                z[2 * i + j] = inside && job->z ? job->z + at : NULL;
              }
          output_tile (src, dst, job->z ? z : NULL, job->bias, M);
          if (job->rows_fn)
            for (int k = 0; k < 4; k++)
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
  job.tiles_h = (g->out[0] + 1) / 2;
  job.tiles_w = (g->out[1] + 1) / 2;
  job.tiles = g->N * job.tiles_h * job.tiles_w;
  if (job.tiles == 0)
    return;
  int64_t block = BLOCK_BYTES / (16 * (int64_t) sizeof (float) * (g->C + g->M));
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
