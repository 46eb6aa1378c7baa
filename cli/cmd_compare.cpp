// `prism compare`: baseline against candidate.
//
//   prism compare BASE.json CAND.json          two results of `bench --json` or `train --json`
//   prism compare MODEL --b "--kernel matmul=naive" [--a "..."] [--rounds N]
//
// With a model, both sides are measured here, interleaved A B B A A B B A ...: whatever drifts
// during the run (the clock, the other tenants of the machine, the temperature) then falls on
// both sides alike instead of on whichever ran second. Each round is a short `bench` of every
// batch size; the samples of all rounds of a side are pooled.
#include <cstdio>
#include <exception>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "analysis/compare.h"
#include "analysis/run_record.h"
#include "cli/bench_options.h"
#include "cli/command.h"
#include "cli/commands.h"
#include "cli/file_roles.h"
#include "cli/options.h"
#include "kernels/registry.h"
#include "nn/models/zoo.h"
#include "nn/safetensors.h"
#include "profiler/output_file.h"

namespace prism::cli {

namespace {

// The flags, as add_options (below) declares them.
struct CompareOptions {
  std::vector<std::string> inputs;  // BASE.json CAND.json, or MODEL
  std::string a_flags, b_flags;     // with MODEL: what differs ("--kernel matmul=naive")
  int rounds = 4;
  BenchCliOptions bench;  // with MODEL: the settings both sides share
  int rows = 10;          // rows of the per-op table
  std::string json_path;  // also write the comparison as JSON ("prism.compare")
};

// Prints the report, and writes it with the comparison as JSON when --json asks.
void emit(const analysis::Comparison& c, const CompareOptions& o) {
  const std::string report = analysis::format_comparison(c, o.rows);
  std::fputs(report.c_str(), stdout);
  if (!o.json_path.empty()) {
    profiler::write_text_file(o.json_path, analysis::comparison_to_json(c, report).dump(1) + "\n");
    std::printf("wrote %s\n", o.json_path.c_str());
  }
}

// What one side changes: kernel variants and the thread count.
struct Side {
  std::vector<std::string> kernels;
  int threads = 0;
  std::string checkpoint;  // --checkpoint for this side (empty: the shared options' value)
  std::string precision;   // --precision for this side (empty: the shared options' value)
  std::string load_path;   // --load: the weights this side times (fp32, or int8 with --precision)
};

Side parse_side(const std::string& flags, const char* which) {
  Side s;
  std::vector<std::string> args;
  std::istringstream in(flags);
  for (std::string w; in >> w;) args.push_back(w);
  CLI::App app{"", which};
  app.add_option("--kernel", s.kernels)->allow_extra_args(false);
  app.add_option("--threads", s.threads)->check(CLI::Range(1, 1024));
  app.add_option("--checkpoint", s.checkpoint);
  app.add_option("--precision", s.precision)->check(CLI::IsMember({"fp32", "bf16", "int8"}));
  app.add_option("--load", s.load_path);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses from the back
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw UsageError(std::string(which) + " \"" + flags + "\": " + e.what() +
                     " (a side may set --kernel OP=VARIANT, --threads N, --checkpoint "
                     "blocks|every-N, --precision fp32|bf16|int8 and, with int8, --load FILE)");
  }
  return s;
}

// Clears every process-wide kernel choice (--kernel), so each side starts from the defaults
// (and from PRISM_KERNELS, which ranks below --kernel and applies to both sides alike).
void reset_kernels() {
  for (const kernels::OpKernels* k : kernels::registry().all()) kernels::set_variant(k->op(), "");
}

// Adds one round's samples to the side's pooled result.
void pool(analysis::BenchResult& into, const analysis::BenchResult& round) {
  for (size_t i = 0; i < into.batches.size(); ++i) {
    auto& dst = into.batches[i];
    const auto& src = round.batches[i];
    dst.samples_ns.insert(dst.samples_ns.end(), src.samples_ns.begin(), src.samples_ns.end());
    dst.peak_rss_bytes = std::max(dst.peak_rss_bytes, src.peak_rss_bytes);
    dst.tracked_peak_bytes = std::max(dst.tracked_peak_bytes, src.tracked_peak_bytes);
  }
}

int compare_model(const CompareOptions& o) {
  const Side a = parse_side(o.a_flags, "--a");
  const Side b = parse_side(o.b_flags, "--b");
  if (o.a_flags == o.b_flags) {
    throw UsageError("--a and --b are the same: give the candidate's change with --b");
  }
  analysis::BenchOptions base = bench_options(o.bench);
  if (!base.qps.empty()) throw UsageError("compare: --qps is for `prism bench`");
  try {
    analysis::check_bench_options(base);  // a batch given twice, ...: usage errors
    for (const Side* s : {&a, &b}) {
      if (s->checkpoint.empty()) continue;
      BenchCliOptions side = o.bench;
      side.checkpoint = s->checkpoint;
      analysis::check_bench_options(bench_options(side));  // a bad value, --mode infer
    }
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  const int default_threads = o.bench.threads > 0 ? o.bench.threads : max_threads();
  base.duration_s = o.bench.duration_s / o.rounds;
  base.min_iters = 3;
  load_kernel_env();
  // Both sides checked before the first round: a kernel variant that does not exist, or a --load
  // file that cannot be read or does not fit the model, fails here in milliseconds, not after
  // side A's first round has run. Float32 weights are checked against the model built on the
  // meta device (names, dtypes, shapes; no memory), an int8 file by its tag (load_quantized
  // checks the rest as it loads).
  auto check_load = [&](const std::string& path, const std::string& precision) {
    if (path.empty()) return;
    if (precision == "int8") {
      nn::Metadata meta;
      nn::safetensors_tensor_count(path, &meta);
      if (meta["prism.quantized"] != "int8") {
        throw Error(path + " is not an int8 model (no prism.quantized = int8 in its metadata)");
      }
      return;
    }
    DefaultDevice on_meta(Device::meta);
    nn::check_safetensors_fit(*nn::make_model(base.model, base.model_options), path);
  };
  check_load(base.load_path, base.precision);
  for (const auto& [s, which] : {std::pair{&a, "--a"}, std::pair{&b, "--b"}}) {
    reset_kernels();
    try {
      apply_kernel_flags(s->kernels);
    } catch (const UsageError& e) {
      throw UsageError(std::string(which) + ": " + e.what());
    }
    check_load(s->load_path.empty() ? base.load_path : s->load_path,
               s->precision.empty() ? base.precision : s->precision);
  }
  reset_kernels();

  // Each side's settings are applied, then undone, around each of its rounds.
  auto run_side = [&](const Side& s, bool first_round) {
    reset_kernels();
    apply_kernel_flags(s.kernels);
    set_threads(s.threads > 0 ? s.threads : default_threads);
    analysis::BenchOptions opts = base;
    if (!s.checkpoint.empty()) opts.model_options.checkpoint = s.checkpoint;
    if (!s.precision.empty()) opts.precision = s.precision;
    if (!s.load_path.empty()) opts.load_path = s.load_path;
    opts.check_environment = first_round;
    opts.peak = first_round && !o.bench.no_peak;
    return analysis::run_bench(opts);
  };
  analysis::BenchResult ra, rb;
  // The progress line is rewritten in place ("\rround 2/3"); a failure during a round ends it
  // first, so the error starts a line of its own.
  struct EndLineOnError {
    ~EndLineOnError() {
      if (std::uncaught_exceptions() > 0) std::fputs("\n", stderr);
    }
  };
  {
    EndLineOnError end_line;
    for (int round = 0; round < o.rounds; ++round) {
      std::fprintf(stderr, "\rround %d/%d", round + 1, o.rounds);
      // A B, then B A, and again: each side runs first in half of the rounds.
      const bool a_first = round % 2 == 0;
      for (int k = 0; k < 2; ++k) {
        const bool is_a = (k == 0) == a_first;
        analysis::BenchResult r = run_side(is_a ? a : b, round == 0);
        analysis::BenchResult& dst = is_a ? ra : rb;
        if (round == 0) {
          dst = std::move(r);
        } else {
          pool(dst, r);
        }
      }
    }
  }
  std::fputs("\r", stderr);
  reset_kernels();
  set_threads(default_threads);

  analysis::RunRecord rec_a = analysis::run_from_json(analysis::bench_to_json(ra), "");
  analysis::RunRecord rec_b = analysis::run_from_json(analysis::bench_to_json(rb), "");
  std::printf("compare %s --mode %s, %d interleaved rounds: A = \"%s\", B = \"%s\"\n\n",
              o.bench.model.c_str(), o.bench.mode.c_str(), o.rounds, o.a_flags.c_str(),
              o.b_flags.c_str());
  emit(analysis::compare_runs(rec_a, rec_b), o);
  return 0;
}

int run_compare(const CompareOptions& o) {
  if (!o.json_path.empty()) check_writable(o.json_path, "json");
  if (o.inputs.size() == 2) {
    if (!o.a_flags.empty() || !o.b_flags.empty()) {
      throw UsageError("--a and --b are for `prism compare MODEL`, not for two result files");
    }
    analysis::Comparison c;
    try {
      c = analysis::compare_runs(analysis::load_run(o.inputs[0]), analysis::load_run(o.inputs[1]));
    } catch (const Error& e) {
      throw UsageError(e.what());  // a missing or malformed file, runs that cannot be compared
    }
    emit(c, o);
    return 0;
  }
  if (o.inputs.size() == 1) {
    CompareOptions m = o;
    m.bench.model = o.inputs[0];
    check_model_name(m.bench.model);
    return compare_model(m);
  }
  throw UsageError("compare: give BASE.json CAND.json, or MODEL with --b \"<flags>\"");
}

void add_options(CLI::App& cmd, CompareOptions& o) {
  cmd.add_option("inputs", o.inputs, "BASE.json CAND.json, or a MODEL to run both ways")
      ->required()
      ->expected(1, 2);
  cmd.add_option("--a", o.a_flags, "MODEL: the baseline's flags (default: none)")
      ->type_name("\"FLAGS\"");
  cmd.add_option("--b", o.b_flags, "MODEL: the candidate's flags, e.g. \"--kernel matmul=naive\"")
      ->type_name("\"FLAGS\"");
  cmd.add_option("--rounds", o.rounds, "MODEL: interleaved rounds per side (A B B A ...)")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  cmd.add_option("--rows", o.rows, "rows of the per-op table (0 = all)")
      ->check(whole_number(0, 1'000'000))
      ->capture_default_str();
  cmd.add_option("--json", o.json_path, "also write the comparison as JSON (for prism report)")
      ->type_name("FILE")
      ->check(file_name());
  o.bench.batches = {1, 64};
  o.bench.duration_s = 4;
  add_shared_bench_options(cmd, o.bench, false);
}

Action setup(CLI::App& cmd) {
  auto o = std::make_shared<CompareOptions>();
  add_options(cmd, *o);
  return {.run = [o] { return run_compare(*o); },
          .files =
              [o](CommandFiles& f) {
                const CompareOptions& c = *o;
                if (c.inputs.size() == 2) {  // BASE.json CAND.json
                  f.input("BASE", c.inputs[0]);
                  f.input("CAND", c.inputs[1]);
                } else {  // MODEL, measured here: the shared and each side's weights, the data set
                  f.input("--load", c.bench.load_path);
                  f.input("--a's --load", parse_side(c.a_flags, "--a").load_path);
                  f.input("--b's --load", parse_side(c.b_flags, "--b").load_path);
                  if (!c.bench.data.empty()) f.data_set(c.bench.data, false);
                }
                f.output("--json", c.json_path);
              }};
}

const RegisteredCommand registered(
    {.order = 800,
     .name = "compare",
     .help = "baseline against candidate: report, statistics and a decision",
     .runs_kernels = true,
     .setup = &setup});

}  // namespace

}  // namespace prism::cli
