// The `prism bench` flags as analysis::BenchOptions, shared by `bench` and `compare MODEL`.
#pragma once

#include "analysis/model_bench.h"
#include "cli/commands.h"

namespace prism::cli {

// Maps the flags; an unknown mode or device is a UsageError. Kernel choices and the thread
// count are process settings the caller applies.
analysis::BenchOptions bench_options(const BenchCliOptions& o);

}  // namespace prism::cli
