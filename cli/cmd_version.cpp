// `prism --version`: what this binary is and how it was built, so a profile can be trusted.
#include <fmt/format.h>

#include "cli/commands.h"
#include "kernels/gpu_runtime.h"
#include "profiler/build_info.h"

namespace prism::cli {

namespace {
// An empty CMake variable leaves blanks; show a word instead of nothing.
std::string or_none(std::string s) {
  const size_t b = s.find_first_not_of(' ');
  return b == std::string::npos ? std::string("(none)") : s.substr(b);
}
}  // namespace

std::string version_text() {
  const int threads = max_threads();
  std::string out = fmt::format("prism {}\n", build_info::kVersion);
  out += fmt::format("  compiler:    {}\n", or_none(build_info::kCompiler));
  out += fmt::format("  flags:       {}\n", or_none(build_info::kFlags));
  out += fmt::format("  build type:  {}\n", or_none(build_info::kBuildType));
  // Which GPU `--device cuda` would use, or why there is none (asking loads the CUDA backend and
  // starts CUDA: a fraction of a second on a machine with a GPU, little without one).
  const bool gpu = kernels::gpu::available();
  const std::string backend = kernels::gpu::backend_path();
  out +=
      fmt::format("  CUDA:        {}\n", !build_info::kHasCuda ? "no (CPU only)"
                                         : backend.empty()     ? "yes (CUDA backend built)"
                                                           : "yes (CUDA backend " + backend + ")");
  if (gpu) {
    const kernels::gpu::DeviceInfo d = kernels::gpu::device_info();
    out += fmt::format("  GPU:         {} (compute {}.{}, {} SMs)\n", d.name, d.compute_major,
                       d.compute_minor, d.sm_count);
  } else {
    out += fmt::format("  GPU:         none usable ({})\n", kernels::gpu::unavailable_reason());
  }
#ifdef _OPENMP
  out += fmt::format("  OpenMP:      {} thread{} max (set with --threads or PRISM_THREADS)\n",
                     threads, threads == 1 ? "" : "s");
#else
  out += fmt::format("  OpenMP:      not built ({} thread)\n", threads);
#endif
  return out;
}

}  // namespace prism::cli
