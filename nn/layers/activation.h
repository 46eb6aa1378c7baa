// Elementwise activations as modules, so they can sit in a Sequential and show up as their own
// scope in a profile. No parameters; each is one tensor op (tensor/ops.h has the math).
#pragma once

#include "nn/module.h"

namespace prism::nn {

class ReLU : public Module {  // max(x, 0)
 public:
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "ReLU"; }
};

class GELU : public Module {  // x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
 public:
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "GELU"; }
};

class Tanh : public Module {
 public:
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "Tanh"; }
};

class Sigmoid : public Module {  // 1 / (1 + exp(-x))
 public:
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "Sigmoid"; }
};

class SiLU : public Module {  // x sigmoid(x), also called Swish
 public:
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "SiLU"; }
};

}  // namespace prism::nn
