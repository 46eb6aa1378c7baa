// The report's views of one profile: the JSON that `prism train MODEL --profile --json F` and
// `prism demo` write (profiler/report_json.cpp). Reading checks the whole document first and
// names the field that is wrong, so a bad file fails before any page is built.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/html/report_page.h"
#include "analysis/html/svg.h"

namespace prism::analysis::html {

// One row of the profile's op table: an (op, phase, variant, gradient label, device) group.
struct ProfileOp {
  std::string name, phase, variant, grad_of, device;
  int64_t calls = 0;
  double time_ns = 0, self_ns = 0;
  double gpu_ns = -1;  // the kernels' time from CUDA events; -1 on the CPU
  double flops = 0, bytes = 0;
  int64_t allocs = 0, alloc_bytes = 0;

  // The time the op's work took: its kernels' time on a GPU (the host time there is only the
  // launch), else its self time.
  double work_ns() const { return gpu_ns >= 0 ? gpu_ns : self_ns; }
  // "matmul (matmul.dA)": the name and the gradient label, as the op table prints them.
  std::string label() const;
};

// Live tracked bytes at one moment of the profiled window. `roles` (parameter, gradient,
// activation, ...) when the profile breaks the bytes down; else empty.
struct MemorySample {
  double t_ns = 0;
  double live_bytes = 0;
  std::string op;  // the op that allocated or freed, when the profile names it
  std::vector<std::pair<std::string, double>> roles;
};

// One row of the profile's module tree ("modules", profiler/report_json.cpp): a scope path with
// the op self time of its whole subtree by phase; backward and optimizer work count for the
// module whose forward made them. Path "" (depth 0) holds the ops outside every scope.
struct ProfileModule {
  std::string path, name;
  std::string type;  // "Linear", when the writer knew it; else ""
  int depth = 0;
  int64_t calls = 0;
  double fwd_ns = 0, bwd_ns = 0, opt_ns = 0;
  double fwd_flops = 0, bwd_flops = 0;
  double rec_ns = 0, rec_flops = 0;  // recompute (activation checkpointing); 0 in older files
  double comm_ns = 0;  // communication (data-parallel gradient sync); 0 in older files
};

struct ProfileData {
  int threads = 1;
  std::vector<ProfileOp> ops;
  std::map<std::string, int64_t> peak_live_bytes;  // per device
  std::string timeline_device;  // the device the samples below are of (from memory.timeline)
  int64_t sample_count = 0;     // allocations and frees recorded
  // The curve: memory.timeline of one device (what the profiler writes), or memory.samples when
  // it is an array of {t_ns, live_bytes[, op][, roles: {role: bytes}]}.
  std::vector<MemorySample> samples;
  // From the "train" block, when there is one (train and demo write it).
  std::string model, data, device;
  int64_t steps = 0, batch = 0;
  std::vector<int64_t> profiled_steps;  // [first, last], 1-based
  std::vector<double> step_ms;          // train.step_samples_ms: step i + 1 took step_ms[i]
  // The module tree, parents before children; has_modules is false for files written before
  // the profiler wrote one (then the icicle is a note).
  bool has_modules = false;
  std::vector<ProfileModule> modules;
};

// Reads a profile document. Throws prism::Error saying what is wrong: not an object, another
// kind of prism file (a bench, sweep, ... result), or a missing or mistyped field, named by its
// path ("ops[3].self_ns: expected a number").
ProfileData read_profile(const nlohmann::json& doc);

// read_profile on a file: "PATH: cannot be read (...)", "PATH: not valid JSON: ..." (a truncated
// file says so), or "PATH: " before read_profile's message.
ProfileData load_profile(const std::string& path);

// "model mlp on spirals, batch 128, 30 steps (profiled 6-25), 2 threads, cpu"; "" without a
// train block.
std::string describe_run(const ProfileData& p);

// The machine's roofs at the profile's thread count (`prism machine`); 0 = unknown.
struct RooflinePeaks {
  double gflops = 0;  // float32 FMA peak, GFLOP/s
  double gbps = 0;    // memory bandwidth (STREAM triad), GB/s
  bool known() const { return gflops > 0 && gbps > 0; }
};

// Geometry of the plots in SVG pixels: each plot's area is [left, left + width] x
// [top, top + height], and the tests place numbers by it.
struct PlotArea {
  double left, top, width, height;
  double right() const { return left + width; }
  double bottom() const { return top + height; }
};
inline constexpr double kViewWidth = 900;
inline constexpr double kBarRowHeight = 18;  // one op per row
inline constexpr int kMaxBars = 40;          // the rest share one "other rows" bar
// The op breakdown's bars start at left; its height grows with the rows.
inline constexpr PlotArea kBarArea{300, 10, 480, 0};
inline constexpr PlotArea kRooflineArea{70, 20, 780, 380};
inline constexpr PlotArea kMemoryArea{80, 20, 780, 260};
// The icicles: forward on top, backward below it, each kIcicleRow px per depth level, sharing
// one ms scale over [left, right()] (height: unused, it grows with the depth).
inline constexpr PlotArea kIcicleArea{90, 10, 790, 0};
inline constexpr double kIcicleRow = 22;
inline constexpr double kIcicleGap = 26;  // between the two icicles
inline constexpr PlotArea kStepArea{80, 20, 780, 220};

// The views, in order: op breakdown, roofline, memory timeline, module icicle, step time.
std::vector<Section> profile_sections(const ProfileData& p, const RooflinePeaks& peaks);
// Those views under a heading (`heading`, usually the file name) and describe_run's line.
Block profile_block(const std::string& heading, const ProfileData& p, const RooflinePeaks& peaks);

// Self time per op row as horizontal bars, longest first, coloured by phase.
Section op_breakdown_view(const ProfileData& p);
// The bar scale: 0 .. the longest row's work_ns(), widened to a round figure, onto the bars'
// pixel columns.
Scale op_breakdown_scale(const ProfileData& p);

// Intensity (FLOP/byte) against achieved GFLOP/s on log-log axes, under the machine's two roofs;
// without peaks, a note saying how to get them.
Section roofline_view(const ProfileData& p, const RooflinePeaks& peaks);
// The ops the roofline plots: CPU ops (the peaks are the CPU's) with FLOPs, bytes and time.
std::vector<const ProfileOp*> roofline_ops(const ProfileData& p);
// {x, y}, log10 over whole decades: intensity from min(lowest op, ridge / 10) to
// max(highest op, ridge x 10), so the ridge sits well inside; GFLOP/s from min(slowest op, the
// memory roof at the left edge) to twice the peak FLOP/s.
std::pair<Scale, Scale> roofline_scales(const ProfileData& p, const RooflinePeaks& peaks);

// Live bytes over the profiled window with the peak marked; stacked by role when the samples
// carry roles. Without samples, the peak per device and why there is no curve.
Section memory_view(const ProfileData& p);
// {x: ms since the first sample, y: bytes}.
std::pair<Scale, Scale> memory_scales(const ProfileData& p);

// The module tree as two icicles, forward above backward: one row per depth, each module a
// rect as wide as its time, its children laid left to right inside it (what is left over is
// the module's own ops). Without "modules" (older profiles), or with no timed module, a note.
Section module_view(const ProfileData& p);
// The icicles' x scale: 0 .. the larger of the forward and backward totals (ms), widened to a
// round figure, onto kIcicleArea's columns.
Scale module_scale(const ProfileData& p);

// Milliseconds per training step over the whole run, points joined by a line, the median as a
// dashed line and the profiled steps shaded. No section without step times (no train block).
std::optional<Section> step_view(const ProfileData& p);
// {x: step number, 0 .. steps, y: ms, 0 .. the slowest step}.
std::pair<Scale, Scale> step_scales(const ProfileData& p);

}  // namespace prism::analysis::html
