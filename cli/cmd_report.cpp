// `prism report IN.json [IN2.json ...] -o report.html`: the profiles as one self-contained HTML
// page (op breakdown, roofline, memory timeline per input). Every input is read and checked
// before anything is written, and the page is written atomically, so a bad input never leaves
// a half-written report. The views are analysis/html's; this file reads, assembles and writes.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/html/profile_views.h"
#include "analysis/html/report_page.h"
#include "cli/commands.h"
#include "profiler/machine.h"
#include "profiler/output_file.h"

namespace prism::cli {

std::string report_html(const std::vector<std::string>& names,
                        const std::vector<analysis::html::ProfileData>& profiles) {
  // The roofs from `prism machine`'s cache only: measuring takes seconds a report should not
  // spend unasked; without them the roofline view says how to add them.
  const profiler::MachinePeak* machine = profiler::machine_peak(false);
  std::vector<analysis::html::Block> blocks;
  for (size_t i = 0; i < profiles.size(); ++i) {
    analysis::html::RooflinePeaks peaks;
    if (machine) {
      peaks.gflops = machine->peak_gflops(profiles[i].threads);
      peaks.gbps = machine->peak_gbps(profiles[i].threads);
    }
    blocks.push_back(analysis::html::profile_block(names[i], profiles[i], peaks));
  }
  const std::string title = profiles.size() == 1
                                ? "prism report: " + blocks[0].heading
                                : "prism report: " + std::to_string(profiles.size()) + " profiles";
  return analysis::html::report_page(title, blocks);
}

int run_report(const ReportOptions& o) {
  check_writable(o.output_path, "report");
  std::vector<analysis::html::ProfileData> profiles;
  std::vector<std::string> names;
  for (const std::string& path : o.inputs) {
    profiles.push_back(analysis::html::load_profile(path));
    names.push_back(std::filesystem::path(path).filename().string());
  }
  profiler::write_text_file(o.output_path, report_html(names, profiles));
  std::printf("wrote %s (%zu %s)\n", o.output_path.c_str(), profiles.size(),
              profiles.size() == 1 ? "profile" : "profiles");
  return 0;
}

}  // namespace prism::cli
