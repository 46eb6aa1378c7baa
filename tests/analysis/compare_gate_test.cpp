// compare and gate on synthetic results with planted changes: a real regression must fail the
// gate, noise without a shift must pass, a shift inside the threshold must pass, and bad or
// mismatched input must be a clear error.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/compare.h"
#include "analysis/gate.h"
#include "analysis/run_record.h"
#include "tests/test_util.h"

using namespace prism::analysis;
using nlohmann::json;

namespace {

// A timing sample with a floor and an exponential right tail (median `median_ns`),
// deterministic per seed.
std::vector<double> timings(double median_ns, int n, uint64_t seed, double spread = 0.03) {
  std::vector<double> v;
  uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (int i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    const double u = static_cast<double>(s >> 11) * 0x1.0p-53;
    v.push_back(median_ns * (1 + spread * (-std::log1p(-u)) - spread * std::log(2.0)));
  }
  return v;
}

// A bench result document with one batch size.
json bench_doc(const std::vector<double>& samples, int64_t allocs = 10, int64_t peak = 1000,
               std::vector<double> probe = {1.0, -2.0, 3.0}, const std::string& model = "mlp") {
  BenchResult r;
  r.options.model = model;
  r.options.batches = {8};
  r.fingerprint.threads = 1;
  r.fingerprint.cpu_model = "test cpu";
  r.probe_output = std::move(probe);
  BatchResult b;
  b.batch = 8;
  b.samples_ns = samples;
  b.latency = latency_stats(samples);
  b.cold_ns = samples.front();
  b.tracked_peak_bytes = peak;
  b.peak_rss_bytes = 10 * peak;
  b.counters = {1000, 500, 4000, allocs, 640};
  b.ops.push_back({"matmul", "forward", "optimized", "", 3, samples.front() * 0.8, 1000, 4000,
                   static_cast<double>(allocs), 640});
  r.batches.push_back(b);
  return json::parse(bench_to_json(r).dump());
}

RunRecord record(const json& j) {
  return run_from_json(j, "test.json");
}

bool failed(const GateResult& r, const std::string& what) {
  for (const GateCheck& c : r.checks) {
    if (!c.passed && c.what == what) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("bench JSON round-trips into a run record") {
  const std::vector<double> s = timings(1e6, 200, 1);
  const RunRecord r = record(bench_doc(s));
  CHECK(r.kind == "bench");
  CHECK(r.model == "mlp");
  CHECK(r.mode == "infer");
  REQUIRE(r.series.size() == 1);
  CHECK(r.series[0].batch == 8);
  CHECK(r.series[0].samples_ns == s);
  CHECK(r.series[0].counters.allocs == 10);
  CHECK(r.probe_output == std::vector<double>{1, -2, 3});
  CHECK(r.fingerprint.cpu_model == "test cpu");
}

TEST_CASE("gate: a planted 30% slowdown fails p99 and throughput") {
  const RunRecord base = record(bench_doc(timings(1e6, 300, 1)));
  const RunRecord cand = record(bench_doc(timings(1.3e6, 300, 2)));
  const GateResult g = run_gate(base, cand, GateOptions{});
  CHECK_FALSE(g.passed());
  CHECK(failed(g, "p99 latency"));
  CHECK(failed(g, "throughput"));
  CHECK(prism::testing::contains(format_gate(g, false), "FAIL batch 8 p99 latency"));
  const Comparison c = compare_runs(base, cand);
  CHECK(c.series[0].verdict == Verdict::worse);
  CHECK(c.series[0].ratio == doctest::Approx(1.3).epsilon(0.03));
}

TEST_CASE("gate: noise without a shift passes, and compare finds no detectable change") {
  const RunRecord base = record(bench_doc(timings(1e6, 300, 3)));
  const RunRecord cand = record(bench_doc(timings(1e6, 300, 4)));
  const GateResult g = run_gate(base, cand, GateOptions{});
  CHECK_MESSAGE(g.passed(), format_gate(g, true));
  CHECK(compare_runs(base, cand).series[0].verdict == Verdict::no_change);
}

TEST_CASE(
    "gate: a real 5% shift inside the 15% and 10% thresholds passes, and compare still sees it") {
  const RunRecord base = record(bench_doc(timings(1e6, 400, 5, 0.01)));
  const RunRecord cand = record(bench_doc(timings(1.05e6, 400, 6, 0.01)));
  const GateResult g = run_gate(base, cand, GateOptions{});
  CHECK_MESSAGE(g.passed(), format_gate(g, true));
  CHECK(compare_runs(base, cand).series[0].verdict == Verdict::worse);
  GateOptions tight;
  tight.max_p99_increase = 0.02;
  tight.max_throughput_drop = 0.02;
  CHECK_FALSE(run_gate(base, cand, tight).passed());
}

TEST_CASE("gate: a faster candidate passes and compare calls it better") {
  const RunRecord base = record(bench_doc(timings(1e6, 300, 7)));
  const RunRecord cand = record(bench_doc(timings(0.7e6, 300, 8)));
  CHECK(run_gate(base, cand, GateOptions{}).passed());
  CHECK(compare_runs(base, cand).series[0].verdict == Verdict::better);
}

TEST_CASE("gate: exact counters, memory and quality") {
  const std::vector<double> s = timings(1e6, 200, 9);
  const RunRecord base = record(bench_doc(s));
  GateOptions exact;
  exact.exact = {"flops", "allocs"};
  CHECK(run_gate(base, record(bench_doc(s)), exact).passed());
  const GateResult more_allocs = run_gate(base, record(bench_doc(s, 11)), exact);
  CHECK(failed(more_allocs, "allocs (exact)"));
  CHECK_FALSE(failed(more_allocs, "flops (exact)"));
  CHECK(
      failed(run_gate(base, record(bench_doc(s, 10, 1100)), GateOptions{}), "peak tracked memory"));
  CHECK(failed(run_gate(base, record(bench_doc(s, 10, 1000, {1.0, -2.0, 3.5})), GateOptions{}),
               "outputs on fixed inputs"));
  CHECK(run_gate(base, record(bench_doc(s, 10, 1000, {1.0, -2.0, 3.000001})), GateOptions{})
            .passed());
  CHECK_THROWS_WITH_AS(check_exact_names({"flop"}), doctest::Contains("unknown counter 'flop'"),
                       prism::Error);
}

TEST_CASE("compare: the report has both sides, the decision, the quality line and the movers") {
  const RunRecord base = record(bench_doc(timings(1e6, 200, 10)));
  const RunRecord cand = record(bench_doc(timings(2e6, 200, 11), 12));
  const std::string text = format_comparison(compare_runs(base, cand));
  for (const char* s : {"A (baseline)", "B (candidate)", "batch 8", "decision: worse",
                        "Mann-Whitney", "quality:", "outputs on fixed inputs", "held",
                        "biggest movers", "allocations 10 -> 12 (+2)"}) {
    CHECK_MESSAGE(prism::testing::contains(text, s), s);
  }
}

TEST_CASE("compare and gate refuse runs that cannot be compared") {
  const std::vector<double> s = timings(1e6, 50, 12);
  CHECK_THROWS_WITH_AS(
      compare_runs(record(bench_doc(s)), record(bench_doc(s, 10, 1000, {1}, "cnn"))),
      doctest::Contains("differ in model"), prism::Error);
  json other_batch = bench_doc(s);
  other_batch["batches"][0]["batch"] = 16;
  CHECK_THROWS_WITH_AS(compare_runs(record(bench_doc(s)), record(other_batch)),
                       doctest::Contains("no batch size in common"), prism::Error);
}

TEST_CASE("run records: wrong or truncated input is an error naming the file and the field") {
  json doc = bench_doc(timings(1e6, 20, 13));
  json no_samples = doc;
  no_samples["batches"][0].erase("samples_ns");
  CHECK_THROWS_WITH_AS(record(no_samples),
                       doctest::Contains("test.json: missing field 'batches[].samples_ns'"),
                       prism::Error);
  json negative = doc;
  negative["batches"][0]["samples_ns"][0] = -5;
  CHECK_THROWS_WITH_AS(record(negative), doctest::Contains("positive number"), prism::Error);
  CHECK_THROWS_WITH_AS(record(json{{"hello", 1}}), doctest::Contains("not a result of"),
                       prism::Error);
  CHECK_THROWS_WITH_AS(record(json::array()), doctest::Contains("expected a JSON object"),
                       prism::Error);
  const std::string path = "compare_gate_test_truncated.json";
  {
    std::ofstream f(path);
    f << doc.dump().substr(0, 100);
  }
  CHECK_THROWS_WITH_AS(load_run(path), doctest::Contains("not valid JSON"), prism::Error);
  std::remove(path.c_str());
  CHECK_THROWS_WITH_AS(load_run("/nonexistent/x.json"), doctest::Contains("cannot be read"),
                       prism::Error);
}

TEST_CASE("gate thresholds parse as fractions or percentages") {
  CHECK(parse_fraction("15%", "--x") == doctest::Approx(0.15));
  CHECK(parse_fraction("0.2", "--x") == doctest::Approx(0.2));
  CHECK_THROWS_WITH_AS(parse_fraction("ten", "--x"), doctest::Contains("--x: expected"),
                       prism::Error);
  CHECK_THROWS_AS(parse_fraction("-5%", "--x"), prism::Error);
}

namespace {

// A `prism train --json` document with the fields a run record needs, and its step losses.
json train_doc(const std::vector<double>& step_ms, const json& losses) {
  Fingerprint f;
  f.threads = 1;
  f.cpu_model = "test cpu";
  json ops = json::array();
  ops.push_back({{"name", "matmul"},
                 {"phase", "forward"},
                 {"variant", "optimized"},
                 {"grad_of", ""},
                 {"calls", 4},
                 {"self_ns", 4e6},
                 {"flops", 4000},
                 {"macs", 2000},
                 {"bytes", 8000},
                 {"allocs", 4},
                 {"alloc_bytes", 640}});
  json train = {{"model", "mlp"},
                {"batch", 64},
                {"fingerprint", json::parse(fingerprint_to_json(f).dump())},
                {"step_samples_ms", step_ms},
                {"profiled_steps", {1, 2}}};
  if (!losses.is_null()) train["step_losses"] = losses;
  return json{{"ops", ops}, {"train", train}};
}

}  // namespace

TEST_CASE(
    "compare: two training runs' step losses make the quality line, over the steps both took") {
  const std::vector<double> ms = {5,   5.1, 4.9, 5, 5.2, 4.8, 5, 5.1, 4.9, 5, 5.2,
                                  4.8, 5,   5,   5, 5,   5,   5, 5,   5,   5, 5};
  const RunRecord a = record(train_doc(ms, {2.30, 2.10, 1.90}));
  CHECK(a.train_losses == std::vector<double>{2.30, 2.10, 1.90});
  const RunRecord longer = record(train_doc(ms, {2.30, 2.10, 1.90, 1.70}));
  const Comparison same = compare_runs(a, longer);
  REQUIRE(same.quality.size() == 1);
  CHECK(same.quality[0].what == "loss of the first 3 training steps: max |B - A| / max |A|");
  CHECK(same.quality[0].held);
  const Comparison moved = compare_runs(a, record(train_doc(ms, {2.30, 2.20, 2.10})));
  CHECK_FALSE(moved.quality[0].held);
  // A diverged step is written as null: NaN, and the line says it cannot compare.
  const RunRecord diverged = record(train_doc(ms, {2.30, nullptr, 1.90}));
  CHECK(std::isnan(diverged.train_losses[1]));
  const Comparison nan_side = compare_runs(a, diverged);
  CHECK_FALSE(nan_side.quality[0].held);
  CHECK(prism::testing::contains(nan_side.quality[0].change, "not comparable"));
  // Without step_losses (an older file): no loss line, as before.
  CHECK(record(train_doc(ms, nullptr)).train_losses.empty());
  CHECK_THROWS_WITH_AS(record(train_doc(ms, {2.3, "x"})),
                       doctest::Contains("'train.step_losses' holds a value that is not a number"),
                       prism::Error);
}
