// Exercise 12: one step of AdamW, in place. The task and the math are in README.md, next to
// this file.
//
// For every element i (Loshchilov and Hutter's AdamW; Kingma and Ba's Adam when decoupled is
// false), at step t >= 1, with wd = a.weight_decay:
//   a.decoupled (AdamW):  p = p (1 - lr wd);  g = grad       the weight decays by itself
//   otherwise (Adam, L2): g = grad + wd p                    the decay goes through m and v
//   m = beta1 m + (1 - beta1) g
//   v = beta2 v + (1 - beta2) g^2
//   p = p - (lr / bias_correction1) m / (sqrt(v) / sqrt(bias_correction2) + eps)
// where bias_correction1 = 1 - beta1^t and bias_correction2 = 1 - beta2^t arrive computed (the
// front end knows t; the kernel does not).
//
// Your kernel receives an AdamArgs<float> (kernels/args.h):
//   a.param[i], a.m[i], a.v[i]   read and written in place, i < a.numel (contiguous)
//   a.grad[i]                    read only
//   a.lr, a.beta1, a.beta2, a.eps, a.weight_decay, a.decoupled, a.bias_correction1,
//   a.bias_correction2           doubles (and a bool): the same for every element
//   a.workspace                  null for your kernel (scratch for prism's unfused variant)
//
// Check it:  build/prism check adamw
#include "kernels/ops/optim/args.h"
#include "kernels/registry.h"

using prism::kernels::AdamArgs;

// [[maybe_unused]]: the empty body does not read `a` yet, and -Wextra warns about unused
// parameters. Delete the attribute once your code uses `a`.
void my_adamw([[maybe_unused]] const AdamArgs<float>& a) {
  // TODO(exercise): for each i < a.numel, update m[i] and v[i] with this step's gradient, then
  // param[i], as above; handle decoupled true (AdamW) and false (Adam with L2). When the checker
  // passes, delete this TODO comment: ctest then checks your kernel instead of expecting this
  // empty one to fail.
}

PRISM_REGISTER_KERNEL(adam_update, my_adamw);
