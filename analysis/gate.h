// `prism gate`: a regression gate. Given a baseline and a candidate result it checks each
// threshold and says which one broke, with the value, the limit and the interval:
//
//   p99 latency      may rise by at most max_p99_increase (a fraction, 0.15 = 15%)
//   throughput       may fall by at most max_throughput_drop
//   peak memory      (tracked, and resident) may rise by at most max_memory_increase
//   quality          accuracy may fall by at most max_quality_drop points; a held-out or
//                    training loss may rise by at most max_loss_increase (relative); outputs on
//                    fixed inputs may move by at most max_output_diff (relative)
//   exact counters   (flops, macs, bytes, allocs, alloc_bytes, as asked) must be equal
//
// A time regression counts only when it is over its threshold AND statistically significant:
// the block-bootstrap 95% interval of the p99 ratio lies entirely above 1, or the Mann-Whitney
// test on block medians finds the candidate slower at p < 0.05 (throughput). So the noise
// within a run cannot fail the gate, and a real slowdown under the threshold does not either.
// What the gate cannot tell from a regression is a difference in the conditions between the
// two runs (a neighbour that was busy during one of them): record both on the same, quiet
// machine, as `make perf-gate` does.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/run_record.h"

namespace prism::analysis {

struct GateOptions {
  double max_p99_increase = 0.15;
  double max_throughput_drop = 0.10;
  double max_memory_increase = 0.05;
  double max_quality_drop = 0.5;  // accuracy points
  double max_loss_increase = 0.01;
  double max_output_diff = 1e-3;
  std::vector<std::string> exact;  // counters to compare exactly
};

// Parses "15%" or "0.15" (a fraction) up to `max` (a drop: 1, all of it); throws prism::Error
// naming `flag` on anything else.
double parse_fraction(const std::string& text, const std::string& flag,
                      double max = std::numeric_limits<double>::max());
// Checks the names of --exact (flops, macs, bytes, allocs, alloc_bytes).
void check_exact_names(const std::vector<std::string>& names);

struct GateCheck {
  std::string series;  // "batch 8", "train step", "" for run-wide checks
  std::string what;    // "p99 latency", "throughput", ...
  bool passed = true;
  std::string detail;  // value, limit, interval
};

struct GateResult {
  std::vector<GateCheck> checks;
  bool passed() const;
};

// Throws prism::Error when the runs are not comparable (other model, mode or kind, no common
// series).
GateResult run_gate(const RunRecord& baseline, const RunRecord& candidate, const GateOptions& o);

// One line per check: "FAIL batch 8 p99 latency: +31.2% [+22.0%, +40.1%] > 15% limit".
std::string format_gate(const GateResult& r, bool verbose);

// {"kind": "prism.gate", "passed", "base", "cand", "checks": [{series, what, passed, detail}]}:
// what `prism gate --json` writes and `prism report` draws.
nlohmann::json gate_json(const GateResult& r, const std::string& base, const std::string& cand);

}  // namespace prism::analysis
