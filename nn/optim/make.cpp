#include "nn/optim/make.h"

#include "nn/optim/adam.h"
#include "nn/optim/sgd.h"

namespace prism::nn::optim {

std::unique_ptr<Optimizer> make_optimizer(const std::string& name, std::vector<Tensor> params,
                                          double lr) {
  if (name == "sgd") return std::make_unique<SGD>(std::move(params), lr, 0.9);
  if (name == "adam") return std::make_unique<Adam>(std::move(params), lr);
  if (name == "adamw") return std::make_unique<AdamW>(std::move(params), lr, Betas{}, 1e-8, 0.01);
  throw Error("optimizer: expected sgd, adam or adamw, got '" + name + "'");
}

}  // namespace prism::nn::optim
