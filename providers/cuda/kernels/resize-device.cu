/* resize-device.cu: Resize of the last two axes through per-axis index and weight tables (two taps
 * each: linear, or nearest with weights 1 and 0). */
#include "device-common.cuh"

using namespace owb_cuda;

template <typename T>
__global__ void resize2d_kernel (const T *x, T *y, int64_t planes, int64_t ih, int64_t iw, int64_t oh, int64_t ow,
                                 const int64_t *hi, const float *hw, const int64_t *wi, const float *ww)
{
  int64_t n = planes * oh * ow;
  OWB_CUDA_GRID_LOOP (i, n)
    {
      int64_t ox = i % ow, r = i / ow;
      int64_t oy = r % oh, p = r / oh;
      const int64_t base = p * ih * iw;
      float v = 0.0f;
      for (int a = 0; a < 2; a++)
        {
          float wa = hw[2 * oy + a];
          if (wa == 0.0f)
            continue;
          const int64_t row = base + hi[2 * oy + a] * iw;
          float s = 0.0f;
          /* zero weights are skipped, not multiplied: nearest must not turn an inf beside it into NaN */
          for (int b = 0; b < 2; b++)
            if (ww[2 * ox + b] != 0.0f)
              s += ww[2 * ox + b] * load (x, row + wi[2 * ox + b]);
          v += wa * s;
        }
      store (y, i, v);
    }
}

extern "C" cudaError_t
_owb_cuda_resize2d (OwbCudaFloat t, const void *x, void *y, int64_t planes, int64_t ih, int64_t iw, int64_t oh,
                    int64_t ow, const int64_t *hi, const float *hw, const int64_t *wi, const float *ww,
                    cudaStream_t stream)
{
  int64_t n = planes * oh * ow;
  if (n <= 0)
    return cudaSuccess;
  unsigned g = blocks_for (n);
  if (t == OWB_CUDA_F16)
    resize2d_kernel<__half><<<g, kThreads, 0, stream>>> ((const __half *) x, (__half *) y, planes, ih, iw, oh, ow, hi,
                                                         hw, wi, ww);
  else
    resize2d_kernel<float><<<g, kThreads, 0, stream>>> ((const float *) x, (float *) y, planes, ih, iw, oh, ow, hi, hw,
                                                        wi, ww);
  return cudaGetLastError ();
}
