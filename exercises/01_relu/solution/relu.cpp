// Exercise 01, solution: relu over a strided view.
//
// Idea: walk the output in order (it is contiguous) and keep, for the input, one index per
// layout dim plus the offset sum_d index[d] * stride[d], updated like an odometer: the last
// dim turns fastest; when a dim reaches its size it goes back to 0 and the next outer one
// moves by one. The offset is updated incrementally, never recomputed from the indices, so a
// step costs one add in the inner loop.
// Cost: 1 compare per element; bytes = 4 (read) + 4 (write) per element. Memory-bound.
// Measured (2-core AMD EPYC Zen 4 VM, 1 thread, `exercise_relu_solution --runs 9`): 18.0 GB/s
// on 4M contiguous floats, as fast as the naive variant; 1.05 GB/s through a [2048,2048]
// transposed view, where each cache line read serves one element (README.md).
#include "kernels/ops/elementwise/args.h"
#include "kernels/registry.h"

using prism::kernels::kMaxDims;
using prism::kernels::Layout;
using prism::kernels::UnaryArgs;

namespace {

// As the naive variant: -0.0 goes to +0.0, and a NaN passes through (x <= 0 is false for it).
inline float relu(float x) {
  return !(x <= 0.0f) ? x : 0.0f;
}

}  // namespace

void my_relu(const UnaryArgs<float>& a) {
  const Layout& L = a.layout;
  if (L.ndim == 1 && L.stride[0] == 1) {
    // Contiguous: a plain loop, which the compiler turns into SIMD compares and blends.
    for (int64_t i = 0; i < a.numel; ++i) a.out[i] = relu(a.x[i]);
    return;
  }
  const int last = L.ndim - 1;
  const int64_t inner = L.shape[last], inner_stride = L.stride[last];
  int64_t index[kMaxDims] = {};  // position in every dim but the last
  int64_t offset = 0;            // sum_d index[d] * stride[d]
  for (int64_t i = 0; i < a.numel; i += inner) {
    const float* row = a.x + offset;
    for (int64_t j = 0; j < inner; ++j) a.out[i + j] = relu(row[j * inner_stride]);
    // Advance the odometer over dims last-1 ... 0.
    for (int d = last - 1; d >= 0; --d) {
      offset += L.stride[d];
      if (++index[d] < L.shape[d]) break;
      offset -= L.stride[d] * L.shape[d];
      index[d] = 0;
    }
  }
}

PRISM_REGISTER_KERNEL(relu, my_relu);
