// `prism gate`: exit 0 when every threshold holds, 1 with one line per broken threshold, 2 on
// bad input (a missing or malformed file, runs that cannot be compared, a bad threshold, a --json
// that cannot be written), 3 when the verdict is printed but --json failed at the end.
//
//   prism gate BASE.json CAND.json [--max-p99-increase 15%] [--max-throughput-drop 10%]
//              [--max-memory-increase 5%] [--max-quality-drop 0.5] [--exact flops,allocs]
//   prism gate --baselines bench/baselines [--update]     the project's self-gate
#include <cstdio>
#include <filesystem>
#include <memory>

#include <CLI/CLI.hpp>

#include "analysis/baseline.h"
#include "analysis/gate.h"
#include "analysis/run_record.h"
#include "cli/command.h"
#include "cli/commands.h"
#include "cli/file_roles.h"
#include "cli/options.h"
#include "profiler/output_file.h"

namespace prism::cli {

namespace {

// The flags, as add_options (below) declares them.
struct GateCliOptions {
  std::string base, cand;
  std::string max_p99_increase = "15%";
  std::string max_throughput_drop = "10%";
  std::string max_memory_increase = "5%";
  double max_quality_drop = 0.5;
  std::string max_loss_increase = "1%";
  double max_output_diff = 1e-3;
  std::vector<std::string> exact;
  std::string baselines;  // a directory of committed baselines: check them (or --update)
  bool update = false;
  bool verbose = false;
  std::string json_path;  // --json: the checks and the verdict, for `prism report`
};

// Exit codes: 0 every threshold held, 1 a threshold broke (the verdict), 2 a usage error or an
// input it cannot read (no verdict), kExitGateOutput the verdict was printed but its --json could
// not be written: never 1, which a CI script reads as "the change regressed".
constexpr int kExitGateOutput = 3;

bool has_json_files(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return false;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json") return true;
  }
  return false;
}

int self_gate(const GateCliOptions& o) {
  if (o.update && !has_json_files(o.baselines)) {  // a first baseline: every zoo model
    analysis::write_default_baselines(o.baselines);
    std::printf("gate: wrote the baselines of every zoo model to %s\n", o.baselines.c_str());
    return 0;
  }
  std::vector<analysis::BaselineCheck> checks;
  try {
    checks = analysis::check_baselines(o.baselines, o.update);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  int differences = 0, entries = 0;
  for (const analysis::BaselineCheck& c : checks) {
    entries += c.entries;
    for (const std::string& d : c.differences) {
      std::printf("%s %s\n", o.update ? "updated" : "FAIL", d.c_str());
      ++differences;
    }
  }
  if (differences == 0) {
    std::printf("gate: the deterministic figures of %d entries in %zu files match %s exactly\n",
                entries, checks.size(), o.baselines.c_str());
    return 0;
  }
  if (o.update) {
    std::printf("gate: %d figures updated in %s; commit them with a message that says why\n",
                differences, o.baselines.c_str());
    return 0;
  }
  std::printf(
      "gate: FAILED: %d deterministic figures moved. If the change is intended, run\n"
      "  prism gate --baselines %s --update\nand commit the new baselines with the reason.\n",
      differences, o.baselines.c_str());
  return 1;
}

int run_gate(const GateCliOptions& o) {
  if (!o.baselines.empty()) {
    if (!o.base.empty())
      throw UsageError("gate: give BASE.json CAND.json or --baselines, not both");
    if (!o.json_path.empty()) throw UsageError("--json goes with BASE.json CAND.json");
    return self_gate(o);
  }
  if (o.update) throw UsageError("--update goes with --baselines DIR");
  if (o.base.empty() || o.cand.empty()) {
    throw UsageError("gate: give BASE.json CAND.json (or --baselines DIR)");
  }
  // An output that cannot be written is no verdict: exit 2, never the 1 of a broken threshold.
  try {
    if (!o.json_path.empty()) check_writable(o.json_path, "json");
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  analysis::GateOptions g;
  analysis::GateResult r;
  try {
    g.max_p99_increase = analysis::parse_fraction(o.max_p99_increase, "--max-p99-increase");
    g.max_throughput_drop =
        analysis::parse_fraction(o.max_throughput_drop, "--max-throughput-drop", 1.0);
    g.max_memory_increase =
        analysis::parse_fraction(o.max_memory_increase, "--max-memory-increase");
    g.max_loss_increase = analysis::parse_fraction(o.max_loss_increase, "--max-loss-increase");
    g.max_quality_drop = o.max_quality_drop;
    g.max_output_diff = o.max_output_diff;
    g.exact = o.exact;
    analysis::check_exact_names(g.exact);
    const analysis::RunRecord base = analysis::load_run(o.base);
    const analysis::RunRecord cand = analysis::load_run(o.cand);
    r = analysis::run_gate(base, cand, g);
  } catch (const Error& e) {
    throw UsageError(e.what());  // bad input: exit 2, not a failed gate
  }
  std::fputs(analysis::format_gate(r, o.verbose).c_str(), stdout);
  if (!o.json_path.empty()) {  // written whatever the verdict: a failed gate is worth a look
    try {
      profiler::write_text_file(o.json_path, analysis::gate_json(r, o.base, o.cand).dump(1) + "\n");
    } catch (const std::exception& e) {
      // Exit 1 is the verdict "a threshold broke"; a file that could not be written is not one.
      std::fprintf(stderr, "prism: error: %s\n", e.what());
      std::fprintf(stderr,
                   "gate: the verdict above stands (%s), but --json was not written: exit "
                   "%d\n",
                   r.passed() ? "passed" : "FAILED", kExitGateOutput);
      return kExitGateOutput;
    }
    std::printf("wrote %s\n", o.json_path.c_str());
  }
  return r.passed() ? 0 : 1;
}

void add_options(CLI::App& cmd, GateCliOptions& o) {
  cmd.add_option("base", o.base, "the baseline result (bench or train JSON)");
  cmd.add_option("cand", o.cand, "the candidate result");
  cmd.add_option("--max-p99-increase", o.max_p99_increase, "largest allowed p99 rise")
      ->type_name("PCT")
      ->capture_default_str();
  cmd.add_option("--max-throughput-drop", o.max_throughput_drop, "largest allowed throughput fall")
      ->type_name("PCT")
      ->capture_default_str();
  cmd.add_option("--max-memory-increase", o.max_memory_increase,
                 "largest allowed rise of peak memory (tracked and resident)")
      ->type_name("PCT")
      ->capture_default_str();
  cmd.add_option("--max-quality-drop", o.max_quality_drop,
                 "largest allowed fall of held-out accuracy, in percentage points")
      ->check(number_in(0, 100))
      ->capture_default_str();
  cmd.add_option("--max-loss-increase", o.max_loss_increase,
                 "largest allowed relative rise of a held-out or training loss")
      ->type_name("PCT")
      ->capture_default_str();
  cmd.add_option("--max-output-diff", o.max_output_diff,
                 "largest allowed relative change of the outputs on fixed inputs (inference)")
      ->check(number_in(0, 1e6))
      ->capture_default_str();
  cmd.add_option("--exact", o.exact,
                 "counters that must be equal: flops, macs, bytes, allocs, alloc_bytes")
      ->delimiter(',')
      ->type_name("NAME,...");
  cmd.add_option("--baselines", o.baselines,
                 "check the deterministic figures of the zoo against the baselines in DIR")
      ->type_name("DIR")
      ->check(file_name());
  cmd.add_flag("--update", o.update, "with --baselines: write the measured figures instead");
  cmd.add_flag("--verbose", o.verbose, "print the checks that passed too");
  cmd.add_option("--json", o.json_path, "also write the checks and the verdict as JSON")
      ->type_name("FILE")
      ->check(file_name());
}

Action setup(CLI::App& cmd) {
  auto o = std::make_shared<GateCliOptions>();
  add_options(cmd, *o);
  return {.run = [o] { return run_gate(*o); },
          .files =
              [o](CommandFiles& f) {
                f.input("BASE", o->base);
                f.input("CAND", o->cand);
                f.output("--json", o->json_path);
              }};
}

const RegisteredCommand registered(
    {.order = 1200,
     .name = "gate",
     .help = "a regression gate: exit 1 when a threshold breaks (or check the baselines)",
     .setup = &setup});

}  // namespace

}  // namespace prism::cli
