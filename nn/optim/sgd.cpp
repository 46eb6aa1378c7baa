#include "nn/optim/sgd.h"

#include <cmath>

#include "tensor/ops.h"

namespace prism::nn::optim {

SGD::SGD(std::vector<Tensor> params, double lr, double momentum, double weight_decay, bool nesterov)
    : Optimizer(std::move(params), lr, "SGD"), velocity_(this->params().size()) {
  require(std::isfinite(momentum) && momentum >= 0, "momentum must be >= 0", momentum);
  require(std::isfinite(weight_decay) && weight_decay >= 0, "weight_decay must be >= 0",
          weight_decay);
  require(!nesterov || momentum > 0, "nesterov needs momentum > 0", momentum);
  hyper_.momentum = momentum;
  hyper_.weight_decay = weight_decay;
  hyper_.nesterov = nesterov;
}

void SGD::prepare_state(size_t i, const Tensor& param) {
  if (hyper_.momentum == 0) return;
  Tensor& v = velocity_[i];
  if (v.defined()) {
    check_state(i, param, v, "velocity");
  } else {
    v = zeros_like(param);  // on param's device (cpu, or meta: counted, not allocated)
  }
}

void SGD::update(size_t i, const Tensor& param, const Tensor& grad) {
  SgdHyper h = hyper_;
  h.lr = lr();
  sgd_update_(param, grad, velocity_[i], h);
}

}  // namespace prism::nn::optim
