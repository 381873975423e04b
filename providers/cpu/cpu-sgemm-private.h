/* cpu-sgemm-private.h: float GEMM against a constant right-hand matrix packed once (convolution
 * weights): C = A B + epilogue, with an AVX2+FMA 6x16 microkernel chosen at run time and a portable
 * C fallback on the same packed layout. */
#pragma once

#include "cpu-kernels-private.h"
#include "cpu-activation-private.h"

/* B [K, N] packed into panels of 16 columns (the last one 8 wide when N % 16 is 1..8), each panel
 * K rows of its width, contiguous, zero-padded. Immutable once made: runs may share it. */
typedef struct _OwbSgemmPacked OwbSgemmPacked;

OwbSgemmPacked *_owb_sgemm_pack (int64_t K, int64_t N, const float *b, int64_t ldb);
/* The pack of B = alpha bt^T for bt [N, K] (row stride ldbt): a transposed weight (Gemm's transB,
 * MatMul on a weight's Transpose, a recurrent op's W) packed straight from its rows. */
OwbSgemmPacked *_owb_sgemm_pack_transposed (int64_t K, int64_t N, const float *bt, int64_t ldbt, float alpha);
/* The same into p, reusing its storage where it is large enough (a new pack when p is NULL): for
 * operands packed on every run (attention's keys and values). Return the pack. */
OwbSgemmPacked *_owb_sgemm_repack (OwbSgemmPacked *p, int64_t K, int64_t N, const float *b, int64_t ldb);
OwbSgemmPacked *_owb_sgemm_repack_transposed (OwbSgemmPacked *p, int64_t K, int64_t N, const float *bt, int64_t ldbt,
                                              float alpha);
void _owb_sgemm_packed_free (OwbSgemmPacked *p);
int64_t _owb_sgemm_packed_k (const OwbSgemmPacked *p);
int64_t _owb_sgemm_packed_n (const OwbSgemmPacked *p);
/* Panel jp (columns [16 jp, 16 jp + *width)): K rows of *width floats, 16 or 8; the panels number
 * (N + 15) / 16. For kernels that run their own loops on the packed weights. */
const float *_owb_sgemm_packed_panel (const OwbSgemmPacked *p, int64_t jp, int *width);

/* Called on rows of C once they are final (bias, residual and clamp applied), while in cache:
 * `rows` rows of `cols` values, row stride ldc. For activations other than a clamp. */
typedef void (*OwbSgemmRowsFunc) (float *c, int64_t rows, int64_t cols, int64_t ldc, gconstpointer data);

/* Activations applied in registers (NaN passes through each): CLAMP min (max (x, p0), p1) (Relu,
 * Clip); SIGMOID 1 / (1 + e^-x); SWISH x / (1 + e^-x); HARD_SIGMOID min (max (p0 x + p1, 0), 1);
 * HARD_SWISH x times that. */
typedef enum {
  OWB_SGEMM_ACT_NONE,
  OWB_SGEMM_ACT_CLAMP,
  OWB_SGEMM_ACT_SIGMOID,
  OWB_SGEMM_ACT_SWISH,
  OWB_SGEMM_ACT_HARD_SIGMOID,
  OWB_SGEMM_ACT_HARD_SWISH,
} OwbSgemmAct;

/* What is applied to C = A B: + bias[j], + z[i * ldz + j], then act, then rows_fn. Columns index
 * like C's (bias and z point at column 0). */
typedef struct {
  const float *bias;
  const float *z;
  int64_t ldz;
  OwbSgemmAct act;
  float p0, p1;
  OwbSgemmRowsFunc rows_fn;
  gconstpointer rows_data;
} OwbSgemmEpilogue;

/* Sets ep's activation from a fused op's: in registers where the microkernel has it, else through
 * rows_fn (called with act as its data) on each finished strip. */
void _owb_sgemm_epilogue_set_activation (OwbSgemmEpilogue *ep, const OwbCpuActivation *act,
                                         OwbSgemmRowsFunc rows_fn);

/* On the calling thread: C[0..rows, n0..n1) = A[rows, K] B[:, n0..n1) + epilogue, where A's rows
 * have stride lda (read in place, no packing), n0 is a multiple of 16 and n1 <= N. c points at
 * C[0, 0]. ep may be NULL. */
void _owb_sgemm_packed_run (const OwbSgemmPacked *b, int64_t rows, const float *a, int64_t lda, int64_t n0,
                            int64_t n1, float *c, int64_t ldc, const OwbSgemmEpilogue *ep);

/* The same over all of C, split over the pool in (row tiles x column blocks). */
void _owb_sgemm_packed (OwbThreadPool *pool, const OwbSgemmPacked *b, int64_t rows, const float *a, int64_t lda,
                        float *c, int64_t ldc, const OwbSgemmEpilogue *ep);

/* How to split C[rows, N] = A[rows, K] B[K, N] over `threads`: rows per tile (a multiple of
 * _owb_sgemm_tile_rows, at most max_rows rounded up to it) and columns per block (a multiple of
 * 16), so that the tiles x blocks units keep every thread equally busy (small images with many
 * channels are split by columns, and so are few rows against a B too large for L2). */
void _owb_sgemm_partition (int64_t rows, int64_t N, int64_t K, int threads, int64_t max_rows, int64_t *row_tile,
                           int64_t *col_block);

/* TRUE when the AVX2+FMA microkernel runs (the CPU has it and the fallback is not forced). */
/* Packs input 1 of a MatMul/Gemm-like node when it is a constant float [K, N] initializer
 * (transposed when trans_b, scaled by alpha), for _owb_sgemm_packed. NULL (nothing packed) when it
 * is not such a constant, when trans_a is set, or when A is known at prepare to have at most
 * OWB_CPU_GEMV_MAX_M rows: the GEMV path runs then, and a pack would only double B's memory
 * (alexnet's classifier). `gemm_rows`: A is [M, K] (Gemm) rather than [..., M, K] (MatMul).
 * On success *b receives a reference to B, so a run can check its input is that same tensor. */
OwbSgemmPacked *_owb_sgemm_pack_constant_b (const OwbNode *node, const OwbValueType *const *input_types,
                                            gboolean gemm_rows, gboolean trans_a, gboolean trans_b, float alpha,
                                            OwbTensor **b);

gboolean _owb_sgemm_uses_avx2 (void);
/* TRUE when the AVX-512 microkernel (14 x 32 tiles) runs. */
gboolean _owb_sgemm_uses_avx512 (void);
/* Rows of C one register tile covers: 14 with AVX-512, else 6. Row tiles handed to
 * _owb_sgemm_packed_run are best a multiple of it. */
int _owb_sgemm_tile_rows (void);
/* Tests: force the portable microkernel (TRUE) or go back to choosing by CPU features (FALSE). */
void _owb_sgemm_force_portable (gboolean force);
/* Tests: the AVX2 microkernel even where the CPU has AVX-512 (TRUE), or choose again (FALSE). */
void _owb_sgemm_force_avx2 (gboolean force);
