// Helpers shared by the benchmark programs.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "profiler/cost.h"

namespace prism::bench {

// Applied to every benchmark (->Apply(prism::bench::configure)):
//   - adds min and max to the aggregates printed with --benchmark_repetitions, beside Google
//     Benchmark's mean, median, stddev and cv, so a report can quote a median with its range;
//   - picks the clock the counters (per_op, FLOPs, bytes) are computed from. By default it is
//     the main thread's CPU time, which on a shared machine leaves out the time a co-tenant had
//     the core; PRISM_BENCH_WALL_TIME=1 switches to wall time, which multi-threaded runs need
//     for a speed-up (the main thread's CPU time does not see the other threads' work).
inline void configure(benchmark::internal::Benchmark* b) {
  b->ComputeStatistics(
      "min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
  b->ComputeStatistics(
      "max", [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); });
  const char* wall = std::getenv("PRISM_BENCH_WALL_TIME");
  if (wall && wall[0] != '\0' && wall[0] != '0') b->UseRealTime();
}

// FLOPs and bytes of one call as rates (Google Benchmark prints them per second: GFLOP/s, GB/s).
inline void report_cost(benchmark::State& state, const profiler::Cost& cost) {
  state.counters["FLOPs"] = benchmark::Counter(static_cast<double>(cost.flops),
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes"] = benchmark::Counter(static_cast<double>(cost.bytes),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace prism::bench
