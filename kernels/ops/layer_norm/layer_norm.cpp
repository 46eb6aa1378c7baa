// layer_norm over rows, two forward variants and the one backward kernel (the math is in
// kernels/args.h beside LayerNormArgs).
//
// "two_pass" (tag naive): the definition, three passes per row: the mean, then the variance as
// the mean of (x - mean)^2, then the normalised output. Sums in double.
//
// "one_pass" (tag fused): mean and variance in one read of the row, then the output: two
// passes. The tempting one-pass formula is var = E[x^2] - E[x]^2, and it is wrong in floating
// point: when the mean is large next to the spread, both terms are huge and nearly equal, and
// their difference keeps none of the digits that mattered. For float32 rows around 1000 with a
// standard deviation of 1, E[x^2] ~ 1e6 is held to about 0.06, so the "variance" comes out
// anywhere in about [-0.5, 2.5], even negative (then sqrt gives NaN);
// tests/tensor/norm_test.cpp shows it. Welford's update (1962) never forms those big terms:
//   count += 1;  d = x - mean;  mean += d / count;  M2 += d * (x - mean)
// so every quantity stays at the scale of the deviations, and var = M2 / count. It is run on
// 64 independent lanes (lane l takes elements l, l + 64, ...: four AVX-512 vectors of
// independent dependency chains, which the compiler vectorises). Chan, Golub and LeVeque's
// formula merges two partial results:
//   n = na + nb,  delta = mean_b - mean_a,
//   mean = mean_a + delta nb / n,  M2 = M2_a + M2_b + delta^2 na nb / n
// For the 64 lanes, which all hold the same count, it unrolls into the law of total variance
// (two short vectorised loops per row; the pairwise tree of 63 merges it replaced was slower,
// most on long rows: docs/PERFORMANCE.md, "Fused vs unfused (CPU)"). Elements past the last
// full block of 64 go through scalar Welford and are merged with the formula above.
//
// Backward ("fused", the only variant): dx, dweight and dbias in one kernel, two passes per
// row. With xhat = (x - mean) rstd and gw = g weight (differentiate y = xhat weight + bias,
// where xhat depends on x through the mean and rstd too):
//   dx = rstd (gw - mean(gw) - xhat mean(gw xhat)),  dweight = sum_rows g xhat,
//   dbias = sum_rows g
// Pass 1 reads x and g for the two row means (and adds into dweight and dbias); pass 2 writes
// dx. The composed LayerNorm of nn/ needed about ten ops and as many [rows, cols] buffers for
// the same gradient.
//
// Cost (docs/COSTS.md): forward 6 FLOPs per element (+1 weight, +1 bias), backward 9 (+1 with
// a weight, +2 for dweight, +1 for dbias). one_pass is the fastest measured on the CPU, several
// times two_pass and the old nn composition of ten ops (docs/PERFORMANCE.md, "Fused vs unfused
// (CPU)").
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/layer_norm/args.h"

namespace prism::kernels::cpu {
namespace {

// y_j = (x_j - mean) rstd weight_j + bias_j for one row; the branches sit outside the loops so
// each loop vectorises.
template <class T, bool kUnit>
void normalize_row(const T* x, int64_t n, int64_t stride, T mean, T rstd, const T* w, const T* b,
                   T* y) {
  const int64_t st = kUnit ? 1 : stride;
  if (w && b) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j * st] - mean) * rstd * w[j] + b[j];
  } else if (w) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j * st] - mean) * rstd * w[j];
  } else if (b) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j * st] - mean) * rstd + b[j];
  } else {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j * st] - mean) * rstd;
  }
}

// Mean and M2 (sum of squared deviations) of `count` values.
struct Moments {
  double count = 0, mean = 0, m2 = 0;
};

// Chan et al.: the moments of the union of two disjoint sets from the moments of each.
Moments merge(const Moments& a, const Moments& b) {
  if (a.count == 0) return b;
  if (b.count == 0) return a;
  Moments m;
  m.count = a.count + b.count;
  const double delta = b.mean - a.mean;
  m.mean = a.mean + delta * (b.count / m.count);
  m.m2 = a.m2 + b.m2 + delta * delta * (a.count * b.count / m.count);
  return m;
}

constexpr int kLanes = 64;

template <class T, bool kUnit>
Moments welford_row(const T* x, int64_t n, int64_t stride) {
  const int64_t st = kUnit ? 1 : stride;
  const int64_t blocks = n / kLanes;
  T mean[kLanes] = {}, m2[kLanes] = {};
  for (int64_t b = 0; b < blocks; ++b) {
    const T inv_count = T(1) / static_cast<T>(b + 1);
    const T* xb = x + b * kLanes * st;
#pragma omp simd
    for (int l = 0; l < kLanes; ++l) {
      const T v = xb[l * st];
      const T d = v - mean[l];
      mean[l] += d * inv_count;
      m2[l] += d * (v - mean[l]);
    }
  }
  Moments total;
  if (blocks > 0) {
    // Every lane holds `blocks` values, so the merge of all 64 is the law of total variance:
    // the mean of the lane means, and M2 = sum of the lanes' M2 + blocks * sum of the squared
    // distances of the lane means from it (Chan's formula, unrolled for equal counts).
    double mean_sum = 0;
    for (int l = 0; l < kLanes; ++l) mean_sum += static_cast<double>(mean[l]);
    const double mu = mean_sum / kLanes;
    double m2_sum = 0, spread = 0;
    for (int l = 0; l < kLanes; ++l) {
      const double d = static_cast<double>(mean[l]) - mu;
      m2_sum += static_cast<double>(m2[l]);
      spread += d * d;
    }
    const double count = static_cast<double>(blocks);
    total = {count * kLanes, mu, m2_sum + count * spread};
  }
  Moments tail;
  for (int64_t j = blocks * kLanes; j < n; ++j) {
    const double v = static_cast<double>(x[j * st]);
    tail.count += 1;
    const double d = v - tail.mean;
    tail.mean += d / tail.count;
    tail.m2 += d * (v - tail.mean);
  }
  return merge(total, tail);
}

template <class T, bool kUnit>
void one_pass_row(const LayerNormArgs<T>& a, const T* x, T* y, int64_t r) {
  const Moments m = welford_row<T, kUnit>(x, a.cols, a.col_stride);
  const double var = m.m2 / static_cast<double>(a.cols);
  const T mean = static_cast<T>(m.mean);
  const T rstd = static_cast<T>(1.0 / std::sqrt(var + a.eps));
  normalize_row<T, kUnit>(x, a.cols, a.col_stride, mean, rstd, a.weight, a.bias, y);
  if (a.mean) a.mean[r] = mean;
  if (a.rstd) a.rstd[r] = rstd;
}

template <class T>
void layer_norm_one_pass(const LayerNormArgs<T>& a) {
  parallel_for(a.rows, rows_per_chunk(a.cols), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* x = a.x + r * a.row_stride;
      T* y = a.out + r * a.cols;
      if (a.col_stride == 1) {
        one_pass_row<T, true>(a, x, y, r);
      } else {
        one_pass_row<T, false>(a, x, y, r);
      }
    }
  });
}

template <class T>
void layer_norm_two_pass(const LayerNormArgs<T>& a) {
  const double n = static_cast<double>(a.cols);
  for (int64_t r = 0; r < a.rows; ++r) {
    const T* x = a.x + r * a.row_stride;
    double sum = 0;
    for (int64_t j = 0; j < a.cols; ++j) sum += x[j * a.col_stride];
    const double mean = sum / n;
    double sq = 0;
    for (int64_t j = 0; j < a.cols; ++j) {
      const double d = x[j * a.col_stride] - mean;
      sq += d * d;
    }
    const T mean_t = static_cast<T>(mean);
    const T rstd = static_cast<T>(1.0 / std::sqrt(sq / n + a.eps));
    normalize_row<T, false>(x, a.cols, a.col_stride, mean_t, rstd, a.weight, a.bias,
                            a.out + r * a.cols);
    if (a.mean) a.mean[r] = mean_t;
    if (a.rstd) a.rstd[r] = rstd;
  }
}

template <class T, bool kUnit>
void backward_row(const LayerNormBackwardArgs<T>& a, int64_t r) {
  const int64_t st = kUnit ? 1 : a.col_stride;
  const int64_t n = a.cols;
  const T* x = a.x + r * a.row_stride;
  const T* g = a.g + r * n;
  const T* w = a.weight;
  const T mean = a.mean[r], rstd = a.rstd[r];
  // Pass 1: the row sums of gw and gw * xhat; the column sums of g * xhat and g.
  T sum_gw = 0, sum_gwx = 0;
#pragma omp simd reduction(+ : sum_gw, sum_gwx)
  for (int64_t j = 0; j < n; ++j) {
    const T xhat = (x[j * st] - mean) * rstd;
    const T gw = w ? g[j] * w[j] : g[j];
    sum_gw += gw;
    sum_gwx += gw * xhat;
  }
  if (a.dweight) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) a.dweight[j] += g[j] * ((x[j * st] - mean) * rstd);
  }
  if (a.dbias) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) a.dbias[j] += g[j];
  }
  if (!a.dx) return;
  // Pass 2: dx = rstd (gw - mean(gw) - xhat mean(gw xhat)).
  const T mean_gw = sum_gw / static_cast<T>(n), mean_gwx = sum_gwx / static_cast<T>(n);
  T* dx = a.dx + r * n;
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) {
    const T xhat = (x[j * st] - mean) * rstd;
    const T gw = w ? g[j] * w[j] : g[j];
    dx[j] = rstd * (gw - mean_gw - xhat * mean_gwx);
  }
}

template <class T>
void layer_norm_backward_fused(const LayerNormBackwardArgs<T>& a) {
  // Rows over the threads; dweight and dbias (side by side in `sums`) are summed per chunk of
  // rows and the chunks added in order (kernels/cpu/parallel.h).
  const int64_t n = a.cols;
  std::vector<T> sums(static_cast<size_t>(2 * n));
  parallel_rows_summing(a.rows, n, 2 * n, sums.data(), [&](int64_t r0, int64_t r1, T* acc) {
    LayerNormBackwardArgs<T> part = a;
    if (a.dweight) part.dweight = acc;
    if (a.dbias) part.dbias = acc + n;
    for (int64_t r = r0; r < r1; ++r) {
      if (a.col_stride == 1) {
        backward_row<T, true>(part, r);
      } else {
        backward_row<T, false>(part, r);
      }
    }
  });
  if (a.dweight) std::copy(sums.begin(), sums.begin() + n, a.dweight);
  if (a.dbias) std::copy(sums.begin() + n, sums.end(), a.dbias);
}

// The naive backward: each gradient straight from its formula (kernels/args.h), one after the
// other, in double: dweight and dbias as column sums over every row, then dx row by row with
// its two row means. Three reads of g and two of x where the fused kernel reads each once per
// row; the lesson's starting point and the baseline the fused one is checked against.
template <class T>
void layer_norm_backward_naive(const LayerNormBackwardArgs<T>& a) {
  auto xhat = [&](int64_t r, int64_t j) {
    const double x = a.x[r * a.row_stride + j * a.col_stride];
    return (x - a.mean[r]) * static_cast<double>(a.rstd[r]);
  };
  auto g = [&](int64_t r, int64_t j) { return static_cast<double>(a.g[r * a.cols + j]); };
  auto w = [&](int64_t j) { return a.weight ? static_cast<double>(a.weight[j]) : 1.0; };
  for (int64_t j = 0; a.dweight && j < a.cols; ++j) {
    double s = 0;
    for (int64_t r = 0; r < a.rows; ++r) s += g(r, j) * xhat(r, j);
    a.dweight[j] = static_cast<T>(s);
  }
  for (int64_t j = 0; a.dbias && j < a.cols; ++j) {
    double s = 0;
    for (int64_t r = 0; r < a.rows; ++r) s += g(r, j);
    a.dbias[j] = static_cast<T>(s);
  }
  for (int64_t r = 0; a.dx && r < a.rows; ++r) {
    double sum_gw = 0, sum_gwx = 0;
    for (int64_t j = 0; j < a.cols; ++j) {
      sum_gw += g(r, j) * w(j);
      sum_gwx += g(r, j) * w(j) * xhat(r, j);
    }
    const double mean_gw = sum_gw / a.cols, mean_gwx = sum_gwx / a.cols;
    for (int64_t j = 0; j < a.cols; ++j) {
      const double gw = g(r, j) * w(j);
      a.dx[r * a.cols + j] = static_cast<T>(a.rstd[r] * (gw - mean_gw - xhat(r, j) * mean_gwx));
    }
  }
}

}  // namespace

void register_layer_norm(Registry& r) {
  r.op("layer_norm", Device::cpu)
      .add<LayerNormArgs>("two_pass", VariantTag::naive,
                          "three passes per row: mean, variance, normalise (double sums)",
                          &layer_norm_two_pass<float>, &layer_norm_two_pass<double>);
  r.op("layer_norm", Device::cpu)
      .add<LayerNormArgs>("one_pass", VariantTag::fused,
                          "two passes per row: Welford mean+variance on 64 lanes, normalise",
                          &layer_norm_one_pass<float>, &layer_norm_one_pass<double>);
  r.op("layer_norm_backward", Device::cpu)
      .add<LayerNormBackwardArgs>(
          "fused", VariantTag::fused, "dx, dweight and dbias in one kernel, two passes per row",
          &layer_norm_backward_fused<float>, &layer_norm_backward_fused<double>);
  r.op("layer_norm_backward", Device::cpu)
      .add<LayerNormBackwardArgs>(
          "naive", VariantTag::naive, "each gradient from its formula in turn, double sums",
          &layer_norm_backward_naive<float>, &layer_norm_backward_naive<double>);
}
PRISM_CPU_KERNELS(140, register_layer_norm);

}  // namespace prism::kernels::cpu
