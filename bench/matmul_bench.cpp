// The matmul ladder: each CPU variant's kernel called directly through the registry on raw
// buffers (no tensor front end, no allocation in the timed loop), float32, inputs uniform in
// [-1, 1]. Counters: FLOPs = 2 m n k per call and bytes = A + B + C, both as rates, so
// FLOPs=...G/s is GFLOP/s.
//
//   BM_MatmulSquare/<variant>/n:N     C = A @ B, all n x n row-major (naive only up to 512)
//   BM_MatmulAT/<variant>/n:N         C = A^T @ B, A^T a transposed view (unit row stride)
//   BM_MatmulBT/<variant>/n:N         C = A @ B^T, B^T a transposed view
//   BM_MatmulMLP/<variant>/shape:S    the products of a 784-256-10 MLP step on a batch of 128,
//                                     in the layouts prism's Linear and its backward use
//
// Validate, then time: before timing, each benchmark checks 61 sampled elements of C against a
// float64 dot product (error within 2 (k + 1) eps of the sum of magnitudes) and skips with the
// reason if one is off.
//
// Run (docs/PERFORMANCE.md, "Matmul ladder"):
//   OMP_NUM_THREADS=1 ./prism_bench_matmul --benchmark_repetitions=9
//       --benchmark_report_aggregates_only=true                          (one command line)
//   PRISM_BENCH_WALL_TIME=1 OMP_NUM_THREADS=2 ./prism_bench_matmul ...   (2 threads: wall time,
//       since the counters otherwise use the main thread's CPU time, bench/bench_common.h)
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "kernels/args.h"
#include "kernels/registry.h"

namespace {

using prism::kernels::MatmulArgs;

// One product's buffers: A (m x k) and B (k x n) stored row-major or transposed, C contiguous.
struct Product {
  int64_t m, n, k;
  std::vector<float> a, b, c;
  MatmulArgs<float> args{};

  Product(int64_t m_, int64_t n_, int64_t k_, bool a_transposed, bool b_transposed)
      : m(m_), n(n_), k(k_), a(m_ * k_), b(k_ * n_), c(m_ * n_) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (float& x : a) x = uniform(rng);
    for (float& x : b) x = uniform(rng);
    args.a = a.data();
    args.b = b.data();
    args.c = c.data();
    args.batch = 1;
    args.m = m, args.n = n, args.k = k;
    // A transposed view of a contiguous matrix: its rows are adjacent in memory.
    args.a_rs = a_transposed ? 1 : k, args.a_cs = a_transposed ? m : 1;
    args.b_rs = b_transposed ? 1 : n, args.b_cs = b_transposed ? k : 1;
  }

  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  double bytes() const { return 4.0 * double(m * k + k * n + m * n); }

  // An empty string if C matches float64 dot products at 61 sampled positions.
  std::string check() const {
    std::mt19937 rng(7);
    const double eps = std::numeric_limits<float>::epsilon();
    for (int s = 0; s < 61; ++s) {
      const int64_t i = int64_t(rng() % m), j = int64_t(rng() % n);
      double want = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double x =
            double(a[i * args.a_rs + p * args.a_cs]) * double(b[p * args.b_rs + j * args.b_cs]);
        want += x;
        magnitude += std::abs(x);
      }
      const double got = c[i * n + j];
      if (!(std::abs(got - want) <= 2.0 * double(k + 1) * eps * magnitude)) {
        return "C[" + std::to_string(i) + "," + std::to_string(j) + "] = " + std::to_string(got) +
               ", float64 gives " + std::to_string(want);
      }
    }
    return "";
  }
};

void run(benchmark::State& state, const char* variant, Product& p) {
  auto* kernel = prism::kernels::registry()
                     .at("matmul", prism::Device::cpu)
                     .at(variant)
                     .get<MatmulArgs, float>();
  kernel(p.args);
  const std::string error = p.check();
  if (!error.empty()) {
    state.SkipWithError(("wrong result: " + error).c_str());
    return;
  }
  for (auto _ : state) {
    kernel(p.args);
    benchmark::DoNotOptimize(p.c.data());
    benchmark::ClobberMemory();
  }
  state.counters["FLOPs"] =
      benchmark::Counter(p.flops(), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes"] =
      benchmark::Counter(p.bytes(), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_MatmulSquare(benchmark::State& state, const char* variant) {
  const int64_t n = state.range(0);
  Product p(n, n, n, false, false);
  run(state, variant, p);
}

void BM_MatmulAT(benchmark::State& state, const char* variant) {
  const int64_t n = state.range(0);
  Product p(n, n, n, true, false);
  run(state, variant, p);
}

void BM_MatmulBT(benchmark::State& state, const char* variant) {
  const int64_t n = state.range(0);
  Product p(n, n, n, false, true);
  run(state, variant, p);
}

// A 784-256-10 MLP on a batch of 128. Linear computes y = x @ W^T with W^T a transposed view
// of the [out, in] weight; backward computes dW = g^T @ x (g^T a view) and dx = g @ W.
struct MlpShape {
  const char* label;
  int64_t m, n, k;
  bool a_transposed, b_transposed;
};
const MlpShape kMlpShapes[] = {
    {"fc1 forward: x[128,784] @ W1^T[784,256]", 128, 256, 784, false, true},
    {"fc1 dW: g^T[256,128] @ x[128,784]", 256, 784, 128, true, false},
    {"fc2 forward: h[128,256] @ W2^T[256,10]", 128, 10, 256, false, true},
    {"fc2 dW: g^T[10,128] @ h[128,256]", 10, 256, 128, true, false},
    {"fc2 dx: g[128,10] @ W2[10,256]", 128, 256, 10, false, false},
    {"hidden dx: g[128,256] @ W[256,784]", 128, 784, 256, false, false},
};

void BM_MatmulMLP(benchmark::State& state, const char* variant) {
  const MlpShape& s = kMlpShapes[state.range(0)];
  Product p(s.m, s.n, s.k, s.a_transposed, s.b_transposed);
  state.SetLabel(s.label);
  run(state, variant, p);
}

void mlp_shapes(benchmark::internal::Benchmark* b) {
  b->ArgName("shape");
  for (int64_t i = 0; i < int64_t(std::size(kMlpShapes)); ++i) b->Arg(i);
}

}  // namespace

BENCHMARK_CAPTURE(BM_MatmulSquare, naive, "naive")
    ->ArgName("n")
    ->Arg(256)
    ->Arg(512)
    ->Unit(benchmark::kMillisecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_MatmulSquare, reordered, "reordered")
    ->ArgName("n")
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_MatmulSquare, blocked, "blocked")
    ->ArgName("n")
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_MatmulSquare, reference, "reference")
    ->ArgName("n")
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_MatmulSquare, optimized, "optimized")
    ->ArgName("n")
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->Apply(prism::bench::configure);

BENCHMARK_CAPTURE(BM_MatmulAT, reference, "reference")
    ->ArgName("n")
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_MatmulAT, optimized, "optimized")
    ->ArgName("n")
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_MatmulBT, reference, "reference")
    ->ArgName("n")
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_MatmulBT, optimized, "optimized")
    ->ArgName("n")
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->Apply(prism::bench::configure);
// The ladder's middle rungs on transposed operands: reordered and blocked stream B's rows, so a
// transposed B (A @ B^T) is their worst case.
BENCHMARK_CAPTURE(BM_MatmulBT, reordered, "reordered")
    ->ArgName("n")
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_MatmulBT, blocked, "blocked")
    ->ArgName("n")
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond)
    ->Apply(prism::bench::configure);

BENCHMARK_CAPTURE(BM_MatmulMLP, naive, "naive")
    ->Apply(mlp_shapes)
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_MatmulMLP, reordered, "reordered")
    ->Apply(mlp_shapes)
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_MatmulMLP, blocked, "blocked")
    ->Apply(mlp_shapes)
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_MatmulMLP, reference, "reference")
    ->Apply(mlp_shapes)
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_MatmulMLP, optimized, "optimized")
    ->Apply(mlp_shapes)
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);

BENCHMARK_MAIN();
