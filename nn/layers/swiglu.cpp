#include "nn/layers/swiglu.h"

#include "tensor/ops.h"

namespace prism::nn {

SwiGLU::SwiGLU(int64_t dim, int64_t hidden) : dim_(dim), hidden_(hidden) {
  if (dim <= 0 || hidden <= 0) {
    throw Error("SwiGLU: sizes must be positive, got dim=" + std::to_string(dim) +
                ", hidden=" + std::to_string(hidden));
  }
  w1 = register_module("w1", std::make_shared<Linear>(dim, hidden, /*bias=*/false));
  w2 = register_module("w2", std::make_shared<Linear>(hidden, dim, /*bias=*/false));
  w3 = register_module("w3", std::make_shared<Linear>(dim, hidden, /*bias=*/false));
}

Tensor SwiGLU::forward(const Tensor& x) {
  if (x.dim() == 0 || x.size(-1) != dim_) {
    throw Error("SwiGLU(" + std::to_string(dim_) + " -> " + std::to_string(hidden_) + "): input " +
                x.shape().str() + " must end in " + std::to_string(dim_));
  }
  // Each Linear runs as its own child module (its own profile scope); the gate and the product
  // are one swiglu op in this module's scope.
  return (*w2)(swiglu((*w1)(x), (*w3)(x)));
}

std::string SwiGLU::extra_repr() const {
  return "dim=" + std::to_string(dim_) + ", hidden=" + std::to_string(hidden_);
}

}  // namespace prism::nn
