// The descriptions (OpInfos) of max and average pooling and their gradients for the lab and the
// op-description tests (the math is in args.h).
//
// Size "PxHxW[:kKsSpP]": P planes (images x channels) of H x W, window K (default 2), stride S
// (default K), padding P (default 0).
#include <algorithm>

#include "kernels/opinfo/op_info.h"
#include "kernels/ops/pool2d/op.h"

namespace prism::opinfo {
namespace {

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
    auto p = parse_size_params(op_name, kPoolSyntax, size, params_text, "ksp");
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

void add_pool_op_infos(std::vector<OpInfo>& ops) {
  ops.push_back(
      pool_op(kernels::ops::max_pool2d.name, true, false, "max over windows (and its position)"));
  ops.push_back(pool_op(kernels::ops::max_pool2d_backward.name, true, true, "dx[argmax] += dy"));
  ops.push_back(pool_op(kernels::ops::avg_pool2d.name, false, false, "mean over windows"));
  ops.push_back(
      pool_op(kernels::ops::avg_pool2d_backward.name, false, true, "spread dy over windows"));
}

}  // namespace

const OpInfoFamily kPoolFamily(600, &add_pool_op_infos);

}  // namespace prism::opinfo
