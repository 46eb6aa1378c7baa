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

// The count (FMA iterations, triad passes) for one repetition of about `seconds` of CPU time per
// thread: doubles a short run of run(count) until it lasts long enough to time (a millisecond,
// or the target if shorter), then scales. Starts at `count`.
template <class Run>
int64_t calibrate_count(double seconds, int64_t count, Run run) {
  const double enough = std::min(seconds, 1e-3);
  // Work over the summed per-thread rates: each thread's CPU time when the shares are equal.
  auto cpu_seconds = [](const KernelRun& r) {
    return r.thread_rate > 0 ? r.work / r.thread_rate : r.seconds;
  };
  KernelRun r = run(count);
  while (cpu_seconds(r) < enough && count < (int64_t{1} << 40)) {
    count *= 2;
    r = run(count);
  }
  const double per_count = cpu_seconds(r) / static_cast<double>(count);
  return std::max<int64_t>(1, std::llround(seconds / std::max(per_count, 1e-12)));
}

// A volatile store keeps each run's checksum alive: the optimizer cannot prove it unused.
volatile double g_sink = 0;
void consume(double checksum) {
  g_sink = checksum;
}

bool covers(const MachinePeak& m, int threads) {
  return static_cast<int>(m.rows.size()) >= threads;
}

// The cache levels the triad measures: name, capacity, private to a core or shared. A level of
// unknown size (0) is left out.
struct CacheLevel {
  const char* name;
  int64_t capacity;
  bool private_level;
};

std::vector<CacheLevel> known_levels(const CacheSizes& c) {
  std::vector<CacheLevel> out;
  for (const CacheLevel& l : {CacheLevel{"L1", c.l1d, true}, CacheLevel{"L2", c.l2, true},
                              CacheLevel{"L3", c.l3, false}}) {
    if (l.capacity > 0) out.push_back(l);
  }
  return out;
}

// The triad with `threads` threads on `arrays`, a set that stays in `level`: `reps` repetitions of
// about `seconds` each. One untimed pass first brings the threads' shares into their caches.
LevelRate measure_level(const CacheLevel& level, StreamArrays& arrays, int threads, size_t reps,
                        double seconds, bool own_cpus) {
  LevelRate out;
  out.level = level.name;
  out.working_set_bytes = 3 * arrays.elements() * static_cast<int64_t>(sizeof(double));
  consume(arrays.triad(threads).checksum);
  const int64_t passes = calibrate_count(seconds, 1, [&](int64_t p) {
    const KernelRun run = arrays.triad(threads, p);
    consume(run.checksum);
    return run;
  });
  std::vector<double> rates(reps);
  for (size_t r = 0; r < reps; ++r) {
    const KernelRun run = arrays.triad(threads, passes);
    consume(run.checksum);
    rates[r] = (own_cpus ? run.thread_rate : run.wall_rate()) * 1e-9;
  }
  out.gbps = rate_stats(rates);
  return out;
}

// Row `threads` of m, clamped to the measured ones as peak_gflops does; nullptr if none.
const ThreadLimits* clamped_row(const MachinePeak& m, int threads) {
  if (m.rows.empty()) return nullptr;
  return &m.rows[static_cast<size_t>(std::clamp<int>(threads, 1, static_cast<int>(m.rows.size()))) -
                 1];
}

}  // namespace

Roof roof_among(const std::vector<LevelRoof>& levels, double working_set_bytes, double dram_gbps) {
  for (const LevelRoof& l : levels) {
    if (l.capacity_bytes > 0 && l.gbps > 0 && working_set_bytes <= l.capacity_bytes) {
      return {l.level, l.gbps};
    }
  }
  return {"DRAM", dram_gbps};
}

int64_t level_working_set_bytes(int64_t capacity, bool private_level, int threads,
                                int physical_cores, int64_t l2_per_core) {
  const int64_t cores = std::max(1, std::min(threads, std::max(physical_cores, 1)));
  const int64_t total = private_level ? capacity * cores : capacity;
  int64_t set = std::min<int64_t>(total / 2, int64_t{1} << 30);
  if (!private_level && l2_per_core > 0) {
    set = std::min(set, 4 * l2_per_core * std::max(physical_cores, 1));
  }
  return set;
}

bool remeasure_when_quiet(double cached_load, double load_now) {
  return cached_load >= kBusyLoad && load_now >= 0 && load_now < kBusyLoad;
}

double load_average_now() {
  double load[1];
  return getloadavg(load, 1) == 1 ? load[0] : -1;
}

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

std::vector<LevelRoof> MachinePeak::level_roofs(int threads) const {
  std::vector<LevelRoof> out;
  const ThreadLimits* r = clamped_row(*this, threads);
  if (!r) return out;
  const int cores = std::max(1, std::min(r->threads, physical_cores > 0 ? physical_cores : 1));
  for (const LevelRate& l : r->levels) {
    int64_t capacity = 0;
    if (l.level == "L1") capacity = caches.l1d * cores;
    if (l.level == "L2") capacity = caches.l2 * cores;
    if (l.level == "L3") capacity = caches.l3;
    out.push_back({l.level, static_cast<double>(capacity), l.gbps.best});
  }
  return out;
}

Roof MachinePeak::roof_for(int threads, double working_set_bytes) const {
  return roof_among(level_roofs(threads), working_set_bytes, peak_gbps(threads));
}

double MachinePeak::ridge_flop_per_byte(int threads, double working_set_bytes) const {
  const double bw = roof_for(threads, working_set_bytes).gbps;
  return bw > 0 ? peak_gflops(threads) / bw : 0;
}

MachinePeak measure_machine(const MeasureOptions& opts) {
  const int max_threads = opts.max_threads > 0 ? opts.max_threads : default_threads();
  if (opts.max_threads < 0 || opts.repetitions < 1 || !(opts.fma_seconds > 0) ||
      opts.stream_array_bytes < 0 || !(opts.level_seconds > 0)) {
    throw std::invalid_argument(
        "measure_machine: need max_threads >= 0, repetitions >= 1, fma_seconds > 0, "
        "stream_array_bytes >= 0 and level_seconds > 0");
  }
  MachinePeak m = describe_machine();
  m.measured_at = utc_now_iso8601();
  m.load_avg = load_average_now();
  m.stream_array_bytes =
      opts.stream_array_bytes > 0 ? opts.stream_array_bytes : default_stream_array_bytes(m.caches);
  // The cache levels' arrays. A shared level's set is the same at every thread count, so it is
  // made once (the L3's can be hundreds of MiB: writing it takes longer than measuring it); a
  // private level's grows with the cores in use, and is made for each count below.
  // Each set is at most half the STREAM arrays' (3 x stream_array_bytes), so DRAM's stays the
  // largest: only a small stream_array_bytes (a quick run) makes this cap bite.
  const std::vector<CacheLevel> levels = known_levels(m.caches);
  auto set_bytes = [&](const CacheLevel& level, int threads) {
    return std::min(level_working_set_bytes(level.capacity, level.private_level, threads,
                                            m.physical_cores, m.caches.l2),
                    3 * m.stream_array_bytes / 2);
  };
  std::vector<std::unique_ptr<StreamArrays>> shared_sets(levels.size());
  for (size_t i = 0; i < levels.size(); ++i) {
    if (levels[i].private_level) continue;
    shared_sets[i] = std::make_unique<StreamArrays>(set_bytes(levels[i], 1) / 3, max_threads);
  }
  const int64_t iterations = calibrate_count(opts.fma_seconds, 256, [](int64_t it) {
    const KernelRun run = run_fma_kernel(1, it);
    consume(run.checksum);
    return run;
  });
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
    ThreadLimits row{t, rate_stats(fma), rate_stats(triad), rate_stats(copy), {}, {}, {}};
    if (t >= 2) {
      // The price of a split: empty regions, back to back and after an idle spell, alternated
      // like triad and copy. Wall time (what a kernel waits), so a busy machine shows in it.
      time_empty_regions(t, 100);  // start the team
      std::vector<double> warm(reps), idle(reps);
      for (size_t r = 0; r < reps; ++r) {
        warm[r] = time_empty_regions(t, 2000);
        idle[r] = time_empty_regions(t, 20, kRegionIdleMs);
      }
      // The "best" of a cost is its smallest (rate_stats takes the largest of a rate).
      auto cost_stats = [](const std::vector<double>& v) {
        return RateStats{*std::min_element(v.begin(), v.end()), stats::median(v),
                         *std::max_element(v.begin(), v.end()), static_cast<int>(v.size())};
      };
      row.region_us = cost_stats(warm);
      row.region_idle_us = cost_stats(idle);
    }
    for (size_t i = 0; i < levels.size(); ++i) {
      std::unique_ptr<StreamArrays> own;
      if (!shared_sets[i]) {
        // First touched by the threads that will use it.
        own = std::make_unique<StreamArrays>(set_bytes(levels[i], t) / 3, t);
      }
      StreamArrays& set_arrays = shared_sets[i] ? *shared_sets[i] : *own;
      row.levels.push_back(
          measure_level(levels[i], set_arrays, t, reps, opts.level_seconds, own_cpus));
    }
    m.rows.push_back(std::move(row));
  }
  return m;
}

MachineLookup load_or_measure(const std::string& cache_path, const MeasureOptions& opts,
                              bool refresh, std::optional<double> load_now) {
  MachineLookup out;
  const int want = opts.max_threads > 0 ? opts.max_threads : default_threads();
  if (!refresh && !cache_path.empty()) {
    std::string warning;
    std::optional<MachinePeak> cached =
        read_machine_cache(cache_path, describe_machine().key, &warning);
    if (!warning.empty()) out.warnings.push_back(warning);
    if (cached && covers(*cached, want)) {
      out.cached_load = cached->load_avg;
      const double now = load_now ? *load_now : load_average_now();
      out.remeasured_quiet = remeasure_when_quiet(cached->load_avg, now);
      if (!out.remeasured_quiet) {
        out.peak = std::move(*cached);
        out.from_cache = true;
        return out;
      }
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
  const bool quiet_now =
      cached && allow_measure && remeasure_when_quiet(cached->load_avg, load_average_now());
  if (cached && !quiet_now && (covers(*cached, default_threads()) || !allow_measure)) {
    known = std::make_unique<MachinePeak>(std::move(*cached));
  } else if (allow_measure) {
    if (quiet_now) {
      std::fprintf(stderr,
                   "prism: the cached machine figures were measured under load (load average "
                   "%.2f) and the machine is quiet now: measuring them again\n",
                   cached->load_avg);
    }
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
