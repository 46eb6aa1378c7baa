// Convolution and pooling kernels, every registered CPU variant of each op, called directly
// through the registry on raw buffers (no tensor front end, no allocation in the timed loop),
// float32, inputs uniform in [-1, 1], at the shapes of the LeNet training step (batch 64):
//
//   conv1  x [64, 1, 28, 28]  * w [16, 1, 3, 3]     conv2d, conv2d_backward_input/_weight
//   conv2  x [64, 16, 13, 13] * w [32, 16, 3, 3]
//   pool1  x [64, 16, 26, 26], 2x2 windows, stride 2  max_pool2d, avg_pool2d and backwards
//
// Benchmarks are registered at start-up from the registry, so a new variant (a learner's
// kernel linked in, too) is timed with the others: BM_<op>/<variant>/<shape>. Counters: FLOPs
// and bytes per call from the ops' own cost formulas (kernels/costs.h), as rates.
//
// Validate, then time: each variant's output is compared with the naive variant's on the same
// inputs (max |y - ref| / max |ref| within 1e-4: float32 sums in another order); a mismatch
// skips the benchmark with the reason.
//
// Run: OMP_NUM_THREADS=1 ./prism_bench_conv_pool --benchmark_repetitions=9
//          --benchmark_report_aggregates_only=true                       (one command line)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "kernels/args.h"
#include "kernels/costs.h"
#include "kernels/registry.h"

namespace {

using prism::Device;
using prism::Dims;
using prism::DType;
using prism::kernels::Conv2dArgs;
using prism::kernels::KernelEntry;
using prism::kernels::Pool2dArgs;
using prism::kernels::registry;
using prism::kernels::VariantTag;

std::vector<float> uniform(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

double rel_error(const std::vector<float>& got, const std::vector<float>& want) {
  double scale = 1e-30, err = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, static_cast<double>(std::abs(want[i])));
    err = std::max(err, static_cast<double>(std::abs(got[i] - want[i])));
  }
  return err / scale;
}

void report(benchmark::State& state, const prism::profiler::Cost& cost) {
  state.counters["FLOPs"] = benchmark::Counter(static_cast<double>(cost.flops),
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes"] = benchmark::Counter(static_cast<double>(cost.bytes),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

// ---- convolution -----------------------------------------------------------------------------

struct ConvShape {
  const char* name;
  int64_t n, c, h, w, o, k;
};
constexpr ConvShape kConvShapes[] = {{"conv1", 64, 1, 28, 28, 16, 3},
                                     {"conv2", 64, 16, 13, 13, 32, 3}};

// Inputs, output and im2col scratch of one convolution op, and its argument struct.
struct ConvCase {
  std::vector<float> x, weight, bias, dy, out, workspace;
  Conv2dArgs<float> args{};

  ConvCase(const ConvShape& s, const std::string& op) {
    const int64_t ho = s.h - s.k + 1, wo = s.w - s.k + 1;
    x = uniform(s.n * s.c * s.h * s.w, 1);
    weight = uniform(s.o * s.c * s.k * s.k, 2);
    bias = uniform(s.o, 3);
    dy = uniform(s.n * s.o * ho * wo, 4);
    workspace.resize(static_cast<size_t>(s.c * s.k * s.k * ho * wo));
    const int64_t out_n = op == "conv2d"                  ? s.n * s.o * ho * wo
                          : op == "conv2d_backward_input" ? s.n * s.c * s.h * s.w
                                                          : s.o * s.c * s.k * s.k;
    out.resize(static_cast<size_t>(out_n));
    args = Conv2dArgs<float>{x.data(),
                             weight.data(),
                             op == "conv2d" ? bias.data() : nullptr,
                             dy.data(),
                             out.data(),
                             workspace.data(),
                             static_cast<int64_t>(workspace.size()),
                             s.n,
                             s.c,
                             s.h,
                             s.w,
                             s.o,
                             s.k,
                             s.k,
                             ho,
                             wo,
                             /*stride=*/1,
                             /*padding=*/0};
  }
};

prism::profiler::Cost conv_cost(const ConvShape& s, const std::string& op) {
  const Dims x{s.n, s.c, s.h, s.w}, w{s.o, s.c, s.k, s.k};
  if (op == "conv2d") return prism::costs::conv2d(x, w, true, 1, 0, 4);
  if (op == "conv2d_backward_input") return prism::costs::conv2d_backward_input(x, w, 1, 0, 4);
  return prism::costs::conv2d_backward_weight(x, w, 1, 0, 4);
}

void BM_Conv(benchmark::State& state, std::string op, const KernelEntry* variant,
             const KernelEntry* naive, ConvShape shape) {
  ConvCase c(shape, op);
  auto fn = variant->get<Conv2dArgs, float>();
  fn(c.args);
  const std::vector<float> got = c.out;
  naive->get<Conv2dArgs, float>()(c.args);
  if (const double err = rel_error(got, c.out); !(err <= 1e-4)) {
    state.SkipWithError(("differs from naive by " + std::to_string(err)).c_str());
    return;
  }
  for (auto _ : state) {
    fn(c.args);
    benchmark::ClobberMemory();
  }
  report(state, conv_cost(shape, op));
}

// ---- pooling ---------------------------------------------------------------------------------

constexpr int64_t kPlanes = 64 * 16, kSide = 26, kWindow = 2;

struct PoolCase {
  std::vector<float> x, dy, out;
  std::vector<int64_t> index;
  Pool2dArgs<float> args{};

  PoolCase(const std::string& op, const KernelEntry* max_forward) {
    const int64_t out_side = kSide / kWindow;
    x = uniform(kPlanes * kSide * kSide, 5);
    dy = uniform(kPlanes * out_side * out_side, 6);
    index.resize(static_cast<size_t>(kPlanes * out_side * out_side));
    const bool backward = op.find("backward") != std::string::npos;
    out.resize(static_cast<size_t>(backward ? x.size() : dy.size()));
    const bool max = op.rfind("max", 0) == 0;
    args = Pool2dArgs<float>{x.data(), dy.data(), out.data(), max ? index.data() : nullptr,
                             kPlanes,  kSide,     kSide,      out_side,
                             out_side, kWindow,   kWindow,    0};
    if (max && backward) {  // the backward reads the argmax a forward wrote
      std::vector<float> y(dy.size());
      Pool2dArgs<float> f = args;
      f.out = y.data();
      max_forward->get<Pool2dArgs, float>()(f);
    }
  }
};

prism::profiler::Cost pool_cost(const std::string& op) {
  const Dims x{64, 16, kSide, kSide};
  if (op == "max_pool2d") return prism::costs::pool2d(x, kWindow, kWindow, 0, true, 4);
  if (op == "avg_pool2d") return prism::costs::pool2d(x, kWindow, kWindow, 0, false, 4);
  if (op == "max_pool2d_backward")
    return prism::costs::max_pool2d_backward(x, kWindow, kWindow, 0, 4);
  return prism::costs::avg_pool2d_backward(x, kWindow, kWindow, 0, 4);
}

void BM_Pool(benchmark::State& state, std::string op, const KernelEntry* variant,
             const KernelEntry* naive) {
  const KernelEntry& max_forward = registry().at("max_pool2d", Device::cpu).default_entry();
  PoolCase c(op, &max_forward);
  auto fn = variant->get<Pool2dArgs, float>();
  fn(c.args);
  const std::vector<float> got = c.out;
  naive->get<Pool2dArgs, float>()(c.args);
  if (const double err = rel_error(got, c.out); !(err <= 1e-6)) {
    state.SkipWithError(("differs from naive by " + std::to_string(err)).c_str());
    return;
  }
  for (auto _ : state) {
    fn(c.args);
    benchmark::ClobberMemory();
  }
  report(state, pool_cost(op));
}

// Every float32 CPU variant of `op`, with the op's naive variant (the validation baseline).
template <class F>
void for_each_variant(const char* op, F&& add) {
  const auto& kernels = registry().at(op, Device::cpu);
  const KernelEntry* naive = kernels.find("naive");
  if (!naive) return;
  for (const KernelEntry& e : kernels.entries()) {
    if (e.has(DType::f32)) add(&e, naive);
  }
}

void register_all() {
  for (const char* op : {"conv2d", "conv2d_backward_input", "conv2d_backward_weight"}) {
    for (const ConvShape& s : kConvShapes) {
      for_each_variant(op, [&](const KernelEntry* e, const KernelEntry* naive) {
        const std::string name = std::string("BM_") + op + "/" + e->name + "/" + s.name;
        benchmark::RegisterBenchmark(name.c_str(), BM_Conv, std::string(op), e, naive, s)
            ->Unit(benchmark::kMicrosecond)
            ->Apply(prism::bench::configure);
      });
    }
  }
  for (const char* op :
       {"max_pool2d", "max_pool2d_backward", "avg_pool2d", "avg_pool2d_backward"}) {
    for_each_variant(op, [&](const KernelEntry* e, const KernelEntry* naive) {
      const std::string name = std::string("BM_") + op + "/" + e->name + "/pool1";
      benchmark::RegisterBenchmark(name.c_str(), BM_Pool, std::string(op), e, naive)
          ->Unit(benchmark::kMicrosecond)
          ->Apply(prism::bench::configure);
    });
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
