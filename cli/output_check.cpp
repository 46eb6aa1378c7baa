// A check before a long run that its output files can be written, so a typo in --trace fails
// in a millisecond instead of after training (profiler/output_file.h has the protocol; the
// write at the end is atomic and reports any later failure with its OS reason).
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "kernels/types.h"
#include "profiler/output_file.h"

namespace prism::cli {

void check_writable(const std::string& path, const char* what, bool regular_file_only) {
  try {
    profiler::check_output_path(
        path, what,
        regular_file_only ? profiler::OutputKind::file : profiler::OutputKind::file_or_stream);
  } catch (const std::runtime_error& e) {
    throw Error(e.what());  // exit 1, like an unreadable input file; before any work
  }
}

void check_distinct_outputs(const std::vector<std::pair<const char*, std::string>>& outputs) {
  namespace fs = std::filesystem;
  std::vector<std::pair<const char*, fs::path>> seen;
  for (const auto& [flag, path] : outputs) {
    if (path.empty()) continue;
    std::error_code ec;
    // Absolute first (weakly_canonical leaves a relative name with no existing prefix as it
    // is), then symlinks followed and ./ and ../ folded.
    const fs::path absolute =
        fs::absolute(profiler::resolve_output_path(path).value_or(path), ec).lexically_normal();
    fs::path real = fs::weakly_canonical(absolute, ec);
    if (ec) real = absolute;
    for (const auto& [other_flag, other] : seen) {
      if (other == real) {
        throw UsageError(std::string(other_flag) + " and " + flag + " name the same file (" + path +
                         "): the second would overwrite the first; give each its own");
      }
    }
    seen.emplace_back(flag, real);
  }
}

}  // namespace prism::cli
