// The descriptions (OpInfo) of im2col and col2im (kernels/ops/conv2d/unfold.cpp), the unfolding a
// convolution under the bf16 autocast policy runs as ops of their own. Float32 cases: im2col
// copies elements whatever their dtype, col2im adds in float32.
//
// Size: "NxCxHxWxK" (N images of C x H x W, a K x K window), optionally ":sSpP" (stride S,
// padding P; default stride 1, padding K / 2).
#include <string>

#include "kernels/ops/conv2d/op.h"
#include "kernels/costs.h"
#include "kernels/opinfo/op_info.h"

namespace prism::opinfo {
namespace {

constexpr const char* kSyntax = "NxCxHxWxK, optionally :sSpP (stride, padding)";

class UnfoldCase : public Case {
 public:
  UnfoldCase(bool fold, const std::vector<int64_t>& d, int64_t stride, int64_t padding,
             uint64_t seed)
      : fold_(fold) {
    a_ = {};
    a_.n = d[0], a_.c = d[1], a_.h = d[2], a_.w = d[3], a_.kh = a_.kw = d[4];
    a_.stride = stride, a_.padding = padding;
    a_.ho = costs::window_out_size(a_.h, a_.kh, stride, padding);
    a_.wo = costs::window_out_size(a_.w, a_.kw, stride, padding);
    InputRng rng(seed);
    in_ = rng.vector(fold ? patches() : image());
    out_ = GuardedBuffer(fold ? image() : patches());
    if (fold) {
      a_.dy = in_.data();
    } else {
      a_.x = in_.data();
    }
    a_.out = out_.data();
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::Conv2dArgs, float>()(a_); }
  std::vector<Output> outputs() override { return {{fold_ ? "dx" : "patches", &out_}}; }
  profiler::Cost cost() const override {
    const int64_t k = a_.c * a_.kh * a_.kw, p = a_.ho * a_.wo;
    return fold_ ? costs::col2im(a_.n, k, p, image(), 4) : costs::im2col(a_.n, k, p, image(), 4);
  }

 private:
  int64_t image() const { return a_.n * a_.c * a_.h * a_.w; }
  int64_t patches() const { return a_.n * a_.c * a_.kh * a_.kw * a_.ho * a_.wo; }
  bool fold_;
  CaseVector<float> in_;
  GuardedBuffer out_;
  kernels::Conv2dArgs<float> a_;
};

OpInfo unfold_op(const char* name, bool fold, const char* summary) {
  OpInfo op;
  op.op = name;
  op.size_syntax = kSyntax;
  op.summary = summary;
  op.default_sizes = {"64x1x28x28x5", "64x16x14x14x3"};
  op.validation_sizes = {"1x1x1x1x1", "2x3x7x5x3", "1x2x9x9x3:s2p1", "3x5x11x13x5:s2p0",
                         "2x4x6x6x1:s1p0"};
  op.tolerance = 1e-6;
  op.tolerance_why = fold ? "col2im adds at most K*K patch gradients per input element, in the "
                            "same order in every variant: float32 roundings of a few terms"
                          : "im2col copies elements: a correct variant is exact (0), the bound "
                            "only needs to be > 0";
  const std::string op_name = name;
  op.make = [fold, op_name](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
    auto [dims_text, params_text] = split_suffix(size);
    auto d = parse_dims(op_name, kSyntax, dims_text, 5, 5);
    int64_t stride = 1, padding = d[4] / 2;
    if (!params_text.empty()) {
      const size_t p = params_text.find('p');
      if (params_text[0] != 's' || p == std::string::npos || p < 2 || p + 1 >= params_text.size()) {
        throw Error("lab " + op_name + ": bad size '" + size + "': expected " + kSyntax);
      }
      stride = std::stoll(params_text.substr(1, p - 1));
      padding = std::stoll(params_text.substr(p + 1));
    }
    if (stride < 1 || padding < 0 || d[4] > d[2] + 2 * padding || d[4] > d[3] + 2 * padding) {
      throw Error("lab " + op_name + ": size '" + size +
                  "' is not a valid window (stride >= 1, padding >= 0, K <= H+2P and W+2P)");
    }
    return std::make_unique<UnfoldCase>(fold, d, stride, padding, seed);
  };
  return op;
}

}  // namespace

static void add_im2col_op_infos(std::vector<OpInfo>& ops) {
  ops.push_back(unfold_op("im2col", false,
                          "patches [N, C*K*K, Ho*Wo] of the input windows (conv2d under bf16)"));
  ops.push_back(unfold_op("col2im", true, "patch gradients added back into dx (im2col reversed)"));
}

const OpInfoFamily kIm2colFamily(320, &add_im2col_op_infos);

}  // namespace prism::opinfo
