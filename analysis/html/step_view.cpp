// The step time view (profile_views.h): how long each training step took over the whole run
// (train.step_samples_ms), so a slow first step (allocation, caches), drift or spikes show, and
// the profiled window (shaded) can be judged typical or not against the median.
#include <algorithm>

#include <fmt/format.h>

#include "analysis/html/profile_views.h"

namespace prism::analysis::html {

namespace {

// The middle value; for an even count the mean of the two middle ones (as `prism train` prints).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool profiled(const ProfileData& p, size_t step) {
  return p.profiled_steps.size() == 2 && static_cast<int64_t>(step) >= p.profiled_steps[0] &&
         static_cast<int64_t>(step) <= p.profiled_steps[1];
}

}  // namespace

std::pair<Scale, Scale> step_scales(const ProfileData& p) {
  const double slowest =
      p.step_ms.empty() ? 0 : *std::max_element(p.step_ms.begin(), p.step_ms.end());
  const PlotArea& a = kStepArea;
  return {linear_scale(0, static_cast<double>(p.step_ms.size()), a.left, a.right()),
          linear_scale(0, slowest, a.bottom(), a.top)};
}

std::optional<Section> step_view(const ProfileData& p) {
  if (p.step_ms.empty()) return std::nullopt;
  Section s{"Step time",
            "Milliseconds per training step over the whole run, step 1 at the left; the dashed "
            "line is the median, the shaded band the steps the profile recorded.",
            ""};
  const auto [x, y] = step_scales(p);
  const PlotArea& a = kStepArea;
  Svg svg(kViewWidth, a.bottom() + 44, "milliseconds per training step");
  svg.x_axis(x, a.bottom(), a.top, "step");
  svg.y_axis(y, a.left, a.right(), "ms per step");

  // The window covers its steps' points half a step either side.
  if (p.profiled_steps.size() == 2) {
    const double x0 = x(static_cast<double>(p.profiled_steps[0]) - 0.5);
    const double x1 = x(static_cast<double>(p.profiled_steps[1]) + 0.5);
    svg.rect(x0, a.top, x1 - x0, a.height, "area",
             fmt::format("profiled steps {}-{}: the other views cover these", p.profiled_steps[0],
                         p.profiled_steps[1]));
  }
  std::vector<std::pair<double, double>> pts;
  for (size_t i = 0; i < p.step_ms.size(); ++i) {
    pts.emplace_back(x(static_cast<double>(i + 1)), y(p.step_ms[i]));
  }
  svg.polyline(pts, "roof");
  for (size_t i = 0; i < pts.size(); ++i) {
    svg.circle(pts[i].first, pts[i].second, 2.5, "fwd",
               fmt::format("step {}: {:.3f} ms{}", i + 1, p.step_ms[i],
                           profiled(p, i + 1) ? " (profiled)" : ""));
  }
  const double med = median(p.step_ms);
  const std::string what = fmt::format("median {:.3f} ms", med);
  svg.line(a.left, y(med), a.right(), y(med), "ridge", what);
  svg.text(a.right() - 4, y(med) - 5, what, "", "end");
  s.body = svg.str();
  return s;
}

}  // namespace prism::analysis::html
