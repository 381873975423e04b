/* cpu-qgemm-private.h: integer GEMM against a constant right-hand matrix packed once (quantized
 * weights): C = (A - za) (B - zb) with A uint8 and B int8 (or uint8, shifted to int8 at packing),
 * int32 accumulation, and an epilogue that writes int32, requantizes to uint8/int8 or writes float.
 * An AVX-512 VNNI (or AMX, or AVX2) microkernel is chosen at run time, with a portable C one on the
 * same packing. */
#pragma once

#include "cpu-kernels-private.h"

/* B [K, N] packed into panels of 16 columns, each K4 = ceil(K / 4) groups of 4 consecutive depths
 * (64 bytes: column j's four int8 values at bytes 4j..4j+3), zero-padded in depth and columns, with
 * B's column sums and zero points. Immutable once made: runs may share it. */
typedef struct _OwbQgemmPacked OwbQgemmPacked;

/* Packs B [K, N] (row stride ldb, in elements). b_unsigned: B is uint8 and is packed as B - 128
 * (its zero points shifted alike, so that B - zb is unchanged). zb: nzb zero points of B's type,
 * as int32: 0 (none), 1 (per tensor) or N (per column). NULL when a zero point is out of range for
 * B's type. */
OwbQgemmPacked *_owb_qgemm_pack (int64_t K, int64_t N, const void *b, int64_t ldb, gboolean b_unsigned,
                                 const int32_t *zb, int64_t nzb);
void _owb_qgemm_packed_free (OwbQgemmPacked *p);
int64_t _owb_qgemm_packed_k (const OwbQgemmPacked *p);
/* Frees B's int16 copy for the AVX2 tile where another kernel takes its products (the Winograd
 * convolution); the bytes' tiles still run it, slower, if it is ever asked. */
void _owb_qgemm_packed_drop_wide (OwbQgemmPacked *p);
int64_t _owb_qgemm_packed_n (const OwbQgemmPacked *p);

typedef enum {
  OWB_QGEMM_OUT_INT32, /* C = acc (+ bias) */
  OWB_QGEMM_OUT_UINT8, /* C = saturate (nearbyint ((acc + bias) * scale[n]) + y_zero_point) */
  OWB_QGEMM_OUT_INT8,
  OWB_QGEMM_OUT_FLOAT, /* C = (float) acc * scale[n] + float_bias[n] */
} OwbQgemmOutput;

/* What is done with each accumulator acc[m, n] = sum_k (A[m, k] - za) (B[k, n] - zb[n]).
 * Requantization takes the product in double, as the ONNX reference does (an int32 array times a
 * float32 scale promotes to float64 in numpy), and rounds half to even. Arrays are indexed by C's
 * column (they point at column 0); NULL bias or float_bias adds nothing. */
typedef struct {
  OwbQgemmOutput output;
  const int32_t *bias;      /* INT32, UINT8, INT8 */
  const float *scale;       /* UINT8, INT8: sa sb[n] / sy; FLOAT: sa sb[n]; N values */
  int32_t y_zero_point;     /* UINT8, INT8 */
  const float *float_bias;  /* FLOAT */
  /* UINT8, INT8: NULL, or 256 bytes that each requantized byte is then looked up in (a
   * QLinearLookup fused into the convolution: y = table[byte]), while the strip is in L1 */
  const uint8_t *table;
} OwbQgemmEpilogue;

/* On the calling thread: C[0..rows, n0..n1) for A [rows, K] (row stride lda, read in place),
 * n0 a multiple of 16. c points at C[0, 0], ldc in elements of the output type. */
void _owb_qgemm_packed_run (const OwbQgemmPacked *b, int64_t rows, const uint8_t *a, int64_t lda, int32_t za,
                            int64_t n0, int64_t n1, void *c, int64_t ldc, const OwbQgemmEpilogue *ep);

/* As _owb_qgemm_packed_run for C[0..rows, n0..n1), but A's row r is the concatenation over the
 * nseg segments s of the seglen bytes at seg[s] + r * seg_lda[s] (nseg * seglen = K, seglen a
 * multiple of 4): an indirect convolution reads each kernel row's taps where they lie in X (a
 * seg_lda of 0 repeats one row, as a row of zero points for padding) instead of copying them. */
void _owb_qgemm_packed_run_segments (const OwbQgemmPacked *b, int64_t rows, int nseg, const uint8_t *const *seg,
                                     const int64_t *seg_lda, int64_t seglen, int32_t za, int64_t n0, int64_t n1,
                                     void *c, int64_t ldc, const OwbQgemmEpilogue *ep);

/* The same over all of C, split over the pool in (row tiles x column blocks). */
void _owb_qgemm_packed (OwbThreadPool *pool, const OwbQgemmPacked *b, int64_t rows, const uint8_t *a, int64_t lda,
                        int32_t za, void *c, int64_t ldc, const OwbQgemmEpilogue *ep);

/* In place, rows x cols bytes of c (row stride ldc): c[r, j] = table[c[r, j]] (256 bytes); AVX-512
 * VBMI where the VNNI kernel runs, else bytewise. */
void _owb_qgemm_lookup_rows (const uint8_t *table, uint8_t *c, int64_t ldc, int64_t rows, int64_t cols);

/* TRUE when the AVX-512 VNNI microkernel runs (the CPU has it and the portable one is not forced). */
gboolean _owb_qgemm_uses_vnni (void);
/* Tests and benchmarks: force the portable microkernel (TRUE) or choose by CPU features (FALSE).
 * OWB_QGEMM_PORTABLE=1 in the environment forces it for the whole process. */
void _owb_qgemm_force_portable (gboolean force);
/* TRUE when the AVX2 microkernel runs (A and B widened to int16, vpmaddwd's pair sums exact in
 * int32, so that no int16 saturates: sums equal VNNI's), with the portable epilogue: the CPU has AVX2 and
 * VNNI does not run. Tests: _owb_qgemm_force_avx2 (TRUE) takes it on a VNNI CPU (VNNI then reports
 * FALSE); OWB_QGEMM_AVX2=1 in the environment does so for the whole process. Forcing the portable
 * kernel wins over both. */
/* TRUE when no two depths of a packed column that vpmaddubsw sums can saturate its int16 against
 * any A (weights of 7 bits, reduce_range): the AVX2 path then multiplies the bytes unwidened. */
gboolean _owb_qgemm_packed_pairs_safe (const OwbQgemmPacked *p);
gboolean _owb_qgemm_uses_avx2 (void);
/* x86-64 with AVX2 only: out[r, 0..16) (row stride 64 int32) = sum over G groups of 4 depths of
 * rows r < R (1 to 6) of int16 A (pairs of depths as uint32, rows astride apart) against one
 * 16-column int16 panel bp laid out as OwbQgemmPacked's int16 copy (pairs of depths, columns 0-7
 * then 8-15): the AVX2 GEMM's tile, for int16 operands made elsewhere (the Winograd convolution) */
void _owb_qgemm_wide_rows_avx2 (int R, const uint32_t *aw, int64_t astride, int64_t G, const int16_t *bp,
                                int32_t *out);
void _owb_qgemm_force_avx2 (gboolean force);
/* TRUE when whole 32 x 32 blocks of C run on AMX tiles (AMX-INT8, the kernel allows it, VNNI runs
 * and AMX is not turned off). Tests and benchmarks: _owb_qgemm_force_no_amx (TRUE) keeps to the
 * vector kernels; OWB_QGEMM_NO_AMX=1 in the environment does so for the whole process. */
gboolean _owb_qgemm_uses_amx (void);
void _owb_qgemm_force_no_amx (gboolean force);

/* ---- QLinearMatMul / MatMulInteger on the core (cpu-qgemm-matmul.c) ---- */

/* What the integer kernels' prepare steps ask of a node (cpu-qgemm-matmul.c; cpu-qconv.c too):
 * the initializer input `input` reads, or NULL (absent, or not a constant); whether a type is
 * int8 or uint8. */
OwbTensor *_owb_cpu_q_initializer (const OwbNode *node, int input);
gboolean _owb_cpu_q_is_8bit (OwbDataType t);

/* The kernels' per-session state: B (a constant 2-D int8/uint8 initializer with constant zero
 * points) packed once; NULL state when the node's B is not such a constant. */
typedef struct _OwbQgemmMatMul OwbQgemmMatMul;
gboolean _owb_cpu_qgemm_matmul_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types,
                                        void **state, GError **error);
void _owb_cpu_qgemm_matmul_free (gpointer state);
/* Runs ctx's QLinearMatMul or MatMulInteger on the pack in ctx->state and returns TRUE; FALSE
 * (nothing written) when the run is not one the core handles: the reference kernel runs it, and
 * reports what is wrong with it. */
gboolean _owb_cpu_qgemm_matmul_run (OwbKernelContext *ctx);

/* DynamicQuantizeMatMul (ai.onnx.workbench): A quantized as DynamicQuantizeLinear does, the
 * product on the pack (prepare: _owb_cpu_qgemm_matmul_prepare; B packed per run when it is not the
 * constant packed there), a_scale b_scale and bias applied in the epilogue. */
gboolean _owb_cpu_dynamic_quantize_matmul (OwbKernelContext *ctx, GError **error);

/* ---- QuantizeLinear / DequantizeLinear per tensor, 8-bit (cpu-quantize-fast.c) ---- */

/* Runs ctx's QuantizeLinear (float32 -> uint8/int8) or DequantizeLinear (uint8/int8 -> float32)
 * when its scale and zero point are one float32 and one 8-bit value, and returns TRUE; FALSE
 * (nothing written) otherwise, for the general kernel. */
gboolean _owb_cpu_quantize_linear_fast (OwbKernelContext *ctx);
gboolean _owb_cpu_dequantize_linear_fast (OwbKernelContext *ctx);
/* DynamicQuantizeLinear's passes: x's range widened to hold 0 (NaN left out), in parallel, and
 * x quantized to uint8 at (scale, zp) as QuantizeLinear does (round half to even, saturating). */
void _owb_cpu_float_range (OwbThreadPool *pool, const float *x, int64_t n, float *lo, float *hi);
/* DynamicQuantizeLinear's scale and zero point for the range [lo, hi] (which holds 0). */
void _owb_cpu_dynamic_quant_params (float lo, float hi, float *scale, int32_t *zp);
void _owb_cpu_quantize_u8 (OwbThreadPool *pool, const float *x, uint8_t *y, int64_t n, float scale, int32_t zp);

/* ---- QLinearConv / NhwcQLinearConv on the core (cpu-qconv.c) ---- */

/* The kernels' per-session state: a constant 4-D int8/uint8 weight (with constant zero points)
 * packed once, per group (or reordered for the depthwise kernel); NULL state when W is not such a
 * constant. */
typedef struct _OwbQconv OwbQconv;
gboolean _owb_cpu_qconv_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types,
                                 void **state, GError **error);
void _owb_cpu_qconv_free (gpointer state);
/* Runs ctx's 2-D QLinearConv (NCHW) or NhwcQLinearConv on the state's packed weight and returns
 * TRUE; FALSE (nothing written) when the run is not one the core handles (another weight, scales
 * that are not float32, x or y parameters per channel): the reference kernel then runs it. */
gboolean _owb_cpu_qconv_run (OwbKernelContext *ctx);
