// `prism report IN.json [IN2.json ...] -o report.html`: the profiles as one self-contained HTML
// page (op breakdown, roofline, memory timeline per input). Every input is read and checked
// before anything is written, and the page is written atomically, so a bad input never leaves
// a half-written report. The views are analysis/html's; this file reads, assembles and writes.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "analysis/html/profile_views.h"
#include "analysis/html/report_page.h"
#include "analysis/html/result_views.h"
#include "cli/command.h"
#include "cli/commands.h"
#include "cli/file_roles.h"
#include "cli/options.h"
#include "kernels/types.h"
#include "profiler/machine.h"
#include "profiler/output_file.h"

namespace prism::cli {
namespace {

// The flags, as add_options (below) declares them.
struct ReportOptions {
  std::vector<std::string> inputs;  // profiles (`prism train --profile --json`, `prism demo`)
  std::string output_path = "report.html";
};

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

namespace {

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

void add_options(CLI::App& cmd, ReportOptions& o) {
  cmd.add_option("inputs", o.inputs,
                 "profiles: what `prism train MODEL --profile --json F` and `prism demo` write")
      ->type_name("IN.json")
      ->required()
      ->check(file_name());
  cmd.add_option("-o,--output", o.output_path, "the HTML page to write")
      ->type_name("FILE")
      ->check(file_name())
      ->capture_default_str();
}

Action setup(CLI::App& cmd) {
  auto o = std::make_shared<ReportOptions>();
  add_options(cmd, *o);
  return {.run = [o] { return run_report(*o); },
          .files =
              [o](CommandFiles& f) {
                for (const std::string& p : o->inputs) f.input("IN.json", p);
                f.output("--output", o->output_path);
              }};
}

const RegisteredCommand registered(
    {.order = 1100,
     .name = "report",
     .help = "profiles as one self-contained HTML page: op breakdown, roofline, memory",
     .setup = &setup});

}  // namespace

}  // namespace prism::cli
