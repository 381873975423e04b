/* cpu-depthwise-avx512-private.h: a channels-last depthwise output row in AVX-512 vectors, for
 * NhwcConv and NhwcPointwiseDepthwise where the CPU has AVX-512 (cpu-depthwise-avx512.c). */
#pragma once

#include "cpu-conv-private.h"
#include "cpu-activation-private.h"

/* TRUE when the CPU has AVX-512 and the tests have not turned this code off. */
gboolean _owb_cpu_dw_avx512_usable (void);
/* Tests: run the 8-lane kernels even where the CPU has AVX-512 (TRUE), or choose again (FALSE). */
void _owb_cpu_dw_avx512_force_off (gboolean off);
/* The activation kinds _owb_cpu_dw_row_avx512 applies in registers (NONE included). */
gboolean _owb_cpu_dw_avx512_in_register (OwbCpuActivationKind kind);

/* One output row of the depthwise convolution of geometry g (NCHW view of channels-last data: C
 * channels, in/out/k/s/d/pad over H and W) with weights w [kH, kW, C] and bias [C] (or NULL): the
 * input row under tap row kh (kh0 <= kh < kh1) starts at first + (kh - kh0) * rstep; yrow receives
 * out[1] pixels of C values, act applied where kind is one _owb_cpu_dw_avx512_in_register takes
 * (pass OWB_CPU_ACT_NONE to leave the activation to the caller). Only where usable. */
void _owb_cpu_dw_row_avx512 (const OwbCpuConvGeom *g, const float *w, const float *bias, const OwbCpuActivation *act,
                             OwbCpuActivationKind kind, const float *first, int64_t rstep, int64_t kh0, int64_t kh1,
                             float *yrow);
