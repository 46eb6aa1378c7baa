// The curve fits of analysis/fit.h on synthetic data with known answers: exact power laws (the
// exponent recovered to rounding), noisy ones (the interval covers the truth about as often as
// it claims), knees, predictions, Amdahl's law, and every kind of bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/fit.h"
#include "kernels/types.h"
#include "tests/test_util.h"

using namespace prism;
using namespace prism::analysis;
using prism::testing::contains;
using prism::testing::error_of;

namespace {

// Deterministic standard normal draws (splitmix64 + Box-Muller), so a noisy test gives the same
// numbers on every run.
struct Normal {
  uint64_t state;
  double uniform() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (static_cast<double>(z >> 11) + 0.5) / 9007199254740992.0;
  }
  double operator()() {
    return std::sqrt(-2 * std::log(uniform())) * std::cos(6.283185307179586 * uniform());
  }
};

std::vector<double> powers_of_two(int count) {
  std::vector<double> xs;
  for (int i = 0; i < count; ++i) xs.push_back(std::ldexp(1.0, i));
  return xs;
}

}  // namespace

TEST_CASE("fit: Student's t critical values match the tables") {
  CHECK(student_t_critical(0.95, 1) == doctest::Approx(12.706204736).epsilon(1e-9));
  CHECK(student_t_critical(0.95, 2) == doctest::Approx(4.302652730).epsilon(1e-9));
  CHECK(student_t_critical(0.95, 5) == doctest::Approx(2.570581836).epsilon(1e-9));
  CHECK(student_t_critical(0.95, 10) == doctest::Approx(2.228138852).epsilon(1e-9));
  CHECK(student_t_critical(0.99, 7) == doctest::Approx(3.499483297).epsilon(1e-9));
  CHECK(student_t_critical(0.95, 100000) == doctest::Approx(1.959983).epsilon(1e-5));
  CHECK(contains(error_of([] { student_t_critical(0.95, 0); }), "degree of freedom"));
  CHECK(contains(error_of([] { student_t_critical(1.5, 3); }), "confidence"));
}

TEST_CASE("fit: an exact power law gives back its exponent to 1e-9") {
  const std::vector<double> xs = powers_of_two(9);  // 1 .. 256
  for (const double k : {-1.0, 0.0, 0.37, 1.0, 2.0, 2.71}) {
    std::vector<double> ys;
    for (double x : xs) ys.push_back(3.5e4 * std::pow(x, k));
    const PowerLawFit f = fit_power_law(xs, ys);
    CHECK(std::fabs(f.k - k) < 1e-9);
    CHECK(std::fabs(f.c / 3.5e4 - 1) < 1e-9);
    CHECK(f.r2 == doctest::Approx(1).epsilon(1e-12));
    CHECK(f.n == 9);
    CHECK(f.has_interval);
    CHECK(f.k_ci_high - f.k_ci_low < 1e-9);
    // A prediction on the line, outside the range: the law's own value.
    const Prediction p = predict(f, 1024);
    CHECK(p.value == doctest::Approx(3.5e4 * std::pow(1024, k)).epsilon(1e-9));
    CHECK_FALSE(p.interpolation);
    CHECK(predict(f, 48).interpolation);
  }
  // Sizes in any order, not powers of two.
  const std::vector<double> xs2{7, 3, 100, 11};
  std::vector<double> ys2;
  for (double x : xs2) ys2.push_back(0.25 * std::pow(x, 1.5));
  CHECK(std::fabs(fit_power_law(xs2, ys2).k - 1.5) < 1e-9);
}

TEST_CASE("fit: two points fix the line exactly but give no interval") {
  const PowerLawFit f = fit_power_law({2, 8}, {10, 40});
  CHECK(f.k == doctest::Approx(1).epsilon(1e-12));
  CHECK(f.c == doctest::Approx(5).epsilon(1e-12));
  CHECK_FALSE(f.has_interval);
  CHECK(f.k_ci_low == f.k);
  CHECK(f.k_ci_high == f.k);
  CHECK(f.df == 0);
  const Prediction p = predict(f, 32);
  CHECK(p.value == doctest::Approx(160).epsilon(1e-12));
  CHECK_FALSE(p.has_interval);
  CHECK(p.low == p.value);
}

TEST_CASE(
    "fit: on noisy power laws the 95% interval covers the true exponent about 95% of the time") {
  Normal normal{12345};
  const std::vector<double> xs = powers_of_two(8);
  const double true_k = 1.3, true_c = 2e5, sigma = 0.08;  // 8% log-normal scatter
  const int trials = 2000;
  int covered = 0, predicted = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> ys;
    for (double x : xs) ys.push_back(true_c * std::pow(x, true_k) * std::exp(sigma * normal()));
    const PowerLawFit f = fit_power_law(xs, ys);
    REQUIRE(f.has_interval);
    if (f.k_ci_low <= true_k && true_k <= f.k_ci_high) ++covered;
    // A new measurement at 512 falls in the prediction interval just as often.
    const Prediction p = predict(f, 512);
    const double fresh = true_c * std::pow(512, true_k) * std::exp(sigma * normal());
    if (p.low <= fresh && fresh <= p.high) ++predicted;
  }
  const double coverage = static_cast<double>(covered) / trials;
  const double pred_coverage = static_cast<double>(predicted) / trials;
  // Binomial(2000, 0.95) has a standard deviation of 0.5%: 93..97% is four of them.
  CHECK(coverage > 0.93);
  CHECK(coverage < 0.97);
  CHECK(pred_coverage > 0.93);
  CHECK(pred_coverage < 0.97);

  // One noisy fit: an interval of honest width around the truth, R^2 below 1.
  std::vector<double> ys;
  for (double x : xs) ys.push_back(true_c * std::pow(x, true_k) * std::exp(sigma * normal()));
  const PowerLawFit f = fit_power_law(xs, ys);
  CHECK(f.r2 < 1);
  CHECK(f.r2 > 0.98);
  CHECK(f.k_ci_high - f.k_ci_low > 0.01);
  CHECK(f.k_ci_high - f.k_ci_low < 0.3);
}

TEST_CASE("fit: degenerate input is a clear error") {
  CHECK(contains(error_of([] { fit_power_law({}, {}); }), "at least 2 points"));
  CHECK(
      contains(error_of([] { fit_power_law({4}, {1}); }), "at least 2 points (3 for an interval)"));
  CHECK(contains(error_of([] { fit_power_law({1, 2}, {1}); }), "2 sizes but 1 values"));
  CHECK(contains(error_of([] { fit_power_law({0, 2}, {1, 2}); }), "sizes > 0"));
  CHECK(contains(error_of([] { fit_power_law({-1, 2}, {1, 2}); }), "sizes > 0"));
  CHECK(contains(error_of([] { fit_power_law({1, 2}, {1, 0}); }), "values > 0"));
  CHECK(contains(error_of([] { fit_power_law({1, 2}, {1, -3}); }), "values > 0"));
  CHECK(contains(error_of([] { fit_power_law({1, 2}, {1, NAN}); }), "values > 0"));
  CHECK(contains(error_of([] { fit_power_law({1, 2}, {1, INFINITY}); }), "values > 0"));
  CHECK(contains(error_of([] {
                   fit_power_law({8, 8, 8}, {1, 2, 3});
                 }),
                 "every size is 8: a slope needs at least two different sizes"));
  CHECK(contains(error_of([] { find_knee({8, 8, 8, 8}, {1, 2, 3, 4}); }), "every size is 8"));
  CHECK(contains(error_of([] { predict(fit_power_law({1, 2}, {1, 2}), 0); }), "size > 0"));
  // A constant value is a fit, not an error: k = 0 exactly.
  const PowerLawFit flat = fit_power_law({1, 2, 4}, {5, 5, 5});
  CHECK(flat.k == 0);
  CHECK(flat.r2 == 1);
}

TEST_CASE("fit: a knee is found where the slope changes, and only there") {
  // Flat-ish (x^0.2) up to 16, then linear: continuous at 16.
  const std::vector<double> xs = powers_of_two(9);
  std::vector<double> ys;
  for (double x : xs)
    ys.push_back(x <= 16 ? 100 * std::pow(x, 0.2) : 100 * std::pow(16, 0.2) * x / 16);
  auto knee = find_knee(xs, ys);
  REQUIRE(knee);
  CHECK(knee->kept);
  CHECK(knee->x_break == 16);
  CHECK(knee->k_left == doctest::Approx(0.2).epsilon(1e-9));
  CHECK(knee->k_right == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(knee->sse_two < 1e-20);
  // The prediction past the break follows the right-hand slope.
  CHECK(predict(*knee, 1024).value == doctest::Approx(ys.back() * 4).epsilon(1e-9));

  // The same with 3% noise: still kept, the break in the right place.
  Normal normal{7};
  std::vector<double> noisy;
  for (double y : ys) noisy.push_back(y * std::exp(0.03 * normal()));
  knee = find_knee(xs, noisy);
  REQUIRE(knee);
  CHECK(knee->kept);
  CHECK(knee->x_break >= 8);
  CHECK(knee->x_break <= 32);
  CHECK(knee->k_right_ci_low < 1.0);
  CHECK(knee->k_right_ci_high > 1.0);

  // A straight power law with noise: the best hinge is not kept.
  std::vector<double> straight;
  for (double x : xs) straight.push_back(50 * std::pow(x, 0.9) * std::exp(0.03 * normal()));
  knee = find_knee(xs, straight);
  REQUIRE(knee);
  CHECK_FALSE(knee->kept);
  // An exact one: nothing to improve.
  std::vector<double> exact;
  for (double x : xs) exact.push_back(50 * std::pow(x, 0.9));
  knee = find_knee(xs, exact);
  REQUIRE(knee);
  CHECK_FALSE(knee->kept);
  // Three points: too few to test a bend.
  CHECK_FALSE(find_knee({1, 2, 4}, {1, 2, 8}));
}

TEST_CASE("fit: Amdahl's serial fraction from thread counts") {
  const double t1 = 10, s = 0.2;
  auto time_at = [&](double p) { return t1 * (s + (1 - s) / p); };
  // With p = 1 measured.
  AmdahlFit f = fit_amdahl({1, 2, 4, 8}, {time_at(1), time_at(2), time_at(4), time_at(8)});
  CHECK(f.serial_fraction == doctest::Approx(s).epsilon(1e-12));
  CHECK(f.t1 == t1);
  CHECK(f.t1_measured);
  CHECK_FALSE(f.exact);
  CHECK(f.rms_relative_error < 1e-12);
  CHECK(amdahl_time(f, 16) == doctest::Approx(time_at(16)).epsilon(1e-12));
  // Two points: solved exactly; a perfect doubling has s = 0, no gain s = 1.
  f = fit_amdahl({1, 2}, {10, 6});
  CHECK(f.exact);
  CHECK(f.serial_fraction == doctest::Approx(0.2).epsilon(1e-12));
  CHECK(fit_amdahl({1, 2}, {10, 5}).serial_fraction == doctest::Approx(0).epsilon(1e-12));
  CHECK(fit_amdahl({1, 2}, {10, 10}).serial_fraction == doctest::Approx(1).epsilon(1e-12));
  CHECK(fit_amdahl({1, 2}, {10, 4}).serial_fraction < 0);  // super-linear
  // Without p = 1: T1 and s together.
  f = fit_amdahl({2, 4, 8}, {time_at(2), time_at(4), time_at(8)});
  CHECK_FALSE(f.t1_measured);
  CHECK(f.t1 == doctest::Approx(t1).epsilon(1e-12));
  CHECK(f.serial_fraction == doctest::Approx(s).epsilon(1e-12));
  // Bad input.
  CHECK(contains(error_of([] { fit_amdahl({1}, {1}); }), "at least 2 thread counts"));
  CHECK(contains(error_of([] { fit_amdahl({2, 2}, {1, 1}); }), "two different counts"));
  CHECK(contains(error_of([] { fit_amdahl({0.5, 2}, {1, 1}); }), "needs 1 or more"));
  CHECK(contains(error_of([] { fit_amdahl({1, 2}, {1, 0}); }), "time > 0"));
  CHECK(contains(error_of([] { fit_amdahl({1, 2}, {1}); }), "2 thread counts but 1 times"));
}
