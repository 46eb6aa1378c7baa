// A measured run as `prism compare` and `prism gate` read it, from either kind of result file:
// `prism bench --json` (one series per batch size, every call's latency) or `prism train
// --json` (one series: the training steps). Loading checks what it needs and names what is
// missing, so a wrong or truncated file is an error, never a silent zero.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/environment.h"
#include "analysis/model_bench.h"

namespace prism::analysis {

// One comparable stretch of a run: a batch size of a bench, or the steps of a training run.
struct Series {
  std::string label;  // "batch 8", "train step"
  int64_t batch = 0;
  std::vector<double> samples_ns;  // one per call or step
  double cold_ns = -1;             // -1: not measured apart
  int64_t peak_rss_bytes = -1;     // -1: unknown
  int64_t tracked_peak_bytes = -1;
  RoleBytes tracked_peak_by_role{};
  bool has_counters = false;
  CallCounters counters;       // per call (bench) or per step (train)
  std::vector<OpPerCall> ops;  // per call or per step
};

struct RunRecord {
  std::string kind;  // "bench" or "train"
  std::string path;  // where it was read from ("" when built in memory)
  std::string model;
  std::string mode;     // "infer" or "train"
  std::string kernels;  // variants chosen apart from the defaults
  Fingerprint fingerprint;
  std::vector<std::string> warnings;  // the environment's, when it was measured
  std::vector<Series> series;
  // Quality: what a faster run must not have lost.
  std::vector<double> probe_output;     // bench --mode infer: outputs on fixed inputs
  std::vector<double> train_losses;     // bench --mode train: losses of the first steps
  std::optional<double> test_loss;      // train: held-out loss
  std::optional<double> test_accuracy;  // train: held-out accuracy in [0, 1] (classifiers)

  const Series* find(int64_t batch) const;
};

// The fingerprint block both result files carry.
nlohmann::ordered_json fingerprint_to_json(const Fingerprint& f);

// The JSON `prism bench --json` writes.
nlohmann::ordered_json bench_to_json(const BenchResult& r);

// A bench or train result document as a RunRecord; throws prism::Error naming `source` and
// the field that is missing or malformed.
RunRecord run_from_json(const nlohmann::json& doc, const std::string& source);
// Reads and parses a file; an unreadable file or invalid JSON is an Error naming it.
RunRecord load_run(const std::string& path);

}  // namespace prism::analysis
