// One Chrome trace for a multi-rank run: each rank's trace_json as a process of its own.
//
// A viewer groups events by pid, so rank r's events get pid r and its process is named
// "rank r"; tids stay as they were (thread tracks, the GPU and communication tracks), since a
// viewer keys threads by (pid, tid). Times move by the rank's offset: trace times are
// microseconds since that rank's session started, so offsets_ns[r] is where that start lies on
// the common time line (its session start on the common clock minus the earliest rank's).
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/reports.h"

namespace prism::profiler {

namespace {
using json = nlohmann::ordered_json;
}

std::string merge_rank_traces(const std::vector<std::string>& traces,
                              const std::vector<int64_t>& offsets_ns) {
  if (traces.size() != offsets_ns.size()) {
    throw std::invalid_argument("merge_rank_traces: " + std::to_string(traces.size()) +
                                " traces but " + std::to_string(offsets_ns.size()) +
                                " clock offsets; give one offset per rank");
  }
  json events = json::array();
  json others = json::array();
  for (size_t r = 0; r < traces.size(); ++r) {
    const std::string rank = "rank " + std::to_string(r);
    json doc = json::parse(traces[r], nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("traceEvents") ||
        !doc["traceEvents"].is_array()) {
      throw std::invalid_argument("merge_rank_traces: the trace of " + rank +
                                  " is not a Chrome trace (a JSON object with a traceEvents "
                                  "array)");
    }
    const double shift_us = static_cast<double>(offsets_ns[r]) / 1000.0;
    bool named = false;
    for (json& e : doc["traceEvents"]) {
      if (!e.is_object()) {
        throw std::invalid_argument("merge_rank_traces: the trace of " + rank +
                                    " has an event that is not a JSON object");
      }
      e["pid"] = static_cast<int64_t>(r);
      if (e.contains("ts") && e["ts"].is_number()) e["ts"] = e["ts"].get<double>() + shift_us;
      if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") {
        e["args"] = json{{"name", rank}};
        named = true;
      }
      events.push_back(std::move(e));
    }
    if (!named) {
      events.push_back(json{{"name", "process_name"},
                            {"ph", "M"},
                            {"pid", static_cast<int64_t>(r)},
                            {"tid", 0},
                            {"args", {{"name", rank}}}});
    }
    // Ranks top to bottom in rank order, whatever order a viewer would pick by pid.
    events.push_back(json{{"name", "process_sort_index"},
                          {"ph", "M"},
                          {"pid", static_cast<int64_t>(r)},
                          {"tid", 0},
                          {"args", {{"sort_index", static_cast<int64_t>(r)}}}});
    others.push_back(doc.contains("otherData") ? doc["otherData"] : json::object());
  }
  json out{{"traceEvents", std::move(events)},
           {"displayTimeUnit", "ns"},
           {"otherData", {{"ranks", std::move(others)}}}};
  return out.dump();
}

}  // namespace prism::profiler
