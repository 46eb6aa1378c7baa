// The latency view of a bench result (bench_views.h). The percentile lines come from
// latency_stats() (analysis/latency.h), the very function `prism bench` wrote its p50 / p95 / p99
// with, so a line sits exactly where the bench's number says.
#include "analysis/html/bench_views.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analysis/html/json_fields.h"
#include "analysis/html/result_views.h"
#include "kernels/types.h"
#include "profiler/statistics.h"

namespace prism::analysis::html {

namespace {

using nlohmann::json;

using fields::fail;
using fields::field;
using fields::number;
using fields::text;

// Call times: an array of positive finite numbers (a time of 0 or less is a broken file).
std::vector<double> times(const json& obj, const char* key, const std::string& path) {
  const json& v = field(obj, key, path);
  if (!v.is_array()) fail(path + key, "expected an array");
  std::vector<double> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number() || !std::isfinite(v[i].get<double>()) || !(v[i].get<double>() > 0)) {
      fail(fmt::format("{}{}[{}]", path, key, i), "expected a positive number of ns");
    }
    out.push_back(v[i].get<double>());
  }
  return out;
}

// An interval [low, high] the bench wrote beside a percentile; absent is fine, malformed is not.
std::optional<std::pair<double, double>> interval(const json& latency, const char* key,
                                                  const std::string& path) {
  if (!latency.contains(key)) return std::nullopt;
  const json& v = latency[key];
  if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number()) {
    fail(path + key, "expected [low, high]");
  }
  return std::make_pair(v[0].get<double>(), v[1].get<double>());
}

// The optional "latency" block of a batch or a server point: only its intervals are read (the
// percentiles themselves are recomputed from the calls, the same way).
void read_intervals(const json& obj, const std::string& path, LatencyEntry& e) {
  if (!obj.contains("latency")) return;
  const json& l = obj["latency"];
  if (!l.is_object()) fail(path + "latency", "expected an object");
  e.p50_ci = interval(l, "p50_ci_ns", path + "latency.");
  e.p99_ci = interval(l, "p99_ci_ns", path + "latency.");
}

// "70.7k": three significant digits, as the axes write numbers.
std::string rate(double per_s) {
  return tick_label(per_s);
}

// A time in the axis' unit with four significant digits: format_ns()'s three would write a
// tight interval as "13.6 us - 13.6 us".
std::string in_unit(double ns, const TimeUnit& u) {
  return fmt::format("{:.4g} {}", ns / u.ns, u.name);
}

// "p99 = 251.2 us (95% interval 245.5 us - 265.4 us, block bootstrap)".
std::string percentile_title(const char* name, double ns, const TimeUnit& u,
                             const std::optional<std::pair<double, double>>& ci) {
  std::string t = fmt::format("{} = {}", name, in_unit(ns, u));
  if (ci) {
    t += fmt::format(" (95% interval {} - {}, block bootstrap)", in_unit(ci->first, u),
                     in_unit(ci->second, u));
  }
  return t;
}

}  // namespace

BenchData read_bench_data(const json& doc) {
  BenchData d;
  d.model = text(doc, "model", "");
  d.mode = text(doc, "mode", "");
  d.device = text(field(doc, "options", ""), "device", "options.");
  const json& threads = field(field(doc, "fingerprint", ""), "threads", "fingerprint.");
  if (!threads.is_number_integer()) fail("fingerprint.threads", "expected a whole number");
  d.threads = threads.get<int>();
  const json& batches = field(doc, "batches", "");
  if (!batches.is_array()) fail("batches", "expected an array");
  for (size_t i = 0; i < batches.size(); ++i) {
    const std::string path = fmt::format("batches[{}].", i);
    const json& b = batches[i];
    LatencyEntry e;
    const json& batch = field(b, "batch", path);
    if (!batch.is_number_integer() || batch.get<int64_t>() < 1) {
      fail(path + "batch", "expected a whole number >= 1");
    }
    e.label = fmt::format("batch {}", batch.get<int64_t>());
    e.samples_ns = times(b, "samples_ns", path);
    if (e.samples_ns.empty()) fail(path + "samples_ns", "no calls were timed");
    e.throughput = number(b, "throughput_per_s", path);
    read_intervals(b, path, e);
    d.entries.push_back(std::move(e));
  }
  // A server bench (--server): one distribution per offered load that completed queries.
  if (doc.contains("server")) {
    const json& points = field(field(doc, "server", ""), "points", "server.");
    if (!points.is_array()) fail("server.points", "expected an array");
    for (size_t i = 0; i < points.size(); ++i) {
      const std::string path = fmt::format("server.points[{}].", i);
      LatencyEntry e;
      e.server = true;
      e.label = "server, " + rate(number(points[i], "offered_qps", path)) + " queries/s offered";
      e.samples_ns = times(points[i], "latency_ns", path);
      if (e.samples_ns.empty()) continue;  // nothing completed at this load: nothing to draw
      e.throughput = number(points[i], "achieved_qps", path);
      read_intervals(points[i], path, e);
      d.entries.push_back(std::move(e));
    }
  }
  if (d.entries.empty()) fail("batches", "no calls were timed (empty, and no server points)");
  return d;
}

TimeUnit time_unit(double max_ns) {
  if (max_ns < 1e4) return {1, "ns"};
  if (max_ns < 1e7) return {1e3, "us"};
  return {1e6, "ms"};
}

double Histogram::edge_ns(size_t i) const {
  const double e = lo + static_cast<double>(i) * width;
  return log ? std::pow(10.0, e) : e;
}

Histogram latency_histogram(const std::vector<double>& samples_ns) {
  namespace st = profiler::stats;
  std::vector<double> sorted = samples_ns;
  std::sort(sorted.begin(), sorted.end());
  Histogram h;
  h.log = sorted.back() / sorted.front() >= 10;
  // The samples in the axis' coordinate; bins are equal in it.
  std::vector<double> v = sorted;
  if (h.log) {
    for (double& x : v) x = std::log10(x);
  }
  const double lo = v.front(), range = v.back() - v.front();
  const double n = static_cast<double>(v.size());
  const double iqr = st::quantile(v, 0.75) - st::quantile(v, 0.25);
  int bins = 1;
  if (range > 0) {
    const double fd = 2 * iqr * std::cbrt(1 / n);  // Freedman & Diaconis (1981)
    const double want = fd > 0 ? std::ceil(range / fd) : std::ceil(std::sqrt(n));
    bins = static_cast<int>(std::clamp(want, 1.0, static_cast<double>(kMaxBins)));
  }
  h.lo = lo;
  h.width = range > 0 ? range / bins : 1;
  h.counts.assign(static_cast<size_t>(bins), 0);
  for (const double x : v) {
    const auto i = static_cast<long>(std::floor((x - lo) / h.width));
    ++h.counts[static_cast<size_t>(std::clamp(i, 0L, static_cast<long>(bins - 1)))];
  }
  return h;
}

std::pair<Scale, Scale> histogram_scales(const LatencyEntry& e, const Histogram& h) {
  const auto [lo, hi] = std::minmax_element(e.samples_ns.begin(), e.samples_ns.end());
  const TimeUnit u = time_unit(*hi);
  const PlotArea& a = kHistArea;
  const Scale x = h.log ? log_scale(*lo / u.ns, *hi / u.ns, a.left, a.right())
                        : linear_scale(*lo / u.ns, *hi / u.ns, a.left, a.right());
  const int64_t top = *std::max_element(h.counts.begin(), h.counts.end());
  return {x, linear_scale(0, static_cast<double>(top), a.bottom(), a.top)};
}

Scale cdf_y_scale() {
  return Scale{0, 1, kCdfArea.bottom(), kCdfArea.top, false};
}

std::vector<std::pair<double, double>> cdf_points(const std::vector<double>& samples_ns,
                                                  double unit_ns, const Scale& x, const Scale& y) {
  std::vector<double> s = samples_ns;
  std::sort(s.begin(), s.end());
  const double n = static_cast<double>(s.size());
  std::vector<std::pair<double, double>> pts;
  long column = 0;
  double below = 0;  // F just left of the current step
  for (size_t i = 0; i < s.size();) {
    size_t j = i;
    while (j < s.size() && s[j] == s[i]) ++j;  // calls of equal time make one step
    const double px = x(s[i] / unit_ns);
    const double level = static_cast<double>(j) / n;
    const long c = std::lround(px);
    if (!pts.empty() && c == column) {
      pts.back().second = y(level);  // same pixel column: the step just climbs further
    } else {
      pts.emplace_back(px, y(below));
      pts.emplace_back(px, y(level));
      column = c;
    }
    below = level;
    i = j;
  }
  pts.emplace_back(x.r1, y(1));
  return pts;
}

Section latency_view(const LatencyEntry& e) {
  const LatencyStats st = latency_stats(e.samples_ns);  // as `prism bench` computed them
  const Histogram h = latency_histogram(e.samples_ns);
  const TimeUnit u = time_unit(st.max);
  const auto [x, y] = histogram_scales(e, h);
  const std::string x_name = fmt::format("time per call, {}{}", u.name, h.log ? " (log)" : "");
  const double n = static_cast<double>(st.n);

  const char* what = e.server ? "Every query's time from arrival to answer (queueing included)"
                              : "Every warm call's time";
  Section s{"Latency, " + e.label,
            fmt::format("{}: the bars count them per time bin (top), the curve is the share at or "
                        "below a time (bottom); the vertical lines are p50, p95 and p99. Hover a "
                        "bar or a line for its numbers.",
                        what),
            ""};

  struct Mark {
    const char* name;
    double ns;
    const char* cls;
    std::optional<std::pair<double, double>> ci;
  };
  const Mark marks[] = {{"p50", st.p50, "fwd", e.p50_ci},
                        {"p95", st.p95, "opt", std::nullopt},
                        {"p99", st.p99, "bwd", e.p99_ci}};

  const PlotArea& a = kHistArea;
  Svg hist(kViewWidth, a.bottom() + 44, "histogram of call times, " + e.label);
  hist.x_axis(x, a.bottom(), a.top, x_name);
  hist.y_axis(y, a.left, a.right(), "calls");
  for (size_t i = 0; i < h.counts.size(); ++i) {
    if (h.counts[i] == 0) continue;
    const double x0 = x(h.edge_ns(i) / u.ns), x1 = x(h.edge_ns(i + 1) / u.ns);
    const double top = y(static_cast<double>(h.counts[i]));
    hist.rect(x0, top, x1 - x0, a.bottom() - top, "area",
              fmt::format("{} - {}: {} calls ({:.1f}%)", in_unit(h.edge_ns(i), u),
                          in_unit(h.edge_ns(i + 1), u), h.counts[i],
                          100.0 * static_cast<double>(h.counts[i]) / n));
  }

  const PlotArea& c = kCdfArea;
  const Scale cy = cdf_y_scale();
  Svg cdf(kViewWidth, c.bottom() + 44, "cumulative share of calls, " + e.label);
  cdf.x_axis(x, c.bottom(), c.top, x_name);
  cdf.y_axis(cy, c.left, c.right(), "share of calls at or below");
  cdf.polyline(cdf_points(e.samples_ns, u.ns, x, cy), "roof",
               fmt::format("{} calls, {} to {}", st.n, in_unit(st.min, u), in_unit(st.max, u)));

  for (size_t k = 0; k < 3; ++k) {
    const Mark& m = marks[k];
    const double px = x(m.ns / u.ns);
    const std::string title = percentile_title(m.name, m.ns, u, m.ci);
    hist.line(px, a.top, px, a.bottom(), m.cls, title);
    cdf.line(px, c.top, px, c.bottom(), m.cls, title);
    // Labels stacked downwards: p50, p95 and p99 are often a pixel apart.
    hist.text(px + 3, a.top + 10 + 12 * static_cast<double>(k), m.name, "", "start", title);
  }

  // The page's legend squares are coloured for fwd / opt / bwd only; the bars and the curve are
  // named by the line on how to read the view.
  s.body = legend({{"fwd", "p50 " + in_unit(st.p50, u)},
                   {"opt", "p95 " + in_unit(st.p95, u)},
                   {"bwd", "p99 " + in_unit(st.p99, u)}}) +
           hist.str() + cdf.str();
  if (st.n < kMinSamplesForP99) {
    s.body += note(escape(fmt::format(
        "Only {} calls: p99 is within a call or two of the slowest, so read it as the maximum.",
        st.n)));
  }
  return s;
}

Block bench_block(const std::string& name, const json& doc) {
  const BenchData d = read_bench_data(doc);
  std::string thr;
  for (const LatencyEntry& e : d.entries) {
    if (e.throughput < 0) continue;
    thr += fmt::format("{}{}: {} {}/s", thr.empty() ? "" : "; ", e.label, rate(e.throughput),
                       e.server ? "queries completed" : "samples");
  }
  Block b{name,
          fmt::format("model {}, {}, {} thread{}, {}; throughput: {}", d.model, d.mode, d.threads,
                      d.threads == 1 ? "" : "s", d.device, thr),
          {}};
  for (const LatencyEntry& e : d.entries) b.sections.push_back(latency_view(e));
  return b;
}

namespace {
const ResultView reg("prism.bench", &bench_block);
}  // namespace

}  // namespace prism::analysis::html
