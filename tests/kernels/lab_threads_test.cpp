// The kernel lab at several thread counts: one row per (variant, count), each variant's speed-up
// over the first count, and peaks and baselines taken at each row's own count. Timings are
// noisy, so only structure and deterministic fields are checked.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <omp.h>

#include "kernels/lab/lab.h"
#include "tests/test_util.h"

namespace {

using namespace prism;
using testing::contains;
using testing::error_of;

lab::LabOptions relu_at(std::vector<int> counts) {
  lab::LabOptions o;
  o.op = "relu";
  o.sizes = {"4096"};
  o.variants = {"naive", "optimized"};
  o.thread_counts = std::move(counts);
  o.threads = o.thread_counts.empty() ? 1 : o.thread_counts.front();
  o.repetitions = 3;
  o.min_sample_ms = 1;
  return o;
}

}  // namespace

TEST_CASE("lab threads: every variant gets a row per count, grouped variant by variant") {
  lab::LabOptions o = relu_at({1, 2});
  o.peaks_per_count = {{100, 40}, {200, 80}};
  const int caller_threads = omp_get_max_threads();
  const lab::LabResult r = lab::run_lab(o);
  CHECK(omp_get_max_threads() == caller_threads);  // the caller's count comes back
  CHECK(r.threads == 1);
  CHECK(r.thread_counts == std::vector<int>{1, 2});
  CHECK(r.peak_gflops == 100);      // the document-level peaks are the first count's
  CHECK(r.validation.size() == 2);  // validated once per variant, not per count
  REQUIRE(r.rows.size() == 4);
  const std::vector<std::pair<std::string, int>> order = {
      {"naive", 1}, {"naive", 2}, {"optimized", 1}, {"optimized", 2}};
  for (size_t i = 0; i < order.size(); ++i) {
    const lab::TimingRow& row = r.rows[i];
    CHECK(row.variant == order[i].first);
    CHECK(row.threads == order[i].second);
    REQUIRE(row.timed);
    CHECK(row.samples_ns.size() == 3);
    CHECK(row.calls_per_sample >= 1);
    // %peak against the peaks at the row's own count.
    const double peak = row.threads == 1 ? 100 : 200;
    CHECK(row.pct_peak_flops == doctest::Approx(100 * row.gflops / peak));
    // "x naive" compares with naive at the same count: naive's own row is exactly 1.
    if (row.variant == "naive") CHECK(row.x_naive == doctest::Approx(1.0));
    CHECK(row.x_naive > 0);
    // The speed-up over the first count: on the second count's rows only.
    if (row.threads == 1) {
      CHECK(row.x_threads == 0);
    } else {
      CHECK(row.x_threads > 0);
      CHECK(row.x_threads_low <= row.x_threads_high);
    }
  }
}

TEST_CASE("lab threads: the report gains a threads column, the ratio and the efficiency") {
  const lab::LabResult r = lab::run_lab(relu_at({1, 2}));
  const std::string text = lab::format_lab(r);
  CHECK(contains(text, "prism lab relu - 1 and 2 threads - float32"));
  CHECK(contains(text, "  variant        tag        threads     median"));
  CHECK(contains(text, "x 1 thread [95% CI]"));
  CHECK(contains(text, "thread efficiency at 2 threads (speed-up / 2): naive "));
  // One count: the report keeps its old form.
  const std::string one = lab::format_lab(lab::run_lab(relu_at({})));
  CHECK(contains(one, "prism lab relu - 1 thread - float32"));
  CHECK(contains(one, "  variant        tag            median"));
  CHECK_FALSE(contains(one, "x 1 thread"));
  CHECK_FALSE(contains(one, "thread efficiency"));
}

TEST_CASE("lab threads: JSON rows carry their count and the speed-up over the first") {
  const lab::LabResult r = lab::run_lab(relu_at({2, 1}));
  const auto doc = nlohmann::json::parse(lab::lab_json(r));
  CHECK(doc["threads"] == 2);  // the first count, as before
  CHECK(doc["thread_counts"] == nlohmann::json::array({2, 1}));
  REQUIRE(doc["rows"].size() == 4);
  for (const auto& row : doc["rows"]) {
    if (row["threads"] == 2) {
      CHECK_FALSE(row.contains("speedup_vs_first_threads"));
    } else {
      CHECK(row["threads"] == 1);
      REQUIRE(row.contains("speedup_vs_first_threads"));
      CHECK(row["speedup_vs_first_threads"].size() == 3);
    }
  }
  CHECK(contains(lab::format_lab(r), "prism lab relu - 2 and 1 threads"));
  CHECK(contains(lab::format_lab(r), "x 2 threads [95% CI]"));
}

TEST_CASE("lab threads: repeated, non-positive or cuda thread lists are errors") {
  CHECK(contains(error_of([] { lab::run_lab(relu_at({1, 1})); }), "distinct"));
  CHECK(contains(error_of([] { lab::run_lab(relu_at({0, 2})); }), "at least 1"));
  lab::LabOptions o = relu_at({1, 2});
  o.device = Device::cuda;
  CHECK(contains(error_of([&] { lab::run_lab(o); }), "one thread count"));
}
