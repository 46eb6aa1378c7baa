// The views of one profile (profile_views.h): op breakdown, roofline, memory timeline, module
// icicle (module_view.cpp), step time (step_view.cpp). Each returns a Section whose body is an
// <svg> (or a note saying why there is no picture).
#include "analysis/html/profile_views.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analysis/report_format.h"

namespace prism::analysis::html {

namespace {

std::string percent(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100 * part / whole) : "-";
}

// "1.23 GFLOP", "456 kFLOP": counts in 1000s, three significant digits.
std::string si(double v, const char* unit) {
  const char* prefix[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (std::fabs(v) >= 1000 && i < 5) v /= 1000, ++i;
  return fmt::format("{:.3g} {}{}", v, prefix[i], unit);
}

// What fits left of the bars: 11 px monospace is about 6.6 px a character (the page's style).
constexpr size_t kLabelChars = 43;

// `text` cut to `n` characters (UTF-8 aware, so "·" is never split), "…" marking the cut; the
// tooltip keeps the whole label.
std::string fit(const std::string& text, size_t n) {
  size_t chars = 0, i = 0;
  for (; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // continuation byte
    if (chars == n - 1) {
      size_t rest = 0;
      for (size_t j = i; j < text.size(); ++j) {
        rest += (static_cast<unsigned char>(text[j]) & 0xC0) != 0x80;
      }
      return rest <= 1 ? text : text.substr(0, i) + "…";
    }
    ++chars;
  }
  return text;
}

// One bar of the op breakdown: an op row, or the rows past kMaxBars taken together.
struct Bar {
  std::string label, cls, tooltip;
  double ns = 0;
};

std::string op_tooltip(const ProfileOp& op, double total_ns) {
  const double ns = op.work_ns();
  std::string t = op.label() + ", " + op.phase + ", " + op.variant + ", " + op.device + "\n";
  t += fmt::format("{} calls, {} ({} of op time)", op.calls, format_ns(ns), percent(ns, total_ns));
  if (op.gpu_ns >= 0) t += ", GPU kernel time";
  t += "\n" + si(op.flops, "FLOP");
  if (ns > 0) t += ", " + fmt::format("{:.2f} GFLOP/s", op.flops / ns);
  t += "\n" + si(op.bytes, "B") + " moved (minimum)";
  if (ns > 0) t += ", " + fmt::format("{:.2f} GB/s", op.bytes / ns);
  t += fmt::format("\n{} allocations, {}", op.allocs, format_bytes(op.alloc_bytes));
  return t;
}

// The phase colours' legend; recompute only when activation checkpointing ran, communication
// only when a data-parallel run synced gradients.
std::vector<std::pair<std::string, std::string>> phase_keys(const ProfileData& p) {
  std::vector<std::pair<std::string, std::string>> keys{
      {"fwd", "forward"}, {"bwd", "backward"}, {"opt", "optimizer"}};
  for (const char* phase : {"recompute", "communication"}) {
    for (const ProfileOp& op : p.ops) {
      if (op.phase == phase) {
        keys.emplace_back(phase_class(phase), phase);
        break;
      }
    }
  }
  return keys;
}

std::vector<Bar> breakdown_bars(const ProfileData& p, double* total_ns) {
  std::vector<const ProfileOp*> rows;
  double total = 0;
  for (const ProfileOp& op : p.ops) {
    rows.push_back(&op);
    total += op.work_ns();
  }
  // Longest first; ties by label so the order never depends on the file's.
  std::stable_sort(rows.begin(), rows.end(), [](const ProfileOp* a, const ProfileOp* b) {
    if (a->work_ns() != b->work_ns()) return a->work_ns() > b->work_ns();
    return a->label() < b->label();
  });
  std::vector<Bar> bars;
  const size_t shown = rows.size() > static_cast<size_t>(kMaxBars) ? kMaxBars - 1 : rows.size();
  for (size_t i = 0; i < shown; ++i) {
    const ProfileOp& op = *rows[i];
    std::string label = op.label() + " · " + op.phase;
    if (!op.variant.empty()) label += " · " + op.variant;  // ops with no kernel (ones) have none
    if (op.device != "cpu") label += " · " + op.device;
    bars.push_back({label, phase_class(op.phase), op_tooltip(op, total), op.work_ns()});
  }
  if (shown < rows.size()) {
    Bar rest{fmt::format("{} more rows", rows.size() - shown), "other", "", 0};
    for (size_t i = shown; i < rows.size(); ++i) rest.ns += rows[i]->work_ns();
    rest.tooltip = fmt::format("the {} shortest rows together: {} ({} of op time)",
                               rows.size() - shown, format_ns(rest.ns), percent(rest.ns, total));
    bars.push_back(rest);
  }
  if (total_ns) *total_ns = total;
  return bars;
}

}  // namespace

std::vector<Section> profile_sections(const ProfileData& p, const RooflinePeaks& peaks) {
  std::vector<Section> out{op_breakdown_view(p), roofline_view(p, peaks), memory_view(p),
                           module_view(p)};
  if (std::optional<Section> steps = step_view(p)) out.push_back(std::move(*steps));
  return out;
}

Block profile_block(const std::string& heading, const ProfileData& p, const RooflinePeaks& peaks) {
  return {heading, describe_run(p), profile_sections(p, peaks)};
}

// ---- op breakdown ----------------------------------------------------------------------------

Scale op_breakdown_scale(const ProfileData& p) {
  double longest = 0;
  for (const Bar& b : breakdown_bars(p, nullptr)) longest = std::max(longest, b.ns);
  return linear_scale(0, longest / 1e6, kBarArea.left, kBarArea.right());  // in ms
}

Section op_breakdown_view(const ProfileData& p) {
  Section s{"Op breakdown",
            "Each bar is one op row (op, phase, kernel variant): its self time summed over the "
            "profiled steps, longest first. Hover a bar for calls, FLOPs, GB/s and allocations.",
            ""};
  double total = 0;
  const std::vector<Bar> bars = breakdown_bars(p, &total);
  if (bars.empty()) {
    s.body = note("The profile has no ops: nothing ran while it recorded.");
    return s;
  }
  const Scale x = op_breakdown_scale(p);
  const double plot_h = kBarRowHeight * static_cast<double>(bars.size());
  const double axis_y = kBarArea.top + plot_h;
  Svg svg(kViewWidth, axis_y + 44, "self time per op row");
  svg.x_axis(x, axis_y, kBarArea.top, "self time, ms (all profiled steps)");
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double y = kBarArea.top + kBarRowHeight * static_cast<double>(i);
    const double w = x(b.ns / 1e6) - x(0);
    svg.text(kBarArea.left - 8, y + 13, fit(b.label, kLabelChars), "", "end", b.tooltip);
    svg.rect(kBarArea.left, y + 2, w, kBarRowHeight - 4, b.cls, b.tooltip);
    svg.text(kBarArea.left + w + 5, y + 13, format_ns(b.ns) + "  " + percent(b.ns, total), "tick");
  }
  s.body = legend(phase_keys(p)) + svg.str();
  return s;
}

// ---- roofline --------------------------------------------------------------------------------

std::vector<const ProfileOp*> roofline_ops(const ProfileData& p) {
  std::vector<const ProfileOp*> out;
  for (const ProfileOp& op : p.ops) {
    if (op.device == "cpu" && op.flops > 0 && op.bytes > 0 && op.work_ns() > 0) out.push_back(&op);
  }
  return out;
}

std::pair<Scale, Scale> roofline_scales(const ProfileData& p, const RooflinePeaks& peaks) {
  const double ridge = peaks.gflops / peaks.gbps;
  double x_lo = ridge / 10, x_hi = ridge * 10;
  double y_lo = peaks.gflops, y_hi = 2 * peaks.gflops;
  for (const ProfileOp* op : roofline_ops(p)) {
    const double intensity = op->flops / op->bytes;
    x_lo = std::min(x_lo, intensity);
    x_hi = std::max(x_hi, intensity);
    y_lo = std::min(y_lo, op->flops / op->work_ns());  // FLOP per ns = GFLOP/s
  }
  const Scale x = log_scale(x_lo, x_hi, kRooflineArea.left, kRooflineArea.right());
  y_lo = std::min(y_lo, peaks.gbps * x.d0);
  return {x, log_scale(y_lo, y_hi, kRooflineArea.bottom(), kRooflineArea.top)};
}

Section roofline_view(const ProfileData& p, const RooflinePeaks& peaks) {
  Section s{"Roofline",
            "x: FLOPs per byte moved; y: GFLOP/s reached; one circle per op, its area "
            "proportional to the op's time. Under the slanted roof an op is limited by memory "
            "bandwidth (above it, it ran from cache), under the flat one by compute; the ridge "
            "is where they meet.",
            ""};
  if (!peaks.known()) {
    s.body = note(
        "No machine peaks are cached for this build: run <code>prism machine</code> to add the "
        "roofline.");
    return s;
  }
  const std::vector<const ProfileOp*> ops = roofline_ops(p);
  std::string notes;
  if (ops.size() < p.ops.size()) {
    notes = note(fmt::format(
        "{} of {} op rows are not drawn: they do no FLOPs or move no bytes, or ran on a GPU "
        "(the roofs are this machine's CPU's).",
        p.ops.size() - ops.size(), p.ops.size()));
  }
  const auto [x, y] = roofline_scales(p, peaks);
  const PlotArea& a = kRooflineArea;
  Svg svg(kViewWidth, a.bottom() + 44, "roofline: intensity against achieved GFLOP/s");
  svg.x_axis(x, a.bottom(), a.top, "arithmetic intensity, FLOP/byte");
  svg.y_axis(y, a.left, a.right(), "GFLOP/s");

  // The memory roof rises at the bandwidth (y = gbps * x) until it meets the flat compute roof
  // at the ridge; the y range reaches down to it at the left edge (roofline_scales).
  const double ridge = peaks.gflops / peaks.gbps;
  const double x_in = x.d0;
  svg.polyline(
      {{x(x_in), y(peaks.gbps * x_in)}, {x(ridge), y(peaks.gflops)}, {x(x.d1), y(peaks.gflops)}},
      "roof",
      fmt::format("roofs: {:.1f} GB/s memory, {:.1f} GFLOP/s compute", peaks.gbps, peaks.gflops));
  svg.line(x(ridge), y(y.d0), x(ridge), y(peaks.gflops), "ridge",
           fmt::format("ridge: {:.2f} FLOP/byte", ridge));
  svg.text(x(x.d1) - 4, y(peaks.gflops) - 6,
           fmt::format("peak {:.1f} GFLOP/s ({} threads)", peaks.gflops, p.threads), "", "end");
  svg.text(x(ridge) + 5, y(y.d0) - 6, fmt::format("ridge {:.2f} FLOP/B", ridge), "tick");
  // Below and right of the slanted roof's start, where the rising line has left room.
  svg.text(x(x_in) + 40, y(peaks.gbps * x_in) + 14, fmt::format("memory {:.1f} GB/s", peaks.gbps),
           "");

  double longest = 0;
  for (const ProfileOp* op : ops) longest = std::max(longest, op->work_ns());
  // Biggest first, so a small circle is never hidden under a big one.
  std::vector<const ProfileOp*> order = ops;
  std::stable_sort(order.begin(), order.end(), [](const ProfileOp* l, const ProfileOp* r) {
    return l->work_ns() > r->work_ns();
  });
  for (const ProfileOp* op : order) {
    const double intensity = op->flops / op->bytes, gflops = op->flops / op->work_ns();
    const double roof = std::min(peaks.gflops, peaks.gbps * intensity);
    const double r = 3 + 12 * std::sqrt(op->work_ns() / longest);  // area ~ time
    svg.circle(
        x(intensity), y(gflops), r, phase_class(op->phase),
        fmt::format("{} · {} · {}\n{:.3g} FLOP/byte, {:.3g} GFLOP/s ({} of the roof "
                    "there, {} bound)\n{}",
                    op->label(), op->phase, op->variant, intensity, gflops, percent(gflops, roof),
                    intensity < ridge ? "memory" : "compute", format_ns(op->work_ns())));
  }
  s.body =
      legend(phase_keys(p)) + notes + svg.str();
  return s;
}

}  // namespace prism::analysis::html
