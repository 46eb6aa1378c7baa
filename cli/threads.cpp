// Thread count: `--threads N` beats PRISM_THREADS, which beats the OpenMP default
// (OMP_NUM_THREADS, else one thread per core). And the --device flag.
#include <cstdlib>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cli/commands.h"
#include "kernels/gpu_runtime.h"
#include "kernels/split_rule.h"
#include "profiler/machine.h"

namespace prism::cli {

int threads_from_env() {
  const char* env = std::getenv("PRISM_THREADS");
  if (!env || !*env) return 0;
  const std::string s(env);
  size_t used = 0;
  long n = 0;
  try {
    n = std::stol(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || n < 1 || n > 1024) {
    throw UsageError("PRISM_THREADS must be a whole number from 1 to 1024, got '" + s + "'");
  }
  return static_cast<int>(n);
}

void set_threads(int n) {
#ifdef _OPENMP
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void install_split_rule() {
  const profiler::MachinePeak* m = profiler::machine_peak(false);
  if (m == nullptr) return;
  std::vector<double> micros;  // [t - 2]: R(t); rows come as threads 1, 2, ..., N
  for (const profiler::ThreadLimits& row : m->rows) {
    if (row.threads < 2) continue;
    micros.resize(static_cast<size_t>(row.threads - 1), 0.0);
    micros[static_cast<size_t>(row.threads - 2)] = row.region_us.median;
  }
  kernels::cpu::set_region_costs(micros);
}

Device device_from_flag(const std::string& name) {
  if (name == "cpu") return Device::cpu;
  if (name == "cuda") {
    kernels::gpu::require("--device cuda");
    return Device::cuda;
  }
  throw UsageError("--device: expected cpu or cuda, got '" + name + "'");
}

}  // namespace prism::cli
