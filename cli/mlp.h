// The demo's model: a two-layer perceptron written with tensor ops only.
//
//   logits = relu(x W1 + b1) W2 + b2        x: [n, in], W1: [in, hidden], W2: [hidden, classes]
//
// Every op it runs goes through prism's dispatcher, so the profile sees the forward pass, the
// backward pass (run by the autograd engine) and the SGD update without any extra code here.
#pragma once

#include <vector>

#include "tensor/ops.h"

namespace prism::cli {

class Mlp {
 public:
  // Weights from the global generator (seed it with prism::manual_seed first): He init for the
  // ReLU layer, N(0, 1/hidden) for the output layer; biases start at zero.
  Mlp(int in, int hidden, int classes);

  // Logits [n, classes]; runs under the scopes "fc1", "relu" and "fc2".
  Tensor forward(const Tensor& x) const;

  // Plain SGD, p <- p - lr * dL/dp, for every parameter that has a gradient. prism has no
  // in-place ops, so each step makes new parameter tensors (fresh leaves: their gradients start
  // empty, so no zero_grad is needed). Runs as phase "optimizer" in the scope "sgd".
  void sgd_step(double lr);

  int64_t parameter_count() const;

 private:
  std::vector<Tensor*> parameters() { return {&w1_, &b1_, &w2_, &b2_}; }
  Tensor w1_, b1_, w2_, b2_;
};

// Mean negative log-likelihood of the labels: -mean_i log_probs[i, labels[i]].
// log_probs: [n, classes] float; labels: [n, 1] int64.
Tensor nll_loss(const Tensor& log_probs, const Tensor& labels);

// Fraction of rows whose largest logit is at the label. labels: [n] (or [n, 1]) int64.
double accuracy(const Tensor& logits, const std::vector<int64_t>& labels);

}  // namespace prism::cli
