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

static inline vf
vload (const float *p)
{
  vf v;
  memcpy (&v, p, sizeof v);
  return v;
}

static inline void
vstore (float *p, vf v)
{
  memcpy (p, &v, sizeof v);
}
