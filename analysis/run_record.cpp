#include "analysis/run_record.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "profiler/counters_json.h"

namespace prism::analysis {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

const Series* RunRecord::find(int64_t batch) const {
  for (const Series& s : series) {
    if (s.batch == batch) return &s;
  }
  return nullptr;
}

// ---- writing ---------------------------------------------------------------------------------

namespace {

ojson roles_json(const RoleBytes& b) {
  ojson j = ojson::object();
  for (int i = 0; i < profiler::kNumRoles; ++i) {
    j[profiler::role_name(static_cast<profiler::MemRole>(i))] = b[static_cast<size_t>(i)];
  }
  return j;
}

ojson counters_json(const CallCounters& c) {
  return ojson{{"flops", c.flops},
               {"macs", c.macs},
               {"bytes", c.bytes},
               {"allocs", c.allocs},
               {"alloc_bytes", c.alloc_bytes}};
}

// --counters: event counts per call (profiler/counters_json.h: null where not counted).
ojson events_json(const double* v, uint8_t mask) {
  ojson j = ojson::object();
  for (int i = 0; i < profiler::kNumCounters; ++i) {
    const auto c = static_cast<profiler::Counter>(i);
    j[profiler::counter_name(c)] = mask & profiler::counter_bit(c) ? ojson(v[i]) : ojson(nullptr);
  }
  return j;
}

ojson ops_json(const std::vector<OpPerCall>& ops) {
  ojson a = ojson::array();
  for (const OpPerCall& o : ops) {
    a.push_back(ojson{{"name", o.name},
                      {"phase", o.phase},
                      {"variant", o.variant},
                      {"grad_of", o.grad_of},
                      {"calls", o.calls},
                      {"self_ns", o.self_ns},
                      {"flops", o.flops},
                      {"bytes", o.bytes},
                      {"allocs", o.allocs},
                      {"alloc_bytes", o.alloc_bytes}});
    if (o.event_mask != 0) a.back()["events"] = events_json(o.events, o.event_mask);
  }
  return a;
}

}  // namespace

ojson fingerprint_to_json(const Fingerprint& f) {
  return ojson{{"cpu_model", f.cpu_model},
               {"logical_cpus", f.logical_cpus},
               {"physical_cores", f.physical_cores},
               {"simd", f.simd},
               {"compiler", f.compiler},
               {"flags", f.flags},
               {"build_type", f.build_type},
               {"threads", f.threads},
               {"version", f.version},
               {"git_commit", f.git_commit},
               {"device", f.device}};
}

ojson bench_to_json(const BenchResult& r) {
  const BenchOptions& o = r.options;
  const Environment& e = r.environment;
  ojson doc;
  doc["kind"] = "prism.bench";
  doc["schema"] = 1;
  doc["model"] = o.model;
  doc["mode"] = bench_mode_name(o.mode);
  doc["kernels"] = r.kernels;
  doc["parameters"] = r.parameters;
  doc["input"] = r.input;
  doc["options"] = ojson{{"batches", o.batches},
                         {"warmup", o.warmup},
                         {"duration_s", o.duration_s},
                         {"iters", o.iters},
                         {"profile_calls", o.profile_calls},
                         {"device", device_name(o.device)},
                         {"seed", o.seed},
                         {"image_size", o.model_options.image_size},
                         {"block_size", o.model_options.block_size},
                         {"data", o.data ? o.data_name : "synthetic"}};
  doc["fingerprint"] = fingerprint_to_json(r.fingerprint);
  doc["environment"] = ojson{{"load_avg_1m", e.load_avg_1m}, {"busy", e.busy},
                             {"governor", e.governor},       {"boost", e.boost},
                             {"smt_active", e.smt_active},   {"omp_proc_bind", e.omp_proc_bind},
                             {"sanitizers", e.sanitizers},   {"warnings", e.warnings}};
  doc["baseline_rss_bytes"] = r.baseline_rss_bytes;
  doc["harness_ns_per_call"] = r.harness_ns;
  doc["profiler_overhead_ns_per_op"] = r.profiler_overhead_ns;
  doc["machine_peak_gflops"] = r.machine_peak_gflops;
  doc["quality"] = ojson{{"probe_output", r.probe_output}, {"train_losses", r.train_losses}};
  ojson batches = ojson::array();
  for (const BatchResult& b : r.batches) {
    ojson cls = ojson::object();
    for (int i = 0; i < kNumOpClasses; ++i) {
      cls[op_class_name(static_cast<OpClass>(i))] = b.class_ns[static_cast<size_t>(i)];
    }
    batches.push_back(ojson{{"batch", b.batch},
                            {"cold_ns", b.cold_ns},
                            {"latency", latency_json(b.latency)},
                            {"throughput_per_s", b.throughput},
                            {"peak_rss_bytes", b.peak_rss_bytes},
                            {"tracked_peak_bytes", b.tracked_peak_bytes},
                            {"tracked_peak_by_role", roles_json(b.tracked_peak_by_role)},
                            {"counters", counters_json(b.counters)},
                            {"flops_per_sample", b.flops_per_sample},
                            {"gflops", b.gflops},
                            {"pct_peak", b.pct_peak},
                            {"time_by_class_ns", cls},
                            {"ops", ops_json(b.ops)},
                            {"samples_ns", b.samples_ns}});
    if (b.event_mask != 0) batches.back()["events"] = events_json(b.events, b.event_mask);
  }
  doc["batches"] = std::move(batches);
  if (r.counters.enabled) doc["event_counters"] = profiler::counter_info_json<ojson>(r.counters);
  if (!r.server.empty()) {
    ojson points = ojson::array();
    for (const ServerPoint& p : r.server) {
      ojson sizes = ojson::object();
      for (const auto& [size, count] : p.run.batch_sizes) sizes[std::to_string(size)] = count;
      ojson pt{{"offered_qps", p.run.offered_qps},
               {"achieved_qps", p.run.achieved_qps},
               {"arrived", p.run.arrived},
               {"completed", p.run.completed},
               {"unfinished", p.run.unfinished},
               {"mean_batch", p.run.mean_batch()},
               {"batch_sizes", sizes}};
      if (!p.run.latency_ns.empty()) {
        pt["latency"] = latency_json(p.latency);
        pt["queue_wait"] = latency_json(p.queue_wait);
      }
      pt["latency_ns"] = p.run.latency_ns;
      points.push_back(std::move(pt));
    }
    doc["server"] = ojson{{"max_batch", o.server.max_batch},
                          {"max_wait_ms", o.server.max_wait_ms},
                          {"duration_s", o.server.duration_s},
                          {"slo_ms", o.slo_ms},
                          {"points", std::move(points)}};
  }
  return doc;
}

// ---- reading ---------------------------------------------------------------------------------

namespace {

// Field access that names the file and the path of what is wrong.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& what) const { throw Error(source_ + ": " + what); }
  const json& at(const json& j, const std::string& key, const std::string& where) const {
    if (!j.is_object() || !j.contains(key)) fail("missing field '" + where + key + "'");
    return j.at(key);
  }
  double number(const json& j, const std::string& key, const std::string& where) const {
    const json& v = at(j, key, where);
    if (!v.is_number()) fail("field '" + where + key + "' is not a number");
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail("field '" + where + key + "' is not finite");
    return d;
  }
  int64_t integer(const json& j, const std::string& key, const std::string& where) const {
    const json& v = at(j, key, where);
    if (!v.is_number_integer()) fail("field '" + where + key + "' is not a whole number");
    return v.get<int64_t>();
  }
  // Counts, bytes, FLOPs and times: a negative one is no measurement (a hand-edited or corrupt
  // file), and would pass a gate that compares rises.
  int64_t count(const json& j, const std::string& key, const std::string& where) const {
    const int64_t v = integer(j, key, where);
    if (v < 0) fail("field '" + where + key + "' is negative (" + std::to_string(v) + ")");
    return v;
  }
  // A peak of memory: bytes, or -1 where it could not be measured (what prism writes then).
  int64_t peak(const json& j, const std::string& key, const std::string& where) const {
    const int64_t v = integer(j, key, where);
    if (v < -1) {
      fail("field '" + where + key + "' is " + std::to_string(v) +
           ": a peak is bytes, or -1 when unknown");
    }
    return v;
  }
  double amount(const json& j, const std::string& key, const std::string& where) const {
    const double v = number(j, key, where);
    if (v < 0) fail("field '" + where + key + "' is negative (" + fmt::format("{:g}", v) + ")");
    return v;
  }
  std::string string(const json& j, const std::string& key, const std::string& where) const {
    const json& v = at(j, key, where);
    if (!v.is_string()) fail("field '" + where + key + "' is not a string");
    return v.get<std::string>();
  }
  std::vector<double> numbers(const json& j, const std::string& key, const std::string& where,
                              bool need_positive) const {
    const json& v = at(j, key, where);
    if (!v.is_array()) fail("field '" + where + key + "' is not an array");
    std::vector<double> out;
    out.reserve(v.size());
    for (const json& x : v) {
      if (!x.is_number() || !std::isfinite(x.get<double>()) ||
          (need_positive && !(x.get<double>() > 0))) {
        fail("field '" + where + key + "' holds a value that is not a " +
             (need_positive ? "positive number" : "finite number"));
      }
      out.push_back(x.get<double>());
    }
    return out;
  }

 private:
  std::string source_;
};

Fingerprint read_fingerprint(const Reader& rd, const json& f) {
  Fingerprint fp;
  fp.cpu_model = rd.string(f, "cpu_model", "fingerprint.");
  fp.logical_cpus = static_cast<int>(rd.integer(f, "logical_cpus", "fingerprint."));
  fp.physical_cores = static_cast<int>(rd.integer(f, "physical_cores", "fingerprint."));
  fp.simd = rd.string(f, "simd", "fingerprint.");
  fp.compiler = rd.string(f, "compiler", "fingerprint.");
  fp.flags = rd.string(f, "flags", "fingerprint.");
  fp.build_type = rd.string(f, "build_type", "fingerprint.");
  fp.threads = static_cast<int>(rd.integer(f, "threads", "fingerprint."));
  fp.version = rd.string(f, "version", "fingerprint.");
  fp.git_commit = rd.string(f, "git_commit", "fingerprint.");
  fp.device = rd.string(f, "device", "fingerprint.");
  return fp;
}

std::vector<OpPerCall> read_ops(const Reader& rd, const json& ops, const std::string& where,
                                double per) {
  if (!ops.is_array()) rd.fail("field '" + where + "' is not an array");
  std::vector<OpPerCall> out;
  for (const json& o : ops) {
    OpPerCall p;
    p.name = rd.string(o, "name", where + "[].");
    p.phase = rd.string(o, "phase", where + "[].");
    p.variant = rd.string(o, "variant", where + "[].");
    p.grad_of = rd.string(o, "grad_of", where + "[].");
    p.calls = rd.amount(o, "calls", where + "[].") / per;
    p.self_ns = rd.amount(o, "self_ns", where + "[].") / per;
    p.flops = rd.amount(o, "flops", where + "[].") / per;
    p.bytes = rd.amount(o, "bytes", where + "[].") / per;
    p.allocs = rd.amount(o, "allocs", where + "[].") / per;
    p.alloc_bytes = rd.amount(o, "alloc_bytes", where + "[].") / per;
    out.push_back(std::move(p));
  }
  return out;
}

RunRecord read_bench(const Reader& rd, const json& doc) {
  RunRecord r;
  r.kind = "bench";
  r.model = rd.string(doc, "model", "");
  r.mode = rd.string(doc, "mode", "");
  if (r.mode != "infer" && r.mode != "train") rd.fail("field 'mode' is '" + r.mode + "'");
  r.kernels = rd.string(doc, "kernels", "");
  r.fingerprint = read_fingerprint(rd, rd.at(doc, "fingerprint", ""));
  if (doc.contains("environment") && doc["environment"].contains("warnings")) {
    for (const json& w : doc["environment"]["warnings"]) {
      if (w.is_string()) r.warnings.push_back(w.get<std::string>());
    }
  }
  const json& q = rd.at(doc, "quality", "");
  r.probe_output = rd.numbers(q, "probe_output", "quality.", false);
  r.train_losses = rd.numbers(q, "train_losses", "quality.", false);
  const json& batches = rd.at(doc, "batches", "");
  if (!batches.is_array()) rd.fail("field 'batches' is not an array");
  for (const json& b : batches) {
    Series s;
    s.batch = rd.integer(b, "batch", "batches[].");
    if (s.batch < 1) rd.fail("field 'batches[].batch' is below 1");
    s.label = "batch " + std::to_string(s.batch);
    s.samples_ns = rd.numbers(b, "samples_ns", "batches[].", true);
    if (s.samples_ns.empty()) rd.fail("batch " + std::to_string(s.batch) + " has no samples");
    s.cold_ns = rd.amount(b, "cold_ns", "batches[].");
    s.peak_rss_bytes = rd.peak(b, "peak_rss_bytes", "batches[].");
    s.tracked_peak_bytes = rd.peak(b, "tracked_peak_bytes", "batches[].");
    const json& roles = rd.at(b, "tracked_peak_by_role", "batches[].");
    for (int i = 0; i < profiler::kNumRoles; ++i) {
      const char* name = profiler::role_name(static_cast<profiler::MemRole>(i));
      s.tracked_peak_by_role[static_cast<size_t>(i)] =
          rd.count(roles, name, "batches[].tracked_peak_by_role.");
    }
    const json& c = rd.at(b, "counters", "batches[].");
    s.has_counters = true;
    s.counters = {
        rd.count(c, "flops", "batches[].counters."), rd.count(c, "macs", "batches[].counters."),
        rd.count(c, "bytes", "batches[].counters."), rd.count(c, "allocs", "batches[].counters."),
        rd.count(c, "alloc_bytes", "batches[].counters.")};
    s.ops = read_ops(rd, rd.at(b, "ops", "batches[]."), "batches[].ops", 1.0);
    r.series.push_back(std::move(s));
  }
  if (r.series.empty() && !doc.contains("server")) rd.fail("no batches were measured");
  return r;
}

// `prism train --json`: the profile of a window of steps plus a "train" block.
RunRecord read_train(const Reader& rd, const json& doc) {
  RunRecord r;
  r.kind = "train";
  r.mode = "train";
  const json& t = rd.at(doc, "train", "");
  r.model = rd.string(t, "model", "train.");
  r.kernels =
      t.contains("kernels") && t["kernels"].is_string() ? t["kernels"].get<std::string>() : "";
  r.fingerprint = read_fingerprint(rd, rd.at(t, "fingerprint", "train."));
  if (t.contains("test_loss") && t["test_loss"].is_number()) {
    r.test_loss = t["test_loss"].get<double>();
  }
  if (t.contains("test_accuracy") && t["test_accuracy"].is_number()) {
    r.test_accuracy = t["test_accuracy"].get<double>();
  }
  // Every step's loss (prism train writes them): the quality line of two runs of the same steps.
  // A diverged step's loss is written as null: NaN here, which the quality line reports.
  if (t.contains("step_losses")) {
    const json& losses = t["step_losses"];
    if (!losses.is_array()) rd.fail("field 'train.step_losses' is not an array");
    for (const json& x : losses) {
      if (!x.is_null() && !x.is_number()) {
        rd.fail("field 'train.step_losses' holds a value that is not a number or null");
      }
      r.train_losses.push_back(x.is_null() ? std::nan("") : x.get<double>());
    }
  }
  Series s;
  s.label = "train step";
  s.batch = rd.integer(t, "batch", "train.");
  for (double ms : rd.numbers(t, "step_samples_ms", "train.", true)) {
    // Finite in ms, but 1e308 ms is no finite number of ns.
    if (!std::isfinite(ms * 1e6)) rd.fail("field 'train.step_samples_ms' holds a value too large");
    s.samples_ns.push_back(ms * 1e6);
  }
  if (s.samples_ns.empty()) rd.fail("field 'train.step_samples_ms' is empty");
  const json& window = rd.at(t, "profiled_steps", "train.");
  if (!window.is_array() || window.size() != 2 || !window[0].is_number_integer() ||
      !window[1].is_number_integer()) {
    rd.fail("field 'train.profiled_steps' is not a [first, last] pair");
  }
  const int64_t steps = window[1].get<int64_t>() - window[0].get<int64_t>() + 1;
  if (steps < 1) rd.fail("field 'train.profiled_steps' is an empty window");
  s.ops = read_ops(rd, rd.at(doc, "ops", ""), "ops", static_cast<double>(steps));
  // The counters of the window, per step (exact when every step does the same work).
  CallCounters total;
  for (const json& o : doc["ops"]) {
    total.flops = profiler::saturating_add(total.flops, rd.count(o, "flops", "ops[]."));
    total.macs = profiler::saturating_add(total.macs, rd.count(o, "macs", "ops[]."));
    total.bytes = profiler::saturating_add(total.bytes, rd.count(o, "bytes", "ops[]."));
    total.allocs += rd.count(o, "allocs", "ops[].");
    total.alloc_bytes =
        profiler::saturating_add(total.alloc_bytes, rd.count(o, "alloc_bytes", "ops[]."));
  }
  s.has_counters = true;
  s.counters = {total.flops / steps, total.macs / steps, total.bytes / steps, total.allocs / steps,
                total.alloc_bytes / steps};
  if (t.contains("peak_rss_bytes")) s.peak_rss_bytes = rd.peak(t, "peak_rss_bytes", "train.");
  if (t.contains("tracked_peak_bytes")) {
    s.tracked_peak_bytes = rd.peak(t, "tracked_peak_bytes", "train.");
  }
  r.series.push_back(std::move(s));
  return r;
}

}  // namespace

RunRecord run_from_json(const json& doc, const std::string& source) {
  const Reader rd(source);
  if (!doc.is_object()) rd.fail("not a prism result (expected a JSON object)");
  RunRecord r;
  if (doc.contains("kind") && doc["kind"] == "prism.bench") {
    r = read_bench(rd, doc);
  } else if (doc.contains("train") && doc.contains("ops")) {
    r = read_train(rd, doc);
  } else {
    rd.fail(
        "not a result of `prism bench --json` or `prism train --json` (no \"kind\": "
        "\"prism.bench\" and no \"train\" block)");
  }
  r.path = source;
  return r;
}

RunRecord load_run(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw Error(path + ": cannot be read (" + std::string(std::strerror(errno)) + ")");
  std::stringstream ss;
  ss << f.rdbuf();
  json doc;
  try {
    doc = json::parse(ss.str());
  } catch (const json::exception& e) {  // a syntax error, or a number past double (1e400)
    throw Error(path + ": not valid JSON (" + e.what() + ")");
  }
  return run_from_json(doc, path);
}

}  // namespace prism::analysis
