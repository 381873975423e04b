/* cpu-quantize-fast.c: QuantizeLinear float32 -> uint8/int8 and DequantizeLinear uint8/int8 ->
 * float32 per tensor, the activations of a QDQ model, sixteen elements a vector; the kernels in
 * kernels/quant.c run every other case. Results equal theirs: the division and product are the
 * float32 operations the spec's reference computes, rounding half to even, NaN saturating low. */
#include "cpu-qgemm-private.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_X86_AVX512 1
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define AVX512 __attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq")))
#define AVX2 __attribute__ ((target ("avx2")))
/* The vector loops start on a 64-byte line: the dequantizing loop (about 110 bytes) ran 1.25x slower
 * on a Zen 4 when it began 16 bytes into a line and so spanned three, which any change elsewhere in
 * the library could bring about by moving this code. */
#define LOOPS_ON_LINES __attribute__ ((optimize ("align-loops=64")))
#endif

#define CHUNK 4096

typedef struct {
  const void *x;
  void *y;
  int64_t n;
  float scale;
  int32_t zp;
  gboolean is_signed;
} Job;

static void
quantize_portable (const Job *j, int64_t begin, int64_t end)
{
  const float *x = j->x;
  float lo = j->is_signed ? -128.0f : 0.0f, hi = j->is_signed ? 127.0f : 255.0f;
  for (int64_t i = begin; i < end; i++)
    {
      float v = nearbyintf (x[i] / j->scale) + (float) j->zp;
      v = !(v >= lo) ? lo : (v > hi ? hi : v);
      if (j->is_signed)
        ((int8_t *) j->y)[i] = (int8_t) v;
      else
        ((uint8_t *) j->y)[i] = (uint8_t) v;
    }
}

static void
dequantize_portable (const Job *j, int64_t begin, int64_t end)
{
  float *y = j->y;
  for (int64_t i = begin; i < end; i++)
    {
      int32_t v = j->is_signed ? ((const int8_t *) j->x)[i] : ((const uint8_t *) j->x)[i];
      y[i] = (float) (v - j->zp) * j->scale;
    }
}

#ifdef HAVE_X86_AVX512
static AVX512 LOOPS_ON_LINES void
quantize_avx512 (const Job *j, int64_t begin, int64_t end)
{
  const float *x = j->x;
  const __m512 s = _mm512_set1_ps (j->scale), z = _mm512_set1_ps ((float) j->zp);
  const __m512 lo = _mm512_set1_ps (j->is_signed ? -128.0f : 0.0f), hi = _mm512_set1_ps (j->is_signed ? 127.0f : 255.0f);
  enum { rnd = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }; /* a constant expression: clang wants one */
  for (int64_t i = begin; i < end; i += 16)
    {
      int left = (int) MIN (16, end - i);
      __mmask16 m = (__mmask16) (left == 16 ? 0xFFFF : (1u << left) - 1);
      __m512 v = _mm512_div_round_ps (_mm512_maskz_loadu_ps (m, x + i), s, rnd);
      v = _mm512_add_round_ps (_mm512_roundscale_ps (v, rnd), z, rnd);
      /* max returns its second operand where the first is NaN: NaN saturates low */
      v = _mm512_min_ps (_mm512_max_ps (v, lo), hi);
      _mm_mask_storeu_epi8 ((uint8_t *) j->y + i, m, _mm512_cvtepi32_epi8 (_mm512_cvtps_epi32 (v)));
    }
}

static AVX512 LOOPS_ON_LINES void
dequantize_avx512 (const Job *j, int64_t begin, int64_t end)
{
  float *y = j->y;
  const __m512 s = _mm512_set1_ps (j->scale);
  const __m512i z = _mm512_set1_epi32 (j->zp);
  enum { rnd = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }; /* a constant expression: clang wants one */
  for (int64_t i = begin; i < end; i += 16)
    {
      int left = (int) MIN (16, end - i);
      __mmask16 m = (__mmask16) (left == 16 ? 0xFFFF : (1u << left) - 1);
      __m128i b = _mm_maskz_loadu_epi8 (m, (const uint8_t *) j->x + i);
      __m512i v = j->is_signed ? _mm512_cvtepi8_epi32 (b) : _mm512_cvtepu8_epi32 (b);
      __m512 f = _mm512_mul_round_ps (_mm512_cvtepi32_ps (_mm512_sub_epi32 (v, z)), s, rnd);
      _mm512_mask_storeu_ps (y + i, m, f);
    }
}
#endif

#ifdef HAVE_X86_AVX512
/* quantize_avx512 on CPUs without AVX-512, eight elements a vector, the tail portable (a scalar
 * loop took 0.246 ms on a 224x224 RGB input, a tenth of MobileNetV3's INT8 gap to its FP32 on
 * AVX2): the same float division, rounding and saturation */
static AVX2 LOOPS_ON_LINES void
quantize_avx2 (const Job *j, int64_t begin, int64_t end)
{
  const float *x = j->x;
  const __m256 s = _mm256_set1_ps (j->scale), z = _mm256_set1_ps ((float) j->zp);
  const __m256 lo = _mm256_set1_ps (j->is_signed ? -128.0f : 0.0f), hi = _mm256_set1_ps (j->is_signed ? 127.0f : 255.0f);
  enum { rnd = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC };
  int64_t i = begin;
  for (; i + 8 <= end; i += 8)
    {
      __m256 v = _mm256_add_ps (_mm256_round_ps (_mm256_div_ps (_mm256_loadu_ps (x + i), s), rnd), z);
      /* max returns its second operand where the first is NaN: NaN saturates low */
      v = _mm256_min_ps (_mm256_max_ps (v, lo), hi);
      __m256i q = _mm256_cvtps_epi32 (v);
      /* in range already: the saturating packs only narrow */
      __m128i w = _mm_packs_epi32 (_mm256_castsi256_si128 (q), _mm256_extracti128_si256 (q, 1));
      _mm_storel_epi64 ((__m128i *) ((uint8_t *) j->y + i), j->is_signed ? _mm_packs_epi16 (w, w) : _mm_packus_epi16 (w, w));
    }
  quantize_portable (j, i, end);
}

static AVX2 LOOPS_ON_LINES void
dequantize_avx2 (const Job *j, int64_t begin, int64_t end)
{
  float *y = j->y;
  const __m256 s = _mm256_set1_ps (j->scale);
  const __m256i z = _mm256_set1_epi32 (j->zp);
  int64_t i = begin;
  for (; i + 8 <= end; i += 8)
    {
      __m128i b = _mm_loadl_epi64 ((const __m128i *) ((const uint8_t *) j->x + i));
      __m256i v = j->is_signed ? _mm256_cvtepi8_epi32 (b) : _mm256_cvtepu8_epi32 (b);
      _mm256_storeu_ps (y + i, _mm256_mul_ps (_mm256_cvtepi32_ps (_mm256_sub_epi32 (v, z)), s));
    }
  dequantize_portable (j, i, end);
}
#endif

/* NAME_chunks: chunks [begin, end) of CHUNK elements through NAME_avx512 where the CPU has it,
 * NAME_avx2 where it has AVX2, else NAME_portable: one definition for both directions, each with
 * direct calls. */
#ifdef HAVE_X86_AVX512
#define CHUNKS_AVX512(NAME)                                                                             \
  if (_owb_cpu_has_avx512 ())                                                                           \
    {                                                                                                   \
      NAME##_avx512 (j, b, e);                                                                          \
      return;                                                                                           \
    }                                                                                                   \
  if (_owb_cpu_has_avx2_fma ())                                                                         \
    {                                                                                                   \
      NAME##_avx2 (j, b, e);                                                                            \
      return;                                                                                           \
    }
#else
#define CHUNKS_AVX512(NAME)
#endif
#define DEFINE_CHUNKS(NAME)                                                                             \
  static void NAME##_chunks (int64_t begin, int64_t end, gpointer data)                                 \
  {                                                                                                     \
    const Job *j = data;                                                                                \
    int64_t b = begin * CHUNK, e = MIN (end * CHUNK, j->n);                                             \
    CHUNKS_AVX512 (NAME)                                                                                \
    NAME##_portable (j, b, e);                                                                          \
  }

DEFINE_CHUNKS (quantize)
DEFINE_CHUNKS (dequantize)

static gboolean
is_8bit (OwbDataType t)
{
  return t == OWB_TYPE_UINT8 || t == OWB_TYPE_INT8;
}

/* The per-tensor float32 scale and 8-bit zero point of a Q/DQ node, when that is what it has. */
static gboolean
per_tensor (OwbKernelContext *ctx, OwbDataType qtype, float *scale, int32_t *zp)
{
  const OwbTensor *s = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  const OwbTensor *z = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  if (!s || s->dtype != OWB_TYPE_FLOAT || s->nelems != 1 || (z && (z->dtype != qtype || z->nelems != 1)))
    return FALSE;
  *scale = ((const float *) s->data)[0];
  *zp = !z ? 0 : qtype == OWB_TYPE_INT8 ? ((const int8_t *) z->data)[0] : ((const uint8_t *) z->data)[0];
  return TRUE;
}

/* QuantizeLinear (float32 X to 8-bit Y) or DequantizeLinear (8-bit X to float32 Y) when they take
 * this path: per tensor, not blocked, no other precision. */
static gboolean
run_fast (OwbKernelContext *ctx, gboolean quantize)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = ctx->n_outputs > 0 ? ctx->outputs[0] : NULL;
  if (!x || !y || y->nelems != x->nelems)
    return FALSE;
  const OwbTensor *real = quantize ? x : y, *q = quantize ? y : x;
  Job j = { .x = x->data, .y = y->data, .n = x->nelems, .is_signed = q->dtype == OWB_TYPE_INT8 };
  if (real->dtype != OWB_TYPE_FLOAT || !is_8bit (q->dtype)
      || (ctx->opset >= 21 && owb_node_get_int (ctx->node, "block_size", 0) != 0)
      || (quantize && ctx->opset >= 23 && owb_node_get_int (ctx->node, "precision", 0) != 0)
      || !per_tensor (ctx, q->dtype, &j.scale, &j.zp))
    return FALSE;
  owb_parallel_for (ctx->pool, (j.n + CHUNK - 1) / CHUNK, 4, quantize ? quantize_chunks : dequantize_chunks, &j);
  return TRUE;
}

gboolean
_owb_cpu_quantize_linear_fast (OwbKernelContext *ctx)
{
  return run_fast (ctx, TRUE);
}

gboolean
_owb_cpu_dequantize_linear_fast (OwbKernelContext *ctx)
{
  return run_fast (ctx, FALSE);
}

/* ---- DynamicQuantizeLinear's two passes ---- */

typedef struct {
  const float *x;
  int64_t n;
  float *lo, *hi; /* one pair per chunk */
} RangeJob;

static void
range_portable (const float *x, int64_t begin, int64_t end, float *lo, float *hi)
{
  float l = 0.0f, h = 0.0f;
  for (int64_t i = begin; i < end; i++)
    {
      l = x[i] < l ? x[i] : l; /* NaN compares false: left out, as the reference kernel does */
      h = x[i] > h ? x[i] : h;
    }
  *lo = l, *hi = h;
}

#ifdef HAVE_X86_AVX512
static AVX512 void
range_avx512 (const float *x, int64_t begin, int64_t end, float *lo, float *hi)
{
  __m512 l = _mm512_setzero_ps (), h = _mm512_setzero_ps ();
  for (int64_t i = begin; i < end; i += 16)
    {
      int left = (int) MIN (16, end - i);
      __mmask16 m = (__mmask16) (left == 16 ? 0xFFFF : (1u << left) - 1);
      __m512 v = _mm512_maskz_loadu_ps (m, x + i); /* masked lanes read 0, inside the range anyway */
      /* min and max return their second operand where the first is NaN: NaN is left out */
      l = _mm512_min_ps (v, l);
      h = _mm512_max_ps (v, h);
    }
  /* lanes reduced in scalar code: GCC 12's reduce intrinsics warn about their own temporaries */
  float ls[16], hs[16];
  _mm512_storeu_ps (ls, l);
  _mm512_storeu_ps (hs, h);
  float a = ls[0], b = hs[0];
  for (int k = 1; k < 16; k++)
    {
      a = ls[k] < a ? ls[k] : a;
      b = hs[k] > b ? hs[k] : b;
    }
  *lo = a, *hi = b;
}
#endif

static void
range_chunks (int64_t begin, int64_t end, gpointer data)
{
  const RangeJob *j = data;
  for (int64_t c = begin; c < end; c++)
    {
      int64_t b = c * CHUNK, e = MIN (b + CHUNK, j->n);
#ifdef HAVE_X86_AVX512
      if (_owb_cpu_has_avx512 ())
        {
          range_avx512 (j->x, b, e, &j->lo[c], &j->hi[c]);
          continue;
        }
#endif
      range_portable (j->x, b, e, &j->lo[c], &j->hi[c]);
    }
}

void
_owb_cpu_float_range (OwbThreadPool *pool, const float *x, int64_t n, float *lo, float *hi)
{
  int64_t chunks = (n + CHUNK - 1) / CHUNK;
  g_autofree float *los = g_new0 (float, MAX (chunks, 1)), *his = g_new0 (float, MAX (chunks, 1));
  RangeJob j = { x, n, los, his };
  owb_parallel_for (pool, chunks, 4, range_chunks, &j);
  float l = 0.0f, h = 0.0f;
  for (int64_t c = 0; c < chunks; c++)
    {
      l = los[c] < l ? los[c] : l;
      h = his[c] > h ? his[c] : h;
    }
  *lo = l, *hi = h;
}

void
_owb_cpu_quantize_u8 (OwbThreadPool *pool, const float *x, uint8_t *y, int64_t n, float scale, int32_t zp)
{
  Job j = { .x = x, .y = y, .n = n, .scale = scale, .zp = zp, .is_signed = FALSE };
  owb_parallel_for (pool, (n + CHUNK - 1) / CHUNK, 4, quantize_chunks, &j);
}

void
_owb_cpu_dynamic_quant_params (float lo, float hi, float *scale, int32_t *zp)
{
  /* an all-zero input gets scale 1/255 rather than 0, so that quantizing it divides by a number */
  float s = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  float z = 0.0f - lo / s;
  *scale = s;
  *zp = (int32_t) nearbyintf (z < 0.0f ? 0.0f : (z > 255.0f ? 255.0f : z));
}
