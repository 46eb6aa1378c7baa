// run_bench end to end on the MLP (small and fast), the peak-by-role memory split, and the
// baselines' determinism.
#include <doctest/doctest.h>

#include "analysis/baseline.h"
#include "analysis/model_bench.h"
#include "analysis/run_record.h"
#include "kernels/ops/elementwise/args.h"
#include "kernels/registry.h"
#include "profiler/memory.h"
#include "tensor/ops.h"
#include "tensor/storage.h"

using namespace prism;
using namespace prism::analysis;

TEST_CASE("bench: per-batch latency, exact counters that scale with the batch, memory by role") {
  BenchOptions o;
  o.model = "mlp";
  o.batches = {1, 4};
  o.iters = 20;
  o.warmup = 2;
  o.profile_calls = 3;
  o.check_environment = false;
  o.peak = false;
  const BenchResult r = run_bench(o);
  REQUIRE(r.batches.size() == 2);
  CHECK(r.parameters == 269'322);
  CHECK(r.input == "[B,1,28,28] float32");
  CHECK(r.probe_output.size() == 2 * 10);
  CHECK(r.harness_ns > 0);
  CHECK(r.harness_ns < 1000);  // a loose sanity bound; the 1 us target is measured in bench/
  for (const BatchResult& b : r.batches) {
    CHECK(b.samples_ns.size() == 20);
    CHECK(b.latency.p50 > 0);
    CHECK(b.latency.p99 >= b.latency.p50);
    CHECK(b.throughput > 0);
    // Inference: the parameters and the activations, nothing for gradients or optimizer.
    CHECK(b.tracked_peak_by_role[static_cast<size_t>(profiler::MemRole::parameter)] == 269'322 * 4);
    CHECK(b.tracked_peak_by_role[static_cast<size_t>(profiler::MemRole::gradient)] == 0);
    int64_t sum = 0;
    for (int64_t v : b.tracked_peak_by_role) sum += v;
    CHECK(sum == b.tracked_peak_bytes);
    CHECK(b.class_ns[static_cast<size_t>(OpClass::matmul)] > 0);
  }
  // Matmul FLOPs: 2 B (784*256 + 256*256 + 256*10) plus elementwise work linear in B.
  CHECK(r.batches[1].counters.flops == 4 * r.batches[0].counters.flops);
  CHECK(r.batches[0].counters.macs == 784 * 256 + 256 * 256 + 256 * 10);
  CHECK(r.batches[0].counters.allocs == r.batches[1].counters.allocs);
  // The JSON carries what compare and gate need, and reads back.
  const RunRecord rec = run_from_json(bench_to_json(r), "");
  CHECK(rec.series.size() == 2);
  CHECK(rec.series[1].counters == r.batches[1].counters);
}

TEST_CASE("bench: training steps record the first losses and optimizer state") {
  BenchOptions o;
  o.model = "mlp";
  o.mode = BenchMode::train;
  o.batches = {8};
  o.iters = 5;
  o.warmup = 3;
  o.profile_calls = 2;
  o.check_environment = false;
  o.peak = false;
  const BenchResult r = run_bench(o);
  CHECK(r.train_losses.size() == 4);                      // the cold step and three warm-up steps
  CHECK(r.train_losses.back() < r.train_losses.front());  // the same batch: it learns it
  const BatchResult& b = r.batches[0];
  CHECK(b.tracked_peak_by_role[static_cast<size_t>(profiler::MemRole::gradient)] > 0);
  CHECK(b.class_ns[static_cast<size_t>(OpClass::optimizer)] > 0);
}

namespace {
void noop_unary(const kernels::UnaryArgs<float>&) {}
}  // namespace

TEST_CASE("kernel_choices: one item per op, whatever devices it is registered on") {
  // An op of this test's own on both devices, whose naive-tagged variants have different names
  // (as "composed" and "naive" would): one choice is one item, both names in it.
  kernels::Registry& reg = kernels::registry();
  const char* op = "kernel_choices_test_op";
  if (!reg.find(op, Device::cpu)) {
    using kernels::VariantTag;
    reg.op(op, Device::cpu).add<kernels::UnaryArgs>("fast", VariantTag::optimized, "", &noop_unary);
    reg.op(op, Device::cpu).add<kernels::UnaryArgs>("loop", VariantTag::naive, "", &noop_unary);
    reg.op(op, Device::cuda)
        .add<kernels::UnaryArgs>("fast", VariantTag::optimized, "", &noop_unary);
    reg.op(op, Device::cuda).add<kernels::UnaryArgs>("grid", VariantTag::naive, "", &noop_unary);
  }
  kernels::set_variant(op, "naive");
  kernels::set_variant("softmax", "naive");
  CHECK(kernel_choices() == std::string(op) + "=loop/grid,softmax=naive");
  kernels::set_variant(op, "fast");  // the default on both devices: not a choice to list
  CHECK(kernel_choices() == "softmax=naive");
  kernels::set_variant(op, "");
  kernels::set_variant("softmax", "");
  CHECK(kernel_choices() == "");
}

TEST_CASE("bench: bad options are errors before any work") {
  BenchOptions o;
  o.model = "nosuch";
  CHECK_THROWS_WITH_AS(check_bench_options(o), doctest::Contains("nosuch"), Error);
  o.model = "mlp";
  o.batches = {0};
  CHECK_THROWS_WITH_AS(check_bench_options(o), doctest::Contains("batch size 0"), Error);
  o.batches = {1};
  o.mode = BenchMode::train;
  o.qps = {10};
  CHECK_THROWS_WITH_AS(check_bench_options(o), doctest::Contains("--mode infer"), Error);
  BenchOptions huge;
  huge.model = "resnet50";
  huge.batches = {100'000};
  huge.check_environment = false;
  huge.peak = false;
  CHECK_THROWS_WITH_AS(run_bench(huge), doctest::Contains("GiB"), Error);
}

TEST_CASE("memory: the peak's composition by role sums to the peak") {
  const profiler::MemoryStats before = profiler::memory_stats();
  profiler::reset_peak();
  {
    Tensor p, a;
    {
      AllocRole role(profiler::MemRole::parameter);
      p = zeros({1000});
    }
    a = zeros({500});  // activation (the default role)
    a = Tensor();      // freed: the peak keeps it
    Tensor small = zeros({10});
    const profiler::MemoryStats s = profiler::memory_stats();
    CHECK(s.peak_bytes - before.live_bytes == 1500 * 4);
    CHECK(s.peak_by_role[static_cast<size_t>(profiler::MemRole::parameter)] -
              before.live_by_role[static_cast<size_t>(profiler::MemRole::parameter)] ==
          4000);
    CHECK(s.peak_by_role[static_cast<size_t>(profiler::MemRole::activation)] -
              before.live_by_role[static_cast<size_t>(profiler::MemRole::activation)] ==
          2000);
  }
}

TEST_CASE("baselines: the same figures on every run, on the cpu and on the meta device") {
  BaselineSpec cpu{"cnn", BenchMode::train, 4, Device::cpu, {}};
  const BaselineFigures a = measure_baseline(cpu), b = measure_baseline(cpu);
  CHECK(a.counters == b.counters);
  CHECK(a.tracked_peak_bytes == b.tracked_peak_bytes);
  CHECK(a.tracked_peak_by_role == b.tracked_peak_by_role);
  CHECK(a.counters.flops > 0);
  CHECK(a.tracked_peak_by_role[static_cast<size_t>(profiler::MemRole::optimizer)] > 0);
  BaselineSpec meta{"gpt2-small", BenchMode::infer, 1, Device::meta, {}};
  const BaselineFigures m = measure_baseline(meta);
  CHECK(m.counters.macs > 85'000'000'000LL);  // ~124M parameters x 1024 tokens, roughly
  CHECK(m.tracked_peak_by_role[static_cast<size_t>(profiler::MemRole::parameter)] > 400'000'000);
}

TEST_CASE("a dry run on the meta device predicts a step's memory to the byte, every zoo model") {
  // The train step (forward, backward, optimizer) and an inference call of each model family at
  // a small size, on the cpu and on the meta device: the same tracked peak, by role, and the same
  // allocations. The larger zoo models (resnet34/50, the GPT-2s) are built from the same layers.
  // Every op's part of this is checked on its own in tests/ops/tensor_level_test.cpp.
  nn::ModelOptions small_images;
  small_images.image_size = 32;
  nn::ModelOptions short_text;
  short_text.block_size = 16;
  const BaselineSpec specs[] = {
      {"mlp", BenchMode::train, 8, Device::cpu, {}},
      {"cnn", BenchMode::train, 8, Device::cpu, {}},
      {"transformer", BenchMode::train, 2, Device::cpu, short_text},
      {"resnet18", BenchMode::train, 2, Device::cpu, small_images},
      {"resnet18", BenchMode::infer, 2, Device::cpu, small_images},
  };
  for (BaselineSpec spec : specs) {
    INFO((spec.model + (spec.mode == BenchMode::train ? " train" : " infer")));
    const BaselineFigures cpu = measure_baseline(spec);
    spec.device = Device::meta;
    const BaselineFigures meta = measure_baseline(spec);
    CHECK(meta.tracked_peak_bytes == cpu.tracked_peak_bytes);
    CHECK(meta.tracked_peak_by_role == cpu.tracked_peak_by_role);
    CHECK(meta.counters.allocs == cpu.counters.allocs);
    CHECK(meta.counters.alloc_bytes == cpu.counters.alloc_bytes);
    CHECK(meta.counters.flops == cpu.counters.flops);
  }
}
