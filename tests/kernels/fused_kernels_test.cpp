// The kernel lab's fused / unfused pairs, called directly on raw buffers (no tensor front end):
// softmax and log_softmax "online" against "naive", layer_norm "one_pass" against "two_pass",
// cross_entropy "fused" against "composed", and the optimizer updates "fused" against
// "per_tensor", which must agree bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/ops/cross_entropy/args.h"
#include "kernels/ops/layer_norm/args.h"
#include "kernels/ops/optim/args.h"
#include "kernels/ops/softmax/args.h"
#include "kernels/registry.h"
#include "tests/tensor/reference.h"

namespace prism::kernels {
namespace {

const KernelEntry& entry(const char* op, const char* variant) {
  return registry().at(op, Device::cpu).at(variant);
}

template <class T>
std::vector<T> random_values(size_t n, uint64_t seed, double lo, double hi) {
  ref::Rng rng(seed);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(rng.uniform(lo, hi));
  return v;
}

// |a - b| <= atol + rtol |b| everywhere, NaN where NaN; returns the first failing index or -1.
template <class T>
int64_t first_mismatch(const std::vector<T>& a, const std::vector<T>& b, double rtol, double atol) {
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = a[i], y = b[i];
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) return static_cast<int64_t>(i);
      continue;
    }
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y) return static_cast<int64_t>(i);
      continue;
    }
    if (std::fabs(x - y) > atol + rtol * std::fabs(y)) return static_cast<int64_t>(i);
  }
  return -1;
}

// ---- softmax ----------------------------------------------------------------------------------

template <class T>
std::vector<T> run_softmax(const char* op, const char* variant, const std::vector<T>& x,
                           int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  std::vector<T> out(static_cast<size_t>(rows * cols));
  SoftmaxArgs<T> a{x.data(), out.data(), rows, cols, row_stride, col_stride};
  entry(op, variant).get<SoftmaxArgs, T>()(a);
  return out;
}

TEST_CASE_TEMPLATE("softmax online agrees with naive: odd widths, strides, special values", T,
                   float, double) {
  const double rtol = sizeof(T) == 4 ? 2e-6 : 1e-13;
  // Widths around the online kernel's 512-element chunk, 1, primes.
  for (int64_t cols : {1, 2, 7, 31, 511, 512, 513, 1031, 2053}) {
    const int64_t rows = 5;
    for (int64_t col_stride : {1, 3}) {
      INFO("cols " << cols << " col_stride " << col_stride);
      const int64_t row_stride = cols * col_stride + 2;
      std::vector<T> x = random_values<T>(static_cast<size_t>(rows * row_stride), 7, -20, 20);
      for (const char* op : {"softmax", "log_softmax"}) {
        INFO(op);
        auto naive = run_softmax(op, "naive", x, rows, cols, row_stride, col_stride);
        auto online = run_softmax(op, "online", x, rows, cols, row_stride, col_stride);
        CHECK(first_mismatch(online, naive, rtol, sizeof(T) == 4 ? 1e-6 : 1e-14) == -1);
      }
    }
  }
}

TEST_CASE_TEMPLATE("softmax online: -inf entries, all -inf rows, huge values", T, float, double) {
  const T inf = std::numeric_limits<T>::infinity();
  const int64_t cols = 1500;  // three chunks
  // Row 0: the whole first chunk is -inf, then finite values (the running sum starts late).
  // Row 1: every entry -inf (NaN out, as naive).  Row 2: values near the float maximum.
  // Row 3: a few -inf sprinkled in.
  std::vector<T> x = random_values<T>(4 * cols, 11, -5, 5);
  for (int64_t j = 0; j < 600; ++j) x[static_cast<size_t>(j)] = -inf;
  for (int64_t j = 0; j < cols; ++j) x[static_cast<size_t>(cols + j)] = -inf;
  for (int64_t j = 0; j < cols; ++j) {
    x[static_cast<size_t>(2 * cols + j)] =
        static_cast<T>(3e38) - static_cast<T>(j % 7) * static_cast<T>(1e32);
  }
  for (int64_t j = 0; j < cols; j += 97) x[static_cast<size_t>(3 * cols + j)] = -inf;
  for (const char* op : {"softmax", "log_softmax"}) {
    INFO(op);
    const bool log = std::string(op) == "log_softmax";
    auto naive = run_softmax<T>(op, "naive", x, 4, cols, cols, 1);
    auto online = run_softmax<T>(op, "online", x, 4, cols, cols, 1);
    CHECK(first_mismatch(online, naive, sizeof(T) == 4 ? 2e-6 : 1e-13, 1e-7) == -1);
    // The -inf entries of row 0 get probability 0 (log: -inf); the rest is a distribution.
    CHECK(online[0] == (log ? -inf : T(0)));
    for (int64_t j = 0; j < cols; ++j) CHECK(std::isnan(online[static_cast<size_t>(cols + j)]));
    double total = 0;
    for (int64_t j = 0; j < cols; ++j) {
      const T y = online[static_cast<size_t>(2 * cols + j)];
      CHECK(std::isfinite(y));
      total += log ? std::exp(static_cast<double>(y)) : static_cast<double>(y);
    }
    CHECK(total == doctest::Approx(1.0).epsilon(1e-5));
  }
}

// ---- layer_norm -------------------------------------------------------------------------------

template <class T>
struct LayerNormOut {
  std::vector<T> y, mean, rstd;
};

template <class T>
LayerNormOut<T> run_layer_norm(const char* variant, const std::vector<T>& x, int64_t rows,
                               int64_t cols, int64_t col_stride, const T* w, const T* b) {
  LayerNormOut<T> o;
  o.y.resize(static_cast<size_t>(rows * cols));
  o.mean.resize(static_cast<size_t>(rows));
  o.rstd.resize(static_cast<size_t>(rows));
  LayerNormArgs<T> a{};
  a.x = x.data();
  a.weight = w;
  a.bias = b;
  a.out = o.y.data();
  a.mean = o.mean.data();
  a.rstd = o.rstd.data();
  a.rows = rows;
  a.cols = cols;
  a.row_stride = cols * col_stride;
  a.col_stride = col_stride;
  a.eps = 1e-5;
  entry("layer_norm", variant).get<LayerNormArgs, T>()(a);
  return o;
}

TEST_CASE_TEMPLATE("layer_norm one_pass agrees with two_pass, statistics included", T, float,
                   double) {
  const double rtol = sizeof(T) == 4 ? 2e-5 : 1e-12, atol = sizeof(T) == 4 ? 2e-5 : 1e-12;
  // Widths below, at and around the 64-lane blocks, primes; an offset mean.
  for (int64_t cols : {1, 2, 13, 63, 64, 65, 127, 257, 1031}) {
    for (int64_t col_stride : {1, 2}) {
      INFO("cols " << cols << " col_stride " << col_stride);
      const int64_t rows = 3;
      std::vector<T> x = random_values<T>(static_cast<size_t>(rows * cols * col_stride), 5, 2, 6);
      std::vector<T> w = random_values<T>(static_cast<size_t>(cols), 6, -2, 2);
      std::vector<T> b = random_values<T>(static_cast<size_t>(cols), 8, -1, 1);
      for (bool affine : {false, true}) {
        const T* wp = affine ? w.data() : nullptr;
        const T* bp = affine ? b.data() : nullptr;
        auto two = run_layer_norm<T>("two_pass", x, rows, cols, col_stride, wp, bp);
        auto one = run_layer_norm<T>("one_pass", x, rows, cols, col_stride, wp, bp);
        CHECK(first_mismatch(one.y, two.y, rtol, atol) == -1);
        CHECK(first_mismatch(one.mean, two.mean, rtol, atol) == -1);
        CHECK(first_mismatch(one.rstd, two.rstd, rtol, atol) == -1);
      }
    }
  }
}

TEST_CASE("layer_norm one_pass (float32) survives a large mean where E[x^2] - E[x]^2 does not") {
  // Rows around 1000 with spread ~1: the float32 sums of x and x^2 lose the variance.
  const int64_t cols = 1024;
  std::vector<float> x = random_values<float>(cols, 3, 999, 1001);
  auto one = run_layer_norm<float>("one_pass", x, 1, cols, 1, nullptr, nullptr);
  double mean = 0;
  for (float v : x) mean += v;
  mean /= cols;
  double var = 0;
  for (float v : x) var += (v - mean) * (v - mean);
  var /= cols;
  float s1 = 0, s2 = 0;
  for (float v : x) s1 += v, s2 += v * v;
  const float naive_var = s2 / cols - (s1 / cols) * (s1 / cols);
  CHECK(std::fabs(naive_var - var) > 0.05 * var);  // the textbook formula is far off
  const double rstd = 1 / std::sqrt(var + 1e-5);
  CHECK(one.rstd[0] == doctest::Approx(rstd).epsilon(1e-4));
  CHECK(one.mean[0] == doctest::Approx(mean).epsilon(1e-6));
}

// ---- cross_entropy ----------------------------------------------------------------------------

template <class T>
std::pair<T, std::vector<double>> run_cross_entropy(const char* variant, const std::vector<T>& x,
                                                    const std::vector<int64_t>& target,
                                                    int64_t rows, int64_t cols,
                                                    int64_t col_stride) {
  T loss = 0;
  std::vector<double> lse(static_cast<size_t>(rows));
  std::vector<T> workspace(static_cast<size_t>(rows * cols));
  CrossEntropyArgs<T> a{};
  a.logits = x.data();
  a.target = target.data();
  a.loss = &loss;
  a.lse = lse.data();
  const bool naive = entry("cross_entropy", variant).tag == VariantTag::naive;
  a.workspace = naive ? workspace.data() : nullptr;
  a.workspace_size = naive ? rows * cols : 0;
  a.rows = rows;
  a.cols = cols;
  a.row_stride = cols * col_stride;
  a.col_stride = col_stride;
  a.target_stride = 1;
  a.scale = 1.0 / static_cast<double>(rows);
  entry("cross_entropy", variant).get<CrossEntropyArgs, T>()(a);
  return {loss, lse};
}

TEST_CASE_TEMPLATE("cross_entropy fused agrees with composed, and backward is softmax - onehot", T,
                   float, double) {
  // Narrow rows (cols < 32) take their own path, in blocks of 1024 / cols rows: 110 rows of 10
  // cross a block.
  for (int64_t cols : {1, 2, 10, 31, 32, 513, 1031}) {
    for (int64_t col_stride : {1, 2}) {
      const int64_t rows = cols == 10 ? 110 : 7;
      INFO("cols " << cols << " col_stride " << col_stride << " rows " << rows);
      std::vector<T> x = random_values<T>(static_cast<size_t>(rows * cols * col_stride), 9, -8, 8);
      ref::Rng rng(4);
      std::vector<int64_t> target(static_cast<size_t>(rows));
      for (int64_t& t : target) t = rng.integer(0, cols);
      auto [l_composed, lse_composed] =
          run_cross_entropy<T>("composed", x, target, rows, cols, col_stride);
      auto [l_fused, lse_fused] = run_cross_entropy<T>("fused", x, target, rows, cols, col_stride);
      const double tol = sizeof(T) == 4 ? 2e-6 : 1e-13;
      CHECK(l_fused == doctest::Approx(l_composed).epsilon(tol));
      CHECK(first_mismatch(lse_fused, lse_composed, tol, tol) == -1);

      // Backward against softmax computed here in double.
      T g = 2;
      std::vector<T> d(static_cast<size_t>(rows * cols));
      CrossEntropyBackwardArgs<T> b{};
      b.logits = x.data();
      b.target = target.data();
      b.lse = lse_fused.data();
      b.g = &g;
      b.dlogits = d.data();
      b.rows = rows;
      b.cols = cols;
      b.row_stride = cols * col_stride;
      b.col_stride = col_stride;
      b.target_stride = 1;
      b.scale = 1.0 / static_cast<double>(rows);
      entry("cross_entropy_backward", "fused").get<CrossEntropyBackwardArgs, T>()(b);
      std::vector<T> expect(d.size());
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < cols; ++j) {
          const double xv = x[static_cast<size_t>(r * cols * col_stride + j * col_stride)];
          const double p = std::exp(xv - lse_fused[static_cast<size_t>(r)]);
          expect[static_cast<size_t>(r * cols + j)] =
              static_cast<T>(2.0 / rows * (p - (j == target[static_cast<size_t>(r)] ? 1 : 0)));
        }
      }
      CHECK(first_mismatch(d, expect, sizeof(T) == 4 ? 1e-5 : 1e-12,
                           sizeof(T) == 4 ? 1e-7 : 1e-15) == -1);
    }
  }
}

// The narrow-row path keeps the special values of the online one: a row of -inf has
// lse = -inf (a sum of 0, not NaN from -inf - -inf), +inf or NaN anywhere make lse NaN, and a
// finite row next to them is untouched.
TEST_CASE_TEMPLATE("cross_entropy fused: special values in narrow and wide rows", T, float,
                   double) {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  for (int64_t cols : {4, 600}) {
    INFO("cols " << cols);
    std::vector<T> x(static_cast<size_t>(4 * cols), T(0.5));
    for (int64_t j = 0; j < cols; ++j) x[static_cast<size_t>(j)] = -inf;  // row 0: all -inf
    x[static_cast<size_t>(cols + 1)] = inf;                               // row 1: one +inf
    x[static_cast<size_t>(2 * cols + 2)] = nan;                           // row 2: one NaN
    const std::vector<int64_t> target = {0, 0, 0, 3};
    auto [loss, lse] = run_cross_entropy<T>("fused", x, target, 4, cols, 1);
    CHECK(lse[0] == -std::numeric_limits<double>::infinity());
    CHECK(std::isnan(lse[1]));
    CHECK(std::isnan(lse[2]));
    CHECK(lse[3] == doctest::Approx(0.5 + std::log(static_cast<double>(cols))).epsilon(1e-6));
    CHECK(std::isnan(loss));
  }
}

// ---- optimizer updates: bit for bit -----------------------------------------------------------

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
void adam_both_ways(double weight_decay, bool decoupled, int64_t step) {
  const int64_t n = 1037;
  const auto p0 = random_values<T>(n, 1, -1, 1), g = random_values<T>(n, 2, -1, 1);
  const auto m0 = random_values<T>(n, 3, -0.1, 0.1), v0 = random_values<T>(n, 4, 0, 0.01);
  std::vector<T> p[2] = {p0, p0}, m[2] = {m0, m0}, v[2] = {v0, v0};
  const char* variants[2] = {"fused", "per_tensor"};
  for (int k = 0; k < 2; ++k) {
    std::vector<T> scratch(static_cast<size_t>(adam_per_tensor_workspace(n, true)));
    AdamArgs<T> a{};
    a.param = p[k].data();
    a.grad = g.data();
    a.m = m[k].data();
    a.v = v[k].data();
    a.numel = n;
    a.lr = 1e-3;
    a.beta1 = 0.9;
    a.beta2 = 0.999;
    a.eps = 1e-8;
    a.weight_decay = weight_decay;
    a.decoupled = decoupled;
    a.bias_correction1 = 1 - std::pow(0.9, static_cast<double>(step));
    a.bias_correction2 = 1 - std::pow(0.999, static_cast<double>(step));
    a.workspace = scratch.data();
    a.workspace_size = static_cast<int64_t>(scratch.size());
    entry("adam_update", variants[k]).get<AdamArgs, T>()(a);
  }
  CHECK(same_bits(p[0], p[1]));
  CHECK(same_bits(m[0], m[1]));
  CHECK(same_bits(v[0], v[1]));
  CHECK_FALSE(same_bits(p[0], p0));  // the update did something
}

TEST_CASE_TEMPLATE("adam_update per_tensor and fused agree bit for bit", T, float, double) {
  for (int64_t step : {1, 10}) {
    adam_both_ways<T>(0, false, step);
    adam_both_ways<T>(0.01, false, step);  // Adam, L2 through the moments
    adam_both_ways<T>(0.01, true, step);   // AdamW
  }
}

template <class T>
void sgd_both_ways(double momentum, double weight_decay, bool nesterov) {
  const int64_t n = 1037;
  const auto p0 = random_values<T>(n, 1, -1, 1), g = random_values<T>(n, 2, -1, 1);
  const auto v0 = random_values<T>(n, 3, -0.1, 0.1);
  std::vector<T> p[2] = {p0, p0}, v[2] = {v0, v0};
  const char* variants[2] = {"fused", "per_tensor"};
  for (int k = 0; k < 2; ++k) {
    std::vector<T> scratch(static_cast<size_t>(sgd_per_tensor_workspace(n, true, true)));
    SgdArgs<T> a{};
    a.param = p[k].data();
    a.grad = g.data();
    a.velocity = momentum != 0 ? v[k].data() : nullptr;
    a.numel = n;
    a.lr = 0.05;
    a.momentum = momentum;
    a.weight_decay = weight_decay;
    a.nesterov = nesterov;
    a.workspace = scratch.data();
    a.workspace_size = static_cast<int64_t>(scratch.size());
    entry("sgd_update", variants[k]).get<SgdArgs, T>()(a);
  }
  CHECK(same_bits(p[0], p[1]));
  CHECK(same_bits(v[0], v[1]));
  CHECK_FALSE(same_bits(p[0], p0));
}

TEST_CASE_TEMPLATE("sgd_update per_tensor and fused agree bit for bit", T, float, double) {
  sgd_both_ways<T>(0, 0, false);
  sgd_both_ways<T>(0, 0.01, false);
  sgd_both_ways<T>(0.9, 0, false);
  sgd_both_ways<T>(0.9, 0.01, false);
  sgd_both_ways<T>(0.9, 0.01, true);
}

TEST_CASE("the variant tags: fused pairs are tagged fused and naive, fused is the default") {
  struct Pair {
    const char* op;
    const char* fused;
    const char* unfused;
  };
  for (const Pair& p :
       {Pair{"softmax", "online", "naive"}, Pair{"log_softmax", "online", "naive"},
        Pair{"layer_norm", "one_pass", "two_pass"}, Pair{"cross_entropy", "fused", "composed"},
        Pair{"adam_update", "fused", "per_tensor"}, Pair{"sgd_update", "fused", "per_tensor"}}) {
    INFO(p.op);
    CHECK(entry(p.op, p.fused).tag == VariantTag::fused);
    CHECK(entry(p.op, p.unfused).tag == VariantTag::naive);
  }
  for (const char* op : {"layer_norm", "cross_entropy", "adam_update", "sgd_update"}) {
    CHECK(registry().at(op, Device::cpu).default_entry().tag == VariantTag::fused);
  }
}

}  // namespace
}  // namespace prism::kernels
