// Embedding: a lookup table. Row i of the weight [num, dim] is the vector of token i.
//
//   ids [...] (int64) -> out [..., dim],  out[..., :] = weight[ids[...], :]
//
// Made of index_select on the flattened ids; its gradient adds each output row's gradient into
// the row it came from (a token seen twice gets both). Init: N(0, 1), as in the mainstream
// frameworks. Parameters: num * dim.
#pragma once

#include "nn/module.h"

namespace prism::nn {

class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim);
  Tensor forward(const Tensor& ids) override;
  std::string type_name() const override { return "Embedding"; }
  std::string extra_repr() const override;

  Tensor weight;  // [num, dim]

 private:
  int64_t num_, dim_;
};

}  // namespace prism::nn
