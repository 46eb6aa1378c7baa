// `prism models A B ...`: architectures compared on one machine, the scientific way.
//
// Each model's training step and inference call are measured with the bench machinery
// (model_bench.h), interleaved: round r runs every model once per mode, in an order rotated
// by r, so that a change in the shared machine's speed (another tenant, the clock, the
// thermals) lands on every model alike instead of on whichever ran last. The timed calls of
// the rounds are pooled per model and mode; the deterministic counters (FLOPs, minimum bytes)
// and the tracked memory come from the profiled windows and the memory tracker, exactly.
//
// Comparing a 12k-parameter CNN with a 269k-parameter MLP says little about the
// architectures; `match` first scales the models' widths (nn::ModelOptions::width) so that
// each has about the parameter count, or the forward FLOPs per sample, of the first model.
//
// Below the numbers, findings() states what they say: the op class each model spends its
// time in, which model is furthest from the machine's peak and where its arithmetic intensity
// sits against the roofline's ridge point, backward/forward FLOPs, activation memory per
// sample, and how attention's share moves with the context length.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/environment.h"
#include "analysis/model_bench.h"
#include "analysis/op_class.h"
#include "analysis/workload.h"
#include "nn/models/zoo.h"

namespace prism::analysis {

// 269322 -> "269,322": counts as the reports quote them.
std::string with_commas(double v);
// 1.23e9 -> "1.23 G": FLOP counts as the reports quote them (three significant digits).
std::string si(double v);

// ---- scaling a model to match another --------------------------------------------------------

enum class MatchBy { none, params, flops };
// "" -> none, "params", "flops"; anything else is an Error naming the choices.
MatchBy match_by_from_name(const std::string& name);
const char* match_by_name(MatchBy m);  // "none", "params", "flops"

// A match is reported as within tolerance when the size is this close to the target; past it
// the closest width is still used, and the report says so.
inline constexpr double kMatchTolerancePct = 5.0;

// True for the models nn::ModelOptions::width scales: mlp, cnn and the GPTs.
bool can_scale_width(const std::string& model);
// The width the model has when none is given (mlp 256, cnn 16, a GPT's d_model), and the
// step widths must be a multiple of (a GPT's heads, else 1). Errors for a model without one.
int64_t default_width(const std::string& model);
int64_t width_step(const std::string& model);

// The model's size as a match compares it, computed on the meta device (shapes only, no data,
// milliseconds even for a wide model): params = its parameter count; flops = the FLOPs of one
// inference call (forward, eval mode) per sample, from a profiled call at batch 1.
double model_size(const std::string& model, MatchBy by, const nn::ModelOptions& options);

struct WidthMatch {
  std::string model;
  MatchBy by = MatchBy::params;
  int64_t from_width = 0, to_width = 0;
  double from_size = 0, to_size = 0;  // model_size at each width
  double target = 0;                  // the first model's size
  double error_pct = 0;               // 100 * (to_size - target) / target
  bool within_tolerance = false;      // |error_pct| <= kMatchTolerancePct
};

// The width (a multiple of width_step, from one step to nn's largest) whose size is closest to
// `target`. Sizes grow with the width, so a bisection for the first width at or past the
// target finds it among that width and the one a step below: about 16 meta-device builds.
WidthMatch match_width(const std::string& model, MatchBy by, double target,
                       const nn::ModelOptions& options);

// "cnn width 16 -> 45: 12,810 -> 268,900 parameters (target 269,322), within 0.2%"
std::string describe_match(const WidthMatch& m);

// ---- the comparison ----------------------------------------------------------------------------

struct ModelsOptions {
  std::vector<std::string> models;  // zoo names, each once; the first is the match's target
  MatchBy match = MatchBy::none;
  int64_t batch = 32;
  int rounds = 3;         // interleaved rounds
  double duration_s = 1;  // timed calls per model, mode and round
  int warmup = 2;         // warm calls per model, mode and round, after the cold one
  int64_t min_iters = 3;  // timed calls per model, mode and round, at least
  int profile_calls = 2;  // calls in each profiled window
  uint64_t seed = 42;
  nn::ModelOptions model_options;  // shared by every model (block_size for the GPTs)
  bool peak = true;                // the machine's peak FLOP/s and bandwidth ("% of peak")
  bool attention_probes = true;    // a GPT in the list: attention's share at half/double context
  // Told what is about to run ("round 2/3: train cnn"), for a progress line; may be empty.
  std::function<void(const std::string&)> progress;
};

// One model in one mode, the rounds pooled.
struct ModeResult {
  BenchMode mode = BenchMode::train;
  std::vector<double> samples_ns;        // every timed call of every round, in time order
  double median_ns = 0;                  // per call
  double ci_low_ns = 0, ci_high_ns = 0;  // 95% block-bootstrap interval of the median
  CallCounters counters;                 // per call, exact
  // FLOPs per call by phase, from the profiled window's op rows (exact).
  double forward_flops = 0, backward_flops = 0, optimizer_flops = 0;
  // Self time per call by class: each class's median over the rounds' profiled windows, so one
  // window that a busy machine stalled cannot decide the split (class_ns_rounds: each round's).
  std::array<double, kNumOpClasses> class_ns{};
  std::vector<std::array<double, kNumOpClasses>> class_ns_rounds;
  int64_t tracked_peak_bytes = 0;
  RoleBytes peak_by_role{};  // what that peak was made of
  // Activation memory per call. Inference: the activation role at the tracked peak (parameters
  // and inputs stay constant, so the peak is where the most activations are alive). Training:
  // what the forward pass allocates (the profiled window's forward-phase bytes), which autograd
  // holds until the backward frees it; the step's peak comes later, in the optimizer update, when
  // the activations are already gone, so the role at that peak would say little.
  double activation_bytes = 0;
  double gflops = 0;     // counters.flops / median
  double pct_peak = 0;   // of the machine's FMA peak at the thread count; 0 unknown
  double intensity = 0;  // counters.flops / counters.bytes, FLOP per byte; 0 unknown

  // Percent of the profiled self time spent in class `c` (0 when nothing was timed).
  double class_share_pct(OpClass c) const;
};

struct ModelResult {
  std::string model;
  int64_t width = 0;  // the width it ran at (0: the model's own; no width, e.g. a ResNet)
  int64_t parameters = 0;
  std::string input;  // "[B,1,28,28] f32"
  ModeResult train, infer;
  const ModeResult& mode(BenchMode m) const { return m == BenchMode::train ? train : infer; }
};

// Attention's share of one profiled window at one context length.
struct AttentionProbe {
  std::string model;
  BenchMode mode = BenchMode::train;
  int64_t block = 0;               // context length
  double attention_pct = 0;        // of the self time: the median over the rounds
  std::vector<double> rounds_pct;  // each round's profiled window
  std::string skipped;             // why it was not measured ("" when it was)
};

struct ModelsResult {
  ModelsOptions options;
  Fingerprint fingerprint;
  Environment environment;
  int threads = 1;
  double peak_gflops = 0, peak_gbps = 0, ridge_flop_per_byte = 0;  // 0: unknown (--no-peak)
  std::vector<WidthMatch> matches;
  std::vector<ModelResult> models;  // in the order named
  std::vector<AttentionProbe> probes;
};

// Checks what run_models would refuse, before any measuring: no model, an unknown one (the
// zoo's message), one named twice (aliases included: cnn and lenet are one model), a match with
// a model it cannot scale (naming those it can), and bench options that are out of range.
void check_models_options(const ModelsOptions& o);

// The whole comparison: matching, interleaved rounds, pooling, the attention probes. The caller
// sets the thread count first. Throws prism::Error on bad options before any work.
ModelsResult run_models(const ModelsOptions& o);

// ---- reading the result
// --------------------------------------------------------------------------

// The class with the largest share of a mode's time.
OpClass dominant_class(const ModeResult& m);
// Index of the model (in r.models) with the lowest % of peak in `mode`; -1 when no peak is known.
int furthest_from_peak(const ModelsResult& r, BenchMode mode);

// The findings, one sentence each, every one quoting the numbers it rests on.
std::vector<std::string> findings(const ModelsResult& r);

// The whole result as JSON ("kind": "prism.models"), every timed call included.
nlohmann::ordered_json models_to_json(const ModelsResult& r);

}  // namespace prism::analysis
