// Exercise 12, a typical mistake: no bias correction.
//
// m and v start at 0, so after t steps they are (1 - beta^t) times the average they estimate:
// at step 1, m is 0.1 g and v is 0.001 g^2, and m / sqrt(v) is 3.2 times too large in size. The
// front end hands the kernel bias_correction1 = 1 - beta1^t and bias_correction2 = 1 - beta2^t;
// this kernel leaves them out, so its early steps are bc1 / sqrt(bc2) times too large: 3.2 at
// step 1, 6.5 at step 10 (where the corrections are 0.65 and 0.01).
// checker-expects: \[7\] step 10: bias corrections 0.65 and 0.01 +FAIL.*matches m and v without their bias corrections
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
    a.param[i] = static_cast<float>(p - a.lr * m / (std::sqrt(v) + a.eps));  // the mistake
  }
}

PRISM_REGISTER_KERNEL(adam_update, my_adamw);
