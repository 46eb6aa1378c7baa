#include "nn/layers/linear.h"

#include "nn/init.h"
#include "tensor/ops.h"

namespace prism::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool with_bias)
    : in_(in_features), out_(out_features) {
  if (in_features <= 0 || out_features <= 0) {
    throw Error("Linear: sizes must be positive, got in=" + std::to_string(in_features) +
                ", out=" + std::to_string(out_features));
  }
  weight = register_parameter("weight", init::kaiming_uniform({out_, in_}));
  if (with_bias) bias = register_parameter("bias", init::bias_uniform({out_}, in_));
}

Tensor Linear::forward(const Tensor& x) {
  if (x.dim() == 0 || x.size(-1) != in_) {
    throw Error("Linear(" + std::to_string(in_) + " -> " + std::to_string(out_) + "): input " +
                x.shape().str() + " must end in " + std::to_string(in_) + " features");
  }
  // W^T is a free view (transpose); matmul reads it through its strides.
  Tensor y = matmul(x, weight.t());
  return bias.defined() ? y + bias : y;
}

std::string Linear::extra_repr() const {
  return "in=" + std::to_string(in_) + ", out=" + std::to_string(out_) +
         ", bias=" + (bias.defined() ? "true" : "false");
}

}  // namespace prism::nn
