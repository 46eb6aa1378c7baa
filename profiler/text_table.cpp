#include "profiler/text_table.h"

#include <algorithm>

#include <fmt/format.h>

namespace prism::profiler::text {

std::string human_time(int64_t ns) {
  Unit u = pick_unit(kTimeUnits, ns);
  return fmt::format("{:.3f} {}", static_cast<double>(ns) / u.scale, u.name);
}

// A scaled amount; an exact zero prints as "-" so empty cells (a reshape's FLOPs) stand out
// from small ones.
std::string amount(int64_t v, Unit u, int decimals) {
  if (v == 0) return "-";
  return fmt::format("{:.{}f}", static_cast<double>(v) / u.scale, decimals);
}

// Work per self nanosecond is directly giga-units per second.
std::string rate(int64_t work, int64_t self_ns) {
  if (work == 0 || self_ns <= 0) return "-";
  return fmt::format("{:.2f}", static_cast<double>(work) / static_cast<double>(self_ns));
}

double percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string render(std::vector<Column>& cols) {
  for (Column& c : cols) {
    c.width = c.header.size();
    for (const std::string& s : c.cells) c.width = std::max(c.width, s.size());
  }
  const size_t n_rows = cols.empty() ? 0 : cols[0].cells.size();
  std::string out;
  auto line = [&](auto cell_of) {
    std::string l;
    for (size_t c = 0; c < cols.size(); ++c) {
      if (c) l += "  ";
      const std::string& s = cell_of(cols[c]);
      if (cols[c].left) {
        l += fmt::format("{:<{}}", s, cols[c].width);
      } else {
        l += fmt::format("{:>{}}", s, cols[c].width);
      }
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();  // a text last column pads
    out += l;
    out += '\n';
  };
  line([](const Column& c) -> const std::string& { return c.header; });
  size_t total_width = 0;
  for (const Column& c : cols) total_width += c.width;
  total_width += cols.empty() ? 0 : 2 * (cols.size() - 1);
  out += std::string(total_width, '-');
  out += '\n';
  for (size_t r = 0; r < n_rows; ++r) {
    line([r](const Column& c) -> const std::string& { return c.cells[r]; });
  }
  return out;
}

// Meta strings can arrive padded (an empty CMAKE_CXX_FLAGS leaves blanks); print "?" for
// nothing rather than an empty field.
namespace {
std::string or_unknown(const std::string& s, const char* unknown = "?") {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return unknown;
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

}  // namespace

std::string footer(const Meta& m) {
  std::string out;
  out += fmt::format("prism {} | {} thread{} | {} | flags: {} | build: {}\n", or_unknown(m.version),
                     m.threads, m.threads == 1 ? "" : "s", or_unknown(m.compiler),
                     or_unknown(m.flags, "(none)"), or_unknown(m.build_type));
  out += fmt::format(
      "clock: {}, resolution {:.0f} ns | profiler overhead {:.1f} ns/op (included in the "
      "times above)\n",
      or_unknown(m.clock), m.clock_resolution_ns, m.overhead_ns_per_op);
  out +=
      "FLOP counts a multiply-add as 2 (MACs are in the JSON); bytes are the minimum traffic "
      "(each input read once, each output written once), so GB/s is a lower bound.\n";
  return out;
}

}  // namespace prism::profiler::text
