// Exercise 09, a typical mistake: the exp form all the way down to 0.
//
// tanh x = 1 - 2 / (exp(2x) + 1) is exact mathematically, saturates correctly and vectorises.
// Near 0, though, q = 2 / (exp(2x) + 1) is close to 1, and 1 - q keeps only q's absolute
// accuracy, about 1e-7, of a result that is about x: at x = 1e-5 that is a relative error of
// 1e-2, over 10^5 ulps. Every case passes (their error is absolute, and 1e-7 is within the
// tolerance); the ulp sweep after them, which measures the relative error, does not.
// checker-expects: ulp sweep, [0-9.]+M inputs +FAIL +worst [0-9.e+]+ ulp
#include <cmath>

#include "kernels/ops/elementwise/args.h"
#include "kernels/cpu/fast_exp.h"
#include "kernels/registry.h"

using prism::kernels::kMaxDims;
using prism::kernels::Layout;
using prism::kernels::UnaryArgs;

namespace {

inline float tanh_approx(float x) {
  const float a = std::fabs(x);
  const float e = prism::kernels::cpu::fast_exp(2.0f * a);
  return std::copysign(1.0f - 2.0f / (e + 1.0f), x);  // the mistake: also for a near 0
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
