// The op table: one line per aggregated row, largest self time first, then the meta footer.
//
// Each numeric column picks one unit for all its rows (the largest value decides), so a reader
// compares digits, not suffixes. Rates stay in GFLOP/s and GB/s whatever their size: those are
// the units machine peaks are quoted in. A rate comes from self time, because time spent in
// nested ops did not do this op's work. A GPU op's host time is only the launch, so when a
// profile holds GPU times a "gpu" column shows them, and GPU rows take their rates from it.
// A profile that counted events (--counters) gets a column per figure the machine could count
// (counter_columns), and a line under the table saying what was counted, or why not.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "profiler/reports.h"
#include "profiler/text_table.h"

namespace prism::profiler {

using namespace text;

namespace {

std::string op_label(const OpRow& r, const TableOptions& opts) {
  if (!opts.show_grad_of || r.grad_of.empty()) return r.name;
  return fmt::format("{}  ({})", r.name, r.grad_of);
}

// "2", or "1-2" when some calls ran serially (below the kernel's grain) and some in parallel;
// "-" for a GPU row, whose host thread only queues the work.
std::string threads_label(const OpRow& r) {
  if (r.device != "cpu") return "-";
  if (r.threads_min == r.threads_max) return fmt::format("{}", r.threads_max);
  return fmt::format("{}-{}", r.threads_min, r.threads_max);
}

// The event-count columns of a counting profile, for the counters that opened: each a ratio a
// learner can compare across ops of any size. IPC = instructions / cycles (a few on a modern
// core when it is busy, well under 1 when it waits for memory); cache misses per call and per
// 1000 FLOPs (the naive matmul's problem in one number); branch misses as a share of branches;
// page faults (first touch of fresh memory) and context switches, summed over the calls.
struct CounterColumn {
  const char* header;
  uint8_t needs;  // the counters it is computed from
  std::string (*cell)(const OpRow& r);
};

std::string ratio_cell(double num, double den, int decimals) {
  if (!(den > 0)) return "-";
  return fmt::format("{:.{}f}", num / den, decimals);
}

std::string ipc_cell(const OpRow& r) {
  return ratio_cell(static_cast<double>(r.counters.get(Counter::instructions)),
                    static_cast<double>(r.counters.get(Counter::cycles)), 2);
}
std::string misses_per_call_cell(const OpRow& r) {
  return ratio_cell(static_cast<double>(r.counters.get(Counter::cache_misses)),
                    static_cast<double>(r.counted_calls), 1);
}
std::string misses_per_kflop_cell(const OpRow& r) {
  // The FLOPs of the counted calls: a row's calls share one op, so in proportion of calls.
  const double flops = r.calls > 0
                           ? static_cast<double>(r.cost.flops) *
                                 static_cast<double>(r.counted_calls) / static_cast<double>(r.calls)
                           : 0;
  return ratio_cell(1000.0 * static_cast<double>(r.counters.get(Counter::cache_misses)), flops, 3);
}
std::string branch_miss_cell(const OpRow& r) {
  return ratio_cell(100.0 * static_cast<double>(r.counters.get(Counter::branch_misses)),
                    static_cast<double>(r.counters.get(Counter::branches)), 2);
}
std::string page_faults_cell(const OpRow& r) {
  return fmt::format("{}", r.counters.get(Counter::page_faults));
}
std::string context_switches_cell(const OpRow& r) {
  return fmt::format("{}", r.counters.get(Counter::context_switches));
}

const CounterColumn kCounterColumns[] = {
    {"IPC", static_cast<uint8_t>(counter_bit(Counter::cycles) | counter_bit(Counter::instructions)),
     ipc_cell},
    {"cache miss/call", counter_bit(Counter::cache_misses), misses_per_call_cell},
    {"miss/kFLOP", counter_bit(Counter::cache_misses), misses_per_kflop_cell},
    {"br miss %",
     static_cast<uint8_t>(counter_bit(Counter::branches) | counter_bit(Counter::branch_misses)),
     branch_miss_cell},
    {"page faults", counter_bit(Counter::page_faults), page_faults_cell},
    {"ctx sw", counter_bit(Counter::context_switches), context_switches_cell},
};

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
    bool other_device = false, gpu = false;
    for (const OpRow& r : rows) {
      gpu = gpu || r.gpu_ns >= 0;
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
    add("threads", false);
    add("calls", false);
    add(fmt::format("total {}", tu.name), false);
    add(fmt::format("self {}", tu.name), false);
    add("self %", false);
    if (gpu) add(fmt::format("gpu {}", tu.name), false);
    add(fu.name, false);
    add("GFLOP/s", false);
    add(bu.name, false);
    add("GB/s", false);
    add("allocs", false);
    add(fmt::format("alloc {}", au.name), false);
    std::vector<const CounterColumn*> counter_cols;
    if (p.counters.enabled) {
      for (const CounterColumn& cc : kCounterColumns) {
        if ((p.counters.mask & cc.needs) == cc.needs) counter_cols.push_back(&cc);
      }
    }
    for (const CounterColumn* cc : counter_cols) add(cc->header, false);

    for (const OpRow& r : rows) {
      size_t c = 0;
      auto put = [&](std::string s) { cols[c++].cells.push_back(std::move(s)); };
      put(op_label(r, opts));
      put(phase_name(r.phase));
      if (other_device) put(r.device);
      put(r.variant.empty() ? "-" : r.variant);
      put(threads_label(r));
      put(fmt::format("{}", r.calls));
      put(fmt::format("{:.3f}", static_cast<double>(r.total_ns) / tu.scale));
      put(fmt::format("{:.3f}", static_cast<double>(r.self_ns) / tu.scale));
      put(fmt::format("{:.1f}", percent(r.self_ns, op_ns)));
      if (gpu) {
        put(r.gpu_ns < 0 ? std::string("-")
                         : fmt::format("{:.3f}", static_cast<double>(r.gpu_ns) / tu.scale));
      }
      const int64_t work_ns = r.gpu_ns >= 0 ? r.gpu_ns : r.self_ns;
      put(amount(r.cost.flops, fu, 3));
      put(rate(r.cost.flops, work_ns));
      put(amount(r.cost.bytes, bu, 3));
      put(rate(r.cost.bytes, work_ns));
      put(r.allocs == 0 ? std::string("-") : fmt::format("{}", r.allocs));
      put(amount(r.alloc_bytes, au, 3));
      for (const CounterColumn* cc : counter_cols) {
        // A row none of whose calls was counted (another thread's) has no figures, not zeros.
        put(r.counted_calls > 0 && (r.counters.mask & cc->needs) == cc->needs ? cc->cell(r) : "-");
      }
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
  out += format_collectives(p);
  out += '\n';
  out += counters_line(p.counters);
  out += footer(p.meta);
  return out;
}

}  // namespace prism::profiler
