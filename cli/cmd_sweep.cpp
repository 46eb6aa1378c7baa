// `prism sweep MODEL --vary NAME=V1,V2,...`: how time, throughput, FLOPs and memory grow with
// one size, a power-law fit with its knees, findings, and a prediction checked by measuring.
// The work is analysis/sweep.h's; this file turns flags into options and prints.
#include <cstdio>

#include "analysis/sweep.h"
#include "analysis/sweep_report.h"
#include "cli/commands.h"
#include "profiler/output_file.h"

namespace prism::cli {

namespace {

// Every problem the options have, as a usage error (exit 2), before any work.
analysis::SweepOptions sweep_options(const SweepOptions& o) {
  analysis::SweepOptions s;
  try {
    s.vary = analysis::parse_vary(o.vary);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  const analysis::SweepVar var = s.vary.var;
  if (var == analysis::SweepVar::batch && o.batch > 0) {
    throw UsageError(
        "--batch sets the batch while another size varies; with --vary batch= "
        "leave it out");
  }
  if (var == analysis::SweepVar::seq && o.block_size > 0) {
    throw UsageError(
        "--block sets the context length while another size varies; with --vary "
        "seq= leave it out");
  }
  if (var == analysis::SweepVar::threads && o.threads > 0) {
    throw UsageError(
        "--threads sets the thread count while another size varies; with --vary "
        "threads= leave it out");
  }
  if (o.check && o.predict <= 0) {
    throw UsageError("--check measures the predicted size: give --predict N as well");
  }
  if (o.mode != "infer" && o.mode != "train") {
    throw UsageError("--mode: expected infer or train, got '" + o.mode + "'");
  }
  analysis::BenchOptions& b = s.bench;
  b.model = o.model;
  b.mode = o.mode == "infer" ? analysis::BenchMode::infer : analysis::BenchMode::train;
  b.batches = o.batch > 0 ? std::vector<int64_t>{o.batch} : std::vector<int64_t>{};
  b.warmup = o.warmup;
  b.duration_s = o.duration_s;
  b.seed = o.seed;
  b.model_options.image_size = o.image_size;
  b.model_options.block_size = o.block_size;
  b.peak = !o.no_peak;
  s.predict = o.predict;
  s.check = o.check;
  try {
    analysis::check_sweep_options(s);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  return s;
}

}  // namespace

int run_sweep(const SweepOptions& o) {
  if (o.threads > 0) set_threads(o.threads);
  load_kernel_env();
  apply_kernel_flags(o.kernels);
  if (!o.json_path.empty()) check_writable(o.json_path, "json");
  check_model_name(o.model);
  const analysis::SweepOptions s = sweep_options(o);

  const analysis::SweepResult r = analysis::run_sweep(s);
  std::fputs(analysis::format_sweep(r).c_str(), stdout);
  if (!o.json_path.empty()) {
    profiler::write_text_file(o.json_path, analysis::sweep_to_json(r).dump(1) + "\n");
    std::printf("wrote %s\n", o.json_path.c_str());
  }
  return 0;
}

}  // namespace prism::cli
