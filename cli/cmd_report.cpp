// `prism report IN.json [IN2.json ...] -o report.html`: the profiles as one self-contained HTML
// page (op breakdown, roofline, memory timeline per input). Every input is read and checked
// before anything is written, and the page is written atomically, so a bad input never leaves
// a half-written report. The views are analysis/html's; this file reads, assembles and writes.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/html/profile_views.h"
#include "analysis/html/report_page.h"
#include "analysis/html/result_views.h"
#include "cli/commands.h"
#include "kernels/types.h"
#include "profiler/machine.h"
#include "profiler/output_file.h"

namespace prism::cli {
namespace {

// The roofs from `prism machine`'s cache only: measuring takes seconds a report should not
// spend unasked; without them the roofline view says how to add them.
analysis::html::RooflinePeaks cached_peaks(int threads) {
  analysis::html::RooflinePeaks peaks;
  if (const profiler::MachinePeak* machine = profiler::machine_peak(false)) {
    peaks.gflops = machine->peak_gflops(threads);
    peaks.gbps = machine->peak_gbps(threads);
  }
  return peaks;
}

std::string page(const std::vector<analysis::html::Block>& blocks) {
  const std::string title = blocks.size() == 1
                                ? "prism report: " + blocks[0].heading
                                : "prism report: " + std::to_string(blocks.size()) + " results";
  return analysis::html::report_page(title, blocks);
}

// One input's block: a result whose "kind" has a view (bench, compare, sweep, models:
// analysis/html/result_views.h), else a profile. Errors name the file.
analysis::html::Block block_of(const std::string& path) {
  const nlohmann::json doc = analysis::html::load_json(path);
  const std::string name = std::filesystem::path(path).filename().string();
  try {
    return analysis::html::result_block(name, doc, cached_peaks);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace

std::string report_html(const std::vector<std::string>& names,
                        const std::vector<analysis::html::ProfileData>& profiles) {
  std::vector<analysis::html::Block> blocks;
  for (size_t i = 0; i < profiles.size(); ++i)
    blocks.push_back(
        analysis::html::profile_block(names[i], profiles[i], cached_peaks(profiles[i].threads)));
  return page(blocks);
}

int run_report(const ReportOptions& o) {
  check_writable(o.output_path, "report");
  // Every input is read and drawn before anything is written: a bad one leaves no page.
  std::vector<analysis::html::Block> blocks;
  for (const std::string& path : o.inputs) blocks.push_back(block_of(path));
  profiler::write_text_file(o.output_path, page(blocks));
  std::printf("wrote %s (%zu %s)\n", o.output_path.c_str(), blocks.size(),
              blocks.size() == 1 ? "input" : "inputs");
  return 0;
}

}  // namespace prism::cli
