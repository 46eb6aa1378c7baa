// `prism machine`: this machine's limits, the roof of every roofline. CPU, caches, the SIMD
// path and flags this binary was built with, then per thread count the peak float32 FLOP/s
// (an FMA microkernel), the STREAM triad and copy bandwidths, and the ridge point; and the
// GPU's SGEMM rate and bandwidth when one is usable.
//
// The figures are cached (profiler/machine.h says where and keyed by what); `--refresh`
// measures again. A run with --reps, --fma-ms or --stream-mib measures with those settings and
// is not cached, so a quick or cache-sized experiment never becomes the machine's "peak".
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "kernels/gpu_runtime.h"
#include "kernels/types.h"
#include "profiler/machine.h"
#include "profiler/output_file.h"
#include "profiler/text_table.h"

namespace prism::cli {

namespace {

namespace prof = prism::profiler;

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
  if (m.load_avg >= prof::kBusyLoad) {
    out += fmt::format(
        "note: the load average was {:.2f} when measuring. Rates are timed on each thread's own "
        "CPU time,\n  so the FLOP/s hold up, but other processes may have used memory bandwidth: "
        "`prism machine\n  --refresh` on a quiet machine measures again.\n",
        m.load_avg);
  }
  if (m.stream_array_bytes < 4 * m.caches.l3) {
    out += fmt::format(
        "note: the STREAM arrays are smaller than 4 x L3 ({}): the bandwidth includes cache "
        "hits.\n",
        mib_or_kib(4 * m.caches.l3));
  }
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

}  // namespace

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
    if (o.refresh || !cached || static_cast<int>(cached->rows.size()) < measure.max_threads) {
      std::fprintf(stderr, "measuring (a few seconds; run on a quiet machine)...\n");
    }
    prof::MachineLookup lookup = prof::load_or_measure(cache, measure, o.refresh);
    for (const std::string& w : lookup.warnings) {
      std::fprintf(stderr, "prism: warning: %s\n", w.c_str());
    }
    peak = std::move(lookup.peak);
    if (lookup.from_cache) {
      source = fmt::format("cached in {}; --refresh measures again", where);
    } else {
      source = lookup.saved ? fmt::format("measured now, cached in {}", where)
                            : std::string("measured now, not cached");
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

}  // namespace prism::cli
