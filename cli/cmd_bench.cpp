// `prism bench MODEL`: the latency distribution, throughput and memory of a model's inference
// call or training step per batch size, or a server scenario (--qps). The work is
// analysis/model_bench.h's; this file turns flags into options and prints.
#include <cstdio>

#include "analysis/bench_report.h"
#include "analysis/environment.h"
#include "analysis/run_record.h"
#include "cli/bench_options.h"
#include "cli/commands.h"
#include "profiler/reports.h"

namespace prism::cli {

int run_bench(const BenchCliOptions& o) {
  // Before anything else touches memory: what the binary and its libraries hold.
  const int64_t resident_at_start = analysis::resident_memory().rss_bytes;
  if (o.threads > 0) set_threads(o.threads);
  load_kernel_env();
  apply_kernel_flags(o.kernels);
  if (!o.json_path.empty()) check_writable(o.json_path, "json");
  check_model_name(o.model);  // before a data set is loaded
  analysis::BenchOptions bo = bench_options(o);
  bo.resident_at_start = resident_at_start;
  try {
    analysis::check_bench_options(bo);  // before the machine peak or the model is touched
  } catch (const Error& e) {
    throw UsageError(e.what());
  }

  const analysis::BenchResult r = analysis::run_bench(bo);
  std::fputs(analysis::format_bench(r).c_str(), stdout);
  if (!o.json_path.empty()) {
    profiler::write_text_file(o.json_path, analysis::bench_to_json(r).dump(1) + "\n");
    std::printf("wrote %s\n", o.json_path.c_str());
  }
  return 0;
}

}  // namespace prism::cli
