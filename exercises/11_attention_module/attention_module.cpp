// Exercise 11: multi-head self-attention as a module, composed from prism's tensor ops. The task
// is in README.md, next to this file.
//
// Input x [B, T, D] (or [T, D]: one sequence), D = d_model, H heads of d = D / H features each:
//   qkv = x Wqkv^T + bqkv            [B, T, 3D]    the Linear "qkv" below: one matmul, not three
//   q, k, v                          [B, H, T, d]  split qkv into three and into heads: the last
//                                                  dim holds (which of q/k/v, head, feature),
//                                                  so view it as [B, T, 3, H, d] and move the
//                                                  dims with permute (views, no copy)
//   S = q k^T / sqrt(d)              [B, H, T, T]  matmul(q, k.transpose(-2, -1)); d, the head
//                                                  size, not D
//   S_ij = -inf for j > i            (causal only) token i sees tokens 0..i; a [T, T] tensor
//                                                  added to S broadcasts over B and H
//   A = softmax(S) over j            [B, H, T, T]  the last dim: each query's row sums to 1
//   o = A v                          [B, H, T, d]
//   o -> [B, T, H, d] -> [B, T, D]                 heads side by side again (permute, reshape)
//   y = o Wproj^T + bproj            [B, T, D]     the Linear "proj" below
//
// Ops you will need (tensor/ops.h, tensor/tensor.h): Module calls (*qkv)(x) and (*proj)(o),
// view, reshape, permute, select, transpose, unsqueeze, squeeze, matmul, softmax, from_vector,
// and the operators * and +. Autograd differentiates all of them: write the forward only. Do
// not call prism::attention, the fused op the built-in layer uses: the checker compares you
// with it, and refuses a module that calls it.
//
// Check it:  build/prism check attention_module
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

  Tensor forward([[maybe_unused]] const Tensor& x) override {
    // TODO(exercise): compute y from x as the comment at the top of this file says, for x of
    // shape [B, T, D] or [T, D] (add the batch dim, and take it off the result). Use the members
    // d_model_, heads_, head_dim_ and causal_. Delete the [[maybe_unused]] and the throw below.
    // Delete this TODO line when the checker passes: ctest then checks your module instead of
    // expecting this unwritten one to fail.
    throw prism::Error("MyAttention::forward is not written yet");
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
