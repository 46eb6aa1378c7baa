// Exercise 05, a typical mistake: not skipping -inf while the maximum is still -inf.
//
// Attention masks set the logits a position may not see to -inf. With m starting at -inf, a
// row that begins with masked entries computes exp(x - m) = exp(-inf - (-inf)) = exp(NaN),
// and the NaN spreads to the whole row. A masked entry contributes exp(-inf) = 0: skip it.
// checker-expects: -inf before the diagonal +FAIL +error inf
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
        s = s * std::exp(static_cast<double>(m) - v) + 1.0;
        m = v;
      } else {
        s += std::exp(v - m);  // the mistake: NaN when v == m == -inf
      }
    }
    const float inv = static_cast<float>(1.0 / s);
    for (int64_t j = 0; j < a.cols; ++j) y[j] = std::exp(x[j * a.col_stride] - m) * inv;
  }
}

PRISM_REGISTER_KERNEL(softmax, my_softmax_online);
