// Elementwise ops, optimized variant: the naive walk, vectorised and split over the threads.
//
// Two changes from kernels/ops/elementwise/naive.cpp, each measured in docs/PERFORMANCE.md
// ("Threads (2026-11-25)", its grain table and "Vectorised transcendentals"):
// - SIMD. The contiguous loop is `#pragma omp simd` over the functors of
// kernels/ops/elementwise/fast.h,
//   whose float exp and tanh are plain arithmetic (fast_math.h) instead of libm calls, so gelu,
//   tanh, sigmoid, silu and their gradients become AVX-512 code. double keeps libm (math::).
// - Threads. The output is cut into fixed chunks (kernels/cpu/parallel.h): a contiguous op in
//   chunks of elements, a strided or broadcast one in chunks of whole innermost rows, each row
//   walked as the naive kernel walks it. Elements are independent and the cut never depends on
//   the thread count, so results are bit-identical on any number of threads.
// Chunk sizes: an op with a transcendental does ~20-40 FLOPs an element and pays for a thread
// at a few thousand elements; add, mul or relu move ~12 bytes per FLOP and need many times more
// (the measured crossovers: the grain table of "Threads (2026-11-25)").
#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/elementwise/fast.h"
#include "kernels/ops/elementwise/list.h"
#include "kernels/ops/elementwise/args.h"

namespace prism::kernels::cpu {
namespace {

// Elements per chunk: ops with no transcendental are a few instructions an element.
template <class F>
constexpr bool kCheap = false;
template <>
constexpr bool kCheap<math::Neg> = true;
template <>
constexpr bool kCheap<math::Relu> = true;
template <>
constexpr bool kCheap<math::Add> = true;
template <>
constexpr bool kCheap<math::Sub> = true;
template <>
constexpr bool kCheap<math::Mul> = true;
template <>
constexpr bool kCheap<math::Div> = true;
template <>
constexpr bool kCheap<math::ReluBackward> = true;
template <>
constexpr bool kCheap<math::SigmoidBackward> = true;
template <>
constexpr bool kCheap<math::TanhBackward> = true;
template <class F>
constexpr int64_t kChunk = kCheap<F> ? kChunkElementwise : kChunkTranscendental;

// The contiguous loops, as free functions on plain pointers: GCC 12 vectorises these, but not
// the same loop written inside the chunk lambda (measured: several times slower per GELU
// element). Never inlined: at one thread parallel_for runs the chunks in a plain loop, GCC
// inlined the whole chain into the kernel, and there left fast_tanh as an out-of-line call per
// element, so the loop ran scalar (the transformer's gelu_backward took an order of magnitude
// longer a call at 1 thread than at 2). Both measured: docs/PERFORMANCE.md, "Threads
// (2026-11-25)", "Vectorised transcendentals".
template <class T, class F>
[[gnu::noinline]] void unary_run(const T* __restrict x, T* __restrict out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = F{}(x[i]);
}
// `out` may be `a` itself (add_into: dst += src), so those two are not __restrict; the simd
// pragma alone lets the loop vectorise (each out[i] is written after a[i] and b[i] are read).
template <class T, class F>
[[gnu::noinline]] void binary_run(const T* a, const T* __restrict b, T* out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = F{}(a[i], b[i]);
}

template <class T, class F>
void unary_optimized(const UnaryArgs<T>& a) {
  const Layout& L = a.layout;
  const T* x = a.x;
  T* out = a.out;
  if (is_flat(L.ndim, L.shape, L.stride)) {
    parallel_for(a.numel, kChunk<F>,
                 [=](int64_t i0, int64_t i1) { unary_run<T, F>(x + i0, out + i0, i1 - i0); });
    return;
  }
  const int last = L.ndim - 1;
  const int64_t cols = L.shape[last], cs = L.stride[last];
  if (cols == 0) return;
  parallel_for(a.numel / cols, rows_per_chunk(cols, kChunk<F>), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + row_offset(r, L.ndim, L.shape, L.stride);
      T* o = out + r * cols;
      if (cs == 1) {
        unary_run<T, F>(xr, o, cols);
      } else {
        for (int64_t j = 0; j < cols; ++j) o[j] = F{}(xr[j * cs]);
      }
    }
  });
}

template <class T, class F>
void binary_optimized(const BinaryArgs<T>& a) {
  const T *pa = a.a, *pb = a.b;
  T* out = a.out;
  if (is_flat(a.ndim, a.shape, a.a_stride) && is_flat(a.ndim, a.shape, a.b_stride)) {
    parallel_for(a.numel, kChunk<F>, [=](int64_t i0, int64_t i1) {
      binary_run<T, F>(pa + i0, pb + i0, out + i0, i1 - i0);
    });
    return;
  }
  const int last = a.ndim - 1;
  const int64_t cols = a.shape[last], sa = a.a_stride[last], sb = a.b_stride[last];
  if (cols == 0) return;
  parallel_for(a.numel / cols, rows_per_chunk(cols, kChunk<F>), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* ar = pa + row_offset(r, a.ndim, a.shape, a.a_stride);
      const T* br = pb + row_offset(r, a.ndim, a.shape, a.b_stride);
      T* o = out + r * cols;
      if (sa == 1 && sb == 1) {
        binary_run<T, F>(ar, br, o, cols);
      } else if (sa == 1 && sb == 0) {  // a row plus a broadcast scalar (bias, scale)
        const T b = br[0];
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) o[j] = F{}(ar[j], b);
      } else {
        for (int64_t j = 0; j < cols; ++j) o[j] = F{}(ar[j * sa], br[j * sb]);
      }
    }
  });
}

template <class F>
void add_unary(Registry& r, const char* op) {
  r.op(op, Device::cpu)
      .add<UnaryArgs>("optimized", VariantTag::optimized,
                      "SIMD loop (vectorised exp/tanh in float), fixed chunks over threads",
                      &unary_optimized<float, F>, &unary_optimized<double, F>);
}

template <class F>
void add_binary(Registry& r, const char* op) {
  r.op(op, Device::cpu)
      .add<BinaryArgs>("optimized", VariantTag::optimized,
                       "SIMD rows, broadcast by stride 0, fixed chunks over threads",
                       &binary_optimized<float, F>, &binary_optimized<double, F>);
}

}  // namespace

void register_elementwise_optimized(Registry& r) {
  using namespace fast;
#define PRISM_ADD_UNARY(Functor, op, flops) add_unary<Functor>(r, op);
#define PRISM_ADD_BINARY(Functor, op, flops) add_binary<Functor>(r, op);
  PRISM_UNARY_OPS(PRISM_ADD_UNARY)
  PRISM_BINARY_OPS(PRISM_ADD_BINARY)
#undef PRISM_ADD_UNARY
#undef PRISM_ADD_BINARY
}
PRISM_CPU_KERNELS(12, register_elementwise_optimized);

}  // namespace prism::kernels::cpu
