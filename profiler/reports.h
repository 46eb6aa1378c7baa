// The profile's outputs: a table for people, a Chrome/Perfetto trace, and a JSON dump for tools.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "profiler/aggregate.h"
#include "profiler/output_file.h"  // write_text_file: every report is written atomically

namespace prism::profiler {

struct TableOptions {
  int max_rows = 30;         // 0 = all rows
  bool show_grad_of = true;  // backward rows name the gradient they compute
};

// The aggregated op table followed by a meta footer (threads, compiler, flags, clock, overhead).
std::string format_table(const Profile& p, const TableOptions& opts = {});

// What the nn layer knows about a module path, for the tree report's type and params columns.
struct ModuleInfo {
  std::string type;     // "Linear"
  int64_t params = -1;  // -1: unknown
};

struct TreeOptions {
  int max_depth = 0;                          // 0 = every level
  std::map<std::string, ModuleInfo> modules;  // by path ("model.fc1")
};

// The collectives table (collective.h: calls, bytes, in-flight time, algbw and busbw per
// collective and world size), a blank line first; "" when the profile holds no collectives.
// format_table prints it under the op table.
std::string format_collectives(const Profile& p);

// The module tree: one row per scope path (modules, user scopes), indented, with parameters,
// calls, forward and backward FLOPs and time, allocations and share of the op time.
std::string format_tree(const Profile& p, const TreeOptions& opts = {});

// Chrome trace event format (chrome://tracing, ui.perfetto.dev): op and scope records as
// complete ("X") events, live memory as counter ("C") events. Returns the JSON text.
std::string trace_json(const Profile& p);

// Machine-readable dump: {"meta", "ops": [aggregated rows], "memory": {peaks, sample count,
// "timeline": live bytes over the window}, "modules": [the module tree's rows], "totals"}, and
// "collectives": [aggregate_collectives' rows] (empty when the run had none).
std::string profile_json(const Profile& p);

// One trace of a multi-rank run from each rank's trace_json text: rank r's events get "pid": r
// and their timestamps shifted by offsets_ns[r] (the rank's clock offset, added: rank r's
// clock + offset = the common clock), its process is named "rank r", thread names are kept, and
// otherData becomes {"ranks": [each rank's otherData]}. Throws std::invalid_argument naming the
// rank when a text is not a trace or the two vectors differ in length.
std::string merge_rank_traces(const std::vector<std::string>& traces,
                              const std::vector<int64_t>& offsets_ns);

}  // namespace prism::profiler
