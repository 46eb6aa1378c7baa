// Exercise 12, a typical mistake: the step uses m and v from before this step's gradient.
//
// The update is computed from the moments as they arrived, and only then are m and v updated:
// the step is one step behind its gradient, while the bias corrections are this step's. At the
// first step, from m = v = 0, the parameter does not move at all (0 / (0 + eps)).
// checker-expects: \[1\] step 1 from m = v = 0 +FAIL.*matches a step taken with m and v from before this gradient
#include <cmath>
#include <cstdint>

#include "kernels/ops/optim/args.h"
#include "kernels/registry.h"

using prism::kernels::AdamArgs;

void my_adamw(const AdamArgs<float>& a) {
  const double wd = a.weight_decay;
  for (int64_t i = 0; i < a.numel; ++i) {
    double p = a.param[i];
    double g = a.grad[i];
    if (a.decoupled) {
      p *= 1 - a.lr * wd;
    } else {
      g += wd * p;
    }
    const double m = a.beta1 * a.m[i] + (1 - a.beta1) * g;
    const double v = a.beta2 * a.v[i] + (1 - a.beta2) * g * g;
    // The mistake: the step uses the moments as they arrived (a.m[i], a.v[i]), not m and v.
    const double denom = std::sqrt(a.v[i]) / std::sqrt(a.bias_correction2) + a.eps;
    a.param[i] = static_cast<float>(p - a.lr / a.bias_correction1 * a.m[i] / denom);
    a.m[i] = static_cast<float>(m);
    a.v[i] = static_cast<float>(v);
  }
}

PRISM_REGISTER_KERNEL(adam_update, my_adamw);
