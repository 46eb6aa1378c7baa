// TransformerBlock: the pre-LayerNorm block of GPT-2 and most modern transformers.
//
//   x = x + attn(ln1(x))          attention mixes information across positions
//   x = x + mlp(ln2(x))           mlp = Linear(D, 4D) -> GELU -> Linear(4D, D), per position
//
// Normalising the input of each branch (not the sum, as the original post-LN block did) keeps
// the residual stream an identity path from input to output, which trains stably without
// learning-rate warm-up tricks (Xiong et al., 2020).
// Children: "ln1", "attn", "ln2", "mlp" (a Sequential: "0" Linear, "1" GELU, "2" Linear).
// The MLP's first Linear and its GELU run as one op, prism::linear_gelu (tensor/ops/
// linear_gelu.cpp: the bias and GELU applied to each block of the product while it is in cache,
// one output buffer instead of three), recorded in the scope of "mlp.0"; the modules and their
// parameter names stay as listed, so checkpoints load either way.
// Parameters: 12*D*D + 13*D (attention 4D^2 + 4D, MLP 8D^2 + 5D, two LayerNorms 4D).
#pragma once

#include "nn/layers/activation.h"
#include "nn/layers/attention.h"
#include "nn/layers/container.h"
#include "nn/layers/normalization.h"

namespace prism::nn {

class TransformerBlock : public Module {
 public:
  TransformerBlock(int64_t d_model, int64_t heads, bool causal = true, int64_t mlp_ratio = 4);
  Tensor forward(const Tensor& x) override;
  // The same block for the tokens at positions [cache.length(), + n): attention through
  // MultiHeadAttention::forward_cached with `layer` of the cache (nn/kv_cache.h).
  Tensor forward_cached(const Tensor& x, KVCache& cache, int64_t layer);
  std::string type_name() const override { return "TransformerBlock"; }

  std::shared_ptr<LayerNorm> ln1;
  std::shared_ptr<MultiHeadAttention> attn;
  std::shared_ptr<LayerNorm> ln2;
  std::shared_ptr<Sequential> mlp;

 private:
  // mlp(x), with its Linear -> GELU pair fused; a MLP whose layers were replaced runs as is.
  Tensor run_mlp(const Tensor& x);
};

}  // namespace prism::nn
