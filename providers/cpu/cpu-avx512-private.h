/* cpu-avx512-private.h: AVX-512 vector math shared by the CPU kernels that have AVX-512 code
 * (cpu-sgemm.c, cpu-depthwise-avx512.c, cpu-activation.c). Include only on x86-64 GCC. */
#pragma once

#include <immintrin.h>

#define OWB_AVX512 __attribute__ ((target ("avx512f,avx512vl,avx512dq,avx512bw,fma")))
#define OWB_AVX512_INLINE static inline __attribute__ ((always_inline)) OWB_AVX512

/* GCC 12's _mm512_min_ps/_mm512_max_ps pass an _mm512_undefined_ps () that it then warns about */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

/* e^x, x clamped to [-87, 87] (so that 1 / (1 + e^x) stays a normal float), as Cephes' expf: 2^n
 * times a degree-6 polynomial of the rest. NaN passes (max and min return their second operand
 * when either is NaN). */
OWB_AVX512_INLINE __m512
owb_exp512 (__m512 x)
{
  x = _mm512_max_ps (_mm512_set1_ps (-87.0f), x);
  x = _mm512_min_ps (_mm512_set1_ps (87.0f), x);
  __m512 n = _mm512_roundscale_ps (_mm512_mul_ps (x, _mm512_set1_ps (1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps (n, _mm512_set1_ps (0.693359375f), x);
  r = _mm512_fnmadd_ps (n, _mm512_set1_ps (-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps (1.9875691500e-4f);
  p = _mm512_fmadd_ps (p, r, _mm512_set1_ps (1.3981999507e-3f));
  p = _mm512_fmadd_ps (p, r, _mm512_set1_ps (8.3334519073e-3f));
  p = _mm512_fmadd_ps (p, r, _mm512_set1_ps (4.1665795894e-2f));
  p = _mm512_fmadd_ps (p, r, _mm512_set1_ps (1.6666665459e-1f));
  p = _mm512_fmadd_ps (p, r, _mm512_set1_ps (5.0000001201e-1f));
  p = _mm512_fmadd_ps (_mm512_mul_ps (p, r), r, _mm512_add_ps (r, _mm512_set1_ps (1.0f)));
  return _mm512_scalef_ps (p, n);
}

/* 1 / (1 + e^-x), or x times that (swish): a reciprocal estimate and one Newton step (relative
 * error ~1e-7) rather than a division, which costs a vector every 5+ cycles. */
OWB_AVX512_INLINE __m512
owb_sigmoid512 (__m512 x, int swish)
{
  const __m512 one = _mm512_set1_ps (1.0f);
  __m512 d = _mm512_add_ps (one, owb_exp512 (_mm512_sub_ps (_mm512_setzero_ps (), x)));
  __m512 r = _mm512_rcp14_ps (d);
  r = _mm512_mul_ps (r, _mm512_fnmadd_ps (d, r, _mm512_set1_ps (2.0f)));
  return swish ? _mm512_mul_ps (x, r) : r;
}
