/* elementwise-device.cu: unary ops and activations, binary ops with broadcasting, the bias +
 * activation epilogue, Where and Cast: one template family over the stored type (float, half),
 * computing in float. */
#include "device-common.cuh"

#include <type_traits>

using namespace owb_cuda;

__device__ __forceinline__ float sigmoidf (float x) { return 1.0f / (1.0f + expf (-x)); }

__device__ __forceinline__ float apply_unary (OwbCudaUnaryOp op, float x, float p0, float p1)
{
  switch (op)
    {
    case OWB_CUDA_UNARY_IDENTITY: return x;
    case OWB_CUDA_UNARY_RELU: return x > 0.0f ? x : 0.0f;
    case OWB_CUDA_UNARY_LEAKY_RELU: return x >= 0.0f ? x : p0 * x;
    case OWB_CUDA_UNARY_CLIP: return fminf (fmaxf (x, p0), p1);
    case OWB_CUDA_UNARY_SIGMOID: return sigmoidf (x);
    case OWB_CUDA_UNARY_TANH: return tanhf (x);
    case OWB_CUDA_UNARY_HARD_SIGMOID: return fminf (fmaxf (p0 * x + p1, 0.0f), 1.0f);
    case OWB_CUDA_UNARY_HARD_SWISH: return x * fminf (fmaxf (p0 * x + p1, 0.0f), 1.0f);
    case OWB_CUDA_UNARY_SWISH: return x * sigmoidf (p0 * x);
    case OWB_CUDA_UNARY_GELU: return 0.5f * x * (1.0f + erff (x * 0.70710678118654752f));
    case OWB_CUDA_UNARY_GELU_TANH:
      return 0.5f * x * (1.0f + tanhf (0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case OWB_CUDA_UNARY_ELU: return x >= 0.0f ? x : p0 * expm1f (x);
    case OWB_CUDA_UNARY_SELU: return x > 0.0f ? p1 * x : p1 * p0 * expm1f (x);
    case OWB_CUDA_UNARY_CELU: return fmaxf (0.0f, x) + fminf (0.0f, p0 * expm1f (x / p0));
    case OWB_CUDA_UNARY_SOFTPLUS: return x > 20.0f ? x : log1pf (expf (x));
    case OWB_CUDA_UNARY_SOFTSIGN: return x / (1.0f + fabsf (x));
    case OWB_CUDA_UNARY_MISH: return x * tanhf (x > 20.0f ? x : log1pf (expf (x)));
    case OWB_CUDA_UNARY_THRESHOLDED_RELU: return x > p0 ? x : 0.0f;
    case OWB_CUDA_UNARY_EXP: return expf (x);
    case OWB_CUDA_UNARY_LOG: return logf (x);
    case OWB_CUDA_UNARY_SQRT: return sqrtf (x);
    case OWB_CUDA_UNARY_RECIPROCAL: return 1.0f / x;
    case OWB_CUDA_UNARY_ABS: return fabsf (x);
    case OWB_CUDA_UNARY_NEG: return -x;
    case OWB_CUDA_UNARY_ERF: return erff (x);
    case OWB_CUDA_UNARY_FLOOR: return floorf (x);
    case OWB_CUDA_UNARY_CEIL: return ceilf (x);
    case OWB_CUDA_UNARY_ROUND: return rintf (x);
    case OWB_CUDA_UNARY_SIGN: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);
    case OWB_CUDA_UNARY_SIN: return sinf (x);
    case OWB_CUDA_UNARY_COS: return cosf (x);
    }
  return x;
}

/* The op is a template parameter for the common activations, so their loops carry no switch. */
template <typename T, int OP>
__global__ void unary_kernel (const T *x, T *y, int64_t n, float p0, float p1)
{
  OWB_CUDA_GRID_LOOP (i, n)
    store (y, i, apply_unary ((OwbCudaUnaryOp) OP, load (x, i), p0, p1));
}

template <typename T>
__global__ void unary_any_kernel (OwbCudaUnaryOp op, const T *x, T *y, int64_t n, float p0, float p1)
{
  OWB_CUDA_GRID_LOOP (i, n)
    store (y, i, apply_unary (op, load (x, i), p0, p1));
}

template <typename T>
static cudaError_t launch_unary (OwbCudaUnaryOp op, float p0, float p1, const void *xv, void *yv, int64_t n,
                                 cudaStream_t s)
{
  const T *x = (const T *) xv;
  T *y = (T *) yv;
  unsigned b = blocks_for (n);
  switch (op)
    {
    case OWB_CUDA_UNARY_RELU: unary_kernel<T, OWB_CUDA_UNARY_RELU><<<b, kThreads, 0, s>>> (x, y, n, p0, p1); break;
    case OWB_CUDA_UNARY_SIGMOID: unary_kernel<T, OWB_CUDA_UNARY_SIGMOID><<<b, kThreads, 0, s>>> (x, y, n, p0, p1); break;
    case OWB_CUDA_UNARY_GELU: unary_kernel<T, OWB_CUDA_UNARY_GELU><<<b, kThreads, 0, s>>> (x, y, n, p0, p1); break;
    case OWB_CUDA_UNARY_CLIP: unary_kernel<T, OWB_CUDA_UNARY_CLIP><<<b, kThreads, 0, s>>> (x, y, n, p0, p1); break;
    default: unary_any_kernel<T><<<b, kThreads, 0, s>>> (op, x, y, n, p0, p1); break;
    }
  return cudaGetLastError ();
}

extern "C" cudaError_t
_owb_cuda_unary (OwbCudaFloat t, OwbCudaUnaryOp op, float p0, float p1, const void *x, void *y, int64_t n,
                 cudaStream_t stream)
{
  if (n <= 0)
    return cudaSuccess;
  return t == OWB_CUDA_F16 ? launch_unary<__half> (op, p0, p1, x, y, n, stream)
                           : launch_unary<float> (op, p0, p1, x, y, n, stream);
}

__device__ __forceinline__ float apply_binary (OwbCudaBinaryOp op, float a, float b)
{
  switch (op)
    {
    case OWB_CUDA_BINARY_ADD: return a + b;
    case OWB_CUDA_BINARY_SUB: return a - b;
    case OWB_CUDA_BINARY_MUL: return a * b;
    case OWB_CUDA_BINARY_DIV: return a / b;
    case OWB_CUDA_BINARY_POW: return powf (a, b);
    case OWB_CUDA_BINARY_MAX: return (a != a || b != b) ? a + b : fmaxf (a, b);
    case OWB_CUDA_BINARY_MIN: return (a != a || b != b) ? a + b : fminf (a, b);
    case OWB_CUDA_BINARY_PRELU: return a < 0.0f ? a * b : a;
    default: return 0.0f;
    }
}

__device__ __forceinline__ bool apply_compare (OwbCudaBinaryOp op, float a, float b)
{
  switch (op)
    {
    case OWB_CUDA_BINARY_EQUAL: return a == b;
    case OWB_CUDA_BINARY_LESS: return a < b;
    case OWB_CUDA_BINARY_LESS_OR_EQUAL: return a <= b;
    case OWB_CUDA_BINARY_GREATER: return a > b;
    default: return a >= b;
    }
}

template <typename T, typename O, bool CMP, bool BCAST>
__global__ void binary_kernel (OwbCudaBinaryOp op, const T *a, const T *b, O *y, int64_t n, OwbCudaBroadcast m)
{
  OWB_CUDA_GRID_LOOP (i, n)
    {
      int64_t ia = BCAST ? broadcast_offset (m, 0, i) : i;
      int64_t ib = BCAST ? broadcast_offset (m, 1, i) : i;
      float x = load (a, ia), z = load (b, ib);
      if constexpr (CMP)
        y[i] = apply_compare (op, x, z) ? 1 : 0;
      else
        store (y, i, apply_binary (op, x, z));
    }
}

template <typename T>
static cudaError_t launch_binary (OwbCudaBinaryOp op, const void *av, const void *bv, void *yv, int64_t n,
                                  const OwbCudaBroadcast *map, cudaStream_t s)
{
  const T *a = (const T *) av, *b = (const T *) bv;
  unsigned g = blocks_for (n);
  OwbCudaBroadcast m = {};
  if (map)
    m = *map;
  bool cmp = op >= OWB_CUDA_BINARY_EQUAL;
  if (cmp && map)
    binary_kernel<T, uint8_t, true, true><<<g, kThreads, 0, s>>> (op, a, b, (uint8_t *) yv, n, m);
  else if (cmp)
    binary_kernel<T, uint8_t, true, false><<<g, kThreads, 0, s>>> (op, a, b, (uint8_t *) yv, n, m);
  else if (map)
    binary_kernel<T, T, false, true><<<g, kThreads, 0, s>>> (op, a, b, (T *) yv, n, m);
  else
    binary_kernel<T, T, false, false><<<g, kThreads, 0, s>>> (op, a, b, (T *) yv, n, m);
  return cudaGetLastError ();
}

extern "C" cudaError_t
_owb_cuda_binary (OwbCudaFloat t, OwbCudaBinaryOp op, const void *a, const void *b, void *y, int64_t n,
                  const OwbCudaBroadcast *map, cudaStream_t stream)
{
  if (n <= 0)
    return cudaSuccess;
  return t == OWB_CUDA_F16 ? launch_binary<__half> (op, a, b, y, n, map, stream)
                           : launch_binary<float> (op, a, b, y, n, map, stream);
}

template <typename T>
__global__ void bias_act_kernel (OwbCudaUnaryOp act, float p0, float p1, T *y, const T *bias, const T *z, int64_t n,
                                 int64_t channels, int64_t inner)
{
  OWB_CUDA_GRID_LOOP (i, n)
    {
      float v = load (y, i);
      if (bias)
        v += load (bias, (i / inner) % channels);
      if (z)
        v += load (z, i);
      store (y, i, apply_unary (act, v, p0, p1));
    }
}

extern "C" cudaError_t
_owb_cuda_bias_activation (OwbCudaFloat t, OwbCudaUnaryOp act, float p0, float p1, void *y, const void *bias,
                           const void *z, int64_t n, int64_t channels, int64_t inner, cudaStream_t stream)
{
  if (n <= 0 || (act == OWB_CUDA_UNARY_IDENTITY && !bias && !z))
    return cudaSuccess;
  unsigned g = blocks_for (n);
  if (t == OWB_CUDA_F16)
    bias_act_kernel<__half><<<g, kThreads, 0, stream>>> (act, p0, p1, (__half *) y, (const __half *) bias,
                                                         (const __half *) z, n, channels, inner);
  else
    bias_act_kernel<float><<<g, kThreads, 0, stream>>> (act, p0, p1, (float *) y, (const float *) bias,
                                                        (const float *) z, n, channels, inner);
  return cudaGetLastError ();
}

template <typename E>
__global__ void where_kernel (const uint8_t *cond, const E *x, const E *y, E *out, int64_t n, OwbCudaBroadcast m)
{
  OWB_CUDA_GRID_LOOP (i, n)
    out[i] = cond[broadcast_offset (m, 0, i)] ? x[broadcast_offset (m, 1, i)] : y[broadcast_offset (m, 2, i)];
}

extern "C" cudaError_t
_owb_cuda_where (int elem_size, const uint8_t *cond, const void *x, const void *y, void *out, int64_t n,
                 const OwbCudaBroadcast *map, cudaStream_t stream)
{
  if (n <= 0)
    return cudaSuccess;
  unsigned g = blocks_for (n);
  switch (elem_size)
    {
    case 1: where_kernel<uint8_t><<<g, kThreads, 0, stream>>> (cond, (const uint8_t *) x, (const uint8_t *) y, (uint8_t *) out, n, *map); break;
    case 2: where_kernel<uint16_t><<<g, kThreads, 0, stream>>> (cond, (const uint16_t *) x, (const uint16_t *) y, (uint16_t *) out, n, *map); break;
    case 4: where_kernel<uint32_t><<<g, kThreads, 0, stream>>> (cond, (const uint32_t *) x, (const uint32_t *) y, (uint32_t *) out, n, *map); break;
    case 8: where_kernel<uint64_t><<<g, kThreads, 0, stream>>> (cond, (const uint64_t *) x, (const uint64_t *) y, (uint64_t *) out, n, *map); break;
    default: return cudaErrorInvalidValue;
    }
  return cudaGetLastError ();
}

/* Cast: every pair of the listed types, converting through double for the integer and float64
 * ones (exact for int32; int64 beyond 2^53 goes through long long directly). */
template <typename T> struct CastIo
{
  __device__ static double get (const T *p, int64_t i) { return (double) p[i]; }
  __device__ static void put (T *p, int64_t i, double v) { p[i] = (T) v; }
};
template <> struct CastIo<__half>
{
  __device__ static double get (const __half *p, int64_t i) { return (double) __half2float (p[i]); }
  __device__ static void put (__half *p, int64_t i, double v) { p[i] = __float2half ((float) v); }
};
struct BoolByte
{
  uint8_t v;
};
template <> struct CastIo<BoolByte>
{
  __device__ static double get (const BoolByte *p, int64_t i) { return p[i].v ? 1.0 : 0.0; }
  __device__ static void put (BoolByte *p, int64_t i, double v) { p[i].v = v != 0.0; }
};

template <typename F, typename T>
__global__ void cast_kernel (const F *x, T *y, int64_t n)
{
  OWB_CUDA_GRID_LOOP (i, n)
    {
      if constexpr (std::is_same<F, int64_t>::value && std::is_same<T, int32_t>::value)
        y[i] = (int32_t) x[i];
      else if constexpr (std::is_same<F, int64_t>::value && std::is_same<T, int64_t>::value)
        y[i] = x[i];
      else
        CastIo<T>::put (y, i, CastIo<F>::get (x, i));
    }
}

template <typename F>
static cudaError_t cast_from (OwbCudaCastType to, const void *x, void *y, int64_t n, cudaStream_t s)
{
  unsigned g = blocks_for (n);
  const F *src = (const F *) x;
  switch (to)
    {
    case OWB_CUDA_CAST_F32: cast_kernel<F, float><<<g, kThreads, 0, s>>> (src, (float *) y, n); break;
    case OWB_CUDA_CAST_F16: cast_kernel<F, __half><<<g, kThreads, 0, s>>> (src, (__half *) y, n); break;
    case OWB_CUDA_CAST_F64: cast_kernel<F, double><<<g, kThreads, 0, s>>> (src, (double *) y, n); break;
    case OWB_CUDA_CAST_I8: cast_kernel<F, int8_t><<<g, kThreads, 0, s>>> (src, (int8_t *) y, n); break;
    case OWB_CUDA_CAST_U8: cast_kernel<F, uint8_t><<<g, kThreads, 0, s>>> (src, (uint8_t *) y, n); break;
    case OWB_CUDA_CAST_I32: cast_kernel<F, int32_t><<<g, kThreads, 0, s>>> (src, (int32_t *) y, n); break;
    case OWB_CUDA_CAST_I64: cast_kernel<F, int64_t><<<g, kThreads, 0, s>>> (src, (int64_t *) y, n); break;
    case OWB_CUDA_CAST_BOOL: cast_kernel<F, BoolByte><<<g, kThreads, 0, s>>> (src, (BoolByte *) y, n); break;
    }
  return cudaGetLastError ();
}

extern "C" cudaError_t
_owb_cuda_cast (OwbCudaCastType from, OwbCudaCastType to, const void *x, void *y, int64_t n, cudaStream_t stream)
{
  if (n <= 0)
    return cudaSuccess;
  switch (from)
    {
    case OWB_CUDA_CAST_F32: return cast_from<float> (to, x, y, n, stream);
    case OWB_CUDA_CAST_F16: return cast_from<__half> (to, x, y, n, stream);
    case OWB_CUDA_CAST_F64: return cast_from<double> (to, x, y, n, stream);
    case OWB_CUDA_CAST_I8: return cast_from<int8_t> (to, x, y, n, stream);
    case OWB_CUDA_CAST_U8: return cast_from<uint8_t> (to, x, y, n, stream);
    case OWB_CUDA_CAST_I32: return cast_from<int32_t> (to, x, y, n, stream);
    case OWB_CUDA_CAST_I64: return cast_from<int64_t> (to, x, y, n, stream);
    case OWB_CUDA_CAST_BOOL: return cast_from<BoolByte> (to, x, y, n, stream);
    }
  return cudaErrorInvalidValue;
}
