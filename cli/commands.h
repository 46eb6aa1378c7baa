// What the `prism` commands share: the usage error, the kernel flags, the checks of an output
// path, a model name and a device, and the thread count. Each command's own options, flags and
// run function are in its cmd_<name>.cpp (command.h); failures map to exit codes in main.cpp:
//   0  success
//   1  a run-time error (prism::Error, a file that cannot be written): "prism: error: ..."
//   2  a usage error: a bad flag, an unknown command, a bad value (e.g. --kernel matmul=nosuch)
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/types.h"

namespace prism::analysis::html {
struct ProfileData;  // analysis/html/profile_views.h
}

namespace prism::cli {

// A bad value that only the command itself can judge (an unknown kernel variant, a bad
// PRISM_THREADS). main() reports it like a parse error: message, usage hint, exit 2.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

// `prism --version`: version, compiler, flags, build type, CUDA, OpenMP threads (cmd_version.cpp).
std::string version_text();

// The page `prism report` writes, for profiles already read (analysis/html/profile_views.h) and
// named (a file name): also what `prism train --report` and `prism demo` write (cmd_report.cpp).
std::string report_html(const std::vector<std::string>& names,
                        const std::vector<analysis::html::ProfileData>& profiles);

// ---- kernel choices (kernel_choices.cpp) -----------------------------------------------------
// Applies each --kernel value ("op=variant" or a comma-separated list); a bad one is a
// UsageError naming the variants (or ops) that exist.
void apply_kernel_flags(const std::vector<std::string>& specs);
// Reads PRISM_KERNELS (below --kernel in priority); a bad value is a UsageError.
void load_kernel_env();
// "matmul=naive,softmax=naive" for every op not running its default variant (each op once),
// or "defaults (see `prism ops`)".
std::string kernel_summary();

// ---- output files (output_check.cpp) ---------------------------------------------------------
// Throws an Error naming `what` ("trace") and the reason if `path` cannot be written
// (profiler::check_output_path). A checkpoint must be a regular file; a text output may also be
// a device or a FIFO (--json /dev/stdout).
void check_writable(const std::string& path, const char* what, bool regular_file_only = false);
// (That no output is an input or another output is checked once for every command, before it
// runs: cli/file_roles.h.)

// ---- models (train_data.cpp) -----------------------------------------------------------------
// A UsageError listing the zoo's models unless `model` names one: checked before any data set
// is loaded, so a typo costs a millisecond, not the loading of a 400 MB data set.
void check_model_name(const std::string& model);
// A UsageError when `--checkpoint value` does not fit `model` (a bad value; a model without
// blocks), before anything is loaded.
void check_checkpoint_flag(const std::string& model, const std::string& value);

// ---- devices (threads.cpp) -------------------------------------------------------------------
// "cpu" or "cuda" (what --device accepts) as a Device. cuda on a machine without a usable GPU
// is an Error that says why (a driver missing, no device, a build without CUDA).
Device device_from_flag(const std::string& name);

// ---- threads (threads.cpp) -------------------------------------------------------------------
// PRISM_THREADS as a thread count; 0 when unset. A value that is not a positive integer is a
// UsageError.
int threads_from_env();
// omp_set_num_threads(n) (a no-op in a build without OpenMP).
void set_threads(int n);
// omp_get_max_threads(): the threads the next parallel region will use (1 without OpenMP).
int max_threads();
// The CPU kernels' split rule from the region costs `prism machine` cached for this build
// (kernels/split_rule.h); the reference rule when nothing is cached. Reads the cache, never
// measures; a corrupt cache is a warning on stderr.
void install_split_rule();

}  // namespace prism::cli
