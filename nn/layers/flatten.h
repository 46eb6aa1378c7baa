// Flatten: merges dims start..end into one, e.g. [N, C, H, W] -> [N, C*H*W] with the defaults
// (start 1, end -1: everything but the batch dim). A view when the input is contiguous.
#pragma once

#include "nn/module.h"

namespace prism::nn {

class Flatten : public Module {
 public:
  explicit Flatten(int start_dim = 1, int end_dim = -1) : start_(start_dim), end_(end_dim) {}
  Tensor forward(const Tensor& x) override { return x.flatten(start_, end_); }
  std::string type_name() const override { return "Flatten"; }
  std::string extra_repr() const override {
    return "start=" + std::to_string(start_) + ", end=" + std::to_string(end_);
  }

 private:
  int start_, end_;
};

}  // namespace prism::nn
