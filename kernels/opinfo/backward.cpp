// The descriptions (OpInfos) of the row-wise gradients: softmax_backward, log_softmax_backward,
// layer_norm_backward and cross_entropy_backward.
//
// Size "RxC": R rows of C columns. Each case gives the kernel what its forward would have saved,
// computed here on the host in double from the case's inputs (the softmax's output, the layer
// norm's mean and rstd, the cross-entropy's lse), so the gradient is taken at a realistic point
// and every variant sees the same saved values. ":t" (layer_norm_backward and
// cross_entropy_backward, whose x or logits the front end passes as a strided view) reads the
// input through a transpose; cross_entropy_backward's ":t" also reads the targets with stride
// 2 (a column of a [R, 2] label tensor). g and every gradient are contiguous, as the front ends
// make them.
#include <cmath>

#include "kernels/costs.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/ops/cross_entropy/op.h"
#include "kernels/ops/layer_norm/op.h"
#include "kernels/ops/softmax/op.h"

namespace prism::opinfo {
namespace {

constexpr const char* kRowsSyntax = "RxC (rows x columns)";
constexpr const char* kStridedSyntax =
    "RxC (rows x columns), optionally :t (input read through a transpose)";

using Shape = RowShape;

Shape parse_shape(const std::string& op, const std::string& size, bool strided) {
  return parse_row_shape(op, strided ? kStridedSyntax : kRowsSyntax, size, strided);
}

// ---- softmax_backward / log_softmax_backward ---------------------------------------------------
class SoftmaxBackwardCase : public Case {
 public:
  SoftmaxBackwardCase(const Shape& s, bool log, uint64_t seed) : dx_(s.rows * s.cols) {
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

// ---- layer_norm_backward -----------------------------------------------------------------------
// With a weight, and all three gradients asked for: a training step's LayerNorm.
class LayerNormBackwardCase : public Case {
 public:
  LayerNormBackwardCase(const Shape& s, uint64_t seed)
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

// ---- cross_entropy_backward --------------------------------------------------------------------
// The mean reduction (scale 1 / R), as cross_entropy's default.
class CrossEntropyBackwardCase : public Case {
 public:
  CrossEntropyBackwardCase(const Shape& s, uint64_t seed) : dlogits_(s.rows * s.cols) {
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

}  // namespace

static void add_backward_op_infos(std::vector<OpInfo>& ops) {
  for (bool log : {false, true}) {
    OpInfo op;
    op.op = log ? kernels::ops::log_softmax_backward.name : kernels::ops::softmax_backward.name;
    op.size_syntax = kRowsSyntax;
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
      return std::make_unique<SoftmaxBackwardCase>(parse_shape(name, size, false), log, seed);
    };
    ops.push_back(std::move(op));
  }
  {
    OpInfo op;
    op.op = kernels::ops::layer_norm_backward.name;
    op.size_syntax = kStridedSyntax;
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
          parse_shape(kernels::ops::layer_norm_backward.name, size, true), seed);
    };
    ops.push_back(std::move(op));
  }
  {
    OpInfo op;
    op.op = kernels::ops::cross_entropy_backward.name;
    op.size_syntax = kStridedSyntax;
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
          parse_shape(kernels::ops::cross_entropy_backward.name, size, true), seed);
    };
    ops.push_back(std::move(op));
  }
}

const OpInfoFamily kBackwardFamily(84, &add_backward_op_infos);

}  // namespace prism::opinfo
