// Pooling layers over [N, C, H, W], wrapping the pooling ops (tensor/ops/pool.cpp).
//
// MaxPool2d: the max of each kernel x kernel window (padding counts as -inf).
// AvgPool2d: the mean of each window (padding excluded from the count).
// Stride defaults to the kernel size (non-overlapping windows); Ho = (H + 2p - k) / s + 1.
// No parameters.
#pragma once

#include "nn/module.h"

namespace prism::nn {

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(int kernel_size, int stride = 0, int padding = 0);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "MaxPool2d"; }
  std::string extra_repr() const override;

 private:
  int kernel_, stride_, padding_;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(int kernel_size, int stride = 0, int padding = 0);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "AvgPool2d"; }
  std::string extra_repr() const override;

 private:
  int kernel_, stride_, padding_;
};

}  // namespace prism::nn
