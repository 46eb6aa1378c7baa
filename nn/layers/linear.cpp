#include "nn/layers/linear.h"

#include "nn/init.h"
#include "tensor/ops.h"

namespace prism::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool with_bias)
    : Linear(in_features, out_features, LinearOptions{.bias = with_bias}) {}

Linear::Linear(int64_t in_features, int64_t out_features, LinearOptions options)
    : in_(in_features), out_(out_features), options_(options) {
  if (in_features <= 0 || out_features <= 0) {
    throw Error("Linear: sizes must be positive, got in=" + std::to_string(in_features) +
                ", out=" + std::to_string(out_features));
  }
  if (options.relu_input && !options.fused) {
    throw Error("Linear: relu_input needs fused (the ReLU is folded into the fused op)");
  }
  weight = register_parameter("weight", init::kaiming_uniform({out_, in_}));
  if (options.bias) bias = register_parameter("bias", init::bias_uniform({out_}, in_));
}

Tensor Linear::forward(const Tensor& x) {
  if (x.dim() == 0 || x.size(-1) != in_) {
    throw Error("Linear(" + std::to_string(in_) + " -> " + std::to_string(out_) + "): input " +
                x.shape().str() + " must end in " + std::to_string(in_) + " features");
  }
  if (options_.fused) return linear(x, weight, bias, options_.relu_input);
  // W^T is a free view (transpose); matmul reads it through its strides.
  Tensor y = matmul(x, weight.t());
  return bias.defined() ? y + bias : y;
}

std::string Linear::extra_repr() const {
  return "in=" + std::to_string(in_) + ", out=" + std::to_string(out_) +
         ", bias=" + (bias.defined() ? "true" : "false") +
         (options_.relu_input ? ", relu_input=true" : "") + (options_.fused ? ", fused=true" : "");
}

}  // namespace prism::nn
