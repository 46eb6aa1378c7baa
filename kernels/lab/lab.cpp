// run_lab: validation, then timing (the method is described at the top of lab.h).
#include "kernels/lab/lab.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "kernels/gpu_runtime.h"
#include "kernels/opinfo/case_memory.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/opinfo/validate.h"
#include "profiler/clock.h"
#include "profiler/counters.h"
#include "profiler/statistics.h"

namespace prism::lab {
namespace {

namespace stats = profiler::stats;
using opinfo::Case;
using opinfo::OpInfo;

std::vector<const kernels::KernelEntry*> chosen_variants(const kernels::OpKernels& k,
                                                         const LabOptions& opts) {
  std::vector<const kernels::KernelEntry*> out;
  if (opts.variants.empty()) {
    for (const auto& e : k.entries()) {
      if (e.has(DType::f32)) out.push_back(&e);
    }
    return out;
  }
  for (const std::string& name : opts.variants) out.push_back(&k.at(name));  // Error if unknown
  return out;
}

// Median, interval, err%, GFLOP/s, GB/s and the % of peak and roofline of a timed row, against
// the machine's peaks at the row's thread count. The bandwidth is that of the memory level the
// row's bytes fit in (its roof): a set in L1 is measured against L1's triad, not DRAM's.
void summarize_row(const LabOptions& opts, const PeakRates& peak, TimingRow& row) {
  const stats::Summary s = stats::summarize(row.samples_ns, opts.seed);
  row.timed = true;
  row.median_ns = s.median;
  row.ci_low_ns = s.ci_low;
  row.ci_high_ns = s.ci_high;
  row.err_pct = s.err_pct;
  row.mad_ns = s.mad;
  row.unstable = s.unstable;
  row.gflops = row.flops / s.median;  // FLOPs per ns = GFLOP/s
  row.gbs = row.bytes / s.median;
  if (peak.gflops > 0) row.pct_peak_flops = 100 * row.gflops / peak.gflops;
  if (peak.gbs > 0) {
    const profiler::Roof roof =
        profiler::roof_among(peak.levels, static_cast<double>(row.bytes), peak.gbs);
    row.roof_level = roof.level;
    row.roof_gbs = roof.gbps;
    row.pct_peak_bw = 100 * row.gbs / roof.gbps;
  }
  if (peak.gflops > 0 && row.roof_gbs > 0 && row.bytes > 0) {
    // Roofline: the best a kernel of this arithmetic intensity can do on this machine, with the
    // data in the level it fits in.
    const double intensity = static_cast<double>(row.flops) / row.bytes;
    const double attainable = std::min(peak.gflops, intensity * row.roof_gbs);
    row.pct_roofline = attainable > 0 ? 100 * row.gflops / attainable : 0;
  }
}

// Timing, in two steps, so that the samples of the variants of one size interleave (below, in
// run_lab): prepare_variant measures what one call costs and how many calls make a sample,
// take_sample times one sample.
//
// On the cpu a call is done when it returns; a sample is `calls` calls back to back, timed on
// the wall clock.
//
// On cuda a launch returns as soon as the kernel is queued, so a host clock around one call
// measures the launch, not the work. Every timed stretch therefore ends with
// gpu::synchronize(): a sample is `calls` launches back to back closed by one wait, timed on the
// wall clock (profiler::now_ns, std::chrono::steady_clock; not a CPU-time clock, which would not
// advance while the host waits for the GPU). Time per call is then the GPU's throughput on this
// kernel with the launch costs and any host work of the variant (cuBLAS setup, a scratch
// allocation) included, as a training step pays them; the one synchronisation (~10 us) is
// spread over a sample of at least min_sample_ms. CUDA events (gpu::timer_*) would time the
// stream alone; with back-to-back launches they agree within that margin, except for a variant
// whose host side is the bottleneck, which a learner should see. The case's buffers are managed
// memory written on the host; they are prefetched to the GPU first, so the first call (the cost
// estimate) measures the kernel, not page migration.
void finish_calls(bool gpu) {  // queued GPU work done; nothing to wait for on the cpu
  if (gpu) kernels::gpu::synchronize();
}

// Estimates one call, warms up and returns the calls per sample; 0, with `row.note` saying why,
// when the samples would take longer than opts.max_variant_s.
int64_t prepare_variant(Case& c, const kernels::KernelEntry& variant, const LabOptions& opts,
                        TimingRow& row) {
  const bool gpu = opts.device == Device::cuda;
  if (gpu) {
    opinfo::prefetch_case_buffers();
    finish_calls(gpu);
  }
  // The first call (cold caches, page faults on fresh buffers) estimates the cost of one call.
  int64_t t0 = profiler::now_ns();
  c.run(variant);
  finish_calls(gpu);
  double one_ns = std::max<double>(1, static_cast<double>(profiler::now_ns() - t0));
  const int reps = std::max(opts.repetitions, 1);
  const double min_sample_ns = opts.min_sample_ms * 1e6;
  const double estimate_s = std::max(one_ns, min_sample_ns) * (reps + 2) * 1e-9;
  if (estimate_s > opts.max_variant_s) {
    row.note = "not timed: one call takes " + std::to_string(one_ns * 1e-9).substr(0, 5) +
               " s, the samples would take ~" + std::to_string(static_cast<int>(estimate_s)) +
               " s (raise --max-seconds)";
    return 0;
  }
  // Warm-up: at least 2 more calls and about one sample's worth of time (on cuda each call
  // waited for: launching a slow kernel unchecked could queue minutes of work).
  t0 = profiler::now_ns();
  int warm = 0;
  while (warm < 2 || static_cast<double>(profiler::now_ns() - t0) < min_sample_ns) {
    c.run(variant);
    finish_calls(gpu);
    ++warm;
  }
  one_ns = std::max<double>(1, static_cast<double>(profiler::now_ns() - t0) / warm);
  if (gpu) {
    // A wait after every call overstates a short kernel by the launch-and-wait round trip, so
    // calibrate once more the way samples run: a batch of launches closed by one wait. The
    // batch lasts at most about one sample, since batched calls are no slower than waited ones.
    const int64_t batch = std::max<int64_t>(1, static_cast<int64_t>(min_sample_ns / one_ns));
    t0 = profiler::now_ns();
    for (int64_t i = 0; i < batch; ++i) c.run(variant);
    finish_calls(gpu);
    one_ns = std::max<double>(1, static_cast<double>(profiler::now_ns() - t0) / batch);
  }
  row.calls_per_sample =
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(min_sample_ns / one_ns)));
  return row.calls_per_sample;
}

// One sample: `calls` calls back to back, the time per call in ns.
double take_sample(Case& c, const kernels::KernelEntry& variant, int64_t calls, bool gpu) {
  const int64_t t0 = profiler::now_ns();
  for (int64_t i = 0; i < calls; ++i) c.run(variant);
  finish_calls(gpu);
  return static_cast<double>(profiler::now_ns() - t0) / static_cast<double>(calls);
}

// Runs `step` of variant `v`'s timing; on cuda a fault inside the kernel becomes an Error naming
// the op, the variant and the size.
template <class F>
auto timed(const OpInfo& op, const kernels::KernelEntry& v, const std::string& size, bool gpu,
           F&& step) {
  if (!gpu) return step();
  try {
    return step();
  } catch (const Error& e) {
    throw Error("lab " + op.op + ": CUDA variant '" + v.name + "' failed while timing size " +
                size + ": " + e.what());
  }
}

// Fills the speed-up columns of each timed row of one size and thread count against `naive` and
// `ref` (timed at that count too).
void add_speedups(std::vector<TimingRow*>& rows, const TimingRow* naive, const TimingRow* ref,
                  uint64_t seed) {
  for (TimingRow* r : rows) {
    if (!r->timed) continue;
    if (naive && naive->timed) {
      r->x_naive = naive->median_ns / r->median_ns;
      const auto ci = stats::bootstrap_ratio_ci(naive->samples_ns, r->samples_ns, 0.95, 2000, seed);
      r->x_naive_low = ci.low;
      r->x_naive_high = ci.high;
    }
    if (ref && ref->timed) {
      r->x_ref = ref->median_ns / r->median_ns;
      const auto ci = stats::bootstrap_ratio_ci(ref->samples_ns, r->samples_ns, 0.95, 2000, seed);
      r->x_ref_low = ci.low;
      r->x_ref_high = ci.high;
      if (r != ref) {
        const auto mw = stats::mann_whitney_u(r->samples_ns, ref->samples_ns);
        r->faster_than_ref = mw.p_a_less < 0.05;
        r->slower_than_ref = stats::mann_whitney_u(ref->samples_ns, r->samples_ns).p_a_less < 0.05;
      }
    }
  }
}

// Fills each variant's speed-up at every later thread count over its own time at the first count.
// The rows of one size from `first` on hold `counts` consecutive rows per variant (run_lab).
void add_thread_speedups(std::vector<TimingRow>& rows, size_t first, size_t counts, uint64_t seed) {
  for (size_t v = first; v < rows.size(); v += counts) {
    const TimingRow& base = rows[v];
    for (size_t t = 1; t < counts; ++t) {
      TimingRow& r = rows[v + t];
      if (!base.timed || !r.timed) continue;
      r.x_threads = base.median_ns / r.median_ns;
      const auto ci = stats::bootstrap_ratio_ci(base.samples_ns, r.samples_ns, 0.95, 2000, seed);
      r.x_threads_low = ci.low;
      r.x_threads_high = ci.high;
    }
  }
}

// The thread counts to time at, the first one first: opts.thread_counts, else opts.threads.
std::vector<int> thread_counts_of(const LabOptions& opts) {
  if (opts.thread_counts.empty()) return {std::max(opts.threads, 1)};
  const std::vector<int>& counts = opts.thread_counts;
  for (auto it = counts.begin(); it != counts.end(); ++it) {
    // A repeated count would be timed twice and compared with itself.
    if (*it < 1 || std::find(counts.begin(), it, *it) != it) {
      throw Error("lab: thread counts must be distinct and at least 1, got " + std::to_string(*it) +
                  " at position " + std::to_string(it - counts.begin() + 1));
    }
  }
  if (opts.device == Device::cuda && counts.size() > 1) {
    // On cuda the threads only run the CPU baseline, which is not timed there.
    throw Error("lab --device cuda: give one thread count (it sets the CPU baseline's threads)");
  }
  return counts;
}

// The machine's peaks at entry `i` of the thread counts.
PeakRates peak_at(const LabOptions& opts, size_t i) {
  if (i < opts.peaks_per_count.size()) return opts.peaks_per_count[i];
  return {opts.peak_gflops, opts.peak_gbs};
}

// What every size's timing needs besides the size itself.
struct TimingPlan {
  const OpInfo& op;
  const LabOptions& opts;
  std::vector<const kernels::KernelEntry*> variants;
  std::vector<int> counts;
  std::string timed_reference;  // the variant of the "x reference" column ("" for none)
};

// 2. Timing of size `s`: one row per (variant, thread count) pair, appended to result.rows. The
// pairs share one case (the same inputs, the same buffers) and their samples interleave: round
// r takes one sample of every pair, starting one pair further on each round, so a slow drift of
// the machine (another process, the clock, the caches' state) falls on every pair alike instead
// of on whichever ran last. Each sample sets its pair's thread count first, outside the clock.
void time_size(const TimingPlan& p, const std::string& s, LabResult& result,
               profiler::CounterSet* counters) {
  const bool gpu = p.opts.device == Device::cuda;
  const size_t first = result.rows.size();
  const size_t n_counts = p.counts.size();
  auto c = p.op.make(s, p.opts.seed);
  const profiler::Cost cost = c->cost();
  std::vector<int64_t> calls;  // calls per sample of each row of this size; 0: not timed
  for (size_t i = 0; i < p.variants.size(); ++i) {
    const kernels::KernelEntry& v = *p.variants[i];
    for (const int threads : p.counts) {
      TimingRow row;
      row.variant = v.name;
      row.tag = kernels::tag_name(v.tag);
      row.size = s;
      row.threads = threads;
      row.valid = result.validation[i].valid;
      row.flops = cost.flops;
      row.bytes = cost.bytes;
      row.workspace_bytes = c->workspace_bytes(v);
      row.runs_instead = v.runs_instead_note();
      int64_t n = 0;
      if (!row.valid) {
        row.note = "not timed: failed validation";
      } else {
        // Calibrated at its own count: more threads, fewer ns per call, more calls per sample.
        omp_set_num_threads(threads);
        n = timed(p.op, v, s, gpu, [&] { return prepare_variant(*c, v, p.opts, row); });
      }
      calls.push_back(n);
      result.rows.push_back(std::move(row));
    }
  }
  const size_t n = calls.size();
  for (int r = 0; r < std::max(p.opts.repetitions, 1); ++r) {
    for (size_t turn = 0; turn < n; ++turn) {
      const size_t i = (turn + static_cast<size_t>(r)) % n;
      if (calls[i] == 0) continue;
      TimingRow& row = result.rows[first + i];
      const kernels::KernelEntry& v = *p.variants[i / n_counts];
      omp_set_num_threads(row.threads);
      // Event counters (4. in lab.h): read outside the sample's clock, summed over samples.
      profiler::CounterReading before, after;
      if (counters) counters->read(before);
      row.samples_ns.push_back(
          timed(p.op, v, s, gpu, [&] { return take_sample(*c, v, calls[i], gpu); }));
      if (counters) {
        counters->read(after);
        const profiler::CounterValues d = profiler::counts_between(before, after);
        for (int e = 0; e < profiler::kNumCounters; ++e) row.events[e] += d.value[e];
        row.event_mask = row.counted_calls == 0 ? d.mask : (row.event_mask & d.mask);
        row.counted_calls += calls[i];
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (calls[i] > 0) summarize_row(p.opts, peak_at(p.opts, i % n_counts), result.rows[first + i]);
  }
  for (size_t t = 0; t < n_counts; ++t) {  // "x naive", "x reference": at the same count
    std::vector<TimingRow*> rows;
    const TimingRow *naive = nullptr, *ref = nullptr;
    for (size_t i = first + t; i < result.rows.size(); i += n_counts) {
      TimingRow& row = result.rows[i];
      rows.push_back(&row);
      if (!naive && row.tag == "naive") naive = &row;
      if (row.variant == p.timed_reference && row.tag == "reference") ref = &row;
    }
    add_speedups(rows, naive, ref, p.opts.seed);
  }
  add_thread_speedups(result.rows, first, n_counts, p.opts.seed);
}

}  // namespace

LabResult run_lab(const LabOptions& opts) {
  const OpInfo& op = opinfo::find_op_info(opts.op);
  const bool gpu = opts.device == Device::cuda;
  if (opts.device != Device::cpu && !gpu) {
    throw Error(std::string("lab: runs on cpu or cuda, not ") + device_name(opts.device));
  }
  const std::vector<int> counts = thread_counts_of(opts);
  if (opts.counters && gpu) {
    throw Error("lab --counters: counts CPU events, and the CUDA kernels run on the GPU");
  }
  if (gpu) kernels::gpu::require("lab --device cuda");
  // The CPU kernels are the yardstick on either device; on cuda the CUDA kernels are timed.
  const kernels::OpKernels& cpu_kernels = kernels::registry().at(op.op, Device::cpu);
  const kernels::OpKernels& k = gpu ? kernels::registry().at(op.op, Device::cuda) : cpu_kernels;
  // Every buffer a case makes from here on is memory the timed kernels can reach (case_memory.h).
  const opinfo::ScopedCaseDevice buffers_for(opts.device);
  const std::vector<std::string> sizes = opts.sizes.empty() ? op.default_sizes : opts.sizes;
  for (const std::string& s : sizes) op.make(s, opts.seed);  // a bad size fails before any work

  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(counts.front());
  struct RestoreThreads {
    int n;
    ~RestoreThreads() { omp_set_num_threads(n); }
  } restore{saved_threads};

  LabResult result;
  result.op = op.op;
  result.device = opts.device;
  if (gpu) result.device_name = kernels::gpu::device_info().name;
  result.threads = counts.front();
  result.thread_counts = counts;
  result.tolerance = op.tolerance;
  for (size_t i = 0; i < counts.size(); ++i) result.peaks.push_back(peak_at(opts, i));
  result.peak_gflops = result.peaks.front().gflops;
  result.peak_gbs = result.peaks.front().gbs;
  const kernels::KernelEntry& baseline = opinfo::baseline_of(cpu_kernels);
  result.baseline = baseline.name;
  TimingPlan plan{op, opts, chosen_variants(k, opts), counts, baseline.name};
  // The "x reference" column: the baseline on the cpu; on cuda the CUDA reference (cuBLAS), if
  // the op has one (the CPU baseline is not timed there).
  if (gpu) {
    plan.timed_reference.clear();
    for (const auto& e : k.entries()) {
      if (e.tag == kernels::VariantTag::reference && e.has(DType::f32)) {
        plan.timed_reference = e.name;
        break;
      }
    }
  }

  // 1. Validation, once per variant at the first thread count: odd sizes, then the sizes about
  // to be timed.
  std::vector<std::string> check_sizes = op.validation_sizes;
  check_sizes.insert(check_sizes.end(), sizes.begin(), sizes.end());
  for (const kernels::KernelEntry* v : plan.variants) {
    VariantValidation vv;
    vv.variant = v->name;
    vv.tag = kernels::tag_name(v->tag);
    uint64_t seed = opts.seed;
    for (const std::string& s : check_sizes) {
      ValidationCheck c = opinfo::validate_variant(op, *v, baseline, s, ++seed, opts.device);
      vv.valid = vv.valid && c.ok;
      if (std::isnan(c.error) || c.error > vv.worst_error) vv.worst_error = c.error;
      vv.checks.push_back(std::move(c));
    }
    result.validation.push_back(std::move(vv));
  }

  // 4. Event counters, opened once on this thread (the one that runs the samples).
  std::unique_ptr<profiler::CounterSet> counters;
  if (opts.counters) {
    counters = std::make_unique<profiler::CounterSet>();
    result.counters.enabled = true;
    result.counters.mask = counters->mask();
    result.counters.notice = counters->notice();
    result.counters.attribution = "per call, over each variant's timed samples";
    result.counters.scope =
        "the calling thread only (at several threads, the OpenMP workers' share is not counted)";
    if (counters->mask() == 0) counters.reset();
  }

  // 2. Timing, size by size (time_size).
  for (const std::string& s : sizes) time_size(plan, s, result, counters.get());
  return result;
}

void pool_samples(LabResult& into, const LabResult& more, uint64_t seed) {
  LabOptions opts;
  opts.seed = seed;
  for (const TimingRow& extra : more.rows) {
    if (!extra.timed) continue;
    for (TimingRow& row : into.rows) {
      if (!row.timed || row.size != extra.size || row.variant != extra.variant ||
          row.threads != extra.threads) {
        continue;
      }
      row.samples_ns.insert(row.samples_ns.end(), extra.samples_ns.begin(), extra.samples_ns.end());
      // The peaks at the row's thread count, as run_lab had them.
      PeakRates peak{into.peak_gflops, into.peak_gbs};
      for (size_t i = 0; i < into.thread_counts.size() && i < into.peaks.size(); ++i) {
        if (into.thread_counts[i] == row.threads) peak = into.peaks[i];
      }
      summarize_row(opts, peak, row);
      row.x_naive = row.x_naive_low = row.x_naive_high = 0;
      row.x_ref = row.x_ref_low = row.x_ref_high = 0;
      row.faster_than_ref = row.slower_than_ref = false;
      row.x_threads = row.x_threads_low = row.x_threads_high = 0;
      break;
    }
  }
}

}  // namespace prism::lab
