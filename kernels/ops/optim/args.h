// The optimizer updates' argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

// In-place optimizer updates (phase "optimizer"): param and its state are read and written,
// grad is read. All buffers are contiguous with `numel` elements; the front end checked shapes
// and dtypes. Hyperparameters arrive as doubles; a kernel converts them to T once.
//
// SGD (momentum, weight decay and Nesterov as in PyTorch's torch.optim.SGD, dampening 0):
//   g = grad + weight_decay * p
//   v = momentum * v + g                      (only when velocity != nullptr)
//   step = nesterov ? g + momentum * v : v    (g itself without momentum)
//   p = p - lr * step
template <class T>
struct SgdArgs {
  T* param;
  const T* grad;
  T* velocity;  // nullptr when momentum is 0 (no state)
  int64_t numel;
  double lr, momentum, weight_decay;
  bool nesterov;
  // Scratch for the unfused "per_tensor" variant (tag naive), allocated by the front end as a
  // temporary so the profile shows the buffers a framework without fusion makes:
  // sgd_per_tensor_workspace() elements; null and 0 for every other variant.
  T* workspace;
  int64_t workspace_size;
};

// The decayed gradient g = grad + wd p (with weight decay) and the Nesterov step g + mu v
// (with Nesterov), one [numel] temporary each.
inline int64_t sgd_per_tensor_workspace(int64_t numel, bool weight_decay, bool nesterov) {
  return numel * ((weight_decay ? 1 : 0) + (nesterov ? 1 : 0));
}

// Adam / AdamW (Kingma & Ba 2015; Loshchilov & Hutter 2019), at step t >= 1:
//   decoupled (AdamW): p = p * (1 - lr * weight_decay);  g = grad
//   otherwise (Adam, L2): g = grad + weight_decay * p
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g * g
//   p = p - (lr / bias_correction1) * m / (sqrt(v) / sqrt(bias_correction2) + eps)
// with bias_correction1 = 1 - beta1^t and bias_correction2 = 1 - beta2^t (the front end
// computes both in double). That last line is lr * m_hat / (sqrt(v_hat) + eps) with
// m_hat = m / bias_correction1 and v_hat = v / bias_correction2, arranged as PyTorch does.
template <class T>
struct AdamArgs {
  T* param;
  const T* grad;
  T* m;  // first moment (exp_avg)
  T* v;  // second moment (exp_avg_sq)
  int64_t numel;
  double lr, beta1, beta2, eps, weight_decay;
  bool decoupled;
  double bias_correction1, bias_correction2;
  // Scratch for the unfused "per_tensor" variant (tag naive), as in SgdArgs:
  // adam_per_tensor_workspace() elements; null and 0 for every other variant.
  T* workspace;
  int64_t workspace_size;
};

// The denominator sqrt(v) / sqrt(bias_correction2) + eps, and with L2 weight decay (Adam, not
// AdamW) the decayed gradient grad + wd p: one [numel] temporary each.
inline int64_t adam_per_tensor_workspace(int64_t numel, bool l2_weight_decay) {
  return numel * (1 + (l2_weight_decay ? 1 : 0));
}

}  // namespace prism::kernels
