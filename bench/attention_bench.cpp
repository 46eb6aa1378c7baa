// Attention (naive vs flash, forward and backward) and linear+GELU (unfused vs fused, and the
// three-op chain), through the tensor front end, with the cost formulas of kernels/costs.h as
// counters (FLOPs=...G/s is GFLOP/s).
//
// Shapes: attention B = 1, H = 8, d = 64, L = 256 ... 4096 (the naive variant up to 2048: at
// 4096 one forward takes seconds and 512 MB of scores); the unfused chain softmax(q k^T) v of
// three ops with Eigen's matmul beside them, the yardstick a framework without the fused op
// would run. linear_gelu: x [4096, 768] by w [3072, 768] (a GPT-2 small MLP on 4096 tokens),
// in no_grad (one output) and with the pre-activation kept for backward (arg z:1).
//
// Before the timings it prints the memory table: the bytes each attention call allocates
// (output, lse and scratch), read from the profiler's records of a run on the meta device,
// which allocates exactly what a real run does without computing anything.
//
// Validate first, then time: each benchmark checks that the profile records the variant asked
// for and that its output matches the float64 default variant (relative error < 1e-4).
//
// Run (docs/PERFORMANCE.md):
//   OMP_NUM_THREADS=1 ./prism_bench_attention --benchmark_repetitions=9
//       --benchmark_report_aggregates_only=true      (one command line)
// and for threads, PRISM_BENCH_WALL_TIME=1 OMP_NUM_THREADS=2 with --benchmark_filter=/L:1024.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "bench/bench_tensor.h"
#include "kernels/ops/attention/op.h"
#include "kernels/ops/linear_gelu/op.h"
#include "kernels/registry.h"
#include "profiler/session.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/random.h"

namespace {

using prism::bench::f64;
using prism::bench::max_rel_error;
using prism::bench::recorded_variant;
using prism::bench::records_of;
using prism::bench::report_cost;

using prism::Dims;
using prism::DType;
using prism::Tensor;
using prism::bench::validate;
using prism::profiler::Cost;

constexpr int64_t kHeads = 8, kHeadDim = 64;

struct Qkv {
  Tensor q, k, v;
};
Qkv make_qkv(int64_t l) {
  prism::manual_seed(7);
  return {prism::randn({1, kHeads, l, kHeadDim}), prism::randn({1, kHeads, l, kHeadDim}),
          prism::randn({1, kHeads, l, kHeadDim})};
}
// ---- attention forward -------------------------------------------------------------------

void BM_Attention(benchmark::State& state, const char* variant, bool causal) {
  const int64_t l = state.range(0);
  const Qkv in = make_qkv(l);
  prism::NoGrad no_grad;
  const Tensor expected = prism::attention(f64(in.q), f64(in.k), f64(in.v), causal);
  prism::kernels::Use guard("attention", variant);
  auto run = [&] { return prism::attention(in.q, in.k, in.v, causal); };
  if (!validate(state, "attention", variant, run, expected)) return;
  for (auto _ : state) {
    Tensor y = run();
    benchmark::DoNotOptimize(y.data<float>());
    benchmark::ClobberMemory();
  }
  report_cost(state, prism::costs::attention(in.q.shape(), in.k.shape(), causal, 4));
}

// The unfused chain of three ops, as MultiHeadAttention composed it before the attention op.
void BM_AttentionChain(benchmark::State& state, bool causal) {
  const int64_t l = state.range(0);
  const Qkv in = make_qkv(l);
  prism::NoGrad no_grad;
  const Tensor expected = prism::attention(f64(in.q), f64(in.k), f64(in.v), causal);
  Tensor mask = prism::zeros({l, l});
  if (causal) {
    std::vector<float> m(static_cast<size_t>(l * l), 0.f);
    for (int64_t i = 0; i < l; ++i) {
      for (int64_t j = i + 1; j < l; ++j) m[static_cast<size_t>(i * l + j)] = -INFINITY;
    }
    mask = prism::from_vector(m, {l, l});
  }
  const double scale = 1 / std::sqrt(static_cast<double>(kHeadDim));
  auto run = [&] {
    Tensor s = prism::matmul(in.q, in.k.transpose(2, 3)) * scale;
    if (causal) s = s + mask;
    return prism::matmul(prism::softmax(s, -1), in.v);
  };
  if (!validate(state, "matmul", "reference", run, expected)) return;
  for (auto _ : state) {
    Tensor y = run();
    benchmark::DoNotOptimize(y.data<float>());
    benchmark::ClobberMemory();
  }
  report_cost(state, prism::costs::attention(in.q.shape(), in.k.shape(), causal, 4));
}

// ---- attention backward (the attention_backward op, through autograd) -----------------------

void BM_AttentionBackward(benchmark::State& state, const char* variant, bool causal) {
  const int64_t l = state.range(0);
  Qkv in = make_qkv(l);
  for (Tensor* t : {&in.q, &in.k, &in.v}) t->set_requires_grad();
  const Tensor g = prism::randn({1, kHeads, l, kHeadDim});
  Tensor expected;
  {
    Tensor q = f64(in.q.detach()).set_requires_grad();
    prism::attention(q, f64(in.k.detach()), f64(in.v.detach()), causal).backward(f64(g));
    expected = q.grad();
  }
  prism::kernels::Use fwd("attention", variant);
  prism::kernels::Use bwd("attention_backward", variant);
  const Tensor out = prism::attention(in.q, in.k, in.v, causal);
  auto run = [&] {
    for (Tensor* t : {&in.q, &in.k, &in.v}) t->zero_grad();
    out.backward(g, /*retain_graph=*/true);
    return in.q.grad();
  };
  if (!validate(state, "attention_backward", variant, run, expected)) return;
  for (auto _ : state) {
    Tensor dq = run();
    benchmark::DoNotOptimize(dq.data<float>());
    benchmark::ClobberMemory();
  }
  report_cost(state, prism::costs::attention_backward(in.q.shape(), in.k.shape(), causal, 4));
}

void lengths(benchmark::internal::Benchmark* b, int64_t max_l) {
  b->ArgName("L");
  for (int64_t l = 256; l <= max_l; l *= 2) b->Arg(l);
  b->Unit(benchmark::kMillisecond)->Apply(prism::bench::configure);
}
void up_to_2048(benchmark::internal::Benchmark* b) {
  lengths(b, 2048);
}
void up_to_4096(benchmark::internal::Benchmark* b) {
  lengths(b, 4096);
}

BENCHMARK_CAPTURE(BM_Attention, naive, "naive", false)->Apply(up_to_2048);
BENCHMARK_CAPTURE(BM_Attention, flash, "flash", false)->Apply(up_to_4096);
BENCHMARK_CAPTURE(BM_AttentionChain, chain, false)->Apply(up_to_2048);
BENCHMARK_CAPTURE(BM_Attention, naive_causal, "naive", true)->Apply(up_to_2048);
BENCHMARK_CAPTURE(BM_Attention, flash_causal, "flash", true)->Apply(up_to_4096);
BENCHMARK_CAPTURE(BM_AttentionChain, chain_causal, true)->Apply(up_to_2048);
BENCHMARK_CAPTURE(BM_AttentionBackward, naive, "naive", false)->Apply(up_to_2048);
BENCHMARK_CAPTURE(BM_AttentionBackward, flash, "flash", false)->Apply(up_to_4096);
BENCHMARK_CAPTURE(BM_AttentionBackward, naive_causal, "naive", true)->Apply(up_to_2048);
BENCHMARK_CAPTURE(BM_AttentionBackward, flash_causal, "flash", true)->Apply(up_to_4096);

// ---- linear + GELU ---------------------------------------------------------------------------

constexpr int64_t kRows = 4096, kIn = 768, kOut = 3072;

struct LinearInputs {
  Tensor x, w, b;
};
LinearInputs make_linear(bool keep_z) {
  prism::manual_seed(8);
  LinearInputs in{prism::randn({kRows, kIn}), prism::randn({kOut, kIn}, DType::f32, 0, 0.04),
                  prism::randn({kOut})};
  if (keep_z) in.w.set_requires_grad();  // grad mode: the op keeps z for backward
  return in;
}

void BM_LinearGelu(benchmark::State& state, const char* variant) {
  const bool keep_z = state.range(0) != 0;
  const LinearInputs in = make_linear(keep_z);
  const Tensor expected = [&] {
    prism::NoGrad no_grad;
    return prism::linear_gelu(f64(in.x), f64(in.w), f64(in.b));
  }();
  prism::kernels::Use guard("linear_gelu", variant);
  auto run = [&] { return prism::linear_gelu(in.x, in.w, in.b); };
  if (!validate(state, "linear_gelu", variant, run, expected)) return;
  for (auto _ : state) {
    Tensor y = run();
    benchmark::DoNotOptimize(y.data<float>());
    benchmark::ClobberMemory();
  }
  report_cost(state, prism::costs::linear_gelu(kRows, kIn, kOut, true, keep_z, 4));
}

// gelu(add(matmul(x, w^T), b)): three ops, three [rows, out] buffers.
void BM_LinearGeluChain(benchmark::State& state) {
  const LinearInputs in = make_linear(false);
  prism::NoGrad no_grad;
  const Tensor expected = prism::linear_gelu(f64(in.x), f64(in.w), f64(in.b));
  auto run = [&] { return prism::gelu(prism::add(prism::matmul(in.x, in.w.t()), in.b)); };
  if (!validate(state, "matmul", "reference", run, expected)) return;
  for (auto _ : state) {
    Tensor y = run();
    benchmark::DoNotOptimize(y.data<float>());
    benchmark::ClobberMemory();
  }
  report_cost(state, prism::costs::linear_gelu(kRows, kIn, kOut, true, false, 4));
}

BENCHMARK_CAPTURE(BM_LinearGelu, unfused, "unfused")
    ->ArgName("z")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_LinearGelu, fused, "fused")
    ->ArgName("z")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->Apply(prism::bench::configure);
BENCHMARK(BM_LinearGeluChain)
    ->Name("BM_LinearGelu/chain")
    ->Unit(benchmark::kMillisecond)
    ->Apply(prism::bench::configure);

// ---- memory table (meta device) ------------------------------------------------------------

// Bytes allocated by the op's record(s): forward (out + lse + scratch) and backward
// (dq + dk + dv + scratch), for B = 1, H = 8, d = 64, causal.
struct Alloc {
  int64_t forward = 0, backward = 0;
};
Alloc meta_allocs(const char* variant, int64_t l) {
  prism::DefaultDevice meta(prism::Device::meta);
  prism::kernels::Use fwd("attention", variant);
  prism::kernels::Use bwd("attention_backward", variant);
  Qkv in{prism::randn({1, kHeads, l, kHeadDim}), prism::randn({1, kHeads, l, kHeadDim}),
         prism::randn({1, kHeads, l, kHeadDim})};
  for (Tensor* t : {&in.q, &in.k, &in.v}) t->set_requires_grad();
  Alloc a;
  for (const auto& r : records_of([&] {
         prism::attention(in.q, in.k, in.v, true).backward(prism::zeros({1, kHeads, l, kHeadDim}));
       })) {
    if (std::string(r.op) == "attention") a.forward += r.alloc_bytes;
    if (std::string(r.op) == "attention_backward") a.backward += r.alloc_bytes;
  }
  return a;
}

void print_memory_table() {
  std::printf(
      "attention memory per call, B=1 H=8 d=64 float32, from the profiler's records on the "
      "meta device\n(%d OpenMP thread(s): the flash scratch is per thread). scratch = "
      "allocated - outputs.\n",
      omp_get_max_threads());
  std::printf("%6s  %14s %14s  %14s %14s\n", "L", "naive fwd MB", "flash fwd MB", "naive bwd MB",
              "flash bwd MB");
  for (int64_t l = 256; l <= 4096; l *= 2) {
    const Alloc n = meta_allocs("naive", l), f = meta_allocs("flash", l);
    const double out_fwd = static_cast<double>(kHeads * l * (kHeadDim + 1) * 4);  // out + lse
    const double out_bwd = static_cast<double>(3 * kHeads * l * kHeadDim * 4);    // dq, dk, dv
    auto mb = [](double b) { return b / (1 << 20); };
    std::printf("%6lld  %6.2f (+%5.2f) %6.2f (+%5.3f)  %6.2f (+%5.2f) %6.2f (+%5.3f)\n",
                static_cast<long long>(l), mb(n.forward), mb(n.forward - out_fwd), mb(f.forward),
                mb(f.forward - out_fwd), mb(n.backward), mb(n.backward - out_bwd), mb(f.backward),
                mb(f.backward - out_bwd));
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  print_memory_table();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
