/* cpu-simd-private.h: the 32-byte GCC vectors of the CPU kernels' hot loops. Functions marked
 * SIMD_CLONES are compiled twice (target_clones): for x86-64-v3 (AVX2 + FMA), chosen at load time
 * where the CPU has it, and for the baseline, where each vector is two SSE registers. */
#pragma once

#include <stdint.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wpsabi"
typedef float vf __attribute__ ((vector_size (32)));
typedef int32_t vi __attribute__ ((vector_size (32)));

/* target_clones needs ifunc support: GCC on Linux */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define SIMD_CLONES __attribute__ ((target_clones ("arch=x86-64-v3", "default")))
#else
#define SIMD_CLONES
#endif

/* Unaligned loads and stores of a vector type V of floats: memcpy compiles to one move. */
#define OWB_DEFINE_VEC_IO(V, LOAD, STORE)                                                               \
  static inline V LOAD (const float *p)                                                                 \
  {                                                                                                     \
    V v;                                                                                                \
    memcpy (&v, p, sizeof v);                                                                           \
    return v;                                                                                           \
  }                                                                                                     \
  static inline void STORE (float *p, V v)                                                              \
  {                                                                                                     \
    memcpy (p, &v, sizeof v);                                                                           \
  }

OWB_DEFINE_VEC_IO (vf, vload, vstore)

/* 16-byte vectors (native on SSE2 and NEON) for the loops that need a remainder, which -O2 does not
 * vectorize: norm.c's row helpers and reduce.c's float runs. */
typedef float v4f __attribute__ ((vector_size (16)));
typedef int32_t v4i __attribute__ ((vector_size (16)));

OWB_DEFINE_VEC_IO (v4f, load4, store4)

static inline v4f
splat4 (float f)
{
  return (v4f) { f, f, f, f };
}

/* mask lanes (-1 / 0, as comparisons give) pick a, the others b. */
static inline v4f
select4 (v4i mask, v4f a, v4f b)
{
  return (v4f) ((mask & (v4i) a) | (~mask & (v4i) b));
}

static inline float
hsum4 (v4f v)
{
  return (v[0] + v[1]) + (v[2] + v[3]);
}
