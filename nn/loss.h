// Loss functions. mse_loss and nll_loss are composed from tensor ops, so their gradients come
// from autograd; cross_entropy is the tensor op prism::cross_entropy (tensor/ops.h), one fused
// kernel forward and one backward, made available here under nn:: as before.
//
// mse_loss(pred, target)        = mean((pred - target)^2)              same shapes
// nll_loss(log_probs, labels)   = -mean_i log_probs[i, labels[i]]      [N, C], int64 [N]
// cross_entropy(logits, labels) = nll_loss(log_softmax(logits, dim 1), labels)
//
// cross_entropy never takes the log of a softmax that may have underflowed to 0: per row it
// computes log(sum_k exp(x_k - max)) + max - x_label, and it never builds the [N, C]
// log-probabilities at all (kernels/ops/cross_entropy/cross_entropy.cpp). Its gradient is the
// well-known softmax(x) - onehot(label) (divided by N for the mean), computed in one pass.
// Reduction::sum gives the sum over the batch instead of the mean.
//
// Bad input (shapes, dtypes, labels outside [0, C)) is a prism::Error naming the loss.
#pragma once

#include "tensor/ops.h"
#include "tensor/tensor.h"

namespace prism::nn {

using prism::Reduction;  // mean or sum (tensor/ops.h)

Tensor mse_loss(const Tensor& pred, const Tensor& target, Reduction reduction = Reduction::mean);
Tensor nll_loss(const Tensor& log_probs, const Tensor& labels,
                Reduction reduction = Reduction::mean);
// cross_entropy(logits [N, C], labels int64 [N], reduction = Reduction::mean): the tensor op.
using prism::cross_entropy;

}  // namespace prism::nn
