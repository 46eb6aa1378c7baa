// What prism train's divergence check costs per step (cli/train_divergence.h): reading every
// gradient of a zoo model once for a NaN or an infinity (autograd::count_non_finite), which
// prism train does between backward and the optimizer step. Compare with the model's step time
// (`prism train MODEL --threads 1` prints its median): docs/PERFORMANCE.md has both.
//
// Run:
//   OMP_NUM_THREADS=1 ./prism_bench_finite_check --benchmark_repetitions=9
//       --benchmark_report_aggregates_only=true      (one command line)
#include <benchmark/benchmark.h>

#include <string>

#include "bench/bench_common.h"
#include "nn/models/zoo.h"
#include "tensor/autograd/anomaly.h"
#include "tensor/ops.h"
#include "tensor/random.h"

namespace {

using namespace prism;

void BM_gradient_check(benchmark::State& state, const std::string& model_name) {
  manual_seed(1);
  std::shared_ptr<nn::Module> model = nn::make_model(model_name);
  nn::ModelInput in = nn::default_input(model_name);
  in.shape[0] = 2;  // gradients of every parameter, from a small batch
  sum((*model)(in.make())).backward();
  int64_t bad = 0;
  for (auto _ : state) {
    for (const auto& [name, p] : model->named_parameters()) {
      bad += autograd::count_non_finite(p.grad());
    }
  }
  benchmark::DoNotOptimize(bad);
  if (bad != 0) state.SkipWithError("a gradient is not finite");
  state.counters["parameters"] = static_cast<double>(model->parameter_count());
  state.SetBytesProcessed(state.iterations() * model->parameter_count() * 4);
}

}  // namespace

BENCHMARK_CAPTURE(BM_gradient_check, mlp, std::string("mlp"))->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_gradient_check, cnn, std::string("cnn"))->Apply(prism::bench::configure);
BENCHMARK_CAPTURE(BM_gradient_check, transformer, std::string("transformer"))
    ->Apply(prism::bench::configure);

BENCHMARK_MAIN();
