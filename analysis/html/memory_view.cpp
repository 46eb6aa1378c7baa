// The memory timeline view (profile_views.h): live tracked bytes over the profiled window, as a
// step curve (the level holds until the next allocation or free), stacked by role when the
// samples carry roles, with the peak marked and the op that reached it named.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analysis/html/profile_views.h"
#include "analysis/report_format.h"

namespace prism::analysis::html {

namespace {

// The roles in the order they are stacked, bottom first: what lives longest at the bottom (a
// KV cache is allocated once per generation, right above the weights). A role not listed goes
// on top, in the order it first appears. Each band takes the next of the 7 colours r0..r6, so
// the 7 roles of profiler/memory.h never share one.
const std::vector<std::string>& role_order() {
  static const std::vector<std::string> order{
      "parameter", "kv_cache", "optimizer", "gradient", "activation", "data", "temporary"};
  return order;
}

std::vector<std::string> roles_of(const std::vector<MemorySample>& samples) {
  std::vector<std::string> seen;
  for (const MemorySample& s : samples) {
    for (const auto& [role, bytes] : s.roles) {
      if (std::find(seen.begin(), seen.end(), role) == seen.end()) seen.push_back(role);
    }
  }
  std::vector<std::string> out;
  for (const std::string& r : role_order()) {
    if (std::find(seen.begin(), seen.end(), r) != seen.end()) out.push_back(r);
  }
  for (const std::string& r : seen) {
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

double role_bytes(const MemorySample& s, const std::string& role) {
  for (const auto& [r, bytes] : s.roles) {
    if (r == role) return bytes;
  }
  return 0;
}

// Samples in time order; past a few per pixel column, the highest of each column only, so the
// page stays small and the peak is never dropped.
std::vector<MemorySample> curve_samples(const ProfileData& p, const Scale& x) {
  std::vector<MemorySample> s = p.samples;
  std::stable_sort(s.begin(), s.end(),
                   [](const MemorySample& a, const MemorySample& b) { return a.t_ns < b.t_ns; });
  if (s.size() <= 2000 || s.empty()) return s;
  const double t0 = s.front().t_ns;
  std::vector<MemorySample> kept;
  long column = -1;
  for (const MemorySample& m : s) {
    const long c = std::lround(x((m.t_ns - t0) / 1e6));
    if (c != column) {
      kept.push_back(m);
      column = c;
    } else if (m.live_bytes > kept.back().live_bytes) {
      kept.back() = m;
    }
  }
  return kept;
}

// A step curve's outline: the level of each sample holds until the next one.
std::vector<std::pair<double, double>> steps(const std::vector<double>& xs,
                                             const std::vector<double>& ys) {
  std::vector<std::pair<double, double>> pts;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i > 0) pts.emplace_back(xs[i], ys[i - 1]);
    pts.emplace_back(xs[i], ys[i]);
  }
  return pts;
}

}  // namespace

std::pair<Scale, Scale> memory_scales(const ProfileData& p) {
  double t_lo = 0, t_hi = 0, top = 0;
  if (!p.samples.empty()) t_lo = t_hi = p.samples.front().t_ns;
  for (const MemorySample& s : p.samples) {
    t_lo = std::min(t_lo, s.t_ns);
    t_hi = std::max(t_hi, s.t_ns);
    top = std::max(top, s.live_bytes);
  }
  const PlotArea& a = kMemoryArea;
  return {linear_scale(0, (t_hi - t_lo) / 1e6, a.left, a.right()),
          linear_scale(0, top, a.bottom(), a.top)};
}

Section memory_view(const ProfileData& p) {
  Section s{
      p.timeline_device.empty() ? "Memory timeline" : "Memory timeline (" + p.timeline_device + ")",
      "Live tracked bytes (tensors prism allocated) over the profiled steps; each step up "
      "is an allocation, each step down a free. The highest point is the peak a run must "
      "fit in memory.",
      ""};
  if (p.samples.empty()) {
    std::string peaks;
    for (const auto& [device, bytes] : p.peak_live_bytes) {
      if (bytes > 0) peaks += (peaks.empty() ? "" : ", ") + device + " " + format_bytes(bytes);
    }
    s.body = note(escape(fmt::format(
        "This profile keeps the peak only: {} allocations and frees were recorded, but not "
        "their values, so there is no curve to draw. Peak live memory: {}.",
        p.sample_count, peaks.empty() ? "none" : peaks)));
    return s;
  }
  const auto [x, y] = memory_scales(p);
  const std::vector<MemorySample> samples = curve_samples(p, x);
  const double t0 = samples.front().t_ns;
  std::vector<double> xs;
  for (const MemorySample& m : samples) xs.push_back(x((m.t_ns - t0) / 1e6));

  const PlotArea& a = kMemoryArea;
  Svg svg(kViewWidth, a.bottom() + 44, "live memory over the profiled window");
  svg.x_axis(x, a.bottom(), a.top, "time since the window opened, ms");
  svg.y_axis(y, a.left, a.right(), "live bytes");

  // One area, or one band per role: each band lies between the running sums below and above it.
  const std::vector<std::string> roles = roles_of(samples);
  std::vector<double> below(samples.size(), a.bottom());
  std::vector<std::pair<std::string, std::string>> keys;
  const size_t bands = roles.empty() ? 1 : roles.size();
  std::vector<double> sum(samples.size(), 0);
  for (size_t b = 0; b < bands; ++b) {
    std::vector<double> above(samples.size());
    for (size_t i = 0; i < samples.size(); ++i) {
      sum[i] += roles.empty() ? samples[i].live_bytes : role_bytes(samples[i], roles[b]);
      above[i] = y(sum[i]);
    }
    std::vector<std::pair<double, double>> outline = steps(xs, above);
    const std::vector<std::pair<double, double>> floor = steps(xs, below);
    outline.insert(outline.end(), floor.rbegin(), floor.rend());
    const std::string cls = roles.empty() ? "area" : fmt::format("r{}", b % 7);
    svg.polygon(outline, cls, roles.empty() ? "live bytes" : roles[b]);
    if (!roles.empty()) keys.emplace_back(cls, roles[b]);
    below = above;
  }

  // The peak: the first sample at the highest level.
  const auto peak = std::max_element(
      samples.begin(), samples.end(),
      [](const MemorySample& l, const MemorySample& r) { return l.live_bytes < r.live_bytes; });
  const double px = xs[static_cast<size_t>(peak - samples.begin())], py = y(peak->live_bytes);
  std::string what =
      fmt::format("peak {} at {:.3f} ms", format_bytes(std::llround(peak->live_bytes)),
                  (peak->t_ns - t0) / 1e6);
  if (!peak->op.empty()) what += " (" + peak->op + ")";
  svg.circle(px, py, 4, "peak", what);
  const bool right_half = px > (a.left + a.right()) / 2;
  svg.text(right_half ? px - 8 : px + 8, py + 4, what, "", right_half ? "end" : "start");

  s.body = (keys.empty() ? "" : legend(keys)) + svg.str();
  return s;
}

}  // namespace prism::analysis::html
