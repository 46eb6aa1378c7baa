#include "nn/layers/embedding.h"

#include "nn/init.h"
#include "tensor/ops.h"

namespace prism::nn {

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim)
    : num_(num_embeddings), dim_(embedding_dim) {
  if (num_ <= 0 || dim_ <= 0) {
    throw Error("Embedding: sizes must be positive, got num=" + std::to_string(num_) +
                ", dim=" + std::to_string(dim_));
  }
  weight = register_parameter("weight", init::normal({num_, dim_}));
}

Tensor Embedding::forward(const Tensor& ids) {
  if (ids.dtype() != DType::i64) {
    throw Error(std::string("Embedding: ids must be int64, got ") + dtype_name(ids.dtype()) + " " +
                ids.shape().str());
  }
  if (ids.device() == Device::cpu) {
    // Checked here (not only in the kernel) so the message names the layer and its size.
    const Tensor c = ids.contiguous();
    const int64_t* p = c.data<int64_t>();
    for (int64_t i = 0; i < c.numel(); ++i) {
      if (p[i] < 0 || p[i] >= num_) {
        throw Error("Embedding: id " + std::to_string(p[i]) + " is out of range [0, " +
                    std::to_string(num_) + ")");
      }
    }
  }
  Dims out_shape = ids.shape();
  out_shape.push_back(dim_);
  return index_select(weight, 0, ids.reshape({-1})).reshape(out_shape);
}

std::string Embedding::extra_repr() const {
  return "num=" + std::to_string(num_) + ", dim=" + std::to_string(dim_);
}

}  // namespace prism::nn
