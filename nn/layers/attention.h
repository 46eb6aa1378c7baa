// Multi-head self-attention (Vaswani et al., 2017), composed from matmul, softmax and views.
//
// x [B, T, D] (or [T, D]), H heads of size d = D / H:
//   qkv = x Wqkv^T + bqkv                    one fused Linear D -> 3D (one matmul, not three)
//   q, k, v = split(qkv) -> [B, H, T, d]     reshape [B, T, 3, H, d] + permute: views
//   S = q k^T / sqrt(d)                      [B, H, T, T]; 1/sqrt(d) keeps the logits' variance
//                                            near 1 whatever d is, so softmax does not saturate
//   S = S + M    (causal only)               M[i][j] = -inf for j > i, else 0: token i sees
//                                            tokens 0..i; exp(-inf) = 0 in the softmax
//   A = softmax(S, over j)
//   o = A v -> [B, T, H, d] -> [B, T, D]     heads side by side again
//   y = o Wproj^T + bproj                    Linear D -> D
//
// The middle four lines are one op, prism::attention (tensor/ops/attention.cpp): its default
// variant (flash) computes them tile by tile with an online softmax and never materialises
// the T x T matrices S and A; its naive variant, and tests/nn/layers_test.cpp's reference,
// follow the lines above one by one.
// Cost: 2*B*T*D*3D (qkv) + 2*B*H*T*T*d * 2 (scores and A v) + 2*B*T*D*D (proj) FLOPs (the
// attention op counts only the visible half of the pairs when causal, docs/COSTS.md).
// Children: "qkv" and "proj" (Linear). Parameters: 4*D*D + 4*D.
//
// With set_rope(true), q and k are turned by their positions (rotary position embeddings,
// prism::rope; LLaMA's and GPT-NeoX's way) before the scores: then q_t . k_s depends on t - s
// only, and the model needs no position table. No parameters; the layer's math is otherwise
// the same.
#pragma once

#include "nn/layers/linear.h"

namespace prism::nn {

class KVCache;  // nn/kv_cache.h

class MultiHeadAttention : public Module {
 public:
  MultiHeadAttention(int64_t d_model, int64_t heads, bool causal = false);
  Tensor forward(const Tensor& x) override;
  // Incremental decoding (nn/kv_cache.h): x [B, n, D] holds the tokens at positions
  // [t0, t0 + n), t0 = cache.length(). Their keys and values go into `layer` of the cache; the
  // queries attend to the t0 + n cached keys, query i seeing keys j <= t0 + i. The attention op
  // takes a causal mask only for Lq == Lk, so: t0 = 0 (the prompt) is the plain causal call;
  // n = 1 (a decoding step) is a non-causal call, exact because the newest query may see every
  // key there is; n > 1 onto a filled cache runs one query row at a time. Needs a causal layer.
  Tensor forward_cached(const Tensor& x, KVCache& cache, int64_t layer);
  std::string type_name() const override { return "MultiHeadAttention"; }
  std::string extra_repr() const override;
  void set_rope(bool on) { rope_ = on; }
  bool rope() const { return rope_; }

  std::shared_ptr<Linear> qkv;   // D -> 3D
  std::shared_ptr<Linear> proj;  // D -> D

 private:
  int64_t d_model_, heads_, head_dim_;
  bool causal_;
  bool rope_ = false;
};

}  // namespace prism::nn
