// The view of a `prism sweep --json` result ("prism.sweep", analysis/sweep_report.cpp): time
// per call, and tracked peak memory when the points carry it, against the varied size on
// log-log axes, with the power law the sweep fitted and, when the run asked for one, the
// prediction and the point measured to check it.
//
// A power law y = c x^k is a straight line on log-log axes (log y = log c + k log x), so the
// line is drawn from its two ends; it is the JSON's fit (c and k), never refitted here.
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

// kMemoryArea's plot box: x 80 .. 860, y 280 (bottom) .. 20.
constexpr PlotArea kSweepArea{80, 20, 780, 260};

// The fields, with paths written without their trailing dot ("points[2]"): json_fields.h.
const nlohmann::json& field(const nlohmann::json& j, const std::string& key,
                            const std::string& path) {
  return fields::field(j, key, fields::under(path));
}
double number(const nlohmann::json& j, const std::string& path) {
  return fields::as_number(j, path);
}
double number_at(const nlohmann::json& j, const std::string& key, const std::string& path) {
  return fields::number(j, key, fields::under(path));
}

// One quantity of the sweep: measured points, the fit, the prediction and its check.
struct Curve {
  std::string quantity;                           // "time" or "memory"
  std::vector<std::pair<double, double>> points;  // (size, value)
  bool fitted = false;
  double c = 0, k = 0, r2 = 0;
  std::string no_fit;  // why there is no fit
  bool predicted = false;
  double at = 0, predicted_value = 0, low = 0, high = 0;
  bool has_interval = false;
  bool checked = false;
  double measured = 0;
};

std::string format_value(const Curve& c, double v) {
  return c.quantity == "time" ? format_ns(v) : format_bytes(std::llround(v));
}

void read_fit(const nlohmann::json& fits, Curve& c) {
  const std::string path = "fits." + c.quantity;
  const nlohmann::json& f = field(fits, c.quantity, "fits");
  if (f.is_object() && f.contains("error")) {
    c.no_fit = f["error"].is_string() ? f["error"].get<std::string>() : "no fit";
    return;
  }
  c.c = number_at(f, "c", path);
  c.k = number_at(f, "k", path);
  c.r2 = f.contains("r2") && f["r2"].is_number() ? f["r2"].get<double>() : 0;
  c.fitted = c.c > 0;
  if (!c.fitted) c.no_fit = path + ".c is not positive";
}

// The prediction of `key` ("time_ns", "memory_bytes") and the checked point's `measured_key`.
void read_prediction(const nlohmann::json& doc, Curve& c, const std::string& key,
                     const std::string& measured_key) {
  if (!doc.contains("prediction") || doc["prediction"].is_null()) return;
  const nlohmann::json& p = doc["prediction"];
  const nlohmann::json& v = field(p, key, "prediction");
  if (v.is_null()) return;
  c.predicted = true;
  c.at = number_at(p, "at", "prediction");
  c.predicted_value = number_at(v, "value", "prediction." + key);
  const nlohmann::json& iv = field(v, "interval", "prediction." + key);
  if (iv.is_array() && iv.size() == 2) {
    c.has_interval = true;
    c.low = number(iv[0], "prediction." + key + ".interval[0]");
    c.high = number(iv[1], "prediction." + key + ".interval[1]");
  } else if (!iv.is_null()) {
    throw Error("prediction." + key + ".interval: expected [low, high] or null");
  }
  if (doc.contains("check") && !doc["check"].is_null()) {
    const nlohmann::json& point = field(doc["check"], "point", "check");
    const double m = number_at(point, measured_key, "check.point");
    c.checked = m > 0;
    c.measured = m;
  }
}

std::vector<Curve> read_curves(const nlohmann::json& doc) {
  const nlohmann::json& pts = field(doc, "points", "");
  if (!pts.is_array()) throw Error("points: expected an array");
  if (pts.empty()) throw Error("points: empty, nothing was measured");
  Curve time, memory;
  time.quantity = "time";
  memory.quantity = "memory";
  for (size_t i = 0; i < pts.size(); ++i) {
    const std::string path = fmt::format("points[{}]", i);
    const double x = number_at(pts[i], "value", path);
    if (!(x > 0)) throw Error(path + ".value: must be positive on a log axis");
    time.points.emplace_back(x, number_at(pts[i], "median_ns", path));
    if (pts[i].contains("tracked_peak_bytes")) {
      const double m = number_at(pts[i], "tracked_peak_bytes", path);
      if (m > 0) memory.points.emplace_back(x, m);
    }
  }
  const nlohmann::json& fits = field(doc, "fits", "");
  read_fit(fits, time);
  read_prediction(doc, time, "time_ns", "median_ns");
  std::vector<Curve> out{time};
  if (!memory.points.empty()) {
    read_fit(fits, memory);
    read_prediction(doc, memory, "memory_bytes", "tracked_peak_bytes");
    out.push_back(memory);
  }
  return out;
}

std::string string_or(const nlohmann::json& doc, const char* key, const std::string& dflt) {
  return doc.contains(key) && doc[key].is_string() ? doc[key].get<std::string>() : dflt;
}

// The scales of one curve: log10 over whole decades, x over the sizes (and the predicted
// size), y over every value drawn (points, the fit's ends, the prediction and its interval).
std::pair<Scale, Scale> sweep_scales(const Curve& c) {
  double x_lo = c.points.empty() ? 1 : c.points.front().first, x_hi = x_lo;
  double y_lo = c.points.empty() ? 1 : c.points.front().second, y_hi = y_lo;
  auto take_x = [&](double x) { x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x); };
  auto take_y = [&](double y) {
    if (y > 0) y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
  };
  for (const auto& [x, y] : c.points) take_x(x), take_y(y);
  if (c.predicted) take_x(c.at);
  if (c.fitted) take_y(c.c * std::pow(x_lo, c.k)), take_y(c.c * std::pow(x_hi, c.k));
  if (c.predicted) take_y(c.predicted_value);
  if (c.has_interval) take_y(c.low), take_y(c.high);
  if (c.checked) take_y(c.measured);
  const PlotArea& a = kSweepArea;
  return {log_scale(x_lo, x_hi, a.left, a.right()), log_scale(y_lo, y_hi, a.bottom(), a.top)};
}

Section sweep_curve_view(const Curve& c, const std::string& vary) {
  const bool time = c.quantity == "time";
  Section s{time ? "Time against " + vary : "Memory against " + vary,
            time ? "Median time per call (circles) against " + vary +
                       " on log-log axes; the line is the fitted power law time = c " + vary +
                       "^k, so its slope is the exponent k (1: time grows in proportion)."
                 : "Tracked peak memory (circles) against " + vary +
                       " on log-log axes; the line is the fitted power law bytes = c " + vary +
                       "^k (slope k).",
            ""};
  const auto [x, y] = sweep_scales(c);
  const PlotArea& a = kSweepArea;
  Svg svg(kViewWidth, a.bottom() + 44,
          fmt::format("{} against {}, log-log", time ? "time per call" : "peak memory", vary));
  svg.x_axis(x, a.bottom(), a.top, vary + " (log)");
  svg.y_axis(y, a.left, a.right(), time ? "time per call, ns (log)" : "tracked peak, bytes (log)");

  std::string notes;
  if (c.fitted) {
    // The line over the measured sizes, on to the predicted size when there is one.
    double lo = c.points.front().first, hi = lo;
    for (const auto& [px, py] : c.points) lo = std::min(lo, px), hi = std::max(hi, px);
    if (c.predicted) hi = std::max(hi, c.at);
    svg.polyline(
        {{x(lo), y(c.c * std::pow(lo, c.k))}, {x(hi), y(c.c * std::pow(hi, c.k))}}, "roof",
        fmt::format("fit: {} = {:.4g} x {}^{:.3f} (r² {:.3f})", c.quantity, c.c, vary, c.k, c.r2));
    // In the right-hand corner the line leaves empty: the bottom when it rises, else the top.
    svg.text(a.right() - 8, c.k >= 0 ? a.bottom() - 8 : a.top + 12,
             fmt::format("fit: {}^{:.2f}, r² {:.3f}", vary, c.k, c.r2), "", "end");
  } else {
    notes = note(escape("No power law was fitted: " + c.no_fit + "."));
  }
  for (const auto& [px, py] : c.points) {
    svg.circle(x(px), y(py), 4, "fwd", fmt::format("{} = {:g}: {}", vary, px, format_value(c, py)));
  }
  if (c.predicted) {
    std::string what =
        fmt::format("predicted at {} = {:g}: {}", vary, c.at, format_value(c, c.predicted_value));
    if (c.has_interval) {
      what += fmt::format(" ({} .. {})", format_value(c, c.low), format_value(c, c.high));
      svg.line(x(c.at), y(c.low), x(c.at), y(c.high), "peak", what);
    }
    svg.circle(x(c.at), y(c.predicted_value), 5, "peak", what);
    if (c.checked) {
      svg.circle(x(c.at), y(c.measured), 4, "bwd",
                 fmt::format("measured at {} = {:g}: {} ({:+.1f}% from the prediction)", vary, c.at,
                             format_value(c, c.measured),
                             100 * (c.predicted_value - c.measured) / c.measured));
    }
  }
  std::vector<std::pair<std::string, std::string>> keys{{"fwd", "measured"}};
  if (c.predicted) keys.emplace_back("peak", "predicted (with its interval)");
  if (c.checked) keys.emplace_back("bwd", "measured to check the prediction");
  s.body = legend(keys) + notes + svg.str();
  return s;
}

Block sweep_block(const std::string& name, const nlohmann::json& doc) {
  if (!doc.is_object()) throw Error("expected a JSON object");
  const std::string vary = string_or(doc, "vary", "size");
  const std::vector<Curve> curves = read_curves(doc);
  Block b{name,
          fmt::format("sweep of {} ({}), varying {} over {} points", string_or(doc, "model", "?"),
                      string_or(doc, "mode", "?"), vary, curves.front().points.size()),
          {}};
  for (const Curve& c : curves) b.sections.push_back(sweep_curve_view(c, vary));
  return b;
}

const ResultView reg("prism.sweep", &sweep_block);
}  // namespace

}  // namespace prism::analysis::html
