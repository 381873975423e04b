/* tensor-device.cu: data movement without arithmetic: the strided copy behind Transpose, Slice,
 * Expand, Concat and Split, and Gather. Elements are moved as 1/2/4/8-byte words, so one kernel
 * serves every fixed-size type. */
#include "device-common.cuh"

using namespace owb_cuda;

template <typename E>
__global__ void copy_strided_kernel (const E *src, E *dst, int64_t n, OwbCudaCopyMap m)
{
  OWB_CUDA_GRID_LOOP (i, n)
    {
      int64_t s = m.src_offset, d = m.dst_offset, r = i;
      for (int k = m.rank - 1; k >= 0; k--)
        {
          int64_t q = r / m.dims[k];
          int64_t c = r - q * m.dims[k];
          s += c * m.src_strides[k];
          d += c * m.dst_strides[k];
          r = q;
        }
      dst[d] = src[s];
    }
}

extern "C" cudaError_t
_owb_cuda_copy_strided (int elem_size, const void *src, void *dst, const OwbCudaCopyMap *map, cudaStream_t stream)
{
  int64_t n = 1;
  for (int k = 0; k < map->rank; k++)
    n *= map->dims[k];
  if (n <= 0)
    return cudaSuccess;
  unsigned g = blocks_for (n);
  switch (elem_size)
    {
    case 1: copy_strided_kernel<uint8_t><<<g, kThreads, 0, stream>>> ((const uint8_t *) src, (uint8_t *) dst, n, *map); break;
    case 2: copy_strided_kernel<uint16_t><<<g, kThreads, 0, stream>>> ((const uint16_t *) src, (uint16_t *) dst, n, *map); break;
    case 4: copy_strided_kernel<uint32_t><<<g, kThreads, 0, stream>>> ((const uint32_t *) src, (uint32_t *) dst, n, *map); break;
    case 8: copy_strided_kernel<uint64_t><<<g, kThreads, 0, stream>>> ((const uint64_t *) src, (uint64_t *) dst, n, *map); break;
    default: return cudaErrorInvalidValue;
    }
  return cudaGetLastError ();
}

template <typename E, typename I>
__global__ void gather_kernel (const E *data, const I *idx, E *out, int64_t outer, int64_t axis_dim, int64_t inner,
                               int64_t n_idx, int *bad)
{
  int64_t n = outer * n_idx * inner;
  OWB_CUDA_GRID_LOOP (i, n)
    {
      int64_t in = i % inner, r = i / inner;
      int64_t j = r % n_idx, o = r / n_idx;
      int64_t k = (int64_t) idx[j];
      if (k < 0)
        k += axis_dim;
      if (k < 0 || k >= axis_dim)
        {
          out[i] = E ();
          if (bad)
            *bad = 1;
          continue;
        }
      out[i] = data[(o * axis_dim + k) * inner + in];
    }
}

template <typename E>
static void launch_gather (const void *data, const void *idx, int is64, void *out, int64_t outer, int64_t axis_dim,
                           int64_t inner, int64_t n_idx, int *bad, cudaStream_t s)
{
  unsigned g = blocks_for (outer * n_idx * inner);
  if (is64)
    gather_kernel<E, int64_t><<<g, kThreads, 0, s>>> ((const E *) data, (const int64_t *) idx, (E *) out, outer,
                                                      axis_dim, inner, n_idx, bad);
  else
    gather_kernel<E, int32_t><<<g, kThreads, 0, s>>> ((const E *) data, (const int32_t *) idx, (E *) out, outer,
                                                      axis_dim, inner, n_idx, bad);
}

extern "C" cudaError_t
_owb_cuda_gather (int elem_size, const void *data, const void *idx, int idx_is_64, void *out, int64_t outer,
                  int64_t axis_dim, int64_t inner, int64_t n_idx, int *bad_index, cudaStream_t stream)
{
  if (outer * n_idx * inner <= 0)
    return cudaSuccess;
  switch (elem_size)
    {
    case 1: launch_gather<uint8_t> (data, idx, idx_is_64, out, outer, axis_dim, inner, n_idx, bad_index, stream); break;
    case 2: launch_gather<uint16_t> (data, idx, idx_is_64, out, outer, axis_dim, inner, n_idx, bad_index, stream); break;
    case 4: launch_gather<uint32_t> (data, idx, idx_is_64, out, outer, axis_dim, inner, n_idx, bad_index, stream); break;
    case 8: launch_gather<uint64_t> (data, idx, idx_is_64, out, outer, axis_dim, inner, n_idx, bad_index, stream); break;
    default: return cudaErrorInvalidValue;
    }
  return cudaGetLastError ();
}
