// Helpers shared by the benchmark programs that go through the tensor front end
// (kernels_bench, fused_bench, attention_bench): cost counters, which variant really ran, and
// how far a result is from the reference.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "profiler/cost.h"
#include "profiler/session.h"
#include "tensor/ops.h"
#include "tensor/tensor.h"

namespace prism::bench {

// FLOPs and bytes of one call as rates (Google Benchmark prints them per second: GFLOP/s, GB/s).
inline void report_cost(benchmark::State& state, const profiler::Cost& cost) {
  state.counters["FLOPs"] = benchmark::Counter(static_cast<double>(cost.flops),
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes"] = benchmark::Counter(static_cast<double>(cost.bytes),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

// The records of one profiled call of fn.
inline std::vector<profiler::OpRecord> records_of(const std::function<void()>& fn) {
  profiler::Session session;
  fn();
  return session.stop().recording.records;
}

// The variant recorded for the first call of `op` in one call of fn, or, with op == nullptr,
// for the first op record that names a variant ("" if none): what really ran, after overrides
// and dtype fallbacks.
inline std::string recorded_variant(const std::function<void()>& fn, const char* op = nullptr) {
  for (const auto& r : records_of(fn)) {
    if (r.kind != profiler::Kind::op) continue;
    if (op ? std::string(r.op) == op : r.variant[0] != '\0') return r.variant;
  }
  return "";
}

// max |got - want| / max |want|: the normalized error the lab and the tests use.
inline double max_rel_error(const Tensor& got, const Tensor& want) {
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  if (g.size() != w.size()) return INFINITY;
  double scale = 1e-30, err = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    scale = std::max(scale, std::abs(w[i]));
    err = std::max(err, std::abs(g[i] - w[i]));
  }
  return err / scale;
}

// The float64 copy reference results are computed on.
inline Tensor f64(const Tensor& t) {
  return cast(t, DType::f64);
}

}  // namespace prism::bench
