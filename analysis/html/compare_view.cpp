// The view of a compare result ("prism.compare"): per series (a batch size, or the training
// steps) a waterfall from the baseline's time per call to the candidate's, one step per op
// whose self time moved, then the decision (analysis/compare.h) and the text report.
//
// The document read (the fields of analysis/compare.h's Comparison):
//   {"kind": "prism.compare", "model", "mode", "change"?, "report"? (format_comparison's text),
//    "series": [{"label", "median_ns_a", "median_ns_b", "ratio", "ratio_ci": [low, high],
//                "p_value", "verdict": "better" | "worse" | "no detectable change",
//                "movers": [{"name", "phase", "grad_of"?, "self_ns_a", "self_ns_b"}]}]}
// Times are per call, in ns; a = baseline, b = candidate.
//
// The waterfall: the first bar is the baseline's median a; each op then moves the level by
// d = self_ns_b - self_ns_a (up: it got slower, down: faster), largest |d| first; the steps
// past kMaxSteps, and those under 1% of a, share one bar; "outside the ops" is what is left,
// (b - a) - sum(d): time no op's self time holds (dispatch, the loop, a median of the sum not
// being the sum of medians), so the last step lands exactly on the candidate's median b.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analysis/html/json_fields.h"
#include "analysis/html/profile_views.h"
#include "analysis/html/result_views.h"
#include "analysis/report_format.h"
#include "kernels/types.h"

namespace prism::analysis::html {

namespace {

// The plot box: x 80 .. 860, y 280 (bottom) .. 20; one column per bar.
constexpr PlotArea kWaterfallArea{80, 20, 780, 260};
constexpr size_t kMaxSteps = 8;
constexpr double kMergeBelow = 0.01;  // of the baseline's time

// The fields, with paths written without their trailing dot ("series[0]"): json_fields.h.
const nlohmann::json& field(const nlohmann::json& j, const std::string& key,
                            const std::string& path) {
  return fields::field(j, key, fields::under(path));
}
double number_at(const nlohmann::json& j, const std::string& key, const std::string& path) {
  return fields::number(j, key, fields::under(path));
}
std::string string_at(const nlohmann::json& j, const std::string& key, const std::string& path) {
  return fields::text(j, key, fields::under(path));
}

std::string optional_string(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// One bar: a total (from 0) or a step (from the level before).
struct Bar {
  std::string label, tooltip;
  double delta = 0;  // a step's change, ns; a total's value
  bool total = false;
};

std::string signed_ns(double ns) {
  return (ns < 0 ? "-" : "+") + format_ns(std::fabs(ns));
}

std::vector<Bar> waterfall_bars(const nlohmann::json& s, const std::string& path, double a,
                                double b) {
  const nlohmann::json& movers = field(s, "movers", path);
  if (!movers.is_array()) throw Error(path + ".movers: expected an array");
  std::vector<Bar> steps;
  double moved = 0;
  for (size_t i = 0; i < movers.size(); ++i) {
    const std::string mp = fmt::format("{}.movers[{}]", path, i);
    std::string label = string_at(movers[i], "name", mp);
    const std::string grad = optional_string(movers[i], "grad_of");
    if (!grad.empty()) label += " (" + grad + ")";
    label += " · " + string_at(movers[i], "phase", mp);
    const double da = number_at(movers[i], "self_ns_a", mp);
    const double db = number_at(movers[i], "self_ns_b", mp);
    moved += db - da;
    if (db == da) continue;
    steps.push_back({label,
                     fmt::format("{}: {} -> {} per call ({})", label, format_ns(da), format_ns(db),
                                 signed_ns(db - da)),
                     db - da, false});
  }
  // Largest change first; ties by label, so the order never depends on the file's.
  std::stable_sort(steps.begin(), steps.end(), [](const Bar& l, const Bar& r) {
    if (std::fabs(l.delta) != std::fabs(r.delta)) return std::fabs(l.delta) > std::fabs(r.delta);
    return l.label < r.label;
  });
  std::vector<Bar> bars{{"baseline", "baseline: median " + format_ns(a) + " per call", a, true}};
  Bar rest{"", "", 0, false};
  size_t merged = 0;
  for (const Bar& st : steps) {
    if (bars.size() - 1 < kMaxSteps && std::fabs(st.delta) >= kMergeBelow * a) {
      bars.push_back(st);
    } else {
      rest.delta += st.delta;
      ++merged;
    }
  }
  if (merged > 0) {
    rest.label = fmt::format("{} smaller ops", merged);
    rest.tooltip =
        fmt::format("{} ops that moved less, together: {}", merged, signed_ns(rest.delta));
    bars.push_back(rest);
  }
  const double outside = (b - a) - moved;
  if (std::fabs(outside) > 1e-9 * std::max(a, 1.0)) {
    bars.push_back(
        {"outside the ops",
         "the change no op's self time holds (b - a - the ops' changes): " + signed_ns(outside),
         outside, false});
  }
  bars.push_back({"candidate", "candidate: median " + format_ns(b) + " per call", b, true});
  return bars;
}

// What fits in a column: 11 px monospace is about 6.6 px a character.
std::string fit_label(const std::string& text, double width) {
  const size_t n = std::max<size_t>(3, static_cast<size_t>(width / 6.6));
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (++chars == n) return i + 1 < text.size() ? text.substr(0, i) + "…" : text;
  }
  return text;
}

std::string waterfall_svg(const std::vector<Bar>& bars) {
  // The levels after each bar: a total sets the level, a step adds to it.
  std::vector<double> before(bars.size()), after(bars.size());
  double level = 0, lo = 0, hi = 0;
  for (size_t i = 0; i < bars.size(); ++i) {
    before[i] = bars[i].total ? 0 : level;
    after[i] = level = bars[i].total ? bars[i].delta : level + bars[i].delta;
    lo = std::min({lo, before[i], after[i]});
    hi = std::max({hi, before[i], after[i]});
  }
  const PlotArea& a = kWaterfallArea;
  const Scale y = linear_scale(lo / 1e3, hi / 1e3, a.bottom(), a.top);  // us
  const double col = a.width / static_cast<double>(bars.size());
  Svg svg(kViewWidth, a.bottom() + 44, "waterfall from the baseline's time to the candidate's");
  svg.y_axis(y, a.left, a.right(), "time per call, us");
  svg.line(a.left, y(0), a.right(), y(0), "axis");
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double x = a.left + col * static_cast<double>(i);
    const double top = y(std::max(before[i], after[i]) / 1e3);
    const double bottom = y(std::min(before[i], after[i]) / 1e3);
    const char* cls = b.total ? "fwd" : b.delta > 0 ? "bwd" : "opt";
    svg.rect(x + 0.15 * col, top, 0.7 * col, bottom - top, cls, b.tooltip);
    svg.text(x + col / 2, top - 4, b.total ? format_ns(b.delta) : signed_ns(b.delta), "tick",
             "middle");
    svg.text(x + col / 2, a.bottom() + 16, fit_label(b.label, col), "", "middle", b.label);
    // A connector at the level this bar leaves, to the next bar.
    if (i + 1 < bars.size()) {
      const double ly = y(after[i] / 1e3);
      svg.line(x + 0.85 * col, ly, x + col + 0.15 * col, ly, "ridge");
    }
  }
  return svg.str();
}

std::string decision(const nlohmann::json& s, const std::string& path) {
  const std::string verdict = string_at(s, "verdict", path);
  const double ratio = number_at(s, "ratio", path);
  const nlohmann::json& ci = field(s, "ratio_ci", path);
  if (!ci.is_array() || ci.size() != 2 || !ci[0].is_number() || !ci[1].is_number()) {
    throw Error(path + ".ratio_ci: expected [low, high]");
  }
  const double p = number_at(s, "p_value", path);
  return fmt::format(
      "Decision: <strong>{}</strong>. Candidate / baseline median time {:.3f} (95% interval "
      "{:.3f} to {:.3f}; below 1 is faster), Mann-Whitney p = {:.3g}.",
      escape(verdict), ratio, ci[0].get<double>(), ci[1].get<double>(), p);
}

Section series_view(const nlohmann::json& s, const std::string& path) {
  const std::string label = string_at(s, "label", path);
  const double a = number_at(s, "median_ns_a", path), b = number_at(s, "median_ns_b", path);
  Section sec{"Where the time moved: " + label,
              "From the baseline's median time per call (left) to the candidate's (right): each "
              "step is one op's change of self time per call, up (slower) or down (faster), "
              "largest first.",
              ""};
  sec.body = note(decision(s, path)) +
             legend({{"fwd", "total"}, {"bwd", "slower"}, {"opt", "faster"}}) +
             waterfall_svg(waterfall_bars(s, path, a, b));
  return sec;
}

Block compare_block(const std::string& name, const nlohmann::json& doc) {
  const nlohmann::json& series = field(doc, "series", "");
  if (!series.is_array()) throw Error("series: expected an array");
  Block blk{name,
            fmt::format("compare {} ({}): baseline against candidate", string_at(doc, "model", ""),
                        string_at(doc, "mode", "")),
            {}};
  const std::string change = optional_string(doc, "change");
  if (!change.empty()) blk.subheading += ", " + change;
  for (size_t i = 0; i < series.size(); ++i) {
    blk.sections.push_back(series_view(series[i], fmt::format("series[{}]", i)));
  }
  const std::string report = optional_string(doc, "report");
  if (!report.empty()) {
    blk.sections.push_back({"The compare report",
                            "The text prism compare printed: each side, the decision per series, "
                            "quality, the biggest movers and the warnings.",
                            "<pre>" + escape(report) + "</pre>\n"});
  }
  return blk;
}

const ResultView reg("prism.compare", &compare_block);

}  // namespace

}  // namespace prism::analysis::html
