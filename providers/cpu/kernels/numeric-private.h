/* numeric-private.h: per-type limits of the numeric element types and the conversion of a computed
 * double into one, shared by the reduction (reduce.c) and resampling (resize.c) kernels. Types are
 * named by the OWB_TYPE suffix that the OWB_CPU_FOR_* X-macros pass. */
#pragma once

#include "../cpu-kernels-private.h"

#include <math.h>
#include <stdint.h>

#define IS_FLOAT_FLOAT 1
#define IS_FLOAT_DOUBLE 1
#define IS_FLOAT_INT8 0
#define IS_FLOAT_INT16 0
#define IS_FLOAT_INT32 0
#define IS_FLOAT_INT64 0
#define IS_FLOAT_UINT8 0
#define IS_FLOAT_UINT16 0
#define IS_FLOAT_UINT32 0
#define IS_FLOAT_UINT64 0

#define LOWEST_FLOAT (-INFINITY)
#define LOWEST_DOUBLE (-INFINITY)
#define LOWEST_INT8 INT8_MIN
#define LOWEST_INT16 INT16_MIN
#define LOWEST_INT32 INT32_MIN
#define LOWEST_INT64 INT64_MIN
#define LOWEST_UINT8 0
#define LOWEST_UINT16 0
#define LOWEST_UINT32 0
#define LOWEST_UINT64 0
#define HIGHEST_FLOAT INFINITY
#define HIGHEST_DOUBLE INFINITY
#define HIGHEST_INT8 INT8_MAX
#define HIGHEST_INT16 INT16_MAX
#define HIGHEST_INT32 INT32_MAX
#define HIGHEST_INT64 INT64_MAX
#define HIGHEST_UINT8 UINT8_MAX
#define HIGHEST_UINT16 UINT16_MAX
#define HIGHEST_UINT32 UINT32_MAX
#define HIGHEST_UINT64 UINT64_MAX

/* Converts a double into an element type: floats as C does, integers rounded half to even and
 * saturated (as the ONNX reference casts resampled integers), NaN to 0. */
#define DEFINE_FROM_DOUBLE(T, N)                                                                      \
  static inline T from_double_##N (double v)                                                          \
  {                                                                                                   \
    if (IS_FLOAT_##N)                                                                                 \
      return (T) v;                                                                                   \
    if (isnan (v))                                                                                    \
      return 0;                                                                                       \
    v = nearbyint (v);                                                                                \
    if (v <= (double) LOWEST_##N)                                                                     \
      return (T) LOWEST_##N;                                                                          \
    if (v >= (double) HIGHEST_##N)                                                                    \
      return (T) HIGHEST_##N;                                                                         \
    return (T) v;                                                                                     \
  }
OWB_CPU_FOR_NUMERIC (DEFINE_FROM_DOUBLE)
