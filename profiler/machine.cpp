// Measuring this machine's limits (the microkernels are in machine_kernels.cpp, the cache in
// machine_cache.cpp) and the process-wide figures the kernel lab reads.
#include "profiler/machine.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "profiler/statistics.h"

namespace prism::profiler {

namespace {

int default_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

RateStats rate_stats(const std::vector<double>& rates) {
  RateStats r;
  r.best = *std::max_element(rates.begin(), rates.end());
  r.worst = *std::min_element(rates.begin(), rates.end());
  r.median = stats::median(rates);
  r.reps = static_cast<int>(rates.size());
  return r;
}

// FMA iterations per thread for one repetition of about `seconds` of CPU time: doubles a short
// run until it lasts long enough to time (a millisecond, or the target if shorter), then scales.
int64_t calibrate_fma_iterations(double seconds) {
  const double enough = std::min(seconds, 1e-3);
  int64_t iterations = 256;
  auto cpu_seconds = [](const KernelRun& run) {
    return run.thread_rate > 0 ? run.work / run.thread_rate : run.seconds;
  };
  KernelRun run = run_fma_kernel(1, iterations);
  while (cpu_seconds(run) < enough && iterations < (int64_t{1} << 40)) {
    iterations *= 2;
    run = run_fma_kernel(1, iterations);
  }
  const double per_iteration = cpu_seconds(run) / static_cast<double>(iterations);
  return std::max<int64_t>(1, std::llround(seconds / per_iteration));
}

// A volatile store keeps each run's checksum alive: the optimizer cannot prove it unused.
volatile double g_sink = 0;
void consume(double checksum) {
  g_sink = checksum;
}

bool covers(const MachinePeak& m, int threads) {
  return static_cast<int>(m.rows.size()) >= threads;
}

}  // namespace

const ThreadLimits* MachinePeak::row(int threads) const {
  for (const ThreadLimits& r : rows) {
    if (r.threads == threads) return &r;
  }
  return nullptr;
}

double MachinePeak::peak_gflops(int threads) const {
  if (rows.empty()) return 0;
  const size_t i = static_cast<size_t>(std::clamp<int>(threads, 1, static_cast<int>(rows.size())));
  return rows[i - 1].fma_gflops.best;
}

double MachinePeak::peak_gbps(int threads) const {
  if (rows.empty()) return 0;
  const size_t i = static_cast<size_t>(std::clamp<int>(threads, 1, static_cast<int>(rows.size())));
  return rows[i - 1].triad_gbps.best;
}

double MachinePeak::ridge_flop_per_byte(int threads) const {
  const double bw = peak_gbps(threads);
  return bw > 0 ? peak_gflops(threads) / bw : 0;
}

MachinePeak measure_machine(const MeasureOptions& opts) {
  const int max_threads = opts.max_threads > 0 ? opts.max_threads : default_threads();
  if (opts.max_threads < 0 || opts.repetitions < 1 || !(opts.fma_seconds > 0) ||
      opts.stream_array_bytes < 0) {
    throw std::invalid_argument(
        "measure_machine: need max_threads >= 0, repetitions >= 1, fma_seconds > 0 and "
        "stream_array_bytes >= 0");
  }
  MachinePeak m = describe_machine();
  m.measured_at = utc_now_iso8601();
  double load[1];
  if (getloadavg(load, 1) == 1) m.load_avg = load[0];
  m.stream_array_bytes =
      opts.stream_array_bytes > 0 ? opts.stream_array_bytes : default_stream_array_bytes(m.caches);
  const int64_t iterations = calibrate_fma_iterations(opts.fma_seconds);
  StreamArrays arrays(m.stream_array_bytes, max_threads);
  const size_t reps = static_cast<size_t>(opts.repetitions);

  m.clock = max_threads <= m.logical_cpus
                ? "per-thread CPU time, summed over threads"
                : "per-thread CPU time up to " + std::to_string(m.logical_cpus) +
                      " threads, wall time beyond";
  for (int t = 1; t <= max_threads; ++t) {
    const bool own_cpus = t <= m.logical_cpus;
    auto rate_of = [own_cpus](const KernelRun& run) {
      return own_cpus ? run.thread_rate : run.wall_rate();
    };
    // One untimed run of each kernel first: it starts the thread team and, for STREAM, brings
    // the pages into the TLB.
    consume(run_fma_kernel(t, std::max<int64_t>(1, iterations / 10)).checksum);
    consume(arrays.triad(t).checksum);
    std::vector<double> fma(reps), triad(reps), copy(reps);
    for (size_t r = 0; r < reps; ++r) {
      const KernelRun run = run_fma_kernel(t, iterations);
      consume(run.checksum);
      fma[r] = rate_of(run) * 1e-9;
    }
    // Triad and copy alternate, so a slow spell of the machine hits both alike.
    for (size_t r = 0; r < reps; ++r) {
      const KernelRun tr = arrays.triad(t);
      const KernelRun cp = arrays.copy(t);
      consume(tr.checksum + cp.checksum);
      triad[r] = rate_of(tr) * 1e-9;
      copy[r] = rate_of(cp) * 1e-9;
    }
    m.rows.push_back({t, rate_stats(fma), rate_stats(triad), rate_stats(copy)});
  }
  return m;
}

MachineLookup load_or_measure(const std::string& cache_path, const MeasureOptions& opts,
                              bool refresh) {
  MachineLookup out;
  const int want = opts.max_threads > 0 ? opts.max_threads : default_threads();
  if (!refresh && !cache_path.empty()) {
    std::string warning;
    std::optional<MachinePeak> cached =
        read_machine_cache(cache_path, describe_machine().key, &warning);
    if (!warning.empty()) out.warnings.push_back(warning);
    if (cached && covers(*cached, want)) {
      out.peak = std::move(*cached);
      out.from_cache = true;
      return out;
    }
  }
  MeasureOptions o = opts;
  o.max_threads = want;
  out.peak = measure_machine(o);
  if (!cache_path.empty()) {
    try {
      write_machine_cache(cache_path, out.peak);
      out.saved = true;
    } catch (const std::exception& e) {
      out.warnings.push_back(std::string(e.what()) + " (the figures are not cached)");
    }
  }
  return out;
}

const MachinePeak* machine_peak(bool allow_measure) {
  static std::mutex mu;
  static std::unique_ptr<MachinePeak> known;
  const std::lock_guard<std::mutex> lock(mu);
  if (known) return known.get();
  const std::string path = default_machine_cache_path();
  std::string warning;
  std::optional<MachinePeak> cached = read_machine_cache(path, describe_machine().key, &warning);
  if (!warning.empty()) std::fprintf(stderr, "prism: warning: %s\n", warning.c_str());
  if (cached && (covers(*cached, default_threads()) || !allow_measure)) {
    known = std::make_unique<MachinePeak>(std::move(*cached));
  } else if (allow_measure) {
    std::fprintf(stderr,
                 "prism: measuring this machine's peak FLOP/s and bandwidth once "
                 "(a few seconds; cached for later runs)\n");
    MachineLookup lookup = load_or_measure(path, MeasureOptions{}, /*refresh=*/true);
    for (const std::string& w : lookup.warnings) {
      std::fprintf(stderr, "prism: warning: %s\n", w.c_str());
    }
    known = std::make_unique<MachinePeak>(std::move(lookup.peak));
  }
  return known.get();
}

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

}  // namespace prism::profiler
