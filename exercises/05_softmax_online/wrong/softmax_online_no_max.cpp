// Exercise 05, a typical mistake: exponentials of the raw logits.
//
// exp(x_j) / sum exp(x_k) is the definition, and right for small logits. But float32 has no
// exp(x) for x above about 88.7: exp(100) is inf, and inf / inf is NaN. Subtracting the
// maximum first changes nothing mathematically and keeps every term at most 1.
// checker-expects: logits near 100 +FAIL +error inf
#include <cmath>

#include "kernels/ops/softmax/args.h"
#include "kernels/registry.h"

using prism::kernels::SoftmaxArgs;

void my_softmax_online(const SoftmaxArgs<float>& a) {
  for (int64_t r = 0; r < a.rows; ++r) {
    const float* x = a.x + r * a.row_stride;
    float* y = a.out + r * a.cols;
    double s = 0.0;
    for (int64_t j = 0; j < a.cols; ++j) s += std::exp(x[j * a.col_stride]);  // the mistake
    for (int64_t j = 0; j < a.cols; ++j)
      y[j] = static_cast<float>(std::exp(x[j * a.col_stride]) / s);
  }
}

PRISM_REGISTER_KERNEL(softmax, my_softmax_online);
