// Exercise 12, a typical mistake: eps inside the square root.
//
// Adam divides by sqrt(v_hat) + eps. Some optimizers (RMSprop in some libraries) use
// sqrt(v_hat + eps) instead; with eps = 1e-8 that adds up to 1e-4 to the denominator, nothing
// next to gradients of size 1, but ten times a gradient of size 1e-5: its step is 10 times too
// small.
// checker-expects: \[4099\] tiny gradients \(\|g\| near 1e-5\): eps matters +FAIL.*matches eps added inside the square root
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
    a.m[i] = static_cast<float>(m);
    a.v[i] = static_cast<float>(v);
    // The mistake: eps inside the square root.
    const double denom = std::sqrt(v / a.bias_correction2 + a.eps);
    a.param[i] = static_cast<float>(p - a.lr / a.bias_correction1 * m / denom);
  }
}

PRISM_REGISTER_KERNEL(adam_update, my_adamw);
