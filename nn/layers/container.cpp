#include "nn/layers/container.h"

#include "tensor/ops.h"

namespace prism::nn {

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
  for (const auto& m : modules) push_back(m);
}

Sequential::Sequential(const std::vector<std::shared_ptr<Module>>& modules) {
  for (const auto& m : modules) push_back(m);
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  for (const auto& m : layers_) y = (*m)(y);
  return y;
}

const std::shared_ptr<Module>& Sequential::operator[](size_t i) const {
  if (i >= layers_.size()) {
    throw Error("Sequential: index " + std::to_string(i) + " out of range (size " +
                std::to_string(layers_.size()) + ")");
  }
  return layers_[i];
}

Residual::Residual(std::shared_ptr<Module> inner) : inner_(std::move(inner)) {
  if (!inner_) throw Error("Residual: the inner module is null");
  register_module("inner", inner_);
}

Tensor Residual::forward(const Tensor& x) {
  Tensor y = (*inner_)(x);
  if (!(y.shape() == x.shape())) {
    throw Error("Residual: the inner module maps " + x.shape().str() + " to " + y.shape().str() +
                "; x + inner(x) needs the same shape");
  }
  return x + y;
}

}  // namespace prism::nn
