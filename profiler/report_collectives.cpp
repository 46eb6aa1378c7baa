// The collectives table: one line per (collective, world size), printed under the op table when
// the profile holds collective spans (collective.h says what algbw and busbw mean).
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "profiler/reports.h"
#include "profiler/text_table.h"

namespace prism::profiler {

using namespace text;

std::string format_collectives(const Profile& p) {
  const std::vector<CollectiveRow> rows = aggregate_collectives(p);
  if (rows.empty()) return "";
  int64_t max_bytes = 0, max_ns = 0;
  for (const CollectiveRow& r : rows) {
    max_bytes = std::max(max_bytes, r.bytes / std::max<int64_t>(r.calls, 1));
    max_ns = std::max(max_ns, r.total_ns);
  }
  const Unit bu = pick_unit(kByteUnits, max_bytes);
  const Unit tu = pick_unit(kTimeUnits, max_ns);

  std::vector<Column> cols;
  auto add = [&](std::string header, bool left) {
    cols.push_back(Column{std::move(header), left, {}});
  };
  add("collective", true);
  add("ranks", false);
  add("calls", false);
  add(fmt::format("{}/call", bu.name), false);
  add(fmt::format("in flight {}", tu.name), false);
  add(fmt::format("median {}", tu.name), false);
  add("algbw GB/s", false);
  add("busbw GB/s", false);
  for (const CollectiveRow& r : rows) {
    size_t c = 0;
    auto put = [&](std::string s) { cols[c++].cells.push_back(std::move(s)); };
    put(r.op);
    put(fmt::format("{}", r.world_size));
    put(fmt::format("{}", r.calls));
    put(fmt::format("{:.3f}",
                    static_cast<double>(r.bytes) / static_cast<double>(r.calls) / bu.scale));
    put(fmt::format("{:.3f}", static_cast<double>(r.total_ns) / tu.scale));
    put(fmt::format("{:.3f}", static_cast<double>(r.median_ns) / tu.scale));
    put(r.total_ns > 0 ? fmt::format("{:.2f}", r.algbw_gbs) : std::string("-"));
    put(r.total_ns > 0 ? fmt::format("{:.2f}", r.busbw_gbs) : std::string("-"));
  }
  std::string out = "\ncollectives (in flight: start to completion, overlapping other ops):\n";
  out += render(cols);
  out +=
      "algbw = bytes / in-flight time. busbw = algbw * 2(n-1)/n for allreduce, (n-1)/n for\n"
      "allgather and reducescatter, 1 for broadcast and reduce (nccl-tests; n = ranks).\n";
  return out;
}

}  // namespace prism::profiler
