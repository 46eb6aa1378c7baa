// An optimizer by name, with the settings `prism train` and `prism bench` use: "sgd" (momentum
// 0.9), "adam", or "adamw" (weight decay 0.01). An unknown name is an Error listing the three.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/optim/optimizer.h"

namespace prism::nn::optim {

std::unique_ptr<Optimizer> make_optimizer(const std::string& name, std::vector<Tensor> params,
                                          double lr);

}  // namespace prism::nn::optim
