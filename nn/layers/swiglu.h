// SwiGLU: the gated feed-forward of LLaMA (Touvron et al., 2023) and most transformers since,
// from Shazeer (2020), "GLU Variants Improve Transformer":
//
//   y = w2( silu(w1 x) * (w3 x) ),   silu(z) = z sigmoid(z)
//
// x [..., dim] -> y [..., dim], through a hidden width `hidden`: w1 (the gate) and w3 (the up
// projection) are Linear(dim, hidden), w2 (the down projection) Linear(hidden, dim), all without
// bias, as in LLaMA. Named w1, w2, w3 like Meta's reference code, so its checkpoints' names
// line up. The gate and the product are one op, prism::swiglu (tensor/ops/swiglu.cpp): one
// forward row and one backward row (dgate and dup together) in the profile, where
// mul(silu(gate), up) would be two of each and an extra [..., hidden] buffer.
//
// LLaMA picks hidden = 2/3 of the 4 dim a GELU MLP would use (the gate's third matrix keeps the
// parameters equal), rounded up to a multiple of 256: 11008 for dim 4096.
// Parameters: 3 dim hidden. FLOPs per row: 6 dim hidden (three matmuls) + 5 hidden (swiglu).
#pragma once

#include <memory>

#include "nn/layers/linear.h"

namespace prism::nn {

class SwiGLU : public Module {
 public:
  SwiGLU(int64_t dim, int64_t hidden);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "SwiGLU"; }
  std::string extra_repr() const override;

  std::shared_ptr<Linear> w1;  // gate: [hidden, dim]
  std::shared_ptr<Linear> w2;  // down: [dim, hidden]
  std::shared_ptr<Linear> w3;  // up:   [hidden, dim]

 private:
  int64_t dim_, hidden_;
};

}  // namespace prism::nn
