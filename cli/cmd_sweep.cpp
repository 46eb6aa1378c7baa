// `prism sweep MODEL --vary NAME=V1,V2,...`: how time, throughput, FLOPs and memory grow with
// one size, a power-law fit with its knees, findings, and a prediction checked by measuring.
// The work is analysis/sweep.h's; this file turns flags into options and prints.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "analysis/sweep.h"
#include "analysis/sweep_report.h"
#include "cli/command.h"
#include "cli/commands.h"
#include "cli/file_roles.h"
#include "cli/options.h"
#include "profiler/output_file.h"

namespace prism::cli {

namespace {

// The flags, as add_options (below) declares them.
struct SweepOptions {
  std::string model;
  std::string mode = "train";  // infer | train
  std::string vary;            // "batch=1,2,4,8": batch, seq, width, depth or threads
  int64_t batch = 0;           // the batch when another size varies (0: the model's default)
  int threads = 0;
  int warmup = 3;
  double duration_s = 1;  // seconds of timed calls per point
  int64_t predict = 0;    // > 0: predict time and memory at this size
  bool check = false;     // with --predict: measure it and print the error
  uint64_t seed = 42;
  int64_t image_size = 0;
  int64_t block_size = 0;  // transformers: context length when seq does not vary
  std::vector<std::string> kernels;
  bool no_peak = false;
  std::string json_path;
};

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

void add_options(CLI::App& cmd, SweepOptions& o) {
  cmd.add_option("model", o.model, "model: mlp, cnn, transformer, resnet18, ...")->required();
  cmd.add_option("--vary", o.vary,
                 "the size to vary and its values: batch=1,2,4,... (also seq= for transformers, "
                 "width=, depth=, threads=)")
      ->type_name("NAME=V1,V2,...")
      ->required();
  cmd.add_option("--mode", o.mode, "infer (forward, eval mode, no grad) or train (full steps)")
      ->check(CLI::IsMember({"infer", "train"}))
      ->capture_default_str();
  cmd.add_option("--batch", o.batch, "batch size when another size varies (default the model's)")
      ->check(whole_number(1, 1'000'000));
  add_model_threads(cmd, o.threads);
  cmd.add_option("--warmup", o.warmup, "warm calls before timing each point")
      ->check(whole_number(0, 100'000))
      ->capture_default_str();
  cmd.add_option("--duration", o.duration_s,
                 "seconds of timed calls per point, split over two passes (up, then down)")
      ->check(positive_number(1e6))
      ->capture_default_str();
  cmd.add_option("--predict", o.predict, "predict time and memory at this size from the fit")
      ->check(whole_number(1, 1'000'000'000));
  cmd.add_flag("--check", o.check, "with --predict: measure that size too and print the error");
  add_model_seed(cmd, o.seed);
  add_image_size(cmd, o.image_size);
  add_block(cmd, o.block_size);
  add_kernel(cmd, o.kernels);
  add_no_peak(cmd, o.no_peak);
  cmd.add_option("--json", o.json_path, "also write the points and the fit as JSON")
      ->type_name("FILE")
      ->check(file_name());
}

Action setup(CLI::App& cmd) {
  auto o = std::make_shared<SweepOptions>();
  add_options(cmd, *o);
  return {.run = [o] { return run_sweep(*o); },
          .files = [o](CommandFiles& f) { f.output("--json", o->json_path); }};
}

const RegisteredCommand registered(
    {.order = 1000,
     .name = "sweep",
     .help = "how time and memory grow with one size (batch, seq, width, depth, threads)",
     .runs_kernels = true,
     .setup = &setup});

}  // namespace

}  // namespace prism::cli
