// AdaptiveAvgPool2d: average-pools [N, C, H, W] down to a fixed [N, C, oh, ow], whatever H and
// W are (the head of a CNN: global average pooling with oh = ow = 1).
//
// When oh divides H and ow divides W, every output cell is the mean of an (H/oh) x (W/ow)
// block, which is a reshape and a mean:
//   [N, C, H, W] -> [N, C, oh, H/oh, ow, W/ow] -> mean over dims 3 and 5 -> [N, C, oh, ow]
// (the reshape is a free view of a contiguous input). Sizes that do not divide, where windows
// overlap unevenly, are refused with an error rather than computed differently.
#pragma once

#include "nn/module.h"

namespace prism::nn {

class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(int64_t output_size = 1)
      : AdaptiveAvgPool2d(output_size, output_size) {}
  AdaptiveAvgPool2d(int64_t out_h, int64_t out_w);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "AdaptiveAvgPool2d"; }
  std::string extra_repr() const override;

 private:
  int64_t oh_, ow_;
};

}  // namespace prism::nn
