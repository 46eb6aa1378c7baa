// Dropout (Srivastava et al., 2014): in training, each element is zeroed with probability p and
// the survivors are scaled by 1/(1-p), so E[y] = x and the next layer sees the same scale in
// training and in evaluation ("inverted" dropout). In eval mode it is the identity.
//
//   y = x * m / (1 - p),   m ~ Bernoulli(1 - p) elementwise (prism::bernoulli, seeded)
//
// The gradient flows only through the kept elements, scaled the same way.
#pragma once

#include "nn/module.h"

namespace prism::nn {

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "Dropout"; }
  std::string extra_repr() const override;
  double p() const { return p_; }

 private:
  double p_;
};

}  // namespace prism::nn
