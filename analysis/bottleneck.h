// The bottleneck map: what limits a profiled run, in the practitioners' terms, with the numbers
// that say so, the lever to try and the prism command that tests it.
//
// Each op row (op, phase, variant, gradient) gets a bound:
//   overhead  its mean self time per call is under the overhead threshold T = D + P, where D is
//             the measured cost of an op call that does no work (a 1-element add, profiler off:
//             checks, cost formula, kernel choice, output allocation) and P the profiler's own
//             cost per record. A call recorded in less than T did less work than the fixed cost
//             of making it (D + P, most of it outside the record), so more than half of what the
//             call cost was fixed cost: a larger batch or a fused op removes it, a faster kernel
//             does not. T is a few microseconds on a CPU.
//   memory    its arithmetic intensity I = FLOPs / minimum bytes is below the ridge point of the
//             roof its working set meets: ridge = peak GFLOP/s / roof GB/s, where the roof is
//             the bandwidth of the cache level its bytes per call fit in (L1, L2, L3, DRAM:
//             MachinePeak::roof_for). Below the ridge the attainable rate is I x roof GB/s:
//             bytes, not arithmetic, set the time.
//   compute   I >= ridge: at the ridge both roofs give the same attainable rate (the machine's
//             peak), so an op exactly there counts as compute-bound: more bandwidth would not
//             make it faster.
//   undetermined  no machine figures (--no-peak, no cache), no cost formula, or a GPU op (the
//             map has the CPU's roofs only): memory and compute cannot be told apart.
// With the class comes the achieved fraction of the relevant roof (GB/s over the roof's for a
// memory-bound op, GFLOP/s over the peak for a compute-bound one): near the roof (>= 50%) the
// kernel is as good as the machine allows and only less traffic (fusion, lower precision) or
// fewer FLOPs help; far below it, a better kernel does.
//
// The step is split into: data wait (the DataLoader's "data" scope), compute-, memory-,
// overhead-bound and undetermined op time, and the time outside ops (the framework between
// ops: dispatch checks, autograd bookkeeping; the profiler's records, estimated as P per record,
// are taken out of it). The verdicts (kVerdictRules below) fire on those shares and are ranked
// by share of step time; activation memory, a limit on memory rather than a share of time,
// comes after them.
//
// Only profiler types and plain structs: tests build inputs by hand and check the answers.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/machine.h"
#include "profiler/session.h"

namespace prism::analysis {

enum class Bound : uint8_t { compute, memory, overhead, undetermined };
inline constexpr int kNumBounds = 4;
const char* bound_name(Bound b);

// The thresholds of the verdicts, as fractions. Data wait: an input pipeline that keeps up
// hides behind the step (prefetch), so a fifth of the step spent waiting is already a stall
// worth fixing. The others are shares of the step a lever can win back; a third is the point
// where the lever pays off more than anything else would.
inline constexpr double kDataWaitShare = 0.20;      // input pipeline
inline constexpr double kOverheadShare = 0.30;      // kernel overhead
inline constexpr double kMemoryBoundShare = 0.30;   // memory bandwidth
inline constexpr double kComputeBoundShare = 0.30;  // compute
inline constexpr double kNearRoof = 0.50;           // achieved / roof: "at the roof"
// Activation memory: activations are at least half of the tracked peak and the peak is at
// least half the budget (the machine's memory, or the GPU's): doubling the batch, the usual
// cure for overhead, would not fit.
inline constexpr double kActivationShare = 0.50;
inline constexpr double kBudgetShare = 0.50;

// One op row of a profiled window, totals over the window.
struct OpLoad {
  std::string name;
  std::string phase = "forward";  // forward | backward | optimizer
  std::string variant;
  std::string grad_of;  // backward rows: the gradient computed ("matmul.dB"), else ""
  std::string device = "cpu";
  double calls = 0;
  double self_ns = 0;  // GPU ops: device time when known
  double flops = 0;
  double bytes = 0;  // minimum traffic (profiler/cost.h)
  int threads = 1;   // the most threads a call's kernel ran on
};

// What the map reads from a profile. Ops inside a "data" scope count as data wait, not as ops.
struct WindowLoad {
  std::vector<OpLoad> ops;
  double steps = 1;                 // steps (model calls) in the window, for per-step figures
  double wall_ns = 0;               // the window's wall time
  double data_wait_ns = 0;          // in the DataLoader's "data" scope (outermost spans only)
  int64_t records = 0;              // op and scope records: the profiler's cost is records x P
  double profiler_overhead_ns = 0;  // P: per record (the profile's meta)
};

// Reads a profile: op rows (self time, cost, threads), data wait, records, wall time.
WindowLoad window_load(const profiler::Profile& p, double steps);

// The machine's figures, as functions so tests can give exact ones.
struct Peaks {
  std::function<double(int threads)> gflops;  // float32 FMA peak
  std::function<profiler::Roof(int threads, double working_set_bytes)> roof;
  // An OpenMP region's cost at `threads` threads, team awake, in ns; 0 unknown (may be empty).
  std::function<double(int threads)> region_ns;
};
Peaks peaks_of(const profiler::MachinePeak& m);  // keeps a copy of m

// Where the commands the verdicts print come from.
struct LeverContext {
  std::string model;           // zoo model
  std::string mode = "train";  // train | infer
  int64_t batch = 0;           // the batch of the profiled run
  int threads = 1;
  std::string data;                  // a data set `--data` accepts; "" = none (synthetic inputs)
  std::vector<std::string> lab_ops;  // ops `prism lab` knows
};

struct BottleneckSettings {
  std::optional<Peaks> peaks;   // nullopt: overhead only
  std::string no_peaks_reason;  // said when peaks is nullopt ("--no-peak", "no cached figures")
  double dispatch_ns = 0;       // D: an op call that does no work, profiler off
  // Memory at the tracked peak, and the budget it has to fit in (0 = unknown: no memory verdict).
  int64_t tracked_peak_bytes = 0;
  int64_t activation_peak_bytes = 0;
  int64_t memory_budget_bytes = 0;
  LeverContext lever;
};

// One classified row, per step.
struct BoundRow {
  OpLoad op;
  Bound bound = Bound::undetermined;
  double mean_ns = 0;      // self time per call
  double intensity = -1;   // FLOP per byte; -1 when bytes is 0
  double ridge = 0;        // FLOP per byte at this op's roof; 0 unknown
  std::string roof_level;  // L1 | L2 | L3 | DRAM; "" unknown
  double roof_gbps = 0;
  double peak_gflops = 0;
  double roof_fraction = -1;  // achieved / the relevant roof; -1 unknown
  std::string why;            // one phrase: "0.6 us/call < 1.4 us", "0.13 FLOP/B < ridge 9.1"
};

struct BottleneckVerdict {
  std::string kind;      // input pipeline | kernel overhead | memory bandwidth | compute |
                         // activation memory
  double share = 0;      // of step time; activation memory: tracked peak / budget
  bool fired = true;     // false: the largest share, below its threshold (nothing dominates)
  std::string evidence;  // the numbers
  std::string lever;
  std::string command;  // a prism command that tests the lever
};

struct BottleneckMap {
  bool has_peaks = false;
  std::string no_peaks_reason;
  double threshold_ns = 0;  // T = D + P
  double dispatch_ns = 0;
  double profiler_overhead_ns = 0;
  double steps = 1;
  // Per step:
  double step_ns = 0;
  double data_wait_ns = 0;
  double optimizer_ns = 0;  // op time of the optimizer phase
  std::array<double, kNumBounds> bound_ns{};
  double outside_ns = 0;        // framework time between ops (profiler's records taken out)
  double profiler_ns = 0;       // the records' estimated cost
  double op_calls = 0;          // op calls per step
  double overhead_calls = 0;    // calls of overhead-bound rows per step
  double overhead_mean_ns = 0;  // their mean self time per call
  std::vector<BoundRow> rows;   // by self time, largest first
  std::vector<BottleneckVerdict> verdicts;  // ranked
  // Threads. The run's count, a region's cost there (`prism machine`; 0 unknown), and the CPU
  // rows of at least kUnsplitShare of the step whose kernel ran on fewer threads than the run
  // had, largest first: the ops that do not scale, which the map names with the reason.
  int threads = 1;
  double region_ns = 0;
  std::vector<size_t> unsplit;  // indices into rows
  double share(double ns) const { return step_ns > 0 ? ns / step_ns : 0; }
};

// A row below this share of the step is not listed among the ops that did not split.
inline constexpr double kUnsplitShare = 0.005;
// A call under this many region costs is too short to gain from a split whatever the kernel.
inline constexpr double kSplitRegions = 10;

// Classifies the rows and draws the verdicts.
BottleneckMap map_bottlenecks(const WindowLoad& load, const BottleneckSettings& s);

// The "bottleneck map" section (the top `max_rows` rows; 0 = all) and its JSON object.
std::string format_bottleneck(const BottleneckMap& m, int max_rows = 12);
nlohmann::ordered_json bottleneck_json(const BottleneckMap& m);

}  // namespace prism::analysis
