// The report's view of a `prism bench --json` result (kind "prism.bench", written by
// analysis/run_record.cpp): for each batch size (and each load level of a server bench), the
// distribution of the warm calls' times as a histogram and as an empirical CDF, with p50, p95
// and p99 drawn where analysis/latency.h puts them. Exposed for the tests, which check the
// numbers each shape is placed at.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/html/profile_views.h"
#include "analysis/html/report_page.h"
#include "analysis/html/svg.h"
#include "analysis/latency.h"

namespace prism::analysis::html {

// One distribution to draw: a batch size, or one offered load of a server bench.
struct LatencyEntry {
  std::string label;               // "batch 32", "server, 400 queries/s offered"
  std::vector<double> samples_ns;  // every warm call, in time order
  // The bootstrap intervals the bench wrote (latency.p50_ci_ns, latency.p99_ci_ns), if any.
  std::optional<std::pair<double, double>> p50_ci, p99_ci;
  double throughput = -1;  // samples/s (batches) or completed queries/s (server); -1: none
  bool server = false;     // the times are queries' (arrival to answer), not calls'
};

struct BenchData {
  std::string model, mode, device;
  int threads = 0;
  std::vector<LatencyEntry> entries;
};

// Reads the fields the view needs; throws prism::Error naming the path of a missing or mistyped
// one ("batches[1].samples_ns: missing").
BenchData read_bench_data(const nlohmann::json& doc);

// The unit the axes are written in, picked from the slowest call so tick labels stay short:
// ns below 10 us, us below 10 ms, ms above.
struct TimeUnit {
  double ns;  // nanoseconds per unit
  const char* name;
};
TimeUnit time_unit(double max_ns);

// Equal-width bins over [min, max] of the samples, in the axis' coordinate: the time itself on a
// linear axis, log10 of it on a log axis. The axis is log when max / min >= 10 (the calls span a
// decade or more: a tail that a linear axis would squash into one bar). The bin width is
// Freedman-Diaconis, h = 2 IQR n^(-1/3) in that coordinate (IQR from the same type-7 quantile
// the bench uses); bins = ceil(range / h), clamped to [1, kMaxBins]; with IQR = 0 it falls back
// to ceil(sqrt(n)) bins. A sample on an inner edge goes to the bin above; max to the last bin.
inline constexpr int kMaxBins = 100;
struct Histogram {
  bool log = false;
  double lo = 0, width = 1;  // the first edge and the bin width, in the axis' coordinate
  std::vector<int64_t> counts;
  // Edge i (0 .. counts.size()) in nanoseconds.
  double edge_ns(size_t i) const;
};
Histogram latency_histogram(const std::vector<double>& samples_ns);

// Plot geometry (SVG pixels): the histogram above, the CDF below, sharing the x axis.
inline constexpr PlotArea kHistArea{80, 20, 780, 200};
inline constexpr PlotArea kCdfArea{80, 20, 780, 200};

// {x, y} of the histogram: x over the samples in time_unit(max) (log10 over whole decades when
// the histogram is log, else widened to round ticks); y from 0 to the fullest bin's count.
std::pair<Scale, Scale> histogram_scales(const LatencyEntry& e, const Histogram& h);
// The CDF's y scale: 0..1 onto kCdfArea.
Scale cdf_y_scale();

// The empirical CDF F(t) = #{calls <= t} / n as a step outline in pixels: (x(min), y(0)), then at
// each distinct time a vertical step from the level before it to the level after it, and
// horizontally on to the right edge at y(1). Times that fall in the same pixel column (rounded)
// share one vertical step, placed at the first of them, so 100,000 calls stay a few hundred
// points.
// `x` is in units of `unit_ns` nanoseconds (time_unit()).
std::vector<std::pair<double, double>> cdf_points(const std::vector<double>& samples_ns,
                                                  double unit_ns, const Scale& x, const Scale& y);

// One entry's section: histogram and CDF, p50 / p95 / p99 lines at latency_stats()'s values.
Section latency_view(const LatencyEntry& e);
// The block of a bench document: one latency section per entry; the subheading names the model,
// mode, threads, device and throughput.
Block bench_block(const std::string& name, const nlohmann::json& doc);

}  // namespace prism::analysis::html
