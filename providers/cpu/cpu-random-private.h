/* cpu-random-private.h: the Mersenne Twister (MT19937) seeded and read as numpy's
 * RandomState(seed), which the ONNX reference uses, so the random ops (kernels/misc.c) and a
 * seeded Dropout (kernels/norm.c) draw the reference's numbers. Inline: Dropout draws one number
 * per element. */
#pragma once

#include <stdint.h>

typedef struct {
  uint32_t mt[624];
  int pos;
} OwbCpuMt19937;

static inline void
_owb_cpu_mt_seed (OwbCpuMt19937 *m, uint32_t seed)
{
  m->mt[0] = seed;
  for (int i = 1; i < 624; i++)
    m->mt[i] = 1812433253u * (m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) + (uint32_t) i;
  m->pos = 624;
}

static inline uint32_t
_owb_cpu_mt_next (OwbCpuMt19937 *m)
{
  if (m->pos >= 624)
    {
      for (int i = 0; i < 624; i++)
        {
          uint32_t y = (m->mt[i] & 0x80000000u) | (m->mt[(i + 1) % 624] & 0x7fffffffu);
          m->mt[i] = m->mt[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
      m->pos = 0;
    }
  uint32_t y = m->mt[m->pos++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

/* A double in [0, 1) from 53 random bits (numpy's random_sample). */
static inline double
_owb_cpu_mt_double (OwbCpuMt19937 *m)
{
  uint32_t a = _owb_cpu_mt_next (m) >> 5, b = _owb_cpu_mt_next (m) >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}
