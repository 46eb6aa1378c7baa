#include "nn/optim/adam.h"

#include <cmath>

#include "tensor/ops.h"

namespace prism::nn::optim {

Adam::Adam(std::vector<Tensor> params, double lr, Betas betas, double eps, double weight_decay)
    : Adam(std::move(params), lr, betas, eps, weight_decay, false, "Adam") {}

Adam::Adam(std::vector<Tensor> params, double lr, Betas betas, double eps, double weight_decay,
           bool decoupled, const char* name)
    : Optimizer(std::move(params), lr, name),
      m_(this->params().size()),
      v_(this->params().size()),
      t_(this->params().size(), 0) {
  // Written as !(in range) so that NaN is refused too.
  require(betas.beta1 >= 0 && betas.beta1 < 1, "beta1 must be in [0, 1)", betas.beta1);
  require(betas.beta2 >= 0 && betas.beta2 < 1, "beta2 must be in [0, 1)", betas.beta2);
  require(std::isfinite(eps) && eps >= 0, "eps must be >= 0", eps);
  require(std::isfinite(weight_decay) && weight_decay >= 0, "weight_decay must be >= 0",
          weight_decay);
  hyper_.beta1 = betas.beta1;
  hyper_.beta2 = betas.beta2;
  hyper_.eps = eps;
  hyper_.weight_decay = weight_decay;
  hyper_.decoupled = decoupled;
}

void Adam::prepare_state(size_t i, const Tensor& param) {
  if (!m_[i].defined()) {
    m_[i] = zeros_like(param);  // on param's device (cpu, or meta: counted, not allocated)
    v_[i] = zeros_like(param);
  } else {
    check_state(i, param, m_[i], "first moment");
    check_state(i, param, v_[i], "second moment");
  }
}

void Adam::update(size_t i, const Tensor& param, const Tensor& grad) {
  AdamHyper h = hyper_;
  h.lr = lr();
  h.step = t_[i] + 1;
  adam_update_(param, grad, m_[i], v_[i], h);
  t_[i] = h.step;  // advanced only once the update has run
}

AdamW::AdamW(std::vector<Tensor> params, double lr, Betas betas, double eps, double weight_decay)
    : Adam(std::move(params), lr, betas, eps, weight_decay, true, "AdamW") {}

}  // namespace prism::nn::optim
