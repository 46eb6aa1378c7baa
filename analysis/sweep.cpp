#include "analysis/sweep.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include <fmt/format.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "analysis/latency.h"
#include "analysis/report_format.h"
#include "analysis/workload.h"
#include "profiler/memory.h"
#include "profiler/statistics.h"
#include "tensor/storage.h"

namespace prism::analysis {

namespace {

constexpr int64_t kMaxSeq = 1'000'000;  // as `--block` takes it
constexpr int64_t kMaxThreads = 1024;   // as `--threads` takes it

// ---- options ----------------------------------------------------------------------------------

int64_t sweep_batch(const SweepOptions& o) {
  if (!o.bench.batches.empty()) return o.bench.batches.front();
  return nn::training_defaults(o.bench.model).batch;
}

// The bench options of one point: one batch per call, the varied size applied. Threads are a
// process setting (set_point_threads), not a bench option.
BenchOptions point_options(const SweepOptions& o, int64_t value) {
  BenchOptions b = o.bench;
  b.batches = {o.vary.var == SweepVar::batch ? value : sweep_batch(o)};
  switch (o.vary.var) {
    case SweepVar::seq:
      b.model_options.block_size = value;
      break;
    case SweepVar::width:
      b.model_options.width = value;
      break;
    case SweepVar::depth:
      b.model_options.depth = value;
      break;
    case SweepVar::batch:
    case SweepVar::threads:
      break;
  }
  return b;
}

int current_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void set_point_threads(int n) {
#ifdef _OPENMP
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

// Checks one size (a swept value or the predicted one): the bench checks, the model accepting
// it, and, when `memory`, that one call's tensors fit in this machine's memory.
void check_point(const SweepOptions& o, int64_t value, bool memory, const char* what) {
  const std::string name = sweep_var_name(o.vary.var);
  if (o.vary.var == SweepVar::threads && value > kMaxThreads) {
    throw Error(fmt::format("{} threads={}: at most {} threads", what, value, kMaxThreads));
  }
  if (o.vary.var == SweepVar::seq && value > kMaxSeq) {
    throw Error(fmt::format("{} seq={}: a context length of at most {}", what, value, kMaxSeq));
  }
  const BenchOptions b = point_options(o, value);
  int64_t need = 0;
  try {
    check_bench_options(b);
    if (o.vary.var == SweepVar::threads && !memory) return;  // the model does not change
    need = dry_run_peak_bytes(b, b.batches.front());
  } catch (const Error& e) {
    throw Error(fmt::format("{} {}={}: {}", what, name, value, e.what()));
  }
  const int64_t ram = physical_memory_bytes();
  if (memory && b.device == Device::cpu && ram > 0 && need > ram) {
    throw Error(fmt::format(
        "{} {}={}: {} needs about {:.1f} GiB of tensors in one {} call, more than this machine's "
        "{:.1f} GiB of memory",
        what, name, value, b.model, static_cast<double>(need) / (1 << 30), bench_mode_name(b.mode),
        static_cast<double>(ram) / (1 << 30)));
  }
}

std::vector<int64_t> ascending(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// ---- measuring -------------------------------------------------------------------------------

void finish_point(SweepPoint& p, bool seq_sweep) {
  const LatencyStats l = latency_stats(p.samples_ns);
  p.median_ns = l.p50;
  p.median_ci = l.p50_ci;
  p.items_per_call = seq_sweep ? p.batch * p.seq : p.batch;
  p.throughput = static_cast<double>(p.items_per_call) * 1e9 / p.median_ns;
  p.gflops = static_cast<double>(p.counters.flops) / p.median_ns;
  if (p.machine_peak_gflops > 0) p.pct_peak = 100 * p.gflops / p.machine_peak_gflops;
}

// One bench run of one point, folded into `p`.
void measure_into(SweepPoint& p, const SweepOptions& o, int passes, bool first_run,
                  SweepResult& res) {
  BenchOptions b = point_options(o, p.value);
  b.duration_s = o.bench.duration_s / passes;
  b.min_iters = std::max<int64_t>(1, b.min_iters / passes);
  if (b.iters > 0) b.iters = std::max<int64_t>(1, b.iters / passes);
  b.check_environment = o.check_environment && first_run;
  if (o.vary.var == SweepVar::threads) set_point_threads(static_cast<int>(p.value));
  const BenchResult r = run_bench(b);
  const BatchResult& br = r.batches.front();
  if (first_run) {
    res.fingerprint = r.fingerprint;
    res.environment = r.environment;
    res.kernels = r.kernels;
    res.input = r.input;
  }
  const bool first_pass = p.pass_median_ns.empty();
  p.batch = br.batch;
  p.seq = nn::is_language_model(b.model) ? nn::default_input(b.model, b.model_options).shape[1] : 0;
  p.threads = r.fingerprint.threads;
  p.parameters = r.parameters;
  p.samples_ns.insert(p.samples_ns.end(), br.samples_ns.begin(), br.samples_ns.end());
  p.pass_median_ns.push_back(br.latency.p50);
  if (first_pass) {
    p.counters = br.counters;
  } else if (!(p.counters == br.counters)) {
    res.findings.push_back(fmt::format(
        "warning: the counters at {}={} differ between passes ({} and {} FLOPs per call): the "
        "model's work is not the same from call to call",
        sweep_var_name(o.vary.var), p.value, p.counters.flops, br.counters.flops));
  }
  if (br.tracked_peak_bytes > p.tracked_peak_bytes) {
    p.tracked_peak_bytes = br.tracked_peak_bytes;
    p.tracked_peak_by_role = br.tracked_peak_by_role;
  }
  for (int c = 0; c < kNumOpClasses; ++c) p.class_ns[c] += br.class_ns[c] / passes;
  if (r.machine_peak_gflops > 0) p.machine_peak_gflops = r.machine_peak_gflops;
}

// ---- reading the numbers ----------------------------------------------------------------------

CurveFit fit_curve(const std::string& quantity, const std::vector<double>& xs,
                   const std::vector<double>& ys) {
  CurveFit c;
  c.quantity = quantity;
  try {
    c.fit = fit_power_law(xs, ys);
    c.knee = find_knee(xs, ys);
  } catch (const Error& e) {
    c.note = e.what();
  }
  return c;
}

std::vector<double> values_of(const std::vector<SweepPoint>& pts) {
  std::vector<double> xs;
  for (const SweepPoint& p : pts) xs.push_back(static_cast<double>(p.value));
  return xs;
}

ThreadScaling thread_scaling(const std::vector<SweepPoint>& pts) {
  ThreadScaling t;
  const double p0 = static_cast<double>(pts.front().value);
  std::vector<double> ps = values_of(pts), ts;
  for (const SweepPoint& p : pts) {
    ts.push_back(p.median_ns);
    t.speedup.push_back(pts.front().median_ns / p.median_ns);
    t.efficiency.push_back(t.speedup.back() / (static_cast<double>(p.value) / p0));
  }
  try {
    t.amdahl = fit_amdahl(ps, ts);
  } catch (const Error&) {
    // times that rise with the threads so fast that T = a + b/p meets 1 thread at <= 0
  }
  for (int c = 0; c < kNumOpClasses; ++c) {
    ClassScaling cs;
    cs.op_class = static_cast<OpClass>(c);
    std::vector<double> ct;
    for (const SweepPoint& p : pts) ct.push_back(p.class_ns[c]);
    if (std::any_of(ct.begin(), ct.end(), [](double v) { return !(v > 0); })) continue;
    for (size_t i = 0; i < pts.size(); ++i) {
      cs.speedup.push_back(ct.front() / ct[i]);
      cs.efficiency.push_back(cs.speedup.back() / (ps[i] / p0));
    }
    try {
      cs.amdahl = fit_amdahl(ps, ct);
    } catch (const Error&) {
    }
    t.classes.push_back(std::move(cs));
  }
  return t;
}

}  // namespace

const char* sweep_var_name(SweepVar v) {
  switch (v) {
    case SweepVar::batch:
      return "batch";
    case SweepVar::seq:
      return "seq";
    case SweepVar::width:
      return "width";
    case SweepVar::depth:
      return "depth";
    case SweepVar::threads:
      return "threads";
  }
  return "?";
}

SweepSpec parse_vary(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos) {
    throw Error(
        fmt::format("--vary: expected NAME=V1,V2,... (e.g. batch=1,2,4,8), got '{}'", text));
  }
  const std::string name = text.substr(0, eq);
  SweepSpec spec;
  bool known = false;
  for (SweepVar v :
       {SweepVar::batch, SweepVar::seq, SweepVar::width, SweepVar::depth, SweepVar::threads}) {
    if (name == sweep_var_name(v)) {
      spec.var = v;
      known = true;
    }
  }
  if (!known) {
    throw Error(fmt::format(
        "--vary: unknown size '{}': expected batch, seq, width, depth or threads", name));
  }
  const std::string list = text.substr(eq + 1);
  if (list.empty()) throw Error(fmt::format("--vary {}: no values after '='", name));
  std::set<int64_t> seen;
  size_t start = 0;
  for (int index = 1;; ++index) {
    const size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? comma : comma - start);
    const size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    if (item.empty()) {
      throw Error(fmt::format("--vary {}: value {} is empty in '{}'", name, index, list));
    }
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || v < 1) {
      throw Error(fmt::format("--vary {}: '{}' is not a whole number >= 1", name, item));
    }
    if (!seen.insert(v).second) {
      throw Error(fmt::format("--vary {}: {} is given twice", name, v));
    }
    spec.values.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (spec.values.size() < 2) {
    throw Error(
        fmt::format("--vary {}: a fit needs at least 2 values (3 or more for an interval), got {}",
                    name, spec.values.size()));
  }
  return spec;
}

void check_sweep_options(const SweepOptions& o) {
  const std::string name = sweep_var_name(o.vary.var);
  if (o.vary.values.size() < 2) {
    throw Error(
        fmt::format("--vary {}: a fit needs at least 2 values (3 or more for an interval), got {}",
                    name, o.vary.values.size()));
  }
  if (std::set<int64_t>(o.vary.values.begin(), o.vary.values.end()).size() !=
      o.vary.values.size()) {
    throw Error(fmt::format("--vary {}: a value is given twice", name));
  }
  for (int64_t v : o.vary.values) {
    if (v < 1) throw Error(fmt::format("--vary {}: {} is not a whole number >= 1", name, v));
  }
  if (o.passes < 1 || o.passes > 2) throw Error("sweep: 1 or 2 passes");
  if (o.check && o.predict <= 0) {
    throw Error("--check measures the predicted size: give --predict N as well");
  }
  if (!o.bench.qps.empty()) throw Error("sweep: the server scenario (--qps) is bench's");
  // The shared settings first (an unknown model, durations), without the varied size, so
  // that an error about one value names the value.
  BenchOptions base = o.bench;
  base.batches = {sweep_batch(o)};
  check_bench_options(base);
  if (o.vary.var == SweepVar::seq && !nn::is_language_model(o.bench.model)) {
    throw Error(fmt::format(
        "--vary seq: {} has no context length; seq varies a transformer's (transformer, "
        "gpt2-small, gpt2-medium)",
        o.bench.model));
  }
  // A --block beside another varied size, for a model without a context, was silently dropped.
  if (o.bench.model_options.block_size > 0 && !nn::is_language_model(o.bench.model)) {
    throw Error(
        fmt::format("--block: {} has no context length; --block sets a transformer's (transformer, "
                    "gpt2-small, gpt2-medium)",
                    o.bench.model));
  }
#ifndef _OPENMP
  if (o.vary.var == SweepVar::threads) {
    throw Error("--vary threads: this build has no OpenMP, so it always runs one thread");
  }
#endif
  for (int64_t v : o.vary.values) check_point(o, v, true, "--vary");
  if (o.predict > 0) check_point(o, o.predict, o.check, "--predict");
}

void analyse_sweep(SweepResult& r) {
  const auto& pts = r.points;
  if (pts.size() < 2) {
    throw Error(fmt::format("sweep: the analysis needs at least 2 points, got {}", pts.size()));
  }
  for (size_t i = 0; i < pts.size(); ++i) {
    if (i > 0 && pts[i].value <= pts[i - 1].value) {
      throw Error("sweep: the points must be in ascending order of the size, each once");
    }
    if (!(pts[i].median_ns > 0) || pts[i].batch < 1) {
      throw Error(fmt::format("sweep: the point at {} has no time (median {} ns, batch {})",
                              pts[i].value, pts[i].median_ns, pts[i].batch));
    }
  }
  const std::vector<double> xs = values_of(pts);
  std::vector<double> times, mems, flops;
  for (const SweepPoint& p : pts) {
    times.push_back(p.median_ns);
    mems.push_back(static_cast<double>(p.tracked_peak_bytes));
    flops.push_back(static_cast<double>(p.counters.flops));
    if (p.pass_median_ns.size() == 2) {
      const double lo = std::min(p.pass_median_ns[0], p.pass_median_ns[1]);
      const double hi = std::max(p.pass_median_ns[0], p.pass_median_ns[1]);
      r.max_pass_drift_pct = std::max(r.max_pass_drift_pct, 100 * (hi / lo - 1));
    }
  }
  r.time = fit_curve("time", xs, times);
  r.memory = fit_curve("memory", xs, mems);
  r.flops = fit_curve("FLOPs", xs, flops);
  const SweepVar var = r.options.vary.var;
  if (var == SweepVar::threads) r.threads = thread_scaling(pts);

  if (r.options.predict > 0 && r.time.fit) {
    SweepPrediction p;
    p.at = r.options.predict;
    const double n = static_cast<double>(p.at);
    p.time_from_knee = r.time.knee && r.time.knee->kept;
    p.time_ns = p.time_from_knee ? predict(*r.time.knee, n) : predict(*r.time.fit, n);
    if (r.memory.fit) {
      p.has_memory = true;
      p.memory_from_knee = r.memory.knee && r.memory.knee->kept;
      p.memory_bytes = p.memory_from_knee ? predict(*r.memory.knee, n) : predict(*r.memory.fit, n);
    }
    if (r.threads && r.threads->amdahl) p.amdahl_time_ns = amdahl_time(*r.threads->amdahl, n);
    r.prediction = p;
  }

  add_sweep_findings(r);
}

SweepResult run_sweep(const SweepOptions& o) {
  check_sweep_options(o);
  SweepResult res;
  res.options = o;
  res.options.vary.values = ascending(o.vary.values);
  res.model = o.bench.model;
  res.mode = bench_mode_name(o.bench.mode);
  res.throughput_unit = o.vary.var == SweepVar::seq ? "tokens/s" : "samples/s";
  const bool seq_sweep = o.vary.var == SweepVar::seq;

  const std::vector<int64_t>& values = res.options.vary.values;
  std::vector<SweepPoint> pts(values.size());
  for (size_t i = 0; i < values.size(); ++i) pts[i].value = values[i];
  const int threads_before = current_threads();
  try {
    bool first_run = true;
    for (int pass = 0; pass < o.passes; ++pass) {
      for (size_t j = 0; j < pts.size(); ++j) {
        const size_t i = pass % 2 == 0 ? j : pts.size() - 1 - j;  // up, then down
        measure_into(pts[i], o, o.passes, first_run, res);
        first_run = false;
      }
    }
  } catch (...) {
    set_point_threads(threads_before);
    throw;
  }
  set_point_threads(threads_before);
  for (SweepPoint& p : pts) finish_point(p, seq_sweep);
  res.points = std::move(pts);
  analyse_sweep(res);

  if (o.check) {
    if (!res.prediction) throw Error("sweep: no fit of the time to predict from: " + res.time.note);
    SweepCheck c;
    c.measured.value = o.predict;
    try {
      measure_into(c.measured, o, 1, false, res);
    } catch (...) {
      set_point_threads(threads_before);
      throw;
    }
    set_point_threads(threads_before);
    finish_point(c.measured, seq_sweep);
    const SweepPrediction& p = *res.prediction;
    c.time_error_pct = 100 * (p.time_ns.value - c.measured.median_ns) / c.measured.median_ns;
    c.time_within = p.time_ns.has_interval && c.measured.median_ns >= p.time_ns.low &&
                    c.measured.median_ns <= p.time_ns.high;
    const double mem = static_cast<double>(c.measured.tracked_peak_bytes);
    if (p.has_memory && mem > 0) {
      c.memory_error_pct = 100 * (p.memory_bytes.value - mem) / mem;
      c.memory_within =
          p.memory_bytes.has_interval && mem >= p.memory_bytes.low && mem <= p.memory_bytes.high;
    }
    res.check = std::move(c);
  }
  return res;
}

}  // namespace prism::analysis
