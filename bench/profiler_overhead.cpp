// What the profiler costs per op: the acceptance figures of docs/PERFORMANCE.md.
//
//   (a) recording OFF: an OpRecordScope (what every op front end builds) with no session.
//       Target: <= 2 ns per op above an empty loop.
//   (b) recording ON: one record opened and closed through OpRecordScope with two 2-D input
//       shapes, as matmul records it. Target: <= 100 ns per op.
//   (c) end to end: add of two 1-element tensors, with and without a session; the difference
//       is what recording adds to a real (tiny) op, memory samples included.
// Plus the parts that explain (b): one clock read, and open_op/close_op called directly.
//
// Every benchmark runs kOpsPerIter ops per iteration and reports the counter per_op (time per
// op; the console prints it in seconds with an SI prefix, "38.2ns"). While recording, the
// session is stopped and restarted between iterations with the timer paused, so the buffer
// holds at most kOpsPerIter records and never grows inside the timed region: what is timed is
// the steady state of a long profile, not vector reallocation.
//
// per_op comes from the thread's CPU time (bench_common.h; the Time column beside it is wall
// time). Everything here runs on one thread, and on a shared 2-core machine CPU time leaves out
// the stretches when a co-tenant had the core, which wall time would count as ours.
//
// Run (docs/PERFORMANCE.md):
//   OMP_NUM_THREADS=1 ./prism_bench_profiler --benchmark_repetitions=9
//       --benchmark_report_aggregates_only=true      (one command line)
#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>
#include <string>

#include "bench/alloc_counter.h"
#include "bench/bench_common.h"
#include "kernels/ops/matmul/op.h"
#include "profiler/clock.h"
#include "profiler/recorder.h"
#include "profiler/session.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"

namespace {

using prism::Tensor;
using prism::profiler::Session;

constexpr int kOpsPerIter = 4096;  // the recorder's initial per-thread reservation

// Time per op, from the iteration time: value = 1 / (ops per second).
void report_per_op(benchmark::State& state, int64_t ops_per_iter) {
  state.counters["per_op"] = benchmark::Counter(
      static_cast<double>(ops_per_iter),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.SetItemsProcessed(state.iterations() * ops_per_iter);
}

// A session that can be restarted between iterations with the timer paused.
class RestartableSession {
 public:
  RestartableSession() { session_.emplace(); }
  void restart() {
    session_.reset();  // stops it and drops the records
    session_.emplace();
  }

 private:
  std::optional<Session> session_;
};

// ---- (a) recording off -----------------------------------------------------------------------

// The baseline: the same loop with nothing in it but an object the compiler must keep.
void BM_EmptyLoop(benchmark::State& state) {
  for (auto _ : state) {
    for (int i = 0; i < kOpsPerIter; ++i) {
      int32_t handle = -1;
      benchmark::DoNotOptimize(handle);
    }
    benchmark::ClobberMemory();
  }
  report_per_op(state, kOpsPerIter);
}
BENCHMARK(BM_EmptyLoop)->Apply(prism::bench::configure);

// What every op front end pays when no session records: the scope's constructor and destructor.
void BM_OpRecordScope_Off(benchmark::State& state) {
  Tensor a = prism::randn({64, 128}), b = prism::randn({128, 32});
  if (prism::profiler::recording()) state.SkipWithError("a session is recording");
  for (auto _ : state) {
    for (int i = 0; i < kOpsPerIter; ++i) {
      prism::detail::OpRecordScope rec("matmul", "naive", prism::Device::cpu, {&a, &b}, [&] {
        return prism::costs::matmul(a.shape(), b.shape(), a.element_size());
      });
      benchmark::DoNotOptimize(rec);
    }
    benchmark::ClobberMemory();
  }
  report_per_op(state, kOpsPerIter);
}
BENCHMARK(BM_OpRecordScope_Off)->Apply(prism::bench::configure);

// A named scope (what a module call opens) with no session: not an op, shown for comparison.
// The scope path is interned on every construction (a mutex and a map lookup keyed by a
// std::string), so a name longer than the 15-character small-string buffer also allocates.
void BM_NamedScope_Off(benchmark::State& state, const char* name) {
  for (auto _ : state) {
    for (int i = 0; i < kOpsPerIter; ++i) {
      prism::profiler::Scope scope(name);
      benchmark::DoNotOptimize(scope);
    }
    benchmark::ClobberMemory();
  }
  report_per_op(state, kOpsPerIter);
}
BENCHMARK_CAPTURE(BM_NamedScope_Off, short_name, "fc1")->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_NamedScope_Off, long_name, "encoder_layer_attention")
    ->Apply(prism::bench::configure);

// ---- (b) recording on ------------------------------------------------------------------------

// One read of the profiler's clock: a record takes two.
void BM_ClockRead(benchmark::State& state) {
  for (auto _ : state) {
    for (int i = 0; i < kOpsPerIter; ++i) benchmark::DoNotOptimize(prism::profiler::now_ns());
  }
  report_per_op(state, kOpsPerIter);
}
BENCHMARK(BM_ClockRead)->Apply(prism::bench::configure);

// Runs `op` n = state.range(0) times per iteration while a session records, restarting the
// session between iterations with the timer paused. One untimed batch runs first, so the record
// and memory-sample buffers have already grown to hold n ops: no reallocation is timed.
template <class Op>
void run_while_recording(benchmark::State& state, Op&& op) {
  const int64_t n = state.range(0);
  RestartableSession session;
  for (int64_t i = 0; i < n; ++i) op();
  session.restart();
  for (auto _ : state) {
    for (int64_t i = 0; i < n; ++i) op();
    state.PauseTiming();
    session.restart();
    state.ResumeTiming();
  }
  report_per_op(state, n);
}

// open_op + close_op called directly with a ready-made shape list: the recorder alone.
void BM_OpenClose_Direct_On(benchmark::State& state) {
  prism::profiler::ShapeList shapes;
  const int64_t da[2] = {64, 128}, db[2] = {128, 32};
  shapes.add(da, 2);
  shapes.add(db, 2);
  const prism::profiler::Cost cost{2 * 64 * 128 * 32, 64 * 128 * 32,
                                   4 * (64 * 128 + 128 * 32 + 64 * 32)};
  run_while_recording(state, [&] {
    int32_t h = prism::profiler::open_op("matmul", "naive", "cpu", cost, shapes);
    benchmark::DoNotOptimize(h);
    prism::profiler::close_op(h);
  });
}
BENCHMARK(BM_OpenClose_Direct_On)
    ->ArgName("ops_per_session")
    ->Arg(kOpsPerIter)
    ->Apply(prism::bench::configure);

// The acceptance figure: OpRecordScope as an op front end uses it, two 2-D inputs, the cost
// formula evaluated, while a session records. 4096 records per session fit the recorder's
// initial reservation; 65536 (21 MB of records) shows a long profile that streams to memory.
void BM_OpRecordScope_On(benchmark::State& state) {
  Tensor a = prism::randn({64, 128}), b = prism::randn({128, 32});
  run_while_recording(state, [&] {
    prism::detail::OpRecordScope rec("matmul", "naive", prism::Device::cpu, {&a, &b}, [&] {
      return prism::costs::matmul(a.shape(), b.shape(), a.element_size());
    });
    benchmark::DoNotOptimize(rec);
  });
}
BENCHMARK(BM_OpRecordScope_On)
    ->ArgName("ops_per_session")
    ->Arg(kOpsPerIter)
    ->Arg(16 * kOpsPerIter)
    ->Apply(prism::bench::configure);

// ---- (c) end to end: a tiny real op ---------------------------------------------------------

// add of two 1-element tensors: front end, registry, allocation, kernel, autograd check.
void BM_Add1_NoSession(benchmark::State& state) {
  Tensor a = prism::ones({1}), b = prism::ones({1});
  for (auto _ : state) {
    for (int i = 0; i < kOpsPerIter; ++i) {
      Tensor y = prism::add(a, b);
      benchmark::DoNotOptimize(y);
    }
  }
  report_per_op(state, kOpsPerIter);
}
BENCHMARK(BM_Add1_NoSession)->Apply(prism::bench::configure);

// The same while recording: one op record plus two memory samples (the output's allocation
// and, when y goes out of scope, its free).
void BM_Add1_Session(benchmark::State& state) {
  Tensor a = prism::ones({1}), b = prism::ones({1});
  run_while_recording(state, [&] {
    Tensor y = prism::add(a, b);
    benchmark::DoNotOptimize(y);
  });
}
BENCHMARK(BM_Add1_Session)
    ->ArgName("ops_per_session")
    ->Arg(kOpsPerIter)
    ->Apply(prism::bench::configure);

// Heap allocations made by one add of 1-element tensors, off and on (steady state).
void add_allocation_context() {
  Tensor a = prism::ones({1}), b = prism::ones({1});
  auto count = [&] {
    constexpr int kN = 1000;
    for (int i = 0; i < kN; ++i) benchmark::DoNotOptimize(prism::add(a, b));  // warm up
    const int64_t before = prism::bench::heap_allocs_on_this_thread();
    for (int i = 0; i < kN; ++i) benchmark::DoNotOptimize(prism::add(a, b));
    return static_cast<double>(prism::bench::heap_allocs_on_this_thread() - before) / kN;
  };
  const double off = count();
  double on = 0;
  {
    Session session;
    on = count();
  }
  benchmark::AddCustomContext("heap_allocs_per_add_off", std::to_string(off));
  benchmark::AddCustomContext("heap_allocs_per_add_on", std::to_string(on));
  benchmark::AddCustomContext("sizeof_OpRecord_bytes",
                              std::to_string(sizeof(prism::profiler::OpRecord)));
  benchmark::AddCustomContext("recorder_self_calibration_ns",
                              std::to_string(prism::profiler::record_overhead_ns()));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  add_allocation_context();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
