#include "analysis/gate.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "analysis/compare.h"
#include "profiler/statistics.h"

namespace prism::analysis {

namespace st = profiler::stats;

double parse_fraction(const std::string& text, const std::string& flag, double max) {
  std::string s = text;
  const bool percent = !s.empty() && s.back() == '%';
  if (percent) s.pop_back();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v) || v < 0) {
    throw Error(flag + ": expected a fraction such as 0.15 or a percentage such as 15%, got '" +
                text + "'");
  }
  const double f = percent ? v / 100 : v;
  if (f > max) {
    throw Error(fmt::format("{}: at most {:g} ({:g}%), got '{}'{}", flag, max, 100 * max, text,
                            percent ? "" : fmt::format(" (did you mean {}%?)", text)));
  }
  return f;
}

namespace {
const std::vector<std::string> kCounterNames{"flops", "macs", "bytes", "allocs", "alloc_bytes"};

int64_t counter(const CallCounters& c, const std::string& name) {
  if (name == "flops") return c.flops;
  if (name == "macs") return c.macs;
  if (name == "bytes") return c.bytes;
  if (name == "allocs") return c.allocs;
  return c.alloc_bytes;
}

std::string pct(double fraction) {
  // Fixed-point up to a million percent; past it (a sample of 1e308 ns) in exponent form, which
  // fixed-point would print with 300 digits.
  if (std::abs(fraction) >= 1e4) return fmt::format("{:+.3g}%", 100 * fraction);
  return fmt::format("{:+.1f}%", 100 * fraction);
}
}  // namespace

void check_exact_names(const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    if (std::find(kCounterNames.begin(), kCounterNames.end(), n) == kCounterNames.end()) {
      throw Error("--exact: unknown counter '" + n +
                  "' (counters: flops, macs, bytes, allocs, alloc_bytes)");
    }
  }
}

bool GateResult::passed() const {
  return std::all_of(checks.begin(), checks.end(), [](const GateCheck& c) { return c.passed; });
}

GateResult run_gate(const RunRecord& base, const RunRecord& cand, const GateOptions& o) {
  check_exact_names(o.exact);
  // The same comparability rules and the same statistics as `prism compare`.
  const Comparison cmp = compare_runs(base, cand);
  GateResult r;
  for (const SeriesComparison& s : cmp.series) {
    const Series& sa = *base.find(s.batch);
    const Series& sb = *cand.find(s.batch);

    // p99: over the limit and the whole interval of the ratio above 1.
    {
      const double ratio = s.b.p99 / s.a.p99;
      const st::Interval ci =
          st::block_bootstrap_quantile_ratio_ci(sb.samples_ns, sa.samples_ns, 0.99);
      GateCheck c{s.label, "p99 latency", true, ""};
      const bool over = ratio - 1 > o.max_p99_increase;
      const bool significant = ci.low > 1;
      c.passed = !(over && significant);
      c.detail = fmt::format("{} -> {}: {} [{}, {}], limit +{:.0f}%{}",
                             fmt::format("{:.4g} ms", s.a.p99 / 1e6),
                             fmt::format("{:.4g} ms", s.b.p99 / 1e6), pct(ratio - 1),
                             pct(ci.low - 1), pct(ci.high - 1), 100 * o.max_p99_increase,
                             over && !significant ? " (over the limit, but not significant)" : "");
      if (sa.samples_ns.size() < kMinSamplesForP99 || sb.samples_ns.size() < kMinSamplesForP99) {
        c.detail += fmt::format(" (p99 of {} and {} samples: nearly the maximum)",
                                sa.samples_ns.size(), sb.samples_ns.size());
      }
      r.checks.push_back(c);
    }
    // Throughput: over the limit and the candidate's times significantly larger.
    {
      const double drop = 1 - s.throughput_b / s.throughput_a;
      const bool over = drop > o.max_throughput_drop;
      // Significant: the candidate's block medians tend to be larger (Mann-Whitney, one-sided).
      const bool significant = s.test.p_a_less < kAlpha;
      GateCheck c{s.label, "throughput", !(over && significant), ""};
      c.detail = fmt::format(
          "{:.4g}/s -> {:.4g}/s: {}, limit -{:.0f}%; candidate slower: p = {:.2g}{}",
          s.throughput_a, s.throughput_b, pct(-drop), 100 * o.max_throughput_drop, s.test.p_a_less,
          over && !significant ? " (over the limit, but not significant)" : "");
      r.checks.push_back(c);
    }
    // Memory: deterministic enough to need no statistics.
    auto memory = [&](const char* what, int64_t a, int64_t b) {
      if (a <= 0 || b < 0) return;
      const double inc = static_cast<double>(b - a) / static_cast<double>(a);
      GateCheck c{s.label, what, inc <= o.max_memory_increase, ""};
      c.detail = fmt::format("{} -> {} bytes: {}, limit +{:.0f}%", a, b, pct(inc),
                             100 * o.max_memory_increase);
      r.checks.push_back(c);
    };
    memory("peak tracked memory", sa.tracked_peak_bytes, sb.tracked_peak_bytes);
    memory("peak resident memory", sa.peak_rss_bytes, sb.peak_rss_bytes);
    // Exact counters.
    for (const std::string& name : o.exact) {
      GateCheck c{s.label, name + " (exact)", true, ""};
      if (!s.has_counters) {
        c.passed = false;
        c.detail = "a side has no counters";
      } else {
        const int64_t a = counter(s.counters_a, name), b = counter(s.counters_b, name);
        c.passed = a == b;
        c.detail = a == b ? fmt::format("{} per call", a)
                          : fmt::format("{} -> {} per call ({:+})", a, b, b - a);
      }
      r.checks.push_back(c);
    }
  }

  // Quality, run-wide.
  if (base.test_accuracy && cand.test_accuracy) {
    const double drop = 100 * (*base.test_accuracy - *cand.test_accuracy);
    r.checks.push_back({"", "held-out accuracy", drop <= o.max_quality_drop,
                        fmt::format("{:.2f}% -> {:.2f}%: {:+.2f} points, limit -{:g} points",
                                    100 * *base.test_accuracy, 100 * *cand.test_accuracy, -drop,
                                    o.max_quality_drop)});
  }
  if (base.test_loss && cand.test_loss) {
    const double inc = (*cand.test_loss - *base.test_loss) / std::abs(*base.test_loss);
    r.checks.push_back({"", "held-out loss", inc <= o.max_loss_increase,
                        fmt::format("{:.4f} -> {:.4f}: {}, limit +{:g}%", *base.test_loss,
                                    *cand.test_loss, pct(inc), 100 * o.max_loss_increase)});
  }
  // Outputs on fixed inputs (inference) and the first steps' losses (training): vectors that
  // must stay within a relative distance of the baseline's.
  auto vectors = [&r](const char* what, const std::vector<double>& a, const std::vector<double>& b,
                      double limit) {
    if (a.empty() && b.empty()) return;
    GateCheck c{"", what, false, ""};
    double abs = 0;
    const double d = max_relative_difference(a, b, &abs);
    if (std::isnan(d)) {
      c.detail = fmt::format("{} vs {} values: not comparable", a.size(), b.size());
    } else {
      c.passed = d <= limit;
      c.detail = fmt::format("max relative difference {:.2e}, limit {:.0e}", d, limit);
    }
    r.checks.push_back(c);
  };
  vectors("outputs on fixed inputs", base.probe_output, cand.probe_output, o.max_output_diff);
  if (!base.train_losses.empty() || !cand.train_losses.empty()) {  // over the steps both took
    const LossDifference d = loss_difference(base.train_losses, cand.train_losses);
    GateCheck c{"", "training losses", false, ""};
    if (std::isnan(d.relative)) {
      c.detail = fmt::format("{} vs {} values: not comparable (none shared, or one not finite)",
                             base.train_losses.size(), cand.train_losses.size());
    } else {
      c.passed = d.relative <= o.max_loss_increase;
      c.detail = fmt::format("max relative difference {:.2e} over the first {} steps, limit {:.0e}",
                             d.relative, d.steps, o.max_loss_increase);
    }
    r.checks.push_back(c);
  }
  return r;
}

std::string format_gate(const GateResult& r, bool verbose) {
  std::string out;
  int failed = 0;
  for (const GateCheck& c : r.checks) {
    if (!c.passed) ++failed;
    if (c.passed && !verbose) continue;
    out += fmt::format("{} {}{}: {}\n", c.passed ? "ok  " : "FAIL",
                       c.series.empty() ? "" : c.series + " ", c.what, c.detail);
  }
  out += failed ? fmt::format("gate: FAILED ({} of {} checks)\n", failed, r.checks.size())
                : fmt::format("gate: passed ({} checks)\n", r.checks.size());
  return out;
}

nlohmann::json gate_json(const GateResult& r, const std::string& base, const std::string& cand) {
  nlohmann::json checks = nlohmann::json::array();
  for (const GateCheck& c : r.checks) {
    checks.push_back(
        {{"series", c.series}, {"what", c.what}, {"passed", c.passed}, {"detail", c.detail}});
  }
  return {{"kind", "prism.gate"},
          {"passed", r.passed()},
          {"base", base},
          {"cand", cand},
          {"checks", checks}};
}

}  // namespace prism::analysis
