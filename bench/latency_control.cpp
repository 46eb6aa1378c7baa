// A control for `prism bench`'s tail latency: the same timing loop around a plain C++ kernel
// with no prism in it (no tensors, no allocation, no dispatch), so a tail that shows here too
// belongs to the machine, not to prism.
//
// The kernel is a float GEMV y = A x with A of `rows` x 784 (the MLP's input width), run `reps`
// times per call so that a call lasts about as long as the MLP's batch-1 inference (16 us on the
// machine of docs/PERFORMANCE.md). Two working sets tell the two suspects apart:
//   prism_bench_latency_control 27 14    A is 85 kB: it stays in the core's own L2 cache
//   prism_bench_latency_control 350 1    A is 1.1 MB (the MLP's weights): past a 1 MB L2, so
//                                        every call reads it from the L3 the core shares
// Output: calls, p50, p90, p99, p99/p50 with the block-bootstrap interval of p99, and the share
// of calls slower than 1.2 x p50 in each stretch of 10,000 calls (slow stretches, not scattered
// slow calls, point at a neighbour rather than at the code).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "analysis/latency.h"
#include "profiler/clock.h"

int main(int argc, char** argv) {
  const long rows = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 350;
  const long reps = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 1;
  const long calls = argc > 3 ? std::strtol(argv[3], nullptr, 10) : 300'000;
  if (rows < 1 || rows > 100'000 || reps < 1 || reps > 10'000 || calls < 100 ||
      calls > 100'000'000) {
    std::fprintf(stderr,
                 "usage: prism_bench_latency_control [ROWS 1..100000] [REPS 1..10000] "
                 "[CALLS >= 100]\n");
    return 2;
  }
  constexpr int kCols = 784;
  std::vector<float> a(static_cast<size_t>(rows) * kCols, 1e-3f), x(kCols, 1.0f), y(rows);
  std::vector<double> t;
  t.reserve(static_cast<size_t>(calls));
  int64_t prev = prism::profiler::now_ns();
  for (long it = 0; it < calls; ++it) {
    for (long rep = 0; rep < reps; ++rep) {
      for (long r = 0; r < rows; ++r) {
        float s = 0;
        const float* row = &a[static_cast<size_t>(r) * kCols];
#pragma omp simd reduction(+ : s)
        for (int k = 0; k < kCols; ++k) s += row[k] * x[k];
        y[static_cast<size_t>(r)] += s;
      }
    }
    x[static_cast<size_t>(it % kCols)] = 1.0f + 1e-3f * y[static_cast<size_t>(it % rows)];
    const int64_t now = prism::profiler::now_ns();  // one clock read per call, as prism bench
    t.push_back(static_cast<double>(now - prev));
    prev = now;
  }
  const prism::analysis::LatencyStats s = prism::analysis::latency_stats(t);
  std::printf("A: %ld x %d floats (%.0f kB), %ld pass%s per call, %zu calls\n", rows, kCols,
              static_cast<double>(a.size()) * 4 / 1e3, reps, reps == 1 ? "" : "es", s.n);
  std::printf("p50 %.2f us  p90 %.2f us  p99 %.2f us [%.2f, %.2f]  p99/p50 %.3f\n", s.p50 / 1e3,
              s.p90 / 1e3, s.p99 / 1e3, s.p99_ci.low / 1e3, s.p99_ci.high / 1e3, s.p99 / s.p50);
  std::printf("share of calls over 1.2 x p50, per 10,000 calls:");
  for (size_t i = 0; i < t.size(); i += 10'000) {
    const size_t end = std::min(t.size(), i + 10'000);
    const auto slow = std::count_if(t.begin() + static_cast<std::ptrdiff_t>(i),
                                    t.begin() + static_cast<std::ptrdiff_t>(end),
                                    [&s](double v) { return v > 1.2 * s.p50; });
    std::printf(" %.2f", static_cast<double>(slow) / static_cast<double>(end - i));
  }
  std::printf("\n");
  return 0;
}
