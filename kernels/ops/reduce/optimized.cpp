// sum and mean, optimized variant: the naive kernel's double accumulator, vectorized.
//
// Why. The naive loop keeps one double running sum: every add waits for the previous one
// (4 cycles of latency on this core), so a row of floats streams at ~1 element per 4 cycles,
// far below memory bandwidth. Eigen's reference over a Map with run-time strides does not
// vectorize either (docs/PERFORMANCE.md, "Open issues found by these benchmarks"). A
// convolution's bias gradient (sum of dy over N, H, W) was a noticeable share of a LeNet
// training step (measured: docs/PERFORMANCE.md, "sum and mean: vectorized double
// accumulation").
//
// How. Three layouts, chosen per call from the strides of the [rows, cols] view:
//   rows contiguous (col_stride 1):  kLanes independent double accumulators per row, which
//     the compiler keeps in four zmm registers (8 doubles each), converting 8 floats at a
//     time; the lanes are added pairwise at the end;
//   reduce down columns (row_stride 1, e.g. sum over dim 0 of [N, C]): sweep the column index
//     in the outer loop and add a whole contiguous line of x into a line of double partial
//     sums (the output rows), which vectorizes across outputs;
//   anything else: the naive loop.
// Summation order differs from the naive kernel (lanes, then a pairwise fold), so results
// agree to rounding of the double sums, not bit for bit; the accuracy is the same or better
// (shorter dependent chains).
// Threads (kernels/cpu/parallel.h): rows, pieces of long rows, or chunks of outputs go to the
// threads, in fixed chunks with partials added in order: the same bits on any thread count.
// Cost: the same as naive: (cols - 1) adds per output (+ 1 divide for mean).
#include <algorithm>
#include <vector>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/reduce/naive.h"
#include "kernels/ops/reduce/args.h"

namespace prism::kernels::cpu {
namespace {

constexpr int kLanes = 32;  // 4 zmm registers of doubles: enough chains to hide add latency

template <class T>
double sum_contiguous(const T* x, int64_t n) {
  double lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int k = 0; k < kLanes; ++k) lane[k] += static_cast<double>(x[i + k]);
  }
  for (int64_t k = 0; i < n; ++i, ++k) lane[k] += static_cast<double>(x[i]);
  for (int width = kLanes / 2; width > 0; width /= 2) {  // pairwise fold of the lanes
    for (int k = 0; k < width; ++k) lane[k] += lane[k + width];
  }
  return lane[0];
}

// One contiguous row of any length: the sum of its kRowChunk-element pieces, each summed by
// sum_contiguous, added in order. The pieces are fixed by the length alone, so a long row gives
// the same bits whether its pieces ran on one thread or on several.
constexpr int64_t kRowChunk = 32768;

template <class T>
void sum_rows(const ReduceArgs<T>& a) {
  if (a.cols <= kRowChunk) {  // short rows: whole rows over the threads
    parallel_for(a.rows, rows_per_chunk(a.cols), [&](int64_t r0, int64_t r1) {
      for (int64_t o = r0; o < r1; ++o) {
        a.out[o] = static_cast<T>(sum_contiguous(a.x + o * a.row_stride, a.cols));
      }
    });
    return;
  }
  // Long rows (a whole-tensor sum is one row): every piece of every row over the threads, one
  // partial each, then each row's partials in order.
  const int64_t pieces = chunk_count(a.cols, kRowChunk);
  std::vector<double> partial(static_cast<size_t>(a.rows * pieces));
  parallel_chunks(a.rows * pieces, 1, [&](int64_t i, int64_t, int64_t) {
    const int64_t o = i / pieces, begin = (i % pieces) * kRowChunk;
    partial[static_cast<size_t>(i)] =
        sum_contiguous(a.x + o * a.row_stride + begin, std::min(kRowChunk, a.cols - begin));
  });
  for (int64_t o = 0; o < a.rows; ++o) {
    double s = 0;
    for (int64_t p = 0; p < pieces; ++p) s += partial[static_cast<size_t>(o * pieces + p)];
    a.out[o] = static_cast<T>(s);
  }
}

// Sums down columns (row_stride 1): each chunk of outputs sweeps every column, adding a
// contiguous line of x into its double partial sums, which vectorises across outputs. Outputs
// are split over the threads, each summed in column order: the same bits on any count.
template <class T>
void sum_columns(const ReduceArgs<T>& a) {
  const int64_t outputs = std::max<int64_t>(256, rows_per_chunk(a.cols));  // whole vectors
  parallel_for(a.rows, outputs, [&](int64_t o0, int64_t o1) {
    std::vector<double> acc(static_cast<size_t>(o1 - o0), 0.0);
    for (int64_t i = 0; i < a.cols; ++i) {
      const T* line = a.x + i * a.col_stride + o0;  // x[o, i] for o in [o0, o1)
      for (int64_t o = 0; o < o1 - o0; ++o) acc[static_cast<size_t>(o)] += line[o];
    }
    for (int64_t o = o0; o < o1; ++o) a.out[o] = static_cast<T>(acc[static_cast<size_t>(o - o0)]);
  });
}

template <class T>
void sum_optimized(const ReduceArgs<T>& a) {
  if (a.col_stride == 1 || a.cols <= 1) return sum_rows(a);
  if (a.row_stride == 1) return sum_columns(a);
  sum_naive(a);  // both strided: nothing to vectorize along
}

template <class T>
void mean_optimized(const ReduceArgs<T>& a) {
  sum_optimized(a);
  for (int64_t o = 0; o < a.rows; ++o) a.out[o] /= static_cast<T>(a.cols);
}

}  // namespace

void register_reduce_optimized(Registry& r) {
  r.op("sum", Device::cpu)
      .add<ReduceArgs>("optimized", VariantTag::optimized,
                       "32 double lanes per contiguous row; column sums vectorized across outputs",
                       &sum_optimized<float>, &sum_optimized<double>);
  r.op("mean", Device::cpu)
      .add<ReduceArgs>("optimized", VariantTag::optimized,
                       "32 double lanes per contiguous row; column sums vectorized across outputs",
                       &mean_optimized<float>, &mean_optimized<double>);
}
PRISM_CPU_KERNELS(50, register_reduce_optimized);

}  // namespace prism::kernels::cpu
