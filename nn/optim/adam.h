// Adam and AdamW (Kingma & Ba 2015, "Adam: A Method for Stochastic Optimization";
// Loshchilov & Hutter 2019, "Decoupled Weight Decay Regularization"), as in PyTorch's
// torch.optim.Adam / AdamW (amsgrad off). Per parameter p with gradient grad, at its step t:
//
//   Adam:   g = grad + weight_decay * p        (L2: the decay goes through the moments)
//   AdamW:  p = p * (1 - lr * weight_decay)    (decoupled: the weight shrinks directly)
//           g = grad
//   both:   m = beta1 * m + (1 - beta1) * g          (first moment, zeros at first)
//           v = beta2 * v + (1 - beta2) * g^2        (second moment, zeros at first)
//           m_hat = m / (1 - beta1^t),  v_hat = v / (1 - beta2^t)     (bias correction)
//           p = p - lr * m_hat / (sqrt(v_hat) + eps)
//
// t counts this parameter's own steps (a step that skips it, having no gradient, does not
// advance it). Each update is one "adam_update" op (tensor/optim_ops.h), recorded in the
// optimizer phase; m and v are optimizer state (2 x the parameter's bytes).
#pragma once

#include <cstdint>
#include <vector>

#include "nn/optim/optimizer.h"
#include "tensor/optim_ops.h"

namespace prism::nn::optim {

struct Betas {
  double beta1 = 0.9;
  double beta2 = 0.999;
};

class Adam : public Optimizer {
 public:
  // lr >= 0, betas in [0, 1), eps >= 0, weight_decay >= 0 (L2, added to the gradient).
  Adam(std::vector<Tensor> params, double lr = 1e-3, Betas betas = {}, double eps = 1e-8,
       double weight_decay = 0);

  Betas betas() const { return {hyper_.beta1, hyper_.beta2}; }
  double eps() const { return hyper_.eps; }
  double weight_decay() const { return hyper_.weight_decay; }
  bool decoupled() const { return hyper_.decoupled; }
  // Parameter i's moments (undefined before its first step) and its step count t.
  const Tensor& exp_avg(size_t i) const { return m_.at(i); }
  const Tensor& exp_avg_sq(size_t i) const { return v_.at(i); }
  int64_t param_steps(size_t i) const { return t_.at(i); }

 protected:
  // AdamW's constructor: the same update with decoupled weight decay.
  Adam(std::vector<Tensor> params, double lr, Betas betas, double eps, double weight_decay,
       bool decoupled, const char* name);
  void prepare_state(size_t i, const Tensor& param) override;
  void update(size_t i, const Tensor& param, const Tensor& grad) override;

 private:
  AdamHyper hyper_;
  std::vector<Tensor> m_, v_;
  std::vector<int64_t> t_;
};

// Adam with decoupled weight decay: p shrinks by lr * weight_decay * p each step, outside the
// moments, so the decay is not rescaled by 1 / sqrt(v_hat). PyTorch's default decay is 0.01.
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, double lr = 1e-3, Betas betas = {}, double eps = 1e-8,
        double weight_decay = 0.01);
};

}  // namespace prism::nn::optim
