// The lab's text report and JSON rows.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernels/lab/lab.h"

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
  return {r.peak_gflops, r.peak_gbs};
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
        out += fmt::format("machine peak at {}: {:.1f} GFLOP/s, {:.1f} GB/s (prism machine)\n",
                           threads_str(n), peak.gflops, peak.gbs);
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
  std::vector<const TimingRow*> size_rows;  // for the thread efficiency line under each size
  for (const TimingRow& row : r.rows) {
    if (row.size != current) {
      if (multi && !size_rows.empty()) out += efficiency_line(r, size_rows);
      size_rows.clear();
      current = row.size;
      out += fmt::format("\nsize {}: {}FLOP, {}B moved at least\n", row.size,
                         quantity(static_cast<double>(row.flops), ""),
                         quantity(static_cast<double>(row.bytes), ""));
      out += fmt::format("  {:<14} {:<10}{} {:>10} {:>7} {:>9} {:>8} {:>6} {:>6} {:>22} {:>22}{}\n",
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
    out += fmt::format(
        "  {:<14} {:<10}{} {:>10} {:>6.1f}% {:>9.2f} {:>8.2f} {:>6} {:>6} {:>22} {:>22}{}{}\n",
        row.variant, row.tag, threads_col, time_str(row.median_ns), row.err_pct, row.gflops,
        row.gbs, pct_peak > 0 ? fmt::format("{:.0f}", pct_peak) : "-",
        row.pct_roofline > 0 ? fmt::format("{:.0f}", row.pct_roofline) : "-",
        ratio_str(row.x_naive, row.x_naive_low, row.x_naive_high),
        ratio_str(row.x_ref, row.x_ref_low, row.x_ref_high),
        multi ? fmt::format(" {:>22}",
                            ratio_str(row.x_threads, row.x_threads_low, row.x_threads_high))
              : "",
        flags);
  }
  if (multi && !size_rows.empty()) out += efficiency_line(r, size_rows);
  if (gpu) {
    out +=
        "\n%peak: the larger of GFLOP/s over the measured cuBLAS SGEMM rate and GB/s over the "
        "measured triad bandwidth\n(what this GPU reaches in practice, below its datasheet "
        "peak). %roof: GFLOP/s over min(SGEMM, intensity x triad).\nTimes: wall clock per call "
        "over back-to-back launches, one synchronisation per sample. faster/slower:\n"
        "Mann-Whitney U against the CUDA reference, one-sided p < 0.05.\n";
    return out;
  }
  out +=
      "\n%peak: the larger of GFLOP/s over peak FLOP/s and GB/s over peak bandwidth. %roof: "
      "GFLOP/s over the roofline\nmin(peak, intensity x bandwidth). faster/slower: "
      "Mann-Whitney U against the reference, one-sided p < 0.05.\n";
  if (multi) {
    out += fmt::format(
        "Each %peak uses the peaks at its row's thread count; x naive and x reference compare "
        "rows at the same count.\n{}: the variant's time at {} over its time at this "
        "count. Thread efficiency: that\nspeed-up over the ideal one (count / {}).\n",
        x_first.substr(0, x_first.find(" [")), threads_str(r.threads), r.threads);
  }
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
      j["samples_ns"] = row.samples_ns;
      j["gflops"] = row.gflops;
      j["gbs"] = row.gbs;
      const PeakRates peak = peak_of(r, row.threads);
      if (peak.gflops > 0) j["pct_peak_flops"] = row.pct_peak_flops;
      if (peak.gbs > 0) j["pct_peak_bw"] = row.pct_peak_bw;
      if (row.x_naive > 0) j["speedup_vs_naive"] = {row.x_naive, row.x_naive_low, row.x_naive_high};
      if (row.x_ref > 0) j["speedup_vs_reference"] = {row.x_ref, row.x_ref_low, row.x_ref_high};
      if (row.x_threads > 0) {
        j["speedup_vs_first_threads"] = {row.x_threads, row.x_threads_low, row.x_threads_high};
      }
    } else {
      j["note"] = row.note;
    }
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
  return doc.dump(2) + "\n";
}

}  // namespace prism::lab
