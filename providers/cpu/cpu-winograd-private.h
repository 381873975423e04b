/* cpu-winograd-private.h: 3x3 stride-1 convolutions of channels-last float tensors by Winograd's
 * F(m x m, 3x3), m = 2 (16 multiplications per 2x2 output tile and channel pair instead of 36) or
 * m = 4 (36 instead of 144). */
#pragma once

#include "cpu-conv-private.h"
#include "cpu-sgemm-private.h"

typedef struct _OwbWinograd OwbWinograd;

/* Transforms and packs a weight laid out [3, 3, C, M] (NhwcConv's layout, group 1) for output tiles
 * of tile x tile pixels, tile 2 or 4. */
OwbWinograd *_owb_winograd_new (int64_t C, int64_t M, const float *w, int tile);
void _owb_winograd_free (OwbWinograd *wg);
int64_t _owb_winograd_get_c (const OwbWinograd *wg);
int64_t _owb_winograd_get_m (const OwbWinograd *wg);
int _owb_winograd_get_tile (const OwbWinograd *wg);

/* TRUE for the convolutions it runs: 2-D, 3x3, stride 1, dilation 1, one group, and an output of at
 * least `min_tiles` tiles of tile x tile pixels. */
gboolean _owb_winograd_suits (const OwbCpuConvGeom *g, int tile, int64_t min_tiles);

/* Y = conv (X, W) + bias + z, X and Y channels-last ([N, H, W, C] and [N, OH, OW, M]); bias and z
 * may be NULL; rows_fn (may be NULL) runs on every output pixel's M values once they are final. */
void _owb_winograd_run (OwbThreadPool *pool, const OwbWinograd *wg, const OwbCpuConvGeom *g, const float *x,
                        const float *bias, const float *z, float *y, OwbSgemmRowsFunc rows_fn,
                        gconstpointer rows_data);
