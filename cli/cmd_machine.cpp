// `prism machine`: this machine's limits, the roof of every roofline. CPU, caches, the SIMD
// path and flags this binary was built with, then per thread count the peak float32 FLOP/s
// (an FMA microkernel), the STREAM triad and copy bandwidths, and the ridge point; and the
// GPU's SGEMM rate and bandwidth when one is usable.
//
// Then the memory levels: the same triad on working sets that stay in L1, L2 and L3, beside
// DRAM's, each with its ridge point; the lab's %roof picks among them by working set.
//
// The figures are cached (profiler/machine.h says where and keyed by what); `--refresh`
// measures again, and so does a plain run when the cached figures were measured under load and
// the machine is quiet now. A run with --reps, --fma-ms or --stream-mib measures with those
// settings and is not cached, so a quick or cache-sized experiment never becomes the machine's
// "peak".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/commands.h"
#include "cli/file_roles.h"
#include "cli/options.h"
#include "kernels/gpu_runtime.h"
#include "kernels/split_rule.h"
#include "kernels/types.h"
#include "profiler/machine.h"
#include "profiler/output_file.h"
#include "profiler/text_table.h"

namespace prism::cli {

namespace {

// The flags, as add_options (below) declares them.
struct MachineOptions {
  int threads = 0;       // measure 1..threads; 0 = PRISM_THREADS, else all cores
  bool refresh = false;  // measure even if the cache has this build's figures
  std::string json_path;
  // Measurement settings; giving any of them measures now and does not touch the cache.
  int reps = 0;            // repetitions per figure (default 9)
  double fma_ms = 0;       // length of one FMA repetition in ms (default 50)
  int64_t stream_mib = 0;  // MiB per STREAM array (default 4 x L3, 64 MiB to 1 GiB)
};

namespace prof = prism::profiler;

// What a split costs: an OpenMP region that does nothing, per thread count, the team awake and
// after an idle spell (ThreadLimits::region_us). A kernel whose work takes a few of these gains
// nothing from threads; the crossovers of kernels/cpu/parallel.h were measured where it cost
// kReferenceRegionMicros, and the split rule (kernels/split_rule.h) scales the work a thread must
// bring by the awake figure: the last column.
std::string region_section(const prof::MachinePeak& m) {
  std::string rows;
  for (const prof::ThreadLimits& t : m.rows) {
    if (t.threads < 2 || t.region_us.reps < 1) continue;
    rows += fmt::format(
        "{:>7}  {:>10.2f}  {:>17}  {:>14.1f}  {:>17}  {:>10}x\n", t.threads, t.region_us.median,
        fmt::format("{:.2f}-{:.2f}", t.region_us.best, t.region_us.worst), t.region_idle_us.median,
        fmt::format("{:.1f}-{:.1f}", t.region_idle_us.best, t.region_idle_us.worst),
        kernels::cpu::work_scale_for(t.region_us.median));
  }
  if (rows.empty()) return "";
  return fmt::format(
      "\nparallel region (fork, barrier and join of an `omp parallel` that does nothing; wall "
      "time, us):\n"
      "threads  team awake  (range)            after {:.0f} ms idle  (range)  work/thread\n{}"
      "read: a kernel gains from a second thread only when its work is several times the awake "
      "figure;\n  the idle one is what a region pays when the team has gone to sleep "
      "(OpenMP's wait policy).\n"
      "  work/thread: what each thread must bring before a kernel splits, in chunks (or matmul "
      "thresholds),\n  the awake figure over the {:.2f} us the chunk sizes were measured at, "
      "rounded up, at least 1\n  (kernels/split_rule.h; the commands that run kernels use it).\n",
      prof::kRegionIdleMs, rows, kernels::cpu::kReferenceRegionMicros);
}

// Binary units for cache and array sizes, the way caches are specified.
std::string mib_or_kib(int64_t bytes) {
  if (bytes <= 0) return "?";
  if (bytes >= (int64_t{1} << 20) && bytes % (int64_t{1} << 20) == 0) {
    return fmt::format("{} MiB", bytes >> 20);
  }
  if (bytes >= (int64_t{1} << 20)) return fmt::format("{:.1f} MiB", bytes / 1048576.0);
  return fmt::format("{} KiB", bytes >> 10);
}

std::string caches_line(const prof::CacheSizes& c) {
  if (c.l1d == 0 && c.l2 == 0 && c.l3 == 0) return "unknown";
  return fmt::format("L1d {}, L2 {}, L3 {} (per core, per core, shared)", mib_or_kib(c.l1d),
                     mib_or_kib(c.l2), mib_or_kib(c.l3));
}

// "25.1 (24.0-25.4)": median and the range of the repetitions.
std::string spread(const prof::RateStats& r) {
  return fmt::format("{:.1f} ({:.1f}-{:.1f})", r.median, r.worst, r.best);
}

std::string table(const prof::MachinePeak& m) {
  std::vector<prof::text::Column> cols = {
      {"threads", false, {}},      {"peak GFLOP/s", false, {}},   {"median (range)", false, {}},
      {"triad GB/s", false, {}},   {"median (range)", false, {}}, {"copy GB/s", false, {}},
      {"ridge FLOP/B", false, {}},
  };
  for (const prof::ThreadLimits& r : m.rows) {
    cols[0].cells.push_back(std::to_string(r.threads));
    cols[1].cells.push_back(fmt::format("{:.1f}", r.fma_gflops.best));
    cols[2].cells.push_back(spread(r.fma_gflops));
    cols[3].cells.push_back(fmt::format("{:.1f}", r.triad_gbps.best));
    cols[4].cells.push_back(spread(r.triad_gbps));
    cols[5].cells.push_back(fmt::format("{:.1f}", r.copy_gbps.best));
    cols[6].cells.push_back(fmt::format("{:.2f}", m.ridge_flop_per_byte(r.threads)));
  }
  return prof::text::render(cols);
}

// What a level's working set may be at `threads` threads (MachinePeak::level_roofs): "48 KiB",
// "2 x 48 KiB" for a private level on 2 cores, "480 MiB shared".
std::string capacity_cell(const prof::MachinePeak& m, const std::string& level, int threads) {
  if (level == "L3") return mib_or_kib(m.caches.l3) + " shared";
  const int64_t per_core = level == "L1" ? m.caches.l1d : m.caches.l2;
  const int cores = std::max(1, std::min(threads, m.physical_cores));
  return cores == 1 ? mib_or_kib(per_core) : fmt::format("{} x {}", cores, mib_or_kib(per_core));
}

// One row per level and thread count: L1, L2, L3 (those measured), then DRAM (the triad above).
std::string levels_table(const prof::MachinePeak& m) {
  std::vector<prof::text::Column> cols = {
      {"level", true, {}},         {"capacity", true, {}}, {"threads", false, {}},
      {"working set", false, {}},  {"GB/s", false, {}},    {"median (range)", false, {}},
      {"ridge FLOP/B", false, {}},
  };
  auto add = [&](const std::string& level, const std::string& capacity, int threads,
                 int64_t working_set, const prof::RateStats& r) {
    cols[0].cells.push_back(level);
    cols[1].cells.push_back(capacity);
    cols[2].cells.push_back(std::to_string(threads));
    cols[3].cells.push_back(mib_or_kib(working_set));
    cols[4].cells.push_back(fmt::format("{:.1f}", r.best));
    cols[5].cells.push_back(spread(r));
    const double gflops = m.peak_gflops(threads);
    cols[6].cells.push_back(r.best > 0 ? fmt::format("{:.2f}", gflops / r.best) : "-");
  };
  for (const char* level : {"L1", "L2", "L3"}) {
    for (const prof::ThreadLimits& row : m.rows) {
      for (const prof::LevelRate& l : row.levels) {
        if (l.level == level) {
          add(l.level, capacity_cell(m, l.level, row.threads), row.threads, l.working_set_bytes,
              l.gbps);
        }
      }
    }
  }
  for (const prof::ThreadLimits& row : m.rows) {
    add("DRAM", "-", row.threads, 3 * m.stream_array_bytes, row.triad_gbps);
  }
  return prof::text::render(cols);
}

bool has_levels(const prof::MachinePeak& m) {
  for (const prof::ThreadLimits& row : m.rows) {
    if (!row.levels.empty()) return true;
  }
  return false;
}

// Whether a level's set was capped below half its capacity (small --stream-mib arrays: the set
// must stay below DRAM's), so that it may not fill the level it is named after.
bool capped_levels(const prof::MachinePeak& m) {
  for (const prof::ThreadLimits& row : m.rows) {
    for (const prof::LevelRate& l : row.levels) {
      const bool shared = l.level == "L3";
      const int64_t capacity = l.level == "L1"   ? m.caches.l1d
                               : l.level == "L2" ? m.caches.l2
                                                 : m.caches.l3;
      const int64_t full = prof::level_working_set_bytes(capacity, !shared, row.threads,
                                                         m.physical_cores, m.caches.l2);
      // (The arrays round down to whole doubles: a few bytes short is not a cap.)
      if (l.working_set_bytes + 64 * row.threads < full) return true;
    }
  }
  return false;
}

// A cache level whose triad is hardly faster than the next level's (or DRAM's): its working set
// did not stay in it. One note per level, at the first thread count where it happens.
std::string level_warnings(const prof::MachinePeak& m) {
  constexpr double kClearlyFaster = 1.25;
  std::string out;
  std::vector<std::string> noted;
  for (const prof::ThreadLimits& row : m.rows) {
    for (size_t i = 0; i < row.levels.size(); ++i) {
      const prof::LevelRate& l = row.levels[i];
      const bool last = i + 1 == row.levels.size();
      const std::string outer = last ? "DRAM" : row.levels[i + 1].level;
      const double outer_gbps = last ? row.triad_gbps.best : row.levels[i + 1].gbps.best;
      if (l.gbps.best > kClearlyFaster * outer_gbps ||
          std::find(noted.begin(), noted.end(), l.level) != noted.end()) {
        continue;
      }
      noted.push_back(l.level);
      out += fmt::format(
          "note: {0}'s triad ({1:.1f} GB/s) is within 25% of {2}'s ({3:.1f}) at {4} thread{5}: "
          "its {6} set did not\n  stay in {0}. The size the system reports may be more than this "
          "process gets (a virtual\n  machine may see its host's whole L3); working sets the lab "
          "maps to {0} then get a roof near {2}'s.\n",
          l.level, l.gbps.best, outer, outer_gbps, row.threads, row.threads == 1 ? "" : "s",
          mib_or_kib(l.working_set_bytes));
    }
  }
  return out;
}

void print(const prof::MachinePeak& m, const std::string& source) {
  std::string out;
  out +=
      fmt::format("CPU:       {} ({} core{}, {} logical CPU{})\n", m.cpu_model, m.physical_cores,
                  m.physical_cores == 1 ? "" : "s", m.logical_cpus, m.logical_cpus == 1 ? "" : "s");
  out += fmt::format("caches:    {}\n", caches_line(m.caches));
  out += fmt::format("SIMD:      {}\n", m.simd);
  out += fmt::format("compiler:  {}\n", m.compiler);
  out += fmt::format("flags:     {}\n", m.flags.empty() ? "(none)" : m.flags);
  out += fmt::format("measured:  {} ({})\n", m.measured_at, source);
  if (m.load_avg >= 0) {
    out += fmt::format("load:      {:.2f} (1-minute load average before measuring)\n", m.load_avg);
  }
  if (!m.clock.empty()) out += fmt::format("clock:     {}\n", m.clock);
  const int reps = m.rows.empty() ? 0 : m.rows.front().fma_gflops.reps;
  out += fmt::format("STREAM:    3 arrays of {} doubles ({} each)\n\n", m.stream_array_bytes / 8,
                     mib_or_kib(m.stream_array_bytes));
  out += table(m);
  out += fmt::format(
      "\npeak: the best of {} repetitions (STREAM's convention: interference only ever slows a\n"
      "  run down); the median and the range of all of them beside it.\n"
      "FMA: 2 FLOPs per float32 lane per FMA. triad a = b + s*c counts 24 bytes per element,\n"
      "  copy a = b 16 (each array once; the write-allocate read of a is not counted, as in "
      "STREAM).\n"
      "ridge: peak GFLOP/s / triad GB/s. A kernel doing fewer FLOPs per byte moved is memory "
      "bound.\n",
      reps);
  const bool under_load = m.load_avg >= prof::kBusyLoad;
  const char* kUnderLoad =
      "measured under load; run `prism machine --refresh` when the machine is quiet";
  if (under_load) {
    out += fmt::format(
        "note: {}\n  (load average {:.2f}). Rates are timed on each thread's own CPU time, so "
        "the FLOP/s hold up,\n  but other processes may have used memory bandwidth. A plain "
        "`prism machine` measures again\n  by itself once the load average is below {:.0f}.\n",
        kUnderLoad, m.load_avg, prof::kBusyLoad);
  }
  if (m.stream_array_bytes < 4 * m.caches.l3) {
    out += fmt::format(
        "note: the STREAM arrays are smaller than 4 x L3 ({}): the bandwidth includes cache "
        "hits.\n",
        mib_or_kib(4 * m.caches.l3));
  }
  if (has_levels(m)) {
    out += fmt::format("\nmemory levels{}:\n", under_load ? fmt::format(" ({})", kUnderLoad) : "");
    out += levels_table(m);
    out +=
        "\nread: a working set up to a level's capacity (per core x the cores in use for L1 and "
        "L2, "
        "the whole L3)\n  is served at about that level's GB/s; the lab's %roof names the level "
        "an op's bytes fit in and uses\n  its GB/s. Each figure is the triad on a set of half "
        "the level's capacity (the L3's at most 4 x the L2s'),\n  so the set stays there; DRAM's "
        "is the STREAM triad above. "
        "ridge: peak GFLOP/s / the level's GB/s.\n";
    out += level_warnings(m);
    if (capped_levels(m)) {
      out +=
          "note: some sets are smaller than half their level (capped at half the STREAM arrays' "
          "set, --stream-mib):\n  those figures may include the faster level above.\n";
    }
  } else {
    out += "\nmemory levels: cache sizes unknown, so only DRAM's roof is known.\n";
  }
  out += region_section(m);
  std::fputs(out.c_str(), stdout);
}

// The GPU's section: what the device is, and its measured SGEMM rate and triad bandwidth (not
// cached: a GPU machine is usually lent, and the measurement takes a second). Without a usable
// GPU, one line saying why.
std::string gpu_section(const kernels::gpu::GpuPeaks* p) {
  namespace gpu = kernels::gpu;
  if (!p) return fmt::format("\nGPU:       none usable ({})\n", gpu::unavailable_reason());
  const gpu::DeviceInfo d = gpu::device_info();
  std::string out = fmt::format(
      "\nGPU:       {} (compute {}.{}, {} SMs at up to {:.2f} GHz, {:.1f} GiB, L2 {})\n", d.name,
      d.compute_major, d.compute_minor, d.sm_count, d.sm_clock_ghz,
      static_cast<double>(d.total_bytes) / (1 << 30), mib_or_kib(d.l2_bytes));
  out += fmt::format("driver:    {}.{}, runtime {}.{}\n", d.driver_version / 1000,
                     d.driver_version % 1000 / 10, d.runtime_version / 1000,
                     d.runtime_version % 1000 / 10);
  out += fmt::format(
      "SGEMM:     {:.0f} GFLOP/s best, {:.0f} median (cuBLAS, n = {}, float32, {} reps)\n",
      p->gemm_gflops, p->gemm_gflops_median, p->gemm_n, p->reps);
  out += fmt::format("triad:     {:.0f} GB/s best, {:.0f} median (3 arrays of {}, 12 B/element)\n",
                     p->triad_gbps, p->triad_gbps_median, mib_or_kib(p->triad_bytes));
  return out;
}

void write_json(const std::string& path, const prof::MachinePeak& m,
                const kernels::gpu::GpuPeaks* g) {
  if (!g) return prof::write_text_file(path, prof::machine_to_json(m));
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(prof::machine_to_json(m));
  j["gpu"] = {{"name", kernels::gpu::device_info().name},
              {"sgemm_n", g->gemm_n},
              {"sgemm_gflops", g->gemm_gflops},
              {"sgemm_gflops_median", g->gemm_gflops_median},
              {"triad_bytes", g->triad_bytes},
              {"triad_gbps", g->triad_gbps},
              {"triad_gbps_median", g->triad_gbps_median},
              {"reps", g->reps}};
  prof::write_text_file(path, j.dump(2) + "\n");
}

int run_machine(const MachineOptions& o) {
  if (!o.json_path.empty()) check_writable(o.json_path, "machine JSON");
  prof::MeasureOptions measure;
  measure.max_threads = o.threads > 0 ? o.threads : max_threads();
  const bool custom = o.reps > 0 || o.fma_ms > 0 || o.stream_mib > 0;
  if (o.reps > 0) measure.repetitions = o.reps;
  if (o.fma_ms > 0) measure.fma_seconds = o.fma_ms * 1e-3;
  if (o.stream_mib > 0) measure.stream_array_bytes = o.stream_mib << 20;

  const std::string cache = prof::default_machine_cache_path();
  prof::MachinePeak peak;
  std::string source;
  if (custom) {
    std::fprintf(stderr, "measuring (with the given settings; not cached)...\n");
    peak = prof::measure_machine(measure);
    source = "measured now, not cached: --reps, --fma-ms or --stream-mib given";
  } else {
    const std::string where = cache.empty() ? "no cache: set PRISM_MACHINE_CACHE or HOME" : cache;
    const auto cached = prof::read_machine_cache(cache, prof::describe_machine().key);
    // One reading of the load for the message and the decision, so they agree.
    const double load_now = prof::load_average_now();
    const bool quiet_again = !o.refresh && cached &&
                             static_cast<int>(cached->rows.size()) >= measure.max_threads &&
                             prof::remeasure_when_quiet(cached->load_avg, load_now);
    if (quiet_again) {
      std::fprintf(stderr,
                   "the cached figures were measured under load (load average %.2f) and the "
                   "machine is quiet now (%.2f): measuring again...\n",
                   cached->load_avg, load_now);
    } else if (o.refresh || !cached ||
               static_cast<int>(cached->rows.size()) < measure.max_threads) {
      std::fprintf(stderr, "measuring (a few seconds; run on a quiet machine)...\n");
    }
    prof::MachineLookup lookup = prof::load_or_measure(cache, measure, o.refresh, load_now);
    for (const std::string& w : lookup.warnings) {
      std::fprintf(stderr, "prism: warning: %s\n", w.c_str());
    }
    peak = std::move(lookup.peak);
    if (lookup.from_cache) {
      source = fmt::format("cached in {}; --refresh measures again", where);
    } else {
      source = lookup.saved ? fmt::format("measured now, cached in {}", where)
                            : std::string("measured now, not cached");
      if (lookup.remeasured_quiet) {
        source += fmt::format(
            "; the cached figures were measured under load ({:.2f}) and the machine is quiet now",
            lookup.cached_load);
      }
    }
  }
  // A cached entry can cover more thread counts than were asked for: show the ones asked.
  if (static_cast<int>(peak.rows.size()) > measure.max_threads) {
    peak.rows.resize(static_cast<size_t>(measure.max_threads));
  }
  print(peak, source);
  std::optional<kernels::gpu::GpuPeaks> gpu;
  if (kernels::gpu::available()) {
    std::fprintf(stderr, "measuring the GPU (cuBLAS SGEMM and a triad, about a second)...\n");
    gpu = kernels::gpu::measure_peaks(measure.repetitions);
  }
  std::fputs(gpu_section(gpu ? &*gpu : nullptr).c_str(), stdout);
  if (!o.json_path.empty()) write_json(o.json_path, peak, gpu ? &*gpu : nullptr);
  return 0;
}

void add_options(CLI::App& cmd, MachineOptions& o) {
  cmd.add_option("--threads", o.threads,
                 "measure with 1 to N threads, N from 1 to 1024 (default: PRISM_THREADS, else "
                 "all cores)")
      ->check(whole_number(1, 1024));
  cmd.add_flag("--refresh", o.refresh, "measure again even if this build's figures are cached");
  cmd.add_option("--json", o.json_path, "also write the figures as JSON")
      ->type_name("FILE")
      ->check(file_name());
  cmd.add_option("--reps", o.reps, "repetitions of each figure, 1 to 1000 (default 9; not cached)")
      ->check(whole_number(1, 1000));
  cmd.add_option("--fma-ms", o.fma_ms,
                 "length of one FMA repetition in ms (default 50; not cached)")
      ->check(positive_number(1e6));
  cmd.add_option("--stream-mib", o.stream_mib,
                 "MiB per STREAM array, 1 to 65536 (default 4 x L3; not cached)")
      ->check(whole_number(1, 65536));
}

Action setup(CLI::App& cmd) {
  auto o = std::make_shared<MachineOptions>();
  add_options(cmd, *o);
  return {.run = [o] { return run_machine(*o); },
          .files = [o](CommandFiles& f) { f.output("--json", o->json_path); }};
}

const RegisteredCommand registered(
    {.order = 500,
     .name = "machine",
     .help = "this machine's peak FLOP/s and memory bandwidth per thread count (cached)",
     .setup = &setup});

}  // namespace

}  // namespace prism::cli
