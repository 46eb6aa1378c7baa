// The descriptions (OpInfos) of softmax, log_softmax and their gradients for the lab and the
// op-description tests (the math is in args.h).
//
// Size "RxC": R rows of C columns, each normalized on its own. The forward's ":t" reads the
// input through a transpose (column stride R instead of 1). The backward case gives the kernel
// the forward's output, computed here on the host in double from the case's logits.
#include <algorithm>
#include <cmath>

#include "kernels/opinfo/op_info.h"
#include "kernels/ops/softmax/op.h"

namespace prism::opinfo {
namespace {

using Rows = RowShape;

class SoftmaxCase : public Case {
 public:
  SoftmaxCase(const Rows& r, uint64_t seed) : out_(r.rows * r.cols) {
    InputRng rng(seed);
    // Logits of a realistic spread; a few large ones test the max subtraction.
    x_ = rng.vector(r.rows * r.cols, -8, 8);
    if (!x_.empty()) x_[0] = 80;  // exp(80) overflows float32: a kernel must subtract the max
    args_ = {};
    args_.x = x_.data();
    args_.out = out_.data();
    args_.rows = r.rows;
    args_.cols = r.cols;
    args_.row_stride = r.row_stride();
    args_.col_stride = r.col_stride();
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::SoftmaxArgs, float>()(args_); }
  std::vector<Output> outputs() override { return {{"out", &out_}}; }
  profiler::Cost cost() const override { return costs::softmax(args_.rows * args_.cols, 4); }

 private:
  CaseVector<float> x_;
  GuardedBuffer out_;
  kernels::SoftmaxArgs<float> args_;
};

class SoftmaxBackwardCase : public Case {
 public:
  SoftmaxBackwardCase(const RowShape& s, bool log, uint64_t seed) : dx_(s.rows * s.cols) {
    InputRng rng(seed);
    // y is the forward's output for logits of a realistic spread (the softmax case's range),
    // computed in double: probabilities that sum to 1, or their logs.
    const CaseVector<float> x = rng.vector(s.rows * s.cols, -8, 8);
    y_.resize(x.size());
    for (int64_t r = 0; r < s.rows; ++r) {
      const float* xr = x.data() + r * s.cols;
      double m = xr[0], sum = 0;
      for (int64_t j = 1; j < s.cols; ++j) m = std::max(m, static_cast<double>(xr[j]));
      for (int64_t j = 0; j < s.cols; ++j) sum += std::exp(xr[j] - m);
      for (int64_t j = 0; j < s.cols; ++j) {
        const double z = xr[j] - m;
        y_[r * s.cols + j] = static_cast<float>(log ? z - std::log(sum) : std::exp(z) / sum);
      }
    }
    g_ = rng.vector(s.rows * s.cols);
    a_ = {};
    a_.y = y_.data(), a_.g = g_.data(), a_.dx = dx_.data();
    a_.rows = s.rows, a_.cols = s.cols;
  }
  void run(const kernels::KernelEntry& v) override {
    v.get<kernels::SoftmaxBackwardArgs, float>()(a_);
  }
  std::vector<Output> outputs() override { return {{"dx", &dx_}}; }
  profiler::Cost cost() const override { return costs::softmax_backward(a_.rows * a_.cols, 4); }

 private:
  CaseVector<float> y_, g_;
  GuardedBuffer dx_;
  kernels::SoftmaxBackwardArgs<float> a_;
};

OpInfo softmax_op(const char* name, const char* summary) {
  OpInfo op = row_op_info(name, summary);
  op.tolerance = 1e-5;
  op.tolerance_why =
      "a row's sum in 32 lanes (optimized) or Eigen's tree order differs from the naive running "
      "sum by a few float32 roundings, and the online pass rescales its sum as the max grows";
  const std::string op_name = name;
  op.make = [op_name](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
    return std::make_unique<SoftmaxCase>(parse_row_shape(op_name, kRowSyntaxT, size), seed);
  };
  return op;
}

void add_softmax_op_infos(std::vector<OpInfo>& ops) {
  ops.push_back(
      softmax_op(kernels::ops::softmax.name, "softmax of each row (three passes vs online)"));
  ops.push_back(softmax_op(kernels::ops::log_softmax.name, "log_softmax of each row"));
}

void add_softmax_backward_op_infos(std::vector<OpInfo>& ops) {
  for (bool log : {false, true}) {
    OpInfo op;
    op.op = log ? kernels::ops::log_softmax_backward.name : kernels::ops::softmax_backward.name;
    op.size_syntax = kRowSyntax;
    op.summary = log ? "gradient of log_softmax: dx = g - exp(y) sum(g)"
                     : "gradient of softmax: dx = y (g - sum(g y))";
    op.default_sizes = {"128x10", "4096x1024", "512x50257"};
    op.validation_sizes = {"1x1", "1x7", "7x1", "13x4099", "31x17", "1031x3", "3x65536"};
    op.tolerance = 1e-6;
    op.tolerance_why =
        "every variant sums the row's sum(g y) or sum(g) in double, so they differ only in that "
        "sum's final rounding to float32 and, for log_softmax, an expf within 1-2 ulp: a few "
        "ulps of the largest dx (an expf 2 ulp off emulated: at most 7e-7 in 20000 seeds)";
    const std::string name = op.op;
    op.make = [log, name](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
      return std::make_unique<SoftmaxBackwardCase>(parse_row_shape(name, kRowSyntax, size, false),
                                                   log, seed);
    };
    ops.push_back(std::move(op));
  }
}

}  // namespace

const OpInfoFamily kSoftmaxFamily(400, &add_softmax_op_infos);
const OpInfoFamily kSoftmaxBackwardFamily(840, &add_softmax_backward_op_infos);

}  // namespace prism::opinfo
