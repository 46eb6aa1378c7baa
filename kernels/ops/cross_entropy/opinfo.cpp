// The descriptions (OpInfos) of cross_entropy and cross_entropy_backward for the lab and the
// op-description tests (the math is in args.h).
//
// Size "RxC": R rows of C logits, each with a class index. cross_entropy_backward's ":t" reads
// the logits through a transpose and the targets with stride 2 (a column of a [R, 2] label
// tensor), the strided views its front end may pass. The backward case gives the kernel the lse
// the forward would have saved, computed here on the host in double.
#include <cmath>

#include "kernels/opinfo/op_info.h"
#include "kernels/ops/cross_entropy/op.h"

namespace prism::opinfo {
namespace {

class CrossEntropyCase : public Case {
 public:
  CrossEntropyCase(int64_t rows, int64_t cols, uint64_t seed)
      : workspace_(static_cast<size_t>(rows * cols)), lse_(static_cast<size_t>(rows)), loss_(1) {
    InputRng rng(seed);
    logits_ = rng.vector(rows * cols, -6, 6);
    target_.resize(static_cast<size_t>(rows));
    for (auto& t : target_) t = static_cast<int64_t>(rng.next_u64() % static_cast<uint64_t>(cols));
    a_ = {};
    a_.logits = logits_.data(), a_.target = target_.data(), a_.loss = loss_.data();
    a_.lse = lse_.data();
    a_.rows = rows, a_.cols = cols, a_.row_stride = cols, a_.col_stride = 1, a_.target_stride = 1;
    a_.scale = 1.0 / static_cast<double>(rows);
  }
  void run(const kernels::KernelEntry& v) override {
    kernels::CrossEntropyArgs<float> a = a_;
    if (naive_tag(v)) {
      a.workspace = workspace_.data();
      a.workspace_size = static_cast<int64_t>(workspace_.size());
    }
    v.get<kernels::CrossEntropyArgs, float>()(a);
  }
  std::vector<Output> outputs() override { return {{"loss", &loss_}}; }
  profiler::Cost cost() const override { return costs::cross_entropy(a_.rows, a_.cols, true, 4); }
  int64_t workspace_bytes(const kernels::KernelEntry& v) const override {
    return naive_tag(v) ? 4 * static_cast<int64_t>(workspace_.size()) : 0;
  }

 private:
  CaseVector<float> logits_, workspace_;
  CaseVector<int64_t> target_;
  CaseVector<double> lse_;
  GuardedBuffer loss_;
  kernels::CrossEntropyArgs<float> a_;
};

// The mean reduction (scale 1 / R), as cross_entropy's default.
class CrossEntropyBackwardCase : public Case {
 public:
  CrossEntropyBackwardCase(const RowShape& s, uint64_t seed) : dlogits_(s.rows * s.cols) {
    InputRng rng(seed);
    logits_ = rng.vector(s.rows * s.cols, -6, 6);  // the forward case's range
    const int64_t target_stride = s.transposed ? 2 : 1;
    target_.assign(static_cast<size_t>(s.rows * target_stride), 0);
    for (int64_t r = 0; r < s.rows; ++r) {
      target_[r * target_stride] =
          static_cast<int64_t>(rng.next_u64() % static_cast<uint64_t>(s.cols));
    }
    // The loss's gradient: not 1, so a variant that ignores it fails.
    g_ = rng.vector(1, 0.5f, 2);
    // The forward's saved lse, in double, as the forward kernels keep it.
    lse_.resize(static_cast<size_t>(s.rows));
    for (int64_t r = 0; r < s.rows; ++r) {
      auto at = [&](int64_t j) {
        return static_cast<double>(logits_[r * s.row_stride() + j * s.col_stride()]);
      };
      double m = at(0), sum = 0;
      for (int64_t j = 1; j < s.cols; ++j) m = std::max(m, at(j));
      for (int64_t j = 0; j < s.cols; ++j) sum += std::exp(at(j) - m);
      lse_[r] = m + std::log(sum);
    }
    a_ = {};
    a_.logits = logits_.data(), a_.target = target_.data(), a_.lse = lse_.data();
    a_.g = g_.data(), a_.dlogits = dlogits_.data();
    a_.rows = s.rows, a_.cols = s.cols;
    a_.row_stride = s.row_stride(), a_.col_stride = s.col_stride();
    a_.target_stride = target_stride;
    a_.scale = 1.0 / static_cast<double>(s.rows);
  }
  void run(const kernels::KernelEntry& v) override {
    v.get<kernels::CrossEntropyBackwardArgs, float>()(a_);
  }
  std::vector<Output> outputs() override { return {{"dlogits", &dlogits_}}; }
  profiler::Cost cost() const override {
    return costs::cross_entropy_backward(a_.rows, a_.cols, 4);
  }

 private:
  CaseVector<float> logits_, g_;
  CaseVector<int64_t> target_;
  CaseVector<double> lse_;
  GuardedBuffer dlogits_;
  kernels::CrossEntropyBackwardArgs<float> a_;
};

void add_cross_entropy_op_infos(std::vector<OpInfo>& ops) {
  {
    OpInfo op;
    op.op = kernels::ops::cross_entropy.name;
    op.size_syntax = kRowSyntax;
    op.summary = "mean cross-entropy of logits against class indices (composed vs fused)";
    op.default_sizes = {"128x10", "4096x1000", "512x50257"};
    op.validation_sizes = {"1x1", "1x7", "7x1", "13x4099", "31x17", "3x65536"};
    op.tolerance = 1e-5;
    op.tolerance_why =
        "the fused pass sums exp(x - max) online, rescaling as the max grows, the composed "
        "one after a max pass: the same sum in another order, a few float32 ulps apart";
    op.make = [](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
      auto d = parse_dims(kernels::ops::cross_entropy.name, kRowSyntax, size, 2, 2);
      return std::make_unique<CrossEntropyCase>(d[0], d[1], seed);
    };
    ops.push_back(std::move(op));
  }
}

void add_cross_entropy_backward_op_infos(std::vector<OpInfo>& ops) {
  {
    OpInfo op;
    op.op = kernels::ops::cross_entropy_backward.name;
    op.size_syntax = kRowSyntaxT;
    op.summary = "gradient of cross_entropy: g / R (softmax - one-hot) from the saved lse";
    op.default_sizes = {"128x10", "4096x1000", "512x50257"};
    // One row of a few columns is left out: when its target takes nearly all the
    // probability the whole gradient is small next to a float32 rounding of 1 - p (1x7
    // measured up to 1.9e-5 over 3000 seeds between the fused and naive kernels); one row
    // of many columns cannot saturate.
    op.validation_sizes = {"1x1", "1x4099", "7x1", "13x4099", "31x17:t", "1031x3", "3x65536"};
    op.tolerance = 1e-6;
    op.tolerance_why =
        "one exp per logit and no sums: the CPU's vectorised exp is within 1 ulp and a GPU's "
        "expf within 2, and a GPU may fuse the one-hot subtract into the multiply, so results "
        "are a few float32 ulps of g / R apart (fused vs naive: at most 2.7e-7)";
    op.make = [](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
      return std::make_unique<CrossEntropyBackwardCase>(
          parse_row_shape(kernels::ops::cross_entropy_backward.name, kRowSyntaxT, size), seed);
    };
    ops.push_back(std::move(op));
  }
}

}  // namespace

const OpInfoFamily kCrossEntropyFamily(801, &add_cross_entropy_op_infos);
const OpInfoFamily kCrossEntropyBackwardFamily(842, &add_cross_entropy_backward_op_infos);

}  // namespace prism::opinfo
