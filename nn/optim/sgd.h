// SGD: stochastic gradient descent with optional momentum, weight decay and Nesterov momentum,
// as in PyTorch's torch.optim.SGD (with dampening 0). Per parameter p with gradient grad:
//
//   g = grad + weight_decay * p            (L2 penalty (wd / 2) |p|^2)
//   v = momentum * v + g                   (velocity, zeros before the first step)
//   p = p - lr * (nesterov ? g + momentum * v : v)
//
// Without momentum there is no velocity (no optimizer state at all) and p = p - lr * g.
// Each parameter's update is one "sgd_update" op (tensor/optim_ops.h), recorded in the
// optimizer phase.
#pragma once

#include <vector>

#include "nn/optim/optimizer.h"
#include "tensor/optim_ops.h"

namespace prism::nn::optim {

class SGD : public Optimizer {
 public:
  // lr, momentum and weight_decay >= 0; nesterov needs momentum > 0.
  SGD(std::vector<Tensor> params, double lr, double momentum = 0, double weight_decay = 0,
      bool nesterov = false);

  double momentum() const { return hyper_.momentum; }
  double weight_decay() const { return hyper_.weight_decay; }
  bool nesterov() const { return hyper_.nesterov; }
  // Parameter i's momentum buffer: undefined before its first step, and always without momentum.
  const Tensor& velocity(size_t i) const { return velocity_.at(i); }

 protected:
  void prepare_state(size_t i, const Tensor& param) override;
  void update(size_t i, const Tensor& param, const Tensor& grad) override;

 private:
  SgdHyper hyper_;
  std::vector<Tensor> velocity_;
};

}  // namespace prism::nn::optim
