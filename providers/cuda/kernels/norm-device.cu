/* norm-device.cu: LayerNormalization, SkipLayerNormalization and RMSNormalization (one block per
 * row, statistics in float over two passes), and inference BatchNormalization. */
#include "device-common.cuh"

using namespace owb_cuda;

template <typename T>
__global__ void layer_norm_kernel (int simplified, const T *x, const T *skip, int64_t skip_rows, const T *bias,
                                   const T *gamma, const T *beta, T *y, float *mean_out, float *inv_out, T *sum_out,
                                   int64_t rows, int64_t cols, float eps)
{
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x)
    {
      const int64_t base = row * cols;
      const int64_t sbase = skip ? (row % skip_rows) * cols : 0;
      /* s = x + skip + bias, kept in y (or sum_out) between the passes */
      T *s_buf = sum_out ? sum_out : y;
      float acc = 0.0f;
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
        {
          float v = load (x, base + j);
          if (skip)
            v += load (skip, sbase + j);
          if (bias)
            v += load (bias, j);
          if (skip || bias)
            store (s_buf, base + j, v);
          acc += simplified ? v * v : v;
        }
      const T *src = (skip || bias) ? s_buf : x;
      /* reading back what this thread itself stored: no barrier needed beyond the block sums */
      float mean = 0.0f, var;
      if (simplified)
        var = block_sum (acc) / (float) cols;
      else
        {
          mean = block_sum (acc) / (float) cols;
          float sq = 0.0f;
          for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
            {
              float d = load (src, base + j) - mean;
              sq += d * d;
            }
          var = block_sum (sq) / (float) cols;
        }
      float inv = rsqrtf (var + eps);
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
        {
          float v = (load (src, base + j) - mean) * inv * load (gamma, j);
          if (beta)
            v += load (beta, j);
          store (y, base + j, v);
        }
      if (threadIdx.x == 0)
        {
          if (mean_out)
            mean_out[row] = mean;
          if (inv_out)
            inv_out[row] = inv;
        }
      __syncthreads ();
    }
}

extern "C" cudaError_t
_owb_cuda_layer_norm (OwbCudaFloat t, int simplified, const void *x, const void *skip, int64_t skip_rows,
                      const void *bias, const void *gamma, const void *beta, void *y, float *mean, float *inv_std,
                      void *sum, int64_t rows, int64_t cols, float epsilon, cudaStream_t stream)
{
  if (rows <= 0 || cols <= 0)
    return cudaSuccess;
  int threads = cols >= 1024 ? 256 : (cols > 64 ? 128 : 32);
  unsigned g = (unsigned) (rows < 65535 * 16 ? rows : 65535 * 16);
  if (skip_rows <= 0)
    skip_rows = rows;
  if (t == OWB_CUDA_F16)
    layer_norm_kernel<__half><<<g, threads, 0, stream>>> (simplified, (const __half *) x, (const __half *) skip,
                                                          skip_rows, (const __half *) bias, (const __half *) gamma,
                                                          (const __half *) beta, (__half *) y, mean, inv_std,
                                                          (__half *) sum, rows, cols, epsilon);
  else
    layer_norm_kernel<float><<<g, threads, 0, stream>>> (simplified, (const float *) x, (const float *) skip,
                                                         skip_rows, (const float *) bias, (const float *) gamma,
                                                         (const float *) beta, (float *) y, mean, inv_std,
                                                         (float *) sum, rows, cols, epsilon);
  return cudaGetLastError ();
}

template <typename T>
__global__ void batch_norm_kernel (const T *x, const T *scale, const T *bias, const T *mean, const T *var, T *y,
                                   int64_t n, int64_t channels, int64_t inner, float eps)
{
  OWB_CUDA_GRID_LOOP (i, n)
    {
      int64_t c = (i / inner) % channels;
      float s = load (scale, c) * rsqrtf (load (var, c) + eps);
      store (y, i, (load (x, i) - load (mean, c)) * s + load (bias, c));
    }
}

extern "C" cudaError_t
_owb_cuda_batch_norm (OwbCudaFloat t, const void *x, const void *scale, const void *bias, const void *mean,
                      const void *var, void *y, int64_t n, int64_t channels, int64_t inner, float epsilon,
                      cudaStream_t stream)
{
  int64_t total = n * channels * inner;
  if (total <= 0)
    return cudaSuccess;
  unsigned g = blocks_for (total);
  if (t == OWB_CUDA_F16)
    batch_norm_kernel<__half><<<g, kThreads, 0, stream>>> ((const __half *) x, (const __half *) scale,
                                                           (const __half *) bias, (const __half *) mean,
                                                           (const __half *) var, (__half *) y, total, channels,
                                                           inner, epsilon);
  else
    batch_norm_kernel<float><<<g, kThreads, 0, stream>>> ((const float *) x, (const float *) scale,
                                                          (const float *) bias, (const float *) mean,
                                                          (const float *) var, (float *) y, total, channels, inner,
                                                          epsilon);
  return cudaGetLastError ();
}
