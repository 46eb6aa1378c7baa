// Factories: constants, ranges, data and seeded random numbers, in every dtype.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tensor/ops.h"
#include "tensor/random.h"
#include "tensor/tensor.h"
#include "tests/test_util.h"

using prism::testing::contains;
using prism::testing::error_of;

using prism::Dims;
using prism::DType;
using prism::Tensor;

namespace {

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double std_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size()));
}

}  // namespace

TEST_CASE("factories: zeros, ones, full in every dtype") {
  for (DType dt : {DType::f32, DType::f64, DType::i64}) {
    CAPTURE(prism::dtype_name(dt));
    Tensor z = prism::zeros({2, 3}, dt);
    CHECK(z.dtype() == dt);
    CHECK(z.shape() == Dims{2, 3});
    CHECK(z.is_contiguous());
    CHECK(z.to_vector() == std::vector<double>(6, 0.0));
    CHECK(prism::ones({4}, dt).to_vector() == std::vector<double>(4, 1.0));
    CHECK(prism::full({2, 2}, 7, dt).to_vector() == std::vector<double>(4, 7.0));
    CHECK(z.nbytes() == 6 * (dt == DType::f32 ? 4 : 8));
  }
  CHECK(prism::zeros({3}).dtype() == DType::f32);  // the default
  CHECK(prism::full({2}, 2.5, DType::f64).data<double>()[1] == 2.5);
  CHECK(prism::full({2}, -3, DType::i64).data<int64_t>()[0] == -3);
  CHECK(prism::full({1}, 0.1).data<float>()[0] == 0.1f);
  // A shape with a zero dim makes an empty tensor; [] makes a 0-d one.
  CHECK(prism::zeros({2, 0}).numel() == 0);
  CHECK(prism::ones({}).dim() == 0);
  CHECK(prism::ones({}).item() == 1);
}

TEST_CASE("factories: scalar, zeros_like, ones_like, empty") {
  Tensor s = prism::scalar(3.5);
  CHECK(s.dim() == 0);
  CHECK(s.numel() == 1);
  CHECK(s.item() == 3.5);
  CHECK(s.item<float>() == 3.5f);
  CHECK(prism::scalar(-2, DType::i64).item<int64_t>() == -2);
  CHECK(prism::scalar(0.25, DType::f64).dtype() == DType::f64);

  Tensor x = prism::full({2, 3}, 4, DType::f64);
  Tensor zl = prism::zeros_like(x.t());
  CHECK(zl.shape() == Dims{3, 2});
  CHECK(zl.dtype() == DType::f64);
  CHECK(zl.is_contiguous());
  CHECK(zl.to_vector() == std::vector<double>(6, 0.0));
  CHECK(prism::ones_like(x).to_vector() == std::vector<double>(6, 1.0));

  Tensor e = prism::empty({5, 2}, DType::i64);
  CHECK(e.shape() == Dims{5, 2});
  CHECK(e.dtype() == DType::i64);
  CHECK(e.storage()->nbytes() == 80);
}

TEST_CASE("factories: arange") {
  CHECK(prism::arange(5).to_vector() == std::vector<double>{0, 1, 2, 3, 4});
  CHECK(prism::arange(5).dtype() == DType::f32);
  CHECK(prism::arange(2, 5).to_vector() == std::vector<double>{2, 3, 4});

  // Fractional step: values are start + i * step, end excluded even when it is hit inexactly.
  Tensor f = prism::arange(0, 1, 0.25, DType::f64);
  CHECK(f.to_vector() == std::vector<double>{0, 0.25, 0.5, 0.75});
  Tensor tenth = prism::arange(0, 0.3, 0.1, DType::f64);  // 0.3 / 0.1 = 2.9999999999999996
  CHECK(tenth.numel() == 3);
  CHECK(tenth.at({2}) == doctest::Approx(0.2));
  CHECK(prism::arange(0, 1, 0.1).numel() == 10);
  CHECK(prism::arange(0.5, 2, 0.5).to_vector() == std::vector<double>{0.5, 1, 1.5});

  // Negative step counts down.
  CHECK(prism::arange(5, 0, -1).to_vector() == std::vector<double>{5, 4, 3, 2, 1});
  CHECK(prism::arange(1, -1, -0.5, DType::f64).to_vector() == std::vector<double>{1, 0.5, 0, -0.5});

  // Empty ranges.
  CHECK(prism::arange(0).numel() == 0);
  CHECK(prism::arange(0).shape() == Dims{0});
  CHECK(prism::arange(3, 3).numel() == 0);
  CHECK(prism::arange(5, 0, 1).numel() == 0);
  CHECK(prism::arange(0, 5, -1).numel() == 0);

  // Integer dtype.
  Tensor i = prism::arange(0, 10, 3, DType::i64);
  CHECK(i.dtype() == DType::i64);
  CHECK(i.data<int64_t>()[3] == 9);
  CHECK(i.numel() == 4);

  CHECK(contains(error_of([] { (void)prism::arange(0, 1, 0); }), "arange: step"));
}

TEST_CASE("factories: from_vector") {
  Tensor f = prism::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(f.dtype() == DType::f32);
  CHECK(f.shape() == Dims{2, 3});
  CHECK(f.at({1, 0}) == 4);
  CHECK(f.data<float>()[5] == 6);

  Tensor d = prism::from_vector(std::vector<double>{0.1, 0.2}, {2});
  CHECK(d.dtype() == DType::f64);
  CHECK(d.data<double>()[0] == 0.1);

  Tensor i = prism::from_vector(std::vector<int64_t>{7, -8, 9}, {3, 1});
  CHECK(i.dtype() == DType::i64);
  CHECK(i.at({1, 0}) == -8);
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{7, -8, 9});

  Tensor s = prism::from_vector(std::vector<float>{42}, {});
  CHECK(s.dim() == 0);
  CHECK(s.item() == 42);

  std::string msg = error_of([] { (void)prism::from_vector(std::vector<float>{1, 2, 3}, {2, 2}); });
  CHECK(contains(msg, "from_vector"));
  CHECK(contains(msg, "[2,2]"));
  CHECK(contains(msg, "3 values"));
  CHECK_THROWS_AS((void)prism::from_vector(std::vector<int64_t>{}, {1}), prism::Error);
}

TEST_CASE("factories: negative sizes are errors") {
  CHECK(contains(error_of([] { (void)prism::zeros({2, -1}); }), "zeros: negative size"));
  CHECK(contains(error_of([] { (void)prism::ones({-3}); }), "[-3]"));
  CHECK_THROWS_AS((void)prism::empty({-1}), prism::Error);
  CHECK_THROWS_AS((void)prism::full({-1}, 2), prism::Error);
  CHECK_THROWS_AS((void)prism::rand({-1}), prism::Error);
  CHECK_THROWS_AS((void)prism::randn({4, -2}), prism::Error);
}

TEST_CASE("factories: manual_seed makes rand and randn repeatable") {
  prism::manual_seed(42);
  Tensor a = prism::randn({100});
  Tensor ua = prism::rand({50}, DType::f64);
  prism::manual_seed(42);
  Tensor b = prism::randn({100});
  Tensor ub = prism::rand({50}, DType::f64);
  CHECK(a.to_vector() == b.to_vector());
  CHECK(ua.to_vector() == ub.to_vector());

  prism::manual_seed(43);
  Tensor c = prism::randn({100});
  CHECK(a.to_vector() != c.to_vector());
  int same = 0;
  for (int64_t i = 0; i < 100; ++i) same += a.at({i}) == c.at({i});
  CHECK(same == 0);

  // Successive calls continue the stream rather than repeating it.
  prism::manual_seed(42);
  Tensor first = prism::randn({100});
  Tensor second = prism::randn({100});
  CHECK(first.to_vector() == a.to_vector());
  CHECK(second.to_vector() != first.to_vector());

  // Seeding resets the whole state, including a normal kept back by Box-Muller.
  prism::manual_seed(7);
  Tensor fresh = prism::randn({4});
  prism::manual_seed(7);
  (void)prism::randn({3});  // odd count: one normal left over
  prism::manual_seed(7);
  Tensor again = prism::randn({4});
  CHECK(again.to_vector() == fresh.to_vector());

  // Same seed, different dtype: the same numbers, rounded.
  prism::manual_seed(9);
  Tensor f32 = prism::randn({8}, DType::f32);
  prism::manual_seed(9);
  Tensor f64 = prism::randn({8}, DType::f64);
  for (int64_t i = 0; i < 8; ++i) CHECK(f32.at({i}) == static_cast<float>(f64.at({i})));
}

TEST_CASE("factories: randn has mean 0 and std 1") {
  prism::manual_seed(1234);
  Tensor x = prism::randn({100000});
  CHECK(x.dtype() == DType::f32);
  std::vector<double> v = x.to_vector();
  // Standard error of the mean is 1/sqrt(1e5) ~ 0.003; of the std ~ 0.0022.
  CHECK(std::fabs(mean_of(v)) < 0.02);
  CHECK(std::fabs(std_of(v) - 1) < 0.02);
  // About 68.3% within one std, 95.4% within two.
  int64_t in1 = 0, in2 = 0;
  for (double e : v) {
    in1 += std::fabs(e) < 1;
    in2 += std::fabs(e) < 2;
  }
  CHECK(static_cast<double>(in1) / 1e5 == doctest::Approx(0.6827).epsilon(0.02));
  CHECK(static_cast<double>(in2) / 1e5 == doctest::Approx(0.9545).epsilon(0.01));

  Tensor y = prism::randn({100000}, DType::f64, 5, 2);
  std::vector<double> w = y.to_vector();
  CHECK(std::fabs(mean_of(w) - 5) < 0.04);
  CHECK(std::fabs(std_of(w) - 2) < 0.04);
}

TEST_CASE("factories: rand is uniform between low (included) and high (excluded)") {
  prism::manual_seed(5);
  Tensor x = prism::rand({100000}, DType::f32, -2, 3);
  std::vector<double> v = x.to_vector();
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  CHECK(*lo >= -2);
  CHECK(*hi < 3);
  CHECK(*lo < -1.99);
  CHECK(*hi > 2.99);
  CHECK(std::fabs(mean_of(v) - 0.5) < 0.03);
  // Var of U(a,b) = (b-a)^2/12: std = 5/sqrt(12) ~ 1.443.
  CHECK(std::fabs(std_of(v) - 5 / std::sqrt(12.0)) < 0.02);
  // Each fifth of the range gets about a fifth of the samples.
  int64_t bins[5] = {};
  for (double e : v) ++bins[std::min<int>(4, static_cast<int>(e + 2))];
  for (int64_t b : bins) CHECK(std::fabs(static_cast<double>(b) / 1e5 - 0.2) < 0.01);

  Tensor d = prism::rand({1000}, DType::f64);
  for (double e : d.to_vector()) {
    CHECK(e >= 0);
    CHECK(e < 1);
  }
}

TEST_CASE("factories: float32 rand never rounds up to high") {
  // With this seed, the 259th uniform draw is 0.99999997918..., which rounds to 1.0f: rand must
  // still keep every value below `high`.
  prism::manual_seed(24547);
  Tensor x = prism::rand({1000});
  double mx = 0;
  for (double e : x.to_vector()) mx = std::max(mx, e);
  CHECK(mx < 1.0);
  CHECK(mx > 0.9999);
  prism::manual_seed(24547);
  Tensor y = prism::rand({1000}, DType::f64);
  CHECK(y.at({258}) > 0.99999997);
  CHECK(y.at({258}) < 1.0);
}

TEST_CASE("factories: random errors") {
  CHECK(contains(error_of([] { (void)prism::rand({2}, DType::i64); }), "rand: needs a float"));
  CHECK(contains(error_of([] { (void)prism::randn({2}, DType::i64); }), "randn: needs a float"));
  CHECK(contains(error_of([] { (void)prism::rand({2}, DType::f32, 1, 1); }), "rand: low"));
  CHECK(contains(error_of([] { (void)prism::randn({2}, DType::f32, 0, -1); }), "randn: std"));
}

TEST_CASE("factories: new tensors are leaves that do not require grad") {
  Tensor x = prism::randn({3});
  CHECK(x.is_leaf());
  CHECK_FALSE(x.requires_grad());
  CHECK_FALSE(x.grad().defined());
  CHECK(x.offset() == 0);
  CHECK(x.device() == prism::Device::cpu);
}
