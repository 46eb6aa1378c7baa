// rope and rope_backward, "optimized": the same rotation (kernels/ops/rope/op.h), with the
// angles' cosines and sines in a table, and rows over the threads.
//
// Every head of every batch element turns its row at position p by the same angles, so the
// t x d/2 sines and cosines are computed once a call (in double, stored in T), not once per
// head: the naive variant computes them B H times over. And a GPT block calls rope on q and on
// k, and every block at the same positions, so the table is kept (per thread, per element
// type) and reused while the positions, d and base stay the same: in a training step the first
// call fills it and the other 2L - 1 read it. Then each row is two multiply-adds per output,
// over contiguous halves the compiler vectorises, chunks of rows on every thread.
#include <cmath>
#include <vector>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/rope/op.h"

namespace prism::kernels::cpu {
namespace {

// cos and sin of (pos0 + s) theta_i for s < t, i < h, row-major [t, h].
template <class T>
struct AngleTable {
  int64_t pos0 = -1, t = 0, d = 0;
  double base = 0;
  std::vector<T> cos, sin;
};

template <class T>
const AngleTable<T>& angle_table(const RopeArgs<T>& a) {
  thread_local AngleTable<T> table;
  if (table.pos0 == a.pos0 && table.t == a.t && table.d == a.d && table.base == a.base) {
    return table;
  }
  const int64_t h = a.d / 2;
  table.cos.resize(static_cast<size_t>(a.t * h));
  table.sin.resize(static_cast<size_t>(a.t * h));
  std::vector<double> theta(static_cast<size_t>(h));
  for (int64_t i = 0; i < h; ++i) theta[i] = std::pow(a.base, -2.0 * static_cast<double>(i) / a.d);
  for (int64_t s = 0; s < a.t; ++s) {
    const double p = static_cast<double>(a.pos0 + s);
    for (int64_t i = 0; i < h; ++i) {
      table.cos[s * h + i] = static_cast<T>(std::cos(p * theta[i]));
      table.sin[s * h + i] = static_cast<T>(std::sin(p * theta[i]));
    }
  }
  table.pos0 = a.pos0, table.t = a.t, table.d = a.d, table.base = a.base;
  return table;
}

template <class T, int kSign>
void rope_optimized(const RopeArgs<T>& a) {
  const int64_t rows = a.outer0 * a.outer1 * a.t, h = a.d / 2;
  if (rows == 0 || h == 0) return;
  const AngleTable<T>& table = angle_table(a);
  const T* cos_table = table.cos.data();
  const T* sin_table = table.sin.data();
  parallel_for(rows, rows_per_chunk(a.d), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t s = r % a.t, hd = (r / a.t) % a.outer1, b = r / (a.t * a.outer1);
      const T* x = a.x + b * a.x_s0 + hd * a.x_s1 + s * a.x_st;
      T* y = a.y + r * a.d;
      const T* c = cos_table + s * h;
      const T* sn = sin_table + s * h;
#pragma omp simd
      for (int64_t i = 0; i < h; ++i) {
        const T x0 = x[i], x1 = x[i + h], si = kSign * sn[i];
        y[i] = x0 * c[i] - x1 * si;
        y[i + h] = x1 * c[i] + x0 * si;
      }
    }
  });
}

}  // namespace

void register_rope_optimized(Registry& r) {
  r.op(ops::rope.name, Device::cpu)
      .add<RopeArgs>("optimized", VariantTag::optimized,
                     "a cos/sin table shared by every head (kept across calls), SIMD rows, threads",
                     &rope_optimized<float, 1>, &rope_optimized<double, 1>);
  r.op(ops::rope_backward.name, Device::cpu)
      .add<RopeArgs>("optimized", VariantTag::optimized,
                     "the forward's table and rows, turned back", &rope_optimized<float, -1>,
                     &rope_optimized<double, -1>);
}
PRISM_CPU_KERNELS(161, register_rope_optimized);

}  // namespace prism::kernels::cpu
