// Optimizer updates, naive variant: one loop over the elements, updating the parameter and its
// state in place (the math is in kernels/args.h, beside SgdArgs and AdamArgs).
//
// Idea: everything an update needs for element i (param, grad, momentum / moments) is at index
// i of contiguous buffers, so one pass reads each buffer once and writes param and state once.
// A framework that composed the same math from elementwise ops would make 5-15 passes and as
// many temporaries; this is the "fused" optimizer step of the mainstream frameworks in its
// plainest form.
// Cost: SGD 2-8 FLOPs per element over 12-20 bytes (float32), Adam 13-15 FLOPs over 28 bytes:
// memory bound on any machine, so the figure to watch is GB/s (docs/COSTS.md has the formulas).
#include <cmath>

#include "kernels/cpu/kernel_list.h"

namespace prism::kernels::cpu {
namespace {

template <class T>
void sgd_naive(const SgdArgs<T>& a) {
  const T lr = static_cast<T>(a.lr);
  const T mu = static_cast<T>(a.momentum);
  const T wd = static_cast<T>(a.weight_decay);
  for (int64_t i = 0; i < a.numel; ++i) {
    T g = a.grad[i];
    if (a.weight_decay != 0) g += wd * a.param[i];  // L2 penalty wd/2 |p|^2 has gradient wd p
    if (a.velocity) {
      const T v = mu * a.velocity[i] + g;
      a.velocity[i] = v;
      g = a.nesterov ? g + mu * v : v;  // Nesterov: look ahead along the new velocity
    }
    a.param[i] -= lr * g;
  }
}

template <class T>
void adam_naive(const AdamArgs<T>& a) {
  const T b1 = static_cast<T>(a.beta1), one_minus_b1 = static_cast<T>(1 - a.beta1);
  const T b2 = static_cast<T>(a.beta2), one_minus_b2 = static_cast<T>(1 - a.beta2);
  const T eps = static_cast<T>(a.eps);
  const T wd = static_cast<T>(a.weight_decay);
  const T decay = static_cast<T>(1 - a.lr * a.weight_decay);  // AdamW's shrink factor
  const T step_size = static_cast<T>(a.lr / a.bias_correction1);
  const T bc2_sqrt = static_cast<T>(std::sqrt(a.bias_correction2));
  const bool l2 = a.weight_decay != 0 && !a.decoupled;
  const bool shrink = a.weight_decay != 0 && a.decoupled;
  for (int64_t i = 0; i < a.numel; ++i) {
    T p = a.param[i];
    T g = a.grad[i];
    if (shrink) p *= decay;  // decoupled: decay the weight itself, outside the moments
    if (l2) g += wd * p;     // L2: the penalty's gradient goes through the moments
    const T m = b1 * a.m[i] + one_minus_b1 * g;
    const T v = b2 * a.v[i] + one_minus_b2 * g * g;
    a.m[i] = m;
    a.v[i] = v;
    const T denom = std::sqrt(v) / bc2_sqrt + eps;
    a.param[i] = p - step_size * m / denom;
  }
}

}  // namespace

void register_optim_naive(Registry& r) {
  r.op("sgd_update", Device::cpu,
       "2 FLOP/elem + 2 with weight decay + 2 with momentum + 2 more for Nesterov; bytes = "
       "param read+write + grad (+ velocity read+write)")
      .add<SgdArgs>("naive", VariantTag::naive, "one in-place loop over param, grad, velocity",
                    &sgd_naive<float>, &sgd_naive<double>);
  r.op("adam_update", Device::cpu,
       "13 FLOP/elem + 2 with L2 weight decay (Adam) or + 1 decoupled (AdamW); bytes = param, "
       "m, v read+write + grad")
      .add<AdamArgs>("naive", VariantTag::naive, "one in-place loop over param, grad, m, v",
                     &adam_naive<float>, &adam_naive<double>);
}

}  // namespace prism::kernels::cpu
