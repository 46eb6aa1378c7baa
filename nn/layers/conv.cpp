#include "nn/layers/conv.h"

#include "nn/init.h"
#include "tensor/ops.h"

namespace prism::nn {

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, int kernel_size, int stride, int padding,
               bool with_bias)
    : in_(in_channels),
      out_(out_channels),
      kernel_(kernel_size),
      stride_(stride),
      padding_(padding) {
  if (in_ <= 0 || out_ <= 0 || kernel_ <= 0 || stride_ <= 0 || padding_ < 0) {
    throw Error("Conv2d: invalid configuration (" + extra_repr() +
                "): channels, kernel and stride must be positive, padding non-negative");
  }
  const Dims shape{out_, in_, kernel_, kernel_};
  weight = register_parameter("weight", init::kaiming_uniform(shape));
  if (with_bias) bias = register_parameter("bias", init::bias_uniform({out_}, init::fan_in(shape)));
}

Tensor Conv2d::forward(const Tensor& x) {
  if (x.dim() != 4 || x.size(1) != in_) {
    throw Error("Conv2d(" + extra_repr() + "): input " + x.shape().str() + " must be [N, " +
                std::to_string(in_) + ", H, W]");
  }
  return conv2d(x, weight, bias, stride_, padding_);
}

std::string Conv2d::extra_repr() const {
  return std::to_string(in_) + " -> " + std::to_string(out_) +
         ", kernel=" + std::to_string(kernel_) + ", stride=" + std::to_string(stride_) +
         ", padding=" + std::to_string(padding_) + ", bias=" + (bias.defined() ? "true" : "false");
}

}  // namespace prism::nn
