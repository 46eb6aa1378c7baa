// This machine's limits: the float32 FLOP/s its cores can reach and the bytes/s its memory can
// feed them, per thread count. With them a kernel's measured rate becomes "% of peak", and
// their ratio, the ridge point (FLOP per byte), says whether a kernel with a given arithmetic
// intensity is bound by compute or by memory (the roofline model).
//
// Peak FLOP/s: every thread runs a loop of independent FMAs on registers (machine_kernels.cpp);
// an FMA of w lanes counts 2 w FLOPs. Bandwidth: STREAM's triad a[i] = b[i] + s c[i] and copy
// a[i] = b[i] on double arrays much larger than the last-level cache, counting each array once
// (STREAM's convention: the write-allocate read of a, which a normal store also causes, is real
// traffic that is not counted, so the memory bus moves up to 4/3 of the triad figure).
//
// Each rate is work over the CPU time of the threads that did it (CLOCK_THREAD_CPUTIME_ID),
// summed over threads: on a machine shared with other processes the wall time includes the
// slices the scheduler gave to them, and a wall-clock figure can come out 5x low, while the
// CPU-time figure stays within a few percent. Its one assumption: the threads of a run share
// the memory bus as they would running together. Above one thread per logical CPU the threads
// must share cores, and wall time is used.
//
// Each figure is measured several times; the peak is the best repetition, as STREAM reports:
// interference only ever slows a run down, so the fastest run is the closest to what the
// hardware can do. The median and the slowest are kept for the record.
//
// Measuring takes a few seconds, so the result is cached in a JSON file keyed by CPU model,
// compiler and flags (a build with other flags measures again): PRISM_MACHINE_CACHE, else
// $XDG_CACHE_HOME/prism/machine.json, else $HOME/.cache/prism/machine.json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace prism::profiler {

// One measured rate over its repetitions.
struct RateStats {
  double best = 0;
  double median = 0;
  double worst = 0;
  int reps = 0;
};

// The limits measured with `threads` OpenMP threads.
struct ThreadLimits {
  int threads = 0;
  RateStats fma_gflops;  // float32 FMA throughput, GFLOP/s
  RateStats triad_gbps;  // a = b + s c, 3 arrays counted, GB/s (1e9 bytes)
  RateStats copy_gbps;   // a = b, 2 arrays counted, GB/s
};

// Data cache sizes in bytes; 0 = unknown. l3 is the last-level cache (shared by its cores).
struct CacheSizes {
  int64_t l1d = 0;
  int64_t l2 = 0;
  int64_t l3 = 0;
};

// A load average at or above this when measuring: other processes kept about a core busy.
inline constexpr double kBusyLoad = 1.0;

struct MachinePeak {
  // What the figures belong to (describe_machine()).
  std::string key;         // cpu_model | compiler | flags | method version
  std::string cpu_model;   // /proc/cpuinfo "model name"
  int logical_cpus = 0;    // CPUs online
  int physical_cores = 0;  // distinct (package, core) pairs; logical_cpus when unknown
  CacheSizes caches;       // sysfs, else sysconf
  std::string simd;        // the FMA microkernel compiled in (simd_level())
  std::string compiler;    // build_info.h
  std::string flags;
  // How and when they were measured.
  std::string measured_at;  // UTC, ISO 8601
  // 1-minute load average just before measuring (-1: unknown). The rates are timed on CPU
  // time, so other work barely moves the FLOP/s, but it may take memory bandwidth: above
  // kBusyLoad the bandwidths deserve a --refresh on a quieter machine.
  double load_avg = -1;
  std::string clock;               // how the rates were timed (measure_machine)
  int64_t stream_array_bytes = 0;  // bytes per STREAM array
  std::vector<ThreadLimits> rows;  // threads 1, 2, ..., N in order

  // The row measured with `threads` threads; nullptr if there is none.
  const ThreadLimits* row(int threads) const;
  // Best FMA GFLOP/s and best triad GB/s at `threads` threads. A count beyond the measured
  // ones gets the largest measured row (more threads than were measured cannot be assumed
  // faster); fewer than 1 is treated as 1. 0 when nothing was measured.
  double peak_gflops(int threads) const;
  double peak_gbps(int threads) const;
  // Ridge point of the roofline at `threads` threads: peak_gflops / peak_gbps, FLOP per byte.
  // A kernel doing fewer FLOPs per byte moved is memory bound. 0 when unknown.
  double ridge_flop_per_byte(int threads) const;
};

// ---- describing the machine (machine_info.cpp) -----------------------------------------------

// Everything but the measurement: CPU model, cores, caches, SIMD level, compiler, flags, key.
MachinePeak describe_machine();
// The SIMD path of the FMA microkernel this build compiled.
std::string simd_level();
// Default bytes per STREAM array: 4 times the last-level cache (STREAM's rule, so no array
// stays cached), at least 64 MiB, at most 1 GiB.
int64_t default_stream_array_bytes(const CacheSizes& caches);

// ---- the microkernels (machine_kernels.cpp) ------------------------------------------------

// FLOPs one thread does per iteration of the FMA loop: accumulators x lanes x 2.
int64_t fma_flops_per_iteration();

struct KernelRun {
  double seconds = 0;  // wall time of the parallel region
  double work = 0;     // FLOPs (FMA) or bytes counted (STREAM), all threads together
  // Sum over the threads of (its share of the work / the CPU time it ran), per second: the
  // rate while the threads run, which time the scheduler gives to other processes does not
  // lower (see measure_machine).
  double thread_rate = 0;
  double checksum = 0;  // a value computed from the results, so nothing is optimized away
  double wall_rate() const { return seconds > 0 ? work / seconds : 0; }  // per second
};

// `threads` threads each run `iterations` iterations of the FMA loop on their own registers.
// work = threads * iterations * fma_flops_per_iteration().
KernelRun run_fma_kernel(int threads, int64_t iterations);

// Three double arrays of `array_bytes` each (rounded down to whole elements, at least one per
// thread), first touched by `max_threads` threads with the same static split the kernels use.
class StreamArrays {
 public:
  StreamArrays(int64_t array_bytes, int max_threads);
  ~StreamArrays();
  StreamArrays(const StreamArrays&) = delete;
  StreamArrays& operator=(const StreamArrays&) = delete;
  int64_t elements() const { return n_; }
  // Each thread runs over its own contiguous share; the checksum adds the first and the last
  // element of a in every share.
  KernelRun triad(int threads);  // a = b + 3 c; work = 3 * n * 8 bytes
  KernelRun copy(int threads);   // a = b;       work = 2 * n * 8 bytes

 private:
  int64_t n_;
  double *a_, *b_, *c_;
};

// ---- measuring (machine.cpp) -----------------------------------------------------------------

struct MeasureOptions {
  int max_threads = 0;             // rows for 1..max_threads; 0 = omp_get_max_threads()
  int repetitions = 9;             // of each figure per thread count (>= 1)
  double fma_seconds = 0.05;       // target length of one FMA repetition
  int64_t stream_array_bytes = 0;  // 0 = default_stream_array_bytes(caches)
};

// describe_machine() plus a row for every thread count from 1 to max_threads. Takes about
// max_threads * repetitions * (fma_seconds + 3 STREAM passes) of CPU time. Rates use
// KernelRun::thread_rate while threads <= logical CPUs (a shared machine then still gives the
// cores' figures), wall_rate beyond (threads that must share cores). A bad option throws
// std::invalid_argument.
MachinePeak measure_machine(const MeasureOptions& opts = {});

// ---- the cache (machine_cache.cpp) -----------------------------------------------------------

// PRISM_MACHINE_CACHE, else $XDG_CACHE_HOME/prism/machine.json, else
// $HOME/.cache/prism/machine.json; "" when none of them is set.
std::string default_machine_cache_path();

// JSON text of one measurement, and back. from_json throws std::runtime_error naming what is
// missing or of the wrong type.
std::string machine_to_json(const MachinePeak& m);
MachinePeak machine_from_json(const std::string& text);

// The entry stored under `key` in the cache file at `path`. nullopt when the file or the entry
// does not exist, or when the file cannot be read or parsed; in that last case `warning` (if
// given) says why ("machine cache FILE is not valid JSON (...)").
std::optional<MachinePeak> read_machine_cache(const std::string& path, const std::string& key,
                                              std::string* warning = nullptr);
// Stores `m` under m.key, keeping the file's other entries (one per build configuration); an
// unreadable file is replaced. Creates the directory; writes a temporary file and renames it so
// a reader never sees half a file. Throws std::runtime_error naming the path on failure.
void write_machine_cache(const std::string& path, const MachinePeak& m);

struct MachineLookup {
  MachinePeak peak;
  bool from_cache = false;            // read from the cache file
  bool saved = false;                 // measured now and written to the cache file
  std::vector<std::string> warnings;  // a corrupt cache file, a cache that cannot be written
};

// The cached entry for this build if it covers opts.max_threads and `refresh` is false; else
// measures and stores the result (when `cache_path` is not ""). Never throws over the cache
// file: problems with it become warnings.
MachineLookup load_or_measure(const std::string& cache_path, const MeasureOptions& opts,
                              bool refresh);

// The process-wide figures for the lab: read once from the default cache, measured (and
// cached) only if `allow_measure`. nullptr when unknown and measuring is not allowed. Warnings
// go to stderr as "prism: warning: ...". Thread-safe; the first call may take seconds.
const MachinePeak* machine_peak(bool allow_measure);

// The wall-clock time now, in UTC, as ISO 8601 ("2026-11-25T17:03:00Z"): when a figure was
// measured (MachinePeak::measured_at) or an exercise checked (the course's progress file).
std::string utc_now_iso8601();

}  // namespace prism::profiler
