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
// Cache levels. The same triad runs on a working set sized to stay in L1, in L2 and in L3: half
// of the level's capacity, shared out over the threads (per core x the cores in use for the
// private L1 and L2, the whole L3 for the shared one). Half, because a set the size of the
// level does not stay in it: the stack, the page tables and the cache's limited associativity
// (a line can go only to one of 8 to 16 ways of its set) evict some of it, and an inclusive
// L3 also keeps a copy of what the levels above hold; while half of a level is still far larger
// than the level above it (L2/2 >> L1), so the set does not sit one level higher. The shared L3
// is the exception: its set is at most 4 times what the private L2s of all cores hold, past
// them but far below what the system says the L3 is. A server's L3 is shared with every other
// process and, on a virtual machine, reported whole though the host's other tenants use most of
// it: on the 2-vCPU VM of docs/PERFORMANCE.md (a 480 MiB L3 reported), a 240 MiB set measured
// DRAM's 14.5 GB/s while the lab's relu moved 28 GB/s at 8 and 33 MB. (When even that set
// spills, its figure comes out near DRAM's and `prism machine` notes it.) Each thread repeats the
// triad over its own share enough times to run level_seconds, and the rate counts 24 bytes per
// element per pass, as STREAM does: within L1 that is the traffic exactly (two loads and a store, a
// store hit needs no read), beyond it the write-allocate read of a from the next level is not
// counted. The triad rather than a read-only sum, because the lab's ops read and write, as the
// triad does, and one kernel for every level (DRAM included) makes their figures comparable.
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

// A cache level's triad bandwidth at one thread count.
struct LevelRate {
  std::string level;              // "L1", "L2" or "L3"
  int64_t working_set_bytes = 0;  // the 3 arrays, all threads together
  RateStats gbps;                 // a = b + s c on them, 24 bytes per element per pass, GB/s
};

// The limits measured with `threads` OpenMP threads.
struct ThreadLimits {
  int threads = 0;
  RateStats fma_gflops;  // float32 FMA throughput, GFLOP/s
  RateStats triad_gbps;  // a = b + s c, 3 arrays counted, GB/s (1e9 bytes); arrays beyond L3
  RateStats copy_gbps;   // a = b, 2 arrays counted, GB/s
  // The same triad on sets that stay in each cache level, innermost first; only the levels
  // whose size is known (CacheSizes).
  std::vector<LevelRate> levels = {};
  // What a kernel pays to split its work over `threads` threads: the wall time of one
  // `#pragma omp parallel` region doing nothing but one store per thread (fork, barrier, join),
  // in microseconds, with the team awake (regions back to back, as a training step's ops come)
  // and after kRegionIdleMs of idling (the team has gone to sleep: a region then also pays for
  // waking it). All zero (reps 0) at 1 thread, and where not measured.
  RateStats region_us = {};
  RateStats region_idle_us = {};
};

// The idle time before each region of ThreadLimits::region_idle_us.
inline constexpr double kRegionIdleMs = 2.0;

// Data cache sizes in bytes; 0 = unknown. l3 is the last-level cache (shared by its cores).
struct CacheSizes {
  int64_t l1d = 0;
  int64_t l2 = 0;
  int64_t l3 = 0;
};

// A load average at or above this when measuring: other processes kept about a core busy.
inline constexpr double kBusyLoad = 1.0;

// The memory level a working set is served from and that level's measured bandwidth, GB/s.
struct Roof {
  std::string level;  // "L1", "L2", "L3" or "DRAM"
  double gbps = 0;
};

// A cache level as a roof at one thread count: working sets of up to `capacity_bytes` fit in it.
struct LevelRoof {
  std::string level;  // "L1", "L2" or "L3"
  double capacity_bytes = 0;
  double gbps = 0;
};

// How a working set maps to a level: the first of `levels` (innermost first) whose capacity
// holds it, else {"DRAM", dram_gbps}. A set exactly the size of a level counts as fitting: the
// lab's working sets are each input read once and the output written once, nothing else, and
// a set just past a boundary is still partly served by the faster level, so near a boundary
// either roof is approximate. Levels with no capacity or no bandwidth are skipped.
Roof roof_among(const std::vector<LevelRoof>& levels, double working_set_bytes, double dram_gbps);

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

  // The cache levels as roofs at `threads` threads (the row peak_gbps uses), innermost first.
  // Capacity: L1 and L2 are private to a core, so threads on distinct cores have
  // per-core size x min(threads, physical_cores) between them (two threads on one core's
  // hyperthreads share it); the L3 is shared, its whole size at any count. Empty when no level
  // was measured.
  std::vector<LevelRoof> level_roofs(int threads) const;
  // The memory level a working set of `bytes` fits in at `threads` threads, and its measured
  // bandwidth: "L1", "L2", "L3" or "DRAM"; {"DRAM", peak_gbps(threads)} when levels are unknown.
  // roof_among(level_roofs(threads), bytes, peak_gbps(threads)).
  Roof roof_for(int threads, double working_set_bytes) const;
  // The ridge point against that level's roof: peak_gflops / roof_for(...).gbps. 0 if unknown.
  double ridge_flop_per_byte(int threads, double working_set_bytes) const;
};

// The working set the cache-level triad uses for a level of `capacity` bytes at `threads`
// threads (see the top of this file): half the capacity the threads have between them,
// private_level ? capacity x min(threads, physical_cores) : capacity; a shared level's at most
// 4 x l2_per_core x physical_cores when l2_per_core is known (> 0). Capped at 1 GiB; and
// measure_machine caps it at half the STREAM arrays' 3 x stream_array_bytes, so DRAM's set is
// always the largest (a quick run with small arrays then measures a capped, mislabelled set:
// LevelRate::working_set_bytes records what was used).
int64_t level_working_set_bytes(int64_t capacity, bool private_level, int threads,
                                int physical_cores, int64_t l2_per_core = 0);

// Whether a cached measurement taken at load average `cached_load` should be measured again now
// that the load average is `load_now` (-1: unknown): when it was taken under load
// (>= kBusyLoad) and the machine is quiet now (known and below kBusyLoad). A busy machine now
// keeps the cached figures: measuring again would not give better ones.
bool remeasure_when_quiet(double cached_load, double load_now);
// The 1-minute load average now; -1 when unknown.
double load_average_now();

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

// The mean wall time, in microseconds, of `count` OpenMP regions of `threads` threads (>= 2)
// that do nothing but one store per thread, run back to back when idle_ms is 0, else each
// after idle_ms of sleep. Throws std::invalid_argument on a bad argument.
double time_empty_regions(int threads, int64_t count, double idle_ms = 0);

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
  // a = b + 3 c, repeated `passes` times by each thread over its share before it stops its
  // clock (a share that fits in a cache stays there between passes); work = passes * 3 * n * 8.
  KernelRun triad(int threads, int64_t passes = 1);
  KernelRun copy(int threads);  // a = b; work = 2 * n * 8 bytes

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
  double level_seconds = 0.005;    // target length of one repetition of a cache-level triad
};

// describe_machine() plus a row for every thread count from 1 to max_threads. Takes about
// max_threads * repetitions * (fma_seconds + 3 STREAM passes + 3 level_seconds) of CPU time,
// plus writing the private levels' sets at each thread count and the L3's once. Rates use
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
  bool from_cache = false;  // read from the cache file
  bool saved = false;       // measured now and written to the cache file
  // Measured again because the cached entry was taken under load and the machine is quiet now
  // (remeasure_when_quiet); cached_load is that entry's load average.
  bool remeasured_quiet = false;
  double cached_load = -1;
  std::vector<std::string> warnings;  // a corrupt cache file, a cache that cannot be written
};

// The cached entry for this build if it covers opts.max_threads, `refresh` is false and
// remeasure_when_quiet(its load, load_now) is false; else measures and stores the result (when
// `cache_path` is not ""). load_now: the load average to judge by, nullopt = load_average_now().
// Never throws over the cache file: problems with it become warnings.
MachineLookup load_or_measure(const std::string& cache_path, const MeasureOptions& opts,
                              bool refresh, std::optional<double> load_now = std::nullopt);

// The process-wide figures for the lab: read once from the default cache, measured (and
// cached) only if `allow_measure`, which also measures again a cached entry taken under load
// when the machine is quiet now (remeasure_when_quiet). nullptr when unknown and measuring is not
// allowed. Warnings go to stderr as "prism: warning: ...". Thread-safe; the first call may take
// seconds.
const MachinePeak* machine_peak(bool allow_measure);

// The wall-clock time now, in UTC, as ISO 8601 ("2026-11-25T17:03:00Z"): when a figure was
// measured (MachinePeak::measured_at) or an exercise checked (the course's progress file).
std::string utc_now_iso8601();

}  // namespace prism::profiler
