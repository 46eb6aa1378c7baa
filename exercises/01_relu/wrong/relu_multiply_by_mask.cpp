// Exercise 01, a typical mistake: relu as x times a 0/1 mask, to avoid a branch.
//
// x * (x > 0) is x where x > 0 and x * 0 elsewhere: for every finite x that is relu(x) (a
// negative x gives -0, which equals 0). But x * 0 is not 0 for every float: -inf * 0 = NaN,
// so relu(-inf) comes out NaN instead of 0. The compare-and-select !(x <= 0) ? x : 0 has no
// such case, and the compiler turns it into SIMD blends just the same: no branch either way.
// checker-expects: -inf and .inf entries +FAIL +error inf
#include "kernels/ops/elementwise/args.h"
#include "kernels/registry.h"

using prism::kernels::kMaxDims;
using prism::kernels::Layout;
using prism::kernels::UnaryArgs;

namespace {

inline float relu(float x) {
  return x * static_cast<float>(x > 0.0f);  // the mistake: -inf * 0 = NaN
}

}  // namespace

void my_relu(const UnaryArgs<float>& a) {
  const Layout& L = a.layout;
  const int last = L.ndim - 1;
  const int64_t inner = L.shape[last], inner_stride = L.stride[last];
  int64_t index[kMaxDims] = {};
  int64_t offset = 0;
  for (int64_t i = 0; i < a.numel; i += inner) {
    const float* row = a.x + offset;
    for (int64_t j = 0; j < inner; ++j) a.out[i + j] = relu(row[j * inner_stride]);
    for (int d = last - 1; d >= 0; --d) {
      offset += L.stride[d];
      if (++index[d] < L.shape[d]) break;
      offset -= L.stride[d] * L.shape[d];
      index[d] = 0;
    }
  }
}

PRISM_REGISTER_KERNEL(relu, my_relu);
