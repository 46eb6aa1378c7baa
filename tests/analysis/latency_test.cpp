// Percentiles and their intervals on samples whose answers are known.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "analysis/latency.h"
#include "analysis/op_class.h"
#include "profiler/statistics.h"

using namespace prism::analysis;
namespace st = prism::profiler::stats;

TEST_CASE("latency_stats: type-7 percentiles of 1..100") {
  std::vector<double> x;
  for (int i = 100; i >= 1; --i) x.push_back(i);  // order must not matter
  const LatencyStats s = latency_stats(x);
  CHECK(s.n == 100);
  CHECK(s.min == 1);
  CHECK(s.max == 100);
  CHECK(s.mean == doctest::Approx(50.5));
  CHECK(s.p50 == doctest::Approx(50.5));   // h = 49.5
  CHECK(s.p90 == doctest::Approx(90.1));   // h = 89.1
  CHECK(s.p95 == doctest::Approx(95.05));  // h = 94.05
  CHECK(s.p99 == doctest::Approx(99.01));  // h = 98.01
  CHECK(s.p50_ci.low <= s.p50);
  CHECK(s.p50_ci.high >= s.p50);
  CHECK(s.p99_ci.low <= s.p99);
  CHECK(s.p99_ci.high <= 100);
}

TEST_CASE("latency_stats: a constant sample has zero-width intervals, and bad input throws") {
  const LatencyStats s = latency_stats(std::vector<double>(20, 7.0));
  CHECK(s.p99 == 7);
  CHECK(s.p99_ci.low == 7);
  CHECK(s.p99_ci.high == 7);
  CHECK_THROWS_AS(latency_stats({}), std::invalid_argument);
}

TEST_CASE("bootstrap quantile intervals: cover the truth, ratio of equal samples spans 1") {
  std::vector<double> a, b;
  for (int i = 0; i < 400; ++i) {
    a.push_back(100 + (i * 37) % 50);
    b.push_back(2 * (100 + (i * 53) % 50));
  }
  const st::Interval q = st::bootstrap_quantile_ci(a, 0.9);
  CHECK(q.low <= st::quantile(a, 0.9));
  CHECK(q.high >= st::quantile(a, 0.9));
  const st::Interval r = st::bootstrap_quantile_ratio_ci(b, a, 0.99);
  CHECK(r.low <= 2.0);
  CHECK(r.high >= 1.9);
  const st::Interval same = st::bootstrap_quantile_ratio_ci(a, a, 0.5);
  CHECK(same.low <= 1.0);
  CHECK(same.high >= 1.0);
  CHECK_THROWS_AS(st::bootstrap_quantile_ci(a, 1.5), std::invalid_argument);
  CHECK_THROWS_AS(st::bootstrap_quantile_ratio_ci(a, {0.0}, 0.5), std::invalid_argument);
}

TEST_CASE("op classes: by name, and the optimizer phase wins") {
  using prism::profiler::Phase;
  CHECK(classify_op("matmul", Phase::forward) == OpClass::matmul);
  CHECK(classify_op("linear_gelu", Phase::forward) == OpClass::matmul);
  CHECK(classify_op("matmul_bf16", Phase::backward) == OpClass::matmul);
  CHECK(classify_op("im2col", Phase::forward) == OpClass::conv);
  CHECK(classify_op("conv2d_backward_weight", Phase::backward) == OpClass::conv);
  CHECK(classify_op("rms_norm", Phase::forward) == OpClass::normalisation);
  CHECK(classify_op("rms_norm_backward", Phase::backward) == OpClass::normalisation);
  CHECK(classify_op("swiglu", Phase::forward) == OpClass::elementwise);  // an activation
  CHECK(classify_op("attention_backward", Phase::backward) == OpClass::attention);
  CHECK(classify_op("layer_norm", Phase::forward) == OpClass::normalisation);
  CHECK(classify_op("cross_entropy", Phase::forward) == OpClass::normalisation);
  CHECK(classify_op("max_pool2d_backward", Phase::backward) == OpClass::pooling);
  CHECK(classify_op("relu", Phase::forward) == OpClass::elementwise);
  CHECK(classify_op("linear", Phase::backward) == OpClass::matmul);
  CHECK(classify_op("to_cuda", Phase::forward) == OpClass::data);
  CHECK(classify_op("mul", Phase::optimizer) == OpClass::optimizer);
  CHECK(classify_op("adam_update", Phase::optimizer) == OpClass::optimizer);
  CHECK(std::string(op_class_name(OpClass::normalisation)) == "normalisation");
}
