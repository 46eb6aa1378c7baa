// `prism lab OP`: validate every kernel variant of an op against the reference, then time them
// side by side (kernels/lab/lab.h has the method; this file is the command around it).
//
// The machine's peaks for "% of peak" come from `prism machine`'s cache; if there is none the
// lab measures them once (a few seconds) unless --no-peak is given. With --device cuda the lab
// times the CUDA variants (each checked against the CPU kernel) and measures the GPU's own roof
// instead: cuBLAS SGEMM and a triad (about a second), not datasheet figures.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "cli/commands.h"
#include "cli/file_roles.h"
#include "cli/options.h"
#include "kernels/gpu_runtime.h"
#include "kernels/lab/lab.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/registry.h"
#include "profiler/machine.h"
#include "profiler/output_file.h"

namespace prism::cli {

namespace {

// The flags, as add_options (below) declares them.
struct LabCliOptions {
  std::string op;
  bool list = false;                  // --list: the ops the lab knows
  std::vector<std::string> sizes;     // empty: the op's defaults
  std::vector<std::string> variants;  // empty: all
  std::vector<int> threads{1};        // each variant is timed at every count; the first is the base
  int repetitions = 11;
  double min_sample_ms = 20;
  double max_seconds = 20;
  uint64_t seed = 1;
  bool no_peak = false;        // do not look up (or measure) the machine's peaks
  std::string device = "cpu";  // cpu | cuda (the CUDA variants, checked against the CPU kernel)
  bool counters = false;       // --counters: hardware counters per variant
  std::string json_path;
};

// Listing needs no GPU: it reads the registry, where the CUDA kernels are once the backend is
// loaded (which the cuda listing does; the cpu one leaves it alone).
std::string list_text(Device device) {
  const bool cuda_loaded = device == Device::cuda && kernels::gpu::load_backend();
  std::string out = device == Device::cuda
                        ? "ops the lab knows (prism lab OP --device cuda; sizes as shown; CUDA "
                          "variants):\n"
                        : "ops the lab knows (prism lab OP; sizes as shown):\n";
  for (const opinfo::OpInfo& op : opinfo::op_infos()) {
    const kernels::OpKernels* k = kernels::registry().find(op.op, device);
    std::string variants;
    if (k) {
      for (const auto& e : k->entries()) variants += (variants.empty() ? "" : ", ") + e.name;
    }
    if (variants.empty() && device == Device::cuda) variants = "(none on cuda)";
    out += "  " + op.op + std::string(op.op.size() < 24 ? 24 - op.op.size() : 1, ' ') + op.summary +
           "\n" + std::string(26, ' ') + "size: " + op.size_syntax + "\n" + std::string(26, ' ') +
           "variants: " + variants + "\n";
  }
  if (device == Device::cuda && !kernels::gpu::built()) {
    out += "(this prism was built without CUDA: no CUDA variants)\n";
  } else if (device == Device::cuda && !cuda_loaded) {
    out += "(no CUDA variants: " + kernels::gpu::unavailable_reason() + ")\n";
  }
  return out;
}

// The op and its sizes: usage errors (exit 2), judged before the device is.
const opinfo::OpInfo& check_op(const LabCliOptions& o) {
  const opinfo::OpInfo* op = nullptr;
  try {
    op = &opinfo::find_op_info(o.op);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  // Making each case once checks its syntax and that its buffers fit in memory (case_memory.h),
  // so a size too large is refused here with the figures, before anything is timed.
  for (const std::string& s : o.sizes) {
    try {
      op->make(s, 1);
    } catch (const Error& e) {
      throw UsageError("lab " + o.op + " --sizes " + s + ": " + e.what());
    }
  }
  return *op;
}

// The variants, against the device's registry: usage errors too (exit 2).
void check_variants(const LabCliOptions& o, const opinfo::OpInfo& op, Device device) {
  try {
    const kernels::OpKernels& k = kernels::registry().at(op.op, device);
    for (const std::string& v : o.variants) {
      if (!k.at(v).has(DType::f32)) {
        throw Error("variant '" + v + "' of " + op.op + " has no float32 kernel");
      }
    }
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

int run_lab(const LabCliOptions& o) {
  if (o.list) {
    std::fputs(list_text(o.device == "cuda" ? Device::cuda : Device::cpu).c_str(), stdout);
    return 0;
  }
  if (o.op.empty()) throw UsageError("lab: name an op (prism lab --list shows them)");
  const opinfo::OpInfo& op = check_op(o);
  // cuda without a usable GPU is a run-time Error saying why (exit 1), not a usage error.
  if (o.device == "cuda" && o.threads.size() > 1) {
    // The threads run only the CPU baseline there, which is not timed.
    throw UsageError("lab --device cuda --threads: give one count, not a list");
  }
  if (o.counters && o.device == "cuda") {
    throw UsageError("lab --counters counts CPU events; the CUDA variants run on the GPU");
  }
  const Device device = device_from_flag(o.device);
  check_variants(o, op, device);
  if (!o.json_path.empty()) check_writable(o.json_path, "JSON");

  lab::LabOptions opts;
  opts.op = o.op;
  opts.device = device;
  opts.sizes = o.sizes;
  opts.variants = o.variants;
  opts.threads = o.threads.front();
  opts.thread_counts = o.threads;
  opts.repetitions = o.repetitions;
  opts.min_sample_ms = o.min_sample_ms;
  opts.max_variant_s = o.max_seconds;
  opts.seed = o.seed;
  opts.counters = o.counters;  // event counters over the timed samples (lab.h, 4.)
  if (!o.no_peak && device == Device::cuda) {
    // The GPU's practical roof, measured now (not cached: a GPU machine is usually lent). The
    // report labels these figures so nobody reads %peak as a fraction of the datasheet peak.
    std::fprintf(stderr, "measuring the GPU (cuBLAS SGEMM and a triad, about a second)...\n");
    const kernels::gpu::GpuPeaks peaks = kernels::gpu::measure_peaks(5);
    kernels::gpu::empty_cache();  // the measurement's large buffers, back to the driver
    opts.peak_gflops = peaks.gemm_gflops;
    opts.peak_gbs = peaks.triad_gbps;
  } else if (!o.no_peak) {
    // The CPU's peaks depend on the thread count: each row's %peak uses its own, and its %roof
    // the bandwidth of the cache level (or DRAM) its working set fits in at that count.
    if (const profiler::MachinePeak* peak = profiler::machine_peak(true)) {
      for (const int n : o.threads) {
        opts.peaks_per_count.push_back(
            {peak->peak_gflops(n), peak->peak_gbps(n), peak->level_roofs(n)});
      }
      opts.peak_gflops = opts.peaks_per_count.front().gflops;
      opts.peak_gbs = opts.peaks_per_count.front().gbs;
    }
  }
  const lab::LabResult result = lab::run_lab(opts);
  std::fputs(lab::format_lab(result).c_str(), stdout);
  if (!o.json_path.empty()) {
    profiler::write_text_file(o.json_path, lab::lab_json(result));
    std::printf("wrote %s\n", o.json_path.c_str());
  }
  // A variant that fails validation is a finding, not a crash: report it and exit 1 so scripts
  // (and the exercises' checker) notice.
  for (const auto& v : result.validation) {
    if (!v.valid) return 1;
  }
  return 0;
}

void add_options(CLI::App& cmd, LabCliOptions& o) {
  cmd.add_option("op", o.op, "the op whose variants to compare, e.g. matmul (see --list)");
  cmd.add_flag("--list", o.list, "list the ops the lab knows, their sizes and variants");
  cmd.add_option("--sizes", o.sizes,
                 "sizes to time, comma-separated, e.g. 256,512,1024 or 128x784x256:nt "
                 "(default: the op's own; --list shows the syntax)")
      ->delimiter(',')
      ->type_name("SIZE,...");
  cmd.add_option("--variants", o.variants, "variants to compare (default: all registered)")
      ->delimiter(',')
      ->type_name("NAME,...");
  // One string checked as a whole (not CLI11's per-element delimiter) so duplicates are caught.
  cmd.add_option_function<std::string>(
         "--threads", [&o](const std::string& s) { o.threads = int_list(s); },
         "OpenMP threads for every variant, 1 to 1024; several, comma-separated (e.g. 1,2,4), "
         "time each variant at each count and give its speed-up over the first")
      ->check(distinct_whole_numbers(1, 1024))
      ->type_name("N,...")
      ->default_str("1");
  cmd.add_option("--reps", o.repetitions, "timed samples per variant and size, 1 to 1000")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  cmd.add_option("--min-sample-ms", o.min_sample_ms, "shortest duration of one sample")
      ->check(positive_number(1e6))
      ->capture_default_str();
  cmd.add_option("--max-seconds", o.max_seconds,
                 "skip timing a variant whose samples would take longer than this")
      ->check(positive_number(1e6))
      ->capture_default_str();
  cmd.add_option("--seed", o.seed, "seed for the random inputs")
      ->check(seed_number())
      ->capture_default_str();
  cmd.add_flag("--no-peak", o.no_peak, "do not look up or measure the machine's peaks");
  cmd.add_option("--device", o.device,
                 "cpu, or cuda: time the CUDA variants, each checked against the CPU kernel "
                 "(needs a GPU; with --list, shows the CUDA variants)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd.add_flag("--counters", o.counters,
               "hardware counters per variant (cycles, instructions, cache and branch misses), "
               "where the machine allows them, on the calling thread only (not OpenMP workers)");
  cmd.add_option("--json", o.json_path, "write one row per variant and size as JSON")
      ->type_name("FILE")
      ->check(file_name());
}

Action setup(CLI::App& cmd) {
  auto o = std::make_shared<LabCliOptions>();
  add_options(cmd, *o);
  return {.run = [o] { return run_lab(*o); },
          .files = [o](CommandFiles& f) { f.output("--json", o->json_path); }};
}

const RegisteredCommand registered(
    {.order = 600,
     .name = "lab",
     .help = "validate every kernel variant of an op, then time them side by side",
     .runs_kernels = true,
     .setup = &setup});

}  // namespace

}  // namespace prism::cli
