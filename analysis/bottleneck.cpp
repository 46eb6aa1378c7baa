#include "analysis/bottleneck.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <tuple>

#include <fmt/format.h>

#include "analysis/report_format.h"
#include "profiler/aggregate.h"

namespace prism::analysis {

using ojson = nlohmann::ordered_json;

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::compute:
      return "compute";
    case Bound::memory:
      return "memory";
    case Bound::overhead:
      return "overhead";
    case Bound::undetermined:
      return "undetermined";
  }
  return "?";
}

// ---- reading a profile -------------------------------------------------------------------------

WindowLoad window_load(const profiler::Profile& p, double steps) {
  WindowLoad w;
  w.steps = steps > 0 ? steps : 1;
  w.wall_ns = static_cast<double>(p.wall_ns());
  w.profiler_overhead_ns = p.meta.overhead_ns_per_op;
  const auto& recs = p.recording.records;
  w.records = static_cast<int64_t>(recs.size());
  const std::vector<int64_t> self = profiler::record_self_times(p);

  // in_data[i]: record i is a "data" scope or runs inside one. A parent opens before its child,
  // so one pass in index order sees every parent first; the recursion covers any other order.
  std::vector<int8_t> in_data(recs.size(), -1);
  std::function<bool(int32_t)> inside = [&](int32_t i) -> bool {
    if (i < 0 || static_cast<size_t>(i) >= recs.size()) return false;
    int8_t& v = in_data[static_cast<size_t>(i)];
    if (v < 0) {
      const profiler::OpRecord& r = recs[static_cast<size_t>(i)];
      const bool is_data = r.kind == profiler::Kind::scope && std::string_view(r.op) == "data";
      v = is_data || (r.parent != i && inside(r.parent)) ? 1 : 0;
    }
    return v == 1;
  };

  using Key = std::tuple<std::string, int, std::string, std::string, std::string>;
  std::map<Key, size_t> index;
  for (size_t i = 0; i < recs.size(); ++i) {
    const profiler::OpRecord& r = recs[i];
    if (r.kind == profiler::Kind::scope) {
      // The outermost data spans: a loader call made inside another data span is not counted
      // twice.
      if (std::string_view(r.op) == "data" && !inside(r.parent)) {
        w.data_wait_ns += static_cast<double>(r.dur_ns);
      }
      continue;
    }
    if (inside(static_cast<int32_t>(i))) continue;  // batch assembly: data wait, not op time
    const Key key{r.op, static_cast<int>(r.phase), r.variant, r.grad_of, r.device};
    auto [it, added] = index.try_emplace(key, w.ops.size());
    if (added) {
      OpLoad o;
      o.name = r.op;
      o.phase = profiler::phase_name(r.phase);
      o.variant = r.variant;
      o.grad_of = r.grad_of;
      o.device = r.device;
      w.ops.push_back(std::move(o));
    }
    OpLoad& o = w.ops[it->second];
    o.calls += 1;
    // A GPU op's host time is the queueing; its device time is what it cost.
    o.self_ns += static_cast<double>(r.gpu_ns >= 0 ? r.gpu_ns : self[i]);
    o.flops += static_cast<double>(r.cost.flops);
    o.bytes += static_cast<double>(r.cost.bytes);
    o.threads = std::max<int>(o.threads, r.threads);
  }
  return w;
}

Peaks peaks_of(const profiler::MachinePeak& m) {
  auto shared = std::make_shared<const profiler::MachinePeak>(m);
  Peaks p;
  p.gflops = [shared](int threads) { return shared->peak_gflops(threads); };
  p.roof = [shared](int threads, double working_set) {
    return shared->roof_for(threads, working_set);
  };
  p.region_ns = [shared](int threads) {
    const profiler::ThreadLimits* row = shared->row(threads);
    return row != nullptr ? row->region_us.median * 1e3 : 0.0;
  };
  return p;
}

// ---- classifying
// ---------------------------------------------------------------------------------

namespace {

std::string op_label(const OpLoad& o) {
  return o.grad_of.empty() ? o.name : o.name + " (" + o.grad_of + ")";
}

BoundRow classify(const OpLoad& op, double steps, double threshold_ns,
                  const BottleneckSettings& s) {
  BoundRow r;
  r.op = op;
  r.op.calls = op.calls / steps;
  r.op.self_ns = op.self_ns / steps;
  r.op.flops = op.flops / steps;
  r.op.bytes = op.bytes / steps;
  r.mean_ns = op.calls > 0 ? op.self_ns / op.calls : 0;
  if (op.bytes > 0) r.intensity = op.flops / op.bytes;
  if (threshold_ns > 0 && r.mean_ns < threshold_ns) {
    r.bound = Bound::overhead;
    r.why = fmt::format("{}/call < T {}", format_ns(r.mean_ns), format_ns(threshold_ns));
    return r;
  }
  if (op.device != "cpu") {
    r.why = "a GPU op: the map has the CPU's roofs only";
    return r;
  }
  if (op.flops <= 0 && op.bytes <= 0) {
    r.why = "no cost formula";
    return r;
  }
  if (!s.peaks) {
    r.why = "no machine figures";
    return r;
  }
  const double bytes_per_call = op.calls > 0 ? op.bytes / op.calls : op.bytes;
  const profiler::Roof roof = s.peaks->roof(op.threads, bytes_per_call);
  r.peak_gflops = s.peaks->gflops(op.threads);
  r.roof_level = roof.level;
  r.roof_gbps = roof.gbps;
  if (r.peak_gflops <= 0 || (op.bytes > 0 && roof.gbps <= 0)) {
    r.why = "no machine figures at " + std::to_string(op.threads) + " threads";
    return r;
  }
  if (roof.gbps > 0) r.ridge = r.peak_gflops / roof.gbps;
  // GFLOP/s and GB/s are FLOPs and bytes per ns.
  const double gflops = op.self_ns > 0 ? op.flops / op.self_ns : 0;
  const double gbps = op.self_ns > 0 ? op.bytes / op.self_ns : 0;
  if (op.bytes <= 0 || r.intensity >= r.ridge) {
    r.bound = Bound::compute;
    r.roof_fraction = gflops / r.peak_gflops;
    r.why = op.bytes <= 0 ? "no bytes counted"
                          : fmt::format("{:.3g} FLOP/B >= ridge {:.3g} ({})", r.intensity, r.ridge,
                                        roof.level);
  } else {
    r.bound = Bound::memory;
    r.roof_fraction = gbps / roof.gbps;
    r.why = fmt::format("{:.3g} FLOP/B < ridge {:.3g} ({})", r.intensity, r.ridge, roof.level);
  }
  return r;
}

std::string pct(double fraction) {
  return fmt::format("{:.1f}%", 100 * fraction);
}

std::string threads_flag(const LeverContext& c) {
  return c.threads > 0 ? fmt::format(" --threads {}", c.threads) : "";
}

std::string data_flag(const LeverContext& c) {
  return c.data.empty() ? "" : " --data " + c.data;
}

// `prism lab OP` where the lab knows the op; else `prism ops`, which lists its variants.
std::string kernel_command(const LeverContext& c, const std::string& op) {
  if (std::find(c.lab_ops.begin(), c.lab_ops.end(), op) != c.lab_ops.end()) {
    return "prism lab " + op + threads_flag(c);
  }
  return "prism ops";
}

std::string bench_command(const LeverContext& c, const std::string& batches, bool model_off) {
  if (c.model.empty()) return "";
  return fmt::format("prism bench {} --mode {}{}{} --batch {}{}", c.model, c.mode,
                     model_off ? " --model-off" : "", data_flag(c), batches, threads_flag(c));
}

// The row of `bound` with the most time, and the time-weighted roof fraction of its class.
struct ClassSummary {
  const BoundRow* top = nullptr;
  double weighted_fraction = 0;
};

ClassSummary summarize(const std::vector<BoundRow>& rows, Bound bound) {
  ClassSummary c;
  double time = 0, weighted = 0;
  for (const BoundRow& r : rows) {
    if (r.bound != bound) continue;
    if (!c.top || r.op.self_ns > c.top->op.self_ns) c.top = &r;
    time += r.op.self_ns;
    weighted += r.op.self_ns * std::max(r.roof_fraction, 0.0);
  }
  c.weighted_fraction = time > 0 ? weighted / time : 0;
  return c;
}

BottleneckVerdict input_pipeline(const BottleneckMap& m, const LeverContext& c) {
  BottleneckVerdict v;
  v.kind = "input pipeline";
  v.share = m.share(m.data_wait_ns);
  v.evidence = fmt::format("the step waited {} of its {} for the next batch ({})",
                           format_ns(m.data_wait_ns), format_ns(m.step_ns), pct(v.share));
  v.lever =
      "prefetch more batches or use more loader workers, or make a batch cheaper to assemble; "
      "first time the loader alone against the model";
  v.command = c.data.empty() ? ""
                             : bench_command(c, std::to_string(std::max<int64_t>(c.batch, 1)),
                                             /*model_off=*/true);
  return v;
}

BottleneckVerdict kernel_overhead(const BottleneckMap& m, const LeverContext& c) {
  BottleneckVerdict v;
  v.kind = "kernel overhead";
  const double ops = m.bound_ns[static_cast<size_t>(Bound::overhead)];
  v.share = m.share(ops + m.outside_ns);
  v.evidence = m.overhead_calls > 0
                   ? fmt::format(
                         "{:.0f} of {:.0f} op calls per step are under T = {} (mean {}/call): {} "
                         "of the step",
                         m.overhead_calls, m.op_calls, format_ns(m.threshold_ns),
                         format_ns(m.overhead_mean_ns), pct(m.share(ops)))
                   : fmt::format("none of the {:.0f} op calls per step is under T = {}", m.op_calls,
                                 format_ns(m.threshold_ns));
  v.evidence += fmt::format("; the framework between ops (dispatch, autograd) takes {}",
                            pct(m.share(m.outside_ns)));
  v.lever = "larger batches (the same calls do more work each) or fused ops (fewer calls)";
  if (c.batch > 0) {
    const int64_t bigger = std::min<int64_t>(c.batch * 4, 1'000'000);
    v.command = bench_command(c, fmt::format("{},{}", c.batch, bigger), false);
  }
  return v;
}

BottleneckVerdict roof_verdict(const BottleneckMap& m, const LeverContext& c, Bound bound) {
  BottleneckVerdict v;
  const bool memory = bound == Bound::memory;
  v.kind = memory ? "memory bandwidth" : "compute";
  v.share = m.share(m.bound_ns[static_cast<size_t>(bound)]);
  const ClassSummary cs = summarize(m.rows, bound);
  const bool near = cs.weighted_fraction >= kNearRoof;
  v.evidence = fmt::format("{}-bound ops take {} of the step at {} of their roof (time-weighted)",
                           bound_name(bound), pct(v.share), pct(cs.weighted_fraction));
  if (cs.top) {
    const BoundRow& t = *cs.top;
    v.evidence += fmt::format(
        "; the largest, {} {}, {:.3g} FLOP/B against a ridge of {:.3g} ({} "
        "roof), reaches {} of it",
        op_label(t.op), t.op.phase, t.intensity, t.ridge, t.roof_level, pct(t.roof_fraction));
  }
  if (memory) {
    v.lever = near ? "fused kernels (one pass over the bytes instead of several) or lower "
                     "precision (fewer bytes per value): the kernels already run near the "
                     "bandwidth their working sets get"
                   : "a better kernel: the bytes could move faster than they do";
  } else {
    v.lever = near ? "fewer FLOPs (a smaller or reshaped model) or lower precision: the kernels "
                     "already run near the machine's peak"
                   : "a better kernel (blocking, SIMD, threads): the arithmetic runs well below "
                     "the machine's peak";
  }
  if (cs.top) {
    v.command = !memory && near && !c.model.empty() ? "prism summary " + c.model
                                                    : kernel_command(c, cs.top->op.name);
  }
  return v;
}

std::optional<BottleneckVerdict> activation_memory(const BottleneckSettings& s) {
  if (s.memory_budget_bytes <= 0 || s.tracked_peak_bytes <= 0) return std::nullopt;
  const double act =
      static_cast<double>(s.activation_peak_bytes) / static_cast<double>(s.tracked_peak_bytes);
  const double used =
      static_cast<double>(s.tracked_peak_bytes) / static_cast<double>(s.memory_budget_bytes);
  if (act < kActivationShare || used < kBudgetShare) return std::nullopt;
  BottleneckVerdict v;
  v.kind = "activation memory";
  v.share = used;
  v.evidence =
      fmt::format("activations are {} of the tracked peak of {} ({}), which is {} of the {} budget",
                  format_bytes(s.activation_peak_bytes), format_bytes(s.tracked_peak_bytes),
                  pct(act), pct(used), format_bytes(s.memory_budget_bytes));
  v.lever =
      "activation checkpointing (keep fewer activations, recompute them in backward) or a "
      "smaller batch";
  const LeverContext& c = s.lever;
  if (c.batch > 1) {
    v.command = bench_command(c, fmt::format("{},{}", c.batch / 2, c.batch), false);
  }
  return v;
}

}  // namespace

BottleneckMap map_bottlenecks(const WindowLoad& load, const BottleneckSettings& s) {
  BottleneckMap m;
  m.has_peaks = s.peaks.has_value();
  m.no_peaks_reason = m.has_peaks ? "" : s.no_peaks_reason;
  m.dispatch_ns = s.dispatch_ns;
  m.profiler_overhead_ns = load.profiler_overhead_ns;
  m.threshold_ns = s.dispatch_ns + load.profiler_overhead_ns;
  m.steps = load.steps > 0 ? load.steps : 1;

  double op_ns = 0;
  for (const OpLoad& o : load.ops) {
    if (o.calls <= 0) continue;
    BoundRow r = classify(o, m.steps, m.threshold_ns, s);
    m.bound_ns[static_cast<size_t>(r.bound)] += r.op.self_ns;
    op_ns += r.op.self_ns;
    m.op_calls += r.op.calls;
    if (r.op.phase == "optimizer") m.optimizer_ns += r.op.self_ns;
    if (r.bound == Bound::overhead) m.overhead_calls += r.op.calls;
    m.rows.push_back(std::move(r));
  }
  std::stable_sort(m.rows.begin(), m.rows.end(), [](const BoundRow& a, const BoundRow& b) {
    return a.op.self_ns > b.op.self_ns;
  });
  if (m.overhead_calls > 0) {
    m.overhead_mean_ns = m.bound_ns[static_cast<size_t>(Bound::overhead)] / m.overhead_calls;
  }

  m.data_wait_ns = load.data_wait_ns / m.steps;
  // The step: the window's wall time when known; else the op time alone.
  m.step_ns = load.wall_ns > 0 ? load.wall_ns / m.steps : op_ns + m.data_wait_ns;

  m.threads = std::max(1, s.lever.threads);
  if (s.peaks && s.peaks->region_ns && m.threads > 1) m.region_ns = s.peaks->region_ns(m.threads);
  if (m.threads > 1) {
    for (size_t i = 0; i < m.rows.size(); ++i) {
      const OpLoad& o = m.rows[i].op;
      if (o.device == "cpu" && o.threads < m.threads && m.share(o.self_ns) >= kUnsplitShare) {
        m.unsplit.push_back(i);
      }
    }
  }
  const double outside = std::max(0.0, m.step_ns - op_ns - m.data_wait_ns);
  m.profiler_ns =
      std::min(outside, static_cast<double>(load.records) * load.profiler_overhead_ns / m.steps);
  m.outside_ns = outside - m.profiler_ns;

  // The time verdicts: each fires at its threshold; ranked by share of the step.
  const LeverContext& c = s.lever;
  std::vector<BottleneckVerdict> time;
  time.push_back(input_pipeline(m, c));
  time.push_back(kernel_overhead(m, c));
  time.push_back(roof_verdict(m, c, Bound::memory));
  time.push_back(roof_verdict(m, c, Bound::compute));
  const double thresholds[] = {kDataWaitShare, kOverheadShare, kMemoryBoundShare,
                               kComputeBoundShare};
  std::vector<BottleneckVerdict> fired;
  for (size_t i = 0; i < time.size(); ++i) {
    if (time[i].share >= thresholds[i] && time[i].share > 0) fired.push_back(time[i]);
  }
  if (fired.empty() && m.step_ns > 0) {
    // Nothing crosses its threshold: name the largest share, marked as not dominating.
    auto largest = std::max_element(
        time.begin(), time.end(),
        [](const BottleneckVerdict& a, const BottleneckVerdict& b) { return a.share < b.share; });
    if (largest->share > 0) {
      fired.push_back(*largest);
      fired.back().fired = false;
    }
  }
  std::stable_sort(
      fired.begin(), fired.end(),
      [](const BottleneckVerdict& a, const BottleneckVerdict& b) { return a.share > b.share; });
  m.verdicts = std::move(fired);
  if (std::optional<BottleneckVerdict> v = activation_memory(s))
    m.verdicts.push_back(std::move(*v));
  return m;
}

// ---- the report --------------------------------------------------------------------------------

namespace {

// The ops that ran on fewer threads than the run had, and why: a call too short to pay for a
// region (under kSplitRegions of them) or a kernel that did not split a call long enough to.
std::string unsplit_section(const BottleneckMap& m) {
  if (m.unsplit.empty()) return "";
  std::string out = fmt::format(
      "\n  ops that did not use all {} threads (at least {:.1f}% of the step each){}:\n", m.threads,
      100 * kUnsplitShare,
      m.region_ns > 0
          ? fmt::format("; a parallel region costs {} here (prism machine)", format_ns(m.region_ns))
          : "");
  for (size_t i : m.unsplit) {
    const BoundRow& r = m.rows[i];
    std::string why;
    if (m.region_ns <= 0) {
      why = "its kernel kept it on one team member (no region cost known to weigh it against)";
    } else if (r.mean_ns < kSplitRegions * m.region_ns) {
      why = fmt::format("{:.0f} region costs a call: too short to gain from a split",
                        r.mean_ns / m.region_ns);
    } else if (r.op.threads > 1) {
      why = fmt::format(
          "{:.0f} region costs a call, long enough to gain, but its kernel split it over only {} "
          "threads (kernels/cpu/parallel.h)",
          r.mean_ns / m.region_ns, r.op.threads);
    } else {
      why = fmt::format(
          "{:.0f} region costs a call, long enough to gain, but its kernel did not split it "
          "(no parallel path, or a size threshold above this call: kernels/cpu/parallel.h)",
          r.mean_ns / m.region_ns);
    }
    out += fmt::format("    {} {}: {} of {} threads, {:g} calls of {} ({}): {}\n", op_label(r.op),
                       r.op.phase, r.op.threads, m.threads, r.op.calls, format_ns(r.mean_ns),
                       pct(m.share(r.op.self_ns)), why);
  }
  return out;
}

}  // namespace

std::string format_bottleneck(const BottleneckMap& m, int max_rows) {
  std::string out = fmt::format("bottleneck map: a step of {}", format_ns(m.step_ns));
  out += m.steps != 1 ? fmt::format(" (mean of {:g} profiled)\n", m.steps) : "\n";
  auto part = [&](const char* label, double ns) {
    return fmt::format("{} {}", label, pct(m.share(ns)));
  };
  const auto& b = m.bound_ns;
  out += "  where it went: " + part("data wait", m.data_wait_ns) + ", " +
         part("compute-bound ops", b[0]) + ", " + part("memory-bound", b[1]) + ", " +
         part("overhead-bound", b[2]) + ", " + part("undetermined", b[3]) + ", " +
         part("between ops", m.outside_ns) + ", " + part("profiler", m.profiler_ns) + "\n";
  out += fmt::format("  optimizer: {} of the step\n", pct(m.share(m.optimizer_ns)));
  out += fmt::format(
      "  overhead threshold T = {} per call: an op call that does no work ({}) + the "
      "profiler's record ({}); ",
      format_ns(m.threshold_ns), format_ns(m.dispatch_ns), format_ns(m.profiler_overhead_ns));
  out += m.overhead_calls > 0
             ? fmt::format(
                   "{:.0f} of {:.0f} op calls per step are under it, mean {}/call, {} of "
                   "the step\n",
                   m.overhead_calls, m.op_calls, format_ns(m.overhead_mean_ns), pct(m.share(b[2])))
             : fmt::format("none of the {:.0f} op calls per step is under it\n", m.op_calls);
  if (!m.has_peaks) {
    out += "  memory- and compute-bound cannot be told apart without the machine's figures (" +
           m.no_peaks_reason + "): ops are classed by overhead only\n";
  }

  TextColumns t({"op", "phase", "variant", "thr", "calls/step", "time/call", "step %", "FLOP/B",
                 "roof", "ridge", "% roof", "bound"});
  const size_t n =
      max_rows > 0 ? std::min(m.rows.size(), static_cast<size_t>(max_rows)) : m.rows.size();
  for (size_t i = 0; i < n; ++i) {
    const BoundRow& r = m.rows[i];
    t.add({op_label(r.op), r.op.phase, r.op.variant.empty() ? "-" : r.op.variant,
           std::to_string(r.op.threads), fmt::format("{:g}", r.op.calls), format_ns(r.mean_ns),
           fmt::format("{:.1f}", 100 * m.share(r.op.self_ns)),
           r.intensity >= 0 ? fmt::format("{:.3g}", r.intensity) : "-",
           r.roof_level.empty() ? "-" : r.roof_level,
           r.ridge > 0 ? fmt::format("{:.3g}", r.ridge) : "-",
           r.roof_fraction >= 0 ? fmt::format("{:.1f}", 100 * r.roof_fraction) : "-",
           bound_name(r.bound)});
  }
  out += "\n" + t.str("  ");
  if (n < m.rows.size()) out += fmt::format("  ({} more rows)\n", m.rows.size() - n);
  out += unsplit_section(m);

  out += "\nverdicts, ranked by share of the step:\n";
  if (m.verdicts.empty()) out += "  none: the profile holds no op time\n";
  if (!m.has_peaks && m.share(b[3]) >= kMemoryBoundShare) {
    out += fmt::format(
        "  ({} of the step is in ops that are memory- or compute-bound; the machine's figures "
        "tell which: prism machine)\n",
        pct(m.share(b[3])));
  }
  int rank = 0;
  for (const BottleneckVerdict& v : m.verdicts) {
    const std::string share =
        v.kind == "activation memory"
            ? fmt::format("tracked peak at {} of the memory budget", pct(v.share))
            : fmt::format("{} of the step", pct(v.share));
    out += fmt::format("  {}. {}: {}{}\n", ++rank, v.kind, share,
                       v.fired ? "" : " (below its threshold: no single limit dominates)");
    out += "     evidence: " + v.evidence + "\n";
    out += "     lever: " + v.lever + "\n";
    if (!v.command.empty()) out += "     try: " + v.command + "\n";
  }
  return out;
}

ojson bottleneck_json(const BottleneckMap& m) {
  ojson rows = ojson::array();
  for (const BoundRow& r : m.rows) {
    rows.push_back(ojson{{"name", r.op.name},
                         {"phase", r.op.phase},
                         {"variant", r.op.variant},
                         {"grad_of", r.op.grad_of},
                         {"device", r.op.device},
                         {"threads", r.op.threads},
                         {"calls_per_step", r.op.calls},
                         {"self_ns_per_step", r.op.self_ns},
                         {"mean_ns_per_call", r.mean_ns},
                         {"flop_per_byte", r.intensity >= 0 ? ojson(r.intensity) : ojson()},
                         {"roof_level", r.roof_level},
                         {"roof_gbps", r.roof_gbps},
                         {"ridge_flop_per_byte", r.ridge},
                         {"roof_fraction", r.roof_fraction >= 0 ? ojson(r.roof_fraction) : ojson()},
                         {"bound", bound_name(r.bound)},
                         {"why", r.why}});
  }
  ojson verdicts = ojson::array();
  for (const BottleneckVerdict& v : m.verdicts) {
    verdicts.push_back(ojson{{"kind", v.kind},
                             {"share", v.share},
                             {"fired", v.fired},
                             {"evidence", v.evidence},
                             {"lever", v.lever},
                             {"command", v.command}});
  }
  const auto& b = m.bound_ns;
  return ojson{{"has_peaks", m.has_peaks},
               {"no_peaks_reason", m.no_peaks_reason},
               {"steps", m.steps},
               {"step_ns", m.step_ns},
               {"threshold_ns", m.threshold_ns},
               {"threads", m.threads},
               {"region_ns", m.region_ns},
               {"dispatch_ns", m.dispatch_ns},
               {"profiler_overhead_ns", m.profiler_overhead_ns},
               {"shares",
                {{"data_wait", m.share(m.data_wait_ns)},
                 {"compute", m.share(b[0])},
                 {"memory", m.share(b[1])},
                 {"overhead", m.share(b[2])},
                 {"undetermined", m.share(b[3])},
                 {"between_ops", m.share(m.outside_ns)},
                 {"profiler", m.share(m.profiler_ns)},
                 {"optimizer", m.share(m.optimizer_ns)}}},
               {"overhead",
                {{"op_calls_per_step", m.op_calls},
                 {"calls_per_step", m.overhead_calls},
                 {"mean_ns_per_call", m.overhead_mean_ns}}},
               {"rows", rows},
               {"verdicts", verdicts}};
}

}  // namespace prism::analysis
