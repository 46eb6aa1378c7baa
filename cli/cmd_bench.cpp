// `prism bench MODEL`: the latency distribution, throughput and memory of a model's inference
// call or training step per batch size, or a server scenario (--qps), or the input pipeline
// alone (--model-off). The work is analysis/model_bench.h's; this file turns flags into options
// and prints.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "analysis/bench_report.h"
#include "analysis/decode_bench.h"
#include "analysis/environment.h"
#include "analysis/run_record.h"
#include "cli/bench_options.h"
#include "cli/command.h"
#include "cli/commands.h"
#include "cli/file_roles.h"
#include "cli/options.h"
#include "profiler/reports.h"

namespace prism::cli {

namespace {

// `--mode decode` (analysis/decode_bench.h): one sequence at batch 1, so the batch sweep's
// flags have nothing to act on; each is refused by name rather than ignored.
int run_decode(const BenchCliOptions& o) {
  const BenchCliOptions defaults;
  auto refuse = [](bool given, const char* flag, const char* why) {
    if (given) throw UsageError(std::string(flag) + ": not with --mode decode (" + why + ")");
  };
  refuse(!o.batches.empty() && o.batches != std::vector<int64_t>{1}, "--batch",
         "decoding runs at batch 1");
  refuse(!o.qps.empty(), "--qps", "the server scenario serves --mode infer");
  refuse(o.model_off, "--model-off", "it times a data pipeline");
  refuse(o.counters, "--counters", "decode has no profiled window");
  refuse(!o.data.empty(), "--data", "the prompt is random token ids");
  refuse(o.precision != "fp32", "--precision", "decode runs fp32");
  refuse(!o.load_path.empty(), "--load", "decode times random weights");
  refuse(!o.checkpoint.empty(), "--checkpoint", "there is no backward");
  refuse(o.device != "cpu", "--device", "decode runs on the cpu");
  refuse(o.warmup != defaults.warmup, "--warmup", "one untimed sequence runs first");
  refuse(o.duration_s != defaults.duration_s, "--duration", "--iters sets the timed sequences");
  analysis::DecodeOptions d;
  d.model = o.model;
  if (o.prompt_tokens > 0) d.prompt = o.prompt_tokens;
  if (o.new_tokens > 0) d.tokens = o.new_tokens;
  if (o.iters > 0) d.sequences = o.iters;
  d.seed = o.seed;
  d.peak = !o.no_peak;
  d.model_options.block_size = o.block_size;
  try {
    analysis::check_decode_options(d);  // before the machine's figures or the model
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  const analysis::DecodeResult r = analysis::run_decode_bench(d);
  std::fputs(analysis::format_decode(r).c_str(), stdout);
  if (!o.json_path.empty()) {
    profiler::write_text_file(o.json_path, analysis::decode_to_json(r).dump(1) + "\n");
    std::printf("wrote %s\n", o.json_path.c_str());
  }
  return 0;
}

int run_bench(const BenchCliOptions& o) {
  // Before anything else touches memory: what the binary and its libraries hold.
  const int64_t resident_at_start = analysis::resident_memory().rss_bytes;
  if (o.threads > 0) set_threads(o.threads);
  load_kernel_env();
  apply_kernel_flags(o.kernels);
  if (!o.json_path.empty()) check_writable(o.json_path, "json");
  check_model_name(o.model);  // before a data set is loaded
  if (o.mode == "decode") return run_decode(o);
  if (o.model_off) {
    // The input pipeline alone: usage errors before a data set is loaded.
    if (o.data.empty()) {
      throw UsageError(
          "--model-off times the input pipeline, and synthetic inputs have no pipeline to "
          "measure: give a data set with --data (e.g. --data spirals)");
    }
    if (!o.qps.empty())
      throw UsageError("--model-off: the server scenario (--qps) needs the model");
    if (o.counters) throw UsageError("--model-off: --counters needs the model's profiled window");
  }
  analysis::BenchOptions bo = bench_options(o);
  bo.resident_at_start = resident_at_start;
  // --counters: event counts per op in each batch size's profiled window.
  if (o.counters && !o.qps.empty()) {
    throw UsageError("--counters: the server scenario (--qps) has no profiled window to count");
  }
  bo.counters = o.counters;
  bo.data_spec = o.data;
  try {
    analysis::check_bench_options(bo);  // before the machine peak or the model is touched
  } catch (const Error& e) {
    throw UsageError(e.what());
  }

  if (o.model_off) {
    try {
      analysis::check_pipeline_options(bo);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    const analysis::PipelineResult p = analysis::run_pipeline_bench(bo);
    std::fputs(analysis::format_pipeline(p).c_str(), stdout);
    if (!o.json_path.empty()) {
      profiler::write_text_file(o.json_path, analysis::pipeline_to_json(p).dump(1) + "\n");
      std::printf("wrote %s\n", o.json_path.c_str());
    }
    return 0;
  }

  const analysis::BenchResult r = analysis::run_bench(bo);
  std::fputs(analysis::format_bench(r).c_str(), stdout);
  if (!o.json_path.empty()) {
    nlohmann::ordered_json doc = analysis::bench_to_json(r);
    // The bottleneck map of each batch size's profiled window (analysis/bottleneck.h).
    nlohmann::ordered_json maps = nlohmann::ordered_json::array();
    for (const analysis::BatchResult& b : r.batches) {
      maps.push_back({{"batch", b.batch}, {"map", analysis::bottleneck_json(b.bottleneck)}});
    }
    if (!r.batches.empty()) doc["bottleneck"] = maps;
    profiler::write_text_file(o.json_path, doc.dump(1) + "\n");
    std::printf("wrote %s\n", o.json_path.c_str());
  }
  return 0;
}

void add_options(CLI::App& cmd, BenchCliOptions& o) {
  // Required unless `bench collectives` is given: checked after the parse (Action::check, which
  // runs for `bench MODEL` only), since CLI11 would demand it of the subcommand too.
  cmd.add_option("model", o.model,
                 "model: mlp, cnn, transformer, resnet18, ... (required, unless `collectives`)");
  add_shared_bench_options(cmd, o, true);
  cmd.add_option("--iters", o.iters,
                 "exactly this many timed calls per batch size (overrides --duration)")
      ->check(whole_number(1, 100'000'000));
  add_kernel(cmd, o.kernels);
  cmd.add_option(
         "--qps", o.qps,
         "server scenario: Poisson request rates to sweep, comma-separated, e.g. 50,100,200")
      ->delimiter(',')
      ->check(positive_number(1e9))
      ->type_name("R,...");
  cmd.add_option("--max-batch", o.max_batch, "server: the largest batch the worker forms")
      ->check(whole_number(1, 4096))
      ->capture_default_str();
  cmd.add_option("--max-wait-ms", o.max_wait_ms,
                 "server: how long the oldest request may wait for its batch to fill")
      ->check(number_in(0, 1e6))
      ->capture_default_str();
  cmd.add_option("--slo-ms", o.slo_ms, "server: report where the p99 latency crosses this")
      ->check(positive_number(1e9));
  cmd.add_flag("--counters", o.counters,
               "hardware counters per op in the profiled window (cycles, instructions, cache "
               "and branch misses), where the machine allows them, on the calling thread only "
               "(not OpenMP workers)");
  cmd.add_flag("--model-off", o.model_off,
               "time the input pipeline alone (needs --data): the model is replaced by a "
               "trivial computation, so the data loader's own rate shows");
  cmd.add_option("--prompt-tokens", o.prompt_tokens,
                 "decode: prompt length in tokens, random ids (default 64)")
      ->check(whole_number(1, 1'000'000));
  cmd.add_option("--tokens", o.new_tokens,
                 "decode: tokens generated per sequence (default 64); --iters: timed sequences "
                 "(default 3)")
      ->check(whole_number(1, 1'000'000));
}

Action setup(CLI::App& cmd) {
  auto o = std::make_shared<BenchCliOptions>();
  add_options(cmd, *o);
  return {.run = [o] { return run_bench(*o); },
          .files =
              [o](CommandFiles& f) {
                f.input("--load", o->load_path);
                // Synthetic inputs unless --data names a set: no default set is read.
                if (!o->data.empty()) f.data_set(o->data, false);
                f.output("--json", o->json_path);
              },
          .check =
              [o] {
                if (o->model.empty()) throw CLI::RequiredError("model");
              }};
}

const RegisteredCommand registered(
    {.order = 700,
     .name = "bench",
     .help = "latency percentiles, throughput and memory of a model per batch size",
     .runs_kernels = true,
     .setup = &setup});

}  // namespace

}  // namespace prism::cli
