#include "nn/layers/adaptive_pool.h"

#include "tensor/ops.h"

namespace prism::nn {

AdaptiveAvgPool2d::AdaptiveAvgPool2d(int64_t out_h, int64_t out_w) : oh_(out_h), ow_(out_w) {
  if (oh_ <= 0 || ow_ <= 0) throw Error("AdaptiveAvgPool2d: output size must be positive");
}

Tensor AdaptiveAvgPool2d::forward(const Tensor& x) {
  if (x.dim() != 4) {
    throw Error("AdaptiveAvgPool2d: input " + x.shape().str() + " must be [N, C, H, W]");
  }
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  if (h % oh_ != 0 || w % ow_ != 0) {
    throw Error("AdaptiveAvgPool2d(" + extra_repr() + "): input " + x.shape().str() +
                " has H, W not divisible by the output size; only evenly dividing sizes are "
                "supported");
  }
  if (oh_ == 1 && ow_ == 1) return mean(x, {2, 3}, true);
  return mean(x.reshape({n, c, oh_, h / oh_, ow_, w / ow_}), {3, 5});
}

std::string AdaptiveAvgPool2d::extra_repr() const {
  return std::to_string(oh_) + "x" + std::to_string(ow_);
}

}  // namespace prism::nn
