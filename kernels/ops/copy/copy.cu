// Strided copy on the GPU: the kernel behind contiguous(), concat and every copy into a view.
//
// Idea: one thread per element, as the elementwise kernels
// (kernels/ops/elementwise/elementwise.cu), with a strided destination too: thread i decodes i into
// coordinates over `shape` and applies the source's and the destination's strides. When both sides
// are one contiguous run (the tensor layer merged every dim) the decode is skipped. Cost: 0 FLOPs;
// bytes = 2 x numel x element size, pure data movement. Making a transposed view contiguous reads
// or writes one side with a large stride, so it runs well below the device's bandwidth: the profile
// shows that price every time a view is materialised. Passed the CUDA test suite on an NVIDIA H200
// (2026-11-26); not timed alone.
#include <cstdint>

#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/cuda/strided.cuh"
#include "kernels/ops/copy/args.h"

namespace prism::kernels::cuda {
namespace {

template <class T>
__global__ void copy_contiguous(const T* __restrict__ src, T* __restrict__ dst, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    dst[i] = src[i];
  }
}

template <class T, class I>
__global__ void copy_strided(const T* __restrict__ src, T* __restrict__ dst, CopyArgs<T> a, I n) {
  const I step = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t os, od;
    strided_offsets2(i, a.ndim, a.shape, a.src_stride, a.dst_stride, os, od);
    dst[od] = src[os];
  }
}

template <class T>
void copy_naive(const CopyArgs<T>& a) {
  int64_t n = 1;
  for (int d = 0; d < a.ndim; ++d) n *= a.shape[d];
  if (n == 0) return;
  if (a.ndim == 1 && a.src_stride[0] == 1 && a.dst_stride[0] == 1) {
    copy_contiguous<T><<<grid_for(n), kBlock, 0, stream()>>>(a.src, a.dst, n);
  } else if (fits_32bit(n)) {
    copy_strided<T, uint32_t>
        <<<grid_for(n), kBlock, 0, stream()>>>(a.src, a.dst, a, static_cast<uint32_t>(n));
  } else {
    copy_strided<T, int64_t><<<grid_for(n), kBlock, 0, stream()>>>(a.src, a.dst, a, n);
  }
  PRISM_CUDA_CHECK_LAUNCH("copy (naive)");
}

}  // namespace

void register_copy(Registry& r) {
  r.op("copy", Device::cuda)
      .add<CopyArgs>("naive", VariantTag::naive,
                     "one thread per element, strided source and destination", &copy_naive<float>,
                     &copy_naive<double>, &copy_naive<int64_t>);
}
PRISM_CUDA_KERNELS(20, register_copy);

}  // namespace prism::kernels::cuda
