// Every CPU variant of every op, on raw buffers, from the ops' own descriptions
// (kernels/opinfo/): the same cases the lab times and the tests check, under Google Benchmark.
// Nothing here knows an op: a new op, a new variant or a learner's kernel linked in is
// benchmarked with the others, as BM_Op/<op>/<variant>/<size>.
//
// Validate, then time: before its first iteration each benchmark runs the variant and the op's
// baseline (reference, else naive) on the same inputs through the one validation routine
// (kernels/opinfo/validate.h: guard zones, NaN poison, normalized error within the op's
// tolerance) and skips with the reason if it fails. Counters: FLOPs and bytes of one call from
// the op's cost formula (kernels/costs.h), as rates: FLOPs=...G/s is GFLOP/s.
//
// Flags (read before Google Benchmark's own):
//   --op NAME       only this op (repeatable; default: every op described)
//   --sizes A,B     these sizes, in the op's syntax (`prism lab --list`), instead of its defaults;
//                   needs exactly one --op
// Run (docs/PERFORMANCE.md), e.g. the LeNet convolutions:
//   OMP_NUM_THREADS=1 ./prism_bench_ops --op conv2d --sizes 64x1x28x28x16x3:s1p0
//       --benchmark_repetitions=9 --benchmark_report_aggregates_only=true   (one command line)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/opinfo/validate.h"
#include "kernels/registry.h"

namespace {

using prism::Device;
using prism::DType;
using prism::kernels::KernelEntry;
using prism::opinfo::OpInfo;

constexpr uint64_t kSeed = 1;

void BM_Op(benchmark::State& state, const OpInfo* op, const KernelEntry* variant,
           const KernelEntry* baseline, std::string size) {
  const prism::opinfo::ValidationCheck check =
      prism::opinfo::validate_variant(*op, *variant, *baseline, size, kSeed);
  if (!check.ok) {
    state.SkipWithError(
        ("failed validation against " + baseline->name + ": " + check.what).c_str());
    return;
  }
  auto c = op->make(size, kSeed);
  for (auto _ : state) {
    c->run(*variant);
    benchmark::ClobberMemory();
  }
  prism::bench::report_cost(state, c->cost());
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

struct Options {
  std::vector<std::string> ops;
  std::vector<std::string> sizes;
};

// Takes --op and --sizes out of argv (Google Benchmark refuses flags it does not know).
Options take_options(int& argc, char** argv) {
  Options o;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const bool op = std::strcmp(argv[i], "--op") == 0, sizes = std::strcmp(argv[i], "--sizes") == 0;
    if ((op || sizes) && i + 1 >= argc) throw prism::Error(std::string(argv[i]) + " needs a value");
    if (op) {
      o.ops.push_back(argv[++i]);
    } else if (sizes) {
      o.sizes = split(argv[++i]);
      if (o.sizes.empty()) throw prism::Error("--sizes needs at least one size");
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  if (!o.sizes.empty() && o.ops.size() != 1) {
    throw prism::Error("--sizes applies to one op: give exactly one --op with it");
  }
  return o;
}

// Registers op x variant x size, checking every op name and size before anything runs.
void register_benchmarks(const Options& o) {
  std::vector<const OpInfo*> ops;
  if (o.ops.empty()) {
    for (const OpInfo& op : prism::opinfo::op_infos()) ops.push_back(&op);
  } else {
    for (const std::string& name : o.ops) ops.push_back(&prism::opinfo::find_op_info(name));
  }
  for (const OpInfo* op : ops) {
    const auto& kernels = prism::kernels::registry().at(op->op, Device::cpu);
    const KernelEntry* baseline = &prism::opinfo::baseline_of(kernels);
    const std::vector<std::string>& sizes = o.sizes.empty() ? op->default_sizes : o.sizes;
    for (const std::string& size : sizes) op->make(size, kSeed);  // a bad size is an Error now
    for (const std::string& size : sizes) {
      for (const KernelEntry& v : kernels.entries()) {
        if (!v.has(DType::f32)) continue;
        benchmark::RegisterBenchmark(("BM_Op/" + op->op + "/" + v.name + "/" + size).c_str(), BM_Op,
                                     op, &v, baseline, size)
            ->Apply(prism::bench::configure);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    register_benchmarks(take_options(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "prism_bench_ops: %s\n", e.what());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
