/* cpu-gemv-private.h: float matrix products with very few rows of A (batch-1 Linear layers, recurrent
 * steps), where sgemm's packing of B costs more than the product, and the vector activations the
 * recurrent kernels apply per step. */
#pragma once

#include <glib.h>
#include <stdint.h>

/* Most rows of A the small-M kernels take; above this OpenBLAS sgemm is faster (measured on the
 * 9216x4096, 4096x4096 and 576x192 weights of the dev models). */
#define OWB_CPU_GEMV_MAX_M 4
/* A GEMV reads each value of B once for one multiply-add per row of A: bound by memory, not by
 * arithmetic, so it pays to split from far less work than a GEMM (128k multiply-adds: 512 KiB of B,
 * tens of microseconds). Split below that, one thread reads B while the other waits. */
#define OWB_CPU_GEMV_PARALLEL_WORK (G_GINT64_CONSTANT (1) << 17)

/* C[m, n] (row stride ldc) = alpha A op(B) + (accumulate ? C : 0) in float, m <= OWB_CPU_GEMV_MAX_M.
 * Row i of A is a + i * a_row_stride with elements a_col_stride apart. trans_b: B is [n, k] (row j at
 * b + j * ldb, the PyTorch Linear layout: one dot product per output); else B is [k, n] (row kk at
 * b + kk * ldb). Serial: callers split n over their threads; every output column reads only its own
 * column (trans_b: row) of B, so any split is legal. */
void _owb_cpu_gemv (gboolean trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                    int64_t a_row_stride, int64_t a_col_stride, const float *b, int64_t ldb, gboolean accumulate,
                    float *c, int64_t ldc);

/* Columns per parallel unit of a GEMV over `threads` threads: large enough to amortise a dispatch,
 * small enough to balance a shared machine (trans_b: about four units per thread), a multiple of 16. */
int64_t _owb_cpu_gemv_block (gboolean trans_b, int64_t n, int64_t k, int threads);

