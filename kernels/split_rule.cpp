#include "kernels/split_rule.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>

namespace prism::kernels::cpu {
namespace {

// Per thread count t (index t), the installed R(t) and its work_scale; 0 = the reference. Atomics
// because a kernel may read while a command installs (relaxed: each value stands on its own).
std::array<std::atomic<double>, kSplitRuleMaxThreads + 1> g_region_micros{};
std::array<std::atomic<int64_t>, kSplitRuleMaxThreads + 1> g_scale{};

size_t slot(int threads) {
  return static_cast<size_t>(std::clamp(threads, 0, kSplitRuleMaxThreads));
}

}  // namespace

void set_region_costs(const std::vector<double>& micros) {
  for (int t = 0; t <= kSplitRuleMaxThreads; ++t) {
    // Counts past the measured ones take the largest measured count's cost.
    const size_t i = micros.empty() || t < 2
                         ? micros.size()
                         : std::min<size_t>(static_cast<size_t>(t - 2), micros.size() - 1);
    const double r = i < micros.size() && micros[i] > 0 && std::isfinite(micros[i]) ? micros[i] : 0;
    g_region_micros[static_cast<size_t>(t)].store(r, std::memory_order_relaxed);
    g_scale[static_cast<size_t>(t)].store(work_scale_for(r), std::memory_order_relaxed);
  }
}

double region_cost_micros(int threads) {
  const double r = g_region_micros[slot(threads)].load(std::memory_order_relaxed);
  return r > 0 ? r : kReferenceRegionMicros;
}

int64_t work_scale_for(double micros) {
  if (!(micros > kReferenceRegionMicros) || !std::isfinite(micros)) return 1;
  // A cost past any sensible one (a broken measurement) still gives a finite scale.
  return static_cast<int64_t>(std::ceil(std::min(micros, 1e6) / kReferenceRegionMicros));
}

int64_t work_scale(int threads) {
  const int64_t s = g_scale[slot(threads)].load(std::memory_order_relaxed);
  return s > 0 ? s : 1;
}

}  // namespace prism::kernels::cpu
