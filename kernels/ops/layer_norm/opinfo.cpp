// The descriptions (OpInfos) of layer_norm and layer_norm_backward for the lab and the
// op-description tests (the math is in args.h).
//
// Size "RxC": R rows of C features. layer_norm_backward's ":t" reads x through a transpose, the
// strided view its front end may pass. The backward case gives the kernel what the forward would
// have saved (each row's mean and rstd), computed here on the host in double from the case's
// inputs, so the gradient is taken at a realistic point and every variant sees the same values.
#include <cmath>

#include "kernels/opinfo/op_info.h"
#include "kernels/ops/layer_norm/op.h"

namespace prism::opinfo {
namespace {

class LayerNormCase : public Case {
 public:
  LayerNormCase(int64_t rows, int64_t cols, uint64_t seed)
      : out_(rows * cols), mean_(rows), rstd_(rows) {
    InputRng rng(seed);
    // An offset far from zero: the naive E[x^2] - E[x]^2 formula would cancel here.
    x_ = rng.vector(rows * cols, 99, 101);
    w_ = rng.vector(cols, 0.5f, 1.5f);
    b_ = rng.vector(cols);
    a_ = {};
    a_.x = x_.data(), a_.weight = w_.data(), a_.bias = b_.data();
    a_.out = out_.data(), a_.mean = mean_.data(), a_.rstd = rstd_.data();
    a_.rows = rows, a_.cols = cols, a_.row_stride = cols, a_.col_stride = 1;
    a_.eps = 1e-5;
  }
  void run(const kernels::KernelEntry& v) override { v.get<kernels::LayerNormArgs, float>()(a_); }
  std::vector<Output> outputs() override {
    return {{"out", &out_}, {"mean", &mean_}, {"rstd", &rstd_}};
  }
  profiler::Cost cost() const override {
    return costs::layer_norm(a_.rows, a_.cols, true, true, true, 4);
  }

 private:
  CaseVector<float> x_, w_, b_;
  GuardedBuffer out_, mean_, rstd_;
  kernels::LayerNormArgs<float> a_;
};

// ---- layer_norm_backward -----------------------------------------------------------------------
// With a weight, and all three gradients asked for: a training step's LayerNorm.
class LayerNormBackwardCase : public Case {
 public:
  LayerNormBackwardCase(const RowShape& s, uint64_t seed)
      : dx_(s.rows * s.cols), dweight_(s.cols), dbias_(s.cols) {
    InputRng rng(seed);
    // Activations with a mean away from 0 (xhat = (x - mean) rstd must subtract it), the
    // forward case's weight range, and an upstream gradient.
    x_ = rng.vector(s.rows * s.cols, -1, 3);
    w_ = rng.vector(s.cols, 0.5f, 1.5f);
    g_ = rng.vector(s.rows * s.cols);
    // The forward's saved statistics, in double from x (eps 1e-5, the front end's default).
    mean_.resize(static_cast<size_t>(s.rows));
    rstd_.resize(static_cast<size_t>(s.rows));
    for (int64_t r = 0; r < s.rows; ++r) {
      auto at = [&](int64_t j) {
        return static_cast<double>(x_[r * s.row_stride() + j * s.col_stride()]);
      };
      double sum = 0, sq = 0;
      for (int64_t j = 0; j < s.cols; ++j) sum += at(j);
      const double mean = sum / static_cast<double>(s.cols);
      for (int64_t j = 0; j < s.cols; ++j) sq += (at(j) - mean) * (at(j) - mean);
      mean_[r] = static_cast<float>(mean);
      rstd_[r] = static_cast<float>(1 / std::sqrt(sq / static_cast<double>(s.cols) + 1e-5));
    }
    a_ = {};
    a_.x = x_.data(), a_.g = g_.data(), a_.weight = w_.data();
    a_.mean = mean_.data(), a_.rstd = rstd_.data();
    a_.dx = dx_.data(), a_.dweight = dweight_.data(), a_.dbias = dbias_.data();
    a_.rows = s.rows, a_.cols = s.cols;
    a_.row_stride = s.row_stride(), a_.col_stride = s.col_stride();
  }
  void run(const kernels::KernelEntry& v) override {
    v.get<kernels::LayerNormBackwardArgs, float>()(a_);
  }
  std::vector<Output> outputs() override {
    return {{"dx", &dx_}, {"dweight", &dweight_}, {"dbias", &dbias_}};
  }
  profiler::Cost cost() const override {
    return costs::layer_norm_backward(a_.rows, a_.cols, true, true, true, true, 4);
  }

 private:
  CaseVector<float> x_, w_, g_, mean_, rstd_;
  GuardedBuffer dx_, dweight_, dbias_;
  kernels::LayerNormBackwardArgs<float> a_;
};

void add_layer_norm_op_infos(std::vector<OpInfo>& ops) {
  {
    OpInfo op;
    op.op = kernels::ops::layer_norm.name;
    op.size_syntax = kRowSyntax;
    op.summary = "layer normalization of each row (two pass vs one pass)";
    op.default_sizes = {"4096x768", "512x4096", "16384x128"};
    op.validation_sizes = {"1x1", "1x7", "13x4099", "31x17", "5x1", "3x65536"};
    op.tolerance_why =
        "the one-pass kernel accumulates the mean and variance together (Welford-style) where "
        "the two-pass one subtracts the mean first: sums of up to 65536 terms in other orders";
    op.make = [](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
      auto d = parse_dims(kernels::ops::layer_norm.name, kRowSyntax, size, 2, 2);
      return std::make_unique<LayerNormCase>(d[0], d[1], seed);
    };
    ops.push_back(std::move(op));
  }
}

void add_layer_norm_backward_op_infos(std::vector<OpInfo>& ops) {
  {
    OpInfo op;
    op.op = kernels::ops::layer_norm_backward.name;
    op.size_syntax = kRowSyntaxT;
    op.summary = "gradients of layer_norm: dx, dweight, dbias from the saved mean and rstd";
    op.default_sizes = {"4096x768", "512x4096", "16384x128"};
    // No R x 1 sample: over one column x - mean = 0 and rstd = 1/sqrt(eps) = 316, so dx is 0
    // up to roundings amplified 316-fold (an FMA leaves 5e-6 where the naive kernel gets 0)
    // and dbias a sum of R values that may cancel: the normalized error would compare noise
    // with noise (measured 1.3e-3 on 7x1, 2e-5 on 1x1, for correct kernels).
    op.validation_sizes = {"1x7", "7x3:t", "13x4099", "31x17:t", "4099x13", "3x65536"};
    op.tolerance = 1e-5;
    op.tolerance_why =
        "the fused CPU kernel sums each row's g w and g w xhat and each column's dweight and "
        "dbias in float32 (SIMD lanes, rows in turn) where the naive and CUDA kernels sum in "
        "double: measured up to 5e-6 on the 16384 rows of 16384x128";
    op.make = [](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
      return std::make_unique<LayerNormBackwardCase>(
          parse_row_shape(kernels::ops::layer_norm_backward.name, kRowSyntaxT, size), seed);
    };
    ops.push_back(std::move(op));
  }
}

}  // namespace

const OpInfoFamily kLayerNormFamily(800, &add_layer_norm_op_infos);
const OpInfoFamily kLayerNormBackwardFamily(841, &add_layer_norm_backward_op_infos);

}  // namespace prism::opinfo
