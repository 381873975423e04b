/* gemm-test-util.h: what the packed-GEMM and Winograd tests share: uniform random operands and a
 * rows callback. */
#pragma once

#include <glib.h>
#include <stdint.h>

static inline void
fill (float *p, int64_t n, GRand *r)
{
  for (int64_t i = 0; i < n; i++)
    p[i] = (float) g_rand_double_range (r, -1, 1);
}

/* The epilogue's rows callback, standing for the activations the kernels do not apply in registers:
 * any per-element map will do. */
static inline void
square_rows (float *c, int64_t rows, int64_t cols, int64_t ldc, gconstpointer data)
{
  g_assert_true (data == (gconstpointer) square_rows);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < cols; j++)
      c[r * ldc + j] = c[r * ldc + j] * c[r * ldc + j];
}
