// The lab's text report and JSON rows.
#include <cmath>

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

}  // namespace

std::string format_lab(const LabResult& r) {
  const bool gpu = r.device == Device::cuda;
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
        "prism lab {} - {} thread{} - float32, validated against '{}' "
        "(normalized error <= {:.0e})\n",
        r.op, r.threads, r.threads == 1 ? "" : "s", r.baseline, r.tolerance);
    if (r.peak_gflops > 0) {
      out +=
          fmt::format("machine peak at {} thread{}: {:.1f} GFLOP/s, {:.1f} GB/s (prism machine)\n",
                      r.threads, r.threads == 1 ? "" : "s", r.peak_gflops, r.peak_gbs);
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
  for (const TimingRow& row : r.rows) {
    if (row.size != current) {
      current = row.size;
      out += fmt::format("\nsize {}: {}FLOP, {}B moved at least\n", row.size,
                         quantity(static_cast<double>(row.flops), ""),
                         quantity(static_cast<double>(row.bytes), ""));
      out += fmt::format("  {:<14} {:<10} {:>10} {:>7} {:>9} {:>8} {:>6} {:>6} {:>22} {:>22}\n",
                         "variant", "tag", "median", "+-err", "GFLOP/s", "GB/s", "%peak", "%roof",
                         "x naive [95% CI]", "x reference [95% CI]");
    }
    if (!row.timed) {
      out += fmt::format("  {:<14} {:<10} {}\n", row.variant, row.tag, row.note);
      continue;
    }
    const double pct_peak = std::max(row.pct_peak_flops, row.pct_peak_bw);
    std::string flags;
    if (row.unstable) flags += " unstable";
    if (row.faster_than_ref) flags += " faster";
    if (row.slower_than_ref) flags += " slower";
    out += fmt::format(
        "  {:<14} {:<10} {:>10} {:>6.1f}% {:>9.2f} {:>8.2f} {:>6} {:>6} {:>22} {:>22}{}\n",
        row.variant, row.tag, time_str(row.median_ns), row.err_pct, row.gflops, row.gbs,
        pct_peak > 0 ? fmt::format("{:.0f}", pct_peak) : "-",
        row.pct_roofline > 0 ? fmt::format("{:.0f}", row.pct_roofline) : "-",
        ratio_str(row.x_naive, row.x_naive_low, row.x_naive_high),
        ratio_str(row.x_ref, row.x_ref_low, row.x_ref_high), flags);
  }
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
              {"threads", r.threads},
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
      if (r.peak_gflops > 0) j["pct_peak_flops"] = row.pct_peak_flops;
      if (r.peak_gbs > 0) j["pct_peak_bw"] = row.pct_peak_bw;
      if (row.x_naive > 0) j["speedup_vs_naive"] = {row.x_naive, row.x_naive_low, row.x_naive_high};
      if (row.x_ref > 0) j["speedup_vs_reference"] = {row.x_ref, row.x_ref_low, row.x_ref_high};
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
  json doc = {{"op", r.op},
              {"device", device_name(r.device)},
              {"threads", r.threads},
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
