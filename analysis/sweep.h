// `prism sweep MODEL --vary NAME=V1,V2,...`: how a model's cost grows with one size.
//
// The size is the batch, the transformer's context length (seq), the model's width or depth
// (nn::ModelOptions::width / depth), or the OpenMP thread count. At each value the bench
// machinery (model_bench.h: run_bench, one batch per call) measures the time per call, the
// exact counters of a profiled window, the tracked memory peak by role and the time by op class.
//
// Interleaving: a machine that drifts during the sweep (another tenant starts, the clock
// throttles) would bend the curve. So the points are measured in two passes, the first in
// ascending order and the second in descending order, each with half of the duration; a point's
// samples are pooled over both passes (its median is the median of both), and a drift shows as
// a gap between a point's two pass medians, which the report prints.
//
// Then (fit.h): time ~ c n^k and tracked memory ~ c n^k by least squares on the log-log points,
// with k's 95% interval and R^2; FLOPs per call the same way (exact counts, so their exponent is
// the work's); a knee test on time and memory; findings read from the numbers; for threads, the
// speed-up and efficiency per op class and Amdahl's serial fraction; and a prediction at
// another size, optionally measured to check it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/environment.h"
#include "analysis/fit.h"
#include "analysis/model_bench.h"
#include "analysis/op_class.h"

namespace prism::analysis {

enum class SweepVar { batch, seq, width, depth, threads };
const char* sweep_var_name(SweepVar v);

struct SweepSpec {
  SweepVar var = SweepVar::batch;
  std::vector<int64_t> values;  // as given; measured and reported in ascending order
};

// "batch=1,2,4": a known name, then whole numbers >= 1, comma-separated, no value twice, at
// least 2 of them. Throws prism::Error naming what is wrong.
SweepSpec parse_vary(const std::string& text);

struct SweepOptions {
  // The settings every point shares: model, mode, warm-up, device, seed, model_options (image
  // size, context length), peak lookup. `bench.batches` holds the one batch used when the batch
  // does not vary (empty: the model's training default). `bench.duration_s` is the time per
  // point, split over the passes.
  BenchOptions bench;
  SweepSpec vary;
  int passes = 2;       // 1: one ascending pass; 2: ascending, then descending
  int64_t predict = 0;  // > 0: predict time and memory at this size
  bool check = false;   // with predict: measure that size and report the error
  bool check_environment = true;
};

// One size of the sweep.
struct SweepPoint {
  int64_t value = 0;
  int64_t batch = 0;
  int64_t seq = 0;  // language models: the context length; 0 otherwise
  int threads = 1;
  int64_t parameters = 0;
  std::vector<double> samples_ns;       // every timed call, pass after pass
  std::vector<double> pass_median_ns;   // one per pass, in pass order
  double median_ns = 0;                 // of samples_ns
  profiler::stats::Interval median_ci;  // 95%, block bootstrap (latency.h)
  double throughput = 0;                // items per second at the median (see items_per_call)
  int64_t items_per_call = 0;           // batch, or batch * seq for a seq sweep (tokens)
  CallCounters counters;                // exact, per call (the same in every pass)
  double gflops = 0;                    // counters.flops / median
  double machine_peak_gflops = 0;       // the machine's FMA peak at this thread count; 0 unknown
  double pct_peak = 0;                  // gflops against it
  int64_t tracked_peak_bytes = 0;       // the largest over the passes
  RoleBytes tracked_peak_by_role{};     // at that peak
  std::array<double, kNumOpClasses> class_ns{};  // self time per call by op class, pass mean
};

// A fitted curve: the power law, the knee test (nullopt below kKneeMinPoints points), and why
// there is no fit when there is none (a value <= 0, all values of a size equal).
struct CurveFit {
  std::string quantity;  // "time", "memory", "FLOPs"
  std::optional<PowerLawFit> fit;
  std::optional<KneeFit> knee;
  std::string note;
};

// Threads: speed-up T(p0) / T(p) and efficiency speed-up / (p / p0) against the smallest count
// p0, overall and per op class, and Amdahl's serial fraction.
struct ClassScaling {
  OpClass op_class = OpClass::matmul;
  std::vector<double> speedup, efficiency;  // one per point
  std::optional<AmdahlFit> amdahl;
};
struct ThreadScaling {
  std::vector<double> speedup, efficiency;  // one per point, from the medians
  std::optional<AmdahlFit> amdahl;          // nullopt when Amdahl's law cannot fit the times at all
  std::vector<ClassScaling> classes;        // the classes that took time at every point
};

struct SweepPrediction {
  int64_t at = 0;
  Prediction time_ns, memory_bytes;
  bool has_memory = false;  // memory_bytes holds a prediction (the memory curve had a fit)
  bool time_from_knee = false, memory_from_knee = false;  // the last segment of a kept knee
  std::optional<double> amdahl_time_ns;                   // threads: T1 (s + (1 - s) / N)
};

struct SweepCheck {
  SweepPoint measured;
  double time_error_pct = 0;  // 100 (predicted - measured) / measured
  // Only when the prediction has a memory figure and the measured peak is > 0.
  std::optional<double> memory_error_pct;
  bool time_within = false;  // the measurement fell in the prediction interval (false: none)
  bool memory_within = false;
};

struct SweepResult {
  SweepOptions options;
  std::string model;
  std::string mode;
  std::string throughput_unit;  // "samples/s" or "tokens/s"
  Fingerprint fingerprint;
  Environment environment;
  std::string kernels;
  std::string input;               // the first point's input, "[B,1,28,28] float32"
  std::vector<SweepPoint> points;  // ascending
  CurveFit time, memory, flops;
  std::optional<ThreadScaling> threads;
  std::optional<SweepPrediction> prediction;
  std::optional<SweepCheck> check;
  std::vector<std::string> findings;  // plain words, computed from the numbers
  double max_pass_drift_pct = 0;      // the largest gap between a point's pass medians
};

// Checks everything run_sweep would refuse, without measuring: the vary spec, seq for a model
// that has no context length, a width or depth the model cannot take (make_model's Error, on the
// meta device), batch sizes and durations (check_bench_options), a point whose tensors would not
// fit in memory (a dry run on the meta device), --check without --predict, threads without
// OpenMP. Throws prism::Error.
void check_sweep_options(const SweepOptions& options);

// Measures every point (two passes), fits, reads the findings, predicts and checks. The caller
// applies kernel choices; the thread count is restored afterwards when threads vary.
SweepResult run_sweep(const SweepOptions& options);

// The fits, knees, thread scaling and findings of a set of measured points (sorted by value,
// at least 2, each median > 0): what run_sweep does after measuring, apart so it can be tested
// on synthetic points. Throws prism::Error for fewer points or unsorted values.
void analyse_sweep(SweepResult& result);
// Appends the findings to result.findings, from its points, fits and thread scaling: the part of
// analyse_sweep that reads the numbers (sweep_findings.cpp).
void add_sweep_findings(SweepResult& result);

}  // namespace prism::analysis
