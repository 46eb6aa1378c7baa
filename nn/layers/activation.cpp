#include "nn/layers/activation.h"

#include "tensor/ops.h"

namespace prism::nn {

Tensor ReLU::forward(const Tensor& x) {
  return relu(x);
}
Tensor GELU::forward(const Tensor& x) {
  return gelu(x);
}
Tensor Tanh::forward(const Tensor& x) {
  return prism::tanh(x);
}
Tensor Sigmoid::forward(const Tensor& x) {
  return sigmoid(x);
}
Tensor SiLU::forward(const Tensor& x) {
  return silu(x);
}

}  // namespace prism::nn
