// Statistics for comparing timings: every expected value below is worked out by hand in the
// comment beside it.
#include "profiler/statistics.h"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace stats = prism::profiler::stats;
using Samples = std::vector<double>;

namespace {

// The message of the std::invalid_argument that f throws, or "(no error)".
template <class F>
std::string invalid_argument_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Reproducible, roughly normal samples with mean 100 and sd 10/sqrt(12) = 2.9: the sum of 12
// uniforms on [-0.5, 0.5) (variance 1) from a small LCG (Knuth's MMIX constants), scaled.
Samples noisy_samples(size_t n, uint64_t seed) {
  uint64_t s = seed;
  auto uniform = [&s] {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(s >> 11) * 0x1.0p-53 - 0.5;
  };
  Samples out(n);
  for (double& x : out) {
    double sum = 0;
    for (int k = 0; k < 12; ++k) sum += uniform();
    x = 100 + 10 * sum / std::sqrt(12.0);
  }
  return out;
}

}  // namespace

TEST_CASE("median of odd, even and single-sample sets") {
  CHECK(stats::median({3, 1, 2}) == 2);
  CHECK(stats::median({4, 1, 3, 2}) == 2.5);  // (2 + 3) / 2
  CHECK(stats::median({5}) == 5);
  CHECK(stats::median({7, 7, 1, 9, 7, 2}) == 7);  // sorted 1 2 7 7 7 9: (7 + 7) / 2
  // The caller's vector is taken by value: unchanged.
  const Samples v{9, 8, 7};
  CHECK(stats::median(v) == 8);
  CHECK(v == Samples{9, 8, 7});
}

TEST_CASE("quantile is linear interpolation between order statistics (type 7)") {
  const Samples x{5, 1, 4, 2, 3};  // sorted 1 2 3 4 5, h = 4q
  CHECK(stats::quantile(x, 0) == 1);
  CHECK(stats::quantile(x, 1) == 5);
  CHECK(stats::quantile(x, 0.5) == 3);
  CHECK(stats::quantile(x, 0.25) == 2);                    // h = 1
  CHECK(stats::quantile(x, 0.1) == doctest::Approx(1.4));  // h = 0.4: 1 + 0.4 (2 - 1)
  const Samples y{10, 20, 30, 40};                         // h = 3q
  CHECK(stats::quantile(y, 0.5) == 25);                    // h = 1.5
  CHECK(stats::quantile(y, 0.9) == doctest::Approx(37));   // h = 2.7: 30 + 0.7 * 10
  CHECK(stats::quantile({42}, 0.3) == 42);
}

TEST_CASE("MAD and its normal-consistent scale") {
  // median 2; |x - 2| = 1 1 0 0 2 4 7, sorted 0 0 1 1 2 4 7: median 1.
  const Samples x{1, 1, 2, 2, 4, 6, 9};
  CHECK(stats::mad(x) == 1);
  CHECK(stats::mad_sigma(x) == doctest::Approx(1.4826));
  // median 2.5; |x - 2.5| = 1.5 0.5 0.5 1.5: median (0.5 + 1.5) / 2 = 1.
  CHECK(stats::mad({1, 2, 3, 4}) == 1);
  CHECK(stats::mad({3, 3, 3}) == 0);
  // One wild outlier moves the MAD not at all: the point of using it for timings.
  CHECK(stats::mad({1, 1, 2, 2, 4, 6, 9000}) == 1);
}

TEST_CASE("mean and sample standard deviation") {
  // mean 5; squared deviations 9 1 1 1 0 0 4 16 sum to 32; sd = sqrt(32 / 7).
  const Samples x{2, 4, 4, 4, 5, 5, 7, 9};
  CHECK(stats::mean(x) == 5);
  CHECK(stats::stddev(x) == doctest::Approx(std::sqrt(32.0 / 7)));
  CHECK(stats::stddev({3.5}) == 0);
}

TEST_CASE("bootstrap median interval contains the median and shrinks with more samples") {
  const Samples small = noisy_samples(10, 1);
  const Samples large = noisy_samples(1000, 1);
  const stats::Interval ci_small = stats::bootstrap_median_ci(small);
  const stats::Interval ci_large = stats::bootstrap_median_ci(large);
  CHECK(ci_small.low <= stats::median(small));
  CHECK(stats::median(small) <= ci_small.high);
  CHECK(ci_large.low <= stats::median(large));
  CHECK(stats::median(large) <= ci_large.high);
  CHECK(ci_large.low < ci_large.high);
  // The standard error of a median falls as 1/sqrt(n): 100 times the samples, about a tenth of
  // the width. Ask for less than a third to leave room for the luck of one data set.
  CHECK(ci_large.high - ci_large.low < (ci_small.high - ci_small.low) / 3);
  // A wider confidence gives a wider (never narrower) interval from the same resamples.
  const stats::Interval ci_99 = stats::bootstrap_median_ci(small, 0.99);
  CHECK(ci_99.low <= ci_small.low);
  CHECK(ci_99.high >= ci_small.high);
  // Identical samples: every resample has the same median.
  const stats::Interval flat = stats::bootstrap_median_ci({4, 4, 4, 4});
  CHECK(flat.low == 4);
  CHECK(flat.high == 4);
}

TEST_CASE("bootstrap is deterministic given the seed") {
  const Samples x = noisy_samples(15, 7);
  const stats::Interval a = stats::bootstrap_median_ci(x, 0.95, 500, 123);
  const stats::Interval b = stats::bootstrap_median_ci(x, 0.95, 500, 123);
  const stats::Interval c = stats::bootstrap_median_ci(x, 0.95, 500, 124);
  CHECK(a.low == b.low);
  CHECK(a.high == b.high);
  CHECK((a.low != c.low || a.high != c.high));  // another seed, other resamples
  const Samples y = noisy_samples(15, 8);
  const stats::Interval r1 = stats::bootstrap_ratio_ci(x, y, 0.9, 300, 5);
  const stats::Interval r2 = stats::bootstrap_ratio_ci(x, y, 0.9, 300, 5);
  CHECK(r1.low == r2.low);
  CHECK(r1.high == r2.high);
}

TEST_CASE("bootstrap ratio interval brackets the ratio of medians") {
  // b is twice as fast as a: times halved, plus its own noise.
  const Samples a = noisy_samples(30, 3);
  Samples b = noisy_samples(30, 4);
  for (double& t : b) t /= 2;
  const double ratio = stats::median(a) / stats::median(b);
  const stats::Interval ci = stats::bootstrap_ratio_ci(a, b);
  CHECK(ci.low <= ratio);
  CHECK(ratio <= ci.high);
  CHECK(ci.low > 1.8);  // sd 2.9% per sample: the speed-up of 2 is pinned down to a few %
  CHECK(ci.high < 2.2);
  // Exact multiples with no spread give the ratio itself.
  const stats::Interval exact = stats::bootstrap_ratio_ci({6, 6, 6}, {2, 2});
  CHECK(exact.low == 3);
  CHECK(exact.high == 3);
}

TEST_CASE("Mann-Whitney U without ties, exact and normal p-values") {
  // a: 1.1 2.3 3.0 4.2; b: 2.5 3.7 5.1 6.0 7.4. Pairs with a_i > b_j: 3.0 > 2.5, 4.2 > 2.5,
  // 4.2 > 3.7, so U_a = 3 (and U_b = 4 * 5 - 3 = 17).
  // Exact: the 126 = C(9, 4) orderings are equally likely under H0; U = u for as many of them
  // as there are partitions of u into at most 4 parts of at most 5: u = 0, 1, 2, 3 have 1, 1,
  // 2, 3. P(U <= 3) = 7/126, two-sided 14/126.
  // Normal: mean 10, variance 4 * 5 * 10 / 12 = 50/3, z = (3 - 10 + 0.5) / sqrt(50/3).
  const Samples a{1.1, 2.3, 3.0, 4.2}, b{2.5, 3.7, 5.1, 6.0, 7.4};
  const stats::MannWhitney r = stats::mann_whitney_u(a, b);
  CHECK(r.u == 3);
  CHECK(r.exact);
  CHECK(r.p_a_less == doctest::Approx(7.0 / 126));
  CHECK(r.p_two_sided == doctest::Approx(14.0 / 126));
  CHECK(r.z == doctest::Approx(-6.5 / std::sqrt(50.0 / 3)));
  // Swapping the samples mirrors U and the one-sided question.
  const stats::MannWhitney s = stats::mann_whitney_u(b, a);
  CHECK(s.u == 17);
  CHECK(s.p_two_sided == doctest::Approx(r.p_two_sided));
  CHECK(s.p_a_less == doctest::Approx(1 - 4.0 / 126));  // 1 - P(U_b >= 18) = 1 - P(U_a <= 2)
  CHECK(s.z == doctest::Approx(-r.z));
}

TEST_CASE("Mann-Whitney U with ties uses mid-ranks and the tie-corrected variance") {
  // Pooled and sorted: 1a 2a 2a 2b 3a 3b 4b 4b. Mid-ranks: 1 -> 1, the three 2s -> 3, the two
  // 3s -> 5.5, the two 4s -> 7.5. R_a = 1 + 3 + 3 + 5.5 = 12.5, U_a = 12.5 - 4 * 5 / 2 = 2.5
  // (by pairs: 2 vs 2 ties twice, 3 beats 2 and ties 3: 0.5 + 0.5 + 1.5).
  // Tie groups t = 3, 2, 2: sum (t^3 - t) = 24 + 6 + 6 = 36; n = 8;
  // variance = 16/12 * (9 - 36/56) = 78/7; mean 8.
  const Samples a{1, 2, 2, 3}, b{2, 3, 4, 4};
  const stats::MannWhitney r = stats::mann_whitney_u(a, b);
  const double sigma = std::sqrt(78.0 / 7);
  CHECK(r.u == 2.5);
  CHECK_FALSE(r.exact);
  CHECK(r.z == doctest::Approx(-(5.5 - 0.5) / sigma));
  CHECK(r.p_two_sided == doctest::Approx(std::erfc(5.0 / sigma / std::sqrt(2.0))));
  CHECK(r.p_a_less == doctest::Approx(0.5 * std::erfc(5.0 / sigma / std::sqrt(2.0))));
  CHECK(r.p_a_less == doctest::Approx(0.0671).epsilon(0.01));  // Phi(-1.498)
  // All values equal: no evidence at all.
  const stats::MannWhitney flat = stats::mann_whitney_u({5, 5}, {5, 5, 5});
  CHECK(flat.u == 3);
  CHECK(flat.z == 0);
  CHECK(flat.p_two_sided == 1);
}

TEST_CASE("Mann-Whitney exact and normal p-values agree for larger samples") {
  // 40 values each, interleaved with a shift: the normal approximation is good here, so the
  // exact p and the one implied by z must be close.
  Samples a, b;
  for (int i = 0; i < 40; ++i) {
    a.push_back(i + 0.3);
    b.push_back(i + 6.7);
  }
  const stats::MannWhitney r = stats::mann_whitney_u(a, b);
  REQUIRE(r.exact);
  CHECK(r.u < 40 * 40 / 2);
  CHECK(r.p_two_sided == doctest::Approx(std::erfc(std::abs(r.z) / std::sqrt(2.0))).epsilon(0.05));
  CHECK(r.p_a_less < 0.5);
  // Clearly separated samples: a is faster, with overwhelming evidence.
  const stats::MannWhitney sep =
      stats::mann_whitney_u({1, 2, 3, 4, 5, 6}, {10, 11, 12, 13, 14, 15});
  CHECK(sep.u == 0);
  CHECK(sep.p_a_less == doctest::Approx(1.0 / 924));  // 1 / C(12, 6)
  CHECK(sep.p_two_sided == doctest::Approx(2.0 / 924));
}

TEST_CASE("summarize fills every field and flags unstable samples") {
  const Samples steady{10, 10.01, 9.99, 10, 10.02, 9.98, 10, 10.01, 9.99};
  const stats::Summary s = stats::summarize(steady);
  CHECK(s.n == 9);
  CHECK(s.median == 10);
  CHECK(s.min == 9.98);
  CHECK(s.max == 10.02);
  CHECK(s.mad == doctest::Approx(0.01));  // |x - 10|: 0 .01 .01 0 .02 .02 0 .01 .01
  CHECK(s.ci_low <= 10);
  CHECK(s.ci_high >= 10);
  CHECK(s.err_pct == doctest::Approx(50 * (s.ci_high - s.ci_low) / 10));
  CHECK(s.err_pct < 1);
  CHECK_FALSE(s.unstable);
  // Too few samples.
  CHECK(stats::summarize({10, 10, 10}).unstable);
  // Median 11, MAD 1: half the runs are 9% or more off the median.
  const stats::Summary noisy = stats::summarize({10, 12, 10, 12, 10, 12, 10, 12, 11});
  CHECK(noisy.mad == 1);
  CHECK(noisy.unstable);
  // Deterministic: the same samples, the same interval.
  CHECK(stats::summarize(steady).ci_low == s.ci_low);
}

TEST_CASE("statistics errors name the function and the problem") {
  CHECK(contains(invalid_argument_of([] { stats::median({}); }), "median: no samples"));
  CHECK(contains(invalid_argument_of([] { stats::mad({}); }), "mad: no samples"));
  CHECK(contains(invalid_argument_of([] { stats::mean({}); }), "mean: no samples"));
  CHECK(contains(invalid_argument_of([] { stats::summarize({}); }), "summarize: no samples"));
  CHECK(contains(invalid_argument_of([] { stats::quantile({1, 2}, 1.5); }), "q must be in"));
  CHECK(contains(invalid_argument_of([] { stats::median({1, NAN}); }), "not a finite number"));
  CHECK(contains(invalid_argument_of([] {
                   stats::bootstrap_median_ci({1, 2}, 1.0);
                 }),
                 "confidence must be in (0, 1)"));
  CHECK(contains(invalid_argument_of([] {
                   stats::bootstrap_median_ci({1, 2}, 0.9, 0);
                 }),
                 "resamples must be at least 1"));
  CHECK(contains(invalid_argument_of([] {
                   stats::bootstrap_ratio_ci({1, 2}, {1, 0});
                 }),
                 "must be positive"));
  CHECK(
      contains(invalid_argument_of([] { stats::bootstrap_ratio_ci({1}, {}); }), "no samples in b"));
  CHECK(contains(invalid_argument_of([] { stats::mann_whitney_u({}, {1}); }),
                 "mann_whitney_u: no samples in a"));
}

TEST_CASE("block bootstrap: the same quantile as the plain one, wider intervals for correlated runs") {
  namespace st = prism::profiler::stats;
  // Twenty stretches at drifting speeds, as a busy neighbour or the clock make them: within a
  // stretch the calls are alike, so the calls are far from independent.
  std::vector<double> x;
  for (int block = 0; block < 20; ++block) {
    const double level = 100 + (block * 7) % 20;
    for (int i = 0; i < 500; ++i) x.push_back(level + (i % 7) * 0.1);
  }
  const st::Interval iid = st::bootstrap_quantile_ci(x, 0.5, 0.95, 500);
  const st::Interval blocked = st::block_bootstrap_quantile_ci(x, 0.5);
  CHECK(blocked.high - blocked.low > 5 * (iid.high - iid.low));
  CHECK(blocked.low <= st::quantile(x, 0.5));
  CHECK(blocked.high >= st::quantile(x, 0.5));
  // One block per sample is the plain bootstrap; its quantiles match quantile() exactly when
  // every block is drawn once (a sample of 1 value: the interval is that value).
  const st::Interval one = st::block_bootstrap_quantile_ci({4.0}, 0.99);
  CHECK(one.low == 4.0);
  CHECK(one.high == 4.0);
  const std::vector<double> m = st::block_medians(x);
  REQUIRE(m.size() == 20);
  CHECK(m[0] == doctest::Approx(100.3));
  CHECK(m[1] == doctest::Approx(107.3));
  CHECK(st::block_medians({1, 2, 3}, 20).size() == 3);
  const st::Interval r = st::block_bootstrap_quantile_ratio_ci(x, x, 0.99);
  CHECK(r.low <= 1.0);
  CHECK(r.high >= 1.0);
  CHECK_THROWS_AS(st::block_bootstrap_quantile_ci(x, 0.5, 0), std::invalid_argument);
  CHECK_THROWS_AS(st::block_medians({}), std::invalid_argument);
}

TEST_CASE("block bootstrap: the counting quantile equals the sorted quantile of the union") {
  namespace st = prism::profiler::stats;
  // With resamples drawn, each interval end is the type-7 quantile of some union of blocks;
  // check the counting against sorting on a sample whose every union is the full set: one block.
  std::vector<double> x;
  for (int i = 0; i < 101; ++i) x.push_back((i * 37) % 101);
  const st::Interval ci = st::block_bootstrap_quantile_ci(x, 0.9, 1);
  CHECK(ci.low == doctest::Approx(st::quantile(x, 0.9)));
  CHECK(ci.high == doctest::Approx(st::quantile(x, 0.9)));
}
