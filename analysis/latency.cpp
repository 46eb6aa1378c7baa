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

}  // namespace prism::analysis
