// The `prism` subcommands, as plain functions over plain option structs. main.cpp owns the
// command-line parsing (CLI11) and the mapping of failures to exit codes:
//   0  success
//   1  a run-time error (prism::Error, a file that cannot be written): "prism: error: ..."
//   2  a usage error: a bad flag, an unknown command, a bad value (e.g. --kernel matmul=nosuch)
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace prism::cli {

// A bad value that only the command itself can judge (an unknown kernel variant, a bad
// PRISM_THREADS). main() reports it like a parse error: message, usage hint, exit 2.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

// `prism --version`: version, compiler, flags, build type, CUDA, OpenMP threads.
std::string version_text();

// `prism ops`: every registered op, its cost formula and its kernel variants.
int run_ops();

// `prism demo`: trains an MLP on a spiral under the profiler and writes the reports.
struct DemoOptions {
  int steps = 500;
  int threads = 0;  // 0: PRISM_THREADS, else the OpenMP default
  uint64_t seed = 42;
  double lr = 1.0;
  std::vector<std::string> kernels;  // "op=variant" (or comma-separated lists of them)
  std::string trace_path = "trace.json";
  std::string json_path = "profile.json";
  int rows = 30;  // rows of the op table to print; 0 = all
};
int run_demo(const DemoOptions& opts);

// ---- kernel choices (kernel_choices.cpp) -----------------------------------------------------
// Applies each --kernel value ("op=variant" or a comma-separated list); a bad one is a
// UsageError naming the variants (or ops) that exist.
void apply_kernel_flags(const std::vector<std::string>& specs);
// Reads PRISM_KERNELS (below --kernel in priority); a bad value is a UsageError.
void load_kernel_env();
// "matmul=naive, softmax=naive" for every op not running its default variant.
std::string kernel_summary();

// ---- output files (output_check.cpp) ---------------------------------------------------------
// Throws an Error naming `what` ("trace") and the reason if `path` cannot be written.
void check_writable(const std::string& path, const char* what);

// ---- threads (threads.cpp) -------------------------------------------------------------------
// PRISM_THREADS as a thread count; 0 when unset. A value that is not a positive integer is a
// UsageError.
int threads_from_env();
// omp_set_num_threads(n) (a no-op in a build without OpenMP).
void set_threads(int n);
// omp_get_max_threads(): the threads the next parallel region will use (1 without OpenMP).
int max_threads();

}  // namespace prism::cli
