// analysis/sweep.h: the --vary parser, the checks made before any work, a real sweep over a tiny
// MLP (its structure and its exact FLOPs ratios), and the analysis on synthetic points with known
// answers (thread scaling, where batching stops paying).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "analysis/sweep.h"
#include "analysis/sweep_report.h"
#include "kernels/types.h"
#include "tests/test_util.h"

using namespace prism;
using namespace prism::analysis;
using prism::testing::contains;
using prism::testing::error_of;

namespace {

bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& l : lines) {
    if (contains(l, part)) return true;
  }
  return false;
}

// A quick sweep: 10 timed calls per point (5 a pass), nothing measured about the machine.
SweepOptions quick(const std::string& model, const std::string& vary, BenchMode mode) {
  SweepOptions o;
  o.bench.model = model;
  o.bench.mode = mode;
  o.bench.iters = 10;
  o.bench.warmup = 1;
  o.bench.profile_calls = 2;
  o.bench.peak = false;
  o.check_environment = false;
  o.vary = parse_vary(vary);
  return o;
}

}  // namespace

TEST_CASE("sweep: --vary is parsed, and each bad spelling is named") {
  const SweepSpec s = parse_vary("batch=8,1, 4");
  CHECK(s.var == SweepVar::batch);
  CHECK(s.values == std::vector<int64_t>{8, 1, 4});
  CHECK(parse_vary("threads=1,2").var == SweepVar::threads);
  CHECK(parse_vary("seq=64,128").var == SweepVar::seq);
  CHECK(parse_vary("width=16,32").var == SweepVar::width);
  CHECK(parse_vary("depth=1,2").var == SweepVar::depth);
  CHECK(contains(error_of([] { parse_vary("batch"); }), "expected NAME=V1,V2,..."));
  CHECK(contains(error_of([] { parse_vary("size=1,2"); }),
                 "unknown size 'size': expected batch, seq, width, depth or threads"));
  CHECK(contains(error_of([] { parse_vary("batch="); }), "no values"));
  CHECK(contains(error_of([] { parse_vary("batch=1,,4"); }), "value 2 is empty"));
  CHECK(contains(error_of([] { parse_vary("batch=1,"); }), "value 2 is empty"));
  CHECK(contains(error_of([] { parse_vary("batch=1,x"); }), "'x' is not a whole number >= 1"));
  CHECK(contains(error_of([] { parse_vary("batch=1,2.5"); }), "'2.5' is not a whole number"));
  CHECK(contains(error_of([] { parse_vary("batch=0,2"); }), "'0' is not a whole number >= 1"));
  CHECK(contains(error_of([] { parse_vary("batch=-1,2"); }), "'-1' is not a whole number"));
  CHECK(contains(error_of([] { parse_vary("batch=99999999999999999999,2"); }),
                 "is not a whole number"));
  CHECK(contains(error_of([] { parse_vary("batch=4,2,4"); }), "4 is given twice"));
  CHECK(contains(error_of([] { parse_vary("batch=4"); }),
                 "a fit needs at least 2 values (3 or more for an interval), got 1"));
}

TEST_CASE("sweep: what a model cannot take is refused before any work") {
  auto check = [](SweepOptions o) { return error_of([&] { check_sweep_options(o); }); };
  CHECK(contains(check(quick("mlp", "seq=64,128", BenchMode::infer)),
                 "--vary seq: mlp has no context length"));
  CHECK(contains(check(quick("cnn", "depth=1,2", BenchMode::infer)),
                 "--vary depth=1: make_model(cnn): depth is fixed"));
  CHECK(contains(check(quick("transformer", "width=130,128", BenchMode::infer)),
                 "--vary width=130: make_model(gpt-char): width (d_model) 130"));  // 4 heads
  CHECK(contains(check(quick("mlp", "width=16,1000000", BenchMode::infer)), "width=1000000"));
  CHECK(contains(check(quick("mlp", "batch=1,2000000", BenchMode::infer)),
                 "batch size 2000000 is not in 1..1000000"));
  CHECK(contains(check(quick("mlp", "threads=1,5000", BenchMode::infer)), "at most 1024 threads"));
  CHECK(contains(check(quick("nosuch", "batch=1,2", BenchMode::infer)), "nosuch"));
  SweepOptions o = quick("mlp", "batch=1,2", BenchMode::infer);
  o.check = true;
  CHECK(contains(check(o), "--check measures the predicted size: give --predict N"));
  o.predict = 2'000'000;
  CHECK(contains(check(o), "--predict batch=2000000"));
  o.vary.values = {3};
  CHECK(contains(check(o), "at least 2 values"));
  o = quick("mlp", "batch=1,2", BenchMode::infer);
  o.vary.values = {2, 2};
  CHECK(contains(check(o), "given twice"));
  // Good ones pass.
  check_sweep_options(quick("transformer", "seq=16,32", BenchMode::train));
  check_sweep_options(quick("mlp", "depth=1,3", BenchMode::infer));
  check_sweep_options(quick("cnn", "width=4,8", BenchMode::train));
}

TEST_CASE("sweep: a tiny MLP over batch 1, 2, 3: structure, exact FLOPs ratios, the prediction") {
  SweepOptions o = quick("mlp", "batch=3,1,2", BenchMode::infer);
  o.predict = 6;
  o.check = true;
  const SweepResult r = run_sweep(o);
  REQUIRE(r.points.size() == 3);
  CHECK(r.throughput_unit == "samples/s");
  for (size_t i = 0; i < 3; ++i) {
    const SweepPoint& p = r.points[i];
    CHECK(p.value == static_cast<int64_t>(i + 1));  // ascending whatever the order given
    CHECK(p.batch == p.value);
    CHECK(p.samples_ns.size() == 10);  // 5 in each pass
    CHECK(p.pass_median_ns.size() == 2);
    CHECK(p.median_ns > 0);
    CHECK(p.median_ci.low <= p.median_ns);
    CHECK(p.median_ci.high >= p.median_ns);
    CHECK(p.parameters == 269'322);
    CHECK(p.throughput == doctest::Approx(p.value * 1e9 / p.median_ns));
    CHECK(p.tracked_peak_by_role[static_cast<size_t>(profiler::MemRole::parameter)] == 269'322 * 4);
    CHECK(p.class_ns[static_cast<size_t>(OpClass::matmul)] > 0);
  }
  // Inference FLOPs are exactly proportional to the batch: every op works per row.
  const int64_t f1 = r.points[0].counters.flops;
  CHECK(f1 > 0);
  CHECK(r.points[1].counters.flops == 2 * f1);
  CHECK(r.points[2].counters.flops == 3 * f1);
  CHECK(r.points[0].counters.macs == 784 * 256 + 256 * 256 + 256 * 10);
  REQUIRE(r.flops.fit);
  CHECK(std::fabs(r.flops.fit->k - 1) < 1e-9);
  CHECK(r.flops.fit->r2 == doctest::Approx(1));
  REQUIRE(r.time.fit);
  CHECK(r.time.fit->has_interval);  // 3 points: one degree of freedom
  CHECK(r.time.fit->n == 3);
  REQUIRE(r.memory.fit);
  CHECK_FALSE(r.time.knee);  // 3 points are too few to test a bend
  CHECK_FALSE(r.threads);
  // Which way it went depends on the machine; that the finding is there does not.
  CHECK(any_contains(r.findings, "time per sample "));
  REQUIRE(r.prediction);
  CHECK(r.prediction->has_memory);
  REQUIRE(r.check);
  CHECK(r.check->memory_error_pct.has_value());
  CHECK(r.prediction->at == 6);
  CHECK_FALSE(r.prediction->time_ns.interpolation);
  CHECK(r.prediction->time_ns.has_interval);
  REQUIRE(r.check);
  CHECK(r.check->measured.value == 6);
  CHECK(r.check->measured.counters.flops == 6 * f1);
  CHECK(r.check->measured.samples_ns.size() == 10);  // one pass, every call
  CHECK(std::isfinite(r.check->time_error_pct));
  // The report and the JSON carry all of it.
  const std::string text = format_sweep(r);
  for (const char* s :
       {"sweep mlp --mode infer: batch = 1,2,3", "fits:", "time    ~", "FLOPs   ~", "not tested",
        "prediction at batch=6 (extrapolation", "check: measured at batch=6", "findings:"}) {
    CHECK_MESSAGE(contains(text, s), s);
  }
  const auto j = sweep_to_json(r);
  CHECK(j["kind"] == "prism.sweep");
  CHECK(j["points"].size() == 3);
  CHECK(j["points"][2]["counters"]["flops"] == 3 * f1);
  CHECK(j["fits"]["flops"]["k"].get<double>() == doctest::Approx(1));
  CHECK(j["prediction"]["at"] == 6);
  CHECK(j["check"]["point"]["value"] == 6);
}

TEST_CASE("sweep: training steps: FLOPs affine in the batch (the optimizer's update is fixed)") {
  const SweepResult r = run_sweep(quick("mlp", "batch=1,2,3", BenchMode::train));
  REQUIRE(r.points.size() == 3);
  const int64_t f1 = r.points[0].counters.flops, f2 = r.points[1].counters.flops,
                f3 = r.points[2].counters.flops;
  CHECK(f2 - f1 == f3 - f2);  // forward and backward per row, plus the update per parameter
  CHECK(f2 - f1 < f1);        // the update is the same at every batch: not proportional
  for (const SweepPoint& p : r.points) {
    CHECK(p.tracked_peak_by_role[static_cast<size_t>(profiler::MemRole::gradient)] > 0);
  }
}

TEST_CASE("sweep: width and depth rebuild the model at each point") {
  const SweepResult r = run_sweep(quick("mlp", "width=16,32", BenchMode::infer));
  REQUIRE(r.points.size() == 2);
  // 784 w + w + (w w + w) + 10 w + 10 parameters for two hidden layers of width w.
  auto params = [](int64_t w) { return 784 * w + w + w * w + w + 10 * w + 10; };
  CHECK(r.points[0].parameters == params(16));
  CHECK(r.points[1].parameters == params(32));
  CHECK(r.points[0].counters.macs == 784 * 16 + 16 * 16 + 16 * 10);
  CHECK(r.points[1].counters.macs == 784 * 32 + 32 * 32 + 32 * 10);
  CHECK_FALSE(r.time.fit->has_interval);  // two points: exact, no interval
  CHECK(any_contains(r.findings, "parameters grow from"));
}

TEST_CASE("sweep: the analysis of synthetic points reads the right numbers") {
  SUBCASE("threads: speed-up, efficiency and Amdahl's serial fraction") {
    SweepResult r;
    r.options.vary = parse_vary("threads=1,2,4");
    const double s = 0.25, t1 = 1e6;
    for (int p : {1, 2, 4}) {
      SweepPoint pt;
      pt.value = p;
      pt.batch = 8;
      pt.median_ns = t1 * (s + (1 - s) / p);
      pt.median_ci = {pt.median_ns, pt.median_ns};
      pt.counters.flops = 1000;
      pt.tracked_peak_bytes = 4096;
      pt.class_ns[static_cast<size_t>(OpClass::matmul)] = 0.5 * t1 / p;  // s = 0
      pt.class_ns[static_cast<size_t>(OpClass::elementwise)] = 0.5 * t1 * 0.5 * (1 + 1.0 / p);
      r.points.push_back(pt);
    }
    analyse_sweep(r);
    REQUIRE(r.threads);
    CHECK(r.threads->speedup[2] == doctest::Approx(1 / (s + (1 - s) / 4)));
    CHECK(r.threads->efficiency[1] == doctest::Approx(1 / (s + (1 - s) / 2) / 2));
    REQUIRE(r.threads->amdahl);
    CHECK(r.threads->amdahl->serial_fraction == doctest::Approx(s));
    REQUIRE(r.threads->classes.size() == 2);
    CHECK(r.threads->classes[0].op_class == OpClass::matmul);
    CHECK(r.threads->classes[0].amdahl->serial_fraction == doctest::Approx(0).epsilon(1e-12));
    CHECK(r.threads->classes[1].amdahl->serial_fraction == doctest::Approx(0.5));
    CHECK(r.threads->classes[0].efficiency[2] == doctest::Approx(1));
    CHECK(any_contains(r.findings, "25% of the time behaves as serial"));
    CHECK(any_contains(r.findings, "4.0x faster than one"));
    CHECK(any_contains(r.findings, "matmul scales best (100% efficient) and elementwise worst"));
    CHECK(r.flops.fit->k == 0);  // the work does not change with the threads
  }
  SUBCASE("batch: per-sample time falls until 16, then stays; a knee there") {
    SweepResult r;
    r.options.vary = parse_vary("batch=1,2,4,8,16,32,64,128");
    r.options.predict = 256;
    for (int64_t b : r.options.vary.values) {
      SweepPoint pt;
      pt.value = pt.batch = b;
      // 100 us per call up to 16 (fixed cost), then linear in the batch: 6.25 us per sample.
      pt.median_ns = b <= 16 ? 1e5 : 1e5 * static_cast<double>(b) / 16;
      pt.median_ci = {pt.median_ns, pt.median_ns};
      pt.counters.flops = 1000 * b;
      pt.tracked_peak_bytes = 1000 + 10 * b;
      r.points.push_back(pt);
    }
    analyse_sweep(r);
    REQUIRE(r.time.knee);
    CHECK(r.time.knee->kept);
    CHECK(r.time.knee->x_break == 16);
    CHECK(r.time.knee->k_left == doctest::Approx(0).epsilon(1e-9));
    CHECK(r.time.knee->k_right == doctest::Approx(1).epsilon(1e-9));
    REQUIRE(r.prediction);
    CHECK(r.prediction->time_from_knee);
    CHECK(r.prediction->time_ns.value == doctest::Approx(1e5 * 16).epsilon(1e-9));
    CHECK(any_contains(r.findings,
                       "time per sample falls from 100 us at batch 1 to 6.25 us at "
                       "batch 16 (16.0x less)"));
    CHECK(any_contains(r.findings, "batching stops paying at about batch 16"));
    CHECK(any_contains(r.findings, "time bends at batch=16"));
    CHECK(any_contains(r.findings, "time grows more slowly than the work"));
  }
  SUBCASE("batch: per-sample time lowest at the smallest batch: no claim that batching pays") {
    SweepResult r;
    r.options.vary = parse_vary("batch=1,2,4");
    for (int64_t b : r.options.vary.values) {
      SweepPoint pt;
      pt.value = pt.batch = b;
      pt.median_ns = 1e3 * static_cast<double>(b * b);  // 1, 2, 4 us per sample
      pt.median_ci = {pt.median_ns, pt.median_ns};
      pt.counters.flops = 1000 * b;
      pt.tracked_peak_bytes = 1000 * b;
      r.points.push_back(pt);
    }
    analyse_sweep(r);
    CHECK(any_contains(r.findings,
                       "time per sample is lowest at the smallest batch, 1.00 us at batch 1, and "
                       "4.00 us at batch 4 (4.00x): batching does not pay in this range"));
    CHECK_FALSE(any_contains(r.findings, "falls from"));
    CHECK_FALSE(any_contains(r.findings, "stops paying"));
  }
  SUBCASE("memory: the role that grew most is called 'most' only with more than half") {
    SweepResult r;
    r.options.vary = parse_vary("batch=1,2");
    const size_t act = static_cast<size_t>(profiler::MemRole::activation);
    const size_t grad = static_cast<size_t>(profiler::MemRole::gradient);
    const size_t par = static_cast<size_t>(profiler::MemRole::parameter);
    for (int64_t b : r.options.vary.values) {
      SweepPoint pt;
      pt.value = pt.batch = b;
      pt.median_ns = 1e3 * static_cast<double>(b);
      pt.counters.flops = 1000 * b;
      // Activations grow by 400, gradients by 350 (of 750): 53% -> "most"; parameters steady.
      pt.tracked_peak_by_role[act] = 400 * b;
      pt.tracked_peak_by_role[grad] = 350 * b;
      pt.tracked_peak_by_role[par] = 5000;
      pt.tracked_peak_bytes = 5000 + 750 * b;
      r.points.push_back(pt);
    }
    analyse_sweep(r);
    CHECK(any_contains(r.findings, "most of the growth (53%) is activation"));
    CHECK(any_contains(r.findings, "unchanged (within 1%): parameter"));
    // Temporaries growing by 300 as well: activations are 400 of 1050, 38%, the largest part.
    const size_t tmp = static_cast<size_t>(profiler::MemRole::temporary);
    for (SweepPoint& pt : r.points) pt.tracked_peak_by_role[tmp] = 300 * pt.batch;
    r.findings.clear();
    analyse_sweep(r);
    CHECK(any_contains(r.findings, "the largest part of the growth (38%) is activation"));
    CHECK_FALSE(any_contains(r.findings, "most of the growth"));
  }
  SUBCASE("a prediction without a memory fit says so and is not compared") {
    SweepResult r;
    r.options.vary = parse_vary("batch=1,2,4");
    r.options.predict = 8;
    for (int64_t b : r.options.vary.values) {
      SweepPoint pt;
      pt.value = pt.batch = b;
      pt.median_ns = 1e3 * static_cast<double>(b);
      pt.counters.flops = 1000 * b;
      pt.tracked_peak_bytes = 0;  // nothing tracked: no power law to fit
      r.points.push_back(pt);
    }
    analyse_sweep(r);
    REQUIRE(r.prediction);
    CHECK(r.prediction->time_ns.value == doctest::Approx(8e3));
    CHECK_FALSE(r.prediction->has_memory);
    CHECK(contains(format_sweep(r), "memory  no prediction: "));
    CHECK(sweep_to_json(r)["prediction"]["memory_bytes"].is_null());
  }
  SUBCASE("too few points, unsorted ones or a zero time are refused") {
    SweepResult r;
    r.options.vary = parse_vary("batch=1,2");
    SweepPoint pt;
    pt.value = pt.batch = 1;
    pt.median_ns = 1e3;
    r.points.push_back(pt);
    CHECK(contains(error_of([&] { analyse_sweep(r); }), "at least 2 points, got 1"));
    r.points.push_back(pt);
    CHECK(contains(error_of([&] { analyse_sweep(r); }), "ascending order"));
    r.points[1].value = r.points[1].batch = 2;
    r.points[1].median_ns = 0;
    CHECK(contains(error_of([&] { analyse_sweep(r); }), "has no time"));
  }
}
