// The text report of `prism bench`: the latency table per batch size with its intervals, the
// memory (resident and tracked by role), the time split by op class, the server sweep, and
// the warnings about how it was measured.
#pragma once

#include <string>

#include "analysis/model_bench.h"

namespace prism::analysis {

std::string format_bench(const BenchResult& r);

// `prism bench --model-off`: the loader's rate per batch size beside the model's, and what it
// means for the run (pipeline_verdict).
std::string format_pipeline(const PipelineResult& r);

// The SLO line of a server sweep: between which offered rates the p99 latency crosses
// `slo_ms`, or that it never does in the sweep. "" when slo_ms <= 0.
std::string slo_crossing(const std::vector<ServerPoint>& points, double slo_ms);

}  // namespace prism::analysis
