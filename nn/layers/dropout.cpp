#include "nn/layers/dropout.h"

#include <cstdio>

#include "tensor/ops.h"

namespace prism::nn {

Dropout::Dropout(double p) : p_(p) {
  if (!(p >= 0 && p <= 1)) throw Error("Dropout: p must be in [0, 1], got " + std::to_string(p));
}

Tensor Dropout::forward(const Tensor& x) {
  if (!is_training() || p_ == 0) return x;
  if (p_ == 1) return x * 0.0;  // everything dropped (1/(1-p) would be infinite)
  // The scale is folded into the mask (no gradient flows into it), then one multiply with x.
  // The mask is drawn on the host from prism's generator (the same numbers on every device) and
  // made where x lives.
  DefaultDevice on(x.device());
  Tensor mask = bernoulli(x.shape(), 1 - p_, x.dtype()) * (1 / (1 - p_));
  return x * mask;
}

std::string Dropout::extra_repr() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "p=%g", p_);
  return buf;
}

}  // namespace prism::nn
