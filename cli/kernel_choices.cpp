// Kernel variant choices from the command line (--kernel op=variant) and the environment
// (PRISM_KERNELS). Both are usage errors when they name an op or variant that does not exist;
// the message lists what does.
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/model_bench.h"
#include "cli/commands.h"
#include "kernels/registry.h"

namespace prism::cli {

void apply_kernel_flags(const std::vector<std::string>& specs) {
  for (const std::string& spec : specs) {
    try {
      kernels::apply_kernel_choices(spec);
    } catch (const Error& e) {
      throw UsageError(fmt::format("--kernel {}: {}", spec, e.what()));
    }
  }
}

void load_kernel_env() {
  try {
    kernels::load_env_choices();
  } catch (const Error& e) {
    // The registry's message names the op and variants but not where the value came from.
    const char* env = std::getenv("PRISM_KERNELS");
    throw UsageError(fmt::format("PRISM_KERNELS={}: {}", env ? env : "", e.what()));
  }
}

std::string kernel_summary() {
  const std::string s = analysis::kernel_choices();
  return s.empty() ? "defaults (see `prism ops`)" : s;
}

}  // namespace prism::cli
