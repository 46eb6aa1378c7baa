// Exercise 09, a typical mistake: a Taylor polynomial over the whole range.
//
// tanh x = x - x^3/3 + 2x^5/15 - 17x^7/315 + 62x^9/2835 - ... is a fine formula near 0, and
// vectorises perfectly. But the series converges only for |x| < pi/2, and a few terms are
// already off by 1e-3 at x = 1; at x = 5 the polynomial is in the thousands. The clamp to
// [-1, 1] hides the worst of it and not the rest. A polynomial needs a reduced range.
// checker-expects: uniform in .-5, 5. +FAIL +error
#include <algorithm>

#include "kernels/ops/elementwise/args.h"
#include "kernels/registry.h"

using prism::kernels::kMaxDims;
using prism::kernels::Layout;
using prism::kernels::UnaryArgs;

namespace {

inline float tanh_approx(float x) {
  const float s = x * x;
  float p = 62.0f / 2835;
  p = p * s - 17.0f / 315;
  p = p * s + 2.0f / 15;
  p = p * s - 1.0f / 3;
  const float t = x + x * s * p;  // the mistake: used for every x, not only near 0
  return std::clamp(t, -1.0f, 1.0f);
}

void tanh_in_place(float* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) v[i] = tanh_approx(v[i]);
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
    for (int64_t j = 0; j < inner; ++j) a.out[i + j] = row[j * inner_stride];
    for (int d = last - 1; d >= 0; --d) {
      offset += L.stride[d];
      if (++index[d] < L.shape[d]) break;
      offset -= L.stride[d] * L.shape[d];
      index[d] = 0;
    }
  }
  tanh_in_place(a.out, a.numel);
}

PRISM_REGISTER_KERNEL(tanh, my_tanh_vectorised);
