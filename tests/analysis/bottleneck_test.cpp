// The bottleneck map on synthetic windows with known answers: the ridge point's side, a
// memory-bound elementwise op at 90% of its roof, a compute-bound GEMM, a run waiting on data,
// a run of tiny ops, the optimizer's share, activation memory, and the path without peaks.
#include <doctest/doctest.h>

#include "analysis/bottleneck.h"
#include "analysis/model_bench.h"

using namespace prism;
using namespace prism::analysis;

namespace {

// A machine with exact figures at every thread count: 100 GFLOP/s; working sets up to 1 MB
// are served from "L2" at 200 GB/s (ridge 0.5 FLOP/B), larger ones from "DRAM" at 20 GB/s
// (ridge 5 FLOP/B).
Peaks test_peaks() {
  Peaks p;
  p.gflops = [](int) { return 100.0; };
  p.roof = [](int, double ws) {
    return ws <= 1e6 ? profiler::Roof{"L2", 200} : profiler::Roof{"DRAM", 20};
  };
  return p;
}

BottleneckSettings settings(bool peaks = true) {
  BottleneckSettings s;
  if (peaks) s.peaks = test_peaks();
  s.no_peaks_reason = "--no-peak";
  s.dispatch_ns = 950;  // with P = 50 below: T = 1000 ns
  s.lever.model = "mlp";
  s.lever.mode = "train";
  s.lever.batch = 16;
  s.lever.threads = 1;
  s.lever.data = "spirals";
  s.lever.lab_ops = {"matmul", "relu"};
  return s;
}

OpLoad op(const std::string& name, double calls, double self_ns, double flops, double bytes,
          const std::string& phase = "forward") {
  OpLoad o;
  o.name = name;
  o.phase = phase;
  o.variant = "optimized";
  o.calls = calls;
  o.self_ns = self_ns;
  o.flops = flops;
  o.bytes = bytes;
  return o;
}

WindowLoad window(std::vector<OpLoad> ops, double wall_ns, double data_ns = 0) {
  WindowLoad w;
  w.ops = std::move(ops);
  w.steps = 1;
  w.wall_ns = wall_ns;
  w.data_wait_ns = data_ns;
  w.profiler_overhead_ns = 50;
  return w;
}

const BoundRow& row(const BottleneckMap& m, const std::string& name) {
  for (const BoundRow& r : m.rows) {
    if (r.op.name == name) return r;
  }
  FAIL("no row " << name);
  return m.rows.front();
}

}  // namespace

TEST_CASE("bottleneck: an op exactly at the ridge point is compute-bound, just below it memory") {
  // 1e7 bytes per call (DRAM roof, ridge 100 / 20 = 5 FLOP/B). At the ridge both roofs give the
  // machine's peak: more bandwidth would not make it faster, so it counts as compute.
  const double bytes = 1e7;
  const BottleneckMap m = map_bottlenecks(
      window({op("at", 1, 1e6, 5 * bytes, bytes), op("below", 1, 1e6, 4.99 * bytes, bytes)}, 2e6),
      settings());
  const BoundRow& at = row(m, "at");
  CHECK(at.bound == Bound::compute);
  CHECK(at.ridge == doctest::Approx(5));
  CHECK(at.roof_level == "DRAM");
  CHECK(at.intensity == doctest::Approx(5));
  CHECK(row(m, "below").bound == Bound::memory);
}

TEST_CASE("bottleneck: a relu-like op (0.125 FLOP/B) at 90% of its roof is memory-bound") {
  // 8e6 bytes per call: DRAM, 20 GB/s. At 90% of it one call takes 8e6 / 18 ns.
  const double bytes = 8e6, ns = bytes / 18;
  const BottleneckMap m =
      map_bottlenecks(window({op("relu", 1, ns, 0.125 * bytes, bytes)}, ns), settings());
  const BoundRow& r = row(m, "relu");
  CHECK(r.bound == Bound::memory);
  CHECK(r.intensity == doctest::Approx(0.125));
  CHECK(r.roof_level == "DRAM");
  CHECK(r.roof_gbps == 20);
  CHECK(r.roof_fraction == doctest::Approx(0.9));
  // All of the step, near its roof: memory bandwidth, and the lever is less traffic.
  REQUIRE(!m.verdicts.empty());
  CHECK(m.verdicts[0].kind == "memory bandwidth");
  CHECK(m.verdicts[0].share == doctest::Approx(1));
  CHECK(m.verdicts[0].lever.find("fused kernels") != std::string::npos);
  CHECK(m.verdicts[0].command == "prism lab relu --threads 1");
}

TEST_CASE("bottleneck: the working set picks the roof: the same op in cache has a lower ridge") {
  // 4e5 bytes per call fits the 1 MB "L2": ridge 100 / 200 = 0.5, so 2 FLOP/B is compute-bound
  // there though it would be memory-bound against DRAM's ridge of 5.
  const BottleneckMap m =
      map_bottlenecks(window({op("x", 10, 1e5, 10 * 8e5, 10 * 4e5)}, 1e5), settings());
  const BoundRow& r = row(m, "x");
  CHECK(r.roof_level == "L2");
  CHECK(r.ridge == doctest::Approx(0.5));
  CHECK(r.bound == Bound::compute);
}

TEST_CASE(
    "bottleneck: a GEMM far above the ridge is compute-bound, and near peak the lever is FLOPs") {
  // 256^3 GEMM: 2 * 256^3 FLOPs over 3 * 256^2 * 4 bytes = 42.7 FLOP/B, at 80% of 100 GFLOP/s.
  const double flops = 2.0 * 256 * 256 * 256, bytes = 3.0 * 256 * 256 * 4, ns = flops / 80;
  const BottleneckMap m =
      map_bottlenecks(window({op("matmul", 1, ns, flops, bytes)}, ns), settings());
  const BoundRow& r = row(m, "matmul");
  CHECK(r.bound == Bound::compute);
  CHECK(r.intensity == doctest::Approx(42.6667).epsilon(1e-4));
  CHECK(r.roof_fraction == doctest::Approx(0.8));
  REQUIRE(m.verdicts.size() == 1);
  CHECK(m.verdicts[0].kind == "compute");
  CHECK(m.verdicts[0].fired);
  CHECK(m.verdicts[0].command == "prism summary mlp");

  // The same GEMM at 10% of peak: a better kernel, tried in the lab.
  const BottleneckMap slow =
      map_bottlenecks(window({op("matmul", 1, flops / 10, flops, bytes)}, flops / 10), settings());
  CHECK(slow.verdicts[0].lever.find("a better kernel") != std::string::npos);
  CHECK(slow.verdicts[0].command == "prism lab matmul --threads 1");
}

TEST_CASE("bottleneck: a run that waits on data 60% of the step is input-pipeline-bound first") {
  // Per step: 600 us waiting for the batch, 300 us in a GEMM, 100 us between ops.
  const double flops = 2.4e7, bytes = 1e5;  // 240 FLOP/B, 80 GFLOP/s over 300 us
  const BottleneckMap m =
      map_bottlenecks(window({op("matmul", 1, 3e5, flops, bytes)}, 1e6, 6e5), settings());
  CHECK(m.share(m.data_wait_ns) == doctest::Approx(0.6));
  REQUIRE(m.verdicts.size() == 2);
  CHECK(m.verdicts[0].kind == "input pipeline");
  CHECK(m.verdicts[0].share == doctest::Approx(0.6));
  CHECK(m.verdicts[0].command ==
        "prism bench mlp --mode train --model-off --data spirals --batch 16 --threads 1");
  CHECK(m.verdicts[1].kind == "compute");  // 30%: at its threshold, ranked second
  CHECK(m.verdicts[1].share == doctest::Approx(0.3));
}

TEST_CASE("bottleneck: a run of tiny ops is kernel overhead, under a strict threshold of D + P") {
  // 200 calls of 500 ns (under T = 1000 ns) and one op exactly at T: 100 us + 1 us of ops in a
  // step of 150 us, so 49 us between ops, minus the profiler's 201 records x 50 ns.
  std::vector<OpLoad> ops{op("add", 200, 200 * 500.0, 200 * 16.0, 200 * 48.0),
                          op("mul", 1, 1000, 16, 48)};
  WindowLoad w = window(ops, 1.5e5);
  w.records = 201;
  const BottleneckMap m = map_bottlenecks(w, settings());
  CHECK(m.threshold_ns == 1000);
  CHECK(row(m, "add").bound == Bound::overhead);
  CHECK(row(m, "mul").bound != Bound::overhead);  // exactly at T: not under it
  CHECK(m.overhead_calls == 200);
  CHECK(m.op_calls == 201);
  CHECK(m.overhead_mean_ns == doctest::Approx(500));
  CHECK(m.profiler_ns == doctest::Approx(201 * 50.0));
  CHECK(m.outside_ns == doctest::Approx(1.5e5 - 1.01e5 - 201 * 50.0));
  REQUIRE(!m.verdicts.empty());
  CHECK(m.verdicts[0].kind == "kernel overhead");
  // Overhead-bound ops plus the framework between ops.
  CHECK(m.verdicts[0].share == doctest::Approx((1e5 + m.outside_ns) / 1.5e5));
  CHECK(m.verdicts[0].command ==
        "prism bench mlp --mode train --data spirals --batch 16,64 --threads 1");
}

TEST_CASE("bottleneck: the optimizer's share of the step is reported") {
  const BottleneckMap m = map_bottlenecks(
      window({op("matmul", 1, 8e5, 8e7, 1e5), op("sgd_update", 2, 2e5, 4e5, 2.4e6, "optimizer")},
             1e6),
      settings());
  CHECK(m.share(m.optimizer_ns) == doctest::Approx(0.2));
  CHECK(bottleneck_json(m)["shares"]["optimizer"].get<double>() == doctest::Approx(0.2));
  CHECK(format_bottleneck(m).find("optimizer: 20.0% of the step") != std::string::npos);
}

TEST_CASE("bottleneck: per-step figures divide the window by its steps") {
  WindowLoad w = window({op("matmul", 10, 5e6, 1e9, 1e6)}, 1e7, 2e6);
  w.steps = 5;
  const BottleneckMap m = map_bottlenecks(w, settings());
  CHECK(m.step_ns == 2e6);
  CHECK(m.data_wait_ns == 4e5);
  CHECK(m.rows[0].op.calls == 2);
  CHECK(m.rows[0].mean_ns == 5e5);  // per call, not per step
}

TEST_CASE("bottleneck: activation memory fires when activations dominate a peak near the budget") {
  BottleneckSettings s = settings();
  s.tracked_peak_bytes = 6'000'000'000;
  s.activation_peak_bytes = 4'000'000'000;
  s.memory_budget_bytes = 8'000'000'000;
  const WindowLoad w = window({op("matmul", 1, 8e5, 8e7, 1e5)}, 1e6);
  BottleneckMap m = map_bottlenecks(w, s);
  REQUIRE(m.verdicts.size() == 2);
  CHECK(m.verdicts.back().kind == "activation memory");  // after the time verdicts
  CHECK(m.verdicts.back().share == doctest::Approx(0.75));
  CHECK(m.verdicts.back().command ==
        "prism bench mlp --mode train --data spirals --batch 8,16 --threads 1");
  s.memory_budget_bytes = 16'000'000'000;  // the peak is 37.5% of it: no verdict
  m = map_bottlenecks(w, s);
  CHECK(m.verdicts.size() == 1);
}

TEST_CASE("bottleneck: without peaks only overhead is classed, and the report says why") {
  const BottleneckMap m = map_bottlenecks(
      window({op("matmul", 1, 8e5, 8e7, 1e5), op("add", 100, 5e4, 1600, 4800)}, 1e6),
      settings(/*peaks=*/false));
  CHECK(!m.has_peaks);
  CHECK(row(m, "matmul").bound == Bound::undetermined);
  CHECK(row(m, "add").bound == Bound::overhead);
  for (const BottleneckVerdict& v : m.verdicts) {
    CHECK(v.kind != "compute");
    CHECK(v.kind != "memory bandwidth");
  }
  const std::string text = format_bottleneck(m);
  CHECK(text.find("memory- and compute-bound cannot be told apart without the machine's figures "
                  "(--no-peak)") != std::string::npos);
  // Nothing crosses a threshold (overhead 5% + 15% between ops): the largest is named, marked.
  REQUIRE(m.verdicts.size() == 1);
  CHECK(m.verdicts[0].kind == "kernel overhead");
  CHECK(!m.verdicts[0].fired);
  CHECK(text.find("below its threshold") != std::string::npos);
}

TEST_CASE("bottleneck: the window of a profile: data scopes, ops inside them, self times") {
  // step: [data scope 0-300 holding an op 100-200] [matmul 300-800 holding add 400-500]
  profiler::Profile p;
  p.recording.start_ns = 0;
  p.recording.stop_ns = 1000;
  p.meta.overhead_ns_per_op = 40;
  auto rec = [&](profiler::Kind kind, const char* name, int32_t parent, int64_t start,
                 int64_t dur) {
    profiler::OpRecord r;
    r.kind = kind;
    r.op = name;
    r.parent = parent;
    r.start_ns = start;
    r.dur_ns = dur;
    r.cost.flops = 10;
    r.cost.bytes = 20;
    p.recording.records.push_back(r);
  };
  rec(profiler::Kind::scope, "data", -1, 0, 300);
  rec(profiler::Kind::op, "copy", 0, 100, 100);
  rec(profiler::Kind::op, "matmul", -1, 300, 500);
  rec(profiler::Kind::op, "add", 2, 400, 100);
  const WindowLoad w = window_load(p, 1);
  CHECK(w.wall_ns == 1000);
  CHECK(w.data_wait_ns == 300);
  CHECK(w.records == 4);
  CHECK(w.profiler_overhead_ns == 40);
  REQUIRE(w.ops.size() == 2);  // the copy inside the data scope is data wait
  CHECK(w.ops[0].name == "matmul");
  CHECK(w.ops[0].self_ns == 400);  // 500 minus the nested add
  CHECK(w.ops[1].name == "add");
  CHECK(w.ops[1].self_ns == 100);
  CHECK(w.ops[1].flops == 10);
}

TEST_CASE("bottleneck: the JSON object carries rows, shares and ranked verdicts") {
  const double bytes = 8e6;
  const BottleneckMap m = map_bottlenecks(
      window({op("relu", 1, bytes / 18, bytes / 8, bytes)}, bytes / 18 * 1.25), settings());
  const nlohmann::ordered_json j = bottleneck_json(m);
  CHECK(j["has_peaks"] == true);
  CHECK(j["threshold_ns"] == 1000.0);
  REQUIRE(j["rows"].size() == 1);
  CHECK(j["rows"][0]["bound"] == "memory");
  CHECK(j["rows"][0]["roof_level"] == "DRAM");
  CHECK(j["shares"]["memory"].get<double>() == doctest::Approx(0.8));
  CHECK(j["verdicts"][0]["kind"] == "memory bandwidth");
}

TEST_CASE("bottleneck: --model-off's verdict compares the loader's rate with the model's") {
  PipelinePoint p;
  p.batch = 8;
  p.samples_per_s = 1000;
  p.model_samples_per_s = 500;
  CHECK(pipeline_verdict(p, BenchMode::train) ==
        "batch 8: the loader delivers 1000 samples/s; the model's training step consumes 500 "
        "samples/s: the loader is 2.0 times faster: it does not limit the run\n");
  p.model_samples_per_s = 800;  // 1.25x: keeps up, barely
  CHECK(pipeline_verdict(p, BenchMode::infer)
            .find("the loader is 1.2 times faster, with little to spare") != std::string::npos);
  p.model_samples_per_s = 4000;  // the loader is the limit
  CHECK(pipeline_verdict(p, BenchMode::train)
            .find("the loader is 4.0 times slower: it limits the run") != std::string::npos);
  p.model_samples_per_s = 0;  // no model figure: the loader's rate alone
  CHECK(pipeline_verdict(p, BenchMode::train) == "batch 8: the loader delivers 1000 samples/s\n");
}

TEST_CASE("bottleneck: ops that ran on fewer threads than the run had are named, with why") {
  BottleneckSettings s = settings();
  s.lever.threads = 2;
  s.peaks->region_ns = [](int threads) { return threads == 2 ? 1000.0 : 0.0; };
  OpLoad gemm = op("matmul", 10, 800e3, 1e9, 1e7);
  gemm.threads = 2;
  OpLoad small = op("add", 100, 500e3, 1e5, 1e6);  // 5 us a call: 5 region costs
  small.threads = 1;
  OpLoad long_serial = op("zeros", 2, 200e3, 0, 1e6);  // 100 us a call: 100 region costs
  long_serial.threads = 1;
  OpLoad tiny = op("mul", 1, 1e3, 1e3, 1e3);  // 0.1% of the step: not listed
  tiny.threads = 1;
  const BottleneckMap m = map_bottlenecks(window({gemm, small, long_serial, tiny}, 1.6e6), s);
  CHECK(m.threads == 2);
  CHECK(m.region_ns == 1000);
  REQUIRE(m.unsplit.size() == 2);
  CHECK(m.rows[m.unsplit[0]].op.name == "add");  // largest first
  CHECK(m.rows[m.unsplit[1]].op.name == "zeros");
  const std::string text = format_bottleneck(m);
  CHECK(text.find("ops that did not use all 2 threads") != std::string::npos);
  CHECK(text.find("a parallel region costs 1.00 us here") != std::string::npos);
  CHECK(text.find("add forward: 1 of 2 threads, 100 calls of 5.00 us") != std::string::npos);
  CHECK(text.find("5 region costs a call: too short to gain from a split") != std::string::npos);
  CHECK(text.find("100 region costs a call, long enough to gain, but its kernel did not split") !=
        std::string::npos);
  CHECK(text.find("mul forward: 1 of 2") == std::string::npos);
  CHECK(bottleneck_json(m)["region_ns"] == 1000.0);
  // One thread: nothing to say about threads.
  s.lever.threads = 1;
  CHECK(map_bottlenecks(window({gemm, small}, 1.4e6), s).unsplit.empty());
}
