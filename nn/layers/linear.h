// Linear: y = x W^T + b, the fully connected layer.
//
// x [..., in] -> y [..., out]; W is [out, in] (one row per output, as in the mainstream
// frameworks, so checkpoints line up), b is [out]. Cost per row: in*out multiply-adds.
// Init (nn/init.h): W ~ U(-1/sqrt(in), 1/sqrt(in)) (Kaiming uniform with a = sqrt(5)) and
// b ~ U(-1/sqrt(in), 1/sqrt(in)). Parameters: in*out + out (in*out without bias).
#pragma once

#include "nn/module.h"

namespace prism::nn {

class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "Linear"; }
  std::string extra_repr() const override;

  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }

  Tensor weight;  // [out, in]
  Tensor bias;    // [out], undefined without bias

 private:
  int64_t in_, out_;
};

}  // namespace prism::nn
