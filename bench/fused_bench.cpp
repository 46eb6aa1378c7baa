// Fused vs unfused CPU kernels, side by side in one run (docs/PERFORMANCE.md, "Fused vs unfused
// (CPU)"): every variant of softmax, log_softmax, layer_norm, cross_entropy, adam_update and
// sgd_update, called through the tensor front end under a scoped override, plus the chain of
// tensor ops that the fused op replaced in nn/ ("chain" rows). Counters: bytes=...G/s is GB/s of
// the op's minimum traffic (kernels/costs.h), the same numerator for every variant of a row, so
// the ratio of two variants' GB/s is the ratio of their speeds.
//
// Validate first, then time: each benchmark checks that the profiler records the variant that
// was asked for and that the float32 result matches the op's default variant run in float64.
//
// Run:
//   OMP_NUM_THREADS=1 ./prism_bench_fused --benchmark_repetitions=9
//       --benchmark_report_aggregates_only=true      (one command line)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "bench/bench_tensor.h"
#include "kernels/ops/cross_entropy/op.h"
#include "kernels/ops/layer_norm/op.h"
#include "kernels/ops/optim/op.h"
#include "kernels/ops/softmax/op.h"
#include "kernels/registry.h"
#include "profiler/session.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/optim_ops.h"

namespace {

using prism::bench::f64;
using prism::bench::max_rel_error;
using prism::bench::recorded_variant;
using prism::bench::report_cost;

using prism::DType;
using prism::Tensor;
using prism::bench::validate;
using prism::profiler::Cost;

// ---- softmax and log_softmax, each row -------------------------------------------------------

void BM_Softmax(benchmark::State& state, const char* op, const char* variant) {
  const int64_t rows = state.range(0), cols = state.range(1);
  const bool log = std::string(op) == "log_softmax";
  auto fn = [log](const Tensor& x) {
    return log ? prism::log_softmax(x, 1) : prism::softmax(x, 1);
  };
  Tensor x = prism::randn({rows, cols});
  const Tensor expected = fn(f64(x));
  prism::kernels::Use guard(op, variant);
  if (!validate(
          state, op, variant, [&] { fn(x); }, fn(x), expected))
    return;
  for (auto _ : state) {
    Tensor y = fn(x);
    benchmark::DoNotOptimize(y.data<float>());
    benchmark::ClobberMemory();
  }
  report_cost(state, prism::costs::softmax(x.numel(), x.element_size()));
}

void softmax_sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "cols"})->Args({4096, 1024})->Args({4, 1 << 20});
  b->Unit(benchmark::kMicrosecond)->Apply(prism::bench::configure);
}

BENCHMARK_CAPTURE(BM_Softmax, softmax_naive, "softmax", "naive")->Apply(softmax_sizes);
BENCHMARK_CAPTURE(BM_Softmax, softmax_reference, "softmax", "reference")->Apply(softmax_sizes);
BENCHMARK_CAPTURE(BM_Softmax, softmax_online, "softmax", "online")->Apply(softmax_sizes);
BENCHMARK_CAPTURE(BM_Softmax, log_softmax_naive, "log_softmax", "naive")->Apply(softmax_sizes);
BENCHMARK_CAPTURE(BM_Softmax, log_softmax_reference, "log_softmax", "reference")
    ->Apply(softmax_sizes);
BENCHMARK_CAPTURE(BM_Softmax, log_softmax_online, "log_softmax", "online")->Apply(softmax_sizes);

// ---- layer_norm over the last dim, with weight and bias, forward (no grad) ----------------------

// The composition nn::LayerNorm used before the op existed.
Tensor layer_norm_chain(const Tensor& x, const Tensor& w, const Tensor& b) {
  Tensor mu = prism::mean(x, {-1}, true);
  Tensor xc = x - mu;
  Tensor var = prism::mean(xc * xc, {-1}, true);
  return xc / prism::sqrt(var + 1e-5) * w + b;
}

void BM_LayerNorm(benchmark::State& state, const char* variant) {
  const int64_t rows = state.range(0), cols = state.range(1);
  Tensor x = prism::randn({rows, cols}, DType::f32, 3.0, 2.0);
  Tensor w = prism::randn({cols}), b = prism::randn({cols});
  const bool chain = variant[0] == '\0';
  auto fn = [chain](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
    return chain ? layer_norm_chain(xx, ww, bb) : prism::layer_norm(xx, ww, bb);
  };
  prism::NoGrad no_grad;
  const Tensor expected = prism::layer_norm(f64(x), f64(w), f64(b));
  std::optional<prism::kernels::Use> guard;
  if (!chain) guard.emplace("layer_norm", variant);
  if (!validate(
          state, "layer_norm", variant, [&] { fn(x, w, b); }, fn(x, w, b), expected))
    return;
  for (auto _ : state) {
    Tensor y = fn(x, w, b);
    benchmark::DoNotOptimize(y.data<float>());
    benchmark::ClobberMemory();
  }
  report_cost(state, prism::costs::layer_norm(rows, cols, true, true, false, 4));
}

void layer_norm_sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "cols"})->Args({4096, 1024})->Args({16384, 256});
  b->Unit(benchmark::kMicrosecond)->Apply(prism::bench::configure);
}

BENCHMARK_CAPTURE(BM_LayerNorm, two_pass, "two_pass")->Apply(layer_norm_sizes);
BENCHMARK_CAPTURE(BM_LayerNorm, one_pass, "one_pass")->Apply(layer_norm_sizes);
BENCHMARK_CAPTURE(BM_LayerNorm, chain, "")->Apply(layer_norm_sizes);

// ---- cross_entropy of logits [rows, classes], forward (no grad)
// -----------------------------------

Tensor cross_entropy_chain(const Tensor& logits, const Tensor& target) {
  return -prism::mean(prism::gather(prism::log_softmax(logits, 1), 1, target.unsqueeze(1)));
}

void BM_CrossEntropy(benchmark::State& state, const char* variant) {
  const int64_t rows = state.range(0), cols = state.range(1);
  Tensor logits = prism::randn({rows, cols}, DType::f32, 0.0, 3.0);
  Tensor target =
      prism::cast(prism::rand({rows}, DType::f32, 0, static_cast<double>(cols)), DType::i64);
  const bool chain = variant[0] == '\0';
  auto fn = [chain](const Tensor& l, const Tensor& t) {
    return chain ? cross_entropy_chain(l, t) : prism::cross_entropy(l, t);
  };
  prism::NoGrad no_grad;
  const Tensor expected = prism::cross_entropy(f64(logits), target);
  std::optional<prism::kernels::Use> guard;
  if (!chain) guard.emplace("cross_entropy", variant);
  if (!validate(
          state, "cross_entropy", variant, [&] { fn(logits, target); }, fn(logits, target),
          expected)) {
    return;
  }
  for (auto _ : state) {
    Tensor loss = fn(logits, target);
    benchmark::DoNotOptimize(loss.data<float>());
    benchmark::ClobberMemory();
  }
  report_cost(state, prism::costs::cross_entropy(rows, cols, false, 4));
}

void cross_entropy_sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "classes"})->Args({4096, 1024})->Args({256, 50257});
  b->Unit(benchmark::kMicrosecond)->Apply(prism::bench::configure);
}

BENCHMARK_CAPTURE(BM_CrossEntropy, composed, "composed")->Apply(cross_entropy_sizes);
BENCHMARK_CAPTURE(BM_CrossEntropy, fused, "fused")->Apply(cross_entropy_sizes);
BENCHMARK_CAPTURE(BM_CrossEntropy, chain, "")->Apply(cross_entropy_sizes);

// ---- optimizer updates on 1M float32 parameters, in place ------------------------------------

constexpr int64_t kParams = 1 << 20;

void BM_Adam(benchmark::State& state, const char* variant) {
  Tensor p = prism::randn({kParams}), g = prism::randn({kParams});
  Tensor m = prism::randn({kParams}, DType::f32, 0, 0.1);
  Tensor v = prism::rand({kParams}, DType::f32, 0, 0.01);
  prism::AdamHyper h;
  h.step = 5;
  // Validate one step on copies against the default variant in float64.
  Tensor p64 = f64(p), m64 = f64(m), v64 = f64(v);
  prism::adam_update_(p64, f64(g), m64, v64, h);
  prism::kernels::Use guard("adam_update", variant);
  Tensor pc = p.clone(), mc = m.clone(), vc = v.clone();
  auto step_copy = [&] { prism::adam_update_(pc, g, mc, vc, h); };
  const std::string used = recorded_variant(step_copy, "adam_update");
  pc = p.clone(), mc = m.clone(), vc = v.clone();
  step_copy();
  if (!validate(
          state, "adam_update", "", [] {}, pc, p64))
    return;
  if (used != variant) {
    state.SkipWithError(("the profile recorded adam_update variant '" + used + "'").c_str());
    return;
  }
  for (auto _ : state) {
    prism::adam_update_(p, g, m, v, h);
    benchmark::ClobberMemory();
  }
  report_cost(state, prism::costs::adam_update(kParams, 4, false, false));
}
BENCHMARK_CAPTURE(BM_Adam, per_tensor, "per_tensor")
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_Adam, fused, "fused")
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);

void BM_Sgd(benchmark::State& state, const char* variant) {
  Tensor p = prism::randn({kParams}), g = prism::randn({kParams});
  Tensor vel = prism::randn({kParams}, DType::f32, 0, 0.1);
  prism::SgdHyper h;
  h.momentum = 0.9;
  h.weight_decay = 1e-4;
  h.nesterov = true;
  Tensor p64 = f64(p), v64 = f64(vel);
  prism::sgd_update_(p64, f64(g), v64, h);
  prism::kernels::Use guard("sgd_update", variant);
  Tensor pc = p.clone(), vc = vel.clone();
  auto step_copy = [&] { prism::sgd_update_(pc, g, vc, h); };
  const std::string used = recorded_variant(step_copy, "sgd_update");
  pc = p.clone(), vc = vel.clone();
  step_copy();
  if (!validate(
          state, "sgd_update", "", [] {}, pc, p64))
    return;
  if (used != variant) {
    state.SkipWithError(("the profile recorded sgd_update variant '" + used + "'").c_str());
    return;
  }
  for (auto _ : state) {
    prism::sgd_update_(p, g, vel, h);
    benchmark::ClobberMemory();
  }
  report_cost(state, prism::costs::sgd_update(kParams, 4, true, true, true));
}
BENCHMARK_CAPTURE(BM_Sgd, per_tensor, "per_tensor")
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_Sgd, fused, "fused")
    ->Unit(benchmark::kMicrosecond)
    ->Apply(prism::bench::configure);

}  // namespace

BENCHMARK_MAIN();
