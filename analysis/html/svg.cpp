// The SVG builder (svg.h). Numbers go through num() only, so the same input always gives the
// same bytes.
#include "analysis/html/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace prism::analysis::html {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double v) {
  if (!std::isfinite(v)) return "0";  // never an invalid attribute; callers keep values finite
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

std::string tick_label(double v) {
  const double a = std::fabs(v);
  const char* suffix = "";
  double x = v;
  if (a >= 1e9) {
    x = v / 1e9, suffix = "G";
  } else if (a >= 1e6) {
    x = v / 1e6, suffix = "M";
  } else if (a >= 1e3) {
    x = v / 1e3, suffix = "k";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g%s", x, suffix);
  return buf;
}

namespace {

// 1, 2 or 5 x 10^k, the smallest not below `raw`.
double nice_step(double raw) {
  if (!(raw > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

}  // namespace

double Scale::operator()(double v) const {
  double a = d0, b = d1;
  if (log) {
    v = std::log10(std::max(v, d0));
    a = std::log10(d0);
    b = std::log10(d1);
  }
  if (b == a) return r0;
  return r0 + (v - a) / (b - a) * (r1 - r0);
}

std::vector<double> Scale::ticks(int n) const {
  std::vector<double> out;
  n = std::max(n, 1);
  if (log) {
    const int lo = static_cast<int>(std::lround(std::log10(d0)));
    const int hi = static_cast<int>(std::lround(std::log10(d1)));
    const int decades = std::max(hi - lo, 1);
    const int stride = decades <= 2 * n ? 1 : (decades + n - 1) / n;
    for (int e = lo; e <= hi; e += stride) out.push_back(std::pow(10.0, e));
    return out;
  }
  const double step = nice_step((d1 - d0) / n);
  // Integer multiples of the step, so 0.3 is not written as 0.30000000000000004.
  const auto first = static_cast<long long>(std::ceil(d0 / step - 1e-9));
  const auto last = static_cast<long long>(std::floor(d1 / step + 1e-9));
  for (long long k = first; k <= last; ++k) out.push_back(static_cast<double>(k) * step);
  return out;
}

Scale linear_scale(double lo, double hi, double r0, double r1) {
  if (!(hi > lo)) hi = lo + 1;
  const double step = nice_step((hi - lo) / 5);
  return Scale{std::floor(lo / step + 1e-9) * step, std::ceil(hi / step - 1e-9) * step, r0, r1,
               false};
}

Scale log_scale(double lo, double hi, double r0, double r1) {
  lo = lo > 0 ? lo : 1;
  hi = std::max(hi, lo);
  double d0 = std::pow(10.0, std::floor(std::log10(lo) + 1e-9));
  double d1 = std::pow(10.0, std::ceil(std::log10(hi) - 1e-9));
  if (d1 <= d0) d1 = d0 * 10;
  return Scale{d0, d1, r0, r1, true};
}

Svg::Svg(double width, double height, std::string_view label)
    : width_(width), height_(height), label_(label) {}

void Svg::open(std::string_view tag, const std::string& attrs, std::string_view cls,
               std::string_view title) {
  body_ += "<";
  body_ += tag;
  body_ += attrs;
  if (!cls.empty()) body_ += " class=\"" + escape(cls) + "\"";
  if (title.empty()) {
    body_ += "/>\n";
  } else {
    body_ += "><title>" + escape(title) + "</title></";
    body_ += tag;
    body_ += ">\n";
  }
}

void Svg::rect(double x, double y, double w, double h, std::string_view cls,
               std::string_view title) {
  open("rect",
       " x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(w, 0.0)) +
           "\" height=\"" + num(std::max(h, 0.0)) + "\"",
       cls, title);
}

void Svg::line(double x1, double y1, double x2, double y2, std::string_view cls,
               std::string_view title) {
  open("line",
       " x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) +
           "\"",
       cls, title);
}

void Svg::circle(double cx, double cy, double r, std::string_view cls, std::string_view title) {
  open("circle", " cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"" + num(r) + "\"", cls, title);
}

namespace {
std::string points_attr(const std::vector<std::pair<double, double>>& points) {
  std::string s = " points=\"";
  for (size_t i = 0; i < points.size(); ++i) {
    if (i > 0) s += ' ';
    s += num(points[i].first) + "," + num(points[i].second);
  }
  return s + "\"";
}
}  // namespace

void Svg::polygon(const std::vector<std::pair<double, double>>& points, std::string_view cls,
                  std::string_view title) {
  open("polygon", points_attr(points), cls, title);
}

void Svg::polyline(const std::vector<std::pair<double, double>>& points, std::string_view cls,
                   std::string_view title) {
  open("polyline", points_attr(points), cls, title);
}

void Svg::text(double x, double y, std::string_view text, std::string_view cls,
               std::string_view anchor, std::string_view title) {
  body_ += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"";
  if (anchor != "start") body_ += " text-anchor=\"" + escape(anchor) + "\"";
  if (!cls.empty()) body_ += " class=\"" + escape(cls) + "\"";
  body_ += ">";
  if (!title.empty()) body_ += "<title>" + escape(title) + "</title>";
  body_ += escape(text) + "</text>\n";
}

void Svg::x_axis(const Scale& s, double y, double grid_to, std::string_view name, int ticks) {
  for (const double t : s.ticks(ticks)) {
    const double x = s(t);
    line(x, grid_to, x, y, "grid");
    line(x, y, x, y + 4, "axis");
    text(x, y + 16, tick_label(t), "tick", "middle");
  }
  line(s.r0, y, s.r1, y, "axis");
  text((s.r0 + s.r1) / 2, y + 34, name, "axis-name", "middle");
}

void Svg::y_axis(const Scale& s, double x, double grid_to, std::string_view name, int ticks) {
  for (const double t : s.ticks(ticks)) {
    const double y = s(t);
    line(x, y, grid_to, y, "grid");
    line(x - 4, y, x, y, "axis");
    text(x - 7, y + 4, tick_label(t), "tick", "end");
  }
  line(x, s.r0, x, s.r1, "axis");
  // The name runs up the left edge, rotated about its own anchor point.
  const double cx = 14, cy = (s.r0 + s.r1) / 2;
  body_ += "<text x=\"" + num(cx) + "\" y=\"" + num(cy) + "\" text-anchor=\"middle\" " +
           "transform=\"rotate(-90 " + num(cx) + " " + num(cy) + ")\" class=\"axis-name\">" +
           escape(name) + "</text>\n";
}

std::string Svg::str() const {
  // No xmlns: inside HTML5 the parser puts <svg> in the SVG namespace itself, and the page
  // holds no URL at all (it is checked to hold none).
  return "<svg viewBox=\"0 0 " + num(width_) + " " + num(height_) + "\" width=\"" + num(width_) +
         "\" height=\"" + num(height_) + "\" role=\"img\" aria-label=\"" + escape(label_) +
         "\">\n" + body_ + "</svg>\n";
}

}  // namespace prism::analysis::html
