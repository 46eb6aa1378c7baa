// `prism compare`: a baseline against a candidate that differs in one thing, reported the way
// practitioners write it up: per side the throughput, the latency percentiles, the peak memory
// and the quality; then a decision.
//
// The decision for each series (a batch size, or the training steps) compares the two sets of
// per-call times. Consecutive calls are not independent (a slow stretch slows many together),
// so the units of the statistics are 20 contiguous blocks of each side, not single calls
// (profiler/statistics.h, "samples that are not independent"):
//   ratio  = median(candidate) / median(baseline), with a block-bootstrap 95% interval;
//   test   = Mann-Whitney U on the two sides' block medians (ranks only: a few outliers
//            cannot decide it).
//   better / worse: p < alpha AND the interval lies entirely below / above 1 AND the change is
//   at least kMinEffect (1%): a shared machine does not resolve less;
//   otherwise "no detectable change" (which is not "equal": the interval says how large a
//   change could still hide in the noise).
// Interleaving (compare MODEL runs A B B A ...) makes drift fall on both sides alike; two
// result files measured at different times can differ because the machine did.
// A speed verdict never comes without the quality line: outputs on fixed inputs (inference),
// the losses of the first steps (bench --mode train), or held-out loss and accuracy (train).
//
// The per-op table shows which ops moved, and the deterministic counters (FLOPs, bytes,
// allocations), which need no statistics: a difference there is exact.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/latency.h"
#include "analysis/run_record.h"
#include "profiler/statistics.h"

namespace prism::analysis {

enum class Verdict { better, worse, no_change };
const char* verdict_name(Verdict v);

inline constexpr double kAlpha = 0.05;      // significance level of every decision
inline constexpr double kMinEffect = 0.01;  // smallest change called better or worse

// One op (name, phase, gradient) on both sides, per call.
struct OpMove {
  std::string name, phase, grad_of;
  std::string variant_a, variant_b;  // "" where the op did not run on that side
  double self_ns_a = 0, self_ns_b = 0;
  double calls_a = 0, calls_b = 0;
  double flops_a = 0, flops_b = 0;
  double bytes_a = 0, bytes_b = 0;
  double allocs_a = 0, allocs_b = 0;
  double alloc_bytes_a = 0, alloc_bytes_b = 0;
};

struct SeriesComparison {
  std::string label;
  int64_t batch = 0;
  LatencyStats a, b;                          // per-call times, ns
  double throughput_a = 0, throughput_b = 0;  // samples/s from the mean time
  double ratio = 0;                           // median b / median a (time: < 1 is faster)
  profiler::stats::Interval ratio_ci;
  profiler::stats::MannWhitney test;  // a = baseline, b = candidate
  Verdict verdict = Verdict::no_change;
  int64_t peak_rss_a = -1, peak_rss_b = -1;
  int64_t tracked_peak_a = -1, tracked_peak_b = -1;
  bool has_counters = false;
  CallCounters counters_a, counters_b;
  std::vector<OpMove> movers;         // by |self time change|, largest first
  std::vector<std::string> unstable;  // why either side's samples are shaky
};

struct QualityLine {
  std::string what;    // "max |output difference| on fixed inputs", "held-out accuracy", ...
  std::string a, b;    // each side's value, formatted
  std::string change;  // the difference, formatted
  bool held = true;    // false: the candidate lost quality beyond rounding
};

struct Comparison {
  RunRecord a, b;
  std::vector<SeriesComparison> series;  // the series both sides measured
  std::vector<QualityLine> quality;
  std::string change;  // what differs in the settings recorded (kernels), "" when nothing
  std::vector<std::string> warnings;  // fingerprint differences, unstable sides, ...
};

// max |a_i - b_i| / max |a_i|: how far two output vectors are apart relative to their scale
// (the absolute distance in *abs_out); NaN when their lengths differ, they are empty, or a value
// is not finite.
double max_relative_difference(const std::vector<double>& a, const std::vector<double>& b,
                               double* abs_out);

// The losses of two training runs over the steps both took (a shorter run is compared with the
// other's first steps): max |B - A| / max |A| over them, the absolute difference, and each side's
// loss at the last of those steps. relative is NaN when no step is shared or a loss is not
// finite (a diverged step).
struct LossDifference {
  size_t steps = 0;
  double relative = std::nan("");
  double absolute = 0;
  double last_a = std::nan(""), last_b = std::nan("");
};
LossDifference loss_difference(const std::vector<double>& a, const std::vector<double>& b);

// Compares two runs of the same model and mode; throws prism::Error when they are not
// comparable (different model, mode or kind; no series in common).
Comparison compare_runs(const RunRecord& baseline, const RunRecord& candidate);

// The report: one block per side, the decision per series, the quality lines, the biggest
// movers (at most `max_ops` rows; 0 = all) and the warnings.
std::string format_comparison(const Comparison& c, int max_ops = 10);

// The comparison as JSON, "kind": "prism.compare": model, mode, change, `report` (the text
// above) and per series the medians (a = baseline, b = candidate), ratio, its interval, the
// p value, the verdict and the per-op movers (self time per call each side): what
// `prism report` draws as a waterfall (analysis/html/compare_view.cpp).
nlohmann::json comparison_to_json(const Comparison& c, const std::string& report);

}  // namespace prism::analysis
