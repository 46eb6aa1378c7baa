// libFuzzer target: the result files that `prism compare` and `prism gate` (analysis::load_run)
// and `prism report` (analysis::html::result_block, then the page) read. The input is the whole
// file. Each must accept it or throw prism::Error naming what is wrong; anything else (another
// exception, a sanitizer report, a leak, a page that takes 10 s) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/html/report_page.h"
#include "analysis/html/result_views.h"
#include "analysis/run_record.h"
#include "tests/fuzz/fuzz_file.h"

namespace prism::fuzz {

// True when either reader accepted the file.
inline bool results_input(const uint8_t* data, size_t size) {
  static ScratchFile file("prism-fuzz-results");
  file.write(data, size);

  bool accepted = false;
  try {
    const analysis::RunRecord r = analysis::load_run(file.path());
    accepted = true;
  } catch (const Error&) {
    // Expected: the file is rejected with a message.
  }
  try {
    const nlohmann::json doc = analysis::html::load_json(file.path());
    const analysis::html::Block b = analysis::html::result_block(
        "input", doc, [](int) { return analysis::html::RooflinePeaks{}; });
    const std::string page = analysis::html::report_page("fuzz", {b});
    accepted = accepted || !page.empty();
  } catch (const Error&) {
  }
  return accepted;
}

}  // namespace prism::fuzz

#ifndef PRISM_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  prism::fuzz::results_input(data, size);
  return 0;
}
#endif
