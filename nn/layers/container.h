// Containers: modules made of other modules.
//
// Sequential runs its children in order, each on the previous one's output. Children are
// named by position, "0", "1", ..., so the second layer of a Sequential called "features"
// records its ops under "model.features.1".
//
// Residual wraps one module: y = x + inner(x). The skip connection gives the gradient a path
// around the block (dL/dx = dL/dy + dL/dy * d inner/dx), which is what lets deep stacks
// (ResNets, transformers) train. Its child is named "inner".
#pragma once

#include <initializer_list>

#include "nn/module.h"

namespace prism::nn {

class Sequential : public Module {
 public:
  Sequential() = default;
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  explicit Sequential(const std::vector<std::shared_ptr<Module>>& modules);

  // Appends a module under the next number and returns it.
  template <class M>
  std::shared_ptr<M> push_back(std::shared_ptr<M> m) {
    if (!m) throw Error("Sequential: cannot append a null module");
    register_module(std::to_string(layers_.size()), m);  // checks first, then appends
    layers_.push_back(m);
    return m;
  }
  // Builds a module in place and appends it: seq.emplace<Linear>(784, 256).
  template <class M, class... Args>
  std::shared_ptr<M> emplace(Args&&... args) {
    return push_back(std::make_shared<M>(std::forward<Args>(args)...));
  }

  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "Sequential"; }

  size_t size() const { return layers_.size(); }
  const std::shared_ptr<Module>& operator[](size_t i) const;

 private:
  std::vector<std::shared_ptr<Module>> layers_;
};

class Residual : public Module {
 public:
  explicit Residual(std::shared_ptr<Module> inner);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "Residual"; }
  const std::shared_ptr<Module>& inner() const { return inner_; }

 private:
  std::shared_ptr<Module> inner_;
};

}  // namespace prism::nn
