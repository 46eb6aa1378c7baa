// Loss functions, composed from tensor ops so their gradients come from autograd.
//
// mse_loss(pred, target)        = mean((pred - target)^2)              same shapes
// nll_loss(log_probs, labels)   = -mean_i log_probs[i, labels[i]]      [N, C], int64 [N]
// cross_entropy(logits, labels) = nll_loss(log_softmax(logits, dim 1), labels)
//
// cross_entropy goes through log_softmax rather than log(softmax(x)): log_softmax computes
// x_j - max - log(sum_k exp(x_k - max)), which never takes the log of an underflowed 0, and its
// gradient is the well-known softmax(x) - onehot(label) (divided by N for the mean).
// Reduction::sum gives the sum over the batch instead of the mean.
//
// Bad input (shapes, dtypes, labels outside [0, C)) is a prism::Error naming the loss.
#pragma once

#include "tensor/tensor.h"

namespace prism::nn {

enum class Reduction { mean, sum };

Tensor mse_loss(const Tensor& pred, const Tensor& target, Reduction reduction = Reduction::mean);
Tensor nll_loss(const Tensor& log_probs, const Tensor& labels,
                Reduction reduction = Reduction::mean);
Tensor cross_entropy(const Tensor& logits, const Tensor& labels,
                     Reduction reduction = Reduction::mean);

}  // namespace prism::nn
