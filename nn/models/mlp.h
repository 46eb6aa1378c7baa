// MLP: the multilayer perceptron, Linear layers with a ReLU between each pair.
//
//   MLP({784, 256, 256, 10}):
//     x [N, ...] -> flatten -> [N, 784]
//       -> fc1 (784 -> 256) -> relu -> fc2 (256 -> 256) -> relu -> fc3 (256 -> 10) -> [N, 10]
//
// Each layer is one fused op, prism::linear (nn/layers/linear.h, LinearOptions): fc1 adds its
// bias inside the GEMM, and each later layer also applies the ReLU between it and the layer
// below to its input as the GEMM reads it, so the ReLUs are not modules or ops of their own.
// The forward is relu, matmul and add one after the other, to the bit (the gradients add in
// other orders, within rounding); what goes is their passes over memory, which cost most at two
// threads (docs/PERFORMANCE.md, "Threads").
// `--kernel linear=unfused` runs the same layers as passes, and any matmul variant other than
// `optimized` makes them the separate ops again (tensor/ops/linear.cpp).
//
// The input is flattened after the batch dim, so an image batch [N, 1, 28, 28] and a batch of
// rows [N, 784] are the same to it. No activation after the last layer: it returns logits,
// which cross_entropy turns into a loss (softmax inside log_softmax, where it is stable).
//
// Parameters: sum over layers of in*out + out; 784-256-256-10 gives
//   (784*256 + 256) + (256*256 + 256) + (256*10 + 10) = 200,960 + 65,792 + 2,570 = 269,322.
// Forward FLOPs at batch N (docs/COSTS.md): 2 N sum(in*out) for the products, N sum(out) for the
// bias adds, N sum(hidden) for the ReLUs; the flatten is a free view.
//
// Children, in call order: "flatten", "fc1", "fc2", ..., "fc<L>", so a profile shows the time
// of each layer, its ReLU included, under "model.fc1", "model.fc2", ...
#pragma once

#include <vector>

#include "nn/layers/flatten.h"
#include "nn/layers/linear.h"

namespace prism::nn {

class MLP : public Module {
 public:
  // sizes = {in, hidden..., out}: at least two entries, all positive.
  explicit MLP(std::vector<int64_t> sizes);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "MLP"; }
  std::string extra_repr() const override;  // "784-256-256-10"

  const std::vector<int64_t>& sizes() const { return sizes_; }

  std::vector<std::shared_ptr<Linear>> linears;  // fc1, fc2, ... (the trainable layers)

 private:
  std::vector<int64_t> sizes_;
  std::shared_ptr<Flatten> flatten_;
};

}  // namespace prism::nn
