// Exercise 09, a typical mistake: a second, scalar tanh for strided views.
//
// The contiguous path is the solution's: a vectorised formula, accurate to 1.3 ulps, right at
// +-inf, NaN and the denormals, which is all the checks after the cases see (they call the
// kernel on contiguous inputs). Views go through an odometer walk that calls a scalar tanh
// written earlier, the textbook (e - 1) / (e + 1) with e = exp(2x). On the view cases' inputs
// (|x| < 10) its absolute error is within the tolerance. But exp(2x) overflows float32 to inf
// for x > 44.4, and then (e - 1) / (e + 1) = inf / inf = NaN where tanh x is 1: only a view of
// large inputs shows it. One formula for both paths (copy the walk into out, then the vector
// loop in place, as the solution does) keeps them from drifting apart.
// checker-expects: transposed view of .-inf.* +FAIL +error inf
#include <cmath>

#include "kernels/ops/elementwise/args.h"
#include "kernels/cpu/fast_exp.h"
#include "kernels/registry.h"

using prism::kernels::kMaxDims;
using prism::kernels::Layout;
using prism::kernels::UnaryArgs;

namespace {

constexpr float kSwitch = 0.625f;  // below: the polynomial; above: the exp form

// The solution's tanh: an odd polynomial below kSwitch, 1 - 2 / (exp(2|x|) + 1) above.
inline float tanh_approx(float x) {
  const float a = std::fabs(x);
  const float s = a * a;
  // h(s) = -1/3 + 2s/15 - ..., Horner's rule.
  float h = -0.006096714166f;
  h = h * s + 0.020997179f;
  h = h * s + -0.05385090958f;
  h = h * s + 0.1333276974f;
  h = h * s + -0.3333332894f;
  const float small = a + a * s * h;
  const float e = prism::kernels::cpu::fast_exp(2.0f * a);
  const float large = 1.0f - 2.0f / (e + 1.0f);
  return std::copysign(a < kSwitch ? small : large, x);
}

// The strided path's tanh, one element at a time: the textbook quotient, e = exp(2x).
inline float tanh_scalar(float x) {
  const float e = std::exp(2.0f * x);
  return (e - 1.0f) / (e + 1.0f);  // the mistake: inf / inf = NaN for x > 44.4
}

}  // namespace

void my_tanh_vectorised(const UnaryArgs<float>& a) {
  const Layout& L = a.layout;
  if (L.ndim == 1 && L.stride[0] == 1) {
    for (int64_t i = 0; i < a.numel; ++i) a.out[i] = tanh_approx(a.x[i]);
    return;
  }
  // Any other layout: the odometer walk, one element at a time.
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
