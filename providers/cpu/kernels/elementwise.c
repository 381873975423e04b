/* elementwise.c: CPU kernels of the elementwise op family: one broadcasting walker that calls a
 * per-op, per-dtype row loop (stamped out by macros), plus Clip, Where, Pow and Cast. */
#include "../cpu-kernels-private.h"
#include "../cpu-activation-private.h"
#include "../cpu-simd-private.h"

#include <string.h>
#include <tgmath.h>

/* ---- Type lists --------------------------------------------------------------------------------
 * The dtype lists of cpu-kernels-private.h, with extra arguments passed through to X, so that one
 * macro call stamps an op's row loop over a list: X (ctype, OWB_TYPE suffix, op, ...). */
#define EW_FLOATS(X, ...) X (float, FLOAT, __VA_ARGS__) X (double, DOUBLE, __VA_ARGS__)
#define EW_SIGNED(X, ...)                                                                                       \
  X (int8_t, INT8, __VA_ARGS__) X (int16_t, INT16, __VA_ARGS__) X (int32_t, INT32, __VA_ARGS__)                \
  X (int64_t, INT64, __VA_ARGS__)
#define EW_UNSIGNED(X, ...)                                                                                     \
  X (uint8_t, UINT8, __VA_ARGS__) X (uint16_t, UINT16, __VA_ARGS__) X (uint32_t, UINT32, __VA_ARGS__)          \
  X (uint64_t, UINT64, __VA_ARGS__)
#define EW_BOOL(X, ...) X (gboolean_u8, BOOL, __VA_ARGS__)
#define EW_INTS(X, ...) EW_SIGNED (X, __VA_ARGS__) EW_UNSIGNED (X, __VA_ARGS__)
#define EW_SIGNED_NUMERIC(X, ...) EW_FLOATS (X, __VA_ARGS__) EW_SIGNED (X, __VA_ARGS__)
#define EW_NUMERIC(X, ...) EW_FLOATS (X, __VA_ARGS__) EW_INTS (X, __VA_ARGS__)
#define EW_ALL(X, ...) EW_NUMERIC (X, __VA_ARGS__) EW_BOOL (X, __VA_ARGS__)

/* ---- Row loops ---------------------------------------------------------------------------------
 * A row function computes n output elements; input k advances by step[k] (0: broadcast, 1:
 * contiguous). params is the op's Params (or, for Clip, its typed bounds). */
typedef void (*RowFunc) (void *out, const void *const *in, const int64_t *step, int64_t n, gconstpointer params);

/* Attribute values of the activations, parsed once in prepare. */
typedef struct {
  double alpha, beta, gamma, lambd, bias;
  int flag_a, flag_b;
} Params;

/* Output element type of a row: the input's, or bool. */
#define SAME(T) T
#define BOOLOUT(T) gboolean_u8

/* Wrapping negation of a signed integer (no undefined behaviour on the minimum). */
#define NEG_WRAP(v) ((T) (0 - (uint64_t) (v)))

/* The expression (__VA_ARGS__) sees x (and y) of type T, and the Params P. */
#define UNARY_ROW(TYPE, N, op, OUT, ...)                                                                       \
  static void op##_##N (void *out_, const void *const *in_, const int64_t *step_, int64_t n_, gconstpointer p_) \
  {                                                                                                             \
    typedef TYPE T;                                                                                             \
    const T *a_ = in_[0];                                                                                       \
    OUT (T) *o_ = out_;                                                                                         \
    const Params P = *(const Params *) p_;                                                                      \
    (void) P;                                                                                                   \
    (void) step_;                                                                                               \
    for (int64_t i_ = 0; i_ < n_; i_++)                                                                         \
      {                                                                                                         \
        const T x = a_[i_];                                                                                     \
        o_[i_] = (OUT (T)) (__VA_ARGS__);                                                                       \
      }                                                                                                         \
  }

/* Four loops, so that each one is a plain vectorisable loop. */
#define BINARY_ROW(TYPE, N, op, OUT, ...)                                                                      \
  static void op##_##N (void *out_, const void *const *in_, const int64_t *step_, int64_t n_, gconstpointer p_) \
  {                                                                                                             \
    typedef TYPE T;                                                                                             \
    const T *a_ = in_[0], *b_ = in_[1];                                                                         \
    OUT (T) *o_ = out_;                                                                                         \
    const Params P = *(const Params *) p_;                                                                      \
    (void) P;                                                                                                   \
    if (step_[0] && step_[1])                                                                                   \
      for (int64_t i_ = 0; i_ < n_; i_++)                                                                       \
        {                                                                                                       \
          const T x = a_[i_], y = b_[i_];                                                                       \
          (void) y;                                                                                             \
          o_[i_] = (OUT (T)) (__VA_ARGS__);                                                                     \
        }                                                                                                       \
    else if (step_[0])                                                                                          \
      {                                                                                                         \
        const T y = b_[0];                                                                                      \
        (void) y;                                                                                               \
        for (int64_t i_ = 0; i_ < n_; i_++)                                                                     \
          {                                                                                                     \
            const T x = a_[i_];                                                                                 \
            o_[i_] = (OUT (T)) (__VA_ARGS__);                                                                   \
          }                                                                                                     \
      }                                                                                                         \
    else if (step_[1])                                                                                          \
      {                                                                                                         \
        const T x = a_[0];                                                                                      \
        for (int64_t i_ = 0; i_ < n_; i_++)                                                                     \
          {                                                                                                     \
            const T y = b_[i_];                                                                                 \
            (void) y;                                                                                           \
            o_[i_] = (OUT (T)) (__VA_ARGS__);                                                                   \
          }                                                                                                     \
      }                                                                                                         \
    else                                                                                                        \
      {                                                                                                         \
        const T x = a_[0], y = b_[0];                                                                           \
        (void) y;                                                                                               \
        const OUT (T) v_ = (OUT (T)) (__VA_ARGS__);                                                             \
        for (int64_t i_ = 0; i_ < n_; i_++)                                                                     \
          o_[i_] = v_;                                                                                          \
      }                                                                                                         \
  }

/* A dtype-indexed table of an op's row functions: ROWS (add, EW_NUMERIC) gives add_rows. */
#define ROW_REF(TYPE, N, op, ...) [OWB_TYPE_##N] = op##_##N,
#define ROWS(op, LIST) static const RowFunc op##_rows[OWB_TYPE_LAST_] = { LIST (ROW_REF, op, _) };

/* ---- Arithmetic ---- */
/* Integers wrap (two's complement, as ONNX Runtime's do): computed in uint64, where overflow is
 * defined; in their own types int32 and int64 overflow, and uint16 x uint16 overflows the int it
 * is promoted to, which C leaves undefined. */
#define WRAP(op) ((uint64_t) x op (uint64_t) y)
EW_FLOATS (BINARY_ROW, add, SAME, x + y)
EW_INTS (BINARY_ROW, add, SAME, WRAP (+))
ROWS (add, EW_NUMERIC)
EW_FLOATS (BINARY_ROW, sub, SAME, x - y)
EW_INTS (BINARY_ROW, sub, SAME, WRAP (-))
ROWS (sub, EW_NUMERIC)
EW_FLOATS (BINARY_ROW, mul, SAME, x * y)
EW_INTS (BINARY_ROW, mul, SAME, WRAP (*))
ROWS (mul, EW_NUMERIC)
/* Integer division truncates like C; divisors are checked for 0 before the loop, and MIN / -1
 * wraps instead of trapping. */
EW_FLOATS (BINARY_ROW, div, SAME, x / y)
EW_SIGNED (BINARY_ROW, div, SAME, y == -1 ? NEG_WRAP (x) : x / y)
EW_UNSIGNED (BINARY_ROW, div, SAME, x / y)
ROWS (div, EW_NUMERIC)

/* Mod with fmod=1: the sign of the dividend (C's % and fmod). */
EW_FLOATS (BINARY_ROW, fmod, SAME, fmod (x, y))
EW_SIGNED (BINARY_ROW, fmod, SAME, y == -1 ? 0 : x % y)
EW_UNSIGNED (BINARY_ROW, fmod, SAME, x % y)
ROWS (fmod, EW_NUMERIC)
/* Mod with fmod=0: the sign of the divisor (Python's %); an exact zero takes the divisor's sign. */
#define FLOAT_MOD_FLOOR(a, b)                                                                                   \
  __extension__ ({                                                                                              \
    T r_ = fmod (a, b);                                                                                         \
    r_ == 0 ? copysign ((T) 0, b) : ((r_ < 0) != (b < 0) ? r_ + b : r_);                                        \
  })
#define INT_MOD_FLOOR(a, b)                                                                                     \
  __extension__ ({                                                                                              \
    T r_ = (T) (a % b);                                                                                         \
    (r_ != 0 && (r_ < 0) != (b < 0)) ? (T) (r_ + b) : r_;                                                       \
  })
EW_FLOATS (BINARY_ROW, mod, SAME, FLOAT_MOD_FLOOR (x, y))
EW_SIGNED (BINARY_ROW, mod, SAME, y == -1 ? 0 : INT_MOD_FLOOR (x, y))
EW_UNSIGNED (BINARY_ROW, mod, SAME, x % y)
ROWS (mod, EW_NUMERIC)

/* BitShift: shifts by a negative amount or by the width or more give the sign fill (opset 28
 * made that the rule; before it was undefined). */
#define BITS(T) ((int) (sizeof (T) * 8))
EW_UNSIGNED (BINARY_ROW, shl, SAME, y >= (uint64_t) BITS (T) ? 0 : (T) ((uint64_t) x << y))
EW_SIGNED (BINARY_ROW, shl, SAME, (y < 0 || y >= BITS (T)) ? 0 : (T) ((uint64_t) x << y))
ROWS (shl, EW_INTS)
EW_UNSIGNED (BINARY_ROW, shr, SAME, y >= (uint64_t) BITS (T) ? 0 : x >> y)
EW_SIGNED (BINARY_ROW, shr, SAME, (y < 0 || y >= BITS (T)) ? (x < 0 ? -1 : 0) : x >> y)
ROWS (shr, EW_INTS)

/* Integer Pow by squaring, wrapping like the other integer ops. */
static inline uint64_t
ipow_u64 (uint64_t base, uint64_t e)
{
  uint64_t r = 1;
  while (e)
    {
      if (e & 1)
        r *= base;
      base *= base;
      e >>= 1;
    }
  return r;
}

static inline int64_t
ipow_i64 (int64_t base, int64_t e)
{
  if (e < 0)
    return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
  return (int64_t) ipow_u64 ((uint64_t) base, (uint64_t) e);
}

EW_FLOATS (BINARY_ROW, pow, SAME, pow (x, y))
EW_SIGNED (BINARY_ROW, pow, SAME, ipow_i64 (x, y))
EW_UNSIGNED (BINARY_ROW, pow, SAME, ipow_u64 (x, y))
ROWS (pow, EW_NUMERIC)

static inline int64_t
double_to_i64 (double v)
{
  if (!(v > -9223372036854775808.0 && v < 9223372036854775808.0))
    return isnan (v) ? 0 : v > 0 ? G_MAXINT64 : G_MININT64;
  return (int64_t) v;
}

/* A double result stored in integer type T as Cast stores it: through int64 (NaN 0, saturated), and
 * [2^63, 2^64) kept for uint64. 0 to a negative power is infinity, which C may not convert. */
static inline uint64_t
double_to_int_bits (double v)
{
  return v >= 9223372036854775808.0 && v < 18446744073709551616.0 ? (uint64_t) v : (uint64_t) double_to_i64 (v);
}
#define POW_STORE(T, v) ((T) 0.5 != 0 ? (T) (v) : (T) double_to_int_bits (v))

/* Pow with an exponent of another type (opset 12+): the exponent is converted to double first. */
#define POW_MIXED_ROW(TYPE, N, op, ...)                                                                        \
  static void op##_##N (void *out_, const void *const *in_, const int64_t *step_, int64_t n_, gconstpointer p_) \
  {                                                                                                             \
    typedef TYPE T;                                                                                             \
    const T *a_ = in_[0];                                                                                       \
    const double *b_ = in_[1];                                                                                  \
    T *o_ = out_;                                                                                               \
    for (int64_t i_ = 0; i_ < n_; i_++)                                                                         \
      o_[i_] = POW_STORE (T, pow ((double) a_[i_ * step_[0]], b_[i_ * step_[1]]));                              \
  }
EW_NUMERIC (POW_MIXED_ROW, pow_mixed, _)
ROWS (pow_mixed, EW_NUMERIC)

/* ---- Variadic and comparison ---- */
/* Float Min/Max propagate NaN, as numpy's minimum/maximum do. */
EW_FLOATS (BINARY_ROW, max, SAME, (isnan (x) || x > y) ? x : y)
EW_INTS (BINARY_ROW, max, SAME, x > y ? x : y)
ROWS (max, EW_NUMERIC)
EW_FLOATS (BINARY_ROW, min, SAME, (isnan (x) || x < y) ? x : y)
EW_INTS (BINARY_ROW, min, SAME, x < y ? x : y)
ROWS (min, EW_NUMERIC)
EW_FLOATS (UNARY_ROW, mean_scale, SAME, x / (T) P.alpha)
ROWS (mean_scale, EW_FLOATS)

EW_ALL (BINARY_ROW, equal, BOOLOUT, x == y)
ROWS (equal, EW_ALL)
EW_NUMERIC (BINARY_ROW, less, BOOLOUT, x < y)
ROWS (less, EW_NUMERIC)
EW_NUMERIC (BINARY_ROW, greater, BOOLOUT, x > y)
ROWS (greater, EW_NUMERIC)
EW_NUMERIC (BINARY_ROW, less_equal, BOOLOUT, x <= y)
ROWS (less_equal, EW_NUMERIC)
EW_NUMERIC (BINARY_ROW, greater_equal, BOOLOUT, x >= y)
ROWS (greater_equal, EW_NUMERIC)

/* Strings compare by content; NULL entries are empty strings. */
static void
equal_STRING (void *out, const void *const *in, const int64_t *step, int64_t n, gconstpointer p)
{
  char *const *a = in[0], *const *b = in[1];
  gboolean_u8 *o = out;
  for (int64_t i = 0; i < n; i++)
    {
      const char *x = a[i * step[0]], *y = b[i * step[1]];
      o[i] = strcmp (x ? x : "", y ? y : "") == 0;
    }
}

/* ---- Logic and bitwise ---- */
EW_BOOL (BINARY_ROW, and, BOOLOUT, x && y)
ROWS (and, EW_BOOL)
EW_BOOL (BINARY_ROW, or, BOOLOUT, x || y)
ROWS (or, EW_BOOL)
EW_BOOL (BINARY_ROW, xor, BOOLOUT, (x != 0) != (y != 0))
ROWS (xor, EW_BOOL)
EW_BOOL (UNARY_ROW, not, BOOLOUT, !x)
ROWS (not, EW_BOOL)
EW_INTS (BINARY_ROW, bitwise_and, SAME, x & y)
ROWS (bitwise_and, EW_INTS)
EW_INTS (BINARY_ROW, bitwise_or, SAME, x | y)
ROWS (bitwise_or, EW_INTS)
EW_INTS (BINARY_ROW, bitwise_xor, SAME, x ^ y)
ROWS (bitwise_xor, EW_INTS)
EW_INTS (UNARY_ROW, bitwise_not, SAME, ~x)
ROWS (bitwise_not, EW_INTS)

/* ---- Unary math ---- */
EW_FLOATS (UNARY_ROW, sqrt, SAME, sqrt (x))
ROWS (sqrt, EW_FLOATS)
EW_FLOATS (UNARY_ROW, exp, SAME, exp (x))
ROWS (exp, EW_FLOATS)
EW_FLOATS (UNARY_ROW, log, SAME, log (x))
ROWS (log, EW_FLOATS)
EW_FLOATS (UNARY_ROW, neg, SAME, -x)
EW_SIGNED (UNARY_ROW, neg, SAME, NEG_WRAP (x))
ROWS (neg, EW_SIGNED_NUMERIC)
EW_FLOATS (UNARY_ROW, abs, SAME, fabs (x))
EW_SIGNED (UNARY_ROW, abs, SAME, x < 0 ? NEG_WRAP (x) : x)
EW_UNSIGNED (UNARY_ROW, abs, SAME, x)
ROWS (abs, EW_NUMERIC)
EW_FLOATS (UNARY_ROW, reciprocal, SAME, 1 / x)
ROWS (reciprocal, EW_FLOATS)
EW_FLOATS (UNARY_ROW, floor, SAME, floor (x))
ROWS (floor, EW_FLOATS)
EW_FLOATS (UNARY_ROW, ceil, SAME, ceil (x))
ROWS (ceil, EW_FLOATS)
/* Halves round to even (the default rounding mode). */
EW_FLOATS (UNARY_ROW, round, SAME, nearbyint (x))
ROWS (round, EW_FLOATS)
EW_SIGNED_NUMERIC (UNARY_ROW, sign, SAME, x > 0 ? (T) 1 : (x < 0 ? (T) -1 : x))
EW_UNSIGNED (UNARY_ROW, sign, SAME, x > 0)
ROWS (sign, EW_NUMERIC)
EW_FLOATS (UNARY_ROW, erf, SAME, erf (x))
ROWS (erf, EW_FLOATS)
EW_FLOATS (UNARY_ROW, sin, SAME, sin (x))
ROWS (sin, EW_FLOATS)
EW_FLOATS (UNARY_ROW, cos, SAME, cos (x))
ROWS (cos, EW_FLOATS)
EW_FLOATS (UNARY_ROW, tan, SAME, tan (x))
ROWS (tan, EW_FLOATS)
EW_FLOATS (UNARY_ROW, asin, SAME, asin (x))
ROWS (asin, EW_FLOATS)
EW_FLOATS (UNARY_ROW, acos, SAME, acos (x))
ROWS (acos, EW_FLOATS)
EW_FLOATS (UNARY_ROW, atan, SAME, atan (x))
ROWS (atan, EW_FLOATS)
EW_FLOATS (UNARY_ROW, sinh, SAME, sinh (x))
ROWS (sinh, EW_FLOATS)
EW_FLOATS (UNARY_ROW, cosh, SAME, cosh (x))
ROWS (cosh, EW_FLOATS)
EW_FLOATS (UNARY_ROW, asinh, SAME, asinh (x))
ROWS (asinh, EW_FLOATS)
EW_FLOATS (UNARY_ROW, acosh, SAME, acosh (x))
ROWS (acosh, EW_FLOATS)
EW_FLOATS (UNARY_ROW, atanh, SAME, atanh (x))
ROWS (atanh, EW_FLOATS)
EW_FLOATS (UNARY_ROW, isnan, BOOLOUT, isnan (x))
ROWS (isnan, EW_FLOATS)
/* flag_a: detect positive infinity, flag_b: negative. */
EW_FLOATS (UNARY_ROW, isinf, BOOLOUT, isinf (x) && (x > 0 ? P.flag_a : P.flag_b))
ROWS (isinf, EW_FLOATS)

/* ---- Activations ---- */
/* log(1 + exp(x)) without overflow for large x. */
#define SOFTPLUS(v) ((v) > 0 ? (v) + log1p (exp (-(v))) : log1p (exp (v)))
#define CLAMP01(v) __extension__ ({ T c_ = (v); c_ < 0 ? (T) 0 : (c_ > 1 ? (T) 1 : c_); })

/* x < 0 rather than max (x, 0), so that NaN passes through. */
EW_SIGNED_NUMERIC (UNARY_ROW, relu, SAME, x < 0 ? 0 : x)
ROWS (relu, EW_SIGNED_NUMERIC)
EW_FLOATS (UNARY_ROW, leaky_relu, SAME, x < 0 ? (T) P.alpha * x : x)
ROWS (leaky_relu, EW_FLOATS)
EW_FLOATS (UNARY_ROW, sigmoid, SAME, 1 / (1 + exp (-x)))
ROWS (sigmoid, EW_FLOATS)
EW_FLOATS (UNARY_ROW, tanh, SAME, tanh (x))
ROWS (tanh, EW_FLOATS)
EW_FLOATS (UNARY_ROW, hard_sigmoid, SAME, CLAMP01 ((T) P.alpha * x + (T) P.beta))
ROWS (hard_sigmoid, EW_FLOATS)
EW_FLOATS (UNARY_ROW, hard_swish, SAME, x * CLAMP01 (x * (T) (1.0 / 6.0) + (T) 0.5))
ROWS (hard_swish, EW_FLOATS)
EW_FLOATS (UNARY_ROW, gelu, SAME, (T) 0.5 * x * (1 + erf (x * (T) 0.70710678118654752440)))
ROWS (gelu, EW_FLOATS)
EW_FLOATS (UNARY_ROW, gelu_tanh, SAME,
           (T) 0.5 * x * (1 + tanh ((T) 0.7978845608028654 * (x + (T) 0.044715 * x * x * x))))
ROWS (gelu_tanh, EW_FLOATS)
EW_FLOATS (UNARY_ROW, softplus, SAME, SOFTPLUS (x))
ROWS (softplus, EW_FLOATS)
EW_FLOATS (UNARY_ROW, softsign, SAME, x / (1 + fabs (x)))
ROWS (softsign, EW_FLOATS)
EW_FLOATS (UNARY_ROW, elu, SAME, x < 0 ? (T) P.alpha * expm1 (x) : x)
ROWS (elu, EW_FLOATS)
EW_FLOATS (UNARY_ROW, selu, SAME, x <= 0 ? (T) (P.gamma * P.alpha) * expm1 (x) : (T) P.gamma * x)
ROWS (selu, EW_FLOATS)
/* max(0,x) + min(0, alpha*(exp(x/alpha)-1)): the second term is 0 exactly when x > 0. */
EW_FLOATS (UNARY_ROW, celu, SAME, x > 0 ? x : (T) P.alpha * expm1 (x / (T) P.alpha))
ROWS (celu, EW_FLOATS)
EW_FLOATS (UNARY_ROW, thresholded_relu, SAME, x > (T) P.alpha ? x : 0)
ROWS (thresholded_relu, EW_FLOATS)
EW_FLOATS (UNARY_ROW, mish, SAME, x * tanh (SOFTPLUS (x)))
ROWS (mish, EW_FLOATS)
EW_FLOATS (UNARY_ROW, shrink, SAME,
           x < (T) -P.lambd ? x + (T) P.bias : (x > (T) P.lambd ? x - (T) P.bias : 0))
EW_INTS (UNARY_ROW, shrink, SAME,
         (double) x < -P.lambd ? (double) x + P.bias : ((double) x > P.lambd ? (double) x - P.bias : 0))
ROWS (shrink, EW_NUMERIC)
EW_SIGNED_NUMERIC (BINARY_ROW, prelu, SAME, x < 0 ? x * y : x)
EW_UNSIGNED (BINARY_ROW, prelu, SAME, x)
ROWS (prelu, EW_NUMERIC)

/* Clip: params point to the two bounds, of the row's type. min(max(x, lo), hi), as numpy clips,
 * so lo > hi gives hi, and NaN passes through. */
#define CLIP_ROW(TYPE, N, op, ...)                                                                             \
  static void op##_##N (void *out_, const void *const *in_, const int64_t *step_, int64_t n_, gconstpointer p_) \
  {                                                                                                             \
    typedef TYPE T;                                                                                             \
    const T *a_ = in_[0];                                                                                       \
    T *o_ = out_;                                                                                               \
    const T lo = ((const T *) p_)[0], hi = ((const T *) p_)[1];                                                 \
    for (int64_t i_ = 0; i_ < n_; i_++)                                                                         \
      {                                                                                                         \
        T v = a_[i_] < lo ? lo : a_[i_];                                                                        \
        o_[i_] = v > hi ? hi : v;                                                                               \
      }                                                                                                         \
  }
EW_NUMERIC (CLIP_ROW, clip, _)
ROWS (clip, EW_NUMERIC)

/* Where: the condition selects between two values, copied by element size. */
#define WHERE_ROW(TYPE, N, op, ...)                                                                            \
  static void op##_##N (void *out_, const void *const *in_, const int64_t *step_, int64_t n_, gconstpointer p_) \
  {                                                                                                             \
    const gboolean_u8 *c_ = in_[0];                                                                             \
    const TYPE *x_ = in_[1], *y_ = in_[2];                                                                      \
    TYPE *o_ = out_;                                                                                            \
    if (step_[0] && step_[1] && step_[2])                                                                       \
      for (int64_t i_ = 0; i_ < n_; i_++)                                                                       \
        o_[i_] = c_[i_] ? x_[i_] : y_[i_];                                                                      \
    else                                                                                                        \
      for (int64_t i_ = 0; i_ < n_; i_++)                                                                       \
        o_[i_] = c_[i_ * step_[0]] ? x_[i_ * step_[1]] : y_[i_ * step_[2]];                                     \
  }
WHERE_ROW (uint8_t, 1, where, _)
WHERE_ROW (uint16_t, 2, where, _)
WHERE_ROW (uint32_t, 4, where, _)
WHERE_ROW (uint64_t, 8, where, _)

static void
where_STRING (void *out, const void *const *in, const int64_t *step, int64_t n, gconstpointer p)
{
  const gboolean_u8 *c = in[0];
  char *const *x = in[1], *const *y = in[2];
  char **o = out;
  for (int64_t i = 0; i < n; i++)
    {
      const char *v = c[i * step[0]] ? x[i * step[1]] : y[i * step[2]];
      g_free (o[i]);
      o[i] = g_strdup (v ? v : "");
    }
}

/* ---- The broadcasting walker ----------------------------------------------------------------- */
#define WALK_MAX_INPUTS 3
/* Elements per parallel task: enough to hide the scheduling cost of cheap ops. */
#define WALK_GRAIN 16384

/* One input of a walk: its data and the shape it broadcasts from. */
typedef struct {
  const void *data;
  gsize elem_size;
  int rank;
  const int64_t *dims;
} WalkInput;

/* Output dims with every run of dims that all inputs step through alike merged into one, and
 * size-1 dims dropped: equal shapes and scalars become one flat row. */
typedef struct {
  RowFunc row;
  gconstpointer params;
  int n_in;
  int rank;
  int64_t dims[OWB_MAX_RANK];
  int64_t strides[WALK_MAX_INPUTS][OWB_MAX_RANK];
  const char *in[WALK_MAX_INPUTS];
  gsize in_size[WALK_MAX_INPUTS];
  char *out;
  gsize out_size;
} Walk;

static WalkInput
walk_input (const OwbTensor *t)
{
  return (WalkInput) { t->data, _owb_cpu_elem_size (t->dtype), t->rank, t->dims };
}

static gboolean
walk_init (Walk *w, OwbKernelContext *ctx, RowFunc row, gconstpointer params, int n_in, const WalkInput *ins,
           OwbTensor *out, GError **error)
{
  int64_t full[WALK_MAX_INPUTS][OWB_MAX_RANK];
  int r = out->rank;
  memset (w, 0, sizeof *w);
  w->row = row;
  w->params = params;
  w->n_in = n_in;
  w->out = out->data;
  w->out_size = _owb_cpu_elem_size (out->dtype);
  for (int k = 0; k < n_in; k++)
    {
      const WalkInput *in = &ins[k];
      if (in->rank > r)
        goto bad;
      for (int i = 0; i < in->rank; i++)
        if (in->dims[i] != 1 && in->dims[i] != out->dims[r - in->rank + i])
          goto bad;
      _owb_cpu_broadcast_strides (in->rank, in->dims, r, out->dims, full[k]);
      w->in[k] = in->data;
      w->in_size[k] = in->elem_size;
    }
  for (int d = 0; d < r; d++)
    {
      if (out->dims[d] == 1)
        continue;
      gboolean merge = w->rank > 0;
      for (int k = 0; merge && k < n_in; k++)
        merge = w->strides[k][w->rank - 1] == full[k][d] * out->dims[d];
      if (merge)
        w->dims[w->rank - 1] *= out->dims[d];
      else
        w->dims[w->rank++] = out->dims[d];
      for (int k = 0; k < n_in; k++)
        w->strides[k][w->rank - 1] = full[k][d];
    }
  if (w->rank == 0)
    w->dims[w->rank++] = 1;
  return TRUE;

bad:
  owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input shapes do not broadcast to the output shape");
  return FALSE;
}

/* Rows [begin, end) of a float Mul or Add whose two inputs each either step through the output or
 * repeat one row of it: a squeeze-excite scale ([N,H,W,C] * [N,1,1,C] in NHWC) or a bias. Rows
 * there are as short as the channels (16-32 in a CNN's first stages), and the row function's call,
 * its stride tests and the vectorizer's alias checks and remainder loop cost more than the 2-4
 * vectors of work: efficientnet_b1's first SE Mul, 112x112 rows of 32, took 0.115 ms against
 * ONNX Runtime's 0.042. */
SIMD_CLONES static void
repeated_row_f32 (const Walk *w, int64_t begin, int64_t end, gboolean is_mul)
{
  int64_t inner = w->dims[1], s0 = w->strides[0][0], s1 = w->strides[1][0];
  for (int64_t r = begin; r < end; r++)
    {
      const float *a = (const float *) w->in[0] + r * s0, *b = (const float *) w->in[1] + r * s1;
      float *o = (float *) w->out + r * inner;
      int64_t i = 0;
      if (is_mul)
        {
          for (; i + 8 <= inner; i += 8)
            vstore (o + i, vload (a + i) * vload (b + i));
          for (; i < inner; i++)
            o[i] = a[i] * b[i];
        }
      else
        {
          for (; i + 8 <= inner; i += 8)
            vstore (o + i, vload (a + i) + vload (b + i));
          for (; i < inner; i++)
            o[i] = a[i] + b[i];
        }
    }
}

/* TRUE where repeated_row_f32 applies to w. */
static gboolean
walk_is_repeated_row_f32 (const Walk *w)
{
  if (w->rank != 2 || w->n_in != 2 || (w->row != mul_FLOAT && w->row != add_FLOAT))
    return FALSE;
  for (int k = 0; k < 2; k++)
    if (w->strides[k][1] != 1 || (w->strides[k][0] != 0 && w->strides[k][0] != w->dims[1]))
      return FALSE;
  return TRUE;
}

/* rank 1: [begin, end) are elements; otherwise rows of the innermost dim. */
static void
walk_range (int64_t begin, int64_t end, gpointer data)
{
  const Walk *w = data;
  const void *in[WALK_MAX_INPUTS];
  int64_t step[WALK_MAX_INPUTS];
  int last = w->rank - 1;
  for (int k = 0; k < w->n_in; k++)
    step[k] = w->strides[k][last];
  if (w->rank == 1)
    {
      for (int k = 0; k < w->n_in; k++)
        in[k] = w->in[k] + begin * step[k] * w->in_size[k];
      w->row (w->out + begin * w->out_size, in, step, end - begin, w->params);
      return;
    }
  if (walk_is_repeated_row_f32 (w))
    {
      repeated_row_f32 (w, begin, end, w->row == mul_FLOAT);
      return;
    }
  int64_t inner = w->dims[last];
  int64_t idx[OWB_MAX_RANK], off[WALK_MAX_INPUTS] = { 0 };
  int64_t rem = begin;
  for (int d = last - 1; d >= 0; d--)
    {
      idx[d] = rem % w->dims[d];
      rem /= w->dims[d];
      for (int k = 0; k < w->n_in; k++)
        off[k] += idx[d] * w->strides[k][d];
    }
  for (int64_t r = begin; r < end; r++)
    {
      for (int k = 0; k < w->n_in; k++)
        in[k] = w->in[k] + off[k] * w->in_size[k];
      w->row (w->out + r * inner * w->out_size, in, step, inner, w->params);
      for (int d = last - 1; d >= 0; d--)
        {
          idx[d]++;
          for (int k = 0; k < w->n_in; k++)
            off[k] += w->strides[k][d];
          if (idx[d] < w->dims[d] || d == 0)
            break;
          for (int k = 0; k < w->n_in; k++)
            off[k] -= w->strides[k][d] * w->dims[d];
          idx[d] = 0;
        }
    }
}

static void
walk_run (Walk *w, OwbThreadPool *pool)
{
  int64_t total = 1;
  for (int d = 0; d < w->rank; d++)
    total *= w->dims[d];
  if (total == 0)
    return;
  if (w->rank == 1)
    owb_parallel_for (pool, total, WALK_GRAIN, walk_range, w);
  else
    {
      int64_t inner = w->dims[w->rank - 1];
      owb_parallel_for (pool, total / inner, MAX (1, WALK_GRAIN / inner), walk_range, w);
    }
}

static gboolean
walk (OwbKernelContext *ctx, RowFunc row, gconstpointer params, int n_in, const WalkInput *ins, OwbTensor *out,
      GError **error)
{
  Walk w;
  if (!walk_init (&w, ctx, row, params, n_in, ins, out, error))
    return FALSE;
  walk_run (&w, ctx->pool);
  return TRUE;
}

/* ---- Kernel state -------------------------------------------------------------------------- */
typedef struct {
  const RowFunc *rows;  /* indexed by dtype */
  Params params;
  gboolean legacy_broadcast; /* opset < 7 with broadcast=1 */
  gboolean check_divisor;    /* integer Div/Mod: refuse a zero divisor */
  int64_t legacy_axis;       /* G_MININT64: align B with A's trailing dims */
  float clip_min, clip_max;  /* Clip before opset 11 */
  OwbDataType cast_to;       /* Cast; UNDEFINED for CastLike (the output's type) */
  gboolean saturate;         /* Cast to float 8 */
  int round_mode;            /* Cast to float8e8m0: an E8M0Round */
} State;

typedef struct {
  const char *op_type;
  const RowFunc *rows;
} OpRows;

static const OpRows op_rows[] = {
  { "Add", add_rows },
  { "Sub", sub_rows },
  { "Mul", mul_rows },
  { "Div", div_rows },
  { "Pow", pow_rows },
  { "Sqrt", sqrt_rows },
  { "Exp", exp_rows },
  { "Log", log_rows },
  { "Neg", neg_rows },
  { "Abs", abs_rows },
  { "Reciprocal", reciprocal_rows },
  { "Floor", floor_rows },
  { "Ceil", ceil_rows },
  { "Round", round_rows },
  { "Sign", sign_rows },
  { "Erf", erf_rows },
  { "Sin", sin_rows },
  { "Cos", cos_rows },
  { "Tan", tan_rows },
  { "Asin", asin_rows },
  { "Acos", acos_rows },
  { "Atan", atan_rows },
  { "Sinh", sinh_rows },
  { "Cosh", cosh_rows },
  { "Asinh", asinh_rows },
  { "Acosh", acosh_rows },
  { "Atanh", atanh_rows },
  { "Relu", relu_rows },
  { "LeakyRelu", leaky_relu_rows },
  { "Sigmoid", sigmoid_rows },
  { "Tanh", tanh_rows },
  { "Clip", clip_rows },
  { "HardSigmoid", hard_sigmoid_rows },
  { "HardSwish", hard_swish_rows },
  { "Softplus", softplus_rows },
  { "Softsign", softsign_rows },
  { "Elu", elu_rows },
  { "Selu", selu_rows },
  { "Celu", celu_rows },
  { "ThresholdedRelu", thresholded_relu_rows },
  { "Mish", mish_rows },
  { "Shrink", shrink_rows },
  { "PRelu", prelu_rows },
  { "Min", min_rows },
  { "Max", max_rows },
  { "Sum", add_rows },
  { "Mean", add_rows },
  { "Equal", equal_rows },
  { "Less", less_rows },
  { "Greater", greater_rows },
  { "LessOrEqual", less_equal_rows },
  { "GreaterOrEqual", greater_equal_rows },
  { "Not", not_rows },
  { "And", and_rows },
  { "Or", or_rows },
  { "Xor", xor_rows },
  { "BitwiseAnd", bitwise_and_rows },
  { "BitwiseOr", bitwise_or_rows },
  { "BitwiseXor", bitwise_xor_rows },
  { "BitwiseNot", bitwise_not_rows },
  { "IsNaN", isnan_rows },
  { "IsInf", isinf_rows },
};

static gboolean
prepare_error (const OwbNode *node, GError **error, const char *message)
{
  char *who = owb_node_describe (node);
  g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "%s: %s", who, message);
  g_free (who);
  return FALSE;
}

static gboolean
prepare_elementwise (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                     GError **error)
{
  const char *op = node->op_type;
  State *s = g_new0 (State, 1);
  for (guint i = 0; i < G_N_ELEMENTS (op_rows); i++)
    if (strcmp (op, op_rows[i].op_type) == 0)
      s->rows = op_rows[i].rows;
  s->legacy_axis = G_MININT64;
  if (opset < 7 && owb_node_get_int (node, "broadcast", 0) != 0)
    {
      s->legacy_broadcast = TRUE;
      const OwbAttribute *axis = owb_node_get_attribute (node, "axis");
      if (axis && axis->type == OWB_ATTR_INT)
        s->legacy_axis = axis->i;
    }
  s->check_divisor = strcmp (op, "Div") == 0 || strcmp (op, "Mod") == 0;
  if (strcmp (op, "Mod") == 0)
    s->rows = owb_node_get_int (node, "fmod", 0) ? fmod_rows : mod_rows;
  else if (strcmp (op, "BitShift") == 0)
    {
      const char *direction = owb_node_get_string (node, "direction", "");
      if (strcmp (direction, "LEFT") != 0 && strcmp (direction, "RIGHT") != 0)
        {
          g_free (s);
          return prepare_error (node, error, "direction must be \"LEFT\" or \"RIGHT\"");
        }
      s->rows = strcmp (direction, "LEFT") == 0 ? shl_rows : shr_rows;
    }
  else if (strcmp (op, "Gelu") == 0)
    s->rows = strcmp (owb_node_get_string (node, "approximate", "none"), "tanh") == 0 ? gelu_tanh_rows : gelu_rows;

  Params *p = &s->params;
  if (strcmp (op, "LeakyRelu") == 0)
    p->alpha = owb_node_get_float (node, "alpha", 0.01f);
  else if (strcmp (op, "Elu") == 0 || strcmp (op, "Celu") == 0 || strcmp (op, "ThresholdedRelu") == 0)
    p->alpha = owb_node_get_float (node, "alpha", 1.0f);
  else if (strcmp (op, "Selu") == 0)
    {
      p->alpha = owb_node_get_float (node, "alpha", 1.67326319217681884765625f);
      p->gamma = owb_node_get_float (node, "gamma", 1.05070102214813232421875f);
    }
  else if (strcmp (op, "HardSigmoid") == 0)
    {
      p->alpha = owb_node_get_float (node, "alpha", 0.2f);
      p->beta = owb_node_get_float (node, "beta", 0.5f);
    }
  else if (strcmp (op, "Shrink") == 0)
    {
      p->lambd = owb_node_get_float (node, "lambd", 0.5f);
      p->bias = owb_node_get_float (node, "bias", 0.0f);
    }
  else if (strcmp (op, "IsInf") == 0)
    {
      p->flag_a = owb_node_get_int (node, "detect_positive", 1) != 0;
      p->flag_b = owb_node_get_int (node, "detect_negative", 1) != 0;
    }
  else if (strcmp (op, "Clip") == 0)
    {
      s->clip_min = owb_node_get_float (node, "min", -INFINITY);
      s->clip_max = owb_node_get_float (node, "max", INFINITY);
    }
  if (strcmp (op, "Celu") == 0 && p->alpha == 0)
    {
      g_free (s);
      return prepare_error (node, error, "alpha must not be 0");
    }
  *state = s;
  return TRUE;
}

static RowFunc
row_for (OwbKernelContext *ctx, const RowFunc *rows, OwbDataType dtype, GError **error)
{
  RowFunc row = rows && dtype > OWB_TYPE_UNDEFINED && dtype < OWB_TYPE_LAST_ ? rows[dtype] : NULL;
  if (!row)
    owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "no kernel for element type %s", owb_data_type_name (dtype));
  return row;
}

static gboolean
is_integer (OwbDataType t)
{
  return (OWB_TYPES_INT & OWB_TYPE_BIT (t)) != 0;
}

static gboolean
has_zero (const OwbTensor *t)
{
  const char *p = t->data;
  gsize size = owb_data_type_size (t->dtype);
  static const char zero[8];
  for (int64_t i = 0; i < t->nelems; i++)
    if (memcmp (p + i * size, zero, size) == 0)
      return TRUE;
  return FALSE;
}

/* Sigmoid on float32 in vectors (cpu-activation.c, within a few ulp of the formula), in chunks
 * over the pool: the scalar row took 2.3 ns an element, the most of a QDQ EfficientNet's run,
 * whose SiLUs stay Sigmoid and Mul between the integer convolutions. */
typedef struct {
  const float *x;
  float *y;
  int64_t n;
} SigmoidJob;

#define SIGMOID_CHUNK 16384

static void
sigmoid_chunks (int64_t begin, int64_t end, gpointer data)
{
  const SigmoidJob *j = data;
  for (int64_t c = begin; c < end; c++)
    {
      int64_t off = c * SIGMOID_CHUNK, len = MIN (SIGMOID_CHUNK, j->n - off);
      if (j->y != j->x)
        memcpy (j->y + off, j->x + off, (size_t) len * sizeof (float));
      _owb_cpu_sigmoid_vector (j->y + off, len, FALSE);
    }
}

static gboolean
sigmoid_fast (OwbKernelContext *ctx)
{
  const OwbTensor *a = ctx->inputs[0];
  OwbTensor *y = ctx->outputs[0];
  float probe = 0;
  if (ctx->n_inputs != 1 || a->dtype != OWB_TYPE_FLOAT || !y || y->dtype != OWB_TYPE_FLOAT || y->nelems != a->nelems
      || !_owb_cpu_sigmoid_vector (&probe, 1, FALSE))
    return FALSE;
  SigmoidJob j = { a->data, y->data, a->nelems };
  owb_parallel_for (ctx->pool, (a->nelems + SIGMOID_CHUNK - 1) / SIGMOID_CHUNK, 1, sigmoid_chunks, &j);
  return TRUE;
}

/* ---- compute: unary and binary ops ---- */
static gboolean
compute_map (OwbKernelContext *ctx, GError **error)
{
  const State *s = ctx->state;
  const OwbTensor *a = ctx->inputs[0];
  if (s->rows == sigmoid_rows && sigmoid_fast (ctx))
    return TRUE;
  RowFunc row = row_for (ctx, s->rows, a->dtype, error);
  if (!row)
    return FALSE;
  WalkInput ins[2] = { walk_input (a) };
  int n_in = 1;
  int64_t dims_b[OWB_MAX_RANK];
  if (ctx->n_inputs >= 2)
    {
      const OwbTensor *b = ctx->inputs[1];
      if (b->dtype != a->dtype)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "inputs are %s and %s", owb_data_type_name (a->dtype),
                                owb_data_type_name (b->dtype));
          return FALSE;
        }
      if (s->check_divisor && is_integer (b->dtype) && has_zero (b))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT, "integer division by zero");
          return FALSE;
        }
      ins[1] = walk_input (b);
      n_in = 2;
      if (s->legacy_broadcast)
        {
          /* B spans A's dims [axis, axis + rank B); the others are broadcast. */
          int64_t axis = s->legacy_axis == G_MININT64 ? a->rank - b->rank : s->legacy_axis;
          if (axis < 0)
            axis += a->rank;
          if (b->rank > a->rank || axis < 0 || axis + b->rank > a->rank)
            {
              owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "B does not fit A at broadcast axis %" G_GINT64_FORMAT,
                                    axis);
              return FALSE;
            }
          for (int i = 0; i < a->rank; i++)
            dims_b[i] = i >= axis && i < axis + b->rank ? b->dims[i - axis] : 1;
          ins[1].rank = a->rank;
          ins[1].dims = dims_b;
        }
      else if (ctx->opset < 7 && strcmp (ctx->node->op_type, "PRelu") == 0 && b->rank == 1 && a->rank >= 2
               && b->dims[0] == a->dims[1] && b->dims[0] != 1)
        {
          /* PRelu before 7: a 1-D slope holds one value per channel (axis 1). */
          for (int i = 0; i < a->rank; i++)
            dims_b[i] = i == 1 ? b->dims[0] : 1;
          ins[1].rank = a->rank;
          ins[1].dims = dims_b;
        }
    }
  return walk (ctx, row, &s->params, n_in, ins, ctx->outputs[0], error);
}

static gboolean
compute_equal (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  if (a->dtype != OWB_TYPE_STRING || b->dtype != OWB_TYPE_STRING)
    return compute_map (ctx, error);
  const State *s = ctx->state;
  WalkInput ins[2] = { walk_input (a), walk_input (b) };
  return walk (ctx, equal_STRING, &s->params, 2, ins, ctx->outputs[0], error);
}

/* ---- Min, Max, Sum, Mean: fold the inputs pairwise into the output ---- */
static gboolean
compute_variadic (OwbKernelContext *ctx, GError **error)
{
  const State *s = ctx->state;
  OwbTensor *out = ctx->outputs[0];
  const OwbTensor *first = ctx->inputs[0];
  RowFunc row = row_for (ctx, s->rows, first->dtype, error);
  if (!row)
    return FALSE;
  for (int i = 1; i < ctx->n_inputs; i++)
    if (!ctx->inputs[i] || ctx->inputs[i]->dtype != first->dtype)
      {
        owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "input %d is missing or not %s", i,
                              owb_data_type_name (first->dtype));
        return FALSE;
      }
  if (ctx->n_inputs == 1)
    {
      if (!owb_tensor_same_shape (first, out))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output shape differs from the input's");
          return FALSE;
        }
      if (out->nbytes)
        memcpy (out->data, first->data, out->nbytes);
      return TRUE;
    }
  for (int i = 1; i < ctx->n_inputs; i++)
    {
      WalkInput ins[2] = { i == 1 ? walk_input (first) : walk_input (out), walk_input (ctx->inputs[i]) };
      if (!walk (ctx, row, &s->params, 2, ins, out, error))
        return FALSE;
    }
  if (strcmp (ctx->node->op_type, "Mean") == 0)
    {
      Params p = { .alpha = ctx->n_inputs };
      RowFunc scale = row_for (ctx, mean_scale_rows, out->dtype, error);
      if (!scale)
        return FALSE;
      WalkInput in = walk_input (out);
      return walk (ctx, scale, &p, 1, &in, out, error);
    }
  return TRUE;
}

/* ---- Pow: same-typed inputs use the typed rows; mixed types go through a double exponent ---- */
EW_FLOATS (UNARY_ROW, square, SAME, x * x)
ROWS (square, EW_FLOATS)

static gboolean
compute_pow (OwbKernelContext *ctx, GError **error)
{
  const State *s = ctx->state;
  const OwbTensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  if (a->dtype == b->dtype && !s->legacy_broadcast && b->nelems == 1 && owb_tensor_same_shape (a, ctx->outputs[0])
      && (a->dtype == OWB_TYPE_FLOAT || a->dtype == OWB_TYPE_DOUBLE))
    {
      /* x^2 and x^0.5 are common in decomposed normalisations. */
      double e = owb_tensor_get_double (b, 0);
      const RowFunc *rows = e == 2.0 ? square_rows : e == 0.5 ? sqrt_rows : NULL;
      if (rows)
        {
          WalkInput in = walk_input (a);
          return walk (ctx, rows[a->dtype], &s->params, 1, &in, ctx->outputs[0], error);
        }
    }
  if (a->dtype == b->dtype)
    return compute_map (ctx, error);
  RowFunc row = row_for (ctx, pow_mixed_rows, a->dtype, error);
  if (!row)
    return FALSE;
  g_autoptr (OwbTensor) exponent = owb_tensor_cast (b, OWB_TYPE_DOUBLE, error);
  if (!exponent)
    return FALSE;
  WalkInput ins[2] = { walk_input (a), walk_input (exponent) };
  return walk (ctx, row, &s->params, 2, ins, ctx->outputs[0], error);
}

/* ---- Clip ---- */
#define CLIP_BOUNDS_FLOAT(TYPE, N, ...)                                                                        \
  case OWB_TYPE_##N:                                                                                            \
    ((TYPE *) bounds)[0] = lo ? *(const TYPE *) lo->data : (TYPE) s->clip_min;                                 \
    ((TYPE *) bounds)[1] = hi ? *(const TYPE *) hi->data : (TYPE) s->clip_max;                                 \
    break;
#define CLIP_BOUNDS_SIGNED(TYPE, N, ...)                                                                       \
  case OWB_TYPE_##N:                                                                                            \
    ((TYPE *) bounds)[0] = lo ? *(const TYPE *) lo->data : (TYPE) ((uint64_t) 1 << (BITS (TYPE) - 1));         \
    ((TYPE *) bounds)[1] = hi ? *(const TYPE *) hi->data : (TYPE) (((uint64_t) 1 << (BITS (TYPE) - 1)) - 1);   \
    break;
#define CLIP_BOUNDS_UNSIGNED(TYPE, N, ...)                                                                     \
  case OWB_TYPE_##N:                                                                                            \
    ((TYPE *) bounds)[0] = lo ? *(const TYPE *) lo->data : 0;                                                  \
    ((TYPE *) bounds)[1] = hi ? *(const TYPE *) hi->data : (TYPE) -1;                                          \
    break;

static gboolean
compute_clip (OwbKernelContext *ctx, GError **error)
{
  const State *s = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  const OwbTensor *lo = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  const OwbTensor *hi = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  for (int i = 1; i < ctx->n_inputs; i++)
    {
      const OwbTensor *t = ctx->inputs[i];
      if (t && (t->dtype != x->dtype || t->nelems != 1))
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT, "%s must be one %s value",
                                i == 1 ? "min" : "max", owb_data_type_name (x->dtype));
          return FALSE;
        }
    }
  RowFunc row = row_for (ctx, clip_rows, x->dtype, error);
  if (!row)
    return FALSE;
  uint64_t storage[2];
  void *bounds = storage;
  switch (x->dtype)
    {
      EW_FLOATS (CLIP_BOUNDS_FLOAT, _)
      EW_SIGNED (CLIP_BOUNDS_SIGNED, _)
      EW_UNSIGNED (CLIP_BOUNDS_UNSIGNED, _)
    default:
      break;
    }
  WalkInput in = walk_input (x);
  return walk (ctx, row, bounds, 1, &in, ctx->outputs[0], error);
}

/* ---- Where ---- */
static gboolean
compute_where (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *c = ctx->inputs[0], *x = ctx->inputs[1], *y = ctx->inputs[2];
  if (c->dtype != OWB_TYPE_BOOL || x->dtype != y->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "needs a bool condition and two values of one type");
      return FALSE;
    }
  RowFunc row;
  switch (x->dtype == OWB_TYPE_STRING ? 0 : _owb_cpu_elem_size (x->dtype))
    {
    case 0: row = where_STRING; break;
    case 1: row = where_1; break;
    case 2: row = where_2; break;
    case 4: row = where_4; break;
    case 8: row = where_8; break;
    default:
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "no kernel for %s", owb_data_type_name (x->dtype));
      return FALSE;
    }
  WalkInput ins[3] = { walk_input (c), walk_input (x), walk_input (y) };
  return walk (ctx, row, NULL, 3, ins, ctx->outputs[0], error);
}

/* ---- Cast ------------------------------------------------------------------------------------
 * Chunks go through a buffer: int64 between integer-like types (so that 64-bit values keep every
 * bit, and out-of-range integers wrap), double otherwise. */
#define CAST_CHUNK 1024

typedef struct {
  int ebits, mbits, bias;
  gboolean uz;        /* no infinities, no negative zero, NaN is 0x80 */
  uint8_t max_code;   /* largest finite magnitude code */
  gboolean finite;    /* no infinity and no NaN: everything saturates */
} MiniFloat;

static const MiniFloat f8_e4m3fn = { 4, 3, 7, FALSE, 0x7E };
static const MiniFloat f8_e4m3fnuz = { 4, 3, 8, TRUE, 0x7F };
static const MiniFloat f8_e5m2 = { 5, 2, 15, FALSE, 0x7B };
static const MiniFloat f8_e5m2fnuz = { 5, 2, 16, TRUE, 0x7F };
static const MiniFloat f4_e2m1 = { 2, 1, 1, FALSE, 0x7, TRUE };
static const MiniFloat f6_e2m3 = { 2, 3, 1, FALSE, 0x1F, TRUE };
static const MiniFloat f6_e3m2 = { 3, 2, 3, FALSE, 0x1F, TRUE };

static const MiniFloat *
minifloat_of (OwbDataType t)
{
  switch (t)
    {
    case OWB_TYPE_FLOAT8E4M3FN: return &f8_e4m3fn;
    case OWB_TYPE_FLOAT8E4M3FNUZ: return &f8_e4m3fnuz;
    case OWB_TYPE_FLOAT8E5M2: return &f8_e5m2;
    case OWB_TYPE_FLOAT8E5M2FNUZ: return &f8_e5m2fnuz;
    case OWB_TYPE_FLOAT4E2M1: return &f4_e2m1;
    case OWB_TYPE_FLOAT6E2M3: return &f6_e2m3;
    case OWB_TYPE_FLOAT6E3M2: return &f6_e3m2;
    default: return NULL;
    }
}

static double
minifloat_decode (const MiniFloat *f, uint8_t v)
{
  int sign_bit = 1 << (f->ebits + f->mbits);
  int emax = (1 << f->ebits) - 1;
  int sign = v & sign_bit;
  int e = (v >> f->mbits) & emax;
  int m = v & ((1 << f->mbits) - 1);
  v &= (uint8_t) (sign_bit | (sign_bit - 1));
  if (f->uz && v == sign_bit)
    return NAN;
  if (!f->uz && f->ebits == 4 && e == emax && m == (1 << f->mbits) - 1)
    return sign ? -NAN : NAN;
  if (!f->uz && f->ebits == 5 && e == emax)
    return m ? (sign ? -NAN : NAN) : (sign ? -INFINITY : INFINITY);
  double mag = e == 0 ? ldexp (m, 1 - f->bias - f->mbits) : ldexp (m + (1 << f->mbits), e - f->bias - f->mbits);
  return sign ? -mag : mag;
}

/* Round to nearest even; out of range saturates to the largest finite value, or (saturate off)
 * becomes infinity (E5M2) or NaN. Infinities saturate too, except into the FNUZ types before
 * opset 24 (uz_inf_saturates FALSE), which made them NaN. float4 and float6 have neither
 * infinity nor NaN and always saturate; ONNX's float6 notes make NaN the largest positive value
 * and -0 plain 0 there. */
static uint8_t
minifloat_encode (const MiniFloat *f, double v, gboolean saturate, gboolean uz_inf_saturates)
{
  gboolean inf_saturates = uz_inf_saturates || !f->uz;
  int sign_bit = 1 << (f->ebits + f->mbits);
  gboolean is_f6 = f == &f6_e2m3 || f == &f6_e3m2;
  if (is_f6 && (isnan (v) || v == 0))
    return isnan (v) ? f->max_code : 0;
  gboolean neg = signbit (v) != 0;
  gboolean is_f4 = f == &f4_e2m1;
  uint8_t nan_code = f->uz ? 0x80 : (is_f4 ? (uint8_t) sign_bit : (uint8_t) ((neg ? sign_bit : 0) | 0x7F));
  if (f->ebits == 5 && !f->uz && isnan (v))
    nan_code = (uint8_t) ((neg ? sign_bit : 0) | 0x7E);
  if (isnan (v))
    return nan_code;
  uint8_t sign = neg ? (uint8_t) sign_bit : 0;
  uint8_t overflow;
  if (f->finite || (saturate && (!isinf (v) || inf_saturates)))
    overflow = sign | f->max_code;
  else if (f->ebits == 5 && !f->uz)
    overflow = sign | 0x7C;
  else
    overflow = f->uz ? 0x80 : (uint8_t) (sign | 0x7F);
  double a = fabs (v);
  if (isinf (a))
    return overflow;
  if (a == 0)
    return f->uz ? 0 : sign;
  int ex;
  frexp (a, &ex);
  int be = ex - 1 + f->bias;
  if (be > (1 << f->ebits) + 1)
    return overflow;
  double quantum = be < 1 ? ldexp (1.0, 1 - f->bias - f->mbits) : ldexp (1.0, ex - 1 - f->mbits);
  double k = nearbyint (a / quantum);
  int64_t code = be < 1 ? (int64_t) k : ((int64_t) be << f->mbits) + (int64_t) k - (1 << f->mbits);
  if (code > f->max_code)
    return overflow;
  if (code == 0 && f->uz)
    return 0;
  return (uint8_t) (sign | code);
}

/* float8e8m0 is a bare exponent: 2^(code - 127), 0xFF is NaN; no sign, no zero. */
typedef enum {
  E8M0_UP,     /* away from zero: the next power of two up */
  E8M0_DOWN,   /* towards zero */
  E8M0_NEAREST /* nearest, ties (1.5 * 2^e) up */
} E8M0Round;

static double
e8m0_decode (uint8_t v)
{
  return v == 0xFF ? NAN : ldexp (1.0, (int) v - 127);
}

/* Rounds |v| to a power of two as round_mode says (the sign is undefined in ONNX and ignored).
 * What falls outside [2^-127, 2^127] (zero and infinity included) saturates to the nearest end,
 * or is NaN with saturate off, as the table in ONNX's Cast description has it. */
static uint8_t
e8m0_encode (double v, gboolean saturate, E8M0Round round)
{
  if (isnan (v))
    return 0xFF;
  double a = fabs (v);
  if (isinf (a))
    return saturate ? 0xFE : 0xFF;
  if (a == 0)
    return saturate ? 0x00 : 0xFF;
  int ex;
  double frac = frexp (a, &ex); /* a = frac * 2^ex, frac in [0.5, 1) */
  int e = ex - 1;
  if ((round == E8M0_UP && frac > 0.5) || (round == E8M0_NEAREST && frac >= 0.75))
    e++;
  if (e > 127)
    return saturate ? 0xFE : 0xFF;
  if (e < -127)
    return saturate ? 0x00 : 0xFF;
  return (uint8_t) (e + 127);
}

static gboolean
is_int_like (OwbDataType t)
{
  return t == OWB_TYPE_BOOL || t == OWB_TYPE_INT4 || t == OWB_TYPE_UINT4 || t == OWB_TYPE_INT2 || t == OWB_TYPE_UINT2
         || is_integer (t);
}

#define LOAD_LOOP(TYPE, BUF_T)                                                                                 \
  for (int64_t i = 0; i < n; i++)                                                                               \
    buf[i] = (BUF_T) ((const TYPE *) src)[i];
#define LOAD_I64(TYPE, N)                                                                                      \
  case OWB_TYPE_##N: LOAD_LOOP (TYPE, int64_t) break;

static void
load_i64 (OwbDataType t, const void *src, int64_t n, int64_t *buf)
{
  switch (t)
    {
      OWB_CPU_FOR_ALL (LOAD_I64)
    case OWB_TYPE_INT4:
    case OWB_TYPE_INT2: LOAD_LOOP (int8_t, int64_t) break;
    case OWB_TYPE_UINT4:
    case OWB_TYPE_UINT2: LOAD_LOOP (uint8_t, int64_t) break;
    default:
      break;
    }
}

#define STORE_I64(TYPE, N)                                                                                     \
  case OWB_TYPE_##N:                                                                                            \
    for (int64_t i = 0; i < n; i++)                                                                             \
      ((TYPE *) dst)[i] = (TYPE) buf[i];                                                                        \
    break;

/* int4/uint4 (int2/uint2) keep the low 4 (2) bits, sign-extended for the signed ones, as
 * wrapping integer casts do. */
static void
store_i64 (OwbDataType t, const int64_t *buf, int64_t n, void *dst)
{
  switch (t)
    {
      OWB_CPU_FOR_INTS (STORE_I64)
    case OWB_TYPE_BOOL:
      for (int64_t i = 0; i < n; i++)
        ((uint8_t *) dst)[i] = buf[i] != 0;
      break;
    case OWB_TYPE_INT4:
      for (int64_t i = 0; i < n; i++)
        ((int8_t *) dst)[i] = (int8_t) ((buf[i] & 0xF) ^ 0x8) - 8;
      break;
    case OWB_TYPE_UINT4:
      for (int64_t i = 0; i < n; i++)
        ((uint8_t *) dst)[i] = (uint8_t) (buf[i] & 0xF);
      break;
    case OWB_TYPE_INT2:
      for (int64_t i = 0; i < n; i++)
        ((int8_t *) dst)[i] = (int8_t) ((buf[i] & 0x3) ^ 0x2) - 2;
      break;
    case OWB_TYPE_UINT2:
      for (int64_t i = 0; i < n; i++)
        ((uint8_t *) dst)[i] = (uint8_t) (buf[i] & 0x3);
      break;
    default:
      break;
    }
}

#define LOAD_F64(TYPE, N)                                                                                      \
  case OWB_TYPE_##N: LOAD_LOOP (TYPE, double) break;

static void
load_f64 (OwbDataType t, const void *src, int64_t n, double *buf)
{
  const MiniFloat *mf = minifloat_of (t);
  switch (t)
    {
      OWB_CPU_FOR_ALL (LOAD_F64)
    case OWB_TYPE_INT4:
    case OWB_TYPE_INT2: LOAD_LOOP (int8_t, double) break;
    case OWB_TYPE_UINT4:
    case OWB_TYPE_UINT2: LOAD_LOOP (uint8_t, double) break;
    case OWB_TYPE_FLOAT8E8M0:
      for (int64_t i = 0; i < n; i++)
        buf[i] = e8m0_decode (((const uint8_t *) src)[i]);
      break;
    case OWB_TYPE_FLOAT16:
      for (int64_t i = 0; i < n; i++)
        buf[i] = owb_half_to_float (((const uint16_t *) src)[i]);
      break;
    case OWB_TYPE_BFLOAT16:
      for (int64_t i = 0; i < n; i++)
        buf[i] = owb_bfloat16_to_float (((const uint16_t *) src)[i]);
      break;
    default:
      if (mf)
        for (int64_t i = 0; i < n; i++)
          buf[i] = minifloat_decode (mf, ((const uint8_t *) src)[i]);
      break;
    }
}

/* Floats to integers: C conversion, with NaN and out-of-range values (undefined in ONNX) kept
 * away from undefined behaviour by going through int64 for the narrow types. */
#define STORE_F64_FLOAT(TYPE, N)                                                                               \
  case OWB_TYPE_##N:                                                                                            \
    for (int64_t i = 0; i < n; i++)                                                                             \
      ((TYPE *) dst)[i] = (TYPE) buf[i];                                                                        \
    break;
#define STORE_F64_INT(TYPE, N)                                                                                 \
  case OWB_TYPE_##N:                                                                                            \
    for (int64_t i = 0; i < n; i++)                                                                             \
      ((TYPE *) dst)[i] = (TYPE) double_to_i64 (buf[i]);                                                        \
    break;

static void
store_f64 (OwbDataType t, const double *buf, int64_t n, void *dst, gboolean saturate, gboolean uz_inf_saturates,
           E8M0Round round)
{
  const MiniFloat *mf = minifloat_of (t);
  switch (t)
    {
      OWB_CPU_FOR_FLOATS (STORE_F64_FLOAT)
      OWB_CPU_FOR_SIGNED (STORE_F64_INT)
      STORE_F64_INT (uint8_t, UINT8)
      STORE_F64_INT (uint16_t, UINT16)
      STORE_F64_INT (uint32_t, UINT32)
    case OWB_TYPE_UINT64:
      for (int64_t i = 0; i < n; i++)
        ((uint64_t *) dst)[i] = buf[i] >= 9223372036854775808.0 && buf[i] < 18446744073709551616.0
                                    ? (uint64_t) buf[i]
                                    : (uint64_t) double_to_i64 (buf[i]);
      break;
    case OWB_TYPE_BOOL:
      for (int64_t i = 0; i < n; i++)
        ((uint8_t *) dst)[i] = buf[i] != 0;
      break;
    case OWB_TYPE_INT4:
    case OWB_TYPE_UINT4:
    case OWB_TYPE_INT2:
    case OWB_TYPE_UINT2:
      {
        int64_t ibuf[CAST_CHUNK];
        for (int64_t i = 0; i < n; i++)
          ibuf[i] = double_to_i64 (nearbyint (buf[i]));
        store_i64 (t, ibuf, n, dst);
      }
      break;
    case OWB_TYPE_FLOAT16:
      for (int64_t i = 0; i < n; i++)
        ((uint16_t *) dst)[i] = owb_float_to_half ((float) buf[i]);
      break;
    case OWB_TYPE_BFLOAT16:
      for (int64_t i = 0; i < n; i++)
        ((uint16_t *) dst)[i] = owb_float_to_bfloat16 ((float) buf[i]);
      break;
    case OWB_TYPE_FLOAT8E8M0:
      for (int64_t i = 0; i < n; i++)
        ((uint8_t *) dst)[i] = e8m0_encode (buf[i], saturate, round);
      break;
    default:
      if (mf)
        for (int64_t i = 0; i < n; i++)
          ((uint8_t *) dst)[i] = minifloat_encode (mf, buf[i], saturate, uz_inf_saturates);
      break;
    }
}

/* Numbers to text as ORT writes them: shortest round-trip digits, INF/-INF/NaN. */
static char *
number_to_string (OwbDataType from, double d, int64_t i)
{
  if (from == OWB_TYPE_UINT64)
    return g_strdup_printf ("%" G_GUINT64_FORMAT, (guint64) i);
  if (is_int_like (from))
    return g_strdup_printf ("%" G_GINT64_FORMAT, i);
  if (isnan (d))
    return g_strdup ("NaN");
  if (isinf (d))
    return g_strdup (d > 0 ? "INF" : "-INF");
  char tmp[G_ASCII_DTOSTR_BUF_SIZE];
  if (from == OWB_TYPE_DOUBLE)
    return g_strdup (g_ascii_dtostr (tmp, sizeof tmp, d));
  return g_strdup (g_ascii_formatd (tmp, sizeof tmp, "%.9g", d));
}

/* Text to numbers: integers exactly when the text is one, otherwise as a double (INF/NaN in
 * any case). */
static void
string_to_number (const char *s, double *d, int64_t *i, gboolean *is_int)
{
  char *end = NULL;
  s = s ? s : "";
  while (g_ascii_isspace (*s))
    s++;
  gint64 v = g_ascii_strtoll (s, &end, 10);
  if (end != s && *end == '\0')
    {
      *i = v;
      *d = (double) v;
      *is_int = TRUE;
      return;
    }
  *d = g_ascii_strtod (s, NULL);
  *i = double_to_i64 (*d);
  *is_int = FALSE;
}

typedef struct {
  const OwbTensor *in;
  OwbTensor *out;
  gboolean saturate, uz_inf_saturates;
  E8M0Round round;
} CastJob;

static void
cast_range (int64_t begin, int64_t end, gpointer data)
{
  const CastJob *job = data;
  OwbDataType from = job->in->dtype, to = job->out->dtype;
  gsize in_size = _owb_cpu_elem_size (from), out_size = _owb_cpu_elem_size (to);
  gboolean via_int = is_int_like (from) && is_int_like (to);
  for (int64_t c = begin; c < end; c += CAST_CHUNK)
    {
      int64_t n = MIN (CAST_CHUNK, end - c);
      const char *src = (const char *) job->in->data + c * in_size;
      char *dst = (char *) job->out->data + c * out_size;
      double dbuf[CAST_CHUNK];
      int64_t ibuf[CAST_CHUNK];
      if (from == OWB_TYPE_STRING && to == OWB_TYPE_STRING)
        for (int64_t i = 0; i < n; i++)
          {
            const char *v = ((char *const *) src)[i];
            g_free (((char **) dst)[i]);
            ((char **) dst)[i] = g_strdup (v ? v : "");
          }
      else if (from == OWB_TYPE_STRING)
        {
          gboolean all_int = TRUE;
          for (int64_t i = 0; i < n; i++)
            {
              gboolean is_int;
              string_to_number (((char *const *) src)[i], &dbuf[i], &ibuf[i], &is_int);
              all_int &= is_int;
            }
          if (is_int_like (to) && all_int)
            store_i64 (to, ibuf, n, dst);
          else
            store_f64 (to, dbuf, n, dst, job->saturate, job->uz_inf_saturates, job->round);
        }
      else if (to == OWB_TYPE_STRING)
        {
          if (is_int_like (from))
            load_i64 (from, src, n, ibuf);
          else
            load_f64 (from, src, n, dbuf);
          for (int64_t i = 0; i < n; i++)
            {
              g_free (((char **) dst)[i]);
              ((char **) dst)[i] = number_to_string (from, is_int_like (from) ? 0 : dbuf[i], is_int_like (from) ? ibuf[i] : 0);
            }
        }
      else if (via_int)
        {
          load_i64 (from, src, n, ibuf);
          store_i64 (to, ibuf, n, dst);
        }
      else
        {
          load_f64 (from, src, n, dbuf);
          store_f64 (to, dbuf, n, dst, job->saturate, job->uz_inf_saturates, job->round);
        }
    }
}

static gboolean
castable (OwbDataType t)
{
  return t > OWB_TYPE_UNDEFINED && t < OWB_TYPE_LAST_ && t != OWB_TYPE_COMPLEX64 && t != OWB_TYPE_COMPLEX128;
}

static gboolean
prepare_cast (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state, GError **error)
{
  State *s = g_new0 (State, 1);
  s->saturate = owb_node_get_int (node, "saturate", 1) != 0;
  const char *round = owb_node_get_string (node, "round_mode", "up");
  if (strcmp (round, "up") == 0)
    s->round_mode = E8M0_UP;
  else if (strcmp (round, "down") == 0)
    s->round_mode = E8M0_DOWN;
  else if (strcmp (round, "nearest") == 0)
    s->round_mode = E8M0_NEAREST;
  else
    {
      g_free (s);
      return prepare_error (node, error, "round_mode must be \"up\", \"down\" or \"nearest\"");
    }
  const OwbAttribute *to = owb_node_get_attribute (node, "to");
  if (strcmp (node->op_type, "Cast") == 0 && to && to->type == OWB_ATTR_INT)
    {
      if (to->i <= 0 || to->i >= OWB_TYPE_LAST_ || !castable ((OwbDataType) to->i))
        {
          char *who = owb_node_describe (node);
          g_set_error (error, OWB_ERROR, OWB_ERROR_UNSUPPORTED_OP, "%s: cannot cast to element type %" G_GINT64_FORMAT,
                       who, to->i);
          g_free (who);
          g_free (s);
          return FALSE;
        }
      s->cast_to = (OwbDataType) to->i;
    }
  *state = s;
  return TRUE;
}

static gboolean
compute_cast (OwbKernelContext *ctx, GError **error)
{
  const State *s = ctx->state;
  const OwbTensor *in = ctx->inputs[0];
  OwbTensor *out = ctx->outputs[0];
  if (!castable (in->dtype) || !castable (out->dtype) || in->nelems != out->nelems)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "cannot cast %s to %s", owb_data_type_name (in->dtype),
                            owb_data_type_name (out->dtype));
      return FALSE;
    }
  if (in->dtype == out->dtype && in->dtype != OWB_TYPE_STRING)
    {
      if (out->nbytes)
        memcpy (out->data, in->data, out->nbytes);
      return TRUE;
    }
  CastJob job = { in, out, s->saturate, ctx->opset >= 24, (E8M0Round) s->round_mode };
  owb_parallel_for (ctx->pool, in->nelems, 4 * CAST_CHUNK, cast_range, &job);
  return TRUE;
}

/* ---- The table -------------------------------------------------------------------------------- */
#define FLOATS OWB_CPU_TYPES_FLOATS
#define NUMERIC OWB_CPU_TYPES_NUMERIC
#define INTS OWB_TYPES_INT
#define SIGNED_NUMERIC (OWB_CPU_TYPES_FLOATS | OWB_TYPES_SIGNED_INT)
#define BOOL OWB_TYPE_BIT (OWB_TYPE_BOOL)
/* Types handled natively (float16 included), so the provider does not convert around them. */
#define CAST_TYPES                                                                                              \
  (OWB_CPU_TYPES_ALL | OWB_TYPE_BIT (OWB_TYPE_STRING) | OWB_TYPE_BIT (OWB_TYPE_FLOAT16)                        \
   | OWB_TYPE_BIT (OWB_TYPE_BFLOAT16) | OWB_TYPE_BIT (OWB_TYPE_FLOAT8E4M3FN) | OWB_TYPE_BIT (OWB_TYPE_FLOAT8E4M3FNUZ) \
   | OWB_TYPE_BIT (OWB_TYPE_FLOAT8E5M2) | OWB_TYPE_BIT (OWB_TYPE_FLOAT8E5M2FNUZ) | OWB_TYPE_BIT (OWB_TYPE_UINT4)   \
   | OWB_TYPE_BIT (OWB_TYPE_INT4) | OWB_TYPE_BIT (OWB_TYPE_FLOAT4E2M1) | OWB_TYPE_BIT (OWB_TYPE_FLOAT8E8M0)          \
   | OWB_TYPE_BIT (OWB_TYPE_UINT2) | OWB_TYPE_BIT (OWB_TYPE_INT2) | OWB_TYPE_BIT (OWB_TYPE_FLOAT6E2M3)            \
   | OWB_TYPE_BIT (OWB_TYPE_FLOAT6E3M2))
#define WHERE_TYPES (OWB_CPU_TYPES_ALL | OWB_TYPE_BIT (OWB_TYPE_STRING) | OWB_TYPE_BIT (OWB_TYPE_FLOAT16) | OWB_TYPE_BIT (OWB_TYPE_BFLOAT16))

#define MAP(op, since, types) { op, "", since, 0, types, 0, prepare_elementwise, g_free, compute_map }

const OwbKernelDef _owb_cpu_kernels_elementwise[] = {
  MAP ("Add", 1, NUMERIC),
  MAP ("Sub", 1, NUMERIC),
  MAP ("Mul", 1, NUMERIC),
  MAP ("Div", 1, NUMERIC),
  { "Pow", "", 1, 0, NUMERIC, 0, prepare_elementwise, g_free, compute_pow },
  MAP ("Mod", 10, NUMERIC),
  MAP ("BitShift", 11, INTS),
  MAP ("Sqrt", 1, FLOATS),
  MAP ("Exp", 1, FLOATS),
  MAP ("Log", 1, FLOATS),
  MAP ("Neg", 1, SIGNED_NUMERIC),
  MAP ("Abs", 1, NUMERIC),
  MAP ("Reciprocal", 1, FLOATS),
  MAP ("Floor", 1, FLOATS),
  MAP ("Ceil", 1, FLOATS),
  MAP ("Round", 11, FLOATS),
  MAP ("Sign", 9, NUMERIC),
  MAP ("Erf", 9, FLOATS),
  MAP ("Sin", 7, FLOATS),
  MAP ("Cos", 7, FLOATS),
  MAP ("Tan", 7, FLOATS),
  MAP ("Asin", 7, FLOATS),
  MAP ("Acos", 7, FLOATS),
  MAP ("Atan", 7, FLOATS),
  MAP ("Sinh", 9, FLOATS),
  MAP ("Cosh", 9, FLOATS),
  MAP ("Asinh", 9, FLOATS),
  MAP ("Acosh", 9, FLOATS),
  MAP ("Atanh", 9, FLOATS),
  MAP ("Relu", 1, SIGNED_NUMERIC),
  MAP ("LeakyRelu", 1, FLOATS),
  MAP ("Sigmoid", 1, FLOATS),
  MAP ("Tanh", 1, FLOATS),
  { "Clip", "", 1, 0, NUMERIC, 0, prepare_elementwise, g_free, compute_clip },
  MAP ("HardSigmoid", 1, FLOATS),
  MAP ("HardSwish", 14, FLOATS),
  MAP ("Gelu", 20, FLOATS),
  MAP ("Softplus", 1, FLOATS),
  MAP ("Softsign", 1, FLOATS),
  MAP ("Elu", 1, FLOATS),
  MAP ("Selu", 1, FLOATS),
  MAP ("Celu", 12, FLOATS),
  MAP ("ThresholdedRelu", 10, FLOATS),
  MAP ("Mish", 18, FLOATS),
  MAP ("Shrink", 9, NUMERIC),
  MAP ("PRelu", 1, NUMERIC),
  { "Min", "", 1, 0, NUMERIC, 0, prepare_elementwise, g_free, compute_variadic },
  { "Max", "", 1, 0, NUMERIC, 0, prepare_elementwise, g_free, compute_variadic },
  { "Sum", "", 1, 0, NUMERIC, 0, prepare_elementwise, g_free, compute_variadic },
  { "Mean", "", 1, 0, FLOATS, 0, prepare_elementwise, g_free, compute_variadic },
  { "Where", "", 9, 0, WHERE_TYPES, 1, NULL, NULL, compute_where },
  { "Equal", "", 1, 0, NUMERIC | BOOL | OWB_TYPE_BIT (OWB_TYPE_STRING), 0, prepare_elementwise, g_free, compute_equal },
  MAP ("Less", 1, NUMERIC),
  MAP ("Greater", 1, NUMERIC),
  MAP ("LessOrEqual", 12, NUMERIC),
  MAP ("GreaterOrEqual", 12, NUMERIC),
  MAP ("Not", 1, BOOL),
  MAP ("And", 1, BOOL),
  MAP ("Or", 1, BOOL),
  MAP ("Xor", 1, BOOL),
  MAP ("BitwiseAnd", 18, INTS),
  MAP ("BitwiseOr", 18, INTS),
  MAP ("BitwiseXor", 18, INTS),
  MAP ("BitwiseNot", 18, INTS),
  MAP ("IsNaN", 9, FLOATS),
  MAP ("IsInf", 10, FLOATS),
  { "Cast", "", 1, 0, CAST_TYPES, 0, prepare_cast, g_free, compute_cast },
  { "CastLike", "", 15, 0, CAST_TYPES, 0, prepare_cast, g_free, compute_cast },
  { NULL }
};
