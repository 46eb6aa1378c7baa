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

namespace prism::lab {

struct LabOptions {
  std::string op;
  Device device = Device::cpu;        // cpu or cuda (the CUDA variants, checked against the CPU)
  std::vector<std::string> sizes;     // empty: the op's default sizes
  std::vector<std::string> variants;  // empty: every registered variant
  int threads = 1;
  int repetitions = 11;       // timed samples per variant and size (at least 9 for the table)
  double min_sample_ms = 20;  // each sample lasts at least this long
  double max_variant_s = 20;  // a variant whose estimated timing exceeds this is not timed
  uint64_t seed = 1;
  // The machine's measured peaks at this thread count (prism machine); 0 = unknown. On cuda: the
  // GPU's measured cuBLAS SGEMM rate and triad bandwidth (gpu::measure_peaks), not datasheet
  // figures.
  double peak_gflops = 0;
  double peak_gbs = 0;
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
  bool valid = true;
  bool timed = false;
  std::string note;  // why a variant was not timed
  int64_t calls_per_sample = 0;
  std::vector<double> samples_ns;  // time per call, one entry per sample
  double median_ns = 0, ci_low_ns = 0, ci_high_ns = 0, err_pct = 0, mad_ns = 0;
  bool unstable = false;
  double gflops = 0, gbs = 0;
  double pct_peak_flops = 0, pct_peak_bw = 0, pct_roofline = 0;  // 0 when the peak is unknown
  int64_t workspace_bytes = 0;
  // Speed-up of this variant over the naive-tagged variant / over the reference: median ratio and
  // its interval; 0 when that baseline was not timed. *_faster: Mann-Whitney one-sided p < 0.05.
  double x_naive = 0, x_naive_low = 0, x_naive_high = 0;
  double x_ref = 0, x_ref_low = 0, x_ref_high = 0;
  bool faster_than_ref = false, slower_than_ref = false;
  int64_t flops = 0, bytes = 0;
};

struct LabResult {
  std::string op;
  Device device = Device::cpu;  // where the timed variants ran
  std::string device_name;      // the GPU's name on cuda, "" on the cpu
  std::string baseline;         // the variant every other is validated against (a CPU variant)
  int threads = 1;              // OpenMP threads (on cuda: of the CPU baseline)
  double tolerance = 0;
  double peak_gflops = 0, peak_gbs = 0;
  std::vector<VariantValidation> validation;
  std::vector<TimingRow> rows;  // size-major, then variants in registry order
};

// Runs the lab. Throws prism::Error on an unknown op, size or variant, and on cuda when CUDA is
// not available or a CUDA kernel faults.
LabResult run_lab(const LabOptions& opts);

// The human-readable report and the JSON document (one row per variant and size).
std::string format_lab(const LabResult& r);
std::string lab_json(const LabResult& r);

}  // namespace prism::lab
