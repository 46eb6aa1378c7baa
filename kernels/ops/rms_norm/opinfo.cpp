// The descriptions of rms_norm and rms_norm_backward (kernels/args.h has the math).
//
// Size "RxC": R rows of C columns, normalised row by row; ":t" reads x through a transpose
// (column stride R), a layout the front end hands the kernel when x is a transposed view. The
// backward case gives the kernel what the forward would have saved: each row's rstd, computed
// here on the host in double from the case's x.
#include <cmath>

#include "kernels/costs.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/ops/rms_norm/op.h"

namespace prism::opinfo {
namespace {

using Rows = RowShape;

constexpr double kEps = 1e-6;  // LLaMA's

class RmsNormCase : public Case {
 public:
  RmsNormCase(const Rows& s, uint64_t seed) : out_(s.rows * s.cols), rstd_(s.rows) {
    InputRng rng(seed);
    // Activations of a transformer's residual stream: mostly small, one row element large.
    x_ = rng.vector(s.rows * s.cols, -2, 2);
    if (!x_.empty()) x_[0] = 40;
    w_ = rng.vector(s.cols, 0.5f, 1.5f);
    a_ = {};
    a_.x = x_.data(), a_.weight = w_.data(), a_.out = out_.data(), a_.rstd = rstd_.data();
    a_.rows = s.rows, a_.cols = s.cols;
    a_.row_stride = s.row_stride(), a_.col_stride = s.col_stride();
    a_.eps = kEps;
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::RmsNormArgs, float>()(a_); }
  std::vector<Output> outputs() override { return {{"out", &out_}, {"rstd", &rstd_}}; }
  profiler::Cost cost() const override { return costs::rms_norm(a_.rows, a_.cols, true, true, 4); }

 private:
  CaseVector<float> x_, w_;
  GuardedBuffer out_, rstd_;
  kernels::RmsNormArgs<float> a_;
};

class RmsNormBackwardCase : public Case {
 public:
  RmsNormBackwardCase(const Rows& s, uint64_t seed) : dx_(s.rows * s.cols), dweight_(s.cols) {
    InputRng rng(seed);
    x_ = rng.vector(s.rows * s.cols, -2, 2);
    w_ = rng.vector(s.cols, 0.5f, 1.5f);
    g_ = rng.vector(s.rows * s.cols);
    rstd_.resize(static_cast<size_t>(s.rows));
    for (int64_t r = 0; r < s.rows; ++r) {
      double sq = 0;
      for (int64_t j = 0; j < s.cols; ++j) {
        const double v = x_[r * s.row_stride() + j * s.col_stride()];
        sq += v * v;
      }
      rstd_[r] = static_cast<float>(1 / std::sqrt(sq / static_cast<double>(s.cols) + kEps));
    }
    a_ = {};
    a_.x = x_.data(), a_.g = g_.data(), a_.weight = w_.data(), a_.rstd = rstd_.data();
    a_.dx = dx_.data(), a_.dweight = dweight_.data();
    a_.rows = s.rows, a_.cols = s.cols;
    a_.row_stride = s.row_stride(), a_.col_stride = s.col_stride();
  }
  void run(const kernels::KernelEntry& v) override {
    v.get<kernels::RmsNormBackwardArgs, float>()(a_);
  }
  std::vector<Output> outputs() override { return {{"dx", &dx_}, {"dweight", &dweight_}}; }
  profiler::Cost cost() const override {
    return costs::rms_norm_backward(a_.rows, a_.cols, true, true, true, 4);
  }

 private:
  CaseVector<float> x_, w_, g_, rstd_;
  GuardedBuffer dx_, dweight_;
  kernels::RmsNormBackwardArgs<float> a_;
};

void add_rms_norm_op_infos(std::vector<OpInfo>& ops) {
  for (bool backward : {false, true}) {
    OpInfo op;
    op.op = backward ? "rms_norm_backward" : "rms_norm";
    op.size_syntax = kRowSyntaxT;
    op.summary = backward ? "gradients of rms_norm: dx and dweight from the saved rstd"
                          : "RMS normalisation of each row (a pass per step vs one fused pass)";
    // A GPT-2-small and a LLaMA-7B hidden size over a few thousand tokens, and short rows.
    op.default_sizes = {"4096x768", "2048x4096", "16384x128"};
    op.validation_sizes = {"1x1", "1x7", "7x1", "13x4099", "31x17:t", "4099x13", "3x65536"};
    op.tolerance = 1e-5;
    op.tolerance_why =
        backward ? "dweight sums g xhat over up to 4099 rows and dx a row mean over up to 65536 "
                   "columns: float32 in SIMD lanes on the cpu, double elsewhere, so roundings "
                   "that grow with those lengths"
                 : "the sum of squares is in double in every variant; what differs is float32 "
                   "rounding of x rstd weight, done as one or as two multiplies";
    const std::string name = op.op;
    op.make = [backward, name](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
      const Rows r = parse_row_shape(name, kRowSyntaxT, size);
      if (backward) return std::make_unique<RmsNormBackwardCase>(r, seed);
      return std::make_unique<RmsNormCase>(r, seed);
    };
    ops.push_back(std::move(op));
  }
}

}  // namespace

const OpInfoFamily kRmsNormFamily(850, &add_rms_norm_op_infos);

}  // namespace prism::opinfo
