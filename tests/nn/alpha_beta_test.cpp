// The alpha-beta fit, the DDP step prediction and the collectives bench's pure helpers
// (nn/dist/alpha_beta.h, nn/dist/collectives_bench.h): no MPI needed.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "nn/dist/alpha_beta.h"
#include "nn/dist/buckets.h"
#include "nn/dist/collectives_bench.h"
#include "tensor/tensor.h"

using namespace prism;
using namespace prism::dist;

TEST_CASE("alpha-beta fit recovers alpha and beta from points on a line") {
  const double alpha = 5e-6, beta = 1.0 / 2e9;  // 5 us, 2 GB/s
  std::vector<double> xs, ts;
  for (double m : default_message_sizes()) {
    xs.push_back(m);
    ts.push_back(alpha + m * beta);
  }
  const AlphaBetaFit f = fit_alpha_beta(xs, ts);
  CHECK(f.n == 13);
  CHECK(f.alpha_s == doctest::Approx(alpha).epsilon(1e-9));
  CHECK(f.beta_s == doctest::Approx(beta).epsilon(1e-9));
  CHECK(f.alpha_us() == doctest::Approx(5.0).epsilon(1e-9));
  CHECK(f.bandwidth_gbs() == doctest::Approx(2.0).epsilon(1e-9));
  CHECK(f.worst_rel_residual < 1e-9);
  CHECK(f.time_s(1e6) == doctest::Approx(alpha + 1e6 * beta).epsilon(1e-9));
}

TEST_CASE("alpha-beta fit of a noisy set: the weighted least squares solution, exactly") {
  // Expected values from the normal equations solved in exact rational arithmetic (Python's
  // fractions) with weights 1 / t^2, uncentred: an independent route to the same minimum.
  const std::vector<double> xs{4, 64, 1024, 16384, 262144, 4194304};
  const std::vector<double> ts{3.4e-6, 2.7e-6, 3.9e-6, 1.21e-5, 1.40e-4, 2.20e-3};
  const AlphaBetaFit f = fit_alpha_beta(xs, ts);
  CHECK(f.alpha_s == doctest::Approx(3.049381457151219e-06).epsilon(1e-12));
  CHECK(f.beta_s == doctest::Approx(5.310447707794545e-10).epsilon(1e-12));
  CHECK(f.worst_rel_residual == doctest::Approx(0.14198826758559405).epsilon(1e-10));
  CHECK(f.worst_bytes == 64);
  // Relative error keeps the small messages in the fit: every point within 15% of the line,
  // the 4-byte one included, although its time is 650 times smaller than the largest.
  for (size_t i = 0; i < xs.size(); ++i) {
    CHECK(std::abs(f.time_s(xs[i]) - ts[i]) / ts[i] < 0.15);
  }
}

TEST_CASE("alpha-beta fit holds alpha and beta at 0 where noise tilts the free line past them") {
  // Expected values again from exact rational arithmetic (Python's fractions).
  const auto relative_error = [](const std::vector<double>& xs, const std::vector<double>& ts,
                                 double a, double b) {
    double e = 0;
    for (size_t i = 0; i < xs.size(); ++i) e += std::pow((ts[i] - a - b * xs[i]) / ts[i], 2);
    return e;
  };
  SUBCASE("a small size measured fast: the free alpha is -0.39 us, held at 0") {
    const std::vector<double> xs{4096, 65536, 1048576};
    const std::vector<double> ts{0.2e-6, 9e-6, 150e-6};
    const AlphaBetaFit f = fit_alpha_beta(xs, ts);
    CHECK(f.constrained == AlphaBetaFit::Constrained::alpha_zero);
    CHECK(f.alpha_s == 0);
    // b = sum w m t / sum w m^2, the one-variable least squares through the origin.
    CHECK(f.beta_s == doctest::Approx(6.666185781477559e-11).epsilon(1e-12));
    // No feasible line nearby does better: the edge's minimum is the constrained minimum.
    const double e = relative_error(xs, ts, f.alpha_s, f.beta_s);
    for (double da : {0.0, 1e-9, 1e-8, 1e-7}) {
      for (double scale : {0.9, 0.99, 1.0, 1.01, 1.1}) {
        CHECK(relative_error(xs, ts, da, f.beta_s * scale) >= e - 1e-15);
      }
    }
  }
  SUBCASE("times that fall with the size: beta held at 0, no bandwidth") {
    const std::vector<double> xs{4, 4096, 65536};
    const std::vector<double> ts{5e-6, 4e-6, 3e-6};
    const AlphaBetaFit f = fit_alpha_beta(xs, ts);
    CHECK(f.constrained == AlphaBetaFit::Constrained::beta_zero);
    CHECK(f.beta_s == 0);
    CHECK(f.bandwidth_gbs() == 0);
    CHECK(f.alpha_s == doctest::Approx(3.6671001300390116e-06).epsilon(1e-12));  // tbar
  }
  SUBCASE("points on a line with alpha > 0 are not constrained") {
    const AlphaBetaFit f = fit_alpha_beta({4, 4096}, {1e-6, 2e-6});
    CHECK(f.constrained == AlphaBetaFit::Constrained::none);
  }
}

TEST_CASE("alpha-beta fit refuses what it cannot fit, naming it") {
  CHECK_THROWS_WITH_AS(fit_alpha_beta({4}, {1e-6}), doctest::Contains("at least two"), Error);
  CHECK_THROWS_WITH_AS(fit_alpha_beta({4, 8}, {1e-6}), doctest::Contains("2 sizes but 1 times"),
                       Error);
  CHECK_THROWS_WITH_AS(fit_alpha_beta({4, 4}, {1e-6, 2e-6}),
                       doctest::Contains("two different message sizes"), Error);
  CHECK_THROWS_WITH_AS(fit_alpha_beta({4, 8}, {1e-6, 0}), doctest::Contains("finite time > 0"),
                       Error);
  CHECK_THROWS_WITH_AS(fit_alpha_beta({-4, 8}, {1e-6, 2e-6}), doctest::Contains("size"), Error);
  CHECK_THROWS_WITH_AS(fit_alpha_beta({4, 8}, {1e-6, NAN}), doctest::Contains("finite"), Error);
}

TEST_CASE("DDP step prediction: buckets through the fit, with and without overlap") {
  AlphaBetaFit f;
  f.alpha_s = 10e-6;  // 10 us
  f.beta_s = 1e-9;    // 1 GB/s
  const std::vector<int64_t> buckets{1 << 20, 1 << 20, 512000};
  // comm = 3 alpha + (2 MiB + 512000 B) beta; the last bucket = alpha + 512000 beta.
  const double comm = 3 * 10e-6 + (2.0 * (1 << 20) + 512000) * 1e-9;
  const double last = 10e-6 + 512000 * 1e-9;

  SUBCASE("compute-bound: the overlap hides all but the last bucket") {
    const StepPrediction p = predict_ddp_step(5e-3, buckets, f);
    CHECK(p.buckets == 3);
    CHECK(p.gradient_bytes == 2 * (1 << 20) + 512000);
    CHECK(p.comm_s == doctest::Approx(comm).epsilon(1e-12));
    CHECK(p.last_bucket_s == doctest::Approx(last).epsilon(1e-12));
    CHECK(p.no_overlap_s == doctest::Approx(5e-3 + comm).epsilon(1e-12));
    CHECK(p.overlap_s == doctest::Approx(5e-3 + last).epsilon(1e-12));
  }
  SUBCASE("communication-bound: the step is never shorter than the collectives") {
    const StepPrediction p = predict_ddp_step(1e-3, buckets, f);
    CHECK(p.overlap_s == doctest::Approx(comm).epsilon(1e-12));
    CHECK(p.no_overlap_s == doctest::Approx(1e-3 + comm).epsilon(1e-12));
  }
  SUBCASE("one bucket: nothing overlaps") {
    const StepPrediction p = predict_ddp_step(5e-3, {4000}, f);
    CHECK(p.overlap_s == doctest::Approx(p.no_overlap_s).epsilon(1e-12));
  }
  CHECK_THROWS_WITH_AS(predict_ddp_step(1e-3, {}, f), doctest::Contains("no gradient buckets"),
                       Error);
  CHECK_THROWS_AS(predict_ddp_step(-1, buckets, f), Error);
  CHECK_THROWS_AS(predict_ddp_step(1e-3, {-4}, f), Error);
}

TEST_CASE("DDP's default bucket is 1 MiB") {
  CHECK(kDefaultBucketBytes == 1048576);
}

TEST_CASE("collectives bench: default sizes are powers of 4 from 4 B to 64 MiB") {
  const std::vector<int64_t> s = default_message_sizes();
  REQUIRE(s.size() == 13);
  CHECK(s.front() == 4);
  CHECK(s[1] == 16);
  CHECK(s.back() == int64_t{64} << 20);
  for (size_t i = 1; i < s.size(); ++i) CHECK(s[i] == 4 * s[i - 1]);
}

TEST_CASE("collectives bench: message sizes as the command line writes them") {
  CHECK(parse_message_size("4") == 4);
  CHECK(parse_message_size("4096") == 4096);
  CHECK(parse_message_size("64K") == 65536);
  CHECK(parse_message_size("64kib") == 65536);
  CHECK(parse_message_size("1M") == 1048576);
  CHECK(parse_message_size("16MiB") == 16 << 20);
  CHECK(parse_message_size("1G") == int64_t{1} << 30);
  CHECK(parse_message_size("8B") == 8);
  CHECK_THROWS_WITH_AS(parse_message_size(""), doctest::Contains("expected bytes"), Error);
  CHECK_THROWS_WITH_AS(parse_message_size("abc"), doctest::Contains("expected bytes"), Error);
  CHECK_THROWS_WITH_AS(parse_message_size("6"), doctest::Contains("multiple of 4"), Error);
  CHECK_THROWS_WITH_AS(parse_message_size("0"), doctest::Contains("at least 4 bytes"), Error);
  CHECK_THROWS_WITH_AS(parse_message_size("2G"), doctest::Contains("1 GiB"), Error);
  CHECK_THROWS_WITH_AS(parse_message_size("99999999999999999999999"), doctest::Contains("1 GiB"),
                       Error);
  CHECK_THROWS_WITH_AS(parse_message_size("4X"), doctest::Contains("unknown unit 'X'"), Error);
  CHECK_THROWS_WITH_AS(parse_message_size("-4"), doctest::Contains("expected bytes"), Error);
}

TEST_CASE("collectives bench: options checked before any MPI call") {
  CollectivesOptions o;
  CHECK_NOTHROW(check_collectives_options(o));
  o.sizes = {4, 4096, 4};
  CHECK_THROWS_WITH_AS(check_collectives_options(o), doctest::Contains("4 bytes is given twice"),
                       Error);
  o.sizes = {6};
  CHECK_THROWS_WITH_AS(check_collectives_options(o), doctest::Contains("multiple of 4"), Error);
  o.sizes = {4};
  o.reps = 0;
  CHECK_THROWS_WITH_AS(check_collectives_options(o), doctest::Contains("--reps"), Error);
  o.reps = 1;
  o.warmup = -1;
  CHECK_THROWS_WITH_AS(check_collectives_options(o), doctest::Contains("--warmup"), Error);
}
