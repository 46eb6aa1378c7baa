// The performance tiers (exercises/checker/grade.h) on lab results made by hand: constant
// samples give an exact ratio and a zero-width interval, spread samples an interval that
// straddles a bound.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
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

TEST_CASE("judge: reached below the bound, missed above it, at the bound within its margin") {
  CHECK(judge(0.5, 0.9, 1.0) == TierResult::reached);
  CHECK(judge(1.1, 1.3, 1.0) == TierResult::missed);
  CHECK(judge(0.9, 1.1, 1.0) == TierResult::inconclusive);  // wider than the 5% margin
  // Exactly on the bound, or straddling it within 5%: decided, as not a clear win.
  CHECK(judge(1.0, 1.0, 1.0) == TierResult::at_bound);
  CHECK(judge(0.96, 1.04, 1.0) == TierResult::at_bound);
  CHECK(judge(0.94, 1.04, 1.0) == TierResult::inconclusive);
  CHECK(judge(1.9, 2.09, 2.0) == TierResult::at_bound);  // the margin is relative to the bound
  CHECK(judge(1.89, 2.05, 2.0) == TierResult::inconclusive);
  // Within the margin on the fast side too: just below the bound is no clear win either.
  CHECK(judge(0.99, 0.998, 1.0) == TierResult::at_bound);
  CHECK(judge(0.90, 0.97, 1.0) == TierResult::reached);
  CHECK(kTierMargin == 0.05);
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
  // Missed at one size only, and no hint written for it: the evidence, not tier 2's hint.
  const std::string text = format_grade(kTiers, g);
  CHECK(contains(text, "next: tier 2 was missed at large, reached at small:"));
  CHECK_FALSE(contains(text, "hint two"));
}

TEST_CASE(
    "grade: an interval across a bound is inconclusive, and the advice is the samples it needs") {
  lab::LabResult r;
  r.rows.push_back(timed("n", "mine", "user", {80, 90, 95, 100, 105, 110, 120, 85, 115}));
  r.rows.push_back(timed("n", "naive", "naive", {95, 100, 105, 100, 98, 102, 100, 99, 101}));
  r.rows.push_back(timed("n", "optimized", "optimized", constant(50)));
  const Grade g = grade_kernel(kTiers, r, "mine", 1);
  CHECK(g.reached == 0);
  CHECK(g.inconclusive);
  const TierCheck& c = g.checks[0][0];
  CHECK(c.result == TierResult::inconclusive);
  CHECK(c.low < 1.0);
  CHECK(c.high > 1.0);
  CHECK(c.samples == 9);
  const std::string text = format_grade(kTiers, g);
  CHECK(contains(text, "tier 0 of 3 (correct), inconclusive for tier 1"));
  CHECK(contains(text, "with 9 samples the interval still straddles tier 1's bound"));
  // 9 samples times (width / (2 x 5% x 1.0))^2, rounded up to tens.
  const double w = (c.high - c.low) / 0.1;
  const int need = static_cast<int>(std::ceil(9 * w * w / 10) * 10);
  CHECK(contains(text, "about " + std::to_string(need) + " samples"));
  CHECK(contains(text, need <= 1000 ? "--runs " + std::to_string(need) : "too noisy"));
}

TEST_CASE("grade: an interval too wide for a thousand samples asks for a quieter machine") {
  lab::LabResult r;
  r.rows.push_back(timed("n", "mine", "user", {20, 180, 30, 170, 100, 25, 175, 35, 165}));
  r.rows.push_back(timed("n", "naive", "naive", constant(100)));
  const Grade g = grade_kernel(kTiers, r, "mine", 1);
  REQUIRE(g.inconclusive);
  const std::string text = format_grade(kTiers, g);
  CHECK(contains(text, "this machine is too noisy to decide it"));
  CHECK_FALSE(contains(text, "--runs"));
}

TEST_CASE("grade: a kernel as fast as the yardstick is decided: at the bound, missed") {
  // A plain i-j-k loop against "beats naive": the same time within a percent.
  lab::LabResult r;
  r.rows.push_back(timed("n", "mine", "user", {99, 100, 101, 100, 99, 101, 100, 100, 100}));
  r.rows.push_back(timed("n", "naive", "naive", {100, 101, 99, 100, 100, 101, 99, 100, 100}));
  const Grade g = grade_kernel(kTiers, r, "mine", 1);
  CHECK(g.reached == 0);
  CHECK_FALSE(g.inconclusive);
  CHECK(g.checks[0][0].result == TierResult::at_bound);
  CHECK(g.checks[0][0].missed());
  const std::string text = format_grade(kTiers, g);
  CHECK(contains(text, "missed: within 5% of the bound, not a clear win"));
  CHECK(contains(text, "next: hint one"));
}

// Tiers whose hints depend on where they were missed.
const std::vector<Tier> kLayoutTiers = {
    {"beats naive", "naive", 1.0, "reorder the loops", {{{"512:nt", "128:nt"}, "B transposed"}}},
};

lab::LabResult layout_result(double at_128, double at_512, double at_nt) {
  lab::LabResult r;
  r.op = "matmul";
  const std::pair<const char*, double> sizes[] = {
      {"128", at_128}, {"512", at_512}, {"512:nt", at_nt}};
  for (const auto& [size, mine] : sizes) {
    r.rows.push_back(timed(size, "mine", "user", constant(mine)));
    r.rows.push_back(timed(size, "naive", "naive", constant(100)));
  }
  return r;
}

TEST_CASE("hints: the general hint only when the tier is missed at every size") {
  const Grade g = grade_kernel(kLayoutTiers, layout_result(150, 150, 150), "mine", 1);
  CHECK(hint_for(kLayoutTiers[0], g.checks[0]) == "reorder the loops");
  CHECK(contains(format_grade(kLayoutTiers, g), "next: reorder the loops"));
}

TEST_CASE("hints: a tier missed only where B is transposed gets the layout's hint") {
  // An i-k-j kernel: fast on row-major B, slow on a transposed one.
  const Grade g = grade_kernel(kLayoutTiers, layout_result(20, 20, 150), "mine", 1);
  CHECK(hint_for(kLayoutTiers[0], g.checks[0]) == "B transposed");
  const std::string text = format_grade(kLayoutTiers, g);
  CHECK(contains(text, "next: B transposed"));
  CHECK_FALSE(contains(text, "reorder the loops"));
}

TEST_CASE("hints: no hint fits a miss at some sizes: the grade says where, and no cause") {
  const Grade g = grade_kernel(kLayoutTiers, layout_result(20, 150, 20), "mine", 1);
  CHECK(hint_for(kLayoutTiers[0], g.checks[0]).empty());
  const std::string text = format_grade(kLayoutTiers, g);
  CHECK(contains(text, "next: tier 1 was missed at 512, reached at 128 and 512:nt:"));
  CHECK(contains(text, "prism lab matmul --sizes 512"));
  CHECK_FALSE(contains(text, "reorder the loops"));
  CHECK_FALSE(contains(text, "B transposed"));
}

TEST_CASE("hints: a size left undecided is said as such, never as reached") {
  lab::LabResult r;
  r.op = "matmul";
  r.rows.push_back(timed("128", "mine", "user", constant(150)));
  r.rows.push_back(timed("128", "naive", "naive", constant(100)));
  r.rows.push_back(timed("128:nt", "mine", "user", {40, 160, 60, 140, 100, 50, 150, 70, 130}));
  r.rows.push_back(timed("128:nt", "naive", "naive", constant(100)));
  const Grade g = grade_kernel(kLayoutTiers, r, "mine", 1);
  REQUIRE(g.checks[0][1].result == TierResult::inconclusive);
  const std::string text = format_grade(kLayoutTiers, g);
  CHECK(contains(text, "next: tier 1 was missed at 128, undecided at 128:nt:"));
  CHECK_FALSE(contains(text, "reached at"));
}

TEST_CASE("sequential sampling: an undecided tier is timed again where it straddled") {
  lab::LabResult r;
  r.op = "relu";
  r.rows.push_back(timed("small", "mine", "user", {80, 90, 95, 100, 105, 110, 120, 85, 115}));
  r.rows.push_back(timed("small", "naive", "naive", constant(100)));
  r.rows.push_back(timed("large", "mine", "user", constant(50)));
  r.rows.push_back(timed("large", "naive", "naive", constant(100)));
  std::vector<lab::LabOptions> asked;
  // The "lab": 9 more samples of each variant asked for, yours steady at 90 (a clear win).
  const LabRunner fake = [&](const lab::LabOptions& o) {
    asked.push_back(o);
    lab::LabResult more;
    for (const std::string& size : o.sizes) {
      for (const std::string& v : o.variants) {
        more.rows.push_back(
            timed(size, v, v == "mine" ? "user" : "naive",
                  std::vector<double>(static_cast<size_t>(o.repetitions), v == "mine" ? 90 : 100)));
      }
    }
    return more;
  };
  std::vector<std::string> said;
  lab::LabOptions lo;
  lo.op = "relu";
  lo.repetitions = 9;
  const Grade g = grade_until_decided(
      kTiers, r, "mine", lo, {9, 100, 60}, 1, [&](const std::string& s) { said.push_back(s); },
      fake);
  REQUIRE(asked.size() >= 1);
  // Only the size that straddled, only yours and the yardstick, 9 samples a round.
  CHECK(asked[0].sizes == std::vector<std::string>{"small"});
  CHECK(asked[0].variants == std::vector<std::string>{"mine", "naive"});
  CHECK(asked[0].repetitions == 9);
  CHECK(g.reached >= 1);
  CHECK(g.checks[0][0].result == TierResult::reached);
  CHECK(g.checks[0][0].samples == 9 + 9 * static_cast<int>(asked.size()));
  REQUIRE_FALSE(said.empty());
  CHECK(contains(
      said[0],
      "tier 1 undecided at small: 9 more interleaved samples of yours and naive (9 so far)"));
}

TEST_CASE("sequential sampling: it stops at the cap, and when the lab adds nothing") {
  lab::LabResult r;
  r.rows.push_back(timed("n", "mine", "user", {40, 160, 60, 140, 100, 50, 150, 70, 130}));
  r.rows.push_back(timed("n", "naive", "naive", constant(100)));
  int rounds = 0;
  // Noise that never narrows: the same spread each round.
  const LabRunner noisy = [&](const lab::LabOptions& o) {
    ++rounds;
    lab::LabResult more;
    more.rows.push_back(timed("n", "mine", "user", {40, 160, 60, 140, 100, 50, 150, 70, 130}));
    more.rows.push_back(timed("n", "naive", "naive", constant(100)));
    (void)o;
    return more;
  };
  lab::LabOptions lo;
  const Grade g = grade_until_decided(
      kTiers, r, "mine", lo, {9, 27, 60}, 1, [](const std::string&) {}, noisy);
  CHECK(rounds == 2);  // 9 -> 18 -> 27 samples, the cap
  CHECK(g.inconclusive);
  CHECK(g.checks[0][0].samples == 27);
  int empty_rounds = 0;
  const LabRunner nothing = [&](const lab::LabOptions&) {
    ++empty_rounds;
    return lab::LabResult{};
  };
  lab::LabResult r2;
  r2.rows.push_back(timed("n", "mine", "user", {40, 160, 60, 140, 100, 50, 150, 70, 130}));
  r2.rows.push_back(timed("n", "naive", "naive", constant(100)));
  grade_until_decided(
      kTiers, r2, "mine", lo, {9, 100, 60}, 1, [](const std::string&) {}, nothing);
  CHECK(empty_rounds == 1);
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

TEST_CASE("grade: a narrow interval off the bound's centre asks for the samples that decide it") {
  // [0.93, 1.01]: 8% wide, narrower than the margin's 10%, but across the bound and out of the
  // margin. Centre 0.97, half-width 0.04: decided once the half-width is below
  // max(0.03, 0.05 - 0.03) = 0.03, at 9 (0.04 / 0.03)^2 = 16 samples, then at least n + 10.
  TierCheck c;
  c.size = "n";
  c.yardstick = "naive";
  c.low = 0.93;
  c.high = 1.01;
  c.ratio = 0.97;
  c.result = judge(c.low, c.high, 1.0);
  c.samples = 9;
  REQUIRE(c.result == TierResult::inconclusive);
  Grade g;
  g.of = 3;
  g.inconclusive = true;
  g.checks = {{c}};
  const std::string text = format_grade(kTiers, g);
  CHECK(contains(text, "does not lie within its +-5% margin"));
  CHECK(contains(text, "about 20 samples would decide it: run again with --runs 20"));
}

TEST_CASE("hints: a size hint needs every other size reached, not undecided") {
  lab::LabResult r;
  r.op = "matmul";
  r.rows.push_back(timed("128", "mine", "user", {40, 160, 60, 140, 100, 50, 150, 70, 130}));
  r.rows.push_back(timed("128", "naive", "naive", constant(100)));
  r.rows.push_back(timed("512:nt", "mine", "user", constant(150)));
  r.rows.push_back(timed("512:nt", "naive", "naive", constant(100)));
  const Grade g = grade_kernel(kLayoutTiers, r, "mine", 1);
  REQUIRE(g.checks[0][0].result == TierResult::inconclusive);
  REQUIRE(g.checks[0][1].missed());
  // "Your kernel holds where B is row-major" would be a claim without evidence here.
  CHECK(hint_for(kLayoutTiers[0], g.checks[0]).empty());
}

TEST_CASE("sequential sampling: a size the lab no longer times ends it after one round") {
  lab::LabResult r;
  r.rows.push_back(timed("n", "mine", "user", {40, 160, 60, 140, 100, 50, 150, 70, 130}));
  r.rows.push_back(timed("n", "naive", "naive", constant(100)));
  std::vector<lab::LabOptions> asked;
  const LabRunner untimed_round = [&](const lab::LabOptions& o) {
    asked.push_back(o);
    lab::LabResult more;
    more.rows.push_back(untimed("n", "mine", "user"));
    more.rows.push_back(timed("n", "naive", "naive", constant(100)));
    return more;
  };
  lab::LabOptions lo;
  lo.max_variant_s = 10;
  const Grade g = grade_until_decided(
      kTiers, r, "mine", lo, {9, 100, 60}, 1, [](const std::string&) {}, untimed_round);
  CHECK(asked.size() == 1);
  CHECK(g.inconclusive);
  // Each variant's cap is its share of the budget left: 60 s over 2 variants at 1 size.
  REQUIRE_FALSE(asked.empty());
  CHECK(asked[0].max_variant_s <= 10);
  CHECK(asked[0].max_variant_s > 0);
  lo.max_variant_s = 1000;
  asked.clear();
  lab::LabResult r2;
  r2.rows.push_back(timed("n", "mine", "user", {40, 160, 60, 140, 100, 50, 150, 70, 130}));
  r2.rows.push_back(timed("n", "naive", "naive", constant(100)));
  grade_until_decided(
      kTiers, r2, "mine", lo, {9, 100, 60}, 1, [](const std::string&) {}, untimed_round);
  REQUIRE(asked.size() == 1);
  CHECK(asked[0].max_variant_s <= 30.0);
}

}  // namespace
}  // namespace prism::exercises
