// prism sweep: reading the numbers (sweep.h, add_sweep_findings). Each finding is computed
// from the measured points and fits and quotes the numbers it rests on.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analysis/report_format.h"
#include "analysis/sweep.h"

namespace prism::analysis {

namespace {

double sum_of(const std::array<double, kNumOpClasses>& a) {
  double s = 0;
  for (double v : a) s += v;
  return s;
}

std::string fmt_k(double k) {
  return fmt::format("{:.2f}", k);
}

// The local exponent between two points: log(y1 / y0) / log(x1 / x0).
double local_exponent(double x0, double y0, double x1, double y1) {
  return std::log(y1 / y0) / std::log(x1 / x0);
}

double share(const SweepPoint& p, OpClass c) {
  const double total = sum_of(p.class_ns);
  return total > 0 ? p.class_ns[static_cast<int>(c)] / total : 0;
}

void batch_findings(const SweepResult& r, std::vector<std::string>& out) {
  const auto& pts = r.points;
  std::vector<double> per_sample;
  for (const SweepPoint& p : pts) per_sample.push_back(p.median_ns / static_cast<double>(p.batch));
  const size_t best = std::min_element(per_sample.begin(), per_sample.end()) - per_sample.begin();
  if (best == 0) {
    // The smallest batch is already the cheapest per sample: nothing to amortise here.
    out.push_back(fmt::format(
        "time per sample is lowest at the smallest batch, {} at batch {}, and {} at batch {} "
        "({:.2f}x): batching does not pay in this range",
        format_ns(per_sample.front()), pts.front().value, format_ns(per_sample.back()),
        pts.back().value, per_sample.back() / per_sample.front()));
    return;
  }
  // Batching pays up to the first batch whose time per sample is within 10% of the best.
  size_t enough = 0;
  while (per_sample[enough] > 1.1 * per_sample[best]) ++enough;
  std::string s =
      fmt::format("time per sample falls from {} at batch {} to {} at batch {} ({:.1f}x less)",
                  format_ns(per_sample.front()), pts.front().value, format_ns(per_sample[best]),
                  pts[best].value, per_sample.front() / per_sample[best]);
  if (best + 1 == pts.size() && per_sample[pts.size() - 2] > 1.1 * per_sample.back()) {
    s += fmt::format(
        "; it was still falling at the largest batch ({:.0f}% below batch {}): batching still "
        "pays there",
        100 * (1 - per_sample.back() / per_sample[pts.size() - 2]), pts[pts.size() - 2].value);
  } else {
    s += fmt::format(
        "; batching stops paying at about batch {}: from there on it is within 10% of the best",
        pts[enough].value);
    if (per_sample.back() > 1.1 * per_sample[best]) {
      s += fmt::format(", and it rises again to {} at batch {} ({:.2f}x the best)",
                       format_ns(per_sample.back()), pts.back().value,
                       per_sample.back() / per_sample[best]);
    }
  }
  out.push_back(s);
}

void seq_findings(const SweepResult& r, std::vector<std::string>& out) {
  const auto& pts = r.points;
  const SweepPoint &a = pts[pts.size() - 2], &b = pts.back();
  if (a.counters.flops <= 0 || b.counters.flops <= 0) return;  // no exponent of nothing
  const double k_time = local_exponent(static_cast<double>(a.value), a.median_ns,
                                       static_cast<double>(b.value), b.median_ns);
  const double k_flops =
      local_exponent(static_cast<double>(a.value), static_cast<double>(a.counters.flops),
                     static_cast<double>(b.value), static_cast<double>(b.counters.flops));
  std::string s = fmt::format(
      "between seq {} and {} time grows as L^{} and FLOPs as L^{} (the L^2 terms are the "
      "attention scores and their softmax, the L^1 terms the projections and the MLP); ",
      a.value, b.value, fmt_k(k_time), fmt_k(k_flops));
  s += k_time >= 1.5 ? "the exponent is closer to 2 than to 1: the L^2 terms dominate the time "
                       "at these lengths"
                     : "the exponent is closer to 1 than to 2: the per-token (L^1) work still "
                       "dominates the time at these lengths";
  out.push_back(s);
  const double s0 = share(pts.front(), OpClass::attention), s1 = share(b, OpClass::attention);
  if (s0 > 0 || s1 > 0) {
    out.push_back(
        fmt::format("attention's share of the op time goes from {:.1f}% at seq {} to "
                    "{:.1f}% at seq {}",
                    100 * s0, pts.front().value, 100 * s1, b.value));
  }
}

void size_findings(const SweepResult& r, std::vector<std::string>& out) {
  const auto& pts = r.points;
  if (pts.front().parameters == pts.back().parameters) return;
  std::vector<double> xs, ps;
  for (const SweepPoint& p : pts) {
    xs.push_back(static_cast<double>(p.value));
    ps.push_back(static_cast<double>(p.parameters));
  }
  const PowerLawFit f = fit_power_law(xs, ps);
  out.push_back(fmt::format("parameters grow from {} at {} {} to {} at {} (about n^{})",
                            pts.front().parameters, sweep_var_name(r.options.vary.var),
                            pts.front().value, pts.back().parameters, pts.back().value,
                            fmt_k(f.k)));
}

void thread_findings(const SweepResult& r, std::vector<std::string>& out) {
  const ThreadScaling& t = *r.threads;
  const auto& pts = r.points;
  std::string s = "speed-up against " + std::to_string(pts.front().value) + " thread" +
                  (pts.front().value == 1 ? "" : "s") + ":";
  for (size_t i = 1; i < pts.size(); ++i) {
    s += fmt::format(" {}x at {} ({:.0f}% efficient){}", fmt::format("{:.2f}", t.speedup[i]),
                     pts[i].value, 100 * t.efficiency[i], i + 1 < pts.size() ? "," : "");
  }
  out.push_back(s);
  for (size_t i = 1; i < pts.size(); ++i) {
    if (t.speedup[i] < 1) {
      out.push_back(fmt::format(
          "{} threads are slower than {}: the parallel part does not pay for waking and "
          "synchronising the threads at this size (or the cores are shared)",
          pts[i].value, pts.front().value));
      break;
    }
  }
  const double sf = t.amdahl ? t.amdahl->serial_fraction : 1;
  if (!t.amdahl) {
    out.push_back(
        "Amdahl's law does not fit these times (they extrapolate to no time at one "
        "thread)");
  } else if (sf > 0 && sf < 1) {
    out.push_back(fmt::format(
        "Amdahl: {:.0f}% of the time behaves as serial, so no number of threads can make it more "
        "than {:.1f}x faster than one",
        100 * sf, 1 / sf));
  } else if (sf <= 0) {
    out.push_back(
        "Amdahl: no serial part shows (the speed-up is linear or better, e.g. each "
        "thread's share fitting a cache)");
  } else {
    out.push_back("Amdahl: the serial fraction is 100% or more: threads only added cost");
  }
  if (!t.classes.empty()) {
    const auto [lo, hi] = std::minmax_element(t.classes.begin(), t.classes.end(),
                                              [](const ClassScaling& a, const ClassScaling& b) {
                                                return a.efficiency.back() < b.efficiency.back();
                                              });
    if (lo != hi) {
      out.push_back(
          fmt::format("at {} threads {} scales best ({:.0f}% efficient) and {} worst ({:.0f}%)",
                      pts.back().value, op_class_name(hi->op_class), 100 * hi->efficiency.back(),
                      op_class_name(lo->op_class), 100 * lo->efficiency.back()));
    }
  }
}

void work_findings(const SweepResult& r, std::vector<std::string>& out) {
  if (!r.time.fit || !r.flops.fit) return;
  const double kt = r.time.fit->k, kf = r.flops.fit->k;
  if (std::fabs(kf) < 0.05) return;  // the work does not change with this size
  const SweepPoint &a = r.points.front(), &b = r.points.back();
  const std::string name = sweep_var_name(r.options.vary.var);
  const std::string rates = fmt::format("{:.2f} GFLOP/s at {}={} to {:.2f} at {}", a.gflops, name,
                                        a.value, b.gflops, b.value);
  if (kt < kf - 0.1) {
    out.push_back(fmt::format(
        "time grows more slowly than the work ({}^{} against FLOPs {}^{}): the bigger calls run "
        "at a higher FLOP rate, {} (fixed per-call costs and small matrices are amortised)",
        name, fmt_k(kt), name, fmt_k(kf), rates));
  } else if (kt > kf + 0.1) {
    out.push_back(fmt::format(
        "time grows faster than the work ({}^{} against FLOPs {}^{}): each FLOP costs more as "
        "{} grows, {} (a working set leaving the caches, or memory-bound ops taking over)",
        name, fmt_k(kt), name, fmt_k(kf), name, rates));
  } else {
    out.push_back(fmt::format("time follows the work ({}^{} against FLOPs {}^{}): {}", name,
                              fmt_k(kt), name, fmt_k(kf), rates));
  }
}

void knee_findings(const SweepResult& r, std::vector<std::string>& out) {
  const std::string name = sweep_var_name(r.options.vary.var);
  for (const CurveFit* c : {&r.time, &r.memory}) {
    if (!c->knee || !c->knee->kept) continue;
    const KneeFit& k = *c->knee;
    out.push_back(fmt::format(
        "{} bends at {}={}: it grows as {}^{} below and {}^{} above ({})", c->quantity, name,
        k.x_break, name, fmt_k(k.k_left), name, fmt_k(k.k_right),
        k.k_right > k.k_left ? "faster beyond the knee" : "more slowly beyond the knee"));
  }
}

void memory_findings(const SweepResult& r, std::vector<std::string>& out) {
  const SweepPoint &a = r.points.front(), &b = r.points.back();
  int grew = -1;
  int64_t most = 0, growth = 0;  // the largest role's growth, and all roles' that grew
  std::vector<std::string> steady;
  for (int i = 0; i < profiler::kNumRoles; ++i) {
    const int64_t d = b.tracked_peak_by_role[i] - a.tracked_peak_by_role[i];
    if (d > 0) growth += d;
    if (d > most) {
      most = d;
      grew = i;
    }
    const int64_t v = a.tracked_peak_by_role[i];
    if (v > 0 && std::llabs(d) * 100 <= v) {
      steady.push_back(fmt::format("{} {}", profiler::role_name(static_cast<profiler::MemRole>(i)),
                                   format_bytes(v)));
    }
  }
  if (grew < 0) return;
  // "most" only when that role is more than half of what grew; else "the largest part".
  const double part = static_cast<double>(most) / static_cast<double>(growth);
  std::string s = fmt::format(
      "the tracked peak goes from {} to {}; {} of the growth ({:.0f}%) is {} ({} to {})",
      format_bytes(a.tracked_peak_bytes), format_bytes(b.tracked_peak_bytes),
      part > 0.5 ? "most" : "the largest part", 100 * part,
      profiler::role_name(static_cast<profiler::MemRole>(grew)),
      format_bytes(a.tracked_peak_by_role[grew]), format_bytes(b.tracked_peak_by_role[grew]));
  if (!steady.empty()) {
    s += "; unchanged (within 1%):";
    for (size_t i = 0; i < steady.size(); ++i) s += (i ? ", " : " ") + steady[i];
  }
  out.push_back(s);
}

}  // namespace

void add_sweep_findings(SweepResult& r) {
  std::vector<std::string>& out = r.findings;
  const auto& pts = r.points;
  const SweepVar var = r.options.vary.var;
  switch (var) {
    case SweepVar::batch:
      batch_findings(r, out);
      break;
    case SweepVar::seq:
      seq_findings(r, out);
      break;
    case SweepVar::width:
    case SweepVar::depth:
      size_findings(r, out);
      break;
    case SweepVar::threads:
      thread_findings(r, out);
      break;
  }
  work_findings(r, out);
  knee_findings(r, out);
  if (var != SweepVar::threads) memory_findings(r, out);
  std::vector<std::string> shaky;
  for (const SweepPoint& p : pts) {
    if ((p.median_ci.high - p.median_ci.low) / 2 > 0.05 * p.median_ns) {
      shaky.push_back(std::to_string(p.value));
    }
  }
  if (!shaky.empty()) {
    std::string s =
        "the median is known to no better than +-5% at " + std::string(sweep_var_name(var)) + " =";
    for (size_t i = 0; i < shaky.size(); ++i) s += (i ? ", " : " ") + shaky[i];
    out.push_back(s + ": a longer --duration or a quieter machine would tighten the fit");
  }
  if (r.max_pass_drift_pct > 10) {
    out.push_back(fmt::format(
        "the two passes differ by up to {:.0f}% at one point: the machine drifted during the "
        "sweep, so read the curve with care",
        r.max_pass_drift_pct));
  }
}

}  // namespace prism::analysis
