#include "analysis/latency.h"

#include <algorithm>

namespace prism::analysis {

LatencyStats latency_stats(const std::vector<double>& samples) {
  namespace st = profiler::stats;
  LatencyStats s;
  s.n = samples.size();
  s.mean = st::mean(samples);  // throws on empty or non-finite input, naming the function
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.p50 = st::quantile(sorted, 0.50);
  s.p90 = st::quantile(sorted, 0.90);
  s.p95 = st::quantile(sorted, 0.95);
  s.p99 = st::quantile(sorted, 0.99);
  s.p50_ci = st::block_bootstrap_quantile_ci(samples, 0.50);
  s.p99_ci = st::block_bootstrap_quantile_ci(samples, 0.99);
  return s;
}

nlohmann::ordered_json latency_json(const LatencyStats& l) {
  return nlohmann::ordered_json{{"n", l.n},
                                {"min_ns", l.min},
                                {"p50_ns", l.p50},
                                {"p90_ns", l.p90},
                                {"p95_ns", l.p95},
                                {"p99_ns", l.p99},
                                {"max_ns", l.max},
                                {"mean_ns", l.mean},
                                {"p50_ci_ns", {l.p50_ci.low, l.p50_ci.high}},
                                {"p99_ci_ns", {l.p99_ci.low, l.p99_ci.high}}};
}

}  // namespace prism::analysis
