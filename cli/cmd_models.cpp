// `prism models A B ...`: architectures side by side on one machine — parameters, FLOPs,
// activation memory, time per sample with its interval, how close each comes to the machine's
// peak, where the time goes by op class, memory by role, and findings read from those numbers.
// The work (matching, interleaved rounds, findings, JSON) is analysis/models_compare.h's; this
// file turns flags into options and prints.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "analysis/models_compare.h"
#include "analysis/report_format.h"
#include "cli/command.h"
#include "cli/commands.h"
#include "cli/file_roles.h"
#include "cli/options.h"
#include "profiler/output_file.h"

namespace prism::cli {

namespace {

// The flags, as add_options (below) declares them.
struct ModelsOptions {
  std::vector<std::string> models;  // at least one zoo model
  std::string match;                // "" | params | flops: scale widths to the first model's
  int64_t batch = 32;
  int threads = 0;
  int rounds = 3;         // interleaved rounds (each model once per round, per mode)
  double duration_s = 1;  // seconds of timed calls per model, mode and round
  uint64_t seed = 42;
  int64_t block_size = 0;  // transformers: context length (0: the model's)
  bool no_peak = false;
  std::string json_path;
};

using analysis::BenchMode;
using analysis::ModelResult;
using analysis::ModelsResult;
using analysis::ModeResult;
using analysis::OpClass;

const char* mode_label(BenchMode m) {
  return m == BenchMode::train ? "train" : "infer";
}

// The main table: one row per model and mode.
std::string costs_table(const ModelsResult& r) {
  const double batch = static_cast<double>(r.options.batch);
  analysis::TextColumns t({"model", "mode", "params", "fwd FLOP/sample", "bwd FLOP/sample",
                           "act/sample", "time/sample", "95% interval", "GFLOP/s", "% peak",
                           "FLOP/byte"});
  for (const ModelResult& m : r.models) {
    for (BenchMode mode : {BenchMode::train, BenchMode::infer}) {
      const ModeResult& x = m.mode(mode);
      t.add({m.model, mode_label(mode), analysis::with_commas(static_cast<double>(m.parameters)),
             analysis::si(x.forward_flops / batch),
             mode == BenchMode::train ? analysis::si(x.backward_flops / batch) : "-",
             analysis::format_bytes(std::llround(x.activation_bytes / batch)),
             analysis::format_ns(x.median_ns / batch),
             analysis::format_ns(x.ci_low_ns / batch) + " - " +
                 analysis::format_ns(x.ci_high_ns / batch),
             fmt::format("{:.2f}", x.gflops),
             r.peak_gflops > 0 ? fmt::format("{:.1f}%", x.pct_peak) : "-",
             x.intensity > 0 ? fmt::format("{:.1f}", x.intensity) : "-"});
    }
  }
  return t.str("  ");
}

std::string class_table(const ModelsResult& r) {
  std::vector<std::string> headers{"model", "mode"};
  for (int c = 0; c < analysis::kNumOpClasses; ++c) {
    headers.push_back(analysis::op_class_name(static_cast<OpClass>(c)));
  }
  analysis::TextColumns t(headers);
  for (const ModelResult& m : r.models) {
    for (BenchMode mode : {BenchMode::train, BenchMode::infer}) {
      std::vector<std::string> row{m.model, mode_label(mode)};
      for (int c = 0; c < analysis::kNumOpClasses; ++c) {
        const double p = m.mode(mode).class_share_pct(static_cast<OpClass>(c));
        row.push_back(p > 0 ? fmt::format("{:.1f}%", p) : "-");
      }
      t.add(row);
    }
  }
  return t.str("  ");
}

std::string memory_table(const ModelsResult& r) {
  std::vector<std::string> headers{"model", "mode"};
  for (int k = 0; k < profiler::kNumRoles; ++k) {
    headers.push_back(profiler::role_name(static_cast<profiler::MemRole>(k)));
  }
  headers.push_back("total");
  analysis::TextColumns t(headers);
  for (const ModelResult& m : r.models) {
    for (BenchMode mode : {BenchMode::train, BenchMode::infer}) {
      const ModeResult& x = m.mode(mode);
      std::vector<std::string> row{m.model, mode_label(mode)};
      for (int k = 0; k < profiler::kNumRoles; ++k) {
        const int64_t b = x.peak_by_role[static_cast<size_t>(k)];
        row.push_back(b > 0 ? analysis::format_bytes(b) : "-");
      }
      row.push_back(analysis::format_bytes(x.tracked_peak_bytes));
      t.add(row);
    }
  }
  return t.str("  ");
}

std::string format_models(const ModelsResult& r) {
  const analysis::ModelsOptions& o = r.options;
  std::string models;
  for (const ModelResult& m : r.models) {
    models += (models.empty() ? "" : ", ") + m.model;
    if (m.width > 0) models += fmt::format(" (width {})", m.width);
  }
  std::string out = fmt::format(
      "prism models: {}\nbatch {}, {} thread{}, {} round{} interleaved (order rotated each "
      "round), {} s of timed calls per model, mode and round\n",
      models, o.batch, r.threads, r.threads == 1 ? "" : "s", o.rounds, o.rounds == 1 ? "" : "s",
      o.duration_s);
  if (r.peak_gflops > 0) {
    out += fmt::format(
        "machine peak at {} thread{}: {:.1f} GFLOP/s, {:.1f} GB/s, ridge point {:.1f} FLOP/byte\n",
        r.threads, r.threads == 1 ? "" : "s", r.peak_gflops, r.peak_gbps, r.ridge_flop_per_byte);
  } else {
    out += "machine peak: not used (--no-peak): no % of peak, no ridge point\n";
  }
  if (!r.matches.empty()) {
    out += fmt::format("\n--match {} (the first model, {}, is the target; tolerance {:.0f}%):\n",
                       analysis::match_by_name(o.match), r.models.front().model,
                       analysis::kMatchTolerancePct);
    for (const analysis::WidthMatch& m : r.matches) {
      out += "  " + analysis::describe_match(m) + "\n";
    }
  }
  out +=
      "\ncosts and speed (per sample: one row of the batch; time = median call / batch; FLOP/byte "
      "= FLOPs / minimum bytes):\n";
  out += costs_table(r);
  out += "\ntime by op class (% of the profiled self time):\n";
  out += class_table(r);
  out += "\ntracked memory at the peak, by role:\n";
  out += memory_table(r);
  out += "\nfindings:\n";
  for (const std::string& f : analysis::findings(r)) out += "  - " + f + "\n";
  out += analysis::warnings_section(r.environment);
  return out;
}

int run_models(const ModelsOptions& o) {
  if (o.threads > 0) set_threads(o.threads);
  if (!o.json_path.empty()) check_writable(o.json_path, "json");
  for (const std::string& m : o.models) check_model_name(m);  // the zoo's list, exit 2

  analysis::ModelsOptions mo;
  mo.models = o.models;
  mo.batch = o.batch;
  mo.rounds = o.rounds;
  mo.duration_s = o.duration_s;
  mo.seed = o.seed;
  mo.model_options.block_size = o.block_size;
  mo.peak = !o.no_peak;
  mo.progress = [](const std::string& what) {
    std::fprintf(stderr, "prism models: %s\n", what.c_str());
  };
  try {
    mo.match = analysis::match_by_from_name(o.match);
    analysis::check_models_options(mo);  // before any model is built or timed
  } catch (const Error& e) {
    throw UsageError(e.what());
  }

  const ModelsResult r = analysis::run_models(mo);
  std::fputs(format_models(r).c_str(), stdout);
  if (!o.json_path.empty()) {
    profiler::write_text_file(o.json_path, analysis::models_to_json(r).dump(1) + "\n");
    std::printf("wrote %s\n", o.json_path.c_str());
  }
  return 0;
}

void add_options(CLI::App& cmd, ModelsOptions& o) {
  cmd.add_option("models", o.models, "zoo models to compare, e.g. mlp cnn transformer")
      ->required()
      ->expected(1, 16);
  cmd.add_option("--match", o.match,
                 "scale the models' widths to the first model's parameter count (params) or "
                 "forward FLOPs per sample (flops)")
      ->check(CLI::IsMember({"params", "flops"}));
  cmd.add_option("--batch", o.batch, "batch size for every model")
      ->check(whole_number(1, 1'000'000))
      ->capture_default_str();
  add_model_threads(cmd, o.threads);
  cmd.add_option("--rounds", o.rounds,
                 "interleaved rounds (every model once per mode a round, the order rotated)")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  cmd.add_option("--duration", o.duration_s, "seconds of timed calls per model, mode and round")
      ->check(positive_number(1e6))
      ->capture_default_str();
  add_model_seed(cmd, o.seed);
  add_block(cmd, o.block_size);
  add_no_peak(cmd, o.no_peak);
  cmd.add_option("--json", o.json_path, "also write the comparison as JSON")
      ->type_name("FILE")
      ->check(file_name());
}

Action setup(CLI::App& cmd) {
  auto o = std::make_shared<ModelsOptions>();
  add_options(cmd, *o);
  return {.run = [o] { return run_models(*o); },
          .files = [o](CommandFiles& f) { f.output("--json", o->json_path); }};
}

const RegisteredCommand registered(
    {.order = 900,
     .name = "models",
     .help = "architectures side by side: costs, speed and where the time goes, interleaved",
     .runs_kernels = true,
     .setup = &setup});

}  // namespace

}  // namespace prism::cli
