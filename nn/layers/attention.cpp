#include "nn/layers/attention.h"

#include <vector>

#include "nn/kv_cache.h"
#include "tensor/ops.h"

namespace prism::nn {

MultiHeadAttention::MultiHeadAttention(int64_t d_model, int64_t heads, bool causal)
    : d_model_(d_model),
      heads_(heads),
      head_dim_(heads > 0 ? d_model / heads : 0),
      causal_(causal) {
  if (d_model <= 0 || heads <= 0 || d_model % heads != 0) {
    throw Error("MultiHeadAttention: d_model (" + std::to_string(d_model) +
                ") must be a positive multiple of heads (" + std::to_string(heads) + ")");
  }
  qkv = register_module("qkv", std::make_shared<Linear>(d_model, 3 * d_model));
  proj = register_module("proj", std::make_shared<Linear>(d_model, d_model));
}

Tensor MultiHeadAttention::forward(const Tensor& input) {
  const bool batched = input.dim() == 3;
  if (!(input.dim() == 3 || input.dim() == 2) || input.size(-1) != d_model_) {
    throw Error("MultiHeadAttention(" + extra_repr() + "): input " + input.shape().str() +
                " must be [B, T, " + std::to_string(d_model_) + "] or [T, " +
                std::to_string(d_model_) + "]");
  }
  const Tensor x = batched ? input : input.unsqueeze(0);
  const int64_t b = x.size(0), t = x.size(1), h = heads_, d = head_dim_;

  // [B, T, 3D] -> [B, T, 3, H, d] -> [3, B, H, T, d]: q, k, v are views of one buffer.
  Tensor parts = (*qkv)(x).view({b, t, 3, h, d}).permute({2, 0, 3, 1, 4});
  Tensor q = parts.select(0, 0);
  Tensor k = parts.select(0, 1);
  Tensor v = parts.select(0, 2);
  if (rope_) q = prism::rope(q), k = prism::rope(k);  // positions 0 .. T-1

  // softmax(q k^T / sqrt(d) + M) v in one op; the q, k, v views are read in place.
  Tensor out = attention(q, k, v, causal_);                   // [B, H, T, d]
  out = out.permute({0, 2, 1, 3}).reshape({b, t, d_model_});  // [B, T, D]: one copy
  Tensor y = (*proj)(out);
  return batched ? y : y.squeeze(0);
}

Tensor MultiHeadAttention::forward_cached(const Tensor& x, KVCache& cache, int64_t layer) {
  if (!causal_) {
    throw Error("MultiHeadAttention(" + extra_repr() +
                ")::forward_cached: a KV cache needs causal attention (a non-causal layer's "
                "earlier outputs change when later tokens arrive)");
  }
  if (x.dim() != 3 || x.size(-1) != d_model_) {
    throw Error("MultiHeadAttention(" + extra_repr() + ")::forward_cached: input " +
                x.shape().str() + " must be [B, n, " + std::to_string(d_model_) + "]");
  }
  const int64_t b = x.size(0), n = x.size(1), h = heads_, d = head_dim_;
  const int64_t t0 = cache.length();
  Tensor parts = (*qkv)(x).view({b, n, 3, h, d}).permute({2, 0, 3, 1, 4});
  Tensor q = parts.select(0, 0);  // [B, H, n, d]
  Tensor k_new = parts.select(0, 1);
  // The cache keeps keys already turned: a key's angle depends on its own position only.
  if (rope_) q = prism::rope(q, t0), k_new = prism::rope(k_new, t0);
  auto [k, v] = cache.append(layer, k_new, parts.select(0, 2));  // [B, H, t0+n, d]

  Tensor out;
  if (t0 == 0) {
    out = attention(q, k, v, /*causal=*/true);  // Lq == Lk: the plain causal mask
  } else if (n == 1) {
    out = attention(q, k, v, /*causal=*/false);  // the newest query sees all t0 + 1 keys
  } else {
    // Query i (position t0 + i) sees keys [0, t0 + i]: one non-causal call per row.
    std::vector<Tensor> rows;
    for (int64_t i = 0; i < n; ++i) {
      rows.push_back(attention(q.narrow(2, i, 1), k.narrow(2, 0, t0 + i + 1),
                               v.narrow(2, 0, t0 + i + 1), /*causal=*/false));
    }
    out = concat(rows, 2);
  }
  out = out.permute({0, 2, 1, 3}).reshape({b, n, d_model_});  // [B, n, D]
  return (*proj)(out);
}

std::string MultiHeadAttention::extra_repr() const {
  return "d_model=" + std::to_string(d_model_) + ", heads=" + std::to_string(heads_) +
         ", causal=" + (causal_ ? "true" : "false") + (rope_ ? ", rope=true" : "");
}

}  // namespace prism::nn
