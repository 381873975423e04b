/* reduce-device.cu: the Reduce* family over any set of axes (one block per output value, its
 * threads striding over the reduced elements) and Softmax / LogSoftmax (one block per row). */
#include "device-common.cuh"

using namespace owb_cuda;

__device__ __forceinline__ int64_t map_offset (int rank, const int64_t *dims, const int64_t *strides, int64_t i)
{
  int64_t off = 0;
  for (int k = rank - 1; k >= 0; k--)
    {
      int64_t q = i / dims[k];
      off += (i - q * dims[k]) * strides[k];
      i = q;
    }
  return off;
}

template <typename T>
__global__ void reduce_kernel (OwbCudaReduceOp op, const T *x, T *y, int64_t n_out, int64_t n_red, OwbCudaReduceMap m)
{
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x)
    {
      int64_t base = map_offset (m.keep_rank, m.keep_dims, m.keep_strides, o);
      bool is_max = op == OWB_CUDA_REDUCE_MAX, is_min = op == OWB_CUDA_REDUCE_MIN;
      /* LogSumExp subtracts the maximum first: one pass for it, one for the sum. */
      float shift = 0.0f;
      if (op == OWB_CUDA_REDUCE_LOG_SUM_EXP)
        {
          float mx = -INFINITY;
          for (int64_t r = threadIdx.x; r < n_red; r += blockDim.x)
            mx = fmaxf (mx, load (x, base + map_offset (m.red_rank, m.red_dims, m.red_strides, r)));
          shift = block_max (mx);
          if (isinf (shift))
            shift = 0.0f;
        }
      float acc = is_max ? -INFINITY : (is_min ? INFINITY : (op == OWB_CUDA_REDUCE_PROD ? 1.0f : 0.0f));
      bool nan = false;
      for (int64_t r = threadIdx.x; r < n_red; r += blockDim.x)
        {
          float v = load (x, base + map_offset (m.red_rank, m.red_dims, m.red_strides, r));
          switch (op)
            {
            case OWB_CUDA_REDUCE_MAX: nan |= v != v; acc = fmaxf (acc, v); break;
            case OWB_CUDA_REDUCE_MIN: nan |= v != v; acc = fminf (acc, v); break;
            case OWB_CUDA_REDUCE_PROD: acc *= v; break;
            case OWB_CUDA_REDUCE_SUM_SQUARE: case OWB_CUDA_REDUCE_L2: acc += v * v; break;
            case OWB_CUDA_REDUCE_L1: acc += fabsf (v); break;
            case OWB_CUDA_REDUCE_LOG_SUM_EXP: acc += expf (v - shift); break;
            default: acc += v; break;
            }
        }
      float total;
      if (is_max)
        total = block_max (acc);
      else if (is_min)
        total = -block_max (-acc);
      else if (op == OWB_CUDA_REDUCE_PROD)
        {
          /* product across threads: through a shared array, thread 0 multiplies */
          __shared__ float parts[1024];
          __syncthreads ();
          parts[threadIdx.x] = acc;
          __syncthreads ();
          total = 1.0f;
          if (threadIdx.x == 0)
            for (unsigned k = 0; k < blockDim.x; k++)
              total *= parts[k];
        }
      else
        total = block_sum (acc);
      int any_nan = __syncthreads_or (nan);
      if (threadIdx.x == 0)
        {
          float v = total;
          switch (op)
            {
            case OWB_CUDA_REDUCE_MEAN: v = total / (float) n_red; break;
            case OWB_CUDA_REDUCE_L2: v = sqrtf (total); break;
            case OWB_CUDA_REDUCE_LOG_SUM: v = logf (total); break;
            case OWB_CUDA_REDUCE_LOG_SUM_EXP: v = logf (total) + shift; break;
            case OWB_CUDA_REDUCE_MAX: case OWB_CUDA_REDUCE_MIN: if (any_nan) v = NAN; break;
            default: break;
            }
          store (y, o, v);
        }
      __syncthreads ();
    }
}

extern "C" cudaError_t
_owb_cuda_reduce (OwbCudaFloat t, OwbCudaReduceOp op, const void *x, void *y, int64_t n_out, int64_t n_red,
                  const OwbCudaReduceMap *map, cudaStream_t stream)
{
  if (n_out <= 0)
    return cudaSuccess;
  int threads = n_red >= 256 ? 256 : (n_red > 32 ? 128 : 32);
  unsigned g = (unsigned) (n_out < 65535 * 16 ? n_out : 65535 * 16);
  if (t == OWB_CUDA_F16)
    reduce_kernel<__half><<<g, threads, 0, stream>>> (op, (const __half *) x, (__half *) y, n_out, n_red, *map);
  else
    reduce_kernel<float><<<g, threads, 0, stream>>> (op, (const float *) x, (float *) y, n_out, n_red, *map);
  return cudaGetLastError ();
}

template <typename T>
__global__ void softmax_kernel (int log_form, const T *x, T *y, int64_t outer, int64_t len, int64_t inner)
{
  for (int64_t row = blockIdx.x; row < outer * inner; row += gridDim.x)
    {
      int64_t o = row / inner, in = row % inner;
      int64_t base = o * len * inner + in;
      float mx = -INFINITY;
      for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
        mx = fmaxf (mx, load (x, base + j * inner));
      mx = block_max (mx);
      float sum = 0.0f;
      for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
        sum += expf (load (x, base + j * inner) - mx);
      sum = block_sum (sum);
      float lsum = logf (sum), inv = 1.0f / sum;
      for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
        {
          float v = load (x, base + j * inner) - mx;
          store (y, base + j * inner, log_form ? v - lsum : expf (v) * inv);
        }
      __syncthreads ();
    }
}

extern "C" cudaError_t
_owb_cuda_softmax (OwbCudaFloat t, int log_form, const void *x, void *y, int64_t outer, int64_t len, int64_t inner,
                   cudaStream_t stream)
{
  int64_t rows = outer * inner;
  if (rows <= 0 || len <= 0)
    return cudaSuccess;
  int threads = len >= 1024 ? 256 : (len > 64 ? 128 : 32);
  unsigned g = (unsigned) (rows < 65535 * 16 ? rows : 65535 * 16);
  if (t == OWB_CUDA_F16)
    softmax_kernel<__half><<<g, threads, 0, stream>>> (log_form, (const __half *) x, (__half *) y, outer, len, inner);
  else
    softmax_kernel<float><<<g, threads, 0, stream>>> (log_form, (const float *) x, (float *) y, outer, len, inner);
  return cudaGetLastError ();
}
