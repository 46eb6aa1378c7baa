// Chrome trace event output (open in ui.perfetto.dev or chrome://tracing).
//
// The format's times are microseconds; we keep nanosecond precision as the fraction, so a
// 40 ns elementwise op is still a visible span. Viewers rebuild the call tree from time
// containment alone, so a child must never poke out of its parent: ns -> us conversion in
// doubles can round a child's end one ulp past its parent's, and a viewer then draws the
// child as a sibling. Each span is therefore clamped into its parent's span as the reader will
// compute it (ts + dur, in doubles).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/counters_json.h"
#include "profiler/meta_json.h"
#include "profiler/reports.h"

namespace prism::profiler {

namespace {

// ordered_json keeps keys in the order written (meta first, name before numbers), for people
// reading the file; parsers do not care.
using json = nlohmann::ordered_json;

struct Span {
  double ts;   // us since the recording started
  double dur;  // us
  double end;  // ts + dur, exactly as a reader will add them
};

double to_us(int64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

// Places every record in time; parents come before their children in the records vector
// (each thread's records are in start order), so one forward pass sees each parent first.
std::vector<Span> place_spans(const Recording& rec) {
  std::vector<Span> spans(rec.records.size());
  for (size_t i = 0; i < rec.records.size(); ++i) {
    const OpRecord& r = rec.records[i];
    double ts = to_us(r.start_ns - rec.start_ns);
    double dur = to_us(std::max<int64_t>(r.dur_ns, 0));
    if (r.parent >= 0 && static_cast<size_t>(r.parent) < i) {
      const Span& ps = spans[static_cast<size_t>(r.parent)];
      ts = std::clamp(ts, ps.ts, ps.end);
      dur = std::clamp(dur, 0.0, ps.end - ts);
      while (dur > 0.0 && ts + dur > ps.end) dur = std::nextafter(dur, 0.0);
    }
    spans[i] = Span{ts, dur, ts + dur};
  }
  return spans;
}

json record_event(const OpRecord& r, const Span& s, const Recording& rec) {
  const bool is_op = r.kind == Kind::op;
  const std::string scope_path =
      (r.scope >= 0 && static_cast<size_t>(r.scope) < rec.scope_paths.size())
          ? rec.scope_paths[static_cast<size_t>(r.scope)]
          : std::string();
  json args = json::object();
  if (is_op) {
    args["variant"] = r.variant;
    args["phase"] = phase_name(r.phase);
    args["grad_of"] = r.grad_of;
    args["device"] = r.device;
    args["scope"] = scope_path;
    args["shapes"] = r.shapes.to_string();
    args["flops"] = r.cost.flops;
    args["macs"] = r.cost.macs;
    args["bytes"] = r.cost.bytes;
    args["threads"] = r.threads;
    // The span's own counts, nested ops included (as its duration is): a viewer shows them on
    // the span, and subtracting the children's is the reader's choice.
    if (r.counters.any()) {
      const json counts = counter_values_json<json>(r.counters, r.counters.mask);
      for (const auto& [key, value] : counts.items()) {
        if (!value.is_null()) args[key] = value;
      }
    }
  } else {
    args["phase"] = phase_name(r.phase);
    args["scope"] = scope_path;
  }
  args["allocs"] = r.allocs;
  args["alloc_bytes"] = r.alloc_bytes;
  return json{{"name", r.op},
              // Two categories, so a viewer can filter ops from scopes or backward from forward.
              {"cat", std::string(is_op ? "op," : "scope,") + phase_name(r.phase)},
              {"ph", "X"},
              {"ts", s.ts},
              {"dur", s.dur},
              {"pid", 1},
              {"tid", r.tid},
              {"args", std::move(args)}};
}

// The trace track of GPU work: a tid no host thread has (host threads count up from 0).
constexpr int32_t kGpuTrack = 1000000;
// The track of collectives in flight (collective.h): they overlap the ops of the thread that
// started them, so they get a track of their own, another tid no host thread has.
constexpr int32_t kCommTrack = 1000001;

std::string counter_name(int32_t device) {
  if (device == 0) return "live memory (cpu)";
  if (device == 1) return "live memory (cuda)";
  if (device == 2) return "live memory (meta)";
  return "live memory (device " + std::to_string(device) + ")";
}

}  // namespace

std::string trace_json(const Profile& p) {
  const Recording& rec = p.recording;
  json events = json::array();
  std::set<int32_t> tids;

  const std::vector<Span> spans = place_spans(rec);
  bool gpu = false;
  for (size_t i = 0; i < rec.records.size(); ++i) {
    const OpRecord& r = rec.records[i];
    events.push_back(record_event(r, spans[i], rec));
    tids.insert(r.tid);
    if (r.gpu_ns >= 0) {
      // The same op again on the GPU's own track, where the device ran it (CUDA events).
      json e = record_event(r, Span{to_us(r.gpu_start_ns - rec.start_ns), to_us(r.gpu_ns), 0}, rec);
      e["tid"] = kGpuTrack;
      e["cat"] = std::string("gpu,") + phase_name(r.phase);
      events.push_back(std::move(e));
      gpu = true;
    }
  }

  for (const CollectiveSpan& c : rec.collectives) {
    const int64_t ns = c.end_ns - c.start_ns;
    const double algbw = ns > 0 ? static_cast<double>(c.bytes) / static_cast<double>(ns) : 0.0;
    events.push_back(json{{"name", c.op},
                          {"cat", "comm"},
                          {"ph", "X"},
                          {"ts", to_us(c.start_ns - rec.start_ns)},
                          {"dur", to_us(ns)},
                          {"pid", 1},
                          {"tid", kCommTrack},
                          {"args",
                           {{"bytes", c.bytes},
                            {"world_size", c.world_size},
                            {"thread", c.tid},
                            {"algbw_gbs", algbw},
                            {"busbw_gbs", algbw * bus_bandwidth_factor(c.op, c.world_size)}}}});
  }

  // Samples arrive grouped by thread; a counter track reads best in global time order.
  std::vector<MemSample> samples = rec.memory;
  std::stable_sort(samples.begin(), samples.end(),
                   [](const MemSample& a, const MemSample& b) { return a.t_ns < b.t_ns; });
  for (const MemSample& m : samples) {
    events.push_back(json{{"name", counter_name(m.device)},
                          {"ph", "C"},
                          {"ts", to_us(m.t_ns - rec.start_ns)},
                          {"pid", 1},
                          {"tid", m.tid},
                          {"args", {{"bytes", m.live_bytes}}}});
    tids.insert(m.tid);
  }

  events.push_back(json{{"name", "process_name"},
                        {"ph", "M"},
                        {"pid", 1},
                        {"tid", 0},
                        {"args", {{"name", "prism"}}}});
  if (gpu) {
    events.push_back(json{{"name", "thread_name"},
                          {"ph", "M"},
                          {"pid", 1},
                          {"tid", kGpuTrack},
                          {"args", {{"name", "GPU (CUDA events)"}}}});
  }
  if (!rec.collectives.empty()) {
    events.push_back(json{{"name", "thread_name"},
                          {"ph", "M"},
                          {"pid", 1},
                          {"tid", kCommTrack},
                          {"args", {{"name", "communication"}}}});
  }
  for (int32_t tid : tids) {
    events.push_back(json{{"name", "thread_name"},
                          {"ph", "M"},
                          {"pid", 1},
                          {"tid", tid},
                          {"args", {{"name", "thread " + std::to_string(tid)}}}});
  }

  json other = meta_json(p);
  if (p.counters.enabled) other["counters"] = counter_info_json<json>(p.counters);
  json doc{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}, {"otherData", other}};
  return doc.dump();
}

}  // namespace prism::profiler
