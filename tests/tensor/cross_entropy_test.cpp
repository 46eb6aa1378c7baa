// cross_entropy (tensor/ops/loss.cpp): both variants against a float64 reference, on odd shapes
// and strided logits and targets; gradients against finite differences; huge logits; the meta
// device; and clear errors for bad targets.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "profiler/session.h"
#include "tests/tensor/reference.h"
#include "tests/test_util.h"

namespace prism {
namespace {

using ref::Array;
using ref::Layout;
using ref::Shape;
using testing::contains;
using testing::error_of;

// mean (or sum) over rows of log(sum_j exp(x_ij)) - x_i,t_i, in long double.
double cross_entropy_ref(const Array& x, const std::vector<int64_t>& t, bool mean) {
  const int64_t n = x.shape[0], c = x.shape[1];
  long double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    long double m = -std::numeric_limits<long double>::infinity();
    for (int64_t j = 0; j < c; ++j) m = std::max<long double>(m, x[i * c + j]);
    long double s = 0;
    for (int64_t j = 0; j < c; ++j) s += std::exp(static_cast<long double>(x[i * c + j]) - m);
    total += m + std::log(s) - x[i * c + t[static_cast<size_t>(i)]];
  }
  return static_cast<double>(mean ? total / n : total);
}

std::vector<int64_t> random_targets(int64_t n, int64_t c, ref::Rng& rng) {
  std::vector<int64_t> t(static_cast<size_t>(n));
  for (int64_t& v : t) v = rng.integer(0, c);
  return t;
}

const char* kVariants[] = {"fused", "composed"};

TEST_CASE("cross_entropy matches the reference: variants, reductions, odd shapes, strides") {
  ref::Rng rng(23);
  const std::vector<Shape> shapes = {{1, 1}, {1, 7}, {7, 1}, {13, 10}, {3, 513}, {5, 1031}};
  for (const char* variant : kVariants) {
    kernels::Use use("cross_entropy", variant);
    for (DType dt : {DType::f32, DType::f64}) {
      for (const Shape& s : shapes) {
        for (Layout l : {Layout::contiguous, Layout::transposed, Layout::stepped}) {
          for (bool mean : {true, false}) {
            INFO((std::string(variant) + " " + dtype_name(dt) + " " + ref::shape_str(s) + " " +
                  ref::layout_name(l) + (mean ? " mean" : " sum")));
            ref::Input x = ref::make_input(s, l, dt, rng, -6, 6);
            std::vector<int64_t> t = random_targets(s[0], s[1], rng);
            // A strided target: every other entry of a longer vector.
            std::vector<int64_t> spread(2 * t.size());
            for (size_t i = 0; i < t.size(); ++i) spread[2 * i] = t[i], spread[2 * i + 1] = -1;
            Tensor target = from_vector(spread, {2 * s[0]}).slice(0, 0, 2 * s[0], 2);
            Tensor loss = cross_entropy(x.t, target, mean ? Reduction::mean : Reduction::sum);
            CHECK(loss.dim() == 0);
            CHECK(loss.dtype() == dt);
            const double expect = cross_entropy_ref(x.a, t, mean);
            const double tol = dt == DType::f32 ? 2e-6 : 1e-13;
            CHECK(loss.item() == doctest::Approx(expect).epsilon(tol).scale(1));
          }
        }
      }
    }
  }
}

TEST_CASE("cross_entropy gradients: finite differences and softmax - onehot") {
  ref::Rng rng(29);
  for (const char* variant : kVariants) {
    kernels::Use use("cross_entropy", variant);
    INFO(variant);
    for (const Shape& s : {Shape{1, 1}, Shape{4, 3}, Shape{3, 11}, Shape{2, 600}}) {
      INFO(ref::shape_str(s));
      Tensor x = ref::make_input(s, Layout::contiguous, DType::f64, rng, -3, 3).t;
      x.set_requires_grad();
      Tensor t = from_vector(random_targets(s[0], s[1], rng), {s[0]});
      CHECK_GRAD([t](const std::vector<Tensor>& in) { return cross_entropy(in[0], t); }, x);
      CHECK_GRAD(
          [t](const std::vector<Tensor>& in) {
            return cross_entropy(in[0].t().t(), t, Reduction::sum);
          },
          x);
    }
    // Transposed logits: the gradient comes back in the logits' shape.
    Tensor base = ref::make_input({6, 4}, Layout::contiguous, DType::f64, rng).t;
    base.set_requires_grad();
    Tensor t = from_vector(std::vector<int64_t>{5, 0, 2, 3}, {4});
    CHECK_GRAD([t](const std::vector<Tensor>& in) { return cross_entropy(in[0].t(), t); }, base);
  }
  // The closed form: (softmax(x) - onehot) * g / N.
  Tensor x = randn({5, 7}, DType::f64).set_requires_grad();
  Tensor t = from_vector(std::vector<int64_t>{6, 0, 3, 3, 1}, {5});
  (cross_entropy(x, t) * 3.0).backward();
  std::vector<double> p = softmax(x.detach(), 1).to_vector();
  std::vector<double> g = x.grad().to_vector();
  const std::vector<int64_t> tv = t.to_vector<int64_t>();
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < 7; ++j) {
      const double expect =
          3.0 / 5 * (p[static_cast<size_t>(i * 7 + j)] - (tv[static_cast<size_t>(i)] == j));
      CHECK(g[static_cast<size_t>(i * 7 + j)] == doctest::Approx(expect).epsilon(1e-12));
    }
  }
}

TEST_CASE("cross_entropy of huge logits stays finite and exact") {
  for (const char* variant : kVariants) {
    kernels::Use use("cross_entropy", variant);
    for (DType dt : {DType::f32, DType::f64}) {
      INFO((std::string(variant) + " " + dtype_name(dt)));
      Array x({2, 3}, {1000, 1001, 1002, -1000, 1000, 0});
      Tensor logits = ref::to_tensor(x, dt).set_requires_grad();
      Tensor t = from_vector(std::vector<int64_t>{2, 0}, {2});
      Tensor loss = cross_entropy(logits, t);
      // Row 0: log(e^-2 + e^-1 + 1); row 1: 2000 (the target is 2000 below the max).
      const double row0 = std::log(std::exp(-2.0) + std::exp(-1.0) + 1.0);
      CHECK(loss.item() == doctest::Approx((row0 + 2000) / 2).epsilon(1e-6));
      loss.backward();
      std::vector<double> g = logits.grad().to_vector();
      const double z = std::exp(-2.0) + std::exp(-1.0) + 1.0;
      CHECK(g[2] == doctest::Approx((1 / z - 1) / 2).epsilon(1e-5));
      CHECK(g[0] == doctest::Approx(std::exp(-2.0) / z / 2).epsilon(1e-5));
      CHECK(g[3] == doctest::Approx(-0.5).epsilon(1e-6));
      for (double v : g) CHECK(std::isfinite(v));
    }
  }
}

TEST_CASE("cross_entropy on the meta device: shapes and costs, no values read") {
  DefaultDevice meta(Device::meta);
  Tensor logits = randn({16, 100}).set_requires_grad();
  Tensor t = zeros({16}, DType::i64);
  profiler::Session session;
  Tensor loss = cross_entropy(logits, t);
  loss.backward();
  const profiler::Profile& p = session.stop();
  CHECK(loss.dim() == 0);
  CHECK(logits.grad().shape() == Dims{16, 100});
  int seen = 0;
  for (const auto& r : p.recording.records) {
    if (r.kind != profiler::Kind::op) continue;
    if (std::string(r.op) == "cross_entropy") {
      ++seen;
      CHECK(r.cost.flops == 4 * 1600 + 3 * 16 + 1);
      CHECK(r.allocs == 2);  // the loss and the saved lse: no [N, C] buffer
    }
    if (std::string(r.op) == "cross_entropy_backward") ++seen;
  }
  CHECK(seen == 2);
}

TEST_CASE("cross_entropy refuses bad targets with a clear error") {
  Tensor logits = zeros({3, 4});
  auto labels = [](std::vector<int64_t> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    return from_vector(v, {n});
  };
  CHECK(contains(error_of([&] {
                   cross_entropy(logits, labels({0, 4, 1}));
                 }),
                 "cross_entropy: label 4 at position 1 is out of range [0, 4)"));
  CHECK(contains(error_of([&] {
                   cross_entropy(logits, labels({0, 1, -1}));
                 }),
                 "cross_entropy: label -1 at position 2 is out of range [0, 4)"));
  CHECK(contains(error_of([&] { cross_entropy(logits, zeros({3})); }),
                 "cross_entropy: labels must be int64, got float32"));
  CHECK(contains(error_of([&] {
                   cross_entropy(logits, labels({0, 1}));
                 }),
                 "cross_entropy: labels must be [N] = [3] for input [3,4], got [2]"));
  CHECK(contains(error_of([&] {
                   cross_entropy(logits, zeros({3, 1}, DType::i64));
                 }),
                 "cross_entropy: labels must be [N] = [3] for input [3,4], got [3,1]"));
  CHECK(contains(error_of([&] { cross_entropy(zeros({12}), labels({0})); }),
                 "cross_entropy: input must be [N, C], got [12]"));
  CHECK(contains(error_of([&] {
                   cross_entropy(zeros({2, 3}, DType::i64), labels({0, 1}));
                 }),
                 "cross_entropy: input must be float32 or float64, got int64 [2,3]"));
  CHECK(contains(error_of([&] {
                   cross_entropy(zeros({0, 3}), zeros({0}, DType::i64));
                 }),
                 "cross_entropy: empty batch"));
  CHECK(contains(error_of([&] {
                   cross_entropy(zeros({2, 0}), labels({0, 0}));
                 }),
                 "cross_entropy: no classes"));
  CHECK(contains(error_of([&] { cross_entropy(logits, Tensor()); }),
                 "cross_entropy: labels must be int64, got undefined"));
}

}  // namespace
}  // namespace prism
