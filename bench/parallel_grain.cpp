// Where a second thread starts to pay: the figures behind kernels/cpu/parallel.h's grain sizes.
//
//   ./build/prism_bench_parallel_grain [--reps N]
//
// 1. The cost of an OpenMP parallel region on this machine: an empty region at 2 threads (fork,
//    barrier, join), median over many entries.
// 2. For each op class, a body like its kernel's run on n items as ONE chunk on one thread and
//    as TWO chunks on two threads (parallel_chunks with chunk = n / 2), interleaved rep by rep
//    (1, 2, 1, 2, ...) so both see the same machine; the median time of each and their ratio.
//    The crossover is the smallest n from which 2 threads are faster at every larger size.
//    Chunk sizes in parallel.h are these crossovers rounded up to a power of two.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernels/cpu/fast_exp.h"
#include "kernels/cpu/fast_math.h"
#include "kernels/cpu/parallel.h"

namespace {

using Clock = std::chrono::steady_clock;
using prism::kernels::cpu::parallel_for;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// One op class: a body over items [i0, i1) of a problem of n items.
struct OpClass {
  const char* name;
  const char* item;
  std::function<void(int64_t n, int64_t i0, int64_t i1)> body;
};

std::vector<float> g_x, g_y, g_z;

std::vector<OpClass> op_classes() {
  return {
      {"elementwise add", "elements",
       [](int64_t, int64_t i0, int64_t i1) {
         const float *x = g_x.data(), *y = g_y.data();
         float* z = g_z.data();
#pragma omp simd
         for (int64_t i = i0; i < i1; ++i) z[i] = x[i] + y[i];
       }},
      {"gelu (vectorised tanh)", "elements",
       [](int64_t, int64_t i0, int64_t i1) {
         const float* x = g_x.data();
         float* z = g_z.data();
#pragma omp simd
         for (int64_t i = i0; i < i1; ++i) {
           const float v = x[i];
           z[i] = 0.5f * v *
                  (1 + prism::kernels::cpu::fast_tanh(0.79788456f * (v + 0.044715f * v * v * v)));
         }
       }},
      {"optimizer (an Adam step: p, g, m, v)", "parameters",
       [](int64_t n, int64_t i0, int64_t i1) {
         // g_x holds p then m, g_y holds g then v, so four streams as Adam's: p, g, m, v.
         float *p = g_x.data(), *m = g_x.data() + n, *v = g_y.data() + n;
         const float* g = g_y.data();
#pragma omp simd
         for (int64_t i = i0; i < i1; ++i) {
           const float mi = 0.9f * m[i] + 0.1f * g[i];
           const float vi = 0.999f * v[i] + 0.001f * g[i] * g[i];
           m[i] = mi;
           v[i] = vi;
           p[i] -= 0.001f * mi / (std::sqrt(vi) + 1e-8f);
         }
       }},
      {"optimizer (an SGD step with momentum: p, g, v)", "parameters",
       [](int64_t n, int64_t i0, int64_t i1) {
         float *p = g_x.data(), *v = g_x.data() + n;
         const float* g = g_y.data();
#pragma omp simd
         for (int64_t i = i0; i < i1; ++i) {
           const float vi = 0.9f * v[i] + g[i];
           v[i] = vi;
           p[i] -= 0.01f * vi;
         }
       }},
      {"row-wise (softmax of 128-wide rows)", "elements",
       [](int64_t, int64_t i0, int64_t i1) {
         const float* x = g_x.data();
         float* z = g_z.data();
         for (int64_t r = i0 / 128; r < i1 / 128; ++r) {
           float m = x[r * 128], s = 0;
           for (int j = 1; j < 128; ++j) m = std::max(m, x[r * 128 + j]);
#pragma omp simd reduction(+ : s)
           for (int j = 0; j < 128; ++j) {
             z[r * 128 + j] = prism::kernels::cpu::fast_exp(x[r * 128 + j] - m);
             s += z[r * 128 + j];
           }
           for (int j = 0; j < 128; ++j) z[r * 128 + j] /= s;
         }
       }},
  };
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 301;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::max(11, std::atoi(argv[i + 1]));
  }
  omp_set_num_threads(2);

  // 1. An empty parallel region.
  std::vector<double> region;
  for (int r = 0; r < 20 * reps; ++r) {
    const auto t0 = Clock::now();
#pragma omp parallel num_threads(2)
    { asm volatile("" ::: "memory"); }
    region.push_back(seconds_since(t0));
  }
  std::printf("empty parallel region at 2 threads: %.2f us (median of %zu)\n\n",
              median(region) * 1e6, region.size());

  // 2. Each op class, 1 thread vs 2, interleaved.
  const int64_t max_n = int64_t{1} << 20;
  g_x.assign(static_cast<size_t>(2 * max_n), 0.5f);  // two arrays' worth for the optimizer
  g_y.assign(static_cast<size_t>(2 * max_n), 0.25f);
  g_z.assign(static_cast<size_t>(max_n), 0.0f);
  for (size_t i = 0; i < g_x.size(); ++i) g_x[i] = std::sin(static_cast<float>(i)) * 3;
  for (size_t i = 0; i < g_y.size(); ++i) g_y[i] = std::abs(std::cos(static_cast<float>(i)));
  for (const OpClass& op : op_classes()) {
    std::printf("%s\n  %10s %12s %12s %8s\n", op.name, op.item, "1 thread us", "2 threads us",
                "2 / 1");
    int64_t crossover = -1;
    for (int64_t n = 1024; n <= max_n; n *= 2) {
      std::vector<double> one, two;
      for (int r = 0; r < reps; ++r) {
        auto t0 = Clock::now();
        op.body(n, 0, n);
        one.push_back(seconds_since(t0));
        t0 = Clock::now();
        parallel_for(n, n / 2, [&](int64_t i0, int64_t i1) { op.body(n, i0, i1); });
        two.push_back(seconds_since(t0));
      }
      const double m1 = median(one), m2 = median(two);
      std::printf("  %10lld %12.2f %12.2f %8.2f\n", static_cast<long long>(n), m1 * 1e6, m2 * 1e6,
                  m2 / m1);
      if (m2 < m1 && crossover < 0) crossover = n;
      if (m2 >= m1) crossover = -1;
    }
    std::printf("  crossover: %lld %s\n\n", static_cast<long long>(crossover), op.item);
  }
  return 0;
}
