// The module tree: where the time, FLOPs and memory went, module by module.
//
// Like the per-module views of FLOP counters (a FlopCounterMode or DeepSpeed-style report),
// with the measured time and the allocations in the same row. A row covers its whole subtree;
// backward work is charged to the module whose forward made it.
#include <algorithm>

#include <fmt/format.h>

#include "profiler/reports.h"
#include "profiler/text_table.h"

namespace prism::profiler {

using namespace text;

std::string format_tree(const Profile& p, const TreeOptions& opts) {
  const std::vector<ScopeRow> all = aggregate_scopes(p);
  const int64_t op_ns = total_op_self_ns(p);
  std::vector<ScopeRow> rows;
  for (const ScopeRow& r : all) {
    if (opts.max_depth <= 0 || r.depth <= opts.max_depth) rows.push_back(r);
  }
  std::string out = fmt::format("prism module tree: {} inside ops\n\n", human_time(op_ns));
  if (rows.empty()) return out + "(no scopes recorded)\n";

  int64_t max_flops = 0, max_ns = 0, max_alloc = 0;
  bool recompute = false;  // activation checkpointing ran: show its columns
  bool comm = false;       // a data-parallel run synced gradients: show its time column
  for (const ScopeRow& r : rows) {
    max_flops = std::max({max_flops, r.cost[0].flops, r.cost[1].flops, r.cost[3].flops});
    for (int64_t ns : r.self_ns) max_ns = std::max(max_ns, ns);
    max_alloc = std::max(max_alloc, r.alloc_bytes);
    recompute = recompute || r.self_ns[3] > 0 || r.cost[3].flops > 0;
    comm = comm || r.self_ns[4] > 0;
  }
  const Unit fu = pick_unit(kFlopUnits, max_flops);
  const Unit tu = pick_unit(kTimeUnits, max_ns);
  const Unit au = pick_unit(kByteUnits, max_alloc);

  std::vector<Column> cols;
  auto add = [&](std::string header, bool left) {
    cols.push_back(Column{std::move(header), left, {}});
  };
  add("module", true);
  add("type", true);
  add("params", false);
  add("calls", false);
  add(fmt::format("fwd {}", fu.name), false);
  add(fmt::format("bwd {}", fu.name), false);
  if (recompute) add(fmt::format("rec {}", fu.name), false);
  add(fmt::format("fwd {}", tu.name), false);
  add(fmt::format("bwd {}", tu.name), false);
  if (recompute) add(fmt::format("rec {}", tu.name), false);
  add(fmt::format("opt {}", tu.name), false);
  if (comm) add(fmt::format("comm {}", tu.name), false);
  add("time %", false);
  add(fmt::format("alloc {}", au.name), false);

  for (const ScopeRow& r : rows) {
    size_t c = 0;
    auto put = [&](std::string s) { cols[c++].cells.push_back(std::move(s)); };
    auto info = opts.modules.find(r.path);
    put(std::string(static_cast<size_t>(std::max(r.depth - 1, 0)) * 2, ' ') + r.name);
    put(info != opts.modules.end() && !info->second.type.empty() ? info->second.type : "-");
    put(info != opts.modules.end() && info->second.params >= 0
            ? fmt::format("{}", info->second.params)
            : "-");
    put(r.calls ? fmt::format("{}", r.calls) : "-");
    put(amount(r.cost[0].flops, fu, 3));
    put(amount(r.cost[1].flops, fu, 3));
    if (recompute) put(amount(r.cost[3].flops, fu, 3));
    put(amount(r.self_ns[0], tu, 3));
    put(amount(r.self_ns[1], tu, 3));
    if (recompute) put(amount(r.self_ns[3], tu, 3));
    put(amount(r.self_ns[2], tu, 3));
    if (comm) put(amount(r.self_ns[4], tu, 3));
    put(fmt::format("{:.1f}", percent(r.time_ns(), op_ns)));
    put(amount(r.alloc_bytes, au, 3));
  }
  out += render(cols);
  out +=
      "\nEach row includes its children. Backward time and FLOPs count for the module whose "
      "forward made them.\n";
  if (recompute) {
    out +=
        "rec: forward ops run again in backward by activation checkpointing (the price of the "
        "activations not kept).\n";
  }
  if (comm) {
    out +=
        "comm: ops run to exchange data between ranks (gradient sync); collectives in flight "
        "are in the op table's collectives section.\n";
  }
  return out;
}

}  // namespace prism::profiler
