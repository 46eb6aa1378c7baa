#include "nn/layers/transformer.h"

#include "tensor/ops.h"

namespace prism::nn {

TransformerBlock::TransformerBlock(int64_t d_model, int64_t heads, bool causal, int64_t mlp_ratio) {
  if (mlp_ratio <= 0) {
    throw Error("TransformerBlock: mlp_ratio must be positive, got " + std::to_string(mlp_ratio));
  }
  ln1 = register_module("ln1", std::make_shared<LayerNorm>(d_model));
  attn = register_module("attn", std::make_shared<MultiHeadAttention>(d_model, heads, causal));
  ln2 = register_module("ln2", std::make_shared<LayerNorm>(d_model));
  mlp = register_module("mlp", std::make_shared<Sequential>());
  mlp->emplace<Linear>(d_model, mlp_ratio * d_model);
  mlp->emplace<GELU>();
  mlp->emplace<Linear>(mlp_ratio * d_model, d_model);
}

Tensor TransformerBlock::forward(const Tensor& x) {
  Tensor h = x + (*attn)((*ln1)(x));
  return h + (*mlp)((*ln2)(h));
}

}  // namespace prism::nn
