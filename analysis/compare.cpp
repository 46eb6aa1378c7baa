#include "analysis/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "analysis/report_format.h"

namespace prism::analysis {

double max_relative_difference(const std::vector<double>& a, const std::vector<double>& b,
                               double* abs_out) {
  if (a.size() != b.size() || a.empty()) return std::nan("");
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    // max() drops a NaN (every comparison with it is false): a non-finite value says "not
    // comparable" here instead of vanishing.
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return std::nan("");
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(a[i]));
  }
  *abs_out = diff;
  return scale > 0 ? diff / scale : diff;
}

LossDifference loss_difference(const std::vector<double>& a, const std::vector<double>& b) {
  LossDifference d;
  d.steps = std::min(a.size(), b.size());
  if (d.steps == 0) return d;
  const std::vector<double> la(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(d.steps));
  const std::vector<double> lb(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(d.steps));
  d.relative = max_relative_difference(la, lb, &d.absolute);
  d.last_a = la.back();
  d.last_b = lb.back();
  return d;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::better:
      return "better";
    case Verdict::worse:
      return "worse";
    case Verdict::no_change:
      return "no detectable change";
  }
  return "?";
}

namespace {

namespace st = profiler::stats;

// Relative output differences a float32 run may show from a change of kernel alone: different
// summation orders round differently (about 1e-6 per element, growing with the reduction
// length). Above these, the candidate computes something else.
constexpr double kOutputTolerance = 1e-3;
constexpr double kLossTolerance = 1e-2;  // losses after a few steps drift further
constexpr double kAccuracyTolerance = 0.005;

std::vector<OpMove> op_moves(const Series& a, const Series& b) {
  using Key = std::tuple<std::string, std::string, std::string>;  // name, phase, grad_of
  std::map<Key, OpMove> m;
  auto add = [&m](const OpPerCall& o, bool side_a) {
    OpMove& mv = m[{o.name, o.phase, o.grad_of}];
    mv.name = o.name;
    mv.phase = o.phase;
    mv.grad_of = o.grad_of;
    std::string& variant = side_a ? mv.variant_a : mv.variant_b;
    if (variant.empty()) {
      variant = o.variant;
    } else if (variant.find(o.variant) == std::string::npos) {
      variant += "+" + o.variant;
    }
    (side_a ? mv.self_ns_a : mv.self_ns_b) += o.self_ns;
    (side_a ? mv.calls_a : mv.calls_b) += o.calls;
    (side_a ? mv.flops_a : mv.flops_b) += o.flops;
    (side_a ? mv.bytes_a : mv.bytes_b) += o.bytes;
    (side_a ? mv.allocs_a : mv.allocs_b) += o.allocs;
    (side_a ? mv.alloc_bytes_a : mv.alloc_bytes_b) += o.alloc_bytes;
  };
  for (const OpPerCall& o : a.ops) add(o, true);
  for (const OpPerCall& o : b.ops) add(o, false);
  std::vector<OpMove> out;
  for (auto& [k, v] : m) out.push_back(std::move(v));
  // The ops whose variant changed first (they are the change), then by how much time moved.
  std::stable_sort(out.begin(), out.end(), [](const OpMove& x, const OpMove& y) {
    const bool xv = x.variant_a != x.variant_b, yv = y.variant_a != y.variant_b;
    if (xv != yv) return xv;
    return std::abs(x.self_ns_b - x.self_ns_a) > std::abs(y.self_ns_b - y.self_ns_a);
  });
  return out;
}

// "same", or the counters that differ: "calls 2 -> 3, allocs 4 -> 6".
std::string counter_changes(const OpMove& m) {
  std::string out;
  auto add = [&out](const char* what, double a, double b) {
    if (a == b) return;
    out += fmt::format("{}{} {:.6g} -> {:.6g}", out.empty() ? "" : ", ", what, a, b);
  };
  add("calls", m.calls_a, m.calls_b);
  add("FLOPs", m.flops_a, m.flops_b);
  add("bytes", m.bytes_a, m.bytes_b);
  add("allocs", m.allocs_a, m.allocs_b);
  add("alloc bytes", m.alloc_bytes_a, m.alloc_bytes_b);
  return out.empty() ? "same" : out;
}

std::vector<std::string> instability(const char* side, const std::vector<double>& samples) {
  std::vector<std::string> why;
  const st::Summary s = st::summarize(samples);
  if (s.n < st::kMinStableSamples) {
    why.push_back(fmt::format("{}: only {} samples", side, s.n));
  } else if (s.unstable) {
    why.push_back(fmt::format("{}: median known to +-{:.1f}%, MAD {:.1f}% of the median", side,
                              s.err_pct, 100 * s.mad / s.median));
  }
  return why;
}

}  // namespace

Comparison compare_runs(const RunRecord& a, const RunRecord& b) {
  auto differ = [&](const char* what, const std::string& x, const std::string& y) {
    if (x != y) {
      throw Error(
          fmt::format("compare: the two runs differ in {} ({} in {}, {} in {}): compare "
                      "runs of one model and one mode",
                      what, x, a.path.empty() ? "A" : a.path, y, b.path.empty() ? "B" : b.path));
    }
  };
  differ("kind", a.kind, b.kind);
  differ("model", a.model, b.model);
  differ("mode", a.mode, b.mode);

  Comparison c;
  c.a = a;
  c.b = b;
  for (const std::string& d : fingerprint_differences(a.fingerprint, b.fingerprint)) {
    c.warnings.push_back("the runs differ in more than the change: " + d);
  }
  if (a.kernels != b.kernels) {
    c.change = fmt::format("kernels {} -> {}", a.kernels.empty() ? "defaults" : a.kernels,
                           b.kernels.empty() ? "defaults" : b.kernels);
  }
  for (const std::string& w : a.warnings) c.warnings.push_back("A was measured with: " + w);
  for (const std::string& w : b.warnings) c.warnings.push_back("B was measured with: " + w);

  for (const Series& sa : a.series) {
    const Series* sb = b.find(sa.batch);
    if (!sb) continue;
    SeriesComparison s;
    s.label = sa.label;
    s.batch = sa.batch;
    s.a = latency_stats(sa.samples_ns);
    s.b = latency_stats(sb->samples_ns);
    s.throughput_a = static_cast<double>(sa.batch) * 1e9 / s.a.mean;
    s.throughput_b = static_cast<double>(sb->batch) * 1e9 / s.b.mean;
    s.ratio = s.b.p50 / s.a.p50;
    s.ratio_ci = st::block_bootstrap_quantile_ratio_ci(sb->samples_ns, sa.samples_ns, 0.5);
    s.test =
        st::mann_whitney_u(st::block_medians(sa.samples_ns), st::block_medians(sb->samples_ns));
    const bool significant = s.test.p_two_sided < kAlpha;
    const bool large_enough = std::abs(s.ratio - 1) >= kMinEffect;
    if (significant && large_enough && s.ratio_ci.high < 1) s.verdict = Verdict::better;
    if (significant && large_enough && s.ratio_ci.low > 1) s.verdict = Verdict::worse;
    s.peak_rss_a = sa.peak_rss_bytes;
    s.peak_rss_b = sb->peak_rss_bytes;
    s.tracked_peak_a = sa.tracked_peak_bytes;
    s.tracked_peak_b = sb->tracked_peak_bytes;
    s.has_counters = sa.has_counters && sb->has_counters;
    s.counters_a = sa.counters;
    s.counters_b = sb->counters;
    s.movers = op_moves(sa, *sb);
    for (auto& w : instability("A", sa.samples_ns)) s.unstable.push_back(w);
    for (auto& w : instability("B", sb->samples_ns)) s.unstable.push_back(w);
    c.series.push_back(std::move(s));
  }
  if (c.series.empty()) {
    throw Error("compare: the two runs have no batch size in common");
  }

  // Quality, whatever the speed.
  if (!a.probe_output.empty() || !b.probe_output.empty()) {
    double abs = 0;
    const double rel = max_relative_difference(a.probe_output, b.probe_output, &abs);
    QualityLine q;
    q.what = "outputs on fixed inputs: max |B - A| / max |A|";
    q.a = fmt::format("{} values", a.probe_output.size());
    q.b = fmt::format("{} values", b.probe_output.size());
    q.change = std::isnan(rel) ? "not comparable (different output sizes)"
                               : fmt::format("{:.2e} (absolute {:.2e})", rel, abs);
    q.held = !std::isnan(rel) && rel <= kOutputTolerance;
    c.quality.push_back(q);
  }
  if (!a.train_losses.empty() || !b.train_losses.empty()) {
    const LossDifference d = loss_difference(a.train_losses, b.train_losses);
    QualityLine q;
    q.what = fmt::format("loss of the first {} training steps: max |B - A| / max |A|", d.steps);
    q.a = d.steps == 0 ? "-" : fmt::format("step {} {:.4f}", d.steps, d.last_a);
    q.b = d.steps == 0 ? "-" : fmt::format("step {} {:.4f}", d.steps, d.last_b);
    q.change = std::isnan(d.relative)
                   ? "not comparable (one side has no losses, or a loss is not finite)"
                   : fmt::format("{:.2e} (absolute {:.2e})", d.relative, d.absolute);
    q.held = !std::isnan(d.relative) && d.relative <= kLossTolerance;
    c.quality.push_back(q);
  }
  if (a.test_accuracy && b.test_accuracy) {
    QualityLine q;
    q.what = "held-out accuracy";
    q.a = fmt::format("{:.2f}%", 100 * *a.test_accuracy);
    q.b = fmt::format("{:.2f}%", 100 * *b.test_accuracy);
    q.change = fmt::format("{:+.2f} points", 100 * (*b.test_accuracy - *a.test_accuracy));
    q.held = *b.test_accuracy >= *a.test_accuracy - kAccuracyTolerance;
    c.quality.push_back(q);
  }
  if (a.test_loss && b.test_loss) {
    QualityLine q;
    q.what = "held-out loss";
    q.a = fmt::format("{:.4f}", *a.test_loss);
    q.b = fmt::format("{:.4f}", *b.test_loss);
    q.change = fmt::format("{:+.4f}", *b.test_loss - *a.test_loss);
    q.held = *b.test_loss <= *a.test_loss * (1 + kLossTolerance);
    c.quality.push_back(q);
  }
  if (c.quality.empty()) {
    c.warnings.push_back("no quality figure on either side: a speed verdict alone proves nothing");
  }
  return c;
}

std::string format_comparison(const Comparison& c, int max_ops) {
  std::string out;
  auto side = [](const RunRecord& r, const char* name) {
    return fmt::format("{}: {} {} ({}), kernels: {}, {} thread{}, {}\n", name, r.model, r.mode,
                       r.kind, r.kernels.empty() ? "defaults" : r.kernels, r.fingerprint.threads,
                       r.fingerprint.threads == 1 ? "" : "s",
                       r.path.empty() ? "measured now" : r.path);
  };
  out += side(c.a, "A (baseline) ");
  out += side(c.b, "B (candidate)");
  out += "change: " +
         (c.change.empty() ? "none recorded (same kernels, same machine settings)" : c.change) +
         "\n";
  for (const SeriesComparison& s : c.series) {
    out += fmt::format("\n{}\n", s.label);
    TextColumns t({"", "throughput", "p50", "p95", "p99", "peak tracked", "peak RSS"});
    auto row = [&](const char* name, const LatencyStats& l, double thr, int64_t tracked,
                   int64_t rss) {
      t.add({name, fmt::format("{:.1f}/s", thr), format_ns(l.p50), format_ns(l.p95),
             format_ns(l.p99), format_bytes(tracked), format_bytes(rss)});
    };
    row("A", s.a, s.throughput_a, s.tracked_peak_a, s.peak_rss_a);
    row("B", s.b, s.throughput_b, s.tracked_peak_b, s.peak_rss_b);
    out += t.str("  ");
    out += fmt::format(
        "  decision: {} (B/A median time {:.3f}x, 95% interval [{:.3f}, {:.3f}]; Mann-Whitney on "
        "block medians p = {:.2g}; {} and {} calls)\n",
        verdict_name(s.verdict), s.ratio, s.ratio_ci.low, s.ratio_ci.high, s.test.p_two_sided,
        s.a.n, s.b.n);
    for (const std::string& u : s.unstable) out += "  unstable: " + u + "\n";
    if (s.has_counters) {
      auto diff = [](const char* what, int64_t x, int64_t y) {
        return x == y ? fmt::format("{} same ({})", what, x)
                      : fmt::format("{} {} -> {} ({:+})", what, x, y, y - x);
      };
      out += "  exact, per call: " + diff("FLOPs", s.counters_a.flops, s.counters_b.flops) + "; " +
             diff("allocations", s.counters_a.allocs, s.counters_b.allocs) + "; " +
             diff("allocated bytes", s.counters_a.alloc_bytes, s.counters_b.alloc_bytes) + "\n";
    }
    if (!s.movers.empty()) {
      TextColumns m({"op", "phase", "variant A -> B", "A self/call", "B self/call", "change",
                     "exact counters per call, A -> B"});
      int shown = 0;
      for (const OpMove& mv : s.movers) {
        if (max_ops > 0 && shown++ >= max_ops) break;
        const std::string variant = mv.variant_a == mv.variant_b
                                        ? mv.variant_a
                                        : (mv.variant_a.empty() ? "-" : mv.variant_a) + " -> " +
                                              (mv.variant_b.empty() ? "-" : mv.variant_b);
        const std::string change =
            mv.self_ns_a > 0 ? fmt::format("{:.2f}x", mv.self_ns_b / mv.self_ns_a) : "new";
        m.add({mv.grad_of.empty() ? mv.name : mv.name + " (" + mv.grad_of + ")", mv.phase, variant,
               format_ns(mv.self_ns_a), format_ns(mv.self_ns_b), change, counter_changes(mv)});
      }
      out += "  biggest movers (per call):\n" + m.str("    ");
    }
  }
  out += "\nquality:\n";
  if (c.quality.empty()) out += "  (none recorded)\n";
  for (const QualityLine& q : c.quality) {
    out += fmt::format("  {}: A {}, B {}: {} -> {}\n", q.what, q.a, q.b, q.change,
                       q.held ? "held" : "NOT HELD");
  }
  if (!c.warnings.empty()) {
    out += "\nwarnings:\n";
    for (const std::string& w : c.warnings) out += "  " + w + "\n";
  }
  return out;
}

nlohmann::json comparison_to_json(const Comparison& c, const std::string& report) {
  nlohmann::json series = nlohmann::json::array();
  for (const SeriesComparison& s : c.series) {
    nlohmann::json movers = nlohmann::json::array();
    for (const OpMove& m : s.movers) {
      movers.push_back({{"name", m.name},
                        {"phase", m.phase},
                        {"grad_of", m.grad_of},
                        {"variant_a", m.variant_a},
                        {"variant_b", m.variant_b},
                        {"self_ns_a", m.self_ns_a},
                        {"self_ns_b", m.self_ns_b},
                        {"calls_a", m.calls_a},
                        {"calls_b", m.calls_b}});
    }
    series.push_back({{"label", s.label},
                      {"batch", s.batch},
                      {"median_ns_a", s.a.p50},
                      {"median_ns_b", s.b.p50},
                      {"ratio", s.ratio},
                      {"ratio_ci", {s.ratio_ci.low, s.ratio_ci.high}},
                      {"p_value", s.test.p_two_sided},
                      {"verdict", verdict_name(s.verdict)},
                      {"movers", movers}});
  }
  return {{"kind", "prism.compare"}, {"model", c.a.model}, {"mode", c.a.mode},
          {"change", c.change},      {"report", report},   {"series", series},
          {"warnings", c.warnings}};
}

}  // namespace prism::analysis
