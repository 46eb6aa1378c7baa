// Exercise 12, a typical mistake: AdamW's decay applied to the weight after the Adam step.
//
// AdamW is p = p (1 - lr wd) - lr m_hat / (sqrt(v_hat) + eps): the decay multiplies the old
// weight. Shrinking the stepped weight instead also shrinks the step, by lr wd of it: 1e-3 of it
// here, which one step hides and the 4099-element case (wd 0.1, lr 0.01) shows. The checker must
// name this cause from the output (its step matches the model of this mistake), not the L2 hint.
// checker-expects: \[4099\] AdamW: weight decay 0.1, lr 0.01 +FAIL.*matches the decay applied to the weight after the Adam step
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
    if (!a.decoupled) g += wd * p;
    const double m = a.beta1 * a.m[i] + (1 - a.beta1) * g;
    const double v = a.beta2 * a.v[i] + (1 - a.beta2) * g * g;
    a.m[i] = static_cast<float>(m);
    a.v[i] = static_cast<float>(v);
    const double denom = std::sqrt(v) / std::sqrt(a.bias_correction2) + a.eps;
    p -= a.lr / a.bias_correction1 * m / denom;
    if (a.decoupled) p *= 1 - a.lr * wd;  // the mistake: the decay belongs before the step
    a.param[i] = static_cast<float>(p);
  }
}

PRISM_REGISTER_KERNEL(adam_update, my_adamw);
