/* cpu-qrequant-avx512-private.h: requantization of 16 int32 accumulators in float32 that gives
 * exactly the reference's nearbyint ((double) acc * scale) + zero point, for the integer kernels'
 * AVX-512 code (cpu-qgemm.c, cpu-qconv.c). Include only on x86-64 GCC. */
#pragma once

#include <immintrin.h>

/* GCC 12's AVX-512 intrinsics pass _mm512_undefined_* () values that it then warns about */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#define OWB_QREQUANT_AVX512 __attribute__ ((target ("avx512f,avx512vl,avx512dq,avx512bw,fma")))

/* Why float is exact here: when |acc| < 2^24, acc and scale are floats and their product P is
 * exact in double (48 bits), so the reference rounds P itself half to even. The float product
 * p = fl(P) rounds monotonically and half-integers below 2^22 are floats, so round(p) = round(P)
 * except where p lands exactly on a half-integer that P is not; there the exact residual
 * P - p (one FMA) says which way P lies. Past 2^22 the result saturates either way.
 * owb_qrequant16_round_avx512 returns round (acc * scale) as floats (no zero point, not clamped);
 * every |acc| must be below 2^24 (see below). */
static inline __attribute__ ((always_inline)) OWB_QREQUANT_AVX512 __m512
owb_qrequant16_round_avx512 (__m512i acc, __m512 scale)
{
  enum { rnd = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }; /* a constant expression: clang wants one */
  __m512 a = _mm512_cvtepi32_ps (acc);
  __m512 p = _mm512_mul_round_ps (a, scale, rnd);
  __m512 q = _mm512_roundscale_ps (p, rnd);
  __m512 half = _mm512_set1_ps (0.5f);
  __mmask16 tie = _mm512_cmp_ps_mask (_mm512_abs_ps (_mm512_sub_ps (p, q)), half, _CMP_EQ_OQ);
  if (__builtin_expect (tie != 0, 0)) /* p on a half-integer: rare, so checked apart */
    {
      __m512 r = _mm512_fmsub_ps (a, scale, p); /* P - p, exact */
      tie &= _mm512_cmp_ps_mask (r, _mm512_setzero_ps (), _CMP_NEQ_OQ);
      /* at such a tie P lies past p on r's side: the integer there is p +- 0.5 */
      __m512 step = _mm512_or_ps (half, _mm512_and_ps (r, _mm512_set1_ps (-0.0f)));
      q = _mm512_mask_add_ps (q, tie, p, step);
    }
  return q;
}

/* The same rounded, zero point added and clamped to [lo, hi], as int32 lanes. */
static inline __attribute__ ((always_inline)) OWB_QREQUANT_AVX512 __m512i
owb_qrequant16_narrow_avx512 (__m512i acc, __m512 scale, __m512 yzp, __m512 lo, __m512 hi)
{
  __m512 q = owb_qrequant16_round_avx512 (acc, scale);
  q = _mm512_min_ps (hi, _mm512_max_ps (lo, _mm512_add_ps (q, yzp)));
  return _mm512_cvtps_epi32 (q);
}

/* The same for sums of any size: lanes with |acc| >= 2^24 are set in *wide (their results are
 * not the reference's; the caller redoes those in double). The narrow form above is for callers
 * that know every |acc| < 2^24. */
static inline __attribute__ ((always_inline)) OWB_QREQUANT_AVX512 __m512i
owb_qrequant16_avx512 (__m512i acc, __m512 scale, __m512 yzp, __m512 lo, __m512 hi, __mmask16 *wide)
{
  *wide = _mm512_cmpge_epi32_mask (_mm512_abs_epi32 (acc), _mm512_set1_epi32 (1 << 24));
  return owb_qrequant16_narrow_avx512 (acc, scale, yzp, lo, hi);
}

/* The reference's requantization done in double, right for sums of any size: nearbyint ((double)
 * acc * scale) + zero point, clamped to [lo, hi], as int32 lanes; s0 and s1 hold the scales of lanes
 * 0-7 and 8-15. The products are rounded once (the *_round_ intrinsics are not contracted into
 * FMAs), then half to even. For the wide lanes of owb_qrequant16_avx512 and for kernels whose sums
 * are not bounded. No FMA in the target, so that callers built without it inline it too. */
static inline __attribute__ ((always_inline, target ("avx512f,avx512vl,avx512dq,avx512bw"))) __m512i
owb_qrequant16_double_avx512 (__m512i acc, __m512d s0, __m512d s1, __m512d yzp, __m512d lo, __m512d hi)
{
  enum { rnd = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }; /* a constant expression: clang wants one */
  __m512d d0 = _mm512_cvtepi32_pd (_mm512_castsi512_si256 (acc));
  __m512d d1 = _mm512_cvtepi32_pd (_mm512_extracti64x4_epi64 (acc, 1));
  d0 = _mm512_add_round_pd (_mm512_roundscale_pd (_mm512_mul_round_pd (d0, s0, rnd), rnd), yzp, rnd);
  d1 = _mm512_add_round_pd (_mm512_roundscale_pd (_mm512_mul_round_pd (d1, s1, rnd), rnd), yzp, rnd);
  d0 = _mm512_min_pd (hi, _mm512_max_pd (lo, d0));
  d1 = _mm512_min_pd (hi, _mm512_max_pd (lo, d1));
  return _mm512_inserti64x4 (_mm512_castsi256_si512 (_mm512_cvtpd_epi32 (d0)), _mm512_cvtpd_epi32 (d1), 1);
}
