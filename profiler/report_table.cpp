// The op table: one line per aggregated row, largest self time first, then the meta footer.
//
// Each numeric column picks one unit for all its rows (the largest value decides), so a reader
// compares digits, not suffixes. Rates stay in GFLOP/s and GB/s whatever their size: those are
// the units machine peaks are quoted in. A rate comes from self time, because time spent in
// nested ops did not do this op's work.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "profiler/reports.h"

namespace prism::profiler {

namespace {

struct Unit {
  const char* name;
  double scale;  // raw value / scale = shown value
};

// Largest unit in `units` (ordered big to small) that the column's maximum reaches.
template <size_t N>
Unit pick_unit(const Unit (&units)[N], int64_t max_value) {
  for (const Unit& u : units) {
    if (static_cast<double>(max_value) >= u.scale) return u;
  }
  return units[N - 1];
}

constexpr Unit kTimeUnits[] = {{"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}};
constexpr Unit kFlopUnits[] = {
    {"TFLOP", 1e12}, {"GFLOP", 1e9}, {"MFLOP", 1e6}, {"kFLOP", 1e3}, {"FLOP", 1}};
// Decimal bytes, to match GB/s as bandwidths are quoted.
constexpr Unit kByteUnits[] = {{"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}, {"B", 1}};

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

struct Column {
  std::string header;
  bool left;  // text columns align left, numbers right
  std::vector<std::string> cells;
  size_t width = 0;
};

std::string op_label(const OpRow& r, const TableOptions& opts) {
  if (!opts.show_grad_of || r.grad_of.empty()) return r.name;
  return fmt::format("{}  ({})", r.name, r.grad_of);
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
std::string or_unknown(const std::string& s, const char* unknown = "?") {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return unknown;
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

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

}  // namespace

std::string format_table(const Profile& p, const TableOptions& opts) {
  const std::vector<OpRow> all = aggregate_ops(p);
  const int64_t op_ns = total_op_self_ns(p);
  const int64_t wall = p.wall_ns();
  int64_t calls = 0;
  for (const OpRow& r : all) calls += r.calls;

  std::string out = fmt::format(
      "prism profile: wall {}, inside ops {} ({:.1f}% of wall), {} op call{}\n\n", human_time(wall),
      human_time(op_ns), percent(op_ns, wall), calls, calls == 1 ? "" : "s");

  size_t shown = all.size();
  if (opts.max_rows > 0) shown = std::min(shown, static_cast<size_t>(opts.max_rows));
  const std::vector<OpRow> rows(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(shown));

  if (all.empty()) {
    out += "(no op records)\n";
  } else {
    int64_t max_total = 0, max_flops = 0, max_bytes = 0, max_alloc = 0;
    bool other_device = false;
    for (const OpRow& r : rows) {
      max_total = std::max(max_total, r.total_ns);
      max_flops = std::max(max_flops, r.cost.flops);
      max_bytes = std::max(max_bytes, r.cost.bytes);
      max_alloc = std::max(max_alloc, r.alloc_bytes);
      other_device = other_device || r.device != "cpu";
    }
    const Unit tu = pick_unit(kTimeUnits, max_total);
    const Unit fu = pick_unit(kFlopUnits, max_flops);
    const Unit bu = pick_unit(kByteUnits, max_bytes);
    const Unit au = pick_unit(kByteUnits, max_alloc);

    std::vector<Column> cols;
    auto add = [&](std::string header, bool left) -> std::vector<std::string>& {
      cols.push_back(Column{std::move(header), left, {}});
      return cols.back().cells;
    };
    // Headers here, cells below: the put() calls must follow this column order.
    add("op", true);
    add("phase", true);
    if (other_device) add("device", true);  // only shown when it can tell rows apart
    add("variant", true);
    add("calls", false);
    add(fmt::format("total {}", tu.name), false);
    add(fmt::format("self {}", tu.name), false);
    add("self %", false);
    add(fu.name, false);
    add("GFLOP/s", false);
    add(bu.name, false);
    add("GB/s", false);
    add("allocs", false);
    add(fmt::format("alloc {}", au.name), false);

    for (const OpRow& r : rows) {
      size_t c = 0;
      auto put = [&](std::string s) { cols[c++].cells.push_back(std::move(s)); };
      put(op_label(r, opts));
      put(phase_name(r.phase));
      if (other_device) put(r.device);
      put(r.variant.empty() ? "-" : r.variant);
      put(fmt::format("{}", r.calls));
      put(fmt::format("{:.3f}", static_cast<double>(r.total_ns) / tu.scale));
      put(fmt::format("{:.3f}", static_cast<double>(r.self_ns) / tu.scale));
      put(fmt::format("{:.1f}", percent(r.self_ns, op_ns)));
      put(amount(r.cost.flops, fu, 3));
      put(rate(r.cost.flops, r.self_ns));
      put(amount(r.cost.bytes, bu, 3));
      put(rate(r.cost.bytes, r.self_ns));
      put(r.allocs == 0 ? std::string("-") : fmt::format("{}", r.allocs));
      put(amount(r.alloc_bytes, au, 3));
    }
    out += render(cols);

    if (shown < all.size()) {
      int64_t hidden_ns = 0;
      for (size_t i = shown; i < all.size(); ++i) hidden_ns += all[i].self_ns;
      const size_t hidden = all.size() - shown;
      out += fmt::format("... {} more row{} omitted ({:.1f}% of op self time; max_rows = {})\n",
                         hidden, hidden == 1 ? "" : "s", percent(hidden_ns, op_ns), opts.max_rows);
    }
  }
  out += '\n';
  out += footer(p.meta);
  return out;
}

}  // namespace prism::profiler
