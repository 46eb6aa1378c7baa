// Exercise 05, a typical mistake: the running maximum starts at 0 instead of -inf.
//
// On ordinary logits it passes: m only has to be at least every x for exp(x - m) <= 1, and a
// maximum that is too large cancels in the division. It breaks on a row whose logits are all far
// below 0: with m stuck at 0, exp(x - 0) underflows to 0 for every x below about -104, the sum is
// 0 and every output is 0 / 0 = NaN. Start m at -inf (or at the row's first element).
// checker-expects: all far below 0.* +FAIL +error inf
#include <cmath>
#include <limits>

#include "kernels/ops/softmax/args.h"
#include "kernels/registry.h"

using prism::kernels::SoftmaxArgs;

void my_softmax_online(const SoftmaxArgs<float>& a) {
  for (int64_t r = 0; r < a.rows; ++r) {
    const float* x = a.x + r * a.row_stride;
    float* y = a.out + r * a.cols;
    float m = 0.0f;  // the mistake: a maximum no row has to reach
    float s = 0.0f;
    for (int64_t j = 0; j < a.cols; ++j) {
      const float v = x[j * a.col_stride];
      if (v == -std::numeric_limits<float>::infinity()) continue;
      if (v > m) {
        s = s * std::exp(m - v) + 1.0f;
        m = v;
      } else {
        s += std::exp(v - m);
      }
    }
    const float inv = 1.0f / s;
    for (int64_t j = 0; j < a.cols; ++j) y[j] = std::exp(x[j * a.col_stride] - m) * inv;
  }
}

PRISM_REGISTER_KERNEL(softmax, my_softmax_online);
