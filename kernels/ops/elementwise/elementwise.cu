// Elementwise ops on the GPU, naive variant: one thread per output element.
//
// Idea: the output is contiguous, so thread i writes out[i]; it finds its input element(s) by
// decoding i into coordinates and applying each input's strides (kernels/cuda/strided.cuh). A
// broadcast input has stride 0 in the stretched dims and a transposed view just other strides,
// so neither is copied first. A grid-stride loop lets a capped grid cover any size. When every
// operand is contiguous (one merged dim of stride 1, most calls) the decode is skipped: thread
// i reads x[i], and consecutive threads touch consecutive addresses (coalesced).
//
// Cost: one pass over memory, a few FLOPs per 8-12 bytes moved (float32): bound by bandwidth on
// any GPU, so the figure to watch is GB/s against the device's peak. Strided inputs cost more:
// a transposed read touches a new 32-byte sector per element. Passed the CUDA test suite on an
// NVIDIA H200 (2026-11-26); not timed alone.
//
// The math is kernels/ops/elementwise/math.cuh, the same formulas as the CPU functors.
#include <cstdint>

#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/cuda/strided.cuh"
#include "kernels/ops/elementwise/list.h"
#include "kernels/ops/elementwise/math.cuh"
#include "kernels/ops/elementwise/args.h"

namespace prism::kernels::cuda {
namespace {

// ---- unary: out[i] = f(x[offset(i)]) --------------------------------------------------------

template <class T, class F>
__global__ void unary_contiguous(const T* __restrict__ x, T* __restrict__ out, int64_t n) {
  const F f{};
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    out[i] = f(x[i]);
  }
}

template <class T, class F, class I>
__global__ void unary_strided(const T* __restrict__ x, T* __restrict__ out, Layout layout, I n) {
  const F f{};
  const I step = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    out[i] = f(x[strided_offset(i, layout.ndim, layout.shape, layout.stride)]);
  }
}

template <class T, class F>
void unary_naive(const UnaryArgs<T>& a) {
  const int64_t n = a.numel;
  if (n == 0) return;
  const Layout& L = a.layout;
  if (L.ndim == 1 && L.stride[0] == 1) {
    unary_contiguous<T, F><<<grid_for(n), kBlock, 0, stream()>>>(a.x, a.out, n);
  } else if (fits_32bit(n)) {
    unary_strided<T, F, uint32_t>
        <<<grid_for(n), kBlock, 0, stream()>>>(a.x, a.out, L, static_cast<uint32_t>(n));
  } else {
    unary_strided<T, F, int64_t><<<grid_for(n), kBlock, 0, stream()>>>(a.x, a.out, L, n);
  }
  PRISM_CUDA_CHECK_LAUNCH("elementwise unary (naive)");
}

// ---- binary: out[i] = f(a[offset_a(i)], b[offset_b(i)]), broadcast by stride 0 --------------

// `out` may be `a` itself (add_into: dst += src, the autograd engine's in-place gradient sums),
// so neither is __restrict__: each element of a is read before the same element is written.
template <class T, class F>
__global__ void binary_contiguous(const T* a, const T* __restrict__ b, T* out, int64_t n) {
  const F f{};
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    out[i] = f(a[i], b[i]);
  }
}

template <class T, class F, class I>
__global__ void binary_strided(const T* a, const T* __restrict__ b, T* out, BinaryArgs<T> w, I n) {
  const F f{};
  const I step = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t oa, ob;
    strided_offsets2(i, w.ndim, w.shape, w.a_stride, w.b_stride, oa, ob);
    out[i] = f(a[oa], b[ob]);
  }
}

template <class T, class F>
void binary_naive(const BinaryArgs<T>& args) {
  const int64_t n = args.numel;
  if (n == 0) return;
  if (args.ndim == 1 && args.a_stride[0] == 1 && args.b_stride[0] == 1) {
    binary_contiguous<T, F><<<grid_for(n), kBlock, 0, stream()>>>(args.a, args.b, args.out, n);
  } else {
    // The whole struct travels as a kernel parameter (shape and strides, ~200 bytes).
    if (fits_32bit(n)) {
      binary_strided<T, F, uint32_t><<<grid_for(n), kBlock, 0, stream()>>>(
          args.a, args.b, args.out, args, static_cast<uint32_t>(n));
    } else {
      binary_strided<T, F, int64_t>
          <<<grid_for(n), kBlock, 0, stream()>>>(args.a, args.b, args.out, args, n);
    }
  }
  PRISM_CUDA_CHECK_LAUNCH("elementwise binary (naive)");
}

template <class F>
void add_unary(Registry& r, const char* op) {
  r.op(op, Device::cuda)
      .add<UnaryArgs>("naive", VariantTag::naive, "one thread per output element, strided reads",
                      &unary_naive<float, F>, &unary_naive<double, F>);
}

template <class F>
void add_binary(Registry& r, const char* op) {
  r.op(op, Device::cuda)
      .add<BinaryArgs>("naive", VariantTag::naive,
                       "one thread per output element, broadcast by stride 0",
                       &binary_naive<float, F>, &binary_naive<double, F>);
}

}  // namespace

void register_elementwise(Registry& r) {
  using namespace math;
#define PRISM_ADD_UNARY(Functor, op, flops) add_unary<Functor>(r, op);
#define PRISM_ADD_BINARY(Functor, op, flops) add_binary<Functor>(r, op);
  PRISM_UNARY_OPS(PRISM_ADD_UNARY)
  PRISM_BINARY_OPS(PRISM_ADD_BINARY)
#undef PRISM_ADD_UNARY
#undef PRISM_ADD_BINARY
}
PRISM_CUDA_KERNELS(10, register_elementwise);

}  // namespace prism::kernels::cuda
