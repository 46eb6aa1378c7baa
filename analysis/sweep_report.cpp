#include "analysis/sweep_report.h"

#include <cmath>

#include <fmt/format.h>

#include "analysis/report_format.h"
#include "analysis/run_record.h"
#include "profiler/memory.h"

namespace prism::analysis {

namespace {

using ojson = nlohmann::ordered_json;

std::string k_interval(const PowerLawFit& f) {
  if (!f.has_interval) return "(2 points: exact, no interval; 3 or more give one)";
  return fmt::format("[{:.3f}, {:.3f}]", f.k_ci_low, f.k_ci_high);
}

std::string format_value(const std::string& quantity, double v) {
  if (quantity == "time") return format_ns(v);
  if (quantity == "memory") return format_bytes(static_cast<int64_t>(std::llround(v)));
  return fmt::format("{:.4g}", v);
}

std::string header(const SweepResult& r) {
  const SweepOptions& o = r.options;
  std::string values;
  for (size_t i = 0; i < o.vary.values.size(); ++i) {
    values += (i ? "," : "") + std::to_string(o.vary.values[i]);
  }
  const SweepPoint& p = r.points.front();
  std::string out = fmt::format("sweep {} --mode {}: {} = {}", r.model, r.mode,
                                sweep_var_name(o.vary.var), values);
  if (o.vary.var != SweepVar::batch) out += fmt::format(", batch {}", p.batch);
  if (o.vary.var != SweepVar::threads) {
    out += fmt::format(", {} thread{}", p.threads, p.threads == 1 ? "" : "s");
  }
  out += fmt::format(", device {}, kernels: {}\n", r.fingerprint.device,
                     r.kernels.empty() ? "defaults" : r.kernels);
  out += fmt::format("input {} at the first point; {}\n", r.input,
                     o.passes == 2
                         ? "two passes, ascending then descending, each half the duration: a "
                           "point's time is the median of both passes' calls, with its 95% "
                           "block-bootstrap interval"
                         : "one ascending pass: a point's time is the median of its calls, with "
                           "its 95% block-bootstrap interval");
  return out;
}

std::string points_table(const SweepResult& r) {
  const std::string name = sweep_var_name(r.options.vary.var);
  std::vector<std::string> headers{name,       "calls",           "median",    "95% interval",
                                   "pass gap", r.throughput_unit, "FLOP/call", "GFLOP/s",
                                   "% peak",   "tracked peak"};
  // Only the memory roles and op classes that appear somewhere.
  std::vector<int> roles, classes;
  for (int i = 0; i < profiler::kNumRoles; ++i) {
    for (const SweepPoint& p : r.points) {
      if (p.tracked_peak_by_role[i] > 0) {
        roles.push_back(i);
        break;
      }
    }
  }
  for (int c = 0; c < kNumOpClasses; ++c) {
    for (const SweepPoint& p : r.points) {
      if (p.class_ns[c] > 0) {
        classes.push_back(c);
        break;
      }
    }
  }
  for (int i : roles) headers.push_back(profiler::role_name(static_cast<profiler::MemRole>(i)));
  for (int c : classes)
    headers.push_back(std::string(op_class_name(static_cast<OpClass>(c))) + " %");
  TextColumns t(headers);
  for (const SweepPoint& p : r.points) {
    std::string gap = "-";
    if (p.pass_median_ns.size() == 2) {
      gap = fmt::format("{:+.1f}%", 100 * (p.pass_median_ns[1] / p.pass_median_ns[0] - 1));
    }
    std::vector<std::string> row{
        std::to_string(p.value),
        std::to_string(p.samples_ns.size()),
        format_ns(p.median_ns),
        fmt::format("[{}, {}]", format_ns(p.median_ci.low), format_ns(p.median_ci.high)),
        gap,
        fmt::format("{:.1f}", p.throughput),
        fmt::format("{:.4g}", static_cast<double>(p.counters.flops)),
        fmt::format("{:.2f}", p.gflops),
        p.pct_peak > 0 ? fmt::format("{:.1f}", p.pct_peak) : "-",
        format_bytes(p.tracked_peak_bytes)};
    for (int i : roles) row.push_back(format_bytes(p.tracked_peak_by_role[i]));
    double total = 0;
    for (double v : p.class_ns) total += v;
    for (int c : classes) {
      row.push_back(total > 0 ? fmt::format("{:.1f}", 100 * p.class_ns[c] / total) : "-");
    }
    t.add(row);
  }
  return t.str();
}

std::string fit_lines(const SweepResult& r) {
  const std::string name = sweep_var_name(r.options.vary.var);
  std::string out =
      "fits: least squares on the log-log points, k with its 95% interval (t distribution on the "
      "slope's standard error)\n";
  for (const CurveFit* c : {&r.time, &r.memory, &r.flops}) {
    if (!c->fit) {
      out += fmt::format("  {:<7} no fit: {}\n", c->quantity, c->note);
      continue;
    }
    const PowerLawFit& f = *c->fit;
    out += fmt::format("  {:<7} ~ {} x {}^{:.3f}  k {}  R^2 {:.4f}  ({} points)\n", c->quantity,
                       format_value(c->quantity, f.c), name, f.k, k_interval(f), f.r2, f.n);
  }
  out += fmt::format(
      "knees: a two-segment (hinge) fit, kept only when its residual is at most {:.0f}% of the "
      "single line's, its F test passes at 95% and the slopes differ by {} or more\n",
      100 * kKneeMaxResidualRatio, kKneeMinSlopeChange);
  for (const CurveFit* c : {&r.time, &r.memory}) {
    if (!c->fit) continue;
    if (!c->knee) {
      out += fmt::format("  {:<7} not tested: it needs {} or more points\n", c->quantity,
                         kKneeMinPoints);
      continue;
    }
    const KneeFit& k = *c->knee;
    const double ratio = k.sse_single > 0 ? 100 * k.sse_two / k.sse_single : 0;
    if (k.kept) {
      out += fmt::format(
          "  {:<7} knee at {}={}: k {:.3f} [{:.3f}, {:.3f}] below, {:.3f} [{:.3f}, {:.3f}] above; "
          "residual {:.1f}% of the single line's, F {:.1f} > {:.1f}\n",
          c->quantity, name, k.x_break, k.k_left, k.k_left_ci_low, k.k_left_ci_high, k.k_right,
          k.k_right_ci_low, k.k_right_ci_high, ratio, k.f, k.f_critical);
    } else {
      // Which criteria the best break failed.
      std::vector<std::string> why;
      if (k.sse_single <= 1e-20 * static_cast<double>(k.n)) why.push_back("the line is exact");
      if (ratio > 100 * kKneeMaxResidualRatio)
        why.push_back(fmt::format("residual {:.1f}%", ratio));
      if (!(k.f > k.f_critical)) {
        why.push_back(fmt::format("F {:.1f} <= {:.1f}", k.f, k.f_critical));
      }
      if (std::fabs(k.k_right - k.k_left) < kKneeMinSlopeChange) {
        why.push_back(fmt::format("slopes differ by {:.3f}", std::fabs(k.k_right - k.k_left)));
      }
      std::string reasons;
      for (size_t i = 0; i < why.size(); ++i) reasons += (i ? ", " : "") + why[i];
      out += fmt::format("  {:<7} none: the best break ({}={}, k {:.3f} then {:.3f}) fails: {}\n",
                         c->quantity, name, k.x_break, k.k_left, k.k_right, reasons);
    }
  }
  return out;
}

std::string amdahl_text(const AmdahlFit& a) {
  return fmt::format("serial fraction {:.3f} ({}{}), fit error {:.1f}%", a.serial_fraction,
                     a.exact ? "solved exactly from 2 counts" : "least squares",
                     a.t1_measured ? ", T1 measured" : ", T1 fitted", 100 * a.rms_relative_error);
}

std::string thread_table(const SweepResult& r) {
  const ThreadScaling& t = *r.threads;
  std::vector<std::string> headers{"threads", "speed-up", "efficiency"};
  for (const ClassScaling& c : t.classes) headers.push_back(op_class_name(c.op_class));
  TextColumns table(headers);
  for (size_t i = 0; i < r.points.size(); ++i) {
    std::vector<std::string> row{std::to_string(r.points[i].value),
                                 fmt::format("{:.2f}x", t.speedup[i]),
                                 fmt::format("{:.0f}%", 100 * t.efficiency[i])};
    for (const ClassScaling& c : t.classes) {
      row.push_back(fmt::format("{:.2f}x {:.0f}%", c.speedup[i], 100 * c.efficiency[i]));
    }
    table.add(row);
  }
  std::string out = fmt::format(
      "thread scaling against {} thread(s) (per op class: speed-up and efficiency of its self "
      "time in the profiled calls):\n",
      r.points.front().value);
  out += table.str("  ");
  out += "Amdahl, T(p) = T1 (s + (1 - s) / p):\n";
  out += "  overall: " + (t.amdahl ? amdahl_text(*t.amdahl) : std::string("does not fit")) + "\n";
  for (const ClassScaling& c : t.classes) {
    out += fmt::format("  {}: {}\n", op_class_name(c.op_class),
                       c.amdahl ? amdahl_text(*c.amdahl) : std::string("does not fit"));
  }
  return out;
}

std::string range_word(const SweepResult& r, const Prediction& p) {
  const auto& v = r.options.vary.values;
  if (p.interpolation) {
    return fmt::format("interpolation: inside the measured {}..{}", v.front(), v.back());
  }
  return fmt::format("extrapolation: outside the measured {}..{}", v.front(), v.back());
}

std::string interval(const Prediction& p, const std::string& quantity) {
  if (!p.has_interval) return "(no interval from 2 points)";
  return fmt::format("[{}, {}]", format_value(quantity, p.low), format_value(quantity, p.high));
}

// Where a measurement fell against a prediction's interval; with 2 points there is none.
const char* within_word(const Prediction& p, bool within) {
  if (!p.has_interval) return "no interval to fall in";
  return within ? "inside the interval" : "outside the interval";
}

std::string prediction_lines(const SweepResult& r) {
  const SweepPrediction& p = *r.prediction;
  const std::string name = sweep_var_name(r.options.vary.var);
  std::string out = fmt::format("prediction at {}={} ({}; 95% prediction intervals):\n", name, p.at,
                                range_word(r, p.time_ns));
  out += fmt::format("  time    {} {}{}\n", format_ns(p.time_ns.value), interval(p.time_ns, "time"),
                     p.time_from_knee ? " from the segment past the knee" : "");
  if (p.has_memory) {
    out += fmt::format("  memory  {} {}{}\n", format_bytes(std::llround(p.memory_bytes.value)),
                       interval(p.memory_bytes, "memory"),
                       p.memory_from_knee ? " from the segment past the knee" : "");
  } else {
    out += "  memory  no prediction: " + r.memory.note + "\n";
  }
  if (p.amdahl_time_ns) {
    out += fmt::format("  time by Amdahl's law: {}\n", format_ns(*p.amdahl_time_ns));
  }
  if (r.check) {
    const SweepCheck& c = *r.check;
    out += fmt::format("check: measured at {}={} ({} calls)\n", name, p.at,
                       c.measured.samples_ns.size());
    out += fmt::format("  time    {} [{}, {}]: prediction error {:+.1f}% ({})\n",
                       format_ns(c.measured.median_ns), format_ns(c.measured.median_ci.low),
                       format_ns(c.measured.median_ci.high), c.time_error_pct,
                       within_word(p.time_ns, c.time_within));
    if (c.memory_error_pct) {
      out += fmt::format("  memory  {}: prediction error {:+.1f}% ({})\n",
                         format_bytes(c.measured.tracked_peak_bytes), *c.memory_error_pct,
                         within_word(p.memory_bytes, c.memory_within));
    } else {
      out += fmt::format("  memory  {}: nothing to compare (no memory prediction)\n",
                         format_bytes(c.measured.tracked_peak_bytes));
    }
  }
  return out;
}

ojson fit_json(const CurveFit& c) {
  ojson j{{"quantity", c.quantity}};
  if (c.fit) {
    const PowerLawFit& f = *c.fit;
    j["c"] = f.c;
    j["k"] = f.k;
    j["k_ci"] = f.has_interval ? ojson{f.k_ci_low, f.k_ci_high} : ojson(nullptr);
    j["r2"] = f.r2;
    j["n"] = f.n;
    j["se_k"] = f.se_k;
    j["residual_sd_log"] = f.residual_sd;
  } else {
    j["error"] = c.note;
  }
  if (c.knee) {
    const KneeFit& k = *c.knee;
    j["knee"] = ojson{{"kept", k.kept},
                      {"at", k.x_break},
                      {"k_below", k.k_left},
                      {"k_below_ci", {k.k_left_ci_low, k.k_left_ci_high}},
                      {"k_above", k.k_right},
                      {"k_above_ci", {k.k_right_ci_low, k.k_right_ci_high}},
                      {"sse_single", k.sse_single},
                      {"sse_two", k.sse_two},
                      {"f", k.f},
                      {"f_critical", k.f_critical}};
  } else {
    j["knee"] = nullptr;
  }
  return j;
}

ojson amdahl_json(const std::optional<AmdahlFit>& a) {
  if (!a) return nullptr;
  return ojson{{"serial_fraction", a->serial_fraction},
               {"t1_ns", a->t1},
               {"t1_measured", a->t1_measured},
               {"exact", a->exact},
               {"rms_relative_error", a->rms_relative_error}};
}

ojson prediction_json(const Prediction& p) {
  return ojson{{"value", p.value},
               {"interval", p.has_interval ? ojson{p.low, p.high} : ojson(nullptr)},
               {"interpolation", p.interpolation}};
}

ojson point_json(const SweepPoint& p) {
  ojson roles = ojson::object();
  for (int i = 0; i < profiler::kNumRoles; ++i) {
    roles[profiler::role_name(static_cast<profiler::MemRole>(i))] = p.tracked_peak_by_role[i];
  }
  ojson classes = ojson::object();
  for (int c = 0; c < kNumOpClasses; ++c) {
    classes[op_class_name(static_cast<OpClass>(c))] = p.class_ns[c];
  }
  return ojson{{"value", p.value},
               {"batch", p.batch},
               {"seq", p.seq},
               {"threads", p.threads},
               {"parameters", p.parameters},
               {"calls", p.samples_ns.size()},
               {"median_ns", p.median_ns},
               {"median_ci_ns", {p.median_ci.low, p.median_ci.high}},
               {"pass_median_ns", p.pass_median_ns},
               {"items_per_call", p.items_per_call},
               {"throughput_per_s", p.throughput},
               {"counters",
                {{"flops", p.counters.flops},
                 {"macs", p.counters.macs},
                 {"bytes", p.counters.bytes},
                 {"allocs", p.counters.allocs},
                 {"alloc_bytes", p.counters.alloc_bytes}}},
               {"gflops", p.gflops},
               {"pct_peak", p.pct_peak},
               {"tracked_peak_bytes", p.tracked_peak_bytes},
               {"tracked_peak_by_role", roles},
               {"time_by_class_ns", classes},
               {"samples_ns", p.samples_ns}};
}

}  // namespace

std::string format_sweep(const SweepResult& r) {
  std::string out = header(r);
  out += points_table(r);
  out += fit_lines(r);
  if (r.threads) out += thread_table(r);
  if (r.prediction) out += prediction_lines(r);
  if (!r.findings.empty()) {
    out += "findings:\n";
    for (const std::string& f : r.findings) out += "  - " + f + "\n";
  }
  if (!r.environment.warnings.empty()) {
    out += "warnings:\n";
    for (const std::string& w : r.environment.warnings) out += "  " + w + "\n";
  }
  return out;
}

ojson sweep_to_json(const SweepResult& r) {
  const SweepOptions& o = r.options;
  ojson doc;
  doc["kind"] = "prism.sweep";
  doc["schema"] = 1;
  doc["model"] = r.model;
  doc["mode"] = r.mode;
  doc["vary"] = sweep_var_name(o.vary.var);
  doc["values"] = o.vary.values;
  doc["throughput_unit"] = r.throughput_unit;
  doc["kernels"] = r.kernels;
  doc["input"] = r.input;
  doc["options"] = ojson{{"passes", o.passes},
                         {"duration_s", o.bench.duration_s},
                         {"warmup", o.bench.warmup},
                         {"seed", o.bench.seed},
                         {"image_size", o.bench.model_options.image_size},
                         {"block_size", o.bench.model_options.block_size},
                         {"predict", o.predict},
                         {"check", o.check}};
  doc["fingerprint"] = fingerprint_to_json(r.fingerprint);
  doc["environment"] = ojson{{"load_avg_1m", r.environment.load_avg_1m},
                             {"busy", r.environment.busy},
                             {"warnings", r.environment.warnings}};
  ojson points = ojson::array();
  for (const SweepPoint& p : r.points) points.push_back(point_json(p));
  doc["points"] = points;
  doc["fits"] = ojson{
      {"time", fit_json(r.time)}, {"memory", fit_json(r.memory)}, {"flops", fit_json(r.flops)}};
  doc["max_pass_drift_pct"] = r.max_pass_drift_pct;
  if (r.threads) {
    const ThreadScaling& t = *r.threads;
    ojson classes = ojson::array();
    for (const ClassScaling& c : t.classes) {
      classes.push_back(ojson{{"class", op_class_name(c.op_class)},
                              {"speedup", c.speedup},
                              {"efficiency", c.efficiency},
                              {"amdahl", amdahl_json(c.amdahl)}});
    }
    doc["threads"] = ojson{{"speedup", t.speedup},
                           {"efficiency", t.efficiency},
                           {"amdahl", amdahl_json(t.amdahl)},
                           {"classes", classes}};
  } else {
    doc["threads"] = nullptr;
  }
  if (r.prediction) {
    const SweepPrediction& p = *r.prediction;
    doc["prediction"] =
        ojson{{"at", p.at},
              {"time_ns", prediction_json(p.time_ns)},
              {"memory_bytes", p.has_memory ? prediction_json(p.memory_bytes) : ojson(nullptr)},
              {"time_from_knee", p.time_from_knee},
              {"memory_from_knee", p.memory_from_knee},
              {"amdahl_time_ns", p.amdahl_time_ns ? ojson(*p.amdahl_time_ns) : ojson(nullptr)}};
  } else {
    doc["prediction"] = nullptr;
  }
  if (r.check) {
    const SweepCheck& c = *r.check;
    doc["check"] = ojson{
        {"point", point_json(c.measured)},
        {"time_error_pct", c.time_error_pct},
        {"memory_error_pct", c.memory_error_pct ? ojson(*c.memory_error_pct) : ojson(nullptr)},
        {"time_within_interval", c.time_within},
        {"memory_within_interval", c.memory_within}};
  } else {
    doc["check"] = nullptr;
  }
  doc["findings"] = r.findings;
  return doc;
}

}  // namespace prism::analysis
