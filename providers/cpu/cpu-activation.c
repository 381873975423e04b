/* cpu-activation.c: parsing the fused ops' activation attributes, and the AVX-512/AVX2 sigmoid (see
 * cpu-activation-private.h). */
#include "cpu-activation-private.h"
#include "cpu-kernels-private.h"
#include "../../engine/ops/owb-fused-activation-private.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define AVX2 __attribute__ ((target ("avx2,fma")))

/* e^x = 2^n e^r, n = round (x log2 e), r = x - n ln 2 (ln 2 in two parts), clamped to [-87, 88]; e^r
 * by its Taylor polynomial to r^6 in Horner form. Within 3.4e-7 relative in sigmoid and swish
 * (Cephes' expf scheme, one term longer and with n by adding and subtracting 1.5 * 2^23, gave 2.4e-7
 * at 0.53 ns per value against 0.43 for this). NaN passes. */
static inline __attribute__ ((always_inline)) AVX2 __m256
vexp (__m256 x)
{
  x = _mm256_min_ps (_mm256_set1_ps (88.0f), _mm256_max_ps (_mm256_set1_ps (-87.0f), x));
  __m256 n = _mm256_round_ps (_mm256_mul_ps (x, _mm256_set1_ps (1.44269504088896341f)),
                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps (n, _mm256_set1_ps (0.693359375f), x);
  r = _mm256_fnmadd_ps (n, _mm256_set1_ps (-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps (1.0f / 720.0f);
  p = _mm256_fmadd_ps (p, r, _mm256_set1_ps (1.0f / 120.0f));
  p = _mm256_fmadd_ps (p, r, _mm256_set1_ps (1.0f / 24.0f));
  p = _mm256_fmadd_ps (p, r, _mm256_set1_ps (1.0f / 6.0f));
  p = _mm256_fmadd_ps (p, r, _mm256_set1_ps (0.5f));
  p = _mm256_fmadd_ps (p, r, _mm256_set1_ps (1.0f));
  p = _mm256_fmadd_ps (p, r, _mm256_set1_ps (1.0f));
  __m256i e = _mm256_slli_epi32 (_mm256_add_epi32 (_mm256_cvtps_epi32 (n), _mm256_set1_epi32 (127)), 23);
  return _mm256_mul_ps (p, _mm256_castsi256_ps (e));
}

/* 1 / (1 + e^-x), or x times that. The quotient is vrcpps refined by one Newton step rather than a
 * division: a division costs a vector every 5+ cycles on the CPUs here and made Swish, the
 * activation of EfficientNet, cost as much as the convolution it follows.
 * e^-x as in vexp, in 18 operations instead of 22 (the loop is bound by their count: on the AVX2
 * path it was 16% of efficientnet_b1 at one thread): n = round (-x log2 e) by adding 1.5 * 2^23 + 127
 * in the multiply-add, whose low bits are then n + 127, the exponent of 2^n, without a rounding
 * and a conversion; the polynomial is in x + n ln 2 = -r with its odd terms negated, so -x is
 * never formed. */
static inline __attribute__ ((always_inline)) AVX2 __m256
vsigmoid (__m256 x, gboolean swish)
{
  const __m256 one = _mm256_set1_ps (1.0f), two = _mm256_set1_ps (2.0f), magic = _mm256_set1_ps (12583039.0f);
  __m256 xc = _mm256_min_ps (_mm256_set1_ps (87.0f), _mm256_max_ps (_mm256_set1_ps (-88.0f), x));
  __m256 t = _mm256_fmadd_ps (xc, _mm256_set1_ps (-1.44269504088896341f), magic);
  __m256 n = _mm256_sub_ps (t, magic);
  __m256 q = _mm256_fmadd_ps (n, _mm256_set1_ps (0.693359375f), xc); /* q = -r */
  q = _mm256_fmadd_ps (n, _mm256_set1_ps (-2.12194440e-4f), q);
  __m256 p = _mm256_set1_ps (1.0f / 720.0f);
  p = _mm256_fmadd_ps (p, q, _mm256_set1_ps (-1.0f / 120.0f));
  p = _mm256_fmadd_ps (p, q, _mm256_set1_ps (1.0f / 24.0f));
  p = _mm256_fmadd_ps (p, q, _mm256_set1_ps (-1.0f / 6.0f));
  p = _mm256_fmadd_ps (p, q, _mm256_set1_ps (0.5f));
  p = _mm256_fmadd_ps (p, q, _mm256_set1_ps (-1.0f));
  p = _mm256_fmadd_ps (p, q, one);
  __m256 e = _mm256_castsi256_ps (_mm256_slli_epi32 (_mm256_castps_si256 (t), 23));
  __m256 d = _mm256_fmadd_ps (p, e, one);
  __m256 r = _mm256_rcp_ps (d);
  r = _mm256_mul_ps (r, _mm256_fnmadd_ps (d, r, two));
  /* d above 2^126: vrcpps gives 0 where 1/d is subnormal; so does the quotient, near enough */
  return swish ? _mm256_mul_ps (x, r) : r;
}

static AVX2 void
sigmoid_avx2 (float *y, int64_t n, gboolean swish)
{
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    _mm256_storeu_ps (y + j, vsigmoid (_mm256_loadu_ps (y + j), swish));
  if (j < n)
    {
      __m256i m = _mm256_cmpgt_epi32 (_mm256_set1_epi32 ((int) (n - j)), _mm256_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7));
      _mm256_maskstore_ps (y + j, m, vsigmoid (_mm256_maskload_ps (y + j, m), swish));
    }
}

/* tanh |x| = (1 - e^-2|x|) / (1 + e^-2|x|), which cancels near 0: there the odd Taylor series to
 * x^11 (its next term is below 1e-10 for |x| < 0.25). The sign goes back on at the end. */
static inline __attribute__ ((always_inline)) AVX2 __m256
vtanh (__m256 x)
{
  __m256 sign = _mm256_and_ps (x, _mm256_castsi256_ps (_mm256_set1_epi32 ((int) 0x80000000u)));
  __m256 ax = _mm256_andnot_ps (_mm256_castsi256_ps (_mm256_set1_epi32 ((int) 0x80000000u)), x);
  __m256 one = _mm256_set1_ps (1.f);
  __m256 e = vexp (_mm256_mul_ps (ax, _mm256_set1_ps (-2.f)));
  __m256 big = _mm256_div_ps (_mm256_sub_ps (one, e), _mm256_add_ps (one, e));
  __m256 x2 = _mm256_mul_ps (ax, ax);
  __m256 p = _mm256_set1_ps (-1382.f / 155925.f);
  p = _mm256_fmadd_ps (p, x2, _mm256_set1_ps (62.f / 2835.f));
  p = _mm256_fmadd_ps (p, x2, _mm256_set1_ps (-17.f / 315.f));
  p = _mm256_fmadd_ps (p, x2, _mm256_set1_ps (2.f / 15.f));
  p = _mm256_fmadd_ps (p, x2, _mm256_set1_ps (-1.f / 3.f));
  __m256 small = _mm256_fmadd_ps (_mm256_mul_ps (p, x2), ax, ax);
  __m256 t = _mm256_blendv_ps (big, small, _mm256_cmp_ps (ax, _mm256_set1_ps (0.25f), _CMP_LT_OQ));
  t = _mm256_or_ps (t, sign);
  return _mm256_blendv_ps (t, x, _mm256_cmp_ps (x, x, _CMP_UNORD_Q));
}

static AVX2 void
tanh_avx2 (float *y, int64_t n)
{
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    _mm256_storeu_ps (y + j, vtanh (_mm256_loadu_ps (y + j)));
  if (j < n)
    {
      __m256i m = _mm256_cmpgt_epi32 (_mm256_set1_epi32 ((int) (n - j)), _mm256_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7));
      _mm256_maskstore_ps (y + j, m, vtanh (_mm256_maskload_ps (y + j, m)));
    }
}

#include "cpu-avx512-private.h"

static OWB_AVX512 void
sigmoid_avx512 (float *y, int64_t n, gboolean swish)
{
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    _mm512_storeu_ps (y + j, owb_sigmoid512 (_mm512_loadu_ps (y + j), swish));
  if (j < n)
    {
      __mmask16 m = (__mmask16) ((1u << (n - j)) - 1);
      _mm512_mask_storeu_ps (y + j, m, owb_sigmoid512 (_mm512_maskz_loadu_ps (m, y + j), swish));
    }
}

gboolean
_owb_cpu_sigmoid_vector (float *y, int64_t n, gboolean swish)
{
  if (_owb_cpu_has_avx512 ())
    {
      sigmoid_avx512 (y, n, swish);
      return TRUE;
    }
  if (!_owb_cpu_has_avx2_fma ())
    return FALSE;
  sigmoid_avx2 (y, n, swish);
  return TRUE;
}
#else
gboolean
_owb_cpu_sigmoid_vector (float *y, int64_t n, gboolean swish)
{
  return FALSE;
}
#endif

void
_owb_cpu_sigmoid_f32 (float *x, int64_t n)
{
  if (_owb_cpu_sigmoid_vector (x, n, FALSE))
    return;
  for (int64_t i = 0; i < n; i++)
    x[i] = 1.f / (1.f + expf (-x[i]));
}

void
_owb_cpu_tanh_f32 (float *x, int64_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
  if (_owb_cpu_has_avx2_fma ())
    {
      tanh_avx2 (x, n);
      return;
    }
#endif
  for (int64_t i = 0; i < n; i++)
    x[i] = tanhf (x[i]);
}

gboolean
_owb_cpu_activation_parse (const OwbNode *node, OwbCpuActivation *act, GError **error)
{
  return _owb_cpu_activation_parse_named (node, "activation", "activation_params", act, error);
}

gboolean
_owb_cpu_activation_parse_named (const OwbNode *node, const char *attr, const char *params_attr,
                                 OwbCpuActivation *act, GError **error)
{
  /* OwbCpuActivationKind of each OwbFusedActivation */
  static const OwbCpuActivationKind kinds[OWB_FUSED_ACT_N] = {
    [OWB_FUSED_ACT_RELU] = OWB_CPU_ACT_RELU,
    [OWB_FUSED_ACT_LEAKY_RELU] = OWB_CPU_ACT_LEAKY_RELU,
    [OWB_FUSED_ACT_CLIP] = OWB_CPU_ACT_CLIP,
    [OWB_FUSED_ACT_SIGMOID] = OWB_CPU_ACT_SIGMOID,
    [OWB_FUSED_ACT_TANH] = OWB_CPU_ACT_TANH,
    [OWB_FUSED_ACT_HARD_SIGMOID] = OWB_CPU_ACT_HARD_SIGMOID,
    [OWB_FUSED_ACT_HARD_SWISH] = OWB_CPU_ACT_HARD_SWISH,
    [OWB_FUSED_ACT_SWISH] = OWB_CPU_ACT_SWISH,
    [OWB_FUSED_ACT_GELU] = OWB_CPU_ACT_GELU,
    [OWB_FUSED_ACT_FAST_GELU] = OWB_CPU_ACT_FAST_GELU,
  };
  memset (act, 0, sizeof *act);
  const char *name = owb_node_get_string (node, attr, NULL);
  if (!name)
    return TRUE;
  int n = 0;
  const float *params = owb_node_get_floats (node, params_attr, &n);
  int i = _owb_fused_activation_find (name);
  if (i >= 0)
    {
      if (params && n != _owb_fused_activations[i].n_params)
        {
          g_autofree char *who = owb_node_describe (node);
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "%s: %s %s takes %d %s, got %d", who, attr, name,
                       _owb_fused_activations[i].n_params, params_attr, n);
          return FALSE;
        }
      act->kind = kinds[i];
      act->p0 = params && n > 0 ? params[0] : _owb_fused_activations[i].p0;
      act->p1 = params && n > 1 ? params[1] : _owb_fused_activations[i].p1;
      return TRUE;
    }
  g_autofree char *who = owb_node_describe (node);
  g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "%s: %s '%s' is not supported", who, attr, name);
  return FALSE;
}
