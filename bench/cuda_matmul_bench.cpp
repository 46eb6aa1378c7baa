// The CUDA matmul ladder (naive, tiled, optimized, and cuBLAS's reference): each variant's
// kernel called directly through the registry on device buffers, float32, inputs uniform in
// [-1, 1], all n x n row-major (BM_CudaMatmul) or with B a transposed view (BM_CudaMatmulBT,
// a Linear layer's x W^T). Counters: FLOPs = 2 n^3 per call as a rate (FLOPs=...G/s is
// GFLOP/s); the "optimized / reference" ratio at n = 4096 is issue 5's figure (target >= 70 %).
//
// Timing: manual time from the host clock around a batch of launches followed by one device
// synchronisation, so launch overhead is hidden behind the queue and the wait is counted once
// per batch (at n >= 1024 a call takes far longer than a launch). Validate, then time: before
// timing, 61 sampled elements of C are checked against a float64 dot product (error within
// 2 (k + 1) eps of the sum of magnitudes); a wrong result skips the benchmark with the reason.
// Without a usable GPU every benchmark skips with the reason.
//
// Run (docs/PERFORMANCE.md): ./prism_bench_cuda_matmul --benchmark_repetitions=5
//     --benchmark_report_aggregates_only=true                            (one command line)
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/ops/matmul/args.h"
#include "kernels/gpu_runtime.h"
#include "kernels/registry.h"

namespace {

namespace gpu = prism::kernels::gpu;
using prism::kernels::MatmulArgs;

// n x n operands on the device, B stored transposed when asked; freed at the end.
struct DeviceProduct {
  int64_t n;
  std::vector<float> a, b;
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  MatmulArgs<float> args{};

  DeviceProduct(int64_t n_, bool b_transposed) : n(n_), a(n_ * n_), b(n_ * n_) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (float& x : a) x = uniform(rng);
    for (float& x : b) x = uniform(rng);
    const size_t bytes = a.size() * sizeof(float);
    da = static_cast<float*>(gpu::allocate(bytes));
    db = static_cast<float*>(gpu::allocate(bytes));
    dc = static_cast<float*>(gpu::allocate(bytes));
    gpu::copy_to_device(da, a.data(), bytes);
    gpu::copy_to_device(db, b.data(), bytes);
    args.a = da, args.b = db, args.c = dc;
    args.batch = 1, args.m = n, args.n = n, args.k = n;
    args.a_rs = n, args.a_cs = 1;
    args.b_rs = b_transposed ? 1 : n, args.b_cs = b_transposed ? n : 1;
  }
  ~DeviceProduct() {
    const size_t bytes = a.size() * sizeof(float);
    gpu::release(da, bytes);
    gpu::release(db, bytes);
    gpu::release(dc, bytes);
  }
  DeviceProduct(const DeviceProduct&) = delete;
  DeviceProduct& operator=(const DeviceProduct&) = delete;

  float b_at(int64_t p, int64_t j) const { return b[p * args.b_rs + j * args.b_cs]; }

  // "" if 61 sampled elements of C are right, else what is wrong.
  std::string check() const {
    std::vector<float> c(a.size());
    gpu::copy_to_host(c.data(), dc, c.size() * sizeof(float));
    const double eps = 1.19209290e-7;
    for (int s = 0; s < 61; ++s) {
      const int64_t i = (s * 7919) % n, j = (s * 104729 + 13) % n;
      double exact = 0, mag = 0;
      for (int64_t p = 0; p < n; ++p) {
        const double t = double(a[i * n + p]) * b_at(p, j);
        exact += t;
        mag += std::fabs(t);
      }
      if (std::fabs(c[i * n + j] - exact) > 2 * double(n + 1) * eps * mag) {
        return "C[" + std::to_string(i) + "," + std::to_string(j) +
               "] = " + std::to_string(c[i * n + j]) + ", expected " + std::to_string(exact);
      }
    }
    return "";
  }
};

void run(benchmark::State& state, const std::string& variant, bool b_transposed) {
  if (!gpu::available()) {
    state.SkipWithError(("no usable GPU: " + gpu::unavailable_reason()).c_str());
    return;
  }
  const int64_t n = state.range(0);
  const auto& entry = prism::kernels::registry().at("matmul", prism::Device::cuda).at(variant);
  const auto fn = entry.get<MatmulArgs, float>();
  DeviceProduct p(n, b_transposed);
  fn(p.args);  // validate (and warm up) first
  if (const std::string bad = p.check(); !bad.empty()) {
    state.SkipWithError(("wrong result: " + bad).c_str());
    return;
  }
  // Enough calls per timed batch that the one synchronisation is a small part of it.
  const int calls = n >= 2048 ? 1 : n >= 1024 ? 4 : 32;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c) fn(p.args);
    gpu::synchronize();
    const auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count() / calls);
  }
  state.counters["FLOPs"] = benchmark::Counter(2.0 * double(n) * double(n) * double(n),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  for (const char* v : {"naive", "tiled", "optimized", "reference"}) {
    const std::string name = v;
    for (bool bt : {false, true}) {
      auto* b = benchmark::RegisterBenchmark(
          ((bt ? "BM_CudaMatmulBT/" : "BM_CudaMatmul/") + name).c_str(),
          [name, bt](benchmark::State& s) { run(s, name, bt); });
      b->ArgName("n")->UseManualTime()->Unit(benchmark::kMillisecond);
      for (int64_t n : {256, 1024, 2048, 4096}) {
        if (name == "naive" && n > 2048) continue;  // minutes per repetition, and no lesson left
        b->Arg(n);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
