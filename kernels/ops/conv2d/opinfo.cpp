// The descriptions (OpInfos) of conv2d and its two gradients for the lab and the op-description
// tests (the math is in args.h).
//
// conv size "NxCxHxWxOxK[:sSpP]": N images of C x H x W, O output channels, K x K kernel,
// stride S (default 1), padding P (default K/2, "same" size for odd K at stride 1).
// Costs are the ops' own formulas (kernels/costs.h, docs/COSTS.md).
#include <algorithm>

#include "kernels/opinfo/op_info.h"
#include "kernels/ops/conv2d/op.h"

namespace prism::opinfo {
namespace {

// ---- conv2d ------------------------------------------------------------------------------------
enum class ConvOp { forward, backward_input, backward_weight };

constexpr const char* kConvSyntax = "NxCxHxWxOxK, optionally :sSpP (stride, padding)";

class ConvCase : public Case {
 public:
  ConvCase(ConvOp which, const std::vector<int64_t>& d, int64_t stride, int64_t padding,
           uint64_t seed)
      : which_(which) {
    a_ = {};
    a_.n = d[0], a_.c = d[1], a_.h = d[2], a_.w = d[3], a_.o = d[4], a_.kh = d[5], a_.kw = d[5];
    a_.stride = stride, a_.padding = padding;
    a_.ho = costs::window_out_size(a_.h, a_.kh, stride, padding);
    a_.wo = costs::window_out_size(a_.w, a_.kw, stride, padding);
    InputRng rng(seed);
    x_ = rng.vector(a_.n * a_.c * a_.h * a_.w);
    weight_ = rng.vector(a_.o * a_.c * a_.kh * a_.kw);
    bias_ = rng.vector(a_.o);
    dy_ = rng.vector(a_.n * a_.o * a_.ho * a_.wo);
    const int64_t out_numel = which == ConvOp::forward          ? a_.n * a_.o * a_.ho * a_.wo
                              : which == ConvOp::backward_input ? a_.n * a_.c * a_.h * a_.w
                                                                : a_.o * a_.c * a_.kh * a_.kw;
    out_ = GuardedBuffer(out_numel);
    // The same scratch the tensor layer gives a non-naive variant (tensor/ops/conv.cpp): one
    // image's patch matrix on the cpu; on cuda as many images as fit in 2^25 elements, so each
    // GEMM of the im2col kernel is large enough to fill the GPU.
    const int64_t per_image = std::max<int64_t>(1, a_.c * a_.kh * a_.kw * a_.ho * a_.wo);
    const int64_t images =
        case_device() == Device::cuda
            ? std::clamp<int64_t>((int64_t{1} << 25) / per_image, 1, std::max<int64_t>(a_.n, 1))
            : 1;
    workspace_.resize(static_cast<size_t>(a_.c * a_.kh * a_.kw * a_.ho * a_.wo * images));
    a_.x = which == ConvOp::backward_input ? nullptr : x_.data();
    a_.weight = which == ConvOp::backward_weight ? nullptr : weight_.data();
    a_.bias = which == ConvOp::forward ? bias_.data() : nullptr;
    a_.dy = which == ConvOp::forward ? nullptr : dy_.data();
    a_.out = out_.data();
  }

  void run(const kernels::KernelEntry& v) override {
    kernels::Conv2dArgs<float> a = a_;
    if (v.tag != kernels::VariantTag::naive) {
      a.workspace = workspace_.data();
      a.workspace_size = static_cast<int64_t>(workspace_.size());
    }
    v.get<kernels::Conv2dArgs, float>()(a);
  }
  std::vector<Output> outputs() override { return {{"out", &out_}}; }
  profiler::Cost cost() const override {
    const Dims x{a_.n, a_.c, a_.h, a_.w}, w{a_.o, a_.c, a_.kh, a_.kw};
    switch (which_) {
      case ConvOp::forward:
        return costs::conv2d(x, w, true, a_.stride, a_.padding, 4);
      case ConvOp::backward_input:
        return costs::conv2d_backward_input(x, w, a_.stride, a_.padding, 4);
      case ConvOp::backward_weight:
        break;
    }
    return costs::conv2d_backward_weight(x, w, a_.stride, a_.padding, 4);
  }
  int64_t workspace_bytes(const kernels::KernelEntry& v) const override {
    return v.tag == kernels::VariantTag::naive ? 0 : 4 * static_cast<int64_t>(workspace_.size());
  }

 private:
  ConvOp which_;
  CaseVector<float> x_, weight_, bias_, dy_, workspace_;
  GuardedBuffer out_;
  kernels::Conv2dArgs<float> a_;
};

OpInfo conv_op(const char* name, ConvOp which, const char* summary) {
  OpInfo op;
  op.op = name;
  op.size_syntax = kConvSyntax;
  op.summary = summary;
  // The CNN's two layers at batch 64, then a ResNet-like 3x3 layer.
  op.default_sizes = {"64x1x28x28x16x3", "64x16x14x14x32x3", "8x64x56x56x64x3"};
  op.validation_sizes = {"1x1x1x1x1x1",        "2x3x7x5x4x3",      "1x2x9x9x3x3:s2p1",
                         "3x5x11x13x7x5:s2p0", "2x4x6x6x6x1:s1p0", "1x3x4x4x2x4:s1p1"};
  op.tolerance = 1e-4;
  op.tolerance_why =
      "im2col sums C*kh*kw products through a blocked GEMM in another order than the direct "
      "loops: float32 rounding grows with the sum's length (up to 320 terms here)";
  const std::string op_name = name;
  op.make = [which, op_name](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
    auto [dims_text, params_text] = split_suffix(size);
    auto d = parse_dims(op_name, kConvSyntax, dims_text, 6, 6);
    auto p = parse_size_params(op_name, kConvSyntax, size, params_text, "sp");
    const int64_t stride = p.count('s') ? p['s'] : 1;
    const int64_t padding = p.count('p') ? p['p'] : d[5] / 2;
    if (stride < 1 || padding > d[5] / 2 || d[5] > d[2] + 2 * padding ||
        d[5] > d[3] + 2 * padding) {
      throw Error("lab " + op_name + ": size '" + size +
                  "' is not a valid convolution (stride >= 1, padding <= K/2, K <= H+2P and "
                  "W+2P)");
    }
    return std::make_unique<ConvCase>(which, d, stride, padding, seed);
  };
  return op;
}

void add_conv_op_infos(std::vector<OpInfo>& ops) {
  ops.push_back(conv_op(kernels::ops::conv2d.name, ConvOp::forward,
                        "2-D convolution (naive loops vs im2col)"));
  ops.push_back(
      conv_op(kernels::ops::conv2d_backward_input.name, ConvOp::backward_input, "conv2d's dx"));
  ops.push_back(
      conv_op(kernels::ops::conv2d_backward_weight.name, ConvOp::backward_weight, "conv2d's dw"));
}

}  // namespace

const OpInfoFamily kConvFamily(500, &add_conv_op_infos);

}  // namespace prism::opinfo
