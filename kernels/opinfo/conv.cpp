// The descriptions (OpInfos) of conv2d and its two gradients, and max / average pooling.
//
// conv size "NxCxHxWxOxK[:sSpP]": N images of C x H x W, O output channels, K x K kernel,
// stride S (default 1), padding P (default K/2, "same" size for odd K at stride 1).
// pool size "PxHxW[:kKsSpP]": P planes (images x channels) of H x W, window K (default 2),
// stride S (default K), padding P (default 0).
// Costs are the ops' own formulas (kernels/costs.h, docs/COSTS.md).
#include <algorithm>
#include <cctype>
#include <map>

#include "kernels/costs.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/ops/conv2d/op.h"
#include "kernels/ops/pool2d/op.h"

namespace prism::opinfo {
namespace {

// "s2p1" -> {s: 2, p: 1}; letters outside `allowed` or a missing number are errors.
std::map<char, int64_t> parse_params(const std::string& op, const std::string& syntax,
                                     const std::string& size, const std::string& text,
                                     const std::string& allowed) {
  std::map<char, int64_t> out;
  size_t i = 0;
  while (i < text.size()) {
    const char key = text[i++];
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (allowed.find(key) == std::string::npos || j == i || j - i > 6) {
      throw Error("lab " + op + ": bad size '" + size + "': expected " + syntax);
    }
    out[key] = std::stoll(text.substr(i, j - i));
    i = j;
  }
  return out;
}

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
    auto p = parse_params(op_name, kConvSyntax, size, params_text, "sp");
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

// ---- pooling -----------------------------------------------------------------------------------
constexpr const char* kPoolSyntax = "PxHxW, optionally :kKsSpP (window, stride, padding)";

class PoolCase : public Case {
 public:
  PoolCase(bool max, bool backward, const std::vector<int64_t>& d, int64_t k, int64_t s, int64_t p,
           uint64_t seed)
      : max_(max), backward_(backward) {
    a_ = {};
    a_.planes = d[0], a_.h = d[1], a_.w = d[2];
    a_.kernel = k, a_.stride = s, a_.padding = p;
    a_.ho = costs::window_out_size(a_.h, k, s, p);
    a_.wo = costs::window_out_size(a_.w, k, s, p);
    InputRng rng(seed);
    x_ = rng.vector(a_.planes * a_.h * a_.w);
    dy_ = rng.vector(a_.planes * a_.ho * a_.wo);
    index_.resize(static_cast<size_t>(a_.planes * a_.ho * a_.wo));
    if (backward && max) {
      // A valid argmax for every window, as the forward makes them: an in-bounds element of
      // that window, a different one from window to window (a kernel that assumed, say, the
      // top-left one would fail).
      for (int64_t pl = 0; pl < a_.planes; ++pl) {
        for (int64_t i = 0; i < a_.ho; ++i) {
          for (int64_t j = 0; j < a_.wo; ++j) {
            const int64_t r0 = std::max<int64_t>(0, i * s - p),
                          c0 = std::max<int64_t>(0, j * s - p);
            const int64_t rows = std::min(a_.h, i * s - p + k) - r0;
            const int64_t cols = std::min(a_.w, j * s - p + k) - c0;
            const int64_t pick = pl * 7 + i * 3 + j * 5;  // spread over the window's elements
            const int64_t r = r0 + pick % rows, c = c0 + (pick / rows) % cols;
            index_[static_cast<size_t>((pl * a_.ho + i) * a_.wo + j)] = r * a_.w + c;
          }
        }
      }
    }
    out_ = GuardedBuffer(backward ? a_.planes * a_.h * a_.w : a_.planes * a_.ho * a_.wo);
    a_.x = x_.data();
    a_.dy = dy_.data();
    a_.index = max ? index_.data() : nullptr;
    a_.out = out_.data();
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::Pool2dArgs, float>()(a_); }
  std::vector<Output> outputs() override { return {{"out", &out_}}; }
  profiler::Cost cost() const override {
    const Dims x{1, a_.planes, a_.h, a_.w};  // planes = N C: the formulas count N C planes
    if (!backward_) return costs::pool2d(x, a_.kernel, a_.stride, a_.padding, max_, 4);
    if (max_) return costs::max_pool2d_backward(x, a_.kernel, a_.stride, a_.padding, 4);
    return costs::avg_pool2d_backward(x, a_.kernel, a_.stride, a_.padding, 4);
  }

 private:
  bool max_, backward_;
  CaseVector<float> x_, dy_;
  CaseVector<int64_t> index_;
  GuardedBuffer out_;
  kernels::Pool2dArgs<float> a_;
};

OpInfo pool_op(const char* name, bool max, bool backward, const char* summary) {
  OpInfo op;
  op.op = name;
  op.size_syntax = kPoolSyntax;
  op.summary = summary;
  op.default_sizes = {"1024x26x26", "2048x11x11", "4096x56x56:k3s2p1"};
  op.validation_sizes = {"1x1x1:k1", "3x7x5", "2x9x9:k3s2p1", "5x13x11:k3s1p1", "2x8x8:k4s4p2"};
  op.tolerance = 1e-5;
  op.tolerance_why =
      "a max is exact; an average divides a sum of at most kernel^2 terms, whose order may "
      "differ by a few float32 roundings";
  const std::string op_name = name;
  op.make = [=](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
    auto [dims_text, params_text] = split_suffix(size);
    auto d = parse_dims(op_name, kPoolSyntax, dims_text, 3, 3);
    auto p = parse_params(op_name, kPoolSyntax, size, params_text, "ksp");
    const int64_t k = p.count('k') ? p['k'] : 2;
    const int64_t s = p.count('s') ? p['s'] : k;
    const int64_t pad = p.count('p') ? p['p'] : 0;
    if (k < 1 || s < 1 || pad > k / 2 || k > d[1] + 2 * pad || k > d[2] + 2 * pad) {
      throw Error("lab " + op_name + ": size '" + size +
                  "' is not a valid pooling (K, S >= 1, padding <= K/2, K <= H+2P and W+2P)");
    }
    return std::make_unique<PoolCase>(max, backward, d, k, s, pad, seed);
  };
  return op;
}

}  // namespace

static void add_conv_op_infos(std::vector<OpInfo>& ops) {
  ops.push_back(conv_op(kernels::ops::conv2d.name, ConvOp::forward,
                        "2-D convolution (naive loops vs im2col)"));
  ops.push_back(
      conv_op(kernels::ops::conv2d_backward_input.name, ConvOp::backward_input, "conv2d's dx"));
  ops.push_back(
      conv_op(kernels::ops::conv2d_backward_weight.name, ConvOp::backward_weight, "conv2d's dw"));
}

static void add_pool_op_infos(std::vector<OpInfo>& ops) {
  ops.push_back(
      pool_op(kernels::ops::max_pool2d.name, true, false, "max over windows (and its position)"));
  ops.push_back(pool_op(kernels::ops::max_pool2d_backward.name, true, true, "dx[argmax] += dy"));
  ops.push_back(pool_op(kernels::ops::avg_pool2d.name, false, false, "mean over windows"));
  ops.push_back(
      pool_op(kernels::ops::avg_pool2d_backward.name, false, true, "spread dy over windows"));
}

const OpInfoFamily kConvFamily(50, &add_conv_op_infos);
const OpInfoFamily kPoolFamily(60, &add_pool_op_infos);

}  // namespace prism::opinfo
