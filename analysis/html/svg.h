// A small SVG builder for the HTML report (report_page.h): scales that map a domain to pixels,
// axes with tick labels, a few shapes, and a `<title>` on any shape, which every browser shows
// as a tooltip without a line of script.
//
// Output is deterministic: every coordinate is written with two decimals at most (num()), so a
// test can find the exact number a bar or a point was placed at.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace prism::analysis::html {

// Text made safe inside an element or an attribute: & < > " ' as entities.
std::string escape(std::string_view text);

// A coordinate as written: two decimals, trailing zeros dropped ("12.5", "3", "-0.25").
std::string num(double v);

// A tick label: "0.01", "0.5", "20", "1.5k", "3M", "2G" (1000-based, as rates are quoted).
std::string tick_label(double v);

// domain [d0, d1] -> pixels [r0, r1], linearly or on log10 (then the domain must be > 0). The
// pixel range may run backwards (a y axis grows upward: r0 = bottom).
struct Scale {
  double d0 = 0, d1 = 1, r0 = 0, r1 = 1;
  bool log = false;

  double operator()(double v) const;
  // About `n` round values inside the domain: 1, 2 or 5 x 10^k apart on a linear scale; the
  // powers of 10 on a log scale (every other one, or fewer, when there are many decades).
  std::vector<double> ticks(int n = 5) const;
};

// A linear scale whose domain is widened to round tick values: [0, 7.3] becomes [0, 8].
Scale linear_scale(double lo, double hi, double r0, double r1);
// A log10 scale over whole decades: [0.3, 42] becomes [0.1, 100]. lo and hi must be > 0.
Scale log_scale(double lo, double hi, double r0, double r1);

// One <svg> element, built shape by shape. `cls` is a CSS class of the page (colours live in
// the page's style sheet, so light and dark modes need no second drawing); "" = none.
class Svg {
 public:
  // `label`: what the picture shows, for screen readers (aria-label).
  Svg(double width, double height, std::string_view label);

  void rect(double x, double y, double w, double h, std::string_view cls,
            std::string_view title = "");
  void line(double x1, double y1, double x2, double y2, std::string_view cls,
            std::string_view title = "");
  void circle(double cx, double cy, double r, std::string_view cls, std::string_view title = "");
  // A closed shape (an area under a curve) and an open one, as "x,y x,y ...".
  void polygon(const std::vector<std::pair<double, double>>& points, std::string_view cls,
               std::string_view title = "");
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view cls,
                std::string_view title = "");
  // anchor: "start", "middle" or "end".
  void text(double x, double y, std::string_view text, std::string_view cls,
            std::string_view anchor = "start", std::string_view title = "");

  // A horizontal axis at pixel row y (ticks, labels below, the name under them) and a vertical
  // one at pixel column x (labels to the left, the name rotated), each with light grid lines
  // across the plot to `grid_to` (the opposite edge).
  void x_axis(const Scale& s, double y, double grid_to, std::string_view name, int ticks = 5);
  void y_axis(const Scale& s, double x, double grid_to, std::string_view name, int ticks = 5);

  double width() const { return width_; }
  double height() const { return height_; }
  std::string str() const;

 private:
  void open(std::string_view tag, const std::string& attrs, std::string_view cls,
            std::string_view title);
  double width_, height_;
  std::string label_;
  std::string body_;
};

}  // namespace prism::analysis::html
