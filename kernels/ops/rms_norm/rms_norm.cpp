// rms_norm over rows, forward and backward, each with a naive and a fused variant (the math is
// in kernels/args.h beside RmsNormArgs).
//
// RMSNorm is layer_norm without the mean: out = x rstd weight with rstd = 1 / sqrt(mean(x^2) +
// eps). No subtraction, so none of layer_norm's cancellation (its Welford lanes): a sum of
// squares of any size is accurate in double, and only the order of the sum separates variants.
//
// "naive" (tag naive): the formula as the ops a framework without fusion would run, each a pass
// over memory, the output buffer holding the steps: out = x^2; each row's mean of out in
// double, rstd = 1 / sqrt(mean + eps); out = x rstd; out *= weight. Four passes over [rows,
// cols] where one suffices; the lesson's starting point and the baseline of the others.
//
// "fused" (tag fused): per row, the sum of squares (8 double lanes, vectorised) and the scaled
// output while the row is still in L1: one pass over memory, reading x twice from cache.
//
// Backward, with xhat = x rstd and gw = g weight:
//   dx = rstd (gw - xhat mean(gw xhat)),  dweight = sum_rows g xhat
// "naive": each gradient from its formula in turn, in double (dweight as column sums over every
// row, then dx row by row). "fused": one kernel, two passes per row: pass 1 forms mean(gw xhat)
// and adds g xhat into dweight, pass 2 writes dx.
//
// Cost (docs/COSTS.md): forward 3 FLOPs per element (+1 with a weight), backward 6 (+1 with a
// weight, +2 for dweight). Fused is the faster at every size measured, by an order of magnitude
// in backward, where the naive dweight walks columns, a stride of D per element
// (docs/PERFORMANCE.md, "RMSNorm and SwiGLU (CPU) (2026-11-25)").
#include <cmath>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/rms_norm/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T>
void rms_norm_naive(const RmsNormArgs<T>& a) {
  const int64_t n = a.cols;
  auto x = [&](int64_t r, int64_t j) { return a.x[r * a.row_stride + j * a.col_stride]; };
  for (int64_t r = 0; r < a.rows; ++r) {  // out = x^2
    for (int64_t j = 0; j < n; ++j) a.out[r * n + j] = x(r, j) * x(r, j);
  }
  for (int64_t r = 0; r < a.rows; ++r) {  // rstd = 1 / sqrt(mean(x^2) + eps), then out = x rstd
    double s = 0;
    for (int64_t j = 0; j < n; ++j) s += a.out[r * n + j];
    const T rstd = static_cast<T>(1 / std::sqrt(s / static_cast<double>(n) + a.eps));
    if (a.rstd) a.rstd[r] = rstd;
    for (int64_t j = 0; j < n; ++j) a.out[r * n + j] = x(r, j) * rstd;
  }
  if (!a.weight) return;
  for (int64_t r = 0; r < a.rows; ++r) {  // out *= weight
    for (int64_t j = 0; j < n; ++j) a.out[r * n + j] *= a.weight[j];
  }
}

template <class T, bool kUnit>
void fused_row(const RmsNormArgs<T>& a, int64_t r) {
  const int64_t st = kUnit ? 1 : a.col_stride;
  const T* x = a.x + r * a.row_stride;
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t j = 0; j < a.cols; ++j) {
    const double v = x[j * st];
    s += v * v;
  }
  const T rstd = static_cast<T>(1 / std::sqrt(s / static_cast<double>(a.cols) + a.eps));
  if (a.rstd) a.rstd[r] = rstd;
  T* y = a.out + r * a.cols;
  if (a.weight) {
#pragma omp simd
    for (int64_t j = 0; j < a.cols; ++j) y[j] = x[j * st] * rstd * a.weight[j];
  } else {
#pragma omp simd
    for (int64_t j = 0; j < a.cols; ++j) y[j] = x[j * st] * rstd;
  }
}

template <class T>
void rms_norm_fused(const RmsNormArgs<T>& a) {
  parallel_for(a.rows, rows_per_chunk(a.cols), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      if (a.col_stride == 1) {
        fused_row<T, true>(a, r);
      } else {
        fused_row<T, false>(a, r);
      }
    }
  });
}

template <class T>
void rms_norm_backward_naive(const RmsNormBackwardArgs<T>& a) {
  auto xhat = [&](int64_t r, int64_t j) {
    return static_cast<double>(a.x[r * a.row_stride + j * a.col_stride]) * a.rstd[r];
  };
  auto g = [&](int64_t r, int64_t j) { return static_cast<double>(a.g[r * a.cols + j]); };
  auto w = [&](int64_t j) { return a.weight ? static_cast<double>(a.weight[j]) : 1.0; };
  for (int64_t j = 0; a.dweight && j < a.cols; ++j) {
    double s = 0;
    for (int64_t r = 0; r < a.rows; ++r) s += g(r, j) * xhat(r, j);
    a.dweight[j] = static_cast<T>(s);
  }
  for (int64_t r = 0; a.dx && r < a.rows; ++r) {
    double s = 0;
    for (int64_t j = 0; j < a.cols; ++j) s += g(r, j) * w(j) * xhat(r, j);
    const double mean_gwx = s / static_cast<double>(a.cols);
    for (int64_t j = 0; j < a.cols; ++j) {
      a.dx[r * a.cols + j] = static_cast<T>(a.rstd[r] * (g(r, j) * w(j) - xhat(r, j) * mean_gwx));
    }
  }
}

template <class T, bool kUnit>
void backward_row(const RmsNormBackwardArgs<T>& a, int64_t r) {
  const int64_t st = kUnit ? 1 : a.col_stride;
  const T* x = a.x + r * a.row_stride;
  const T* g = a.g + r * a.cols;
  const T* w = a.weight;
  const T rstd = a.rstd[r];
  // Pass 1: the row sum of gw xhat (in double), and g xhat into dweight.
  double sum_gwx = 0;
#pragma omp simd reduction(+ : sum_gwx)
  for (int64_t j = 0; j < a.cols; ++j) {
    const T gw = w ? g[j] * w[j] : g[j];
    sum_gwx += static_cast<double>(gw) * (x[j * st] * rstd);
  }
  if (a.dweight) {
#pragma omp simd
    for (int64_t j = 0; j < a.cols; ++j) a.dweight[j] += g[j] * (x[j * st] * rstd);
  }
  if (!a.dx) return;
  // Pass 2: dx = rstd (gw - xhat mean(gw xhat)).
  const T mean_gwx = static_cast<T>(sum_gwx / static_cast<double>(a.cols));
  T* dx = a.dx + r * a.cols;
#pragma omp simd
  for (int64_t j = 0; j < a.cols; ++j) {
    const T gw = w ? g[j] * w[j] : g[j];
    dx[j] = rstd * (gw - (x[j * st] * rstd) * mean_gwx);
  }
}

template <class T>
void rms_norm_backward_fused(const RmsNormBackwardArgs<T>& a) {
  // Rows over the threads; dweight summed per chunk of rows, the chunks added in order
  // (kernels/cpu/parallel.h). Without a weight there is nothing to sum.
  auto rows = [&](int64_t r0, int64_t r1, T* acc) {
    RmsNormBackwardArgs<T> part = a;
    part.dweight = acc;
    for (int64_t r = r0; r < r1; ++r) {
      if (a.col_stride == 1) {
        backward_row<T, true>(part, r);
      } else {
        backward_row<T, false>(part, r);
      }
    }
  };
  if (a.dweight) {
    parallel_rows_summing(a.rows, a.cols, a.cols, a.dweight, rows);
  } else {
    parallel_for(a.rows, rows_per_chunk(a.cols),
                 [&](int64_t r0, int64_t r1) { rows(r0, r1, nullptr); });
  }
}

}  // namespace

void register_rms_norm(Registry& r) {
  r.op("rms_norm", Device::cpu)
      .add<RmsNormArgs>("fused", VariantTag::fused,
                        "sum of squares and scaling per row while it is in L1: one pass",
                        &rms_norm_fused<float>, &rms_norm_fused<double>);
  r.op("rms_norm", Device::cpu)
      .add<RmsNormArgs>("naive", VariantTag::naive,
                        "x^2, row means, x rstd, x weight: a pass over memory each",
                        &rms_norm_naive<float>, &rms_norm_naive<double>);
  r.op("rms_norm_backward", Device::cpu)
      .add<RmsNormBackwardArgs>("fused", VariantTag::fused,
                                "dx and dweight in one kernel, two passes per row",
                                &rms_norm_backward_fused<float>, &rms_norm_backward_fused<double>);
  r.op("rms_norm_backward", Device::cpu)
      .add<RmsNormBackwardArgs>("naive", VariantTag::naive,
                                "each gradient from its formula in turn, double sums",
                                &rms_norm_backward_naive<float>, &rms_norm_backward_naive<double>);
}
PRISM_CPU_KERNELS(150, register_rms_norm);

}  // namespace prism::kernels::cpu
