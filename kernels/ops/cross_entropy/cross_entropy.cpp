// cross_entropy of logits [rows, cols] against class indices (the math is in kernels/args.h
// beside CrossEntropyArgs): two forward variants and the one backward kernel.
//
// "composed" (tag naive): what cross_entropy = nll_loss(log_softmax(x)) does as two ops. A
// three-pass log_softmax writes every log-probability into an [rows, cols] buffer (the
// workspace the front end allocated, so the profile shows it), then the nll step picks one
// entry per row from it. Traffic: the logits read three times, rows x cols written and one
// entry per row read back: for a language model's [tokens, vocabulary] logits that buffer is
// as large as the logits themselves.
//
// "fused" (tag fused): per row, the online log-sum-exp (kernels/cpu/online_softmax.h: max and
// sum of exponentials in one read, the sum rescaled when the max grows) and the target's logit,
// read directly:
//   loss_i = lse_i - x_i,target_i = (m_i - x_i,target_i) + log(s_i)
// One read of the logits, nothing written but rows numbers (the lse that backward needs), no
// [rows, cols] buffer at all.
//
// Backward ("fused", the only variant), one pass from the logits and the saved lse:
//   dlogits_ij = g scale (exp(x_ij - lse_i) - [j == target_i])
// where exp(x_ij - lse_i) is softmax(x)_ij and g scale is the loss's gradient times 1/rows for
// the mean. lse is kept in float64 and subtracted in two float parts (hi + lo), so large logits
// lose nothing there.
//
// Cost (docs/COSTS.md): forward 4 FLOPs per logit + 3 per row, backward 3 per logit + 1 per
// row. Fused is the fastest measured, by an order of magnitude against composed and several
// times against the old nn chain of ops, also at a GPT-2 vocabulary (docs/PERFORMANCE.md,
// "Fused vs unfused (CPU)").
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/online_softmax.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/cross_entropy/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T>
void cross_entropy_composed(const CrossEntropyArgs<T>& a) {
  // Step 1, log_softmax into the [rows, cols] workspace: max, sum of exponentials, write.
  T* logp = a.workspace;
  for (int64_t r = 0; r < a.rows; ++r) {
    const T* x = a.logits + r * a.row_stride;
    T m = x[0];
    for (int64_t j = 1; j < a.cols; ++j) m = std::max(m, x[j * a.col_stride]);
    double sum = 0;
    for (int64_t j = 0; j < a.cols; ++j)
      sum += std::exp(static_cast<double>(x[j * a.col_stride] - m));
    const T log_sum = static_cast<T>(std::log(sum));
    for (int64_t j = 0; j < a.cols; ++j) logp[r * a.cols + j] = (x[j * a.col_stride] - m) - log_sum;
    if (a.lse) a.lse[r] = static_cast<double>(m) + std::log(sum);
  }
  // Step 2, nll: minus the picked log-probabilities, reduced.
  double total = 0;
  for (int64_t r = 0; r < a.rows; ++r) total -= logp[r * a.cols + a.target[r * a.target_stride]];
  a.loss[0] = static_cast<T>(total * a.scale);
}

// Row r's loss from its max m and sum of exponentials s (both paths below end here):
//   loss_r = (m - x_r,target) + log(s), and lse_r = m + log(s) kept for backward.
template <class T>
double row_loss(const CrossEntropyArgs<T>& a, int64_t r, T max, double sum) {
  const double log_s = std::log(sum);
  if (a.lse) a.lse[r] = static_cast<double>(max) + log_s;
  const T picked = a.logits[r * a.row_stride + a.target[r * a.target_stride] * a.col_stride];
  return (static_cast<double>(max) - static_cast<double>(picked)) + log_s;
}

template <class T, bool kUnit>
double fused_row(const CrossEntropyArgs<T>& a, int64_t r) {
  const RowMaxSum<T> ms =
      online_max_sum<T, kUnit>(a.logits + r * a.row_stride, a.cols, a.col_stride);
  return row_loss(a, r, ms.max, ms.sum);
}

// Narrow rows (a classifier's [batch, 10] logits): the per-row loops above vectorise only rows
// of 32 elements or more (GCC's vector body plus its epilogue), and a shorter row runs scalar
// (the 64 x 10 logits of the MLP's step took longer than the composed variant). Instead a block
// of rows is handled as one flat array: each row's max, then x - max for the whole block into a
// 4 KB buffer, one vectorised exp over it, and each row's sum of its own entries. Same special
// values as online_max_sum: a row of -inf has max -inf and sum 0, a +inf or NaN makes the sum
// NaN. Measured (`prism lab cross_entropy --variants fused`, 1 thread): this path wins below 32
// columns and the online loops from 32 on (docs/PERFORMANCE.md, "Threads (2026-11-25)", "The
// narrow cross-entropy and what is left").
constexpr int64_t kNarrowCols = 31;
constexpr int64_t kNarrowBlock = 1024;  // elements per block: 4 KB of float32

template <class T>
double fused_narrow_rows(const CrossEntropyArgs<T>& a, int64_t r0, int64_t r1) {
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  T shifted[kNarrowBlock];
  T row_max[kNarrowBlock];
  const int64_t cols = a.cols, st = a.col_stride;
  const int64_t block_rows = kNarrowBlock / cols;
  double total = 0;
  for (int64_t b0 = r0; b0 < r1; b0 += block_rows) {
    const int64_t rows = std::min(block_rows, r1 - b0);
    for (int64_t i = 0; i < rows; ++i) {
      const T* x = a.logits + (b0 + i) * a.row_stride;
      T m = kNegInf;
      for (int64_t j = 0; j < cols; ++j) m = x[j * st] > m ? x[j * st] : m;
      row_max[i] = m;
      // A row of -inf adds nothing (exp(-inf) = 0), as in online_max_sum, not -inf - -inf.
      T* s = shifted + i * cols;
      for (int64_t j = 0; j < cols; ++j) s[j] = m == kNegInf ? kNegInf : x[j * st] - m;
    }
    const int64_t n = rows * cols;
#pragma omp simd
    for (int64_t k = 0; k < n; ++k) shifted[k] = kernel_exp(shifted[k]);
    for (int64_t i = 0; i < rows; ++i) {
      T sum = 0;
      for (int64_t j = 0; j < cols; ++j) sum += shifted[i * cols + j];
      total += row_loss(a, b0 + i, row_max[i], static_cast<double>(sum));
    }
  }
  return total;
}

template <class T>
void cross_entropy_fused(const CrossEntropyArgs<T>& a) {
  // Rows over the threads, the row losses summed per chunk and the chunks added in order
  // (kernels/cpu/parallel.h): the same total on any thread count.
  double total = 0;
  parallel_rows_summing(a.rows, a.cols, 1, &total, [&](int64_t r0, int64_t r1, double* acc) {
    if (a.cols <= kNarrowCols) {
      *acc += fused_narrow_rows(a, r0, r1);
      return;
    }
    for (int64_t r = r0; r < r1; ++r) {
      *acc += a.col_stride == 1 ? fused_row<T, true>(a, r) : fused_row<T, false>(a, r);
    }
  });
  a.loss[0] = static_cast<T>(total * a.scale);
}

template <class T, bool kUnit>
void backward_row(const CrossEntropyBackwardArgs<T>& a, int64_t r, T gs) {
  const int64_t st = kUnit ? 1 : a.col_stride;
  const T* x = a.logits + r * a.row_stride;
  T* d = a.dlogits + r * a.cols;
  // lse as hi + lo in T: x - hi is exact where it matters (x close to lse), and lo carries the
  // bits a single rounding of lse to T would drop.
  const T hi = static_cast<T>(a.lse[r]);
  const T lo = static_cast<T>(a.lse[r] - static_cast<double>(hi));
#pragma omp simd
  for (int64_t j = 0; j < a.cols; ++j) d[j] = gs * kernel_exp((x[j * st] - hi) - lo);
  d[a.target[r * a.target_stride]] -= gs;
}

template <class T>
void cross_entropy_backward_fused(const CrossEntropyBackwardArgs<T>& a) {
  const T gs = static_cast<T>(static_cast<double>(a.g[0]) * a.scale);
  parallel_for(a.rows, rows_per_chunk(a.cols), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      if (a.col_stride == 1) {
        backward_row<T, true>(a, r, gs);
      } else {
        backward_row<T, false>(a, r, gs);
      }
    }
  });
}

// The naive backward, as the formula reads: softmax from the saved lse, minus the one-hot, times
// g / N, one pass each over every row, in double. The fused kernel does it in one pass.
template <class T>
void cross_entropy_backward_naive(const CrossEntropyBackwardArgs<T>& a) {
  const double gs = static_cast<double>(a.g[0]) * a.scale;
  for (int64_t r = 0; r < a.rows; ++r) {
    const T* x = a.logits + r * a.row_stride;
    T* d = a.dlogits + r * a.cols;
    for (int64_t j = 0; j < a.cols; ++j) {
      d[j] = static_cast<T>(std::exp(static_cast<double>(x[j * a.col_stride]) - a.lse[r]));
    }
    d[a.target[r * a.target_stride]] -= T{1};
    for (int64_t j = 0; j < a.cols; ++j) d[j] = static_cast<T>(d[j] * gs);
  }
}

}  // namespace

void register_cross_entropy(Registry& r) {
  r.op("cross_entropy", Device::cpu)
      .add<CrossEntropyArgs>("composed", VariantTag::naive,
                             "log_softmax into a [rows, cols] buffer, then pick and reduce",
                             &cross_entropy_composed<float>, &cross_entropy_composed<double>);
  r.op("cross_entropy", Device::cpu)
      .add<CrossEntropyArgs>("fused", VariantTag::fused,
                             "online log-sum-exp and the target's logit per row, no buffer",
                             &cross_entropy_fused<float>, &cross_entropy_fused<double>);
  r.op("cross_entropy_backward", Device::cpu)
      .add<CrossEntropyBackwardArgs>(
          "fused", VariantTag::fused, "softmax minus one-hot from the saved lse, one pass",
          &cross_entropy_backward_fused<float>, &cross_entropy_backward_fused<double>);
  r.op("cross_entropy_backward", Device::cpu)
      .add<CrossEntropyBackwardArgs>(
          "naive", VariantTag::naive, "softmax, minus one-hot, times g / N: a pass each, double",
          &cross_entropy_backward_naive<float>, &cross_entropy_backward_naive<double>);
}
PRISM_CPU_KERNELS(170, register_cross_entropy);

}  // namespace prism::kernels::cpu
