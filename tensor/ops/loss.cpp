// cross_entropy(logits [N, C], target [N] int64, reduction) as one op (tensor/ops.h).
//
// The composed form, nll_loss(log_softmax(logits, 1), target), makes an [N, C] tensor of
// log-probabilities only to read N of its entries. This op's default kernel ("fused",
// kernels/ops/cross_entropy/cross_entropy.cpp) computes each row's log-sum-exp online and reads the
// target's logit directly, so forward allocates the 0-d loss and, in grad mode, N float64 lse
// values for backward, and nothing of size N x C. The "composed" variant (tag naive) keeps the
// two-step algorithm for comparison; its [N, C] buffer is allocated here, inside the op's record,
// as a temporary, so the profile's allocation columns show the difference.
//
// Backward is one op, cross_entropy_backward ("cross_entropy.dlogits"):
//   dlogits = (softmax(logits) - onehot(target)) * g / N     (g, not g / N, for the sum)
// in one pass from the logits and the saved lse.
//
// Targets are checked here, before anything runs (their values are readable on the cpu; on the
// meta device only their dtype and shape are): int64, shape [N], every value in [0, C). On the
// GPU the values are checked by the kernel itself, as it reads them, with the same message.
#include <string>

#include "kernels/costs.h"
#include "kernels/ops/cross_entropy/op.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"

namespace prism {

namespace {

detail::OpHandle op_cross_entropy(kernels::ops::cross_entropy),
    op_cross_entropy_bw(kernels::ops::cross_entropy_backward);

void check_cross_entropy(const Tensor& logits, const Tensor& target) {
  const char* op = kernels::ops::cross_entropy.name;
  if (!logits.defined()) throw Error("cross_entropy: input is undefined");
  if (logits.dtype() == DType::i64) {
    throw Error("cross_entropy: input must be float32 or float64, got int64 " +
                logits.shape().str());
  }
  if (logits.dim() != 2) {
    throw Error("cross_entropy: input must be [N, C], got " + logits.shape().str());
  }
  if (!target.defined() || target.dtype() != DType::i64) {
    throw Error(std::string("cross_entropy: labels must be int64, got ") +
                (target.defined() ? dtype_name(target.dtype()) : "undefined"));
  }
  if (target.dim() != 1 || target.size(0) != logits.size(0)) {
    throw Error("cross_entropy: labels must be [N] = [" + std::to_string(logits.size(0)) +
                "] for input " + logits.shape().str() + ", got " + target.shape().str());
  }
  detail::check_same_device(op, logits, target);
  if (logits.size(0) == 0)
    throw Error("cross_entropy: empty batch (input " + logits.shape().str() + ")");
  if (logits.size(1) == 0) {
    throw Error("cross_entropy: no classes (input " + logits.shape().str() + ")");
  }
  // meta: no values to read. cuda: the values live on the GPU, where the kernels check them
  // (kernels/ops/cross_entropy/cross_entropy.cu) and throw this same message for the first bad one.
  if (target.device() != Device::cpu) return;
  const int64_t c = logits.size(1);
  const int64_t* t = target.data<int64_t>();
  const int64_t stride = target.strides()[0];
  for (int64_t i = 0; i < target.size(0); ++i) {
    const int64_t v = t[i * stride];
    if (v < 0 || v >= c) {
      throw Error("cross_entropy: label " + std::to_string(v) + " at position " +
                  std::to_string(i) + " is out of range [0, " + std::to_string(c) + ")");
    }
  }
}

// The pieces of a cross-entropy call both directions use.
struct Problem {
  Tensor logits;  // detached [N, C] view, any strides
  Tensor target;  // [N], any stride
  int64_t rows, cols;
  double scale;  // 1 / N for the mean, 1 for the sum
};

template <class T>
void run_forward(const kernels::KernelEntry& k, const Problem& p, const Tensor& loss,
                 const Tensor& lse, const Tensor& workspace) {
  kernels::CrossEntropyArgs<T> a{};
  a.logits = p.logits.data<T>();
  a.target = p.target.data<int64_t>();
  a.loss = loss.data<T>();
  a.lse = lse.defined() ? lse.data<double>() : nullptr;
  a.workspace = workspace.defined() ? workspace.data<T>() : nullptr;
  a.workspace_size = workspace.defined() ? workspace.numel() : 0;
  a.rows = p.rows;
  a.cols = p.cols;
  a.row_stride = p.logits.strides()[0];
  a.col_stride = p.logits.strides()[1];
  a.target_stride = p.target.strides()[0];
  a.scale = p.scale;
  k.get<kernels::CrossEntropyArgs, T>()(a);
}

template <class T>
void run_backward(const kernels::KernelEntry& k, const Problem& p, const Tensor& lse,
                  const Tensor& g, const Tensor& dlogits) {
  kernels::CrossEntropyBackwardArgs<T> a{};
  a.logits = p.logits.data<T>();
  a.target = p.target.data<int64_t>();
  a.lse = lse.data<double>();
  a.g = g.data<T>();
  a.dlogits = dlogits.data<T>();
  a.rows = p.rows;
  a.cols = p.cols;
  a.row_stride = p.logits.strides()[0];
  a.col_stride = p.logits.strides()[1];
  a.target_stride = p.target.strides()[0];
  a.scale = p.scale;
  k.get<kernels::CrossEntropyBackwardArgs, T>()(a);
}

Tensor cross_entropy_backward(const Tensor& g, const Problem& p, const Tensor& lse) {
  const DType dt = p.logits.dtype();
  const Device dev = p.logits.device();
  const auto& k = op_cross_entropy_bw.kernel(dev, dt);
  detail::OpRecordScope rec(op_cross_entropy_bw.name(), k.name.c_str(), dev, {&p.logits, &g}, [&] {
    return costs::cross_entropy_backward(p.rows, p.cols, p.logits.element_size());
  });
  Tensor dlogits = detail::empty_like_shape(Dims{p.rows, p.cols}, dt, dev);
  if (dt == DType::f32)
    run_backward<float>(k, p, lse, g, dlogits);
  else
    run_backward<double>(k, p, lse, g, dlogits);
  return dlogits;
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& target, Reduction reduction) {
  check_cross_entropy(logits, target);
  Problem p{logits.detach(), target.detach(), logits.size(0), logits.size(1), 1.0};
  if (reduction == Reduction::mean) p.scale = 1.0 / static_cast<double>(p.rows);
  const bool saves = autograd::should_record({&logits});
  const DType dt = logits.dtype();
  const Device dev = logits.device();
  const auto& k = op_cross_entropy.kernel(dev, dt);
  Tensor loss, lse;
  {
    detail::OpRecordScope rec(
        op_cross_entropy.name(), k.name.c_str(), dev, {&logits, &target},
        [&] { return costs::cross_entropy(p.rows, p.cols, saves, logits.element_size()); });
    loss = detail::empty_like_shape(Dims{}, dt, dev);
    if (saves) lse = detail::empty_like_shape(Dims{p.rows}, DType::f64, dev);
    Tensor workspace;
    if (op_cross_entropy.planned(k, dt).tag == kernels::VariantTag::naive) {
      // The composed algorithm's [N, C] log-probabilities: scratch that lives for this call.
      AllocRole role(MemRole::temporary);
      workspace = detail::empty_like_shape(Dims{p.rows * p.cols}, dt, dev);
    }
    if (dt == DType::f32)
      run_forward<float>(k, p, loss, lse, workspace);
    else
      run_forward<double>(k, p, loss, lse, workspace);
  }
  if (saves) {
    // The tensors are saved with the node; the lambda keeps only the sizes.
    autograd::record(loss, op_cross_entropy.name(), {&logits},
                     {autograd::input(p.logits, 0), autograd::input(p.target, 1, "target"),
                      autograd::internal(lse, "lse")},
                     [sizes = Problem{Tensor(), Tensor(), p.rows, p.cols, p.scale}](
                         const Tensor& g, autograd::Grads& gr) {
                       gr.set(0, "cross_entropy.dlogits", [&] {
                         Problem q = sizes;
                         q.logits = gr.saved(0);
                         q.target = gr.saved(1);
                         return cross_entropy_backward(g, q, gr.saved(2));
                       });
                     });
  }
  return loss;
}

}  // namespace prism
