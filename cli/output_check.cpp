// A check before a long run that its output files can be written, so a typo in --trace fails
// in a millisecond instead of after training (profiler/output_file.h has the protocol; the
// write at the end is atomic and reports any later failure with its OS reason).
#include <stdexcept>
#include <string>

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

}  // namespace prism::cli
