// Conv2d: a 2-D convolution (cross-correlation, as in every framework) over [N, C, H, W].
//
//   y[n, o, i, j] = b[o] + sum_{c, u, v} W[o, c, u, v] x[n, c, i*s + u - p, j*s + v - p]
//   Ho = (H + 2p - k) / s + 1, and the same for W.
//
// Wraps prism::conv2d (tensor/ops/conv.cpp). Weight [out, in, k, k], bias [out].
// Init: Kaiming uniform with fan_in = in * k * k, so W, b ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
// Parameters: out * in * k * k + out, e.g. 1 -> 16 with 3x3 kernels: 16*1*9 + 16 = 160.
#pragma once

#include "nn/module.h"

namespace prism::nn {

class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, int kernel_size, int stride = 1,
         int padding = 0, bool bias = true);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "Conv2d"; }
  std::string extra_repr() const override;
  int kernel_size() const { return kernel_; }
  int stride() const { return stride_; }
  int padding() const { return padding_; }

  Tensor weight;  // [out, in, k, k]
  Tensor bias;    // [out], undefined without bias

 private:
  int64_t in_, out_;
  int kernel_, stride_, padding_;
};

}  // namespace prism::nn
