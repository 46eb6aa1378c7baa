// Exercise 11, a typical mistake: a causal mask that also hides the diagonal.
//
// Token i may see tokens 0..i, itself included: -inf goes where j > i. Masking j >= i (the
// upper triangle with its diagonal) takes from token i its own key, and leaves token 0 with no
// key at all: its softmax is over -inf only, exp(-inf) / 0, NaN. The one-token causal case
// shows it.
// checker-expects: seq 1, causal.*FAIL +output error inf
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "exercises/11_attention_module/attention_module.h"
#include "nn/layers/linear.h"
#include "tensor/ops.h"

using prism::Tensor;

namespace {

class MyAttention : public prism::nn::Module {
 public:
  // The parameters are registered for you: their names and shapes are what the checker copies
  // the built-in layer's weights into.
  MyAttention(int64_t d_model, int64_t heads, bool causal)
      : d_model_(d_model), heads_(heads), head_dim_(d_model / heads), causal_(causal) {
    if (d_model <= 0 || heads <= 0 || d_model % heads != 0) {
      throw prism::Error("MyAttention: d_model must be a positive multiple of heads");
    }
    qkv = register_module("qkv", std::make_shared<prism::nn::Linear>(d_model, 3 * d_model));
    proj = register_module("proj", std::make_shared<prism::nn::Linear>(d_model, d_model));
  }

  Tensor forward(const Tensor& input) override {
    const bool batched = input.dim() == 3;
    if (!(batched || input.dim() == 2) || input.size(-1) != d_model_) {
      throw prism::Error("MyAttention: input " + input.shape().str() + " must be [B, T, " +
                         std::to_string(d_model_) + "] or [T, " + std::to_string(d_model_) + "]");
    }
    const Tensor x = batched ? input : input.unsqueeze(0);
    const int64_t b = x.size(0), t = x.size(1), h = heads_, d = head_dim_;

    // [B, T, 3D] -> [B, T, 3, H, d] -> [3, B, H, T, d]: the last dim of qkv is laid out as
    // (q/k/v, head, feature), so view splits it and permute brings (q/k/v) first and the heads
    // before the tokens. Viewing [B, T, 3D] directly as [B, H, T, d] would mix tokens and heads.
    const Tensor parts = (*qkv)(x).view({b, t, 3, h, d}).permute({2, 0, 3, 1, 4});
    const Tensor q = parts.select(0, 0), k = parts.select(0, 1), v = parts.select(0, 2);

    // Scores scaled by 1/sqrt(d): q.k sums d products of roughly unit-variance terms.
    Tensor s = prism::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(d)));
    if (causal_) {
      // -inf strictly above the diagonal (j > i): the diagonal stays, token i sees itself.
      std::vector<float> mask(static_cast<size_t>(t * t), 0.0f);
      for (int64_t i = 0; i < t; ++i) {
        for (int64_t j = i; j < t; ++j) {  // the mistake: j >= i
          mask[static_cast<size_t>(i * t + j)] = -std::numeric_limits<float>::infinity();
        }
      }
      s = s + prism::from_vector(mask, {t, t});  // broadcasts over [B, H]
    }
    const Tensor a = prism::softmax(s, -1);                 // over the keys j, for each query i
    Tensor o = prism::matmul(a, v);                         // [B, H, T, d]
    o = o.permute({0, 2, 1, 3}).reshape({b, t, d_model_});  // [B, T, H, d] -> [B, T, D]
    const Tensor y = (*proj)(o);
    return batched ? y : y.squeeze(0);
  }

  std::string type_name() const override { return "MyAttention"; }

  std::shared_ptr<prism::nn::Linear> qkv;   // D -> 3D
  std::shared_ptr<prism::nn::Linear> proj;  // D -> D

 private:
  int64_t d_model_, heads_, head_dim_;
  bool causal_;
};

}  // namespace

std::shared_ptr<prism::nn::Module> make_my_attention(int64_t d_model, int64_t heads, bool causal) {
  return std::make_shared<MyAttention>(d_model, heads, causal);
}
