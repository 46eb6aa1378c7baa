// Reading a profile document for the report (profile_views.h). Every field is checked with its
// path in the message, because the reader of the error has the file open beside it.
#include <map>
#include <string>

#include "analysis/html/json_fields.h"
#include "analysis/html/profile_views.h"
#include "analysis/html/result_views.h"
#include "kernels/types.h"

namespace prism::analysis::html {

namespace {

using nlohmann::json;

using fields::count;
using fields::fail;
using fields::field;
using fields::number;
using fields::text;

// A duration or a cost: a number >= 0 (gpu_ns may also be -1, "not measured").
double amount(const json& obj, const char* key, const std::string& path, double lowest = 0) {
  const double v = number(obj, key, path);
  if (v < lowest) fail(path + key, "expected a number >= " + std::to_string(int(lowest)));
  return v;
}

ProfileOp read_op(const json& o, const std::string& path) {
  if (!o.is_object()) fail(path.substr(0, path.size() - 1), "expected an object");
  ProfileOp op;
  op.name = text(o, "name", path);
  op.phase = text(o, "phase", path);
  op.variant = text(o, "variant", path);
  op.grad_of = o.contains("grad_of") ? text(o, "grad_of", path) : "";
  op.device = text(o, "device", path);
  op.calls = count(o, "calls", path);
  op.time_ns = amount(o, "time_ns", path);
  op.self_ns = amount(o, "self_ns", path);
  op.gpu_ns = o.contains("gpu_ns") ? amount(o, "gpu_ns", path, -1) : -1;
  op.flops = amount(o, "flops", path);
  op.bytes = amount(o, "bytes", path);
  op.allocs = count(o, "allocs", path);
  op.alloc_bytes = count(o, "alloc_bytes", path);
  return op;
}

// One point of a memory curve: {t_ns, live_bytes[, op][, roles: {role: bytes}]}.
MemorySample read_sample(const json& s, const std::string& path) {
  MemorySample ms;
  ms.t_ns = number(s, "t_ns", path);
  ms.live_bytes = amount(s, "live_bytes", path);
  if (s.contains("op")) ms.op = text(s, "op", path);
  if (s.contains("roles")) {
    const json& r = s["roles"];
    if (!r.is_object()) fail(path + "roles", "expected an object of role: bytes");
    for (auto it = r.begin(); it != r.end(); ++it) {
      ms.roles.emplace_back(it.key(), amount(r, it.key().c_str(), path + "roles."));
    }
  }
  return ms;
}

// memory.timeline as the profiler writes it (profiler/report_json.cpp): {t_ns, live_bytes,
// device, roles, op} per point, thinned to an upper envelope. One curve is drawn: the device whose
// peak is highest (the GPU in a --device cuda run, where the host holds little).
void read_timeline(const json& t, ProfileData& p) {
  if (!t.is_array()) fail("memory.timeline", "expected an array of points");
  std::string device;
  int64_t top = -1;
  for (const auto& [name, bytes] : p.peak_live_bytes) {
    if (bytes > top) top = bytes, device = name;
  }
  for (size_t i = 0; i < t.size(); ++i) {
    const std::string path = "memory.timeline[" + std::to_string(i) + "].";
    const json& s = t[i];
    if (!s.is_object()) fail(path.substr(0, path.size() - 1), "expected an object");
    if (text(s, "device", path) != device) continue;
    p.samples.push_back(read_sample(s, path));
  }
  p.timeline_device = device;
}

void read_memory(const json& m, ProfileData& p) {
  if (!m.is_object()) fail("memory", "expected an object");
  const json& peaks = field(m, "peak_live_bytes", "memory.");
  if (!peaks.is_object()) fail("memory.peak_live_bytes", "expected an object of devices");
  for (auto it = peaks.begin(); it != peaks.end(); ++it) {
    p.peak_live_bytes[it.key()] = count(peaks, it.key().c_str(), "memory.peak_live_bytes.");
  }
  const json& samples = field(m, "samples", "memory.");
  if (samples.is_number_integer()) {
    p.sample_count = count(m, "samples", "memory.");
    if (m.contains("timeline")) read_timeline(m["timeline"], p);
    return;
  }
  if (!samples.is_array()) fail("memory.samples", "expected a count or an array of samples");
  for (size_t i = 0; i < samples.size(); ++i) {
    const std::string path = "memory.samples[" + std::to_string(i) + "].";
    const json& s = samples[i];
    if (!s.is_object()) fail(path.substr(0, path.size() - 1), "expected an object");
    p.samples.push_back(read_sample(s, path));
  }
  p.sample_count = static_cast<int64_t>(p.samples.size());
}

void read_train(const json& t, ProfileData& p) {
  if (!t.is_object()) fail("train", "expected an object");
  if (t.contains("model")) p.model = text(t, "model", "train.");
  if (t.contains("data")) p.data = text(t, "data", "train.");
  if (t.contains("device")) p.device = text(t, "device", "train.");
  if (t.contains("steps")) p.steps = count(t, "steps", "train.");
  if (t.contains("batch")) p.batch = count(t, "batch", "train.");
  if (t.contains("profiled_steps")) {
    const json& ps = t["profiled_steps"];
    if (!ps.is_array() || ps.size() != 2 || !ps[0].is_number_integer() ||
        !ps[1].is_number_integer()) {
      fail("train.profiled_steps", "expected [first, last]");
    }
    p.profiled_steps = {ps[0].get<int64_t>(), ps[1].get<int64_t>()};
  }
  if (t.contains("step_samples_ms")) {
    const json& ms = t["step_samples_ms"];
    if (!ms.is_array()) fail("train.step_samples_ms", "expected an array of ms per step");
    for (size_t i = 0; i < ms.size(); ++i) {
      const std::string at = "train.step_samples_ms[" + std::to_string(i) + "]";
      if (!ms[i].is_number() || ms[i].get<double>() < 0) fail(at, "expected a number >= 0");
      p.step_ms.push_back(ms[i].get<double>());
    }
  }
}

// "modules" (profiler/report_json.cpp): the module tree, parents before children. Each path's
// parent (the path up to its last ".") must come earlier, so the icicle can nest every rect.
void read_modules(const json& mods, ProfileData& p) {
  if (!mods.is_array()) fail("modules", "expected an array");
  std::map<std::string, int> depth_of;
  for (size_t i = 0; i < mods.size(); ++i) {
    const std::string path = "modules[" + std::to_string(i) + "].";
    const json& o = mods[i];
    if (!o.is_object()) fail(path.substr(0, path.size() - 1), "expected an object");
    ProfileModule m;
    m.path = text(o, "path", path);
    m.name = o.contains("name") ? text(o, "name", path) : "";
    m.type = o.contains("type") ? text(o, "type", path) : "";
    m.depth = static_cast<int>(count(o, "depth", path));
    m.calls = count(o, "calls", path);
    m.fwd_ns = amount(o, "fwd_ns", path);
    m.bwd_ns = amount(o, "bwd_ns", path);
    m.opt_ns = o.contains("opt_ns") ? amount(o, "opt_ns", path) : 0;
    m.fwd_flops = o.contains("fwd_flops") ? amount(o, "fwd_flops", path) : 0;
    m.bwd_flops = o.contains("bwd_flops") ? amount(o, "bwd_flops", path) : 0;
    m.rec_ns = o.contains("rec_ns") ? amount(o, "rec_ns", path) : 0;
    m.rec_flops = o.contains("rec_flops") ? amount(o, "rec_flops", path) : 0;
    m.comm_ns = o.contains("comm_ns") ? amount(o, "comm_ns", path) : 0;
    const size_t dot = m.path.rfind('.');
    if (m.name.empty()) m.name = dot == std::string::npos ? m.path : m.path.substr(dot + 1);
    if (m.depth > 1) {
      const auto parent = depth_of.find(m.path.substr(0, dot == std::string::npos ? 0 : dot));
      if (dot == std::string::npos || parent == depth_of.end() || parent->second != m.depth - 1) {
        fail(path + "path", "\"" + m.path + "\" at depth " + std::to_string(m.depth) +
                                " has no parent listed before it");
      }
    }
    depth_of[m.path] = m.depth;
    p.modules.push_back(std::move(m));
  }
  p.has_modules = true;
}

}  // namespace

std::string ProfileOp::label() const {
  return grad_of.empty() ? name : name + " (" + grad_of + ")";
}

ProfileData read_profile(const json& doc) {
  const char* expected =
      "prism report reads a profile (`prism train MODEL --profile --json F`, `prism demo`)";
  if (!doc.is_object()) {
    throw Error(std::string("expected a JSON object, got ") + doc.type_name() + "; " + expected);
  }
  // Other prism results say what they are; name it, so the user sees which file they gave.
  if (doc.contains("kind") && doc["kind"].is_string()) {
    std::string known;
    for (const std::string& k : result_view_kinds()) known += (known.empty() ? "" : ", ") + k;
    throw Error("this is a " + doc["kind"].get<std::string>() + " result, not a profile; " +
                expected + (known.empty() ? "" : ", or a result of kind " + known));
  }
  if (!doc.contains("ops") || !doc.contains("meta")) {
    throw Error(std::string("not a profile: no \"") + (doc.contains("meta") ? "ops" : "meta") +
                "\" field; " + expected);
  }
  ProfileData p;
  const json& meta = doc["meta"];
  if (!meta.is_object()) fail("meta", "expected an object");
  if (meta.contains("threads")) {
    p.threads = static_cast<int>(count(meta, "threads", "meta."));
    if (p.threads < 1) p.threads = 1;
  }
  const json& ops = doc["ops"];
  if (!ops.is_array()) fail("ops", "expected an array");
  for (size_t i = 0; i < ops.size(); ++i) {
    p.ops.push_back(read_op(ops[i], "ops[" + std::to_string(i) + "]."));
  }
  read_memory(field(doc, "memory", ""), p);
  if (doc.contains("train")) read_train(doc["train"], p);
  if (doc.contains("modules")) read_modules(doc["modules"], p);
  return p;
}

ProfileData load_profile(const std::string& path) {
  const json doc = load_json(path);
  try {
    return read_profile(doc);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

std::string describe_run(const ProfileData& p) {
  if (p.model.empty()) return "";
  std::string s = "model " + p.model;
  if (!p.data.empty()) s += " on " + p.data;
  if (p.batch > 0) s += ", batch " + std::to_string(p.batch);
  if (p.steps > 0) s += ", " + std::to_string(p.steps) + " steps";
  if (p.profiled_steps.size() == 2) {
    s += " (profiled " + std::to_string(p.profiled_steps[0]) + "-" +
         std::to_string(p.profiled_steps[1]) + ")";
  }
  s += ", " + std::to_string(p.threads) + (p.threads == 1 ? " thread" : " threads");
  if (!p.device.empty()) s += ", " + p.device;
  return s;
}

}  // namespace prism::analysis::html
