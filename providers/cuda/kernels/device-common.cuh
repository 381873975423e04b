/* device-common.cuh: what the .cu files share: loads and stores of the stored element type as
 * float (the kernels compute in float, fp16 included), grid sizes, index maps. */
#pragma once

#include "../cuda-launch.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace owb_cuda {

__device__ __forceinline__ float load (const float *p, int64_t i) { return p[i]; }
__device__ __forceinline__ float load (const __half *p, int64_t i) { return __half2float (p[i]); }
__device__ __forceinline__ void store (float *p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store (__half *p, int64_t i, float v) { p[i] = __float2half (v); }

constexpr int kThreads = 256;

/* Blocks for a grid-stride loop over n items: enough to fill the GPU, not one per item. */
inline unsigned blocks_for (int64_t n)
{
  int64_t b = (n + kThreads - 1) / kThreads;
  if (b > 65535 * 8)
    b = 65535 * 8;
  return (unsigned) (b < 1 ? 1 : b);
}

#define OWB_CUDA_GRID_LOOP(i, n)                                                                          \
  for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t) blockDim.x * gridDim.x)

/* Offset of flat output index i in input `k` of a broadcast map. */
__device__ __forceinline__ int64_t broadcast_offset (const OwbCudaBroadcast &m, int k, int64_t i)
{
  int64_t off = 0;
  for (int d = m.rank - 1; d >= 0; d--)
    {
      int64_t q = i / m.dims[d];
      off += (i - q * m.dims[d]) * m.strides[k][d];
      i = q;
    }
  return off;
}

/* Block-wide reduction of one float per thread by `combine` (blockDim.x a multiple of 32, at most
 * 1024): a shuffle tree in each warp, the warps' partials through shared memory, then a second
 * tree; every thread gets the result. `identity` stands in for the warps the block does not have.
 * Each instantiation has its own partials; the first barrier lets a block call it twice in a row. */
template <typename Combine>
__device__ __forceinline__ float block_reduce (float v, float identity, Combine combine)
{
  __shared__ float partial[32];
  for (int o = 16; o > 0; o >>= 1)
    v = combine (v, __shfl_xor_sync (0xffffffffu, v, o));
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads ();
  if (lane == 0)
    partial[warp] = v;
  __syncthreads ();
  int n_warps = (blockDim.x + 31) >> 5;
  v = lane < n_warps ? partial[lane] : identity;
  for (int o = 16; o > 0; o >>= 1)
    v = combine (v, __shfl_xor_sync (0xffffffffu, v, o));
  return v;
}

struct BlockAdd
{
  __device__ __forceinline__ float operator() (float a, float b) const { return a + b; }
};

struct BlockMax
{
  __device__ __forceinline__ float operator() (float a, float b) const { return fmaxf (a, b); }
};

__device__ __forceinline__ float block_sum (float v)
{
  return block_reduce (v, 0.0f, BlockAdd ());
}

__device__ __forceinline__ float block_max (float v)
{
  return block_reduce (v, -INFINITY, BlockMax ());
}

} // namespace owb_cuda
