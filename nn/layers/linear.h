// Linear: y = x W^T + b, the fully connected layer.
//
// x [..., in] -> y [..., out]; W is [out, in] (one row per output, as in the mainstream
// frameworks, so checkpoints line up), b is [out]. Cost per row: in*out multiply-adds.
// Init (nn/init.h): W ~ U(-1/sqrt(in), 1/sqrt(in)) (Kaiming uniform with a = sqrt(5)) and
// b ~ U(-1/sqrt(in), 1/sqrt(in)). Parameters: in*out + out (in*out without bias).
//
// Two ways to run it (LinearOptions):
//   default           the ops matmul(x, W^T) and add(., b): two rows in a profile
//   fused             one op, prism::linear (tensor/ops/linear.cpp): the bias added to each
//                     block of the product by the thread that computed it
//   fused, relu_input y = relu(x) W^T + b: the ReLU of the layer below folded into this one (the
//                     MLP's layers after the first), applied to x as the GEMM packs it; in
//                     backward its mask goes into dx's product and the ReLU into dW's
// The parameters, their names and the arithmetic are the same either way.
#pragma once

#include "nn/module.h"

namespace prism::nn {

struct LinearOptions {
  bool bias = true;
  bool fused = false;       // one prism::linear op instead of matmul + add
  bool relu_input = false;  // read max(0, x): a ReLU before the layer (needs fused)
};

class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Linear(int64_t in_features, int64_t out_features, LinearOptions options);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "Linear"; }
  std::string extra_repr() const override;

  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }
  const LinearOptions& options() const { return options_; }

  Tensor weight;  // [out, in]
  Tensor bias;    // [out], undefined without bias

 private:
  int64_t in_, out_;
  LinearOptions options_;
};

}  // namespace prism::nn
