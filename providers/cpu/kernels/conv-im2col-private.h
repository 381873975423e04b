/* conv-im2col-private.h: the im2col of the CPU's general convolutions (Conv in nn.c, FusedConv in
 * fused.c), one copy for both: OWB_CPU_DEFINE_IM2COL (T, NAME) stamps a static
 * im2col_NAME (g, x, p0, len, col) that gathers the input patches of output positions
 * [p0, p0 + len) of one group's channels into col, one row of len per (input channel, kernel tap);
 * each run of outputs along the last axis is one copy. */
#pragma once

#include "../cpu-conv-private.h"

#include <string.h>

#define OWB_CPU_DEFINE_IM2COL(T, NAME)                                                                             \
  static void im2col_##NAME (const OwbCpuConvGeom *g, const T *x, int64_t p0, int64_t len, T *col)                 \
  {                                                                                                                \
    int last = g->nsp - 1;                                                                                         \
    int64_t in_last = g->in[last], out_last = g->out[last], s = g->s[last];                                        \
    int64_t start[OWB_MAX_RANK];                                                                                   \
    for (int64_t a = last, rest = p0; a >= 0; a--)                                                                 \
      {                                                                                                            \
        start[a] = rest % g->out[a];                                                                               \
        rest /= g->out[a];                                                                                         \
      }                                                                                                            \
    for (int64_t kk = 0; kk < g->ksize; kk++)                                                                      \
      {                                                                                                            \
        int64_t kc[OWB_MAX_RANK];                                                                                  \
        for (int64_t a = last, rest = kk; a >= 0; a--)                                                             \
          {                                                                                                        \
            kc[a] = rest % g->k[a];                                                                                \
            rest /= g->k[a];                                                                                       \
          }                                                                                                        \
        int64_t off = kc[last] * g->d[last] - g->pad[last], lo, hi;                                                \
        _owb_cpu_conv_valid_range (off, s, in_last, out_last, &lo, &hi);                                           \
        for (int64_t c = 0; c < g->Cg; c++)                                                                        \
          {                                                                                                        \
            const T *xc = x + c * g->in_size;                                                                      \
            T *dst = col + (c * g->ksize + kk) * len;                                                              \
            int64_t oc[OWB_MAX_RANK];                                                                              \
            memcpy (oc, start, sizeof (int64_t) * g->nsp);                                                         \
            for (int64_t p = 0; p < len;)                                                                          \
              {                                                                                                    \
                int64_t o0 = oc[last], run = MIN (out_last - o0, len - p);                                         \
                gboolean inside = TRUE;                                                                            \
                int64_t base = 0;                                                                                  \
                for (int a = 0; a < last && inside; a++)                                                           \
                  {                                                                                                \
                    int64_t i = oc[a] * g->s[a] - g->pad[a] + kc[a] * g->d[a];                                     \
                    inside = i >= 0 && i < g->in[a];                                                               \
                    base = base * g->in[a] + i;                                                                    \
                  }                                                                                                \
                T *d = dst + p - o0; /* d[o] is output column o of this run */                                     \
                if (!inside)                                                                                       \
                  memset (d + o0, 0, run * sizeof (T));                                                            \
                else                                                                                               \
                  {                                                                                                \
                    const T *src = xc + base * in_last + off;                                                      \
                    int64_t a0 = CLAMP (lo, o0, o0 + run), a1 = CLAMP (hi, a0, o0 + run);                          \
                    if (a0 > o0)                                                                                   \
                      memset (d + o0, 0, (a0 - o0) * sizeof (T));                                                  \
                    if (s == 1)                                                                                    \
                      memcpy (d + a0, src + a0, (a1 - a0) * sizeof (T));                                           \
                    else                                                                                           \
                      for (int64_t o = a0; o < a1; o++)                                                            \
                        d[o] = src[o * s];                                                                         \
                    if (o0 + run > a1)                                                                             \
                      memset (d + a1, 0, (o0 + run - a1) * sizeof (T));                                            \
                  }                                                                                                \
                p += run;                                                                                          \
                oc[last] += run;                                                                                   \
                for (int a = last; a > 0 && oc[a] >= g->out[a]; a--)                                               \
                  {                                                                                                \
                    oc[a] = 0;                                                                                     \
                    oc[a - 1]++;                                                                                   \
                  }                                                                                                \
              }                                                                                                    \
          }                                                                                                        \
      }                                                                                                            \
  }
