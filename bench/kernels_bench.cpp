// CPU kernel variants, called through the tensor front end as a user would call them, under a
// scoped override (`kernels::Use guard(op, variant)`), with the cost formulas of kernels/costs.h
// as counters: FLOPs=...G/s is GFLOP/s and bytes=...G/s is GB/s of minimum traffic.
//
// Validate first, then time (llm.c): before timing, each benchmark checks that the variant asked
// for is the one the profiler records, and that its output matches a float64 run of the op's
// default variant (Eigen for matmul, softmax and sum; the naive loop for elementwise ops).
//
// Run (docs/PERFORMANCE.md):
//   OMP_NUM_THREADS=1 ./prism_bench_kernels --benchmark_repetitions=9
//       --benchmark_report_aggregates_only=true      (one command line)
// Eigen's GEMM uses OpenMP threads: compare OMP_NUM_THREADS=1 and 2 for matmul/reference, with
// PRISM_BENCH_WALL_TIME=1 (the counters default to the main thread's CPU time, bench_common.h,
// which cannot show a multi-threaded speed-up).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "bench/bench_tensor.h"
#include "kernels/ops/elementwise/op.h"
#include "kernels/ops/matmul/op.h"
#include "kernels/ops/reduce/op.h"
#include "kernels/ops/softmax/op.h"
#include "kernels/registry.h"
#include "profiler/session.h"
#include "tensor/ops.h"

namespace {

using prism::bench::max_rel_error;
using prism::bench::recorded_variant;
using prism::bench::report_cost;
using prism::bench::validate;

using prism::Dims;
using prism::DType;
using prism::Tensor;
using prism::profiler::Cost;

// ---- matmul ---------------------------------------------------------------------------------

void BM_Matmul(benchmark::State& state, const char* variant) {
  const int64_t n = state.range(0);
  Tensor a = prism::randn({n, n}), b = prism::randn({n, n});
  auto ref = [&] { return prism::matmul(prism::cast(a, DType::f64), prism::cast(b, DType::f64)); };
  const Tensor expected = ref();
  prism::kernels::Use guard("matmul", variant);
  auto run = [&] { return prism::matmul(a, b); };
  if (!validate(state, nullptr, variant, run, expected)) return;
  for (auto _ : state) {
    Tensor c = run();
    benchmark::DoNotOptimize(c.data<float>());
    benchmark::ClobberMemory();
  }
  report_cost(state, prism::costs::matmul(a.shape(), b.shape(), a.element_size()));
}
BENCHMARK_CAPTURE(BM_Matmul, naive, "naive")
    ->ArgName("n")
    ->Arg(64)
    ->Arg(128)
    ->Arg(256)
    ->Arg(512)
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_Matmul, reference, "reference")
    ->ArgName("n")
    ->Arg(64)
    ->Arg(128)
    ->Arg(256)
    ->Arg(512)
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);

// ---- softmax over the last dim of [256, 1024] ---------------------------------------------

void BM_Softmax(benchmark::State& state, const char* variant) {
  Tensor x = prism::randn({256, 1024});
  auto ref = [&] { return prism::softmax(prism::cast(x, DType::f64), -1); };
  const Tensor expected = ref();
  prism::kernels::Use guard("softmax", variant);
  auto run = [&] { return prism::softmax(x, -1); };
  if (!validate(state, nullptr, variant, run, expected)) return;
  for (auto _ : state) {
    Tensor y = run();
    benchmark::DoNotOptimize(y.data<float>());
    benchmark::ClobberMemory();
  }
  report_cost(state, prism::costs::softmax(x.numel(), x.element_size()));
}
BENCHMARK_CAPTURE(BM_Softmax, naive, "naive")
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_Softmax, reference, "reference")
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);

// ---- sum of each row of [1024, 1024] --------------------------------------------------------

void BM_SumRows(benchmark::State& state, const char* variant) {
  Tensor x = prism::randn({1024, 1024});
  auto ref = [&] { return prism::sum(prism::cast(x, DType::f64), {-1}); };
  const Tensor expected = ref();
  prism::kernels::Use guard("sum", variant);
  auto run = [&] { return prism::sum(x, {-1}); };
  if (!validate(state, nullptr, variant, run, expected)) return;
  for (auto _ : state) {
    Tensor y = run();
    benchmark::DoNotOptimize(y.data<float>());
    benchmark::ClobberMemory();
  }
  report_cost(state,
              prism::costs::reduce(x.numel(), x.shape()[0], x.element_size(), x.element_size()));
}
BENCHMARK_CAPTURE(BM_SumRows, naive, "naive")
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_SumRows, reference, "reference")
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_SumRows, optimized, "optimized")
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);

// ---- elementwise on 1M elements (only a naive variant exists today) ---------------------------

constexpr int64_t kElems = 1 << 20;

void BM_Add(benchmark::State& state) {
  Tensor a = prism::randn({kElems}), b = prism::randn({kElems});
  auto ref = [&] { return prism::add(prism::cast(a, DType::f64), prism::cast(b, DType::f64)); };
  const Tensor expected = ref();
  prism::kernels::Use guard("add", "naive");
  auto run = [&] { return prism::add(a, b); };
  if (!validate(state, nullptr, "naive", run, expected)) return;
  for (auto _ : state) {
    Tensor y = run();
    benchmark::DoNotOptimize(y.data<float>());
    benchmark::ClobberMemory();
  }
  report_cost(state,
              prism::costs::elementwise(a.shape(), 1, a.nbytes() + b.nbytes(), a.element_size()));
}
BENCHMARK(BM_Add)
    ->Name("BM_Add/naive")
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);

// Unary ops: flops_per_elem is the constant tensor/ops/elementwise.cpp uses for the op.
void BM_Unary(benchmark::State& state, const char* op, Tensor (*fn)(const Tensor&),
              int flops_per_elem) {
  Tensor x = prism::randn({kElems});
  auto ref = [&] { return fn(prism::cast(x, DType::f64)); };
  const Tensor expected = ref();
  prism::kernels::Use guard(op, "naive");
  auto run = [&] { return fn(x); };
  if (!validate(state, nullptr, "naive", run, expected)) return;
  for (auto _ : state) {
    Tensor y = run();
    benchmark::DoNotOptimize(y.data<float>());
    benchmark::ClobberMemory();
  }
  report_cost(state,
              prism::costs::elementwise(x.shape(), flops_per_elem, x.nbytes(), x.element_size()));
}
BENCHMARK_CAPTURE(BM_Unary, exp_naive, "exp", &prism::exp, 1)
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_Unary, gelu_naive, "gelu", &prism::gelu, 8)
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);

}  // namespace

BENCHMARK_MAIN();
