// The lab's text report and JSON rows.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernels/lab/lab.h"
#include "profiler/counters_json.h"

namespace prism::lab {
namespace {

std::string time_str(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.2f} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.3f} ms", ns / 1e6);
  return fmt::format("{:.3f} s", ns / 1e9);
}

std::string quantity(double v, const char* unit) {
  if (v >= 1e9) return fmt::format("{:.2f} G{}", v / 1e9, unit);
  if (v >= 1e6) return fmt::format("{:.2f} M{}", v / 1e6, unit);
  if (v >= 1e3) return fmt::format("{:.2f} k{}", v / 1e3, unit);
  return fmt::format("{:.0f} {}", v, unit);
}

std::string ratio_str(double x, double lo, double hi) {
  if (x <= 0) return "-";
  return fmt::format("{:.2f}x [{:.2f}, {:.2f}]", x, lo, hi);
}

std::string error_str(double e) {
  return std::isnan(e) ? "NaN" : fmt::format("{:.1e}", e);
}

std::string threads_str(int n) {
  return fmt::format("{} thread{}", n, n == 1 ? "" : "s");
}

// --counters: a row's event count per call (its samples' total over their calls).
double per_call(const TimingRow& row, profiler::Counter c) {
  return row.counted_calls > 0
             ? static_cast<double>(row.events[static_cast<int>(c)]) / row.counted_calls
             : 0;
}

// The event counters of every timed row, per call: IPC (instructions per cycle), cache misses
// per call and per 1000 FLOPs (what makes a naive matmul slow: its inner loop walks a column of
// B, one cache line per element), branch misses per 100 branches, page faults and context
// switches per call. A column per figure the machine could count; then what was counted, and
// the notice when some events were refused.
std::string counters_section(const LabResult& r) {
  using profiler::Counter;
  const uint8_t mask = r.counters.mask;
  auto has = [mask](Counter c) { return (mask & profiler::counter_bit(c)) != 0; };
  auto ratio = [](double num, double den, int decimals) {
    return den > 0 ? fmt::format("{:.{}f}", num / den, decimals) : std::string("-");
  };
  std::vector<std::string> headers{"variant", "size", "threads"};
  const bool ipc = has(Counter::cycles) && has(Counter::instructions);
  const bool misses = has(Counter::cache_misses);
  const bool branches = has(Counter::branches) && has(Counter::branch_misses);
  if (ipc) headers.push_back("IPC");
  if (misses) headers.insert(headers.end(), {"cache miss/call", "miss/kFLOP"});
  if (branches) headers.push_back("br miss %");
  if (has(Counter::page_faults)) headers.push_back("page faults/call");
  if (has(Counter::context_switches)) headers.push_back("ctx sw/call");
  std::vector<std::vector<std::string>> rows{headers};
  for (const TimingRow& row : r.rows) {
    if (!row.timed) continue;
    std::vector<std::string> cells{row.variant, row.size, std::to_string(row.threads)};
    if (row.counted_calls == 0 || row.event_mask == 0) {
      cells.resize(headers.size(), "-");
      rows.push_back(cells);
      continue;
    }
    if (ipc)
      cells.push_back(
          ratio(per_call(row, Counter::instructions), per_call(row, Counter::cycles), 2));
    if (misses) {
      cells.push_back(fmt::format("{:.1f}", per_call(row, Counter::cache_misses)));
      cells.push_back(
          ratio(1000 * per_call(row, Counter::cache_misses), static_cast<double>(row.flops), 3));
    }
    if (branches) {
      cells.push_back(
          ratio(100 * per_call(row, Counter::branch_misses), per_call(row, Counter::branches), 2));
    }
    if (has(Counter::page_faults)) {
      cells.push_back(fmt::format("{:.3f}", per_call(row, Counter::page_faults)));
    }
    if (has(Counter::context_switches)) {
      cells.push_back(fmt::format("{:.3f}", per_call(row, Counter::context_switches)));
    }
    rows.push_back(cells);
  }
  std::vector<size_t> width(headers.size(), 0);
  for (const auto& cells : rows) {
    for (size_t i = 0; i < cells.size(); ++i) width[i] = std::max(width[i], cells[i].size());
  }
  std::string out = "\nevent counters per call, over the timed samples:\n";
  if (mask != 0) {
    for (const auto& cells : rows) {
      out += " ";
      for (size_t i = 0; i < cells.size(); ++i) {
        // Names left, figures right.
        out += i < 2 ? fmt::format(" {:<{}}", cells[i], width[i])
                     : fmt::format(" {:>{}}", cells[i], width[i]);
      }
      out += "\n";
    }
  }
  return out + profiler::counters_line(r.counters);
}

// "1 thread", "1 and 2 threads", "1, 2 and 4 threads".
std::string counts_str(const std::vector<int>& counts) {
  std::string out;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (i > 0) out += i + 1 == counts.size() ? " and " : ", ";
    out += std::to_string(counts[i]);
  }
  return out + (counts.size() == 1 && counts[0] == 1 ? " thread" : " threads");
}

// The count each variant's thread efficiency is reported at: the largest after the first.
int efficiency_count(const std::vector<int>& counts) {
  int best = 0;
  for (size_t i = 1; i < counts.size(); ++i) best = std::max(best, counts[i]);
  return best;
}

// "  thread efficiency at 2 threads (speed-up / 2): naive 97%, optimized 64%": each variant's
// speed-up over the first count divided by the ideal one (count / first count), at the largest
// later count, for the rows of one size.
std::string efficiency_line(const LabResult& r, const std::vector<const TimingRow*>& rows) {
  const int at = efficiency_count(r.thread_counts);
  std::string parts;
  for (const TimingRow* row : rows) {
    if (row->threads != at) continue;
    const std::string pct =
        row->x_threads > 0
            ? fmt::format("{:.0f}%", 100 * row->x_threads * r.threads / static_cast<double>(at))
            : "-";
    parts += (parts.empty() ? "" : ", ") + row->variant + " " + pct;
  }
  return fmt::format("  thread efficiency at {} (speed-up / {:g}): {}\n", threads_str(at),
                     static_cast<double>(at) / r.threads, parts);
}

// The peaks at a thread count of the result (those of the first count when it has no list).
PeakRates peak_of(const LabResult& r, int threads) {
  for (size_t i = 0; i < r.thread_counts.size() && i < r.peaks.size(); ++i) {
    if (r.thread_counts[i] == threads) return r.peaks[i];
  }
  return {r.peak_gflops, r.peak_gbs, {}};
}

// "L1 251.3, L2 120.4, L3 31.0, DRAM 15.3 GB/s": the roofs a row's bytes can fall under.
std::string roofs_str(const PeakRates& p) {
  std::string out;
  for (const profiler::LevelRoof& l : p.levels) {
    if (l.gbps > 0) out += fmt::format("{} {:.1f}, ", l.level, l.gbps);
  }
  return out + fmt::format("DRAM {:.1f} GB/s", p.gbs);
}

// %roof and the level it is against: "87 L1"; "-" when the peaks are unknown.
std::string roof_cell(const TimingRow& row) {
  if (row.pct_roofline <= 0) return "-";
  return fmt::format("{:.0f} {}", row.pct_roofline, row.roof_level);
}

}  // namespace

std::string format_lab(const LabResult& r) {
  const bool gpu = r.device == Device::cuda;
  // Several thread counts add a `threads` column, the speed-up over the first count and each
  // size's thread efficiency; with one, the report is as it always was.
  const std::vector<int> counts =
      r.thread_counts.empty() ? std::vector<int>{r.threads} : r.thread_counts;
  const bool multi = counts.size() > 1;
  const std::string x_first = "x " + threads_str(r.threads) + " [95% CI]";
  std::string out;
  if (gpu) {
    out = fmt::format(
        "prism lab {} - cuda: {} - float32, validated against the CPU's '{}' on the same inputs "
        "({} CPU thread{}; normalized error <= {:.0e})\n",
        r.op, r.device_name, r.baseline, r.threads, r.threads == 1 ? "" : "s", r.tolerance);
    if (r.peak_gflops > 0) {
      out += fmt::format(
          "GPU roof, measured now (not datasheet peaks): cuBLAS SGEMM {:.0f} GFLOP/s, triad "
          "{:.0f} GB/s\n",
          r.peak_gflops, r.peak_gbs);
    }
  } else {
    out = fmt::format(
        "prism lab {} - {} - float32, validated against '{}' (normalized error <= {:.0e})\n", r.op,
        counts_str(counts), r.baseline, r.tolerance);
    for (const int n : counts) {
      const PeakRates peak = peak_of(r, n);
      if (peak.gflops > 0) {
        out += fmt::format("machine peak at {}: {:.1f} GFLOP/s; bandwidth {} (prism machine)\n",
                           threads_str(n), peak.gflops, roofs_str(peak));
      }
    }
  }
  const size_t n_checks = r.validation.empty() ? 0 : r.validation.front().checks.size();
  out += fmt::format("\nvalidation on {} sizes (max |y - ref| / max |ref|):\n", n_checks);
  for (const VariantValidation& v : r.validation) {
    out += fmt::format("  {:<14} {:<10} {:<7} worst error {}\n", v.variant, v.tag,
                       v.valid ? "ok" : "FAILED", error_str(v.worst_error));
    for (const ValidationCheck& c : v.checks) {
      if (!c.ok) {
        out += fmt::format("      size {}: {} (error {})\n", c.size, c.what, error_str(c.error));
      }
    }
  }
  std::string current;
  bool above_roof = false;                  // a row's %roof over 100: explained below the tables
  std::vector<const TimingRow*> size_rows;  // for the thread efficiency line under each size
  for (const TimingRow& row : r.rows) {
    if (row.size != current) {
      if (multi && !size_rows.empty()) out += efficiency_line(r, size_rows);
      size_rows.clear();
      current = row.size;
      out += fmt::format("\nsize {}: {}FLOP, {}B moved at least\n", row.size,
                         quantity(static_cast<double>(row.flops), ""),
                         quantity(static_cast<double>(row.bytes), ""));
      out += fmt::format("  {:<14} {:<10}{} {:>10} {:>7} {:>9} {:>8} {:>6} {:>9} {:>22} {:>22}{}\n",
                         "variant", "tag", multi ? fmt::format(" {:>7}", "threads") : "", "median",
                         "+-err", "GFLOP/s", "GB/s", "%peak", "%roof", "x naive [95% CI]",
                         "x reference [95% CI]", multi ? fmt::format(" {:>22}", x_first) : "");
    }
    size_rows.push_back(&row);
    const std::string threads_col = multi ? fmt::format(" {:>7}", row.threads) : "";
    if (!row.timed) {
      out += fmt::format("  {:<14} {:<10}{} {}\n", row.variant, row.tag, threads_col, row.note);
      continue;
    }
    const double pct_peak = std::max(row.pct_peak_flops, row.pct_peak_bw);
    std::string flags;
    if (row.unstable) flags += " unstable";
    if (row.faster_than_ref) flags += " faster";
    if (row.slower_than_ref) flags += " slower";
    if (row.pct_roofline > 100) {
      flags += " above-roof";
      above_roof = true;
    }
    out += fmt::format(
        "  {:<14} {:<10}{} {:>10} {:>6.1f}% {:>9.2f} {:>8.2f} {:>6} {:>9} {:>22} {:>22}{}{}\n",
        row.variant, row.tag, threads_col, time_str(row.median_ns), row.err_pct, row.gflops,
        row.gbs, pct_peak > 0 ? fmt::format("{:.0f}", pct_peak) : "-", roof_cell(row),
        ratio_str(row.x_naive, row.x_naive_low, row.x_naive_high),
        ratio_str(row.x_ref, row.x_ref_low, row.x_ref_high),
        multi ? fmt::format(" {:>22}",
                            ratio_str(row.x_threads, row.x_threads_low, row.x_threads_high))
              : "",
        flags);
    // A variant that handed its calls to another: the time above is that other's.
    if (!row.runs_instead.empty()) {
      out += fmt::format("  {:<14} did not run as itself: {}; the row above times that\n", "",
                         row.runs_instead);
    }
  }
  if (multi && !size_rows.empty()) out += efficiency_line(r, size_rows);
  // Why a %roof can pass 100 when it happens: the bytes are the op's minimum, so it is the roof
  // that is low for this kernel, not the count that is high.
  const std::string above_roof_note =
      above_roof ? "above-roof: %roof over 100. The bytes are the op's minimum (each input read "
                   "once, the output written once),\nso the kernel moved at least that many, "
                   "faster than the triad that measured its level: a working set\nnear a level's "
                   "capacity is partly served by the faster level below, a kernel that mostly "
                   "reads\nstreams faster than the triad's mix of reads and writes, a roof "
                   "measured under load is low, and a\nlevel smaller than the system reports "
                   "(a virtual machine may see its host's whole L3) has a roof\nnear the next "
                   "level's (prism machine notes it).\n"
                 : "";
  if (gpu) {
    out +=
        "\n%peak: the larger of GFLOP/s over the measured cuBLAS SGEMM rate and GB/s over the "
        "measured triad bandwidth\n(what this GPU reaches in practice, below its datasheet "
        "peak). %roof: GFLOP/s over min(SGEMM, intensity x triad),\nthe triad on the GPU's own "
        "memory (DRAM). Times: wall clock per call over back-to-back launches, one\n"
        "synchronisation per sample. faster/slower: Mann-Whitney U against the CUDA reference, "
        "one-sided p < 0.05.\n";
    return out + above_roof_note;
  }
  out +=
      "\n%peak: the larger of GFLOP/s over peak FLOP/s and GB/s over the bandwidth of the row's "
      "roof. %roof: GFLOP/s\nover the roofline min(peak, intensity x bandwidth), then the roof: "
      "the memory level the op's bytes fit in\nat the row's thread count (L1, L2, L3 or DRAM; "
      "prism machine measures each), whose bandwidth it uses.\nfaster/slower: Mann-Whitney U "
      "against the reference, one-sided p < 0.05.\n";
  out += above_roof_note;
  if (multi) {
    out += fmt::format(
        "Each %peak uses the peaks at its row's thread count; x naive and x reference compare "
        "rows at the same count.\n{}: the variant's time at {} over its time at this "
        "count. Thread efficiency: that\nspeed-up over the ideal one (count / {}).\n",
        x_first.substr(0, x_first.find(" [")), threads_str(r.threads), r.threads);
  }
  if (r.counters.enabled) out += counters_section(r);
  return out;
}

std::string lab_json(const LabResult& r) {
  using nlohmann::json;
  json rows = json::array();
  for (const TimingRow& row : r.rows) {
    json j = {{"op", r.op},
              {"device", device_name(r.device)},
              {"variant", row.variant},
              {"tag", row.tag},
              {"size", row.size},
              {"threads", row.threads},
              {"valid", row.valid},
              {"timed", row.timed},
              {"flops", row.flops},
              {"bytes", row.bytes},
              {"workspace_bytes", row.workspace_bytes}};
    if (row.timed) {
      j["median_ns"] = row.median_ns;
      j["ci_low_ns"] = row.ci_low_ns;
      j["ci_high_ns"] = row.ci_high_ns;
      j["mad_ns"] = row.mad_ns;
      j["err_pct"] = row.err_pct;
      j["unstable"] = row.unstable;
      j["calls_per_sample"] = row.calls_per_sample;
      if (r.counters.enabled) {
        // Per call, over the timed samples; null for what was not counted.
        json events = json::object();
        for (int e = 0; e < profiler::kNumCounters; ++e) {
          const auto c = static_cast<profiler::Counter>(e);
          events[profiler::counter_name(c)] =
              row.counted_calls > 0 && (row.event_mask & profiler::counter_bit(c))
                  ? json(per_call(row, c))
                  : json(nullptr);
        }
        j["events_per_call"] = std::move(events);
        j["counted_calls"] = row.counted_calls;
      }
      j["samples_ns"] = row.samples_ns;
      j["gflops"] = row.gflops;
      j["gbs"] = row.gbs;
      const PeakRates peak = peak_of(r, row.threads);
      if (peak.gflops > 0) j["pct_peak_flops"] = row.pct_peak_flops;
      if (peak.gbs > 0) j["pct_peak_bw"] = row.pct_peak_bw;
      if (row.roof_gbs > 0) {
        // The memory level the row's bytes fit in, the bandwidth %roof and pct_peak_bw use.
        j["roof_level"] = row.roof_level;
        j["roof_gbs"] = row.roof_gbs;
        if (row.pct_roofline > 0) j["pct_roofline"] = row.pct_roofline;
      }
      if (row.x_naive > 0) j["speedup_vs_naive"] = {row.x_naive, row.x_naive_low, row.x_naive_high};
      if (row.x_ref > 0) j["speedup_vs_reference"] = {row.x_ref, row.x_ref_low, row.x_ref_high};
      if (row.x_threads > 0) {
        j["speedup_vs_first_threads"] = {row.x_threads, row.x_threads_low, row.x_threads_high};
      }
    } else {
      j["note"] = row.note;
    }
    if (!row.runs_instead.empty()) j["runs_instead"] = row.runs_instead;
    rows.push_back(std::move(j));
  }
  json validation = json::array();
  for (const VariantValidation& v : r.validation) {
    json checks = json::array();
    for (const ValidationCheck& c : v.checks) {
      checks.push_back({{"size", c.size},
                        {"ok", c.ok},
                        {"error", std::isnan(c.error) ? json(nullptr) : json(c.error)},
                        {"guards_ok", c.guards_ok},
                        {"what", c.what}});
    }
    validation.push_back({{"variant", v.variant},
                          {"tag", v.tag},
                          {"valid", v.valid},
                          {"checks", std::move(checks)}});
  }
  json doc = {
      {"op", r.op},
      {"device", device_name(r.device)},
      {"threads", r.threads},
      {"thread_counts", r.thread_counts.empty() ? std::vector<int>{r.threads} : r.thread_counts},
      {"baseline", r.baseline},
      {"tolerance", r.tolerance},
      {"peak_gflops", r.peak_gflops},
      {"peak_gbs", r.peak_gbs},
      {"validation", std::move(validation)},
      {"rows", std::move(rows)}};
  if (r.device == Device::cuda) {
    doc["gpu"] = r.device_name;
    doc["baseline_device"] = "cpu";
    // Not datasheet figures: what cuBLAS SGEMM and a triad kernel reach on this GPU.
    doc["peak_source"] = "measured: cuBLAS SGEMM (float32) and triad bandwidth";
  }
  if (r.counters.enabled) doc["event_counters"] = profiler::counter_info_json<json>(r.counters);
  return doc.dump(2) + "\n";
}

}  // namespace prism::lab
