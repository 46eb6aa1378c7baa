// Exercise 05, a typical mistake: raising the maximum without rescaling the sum.
//
// When x > m, the terms already in s were computed as exp(x_k - m_old); against the new
// maximum each must become exp(x_k - x) = exp(x_k - m_old) * exp(m_old - x). Leaving s as it
// is adds terms measured against different maxima, so s is too large whenever the maximum
// moved after the first entry, which on random rows is almost always.
// checker-expects: .1,7. +FAIL +error
#include <cmath>
#include <limits>

#include "kernels/ops/softmax/args.h"
#include "kernels/registry.h"

using prism::kernels::SoftmaxArgs;

void my_softmax_online(const SoftmaxArgs<float>& a) {
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < a.rows; ++r) {
    const float* x = a.x + r * a.row_stride;
    float* y = a.out + r * a.cols;
    float m = kMinusInf;
    double s = 0.0;
    for (int64_t j = 0; j < a.cols; ++j) {
      const float v = x[j * a.col_stride];
      if (v > m) {
        s += 1.0;  // the mistake: s * exp(m - v) + 1
        m = v;
      } else if (v != kMinusInf) {
        s += std::exp(v - m);
      }
    }
    const float inv = static_cast<float>(1.0 / s);
    for (int64_t j = 0; j < a.cols; ++j) y[j] = std::exp(x[j * a.col_stride] - m) * inv;
  }
}

PRISM_REGISTER_KERNEL(softmax, my_softmax_online);
