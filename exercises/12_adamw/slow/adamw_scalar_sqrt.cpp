// Exercise 12, correct but slow: the fused loop as plain C++, which GCC does not vectorise.
//
// One loop over the elements, every branch hoisted, __restrict pointers, #pragma omp simd: all
// a loop needs to vectorise, except that std::sqrt of a float must set errno for a negative
// input. Without -fno-math-errno (prism's kernels have it, this file does not) GCC keeps a
// possible call to libm's sqrtf in the loop, and a loop with a call in it is not vectorised
// ("control flow in loop"). So it runs one element at a time, and loses to per_tensor, whose
// 8 or 9 passes are each vectorised: README.md has the timings; solution/adamw.cpp is the same
// loop written with std::experimental::simd.
// checker-expects: performance: tier 0 of 2
#include <cmath>
#include <cstdint>

#include "kernels/ops/optim/args.h"
#include "kernels/registry.h"

using prism::kernels::AdamArgs;

namespace {

template <bool kL2, bool kDecoupled>
void adam_loop(const AdamArgs<float>& a) {
  const float b1 = static_cast<float>(a.beta1), one_minus_b1 = static_cast<float>(1 - a.beta1);
  const float b2 = static_cast<float>(a.beta2), one_minus_b2 = static_cast<float>(1 - a.beta2);
  const float eps = static_cast<float>(a.eps);
  const float wd = static_cast<float>(a.weight_decay);
  const float shrink = static_cast<float>(1 - a.lr * a.weight_decay);  // AdamW: p (1 - lr wd)
  // lr m_hat / (sqrt(v_hat) + eps) = (lr / bc1) m / (sqrt(v) / sqrt(bc2) + eps): the two bias
  // corrections become one factor and one divisor, computed once in double.
  const float step = static_cast<float>(a.lr / a.bias_correction1);
  const float sqrt_bc2 = static_cast<float>(std::sqrt(a.bias_correction2));
  float* __restrict p = a.param;
  const float* __restrict grad = a.grad;
  float* __restrict m = a.m;
  float* __restrict v = a.v;
#pragma omp simd
  for (int64_t i = 0; i < a.numel; ++i) {
    float pi = p[i];
    float g = grad[i];
    if constexpr (kL2) g += wd * pi;
    if constexpr (kDecoupled) pi *= shrink;
    const float mi = b1 * m[i] + one_minus_b1 * g;
    const float vi = b2 * v[i] + one_minus_b2 * g * g;
    m[i] = mi;
    v[i] = vi;
    p[i] = pi - step * mi / (std::sqrt(vi) / sqrt_bc2 + eps);
  }
}

}  // namespace

void my_adamw(const AdamArgs<float>& a) {
  if (a.weight_decay == 0) {
    adam_loop<false, false>(a);
  } else if (a.decoupled) {
    adam_loop<false, true>(a);
  } else {
    adam_loop<true, false>(a);
  }
}

PRISM_REGISTER_KERNEL(adam_update, my_adamw);
