// `prism gate`: exit 0 when every threshold holds, 1 with one line per broken threshold, 2 on
// bad input (a missing or malformed file, runs that cannot be compared, a bad threshold, a --json
// that cannot be written), 3 when the verdict is printed but --json failed at the end.
//
//   prism gate BASE.json CAND.json [--max-p99-increase 15%] [--max-throughput-drop 10%]
//              [--max-memory-increase 5%] [--max-quality-drop 0.5] [--exact flops,allocs]
//   prism gate --baselines bench/baselines [--update]     the project's self-gate
#include <cstdio>
#include <filesystem>

#include "analysis/baseline.h"
#include "analysis/gate.h"
#include "analysis/run_record.h"
#include "cli/commands.h"
#include "profiler/output_file.h"

namespace prism::cli {

namespace {

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

}  // namespace

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

}  // namespace prism::cli
