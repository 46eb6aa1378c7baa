// In-place parameter updates: the ops an optimizer's step() is made of (nn/optim/).
//
// Each call updates one parameter tensor, and its optimizer state, in place with one kernel
// ("sgd_update", "adam_update"). Variants: "fused" (the default, one loop,
// kernels/ops/optim/fused.cpp) and "per_tensor" (one pass per elementary op, as a framework
// without fusion runs it, kernels/ops/optim/per_tensor.cpp); their results agree bit for bit.
// They are ordinary ops: checked, costed (kernels/costs.h, docs/COSTS.md), dispatched through
// the registry and recorded by the profiler, in whatever phase is current (optimizers set
// Phase::optimizer). They are never recorded by autograd: an update is not differentiable.
// Each bumps the version counter (Tensor::version) of every buffer it writes (param and the
// state), so a graph that saved one of them earlier refuses its backward with an error.
// The fused variant allocates nothing; per_tensor gets its temporaries as one scratch buffer
// that the front end allocates inside the op's record, tagged temporary.
//
// Requirements, each an Error naming the op when broken: param is float32 or float64 and
// contiguous; grad and every state tensor have param's shape, dtype and device, are
// contiguous, and do not share memory with param or with each other (an update reads and
// writes element i of every buffer; aliasing would read values already overwritten).
//
// The math, as in the mainstream frameworks (PyTorch's torch.optim.SGD / Adam / AdamW):
//
//   SGD:    g = grad + wd p;  v = mu v + g;  p = p - lr (nesterov ? g + mu v : v)
//           (without momentum, v is not kept and p = p - lr g)
//   Adam:   g = grad + wd p                       (L2 weight decay, through the moments)
//   AdamW:  p = p (1 - lr wd);  g = grad          (decoupled weight decay)
//   both:   m = b1 m + (1 - b1) g
//           v = b2 v + (1 - b2) g^2
//           m_hat = m / (1 - b1^t),  v_hat = v / (1 - b2^t)      (bias correction, t >= 1)
//           p = p - lr m_hat / (sqrt(v_hat) + eps)
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace prism {

struct SgdHyper {
  double lr = 0.01;         // >= 0
  double momentum = 0;      // >= 0; 0 means no velocity
  double weight_decay = 0;  // >= 0; L2 penalty (wd / 2) |p|^2
  bool nesterov = false;    // needs momentum > 0
};

struct AdamHyper {
  double lr = 1e-3;         // >= 0
  double beta1 = 0.9;       // in [0, 1)
  double beta2 = 0.999;     // in [0, 1)
  double eps = 1e-8;        // >= 0
  double weight_decay = 0;  // >= 0
  bool decoupled = false;   // false: Adam with L2; true: AdamW
  int64_t step = 1;         // t, counted from 1 (the bias correction divides by 1 - b^t)
};

// One SGD step on `param` in place. `velocity` (the momentum buffer) is read and written when
// momentum > 0 and must then be defined (zeros before the first step); with momentum 0 it is
// ignored and may be undefined.
void sgd_update_(const Tensor& param, const Tensor& grad, const Tensor& velocity,
                 const SgdHyper& hyper);

// One Adam / AdamW step on `param` in place; `m` and `v` are the first and second moments
// (zeros before the first step), updated in place.
void adam_update_(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                  const AdamHyper& hyper);

}  // namespace prism
