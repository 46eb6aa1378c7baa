// Helpers shared by the benchmark programs that go through the tensor front end
// (kernels_bench, fused_bench, attention_bench): which variant really ran, and how far a result
// is from the reference (the cost counters are in bench_common.h).
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "profiler/cost.h"
#include "profiler/session.h"
#include "tensor/ops.h"
#include "tensor/tensor.h"

namespace prism::bench {

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

// The one check every front-end benchmark makes before it times anything: `call` ran `op` as
// `variant` (read from the profile: what really ran, after overrides and dtype fallbacks; an
// empty variant is a chain of ops, whose values alone are checked, and a null op checks the
// first op that names a variant), and `got` is within 1e-4 of `expected` (the float64 default
// variant's result) relative to its largest value. On a mismatch the benchmark is skipped with
// the reason, never timed.
inline bool validate(benchmark::State& state, const char* op, const char* variant,
                     const std::function<void()>& call, const Tensor& got, const Tensor& expected) {
  if (variant[0] != '\0') {
    const std::string used = recorded_variant(call, op);
    if (used != variant) {
      state.SkipWithError(("asked for " + std::string(op ? op : "the op") + " variant '" + variant +
                           "', the profile recorded '" + used + "'")
                              .c_str());
      return false;
    }
  }
  const double err = max_rel_error(got, expected);
  if (!(err < 1e-4)) {
    state.SkipWithError(("output differs from the float64 default variant: max error " +
                         std::to_string(err) + " of the largest value")
                            .c_str());
    return false;
  }
  return true;
}
// The same for a call that returns its result.
inline bool validate(benchmark::State& state, const char* op, const char* variant,
                     const std::function<Tensor()>& fn, const Tensor& expected) {
  return validate(
      state, op, variant, [&] { fn(); }, fn(), expected);
}

// The float64 copy reference results are computed on.
inline Tensor f64(const Tensor& t) {
  return cast(t, DType::f64);
}

}  // namespace prism::bench
