// The performance tiers (exercises/checker/grade.h) on lab results made by hand: constant
// samples give an exact ratio and a zero-width interval, spread samples an interval that
// straddles a bound.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "exercises/checker/grade.h"
#include "tests/test_util.h"

namespace prism::exercises {
namespace {

using testing::contains;

lab::TimingRow timed(const std::string& size, const std::string& variant, const std::string& tag,
                     std::vector<double> samples) {
  lab::TimingRow r;
  r.size = size;
  r.variant = variant;
  r.tag = tag;
  r.timed = true;
  r.samples_ns = std::move(samples);
  std::vector<double> sorted = r.samples_ns;
  std::sort(sorted.begin(), sorted.end());
  r.median_ns = sorted[sorted.size() / 2];
  return r;
}

lab::TimingRow untimed(const std::string& size, const std::string& variant,
                       const std::string& tag) {
  lab::TimingRow r;
  r.size = size;
  r.variant = variant;
  r.tag = tag;
  r.note = "not timed: one call takes 12.0 s";
  return r;
}

std::vector<double> constant(double ns) {
  return std::vector<double>(9, ns);
}

const std::vector<Tier> kTiers = {
    {"beats naive", "naive", 1.0, "hint one"},
    {"within 1.5x of the best built-in", "best", 1.5, "hint two"},
    {"as fast as the best built-in", "best", 1.10, "hint three"},
};

TEST_CASE("judge: reached below the bound, missed above it, inconclusive across it") {
  CHECK(judge(0.5, 0.9, 1.0) == TierResult::reached);
  CHECK(judge(1.1, 1.3, 1.0) == TierResult::missed);
  CHECK(judge(0.9, 1.1, 1.0) == TierResult::inconclusive);
  CHECK(judge(1.0, 1.0, 1.0) == TierResult::inconclusive);  // exactly on the bound: undecided
}

TEST_CASE("grade: the tiers reached at every size, in order, and the next one's hint") {
  lab::LabResult r;
  r.op = "matmul";
  for (const char* s : {"128", "512"}) {
    r.rows.push_back(timed(s, "mine", "user", constant(120)));
    r.rows.push_back(timed(s, "naive", "naive", constant(1000)));
    r.rows.push_back(timed(s, "optimized", "optimized", constant(100)));
    r.rows.push_back(timed(s, "blocked", "optimized", constant(400)));
  }
  const Grade g = grade_kernel(kTiers, r, "mine", 1);
  CHECK(g.reached == 2);  // 0.12x naive, 1.2x the best: tiers 1 and 2, not 3 (1.2 > 1.1)
  CHECK(g.of == 3);
  CHECK_FALSE(g.inconclusive);
  REQUIRE(g.checks.size() == 3);
  CHECK(g.checks[1][0].yardstick == "optimized");  // the fastest built-in, never "mine"
  CHECK(g.checks[1][0].ratio == doctest::Approx(1.2));
  CHECK(g.checks[2][1].result == TierResult::missed);
  const std::string text = format_grade(kTiers, g);
  CHECK(contains(text, "performance: tier 2 of 3 (within 1.5x of the best built-in)"));
  CHECK(contains(text, "next: hint three"));
}

TEST_CASE("grade: a tier missed at one size is not reached, however fast the others are") {
  lab::LabResult r;
  r.rows.push_back(timed("small", "mine", "user", constant(100)));
  r.rows.push_back(timed("small", "naive", "naive", constant(900)));
  r.rows.push_back(timed("small", "optimized", "optimized", constant(100)));
  r.rows.push_back(timed("large", "mine", "user", constant(1000)));  // collapses past the cache
  r.rows.push_back(timed("large", "naive", "naive", constant(9000)));
  r.rows.push_back(timed("large", "optimized", "optimized", constant(100)));
  const Grade g = grade_kernel(kTiers, r, "mine", 1);
  CHECK(g.reached == 1);
  CHECK(g.checks[1][0].result == TierResult::reached);
  CHECK(g.checks[1][1].result == TierResult::missed);
  CHECK(contains(format_grade(kTiers, g), "next: hint two"));
}

TEST_CASE("grade: an interval across a bound is inconclusive and asks for more samples") {
  lab::LabResult r;
  r.rows.push_back(timed("n", "mine", "user", {80, 90, 95, 100, 105, 110, 120, 85, 115}));
  r.rows.push_back(timed("n", "naive", "naive", {95, 100, 105, 100, 98, 102, 100, 99, 101}));
  r.rows.push_back(timed("n", "optimized", "optimized", constant(50)));
  const Grade g = grade_kernel(kTiers, r, "mine", 1);
  CHECK(g.reached == 0);
  CHECK(g.inconclusive);
  CHECK(g.checks[0][0].result == TierResult::inconclusive);
  CHECK(g.checks[0][0].low < 1.0);
  CHECK(g.checks[0][0].high > 1.0);
  const std::string text = format_grade(kTiers, g);
  CHECK(contains(text, "tier 0 of 3 (correct), inconclusive for tier 1"));
  CHECK(contains(text, "run again with --runs 30"));
  // The advice moves on with what was tried, never the same twice.
  CHECK(contains(format_grade(kTiers, g, 30), "with 30 samples: run again with --runs 100"));
  const std::string noise = format_grade(kTiers, g, 100);
  CHECK(contains(noise, "even with 100 samples"));
  CHECK_FALSE(contains(noise, "--runs"));
}

TEST_CASE("grade: a yardstick too slow to time is skipped, yours too slow misses the tier") {
  lab::LabResult r;
  r.rows.push_back(timed("128", "mine", "user", constant(100)));
  r.rows.push_back(timed("128", "naive", "naive", constant(3000)));
  r.rows.push_back(timed("128", "optimized", "optimized", constant(90)));
  r.rows.push_back(timed("1024", "mine", "user", constant(50000)));
  r.rows.push_back(untimed("1024", "naive", "naive"));
  r.rows.push_back(timed("1024", "optimized", "optimized", constant(40000)));
  r.rows.push_back(untimed("1024:nt", "mine", "user"));
  r.rows.push_back(untimed("1024:nt", "naive", "naive"));
  r.rows.push_back(timed("1024:nt", "optimized", "optimized", constant(40000)));
  const Grade g = grade_kernel(kTiers, r, "mine", 1);
  // Tier 1 is judged at 128 only (naive untimed elsewhere); tier 2 is missed at 1024:nt.
  CHECK(g.checks[0][1].skipped);
  CHECK(g.checks[0][2].skipped);
  CHECK(g.reached == 1);
  CHECK(g.checks[1][2].result == TierResult::missed);
  CHECK_FALSE(g.checks[1][2].too_slow.empty());
  CHECK(contains(format_grade(kTiers, g), "yours was too slow to time here"));
}

TEST_CASE("grade: a kernel the lab found wrong is not graded, and says so") {
  lab::LabResult r;
  r.op = "relu";
  lab::TimingRow bad = untimed("4096", "mine", "user");
  bad.valid = false;
  r.rows.push_back(bad);
  r.rows.push_back(timed("4096", "naive", "naive", constant(100)));
  const Grade g = grade_kernel(kTiers, r, "mine", 1);
  CHECK(g.reached == 0);
  CHECK(contains(g.note, "failed the lab's validation at size 4096"));
}

}  // namespace
}  // namespace prism::exercises
