// The project's self-gate: committed baselines (bench/baselines/*.json) of the deterministic
// figures of every zoo model's training step and inference call at fixed shapes — FLOPs,
// minimum bytes, allocation count and bytes, and the peak tracked memory split by role. They
// are the same on every machine and every run, so `make test` checks them exactly: a change
// that moves one must update the baseline on purpose (`prism gate --baselines DIR --update`),
// and the diff in review shows what moved.
//
// Small models run for real on the cpu; the large ones (resnet34/50 at 224x224, the GPT-2s)
// run on the meta device, where the same front end computes shapes, costs and allocations
// without data, in milliseconds.
#pragma once

#include <string>
#include <vector>

#include "analysis/model_bench.h"

namespace prism::analysis {

// Where and at what shape a baseline entry is measured.
struct BaselineSpec {
  std::string model;
  BenchMode mode = BenchMode::infer;
  int64_t batch = 1;
  Device device = Device::cpu;  // cpu or meta
  nn::ModelOptions options;     // image_size, block_size (0: the model's default)
};

struct BaselineFigures {
  BaselineSpec spec;
  CallCounters counters;  // per call, after warm-up
  int64_t tracked_peak_bytes = 0;
  RoleBytes tracked_peak_by_role{};
};

// Measures one entry on one thread: two warm-up calls (the optimizer's state is made by the
// first step), then one call whose counters and tracked peak are read.
BaselineFigures measure_baseline(const BaselineSpec& spec);

// The specs of every zoo model, as committed (one file per model).
std::vector<BaselineSpec> default_baseline_specs();

struct BaselineCheck {
  std::string file;
  std::vector<std::string> differences;  // "mlp train batch 8: allocs 37 -> 38 (+1)"
  int entries = 0;
};

// Measures every entry of every *.json file in `dir` and compares exactly. With `update`,
// rewrites each file with the measured figures instead (atomically). An empty or unreadable
// directory, or a malformed file, is a prism::Error naming it.
std::vector<BaselineCheck> check_baselines(const std::string& dir, bool update);
// Writes the default specs' figures into `dir` (one file per model), replacing what is there.
void write_default_baselines(const std::string& dir);

}  // namespace prism::analysis
