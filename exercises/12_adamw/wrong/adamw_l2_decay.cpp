// Exercise 12, a typical mistake: weight decay as an L2 penalty when AdamW asks for decoupled.
//
// Adding wd p to the gradient is what Adam with weight decay did before AdamW: the penalty's
// gradient goes through m and v and is then divided by sqrt(v_hat), so a weight with large
// gradients is hardly decayed at all. AdamW (decoupled true) shrinks the weight directly,
// p = p (1 - lr wd), and leaves m and v to the gradient. This kernel ignores a.decoupled.
// checker-expects: \[4099\] AdamW: weight decay 0.1, lr 0.01 +FAIL.*matches Adam with an L2 penalty
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
    g += wd * p;  // the mistake: AdamW shrinks p instead (when a.decoupled)
    const double m = a.beta1 * a.m[i] + (1 - a.beta1) * g;
    const double v = a.beta2 * a.v[i] + (1 - a.beta2) * g * g;
    a.m[i] = static_cast<float>(m);
    a.v[i] = static_cast<float>(v);
    const double denom = std::sqrt(v) / std::sqrt(a.bias_correction2) + a.eps;
    a.param[i] = static_cast<float>(p - a.lr / a.bias_correction1 * m / denom);
  }
}

PRISM_REGISTER_KERNEL(adam_update, my_adamw);
