// A latency distribution as a service owner reads it: the typical call (p50), the slow calls
// users notice (p90, p95, p99), the worst, and the mean (which the tail drags up), with
// bootstrap 95% intervals for p50 and p99 (profiler/statistics.h). The samples are taken in
// time order and the intervals come from the block bootstrap (20 contiguous blocks), because
// consecutive calls are not independent: a slow stretch slows many calls together.
#pragma once

#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/statistics.h"

namespace prism::analysis {

struct LatencyStats {
  size_t n = 0;
  double min = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0, mean = 0;  // same unit as input
  profiler::stats::Interval p50_ci, p99_ci;
};

// Type-7 quantiles of `samples` (non-empty, finite, in time order), intervals from 2000
// block-bootstrap resamples.
LatencyStats latency_stats(const std::vector<double>& samples);

// The stats as JSON, in nanoseconds: n, min_ns, p50_ns, ..., mean_ns, and the two intervals as
// [low, high] (what `bench --json` and `bench --mode decode --json` write).
nlohmann::ordered_json latency_json(const LatencyStats& s);

// Below this many samples p99 is within one or two samples of the maximum: reports say so.
inline constexpr size_t kMinSamplesForP99 = 100;

}  // namespace prism::analysis
