// The kernel lab: validate every variant of an op against the reference, then time them side
// by side with statistics (`prism lab OP`).
//
//   1. Validation. For each validation size (odd shapes) and each timed size, every registered
//      variant runs on the same fresh random inputs as the baseline (the op's reference
//      variant, else its naive-tagged one). Outputs are poisoned with NaN first and surrounded by
//      guard values, so an unwritten element or an out-of-bounds write fails. The error is
//      normalized: max |y - y_ref| / max |y_ref|, against the op's float32 tolerance.
//      A variant that fails anywhere is reported and never timed.
//   2. Timing. Warm-up, then `repetitions` samples; each sample times enough back-to-back
//      calls to last at least `min_sample_ms`, and records the time per call. The variants of
//      one size share one case and their samples interleave (one of each per round), so drift
//      in the machine falls on all of them alike. The summary is
//      the median, a 95% bootstrap interval, err% and an "unstable" flag
//      (profiler/statistics.h); speed-ups over naive and over the reference come with a
//      bootstrap interval of the ratio and a Mann-Whitney test of "faster".
//   3. Thread counts. Given several OpenMP thread counts, the timed unit is a (variant, count)
//      pair: every pair of a size joins the same interleaved rounds, each sample setting its own
//      count first, and each variant's time at the first count over its time at another is its
//      thread speed-up, with a bootstrap interval. "x naive" and "x reference" compare rows at
//      the same count. Validation runs once per variant, at the first count.
//   4. Event counters (--counters, cpu). Every timed sample is bracketed by two reads of a
//      profiler::CounterSet (outside its clock), and a row's counts are summed over its samples,
//      so a row reports per call what `perf stat` would over the same calls: IPC, cache misses
//      per call and per FLOP, branch misses, page faults. Counted on the calling thread only: a
//      row at several threads shows the first thread's share.
// Kernels are called directly on raw buffers (op_info.h): no tensors, autograd or profiler in
// the timed loop.
//
// On cuda (`--device cuda`) the variants are the op's CUDA kernels and the baseline is the CPU
// kernel (the CPU's reference variant, else its naive one) run on the same inputs: the buffers are
// CUDA managed memory (case_memory.h), valid on both sides. Guards and NaN poison work as on the
// cpu; the host reads outputs only after the GPU has finished. Timing is on the wall clock, each
// sample a batch of launches closed by one synchronisation (see time_variant in lab.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/opinfo/validate.h"
#include "kernels/types.h"
#include "profiler/counters.h"
#include "profiler/machine.h"

namespace prism::lab {

// A machine's measured peak FLOP/s and bandwidth at one thread count; 0 = unknown.
struct PeakRates {
  double gflops = 0;
  double gbs = 0;  // DRAM (the STREAM triad); on cuda the GPU's triad
  // The cache levels as roofs at this count (MachinePeak::level_roofs), innermost first. A row
  // whose working set fits in one takes that level's bandwidth as its roof; empty: DRAM's.
  // ("= {}" lets {gflops, gbs} initialize the rest without a missing-initializer warning.)
  std::vector<profiler::LevelRoof> levels = {};
};

struct LabOptions {
  std::string op;
  Device device = Device::cpu;        // cpu or cuda (the CUDA variants, checked against the CPU)
  std::vector<std::string> sizes;     // empty: the op's default sizes
  std::vector<std::string> variants;  // empty: every registered variant
  int threads = 1;
  // Several OpenMP thread counts to time every variant at, distinct, the first being the one the
  // others are compared with (cpu only). Empty: {threads}.
  std::vector<int> thread_counts;
  int repetitions = 11;       // timed samples per variant and size (at least 9 for the table)
  double min_sample_ms = 20;  // each sample lasts at least this long
  double max_variant_s = 20;  // a variant whose estimated timing exceeds this is not timed
  uint64_t seed = 1;
  // The machine's measured peaks at this thread count (prism machine); 0 = unknown. On cuda: the
  // GPU's measured cuBLAS SGEMM rate and triad bandwidth (gpu::measure_peaks), not datasheet
  // figures.
  double peak_gflops = 0;
  double peak_gbs = 0;
  // The peaks at each entry of thread_counts, where they differ by count (the CPU's do). Empty:
  // peak_gflops and peak_gbs at every count.
  std::vector<PeakRates> peaks_per_count;
  // Count events over every timed sample (profiler/counters.h: cycles, instructions, cache and
  // branch misses where the machine allows them, page faults, context switches), on the
  // calling thread; cpu only.
  bool counters = false;
};

using opinfo::ValidationCheck;

struct VariantValidation {
  std::string variant;
  std::string tag;
  bool valid = true;
  double worst_error = 0;
  std::vector<ValidationCheck> checks;
};

struct TimingRow {
  std::string variant;
  std::string tag;
  std::string size;
  int threads = 1;  // the OpenMP thread count this row was timed at
  bool valid = true;
  bool timed = false;
  std::string note;  // why a variant was not timed
  // KernelEntry::runs_instead: "" when the variant ran as itself, else what ran in its place on
  // this machine and why (amx without AMX: "this CPU has no AMX ...: each call runs
  // 'optimized'"). Printed under the row and written to the JSON.
  std::string runs_instead;
  int64_t calls_per_sample = 0;
  std::vector<double> samples_ns;  // time per call, one entry per sample
  double median_ns = 0, ci_low_ns = 0, ci_high_ns = 0, err_pct = 0, mad_ns = 0;
  bool unstable = false;
  double gflops = 0, gbs = 0;
  double pct_peak_flops = 0, pct_peak_bw = 0, pct_roofline = 0;  // 0 when the peak is unknown
  // The memory level the row's bytes (its working set) fit in at its thread count, "L1", "L2",
  // "L3" or "DRAM" (profiler::roof_among), and that level's bandwidth: what pct_peak_bw and
  // pct_roofline are against. "" and 0 when the bandwidth is unknown.
  std::string roof_level;
  double roof_gbs = 0;
  int64_t workspace_bytes = 0;
  // Speed-up of this variant over the naive-tagged variant / over the reference: median ratio and
  // its interval; 0 when that baseline was not timed. *_faster: Mann-Whitney one-sided p < 0.05.
  double x_naive = 0, x_naive_low = 0, x_naive_high = 0;
  double x_ref = 0, x_ref_low = 0, x_ref_high = 0;
  bool faster_than_ref = false, slower_than_ref = false;
  // Speed-up of this variant at this thread count over the same variant at the first count
  // (median ratio and interval); 0 on the first count's row or when either was not timed.
  double x_threads = 0, x_threads_low = 0, x_threads_high = 0;
  int64_t flops = 0, bytes = 0;
  // With LabOptions::counters: the event counts summed over the timed samples' `counted_calls`
  // calls (profiler::Counter order), for the counters in event_mask; per call = events / calls.
  uint8_t event_mask = 0;
  int64_t events[profiler::kNumCounters] = {};
  int64_t counted_calls = 0;
};

struct LabResult {
  std::string op;
  Device device = Device::cpu;     // where the timed variants ran
  std::string device_name;         // the GPU's name on cuda, "" on the cpu
  std::string baseline;            // the variant every other is validated against (a CPU variant)
  int threads = 1;                 // OpenMP threads, the first count (on cuda: of the CPU baseline)
  std::vector<int> thread_counts;  // every count timed, the first one first
  double tolerance = 0;
  double peak_gflops = 0, peak_gbs = 0;  // at the first count
  std::vector<PeakRates> peaks;          // at each entry of thread_counts
  std::vector<VariantValidation> validation;
  // Size-major, then variants in registry order, then thread counts in the order given.
  std::vector<TimingRow> rows;
  profiler::CounterInfo counters;  // what was counted (LabOptions::counters), and any notice
};

// Runs the lab. Throws prism::Error on an unknown op, size or variant, on thread counts that are
// not distinct and positive (or several of them on cuda), and on cuda when CUDA is not available
// or a CUDA kernel faults.
LabResult run_lab(const LabOptions& opts);

// Sequential sampling: adds the samples of `more`, a later run_lab of the same op, to the rows of
// `into` with the same size, variant and thread count (both timed), and summarizes each such row
// again (median, interval, rates) over all its samples. Pooling is sound when each run
// interleaved the variants it compares, as run_lab does. The speed-up columns (x naive,
// x reference, x threads) of a pooled row are cleared to 0, "not computed": they compared
// samples the row no longer has alone. Rows of `more` with no timed match in `into` are ignored.
void pool_samples(LabResult& into, const LabResult& more, uint64_t seed);

// The human-readable report and the JSON document (one row per variant, size and thread count).
std::string format_lab(const LabResult& r);
std::string lab_json(const LabResult& r);

}  // namespace prism::lab
