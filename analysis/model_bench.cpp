#include "analysis/model_bench.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "analysis/int8_bench.h"
#include "analysis/run_record.h"
#include "kernels/gpu_runtime.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/registry.h"
#include "nn/data/loader.h"
#include "nn/loss.h"
#include "nn/optim/make.h"
#include "nn/safetensors.h"
#include "profiler/aggregate.h"
#include "profiler/clock.h"
#include "profiler/machine.h"
#include "profiler/recorder.h"
#include "profiler/session.h"
#include "tensor/autocast.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tensor/storage.h"

namespace prism::analysis {

namespace {

constexpr int64_t kMaxBatch = 1'000'000;

// One timed call, in ns (the workload waits for the GPU itself).
int64_t timed_call(const std::function<void()>& call, Device) {
  const int64_t t0 = profiler::now_ns();
  call();
  return profiler::now_ns() - t0;
}

// The timed stretch: `iters` calls, or calls until `duration_s` has passed (at least
// `min_iters`). One clock read per call boundary: the end of one call is the start of the
// next, so the harness adds one clock read and one store per call (measure_harness_ns).
// `call_ns_estimate` (a warm call's time) sizes the sample buffer up front and its pages are
// touched before timing (filled with zeros), so that neither a growing vector copying itself
// nor a first-touch page fault lands inside a timed call.
std::vector<double> time_calls(const std::function<void()>& call, const BenchOptions& o,
                               double call_ns_estimate) {
  const int64_t budget_ns = static_cast<int64_t>(o.duration_s * 1e9);
  const double expected = o.iters > 0 ? static_cast<double>(o.iters)
                                      : 1.25 * o.duration_s * 1e9 / std::max(call_ns_estimate, 1.0);
  std::vector<double> samples(static_cast<size_t>(std::clamp(expected, 16.0, 5e7)), 0.0);
  size_t n = 0;
  const int64_t start = profiler::now_ns();
  int64_t t = start;
  for (int64_t i = 0;; ++i) {
    if (o.iters > 0 ? i >= o.iters : (i >= o.min_iters && t - start >= budget_ns)) break;
    call();
    const int64_t t1 = profiler::now_ns();
    if (n < samples.size()) {
      samples[n] = static_cast<double>(t1 - t);
    } else {
      samples.push_back(static_cast<double>(t1 - t));  // a slower machine than estimated
    }
    ++n;
    t = t1;
  }
  samples.resize(n);
  return samples;
}

OpPerCall op_per_call(const profiler::OpRow& r, double calls) {
  OpPerCall o;
  o.name = r.name;
  o.phase = profiler::phase_name(r.phase);
  o.variant = r.variant;
  o.grad_of = r.grad_of;
  o.calls = static_cast<double>(r.calls) / calls;
  o.self_ns = static_cast<double>(r.self_ns) / calls;
  o.flops = static_cast<double>(r.cost.flops) / calls;
  o.bytes = static_cast<double>(r.cost.bytes) / calls;
  o.allocs = static_cast<double>(r.allocs) / calls;
  o.alloc_bytes = static_cast<double>(r.alloc_bytes) / calls;
  o.event_mask = r.counters.mask;  // 0 unless the window counted events
  for (int i = 0; i < profiler::kNumCounters; ++i) {
    o.events[i] = static_cast<double>(r.counters.value[i]) / calls;
  }
  return o;
}

// Exact per-call counters from a window of `calls` identical calls.
CallCounters counters_per_call(const std::vector<profiler::OpRow>& rows, int64_t calls) {
  CallCounters total;
  for (const profiler::OpRow& r : rows) {
    total.flops = profiler::saturating_add(total.flops, r.cost.flops);
    total.macs = profiler::saturating_add(total.macs, r.cost.macs);
    total.bytes = profiler::saturating_add(total.bytes, r.cost.bytes);
    total.allocs += r.allocs;
    total.alloc_bytes = profiler::saturating_add(total.alloc_bytes, r.alloc_bytes);
  }
  return {total.flops / calls, total.macs / calls, total.bytes / calls, total.allocs / calls,
          total.alloc_bytes / calls};
}

// The run's thread count; fills the machine's fingerprint and, when the options ask, the
// environment check (load, frequency scaling) that bench and --model-off both report.
int describe_machine(const BenchOptions& o, Fingerprint& fp, Environment& env) {
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  const std::string device_label =
      o.device == Device::cuda ? kernels::gpu::device_info().name : "cpu";
  fp = fingerprint(threads, device_label);
  if (o.check_environment) env = check_environment(threads, fp.physical_cores, fp.logical_cpus);
  return threads;
}

}  // namespace

int64_t dry_run_peak_bytes(const BenchOptions& o, int64_t batch) {
  constexpr int kMeta = static_cast<int>(Device::meta);  // the memory tracker's device index
  const int64_t live_before = profiler::memory_stats(kMeta).live_bytes;
  profiler::reset_peak(kMeta);
  {
    Workload w(o.model, o.mode, o.model_options, Device::meta, o.seed);
    w.set_batch(batch, o.seed);
    w.call();
  }
  return profiler::memory_stats(kMeta).peak_bytes - live_before;
}

int64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<int64_t>(pages) * size : 0;
}

void check_bench_options(const BenchOptions& o) {
  if (o.batches.empty() && o.qps.empty()) throw Error("bench: no batch size given");
  for (size_t i = 0; i < o.batches.size(); ++i) {
    const int64_t b = o.batches[i];
    if (b < 1 || b > kMaxBatch) {
      throw Error(fmt::format("bench: batch size {} is not in 1..{}", b, kMaxBatch));
    }
    // A size given twice would be measured twice and printed as two rows of one batch.
    if (std::find(o.batches.begin(), o.batches.begin() + static_cast<std::ptrdiff_t>(i), b) !=
        o.batches.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw Error(fmt::format("bench: batch size {} is given twice", b));
    }
  }
  if (o.warmup < 0) throw Error("bench: warm-up calls must be 0 or more");
  if (!(o.duration_s > 0) || !std::isfinite(o.duration_s)) {
    throw Error("bench: the duration must be a positive number of seconds");
  }
  if (o.iters < 0 || o.min_iters < 1) throw Error("bench: the call counts must be positive");
  if (o.profile_calls < 1) throw Error("bench: the profiled window needs at least one call");
  if (!o.qps.empty()) {
    if (o.mode != BenchMode::infer) {
      throw Error("bench: the server scenario (--qps) serves inference requests: use --mode infer");
    }
    for (double r : o.qps) {
      ServerOptions s = o.server;
      s.qps = r;
      try {
        check_server_options(s);
      } catch (const std::invalid_argument& e) {
        throw Error(std::string("bench: ") + e.what());
      }
    }
  }
  nn::default_input(o.model, o.model_options);  // an unknown model is an Error naming the zoo
  check_int8_options(o);                        // analysis/int8_bench.h
}

std::string kernel_choices() {
  // The registry holds an op once per device (the CUDA backend's copies join when it loads) and
  // one choice applies to every device, so the list is grouped by op: one item per op, never
  // one per device. all() is sorted by op, so an op's devices are adjacent. Devices that run
  // differently named variants for one choice (a tag such as "naive" picks each device's own)
  // share the item: "op=a/b".
  std::string s, op;
  std::vector<std::string> names;  // the chosen variants of `op`, each once
  auto flush = [&] {
    if (names.empty()) return;
    std::string item = op + "=";
    for (size_t i = 0; i < names.size(); ++i) item += (i ? "/" : "") + names[i];
    s += (s.empty() ? "" : ",") + item;
    names.clear();
  };
  for (const kernels::OpKernels* k : kernels::registry().all()) {
    if (k->op() != op) {
      flush();
      op = k->op();
    }
    if (&k->chosen() == &k->default_entry()) continue;
    const std::string& name = k->chosen().name;
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  flush();
  return s;
}

double measure_harness_ns(int64_t calls) {
  BenchOptions o;
  o.iters = calls;
  int64_t sink = 0;
  const std::function<void()> empty = [&sink] { ++sink; };
  const std::vector<double> s = time_calls(empty, o, 0);
  double total = 0;
  for (double x : s) total += x;
  return total / static_cast<double>(s.size());
}

BenchResult run_bench(const BenchOptions& o) {
  check_bench_options(o);
  BenchResult res;
  res.options = o;
  res.baseline_rss_bytes =
      o.resident_at_start >= 0 ? o.resident_at_start : resident_memory().rss_bytes;
  res.kernels = kernel_choices();
  const int threads = describe_machine(o, res.fingerprint, res.environment);

  // Refuse what cannot fit before building anything: the tracked memory one call at the
  // largest batch needs, from a dry run on the meta device (shapes only, no data).
  const int64_t largest = o.qps.empty() ? *std::max_element(o.batches.begin(), o.batches.end())
                                        : static_cast<int64_t>(o.server.max_batch);
  const int64_t need = dry_run_peak_bytes(o, largest);
  const int64_t ram = physical_memory_bytes();
  if (o.device == Device::cpu && ram > 0 && need > ram) {
    throw Error(fmt::format(
        "bench: {} at batch {} needs about {:.1f} GiB of tensors in one {} call, more than this "
        "machine's {:.1f} GiB of memory: use a smaller --batch",
        o.model, largest, static_cast<double>(need) / (1 << 30), bench_mode_name(o.mode),
        static_cast<double>(ram) / (1 << 30)));
  }

  // The bottleneck map's settings: the machine's roofs (CPU only), the fixed cost of an op
  // call, the memory budget and where its commands point.
  BottleneckSettings map;
  map.no_peaks_reason = !o.peak ? "--no-peak" : "the map has the CPU's roofs only";
  if (o.peak && o.device == Device::cpu) {
    if (const profiler::MachinePeak* m = profiler::machine_peak(true)) {
      res.machine_peak_gflops = m->peak_gflops(threads);
      map.peaks = peaks_of(*m);
    } else {
      map.no_peaks_reason = "the machine's figures are unknown";
    }
  }
  res.harness_ns = measure_harness_ns();
  res.profiler_overhead_ns = profiler::record_overhead_ns();
  map.dispatch_ns = measure_dispatch_ns(o.mode == BenchMode::train);
  map.memory_budget_bytes =
      o.device == Device::cuda ? kernels::gpu::device_info().total_bytes : physical_memory_bytes();
  map.lever.model = o.model;
  map.lever.mode = bench_mode_name(o.mode);
  map.lever.threads = threads;
  map.lever.data = o.data ? o.data_spec : "";
  for (const opinfo::OpInfo& op : opinfo::op_infos()) map.lever.lab_ops.push_back(op.op);

  Workload w(o.model, o.mode, o.model_options, o.device, o.seed);
  res.parameters = w.model().parameter_count();
  if (o.precision == "int8") {
    use_int8_model(o, w, res);  // analysis/int8_bench.h
  } else if (!o.load_path.empty()) {
    nn::load_safetensors(w.model(), o.load_path);  // trained fp32 weights (train --save)
  }
  if (o.precision == "bf16" && o.device == Device::cuda) {
    throw Error("bench --precision bf16: the bf16 GEMMs run on the cpu only");
  }
  const nn::ModelInput& spec = w.input_spec();
  res.input = "[B";
  for (int i = 1; i < spec.shape.size(); ++i) res.input += fmt::format(",{}", spec.shape[i]);
  res.input += fmt::format("] {}", dtype_name(spec.dtype));

  // Quality probe (inference): the outputs for a seeded batch of 2, before any timing.
  if (o.mode == BenchMode::infer) {
    manual_seed(o.seed + 1);
    Tensor probe = o.data ? o.data->get_batch({0, 1 % o.data->size()}).input.to(o.device)
                          : synthetic_input(spec, 2, w.output_width()).to(o.device);
    NoGrad no_grad;
    Autocast policy(o.precision == "bf16" ? DType::bf16 : DType::f32);
    Tensor y = w.model()(probe);
    if (w.language_model()) y = y.select(1, y.size(1) - 1);  // last position's logits
    res.probe_output = y.to(Device::cpu).contiguous().to_vector<double>();
    // Weights that overflow float32 (a tampered int8 scale of 3e38, a diverged checkpoint's
    // neighbours) give outputs no reader of the result can use: stop before timing them.
    for (size_t i = 0; i < res.probe_output.size(); ++i) {
      if (!std::isfinite(res.probe_output[i])) {
        throw Error(fmt::format(
            "bench {}: the model's output on fixed inputs is not finite ({} at index {}){}: its "
            "weights overflow float32 in the forward pass",
            o.model, res.probe_output[i], i,
            o.load_path.empty() ? "" : " with the weights of " + o.load_path));
      }
    }
  }

  // --precision bf16: each model call (forward, and backward in train mode) runs under the
  // autocast policy (tensor/autocast.h); fp32 sets none. (int8 swapped the model above.)
  const bool bf16 = o.precision == "bf16";
  const std::function<void()> call = [&w, bf16] {
    if (!bf16) return w.call();
    Autocast policy(DType::bf16);
    w.call();
  };
  for (int64_t batch : o.qps.empty() ? o.batches : std::vector<int64_t>{}) {
    BatchResult br;
    br.batch = batch;
    w.set_batch(batch, o.seed + static_cast<uint64_t>(batch), o.data.get());

    const int dev = static_cast<int>(o.device);
    profiler::reset_peak(dev);
    reset_resident_peak();
    br.cold_ns = static_cast<double>(timed_call(call, o.device));
    std::vector<double> losses{w.last_loss()};
    double warm_ns = br.cold_ns;
    for (int i = 0; i < o.warmup; ++i) {
      warm_ns = static_cast<double>(timed_call(call, o.device));
      losses.push_back(w.last_loss());
    }
    if (o.mode == BenchMode::train && res.train_losses.empty()) res.train_losses = losses;
    br.samples_ns = time_calls(call, o, warm_ns);
    const profiler::MemoryStats mem = profiler::memory_stats(dev);
    br.tracked_peak_bytes = mem.peak_bytes;
    br.tracked_peak_by_role = mem.peak_by_role;
    br.peak_rss_bytes = resident_memory().peak_bytes;

    // The profiled window: exact counters and where the time goes.
    profiler::Profile profile;
    {
      profiler::SessionOptions so;
      so.counters = o.counters;  // event counts per op, on this thread (it runs every op)
      profiler::Session session(so);
      for (int i = 0; i < o.profile_calls; ++i) call();
      profile = session.stop();
    }
    const std::vector<profiler::OpRow> rows = profiler::aggregate_ops(profile);
    br.counters = counters_per_call(rows, o.profile_calls);
    for (const profiler::OpRow& r : rows) br.ops.push_back(op_per_call(r, o.profile_calls));
    if (profile.counters.enabled) {
      res.counters = profile.counters;
      res.counters.attribution =
          "per model call, over the profiled calls; an op's counts are self (nested ops' "
          "subtracted)";
      br.event_mask = profile.counters.mask;
      for (const OpPerCall& op : br.ops) {
        for (int i = 0; i < profiler::kNumCounters; ++i) br.events[i] += op.events[i];
      }
    }
    const auto cls = time_by_class(profile);
    for (size_t i = 0; i < cls.size(); ++i) {
      br.class_ns[i] = static_cast<double>(cls[i]) / o.profile_calls;
    }
    map.lever.batch = batch;
    map.tracked_peak_bytes = br.tracked_peak_bytes;
    map.activation_peak_bytes =
        br.tracked_peak_by_role[static_cast<size_t>(profiler::MemRole::activation)];
    br.bottleneck = map_bottlenecks(window_load(profile, o.profile_calls), map);

    br.latency = latency_stats(br.samples_ns);
    br.throughput = static_cast<double>(batch) * 1e9 / br.latency.mean;
    br.flops_per_sample = static_cast<double>(br.counters.flops) / static_cast<double>(batch);
    br.gflops = static_cast<double>(br.counters.flops) / br.latency.p50;
    if (res.machine_peak_gflops > 0) br.pct_peak = 100 * br.gflops / res.machine_peak_gflops;
    res.batches.push_back(std::move(br));
  }

  // The server scenario: one worker, dynamic batches of up to max_batch, one run per rate.
  if (!o.qps.empty()) {
    w.set_batch(o.server.max_batch, o.seed + 2, o.data.get());
    const std::function<void(int)> serve = [&w](int n) { w.infer_rows(n); };
    for (int n = 1; n <= o.server.max_batch; ++n) serve(n);  // warm every size: no cold call
    SteadyServerClock clock;
    for (double rate : o.qps) {
      ServerOptions so = o.server;
      so.qps = rate;
      ServerPoint p;
      p.run = run_server(so, serve, clock);
      if (!p.run.latency_ns.empty()) {
        p.latency = latency_stats(p.run.latency_ns);
        p.queue_wait = latency_stats(p.run.queue_wait_ns);
      }
      res.server.push_back(std::move(p));
    }
  }
  return res;
}

double measure_dispatch_ns(bool autograd) {
  auto measure = [](bool with_graph) {
    constexpr int kRuns = 7;
    constexpr int kCalls = 2000;
    std::optional<NoGrad> no_grad;
    if (!with_graph) no_grad.emplace();
    Tensor a = ones({1});
    if (with_graph) a.set_requires_grad();  // each call makes (and drops) an autograd node
    double best = 0;
    for (int run = 0; run < kRuns; ++run) {
      const int64_t t0 = profiler::now_ns();
      for (int i = 0; i < kCalls; ++i) {
        const Tensor c = add(a, a);
      }
      const double mean = static_cast<double>(profiler::now_ns() - t0) / kCalls;
      if (run == 0 || mean < best) best = mean;
    }
    return best;
  };
  static const double without_graph = measure(false);
  static const double with_graph = measure(true);
  return autograd ? with_graph : without_graph;
}

// ---- the input pipeline alone (--model-off) ------------------------------------------------

void check_pipeline_options(const BenchOptions& o) {
  check_bench_options(o);
  if (!o.data) {
    throw Error(
        "bench --model-off: synthetic inputs have no pipeline to measure: give a data set with "
        "--data (e.g. --data spirals)");
  }
  if (!o.qps.empty()) {
    throw Error("bench --model-off: the server scenario (--qps) serves the model: drop one");
  }
  for (int64_t b : o.batches) {
    if (b > o.data->size()) {
      throw Error(fmt::format(
          "bench --model-off: batch {} is larger than {} ({} examples): the loader keeps full "
          "batches only, as `prism train` does",
          b, o.data_name, o.data->size()));
    }
  }
}

PipelineResult run_pipeline_bench(const BenchOptions& o) {
  check_pipeline_options(o);
  PipelineResult res;
  res.options = o;
  describe_machine(o, res.fingerprint, res.environment);
  res.examples = o.data->size();
  Workload w(o.model, o.mode, o.model_options, o.device, o.seed);  // for the comparison

  for (int64_t batch : o.batches) {
    PipelinePoint p;
    p.batch = batch;
    {
      // `prism train`'s loader: shuffled, full batches, one worker filling the next
      // kPrefetchDepth.
      nn::data::DataLoader loader(*o.data, batch, /*shuffle=*/true, o.seed, /*drop_last=*/true,
                                  /*prefetch=*/true);
      double checksum = 0;
      const std::function<void()> next = [&] {
        std::optional<nn::data::Batch> b = loader.next();
        if (!b) b = loader.next();  // the epoch ended: the next call starts a new one
        const Tensor& x = b->input;
        NoGrad no_grad;
        checksum += sum(x.dtype() == DType::f32 ? x : x.to(DType::f32)).item<double>();
      };
      double warm_ns = static_cast<double>(timed_call(next, Device::cpu));  // starts the worker
      for (int i = 0; i < o.warmup; ++i)
        warm_ns = static_cast<double>(timed_call(next, Device::cpu));
      p.latency = latency_stats(time_calls(next, o, warm_ns));
      loader.stop();
      res.checksum += checksum;
    }
    p.batches_per_s = 1e9 / p.latency.mean;
    p.samples_per_s = static_cast<double>(batch) * p.batches_per_s;

    // The model's call on preloaded inputs, as `prism bench` times it.
    w.set_batch(batch, o.seed + static_cast<uint64_t>(batch), o.data.get());
    const std::function<void()> call = [&w] { w.call(); };
    double warm_ns = static_cast<double>(timed_call(call, o.device));
    for (int i = 0; i < o.warmup; ++i) warm_ns = static_cast<double>(timed_call(call, o.device));
    const LatencyStats model = latency_stats(time_calls(call, o, warm_ns));
    p.model_samples_per_s = static_cast<double>(batch) * 1e9 / model.mean;
    res.points.push_back(p);
  }
  return res;
}

std::string pipeline_verdict(const PipelinePoint& p, BenchMode mode) {
  std::string s =
      fmt::format("batch {}: the loader delivers {:.0f} samples/s", p.batch, p.samples_per_s);
  if (p.model_samples_per_s <= 0) return s + "\n";
  const char* step = mode == BenchMode::train ? "the model's training step consumes"
                                              : "the model's inference call consumes";
  s += fmt::format("; {} {:.0f} samples/s: ", step, p.model_samples_per_s);
  const double ratio = p.samples_per_s / p.model_samples_per_s;
  if (ratio >= 1) {
    s += fmt::format("the loader is {:.1f} times faster", ratio);
    s += ratio < 2 ? ", with little to spare (a slower disk or transform would make it the limit)"
                   : ": it does not limit the run";
  } else {
    s += fmt::format(
        "the loader is {:.1f} times slower: it limits the run (prefetch more, use more workers, "
        "or make a batch cheaper to assemble)",
        1 / ratio);
  }
  return s + "\n";
}

nlohmann::ordered_json pipeline_to_json(const PipelineResult& r) {
  using ojson = nlohmann::ordered_json;
  const BenchOptions& o = r.options;
  ojson points = ojson::array();
  for (const PipelinePoint& p : r.points) {
    points.push_back(ojson{
        {"batch", p.batch},
        {"batches_timed", p.latency.n},
        {"batch_p50_ns", p.latency.p50},
        {"batch_p99_ns", p.latency.p99},
        {"batch_mean_ns", p.latency.mean},
        {"batches_per_s", p.batches_per_s},
        {"samples_per_s", p.samples_per_s},
        {"model_samples_per_s", p.model_samples_per_s},
        {"loader_over_model",
         p.model_samples_per_s > 0 ? ojson(p.samples_per_s / p.model_samples_per_s) : ojson()}});
  }
  return ojson{{"kind", "bench --model-off"},
               {"model", o.model},
               {"mode", bench_mode_name(o.mode)},
               {"data", o.data_name},
               {"examples", r.examples},
               {"loader",
                {{"shuffle", true},
                 {"drop_last", true},
                 {"prefetch", true},
                 {"prefetch_depth", nn::data::DataLoader::kPrefetchDepth}}},
               {"warmup", o.warmup},
               {"duration_s", o.duration_s},
               {"iters", o.iters},
               {"fingerprint", fingerprint_to_json(r.fingerprint)},
               {"warnings", r.environment.warnings},
               {"points", points},
               {"checksum", r.checksum}};
}

}  // namespace prism::analysis
