// Exercise 09, correct but slow: the solution's formula with a branch and libm's expf.
//
// Accurate (the same polynomial near 0, the same exp form above it) but the loop body has an
// if and calls std::exp, so the compiler cannot vectorise it: one element at a time, a call to
// expf (about 3 ns) for most of them. That is still well ahead of tanhf (the exp form needs no
// further call), so it may reach the first tier, never the second.
// checker-expects: performance: tier [01] of 2
#include <cmath>

#include "kernels/ops/elementwise/args.h"
#include "kernels/registry.h"

using prism::kernels::kMaxDims;
using prism::kernels::Layout;
using prism::kernels::UnaryArgs;

namespace {

float tanh_scalar(float x) {
  const float a = std::fabs(x);
  float t;
  if (a < 0.625f) {
    const float s = a * a;
    float h = -0.006096714166f;
    h = h * s + 0.020997179f;
    h = h * s + -0.05385090958f;
    h = h * s + 0.1333276974f;
    h = h * s + -0.3333332894f;
    t = a + a * s * h;
  } else {
    t = 1.0f - 2.0f / (std::exp(2.0f * a) + 1.0f);
  }
  return std::copysign(t, x);
}

}  // namespace

void my_tanh_vectorised(const UnaryArgs<float>& a) {
  const Layout& L = a.layout;
  const int last = L.ndim - 1;
  const int64_t inner = L.shape[last], inner_stride = L.stride[last];
  int64_t index[kMaxDims] = {};
  int64_t offset = 0;
  for (int64_t i = 0; i < a.numel; i += inner) {
    const float* row = a.x + offset;
    for (int64_t j = 0; j < inner; ++j) a.out[i + j] = tanh_scalar(row[j * inner_stride]);
    for (int d = last - 1; d >= 0; --d) {
      offset += L.stride[d];
      if (++index[d] < L.shape[d]) break;
      offset -= L.stride[d] * L.shape[d];
      index[d] = 0;
    }
  }
}

PRISM_REGISTER_KERNEL(tanh, my_tanh_vectorised);
