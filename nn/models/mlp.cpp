#include "nn/models/mlp.h"

#include <utility>

namespace prism::nn {

MLP::MLP(std::vector<int64_t> sizes) : sizes_(std::move(sizes)) {
  if (sizes_.size() < 2) {
    throw Error("MLP: needs at least two sizes {in, ..., out}, got " +
                std::to_string(sizes_.size()));
  }
  for (int64_t s : sizes_) {
    if (s <= 0) throw Error("MLP(" + extra_repr() + "): every size must be positive");
  }
  flatten_ = register_module("flatten", std::make_shared<Flatten>(1, -1));
  const size_t n_layers = sizes_.size() - 1;
  for (size_t i = 0; i < n_layers; ++i) {
    const std::string k = std::to_string(i + 1);
    // Every layer but the first reads the ReLU of the one below; the logits get none.
    const LinearOptions options{.bias = true, .fused = true, .relu_input = i > 0};
    linears.push_back(
        register_module("fc" + k, std::make_shared<Linear>(sizes_[i], sizes_[i + 1], options)));
  }
}

Tensor MLP::forward(const Tensor& x) {
  if (x.dim() < 2) {
    throw Error("MLP(" + extra_repr() + "): input " + x.shape().str() +
                " must be [N, ...] with a batch dim first");
  }
  Tensor h = (*flatten_)(x);  // [N, ...] -> [N, features]: a view of a contiguous input
  if (h.size(1) != sizes_.front()) {
    throw Error("MLP(" + extra_repr() + "): input " + x.shape().str() + " has " +
                std::to_string(h.size(1)) + " features per sample, the first layer expects " +
                std::to_string(sizes_.front()));
  }
  for (const auto& fc : linears) h = (*fc)(h);
  return h;  // [N, out]
}

std::string MLP::extra_repr() const {
  std::string s;
  for (size_t i = 0; i < sizes_.size(); ++i) {
    if (i > 0) s += "-";
    s += std::to_string(sizes_[i]);
  }
  return s;
}

}  // namespace prism::nn
