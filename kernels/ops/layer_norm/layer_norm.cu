// layer_norm over the rows of a 2-D strided view [rows, cols] on the GPU: two forward variants
// and the one backward (the math is in kernels/args.h beside LayerNormArgs). One row group per
// row, a warp for rows up to 1024 elements and a block of 256 beyond
// (kernels/cuda/row_reduce.cuh).
//
// "two_pass" (tag naive): the definition, three reads of the row: the mean (a double sum), the
// variance as the mean of (x - mean)^2 (double), then the normalised output.
//
// "one_pass" (tag fused): mean and variance in one read, then the output: two reads. Not
// E[x^2] - E[x]^2, which cancels catastrophically when the mean is large next to the spread
// (kernels/ops/layer_norm/layer_norm.cpp shows how badly); each thread runs Welford's update over
// its elements,
//   count += 1;  d = x - mean;  mean += d / count;  M2 += d (x - mean)
// in double, and the threads' (count, mean, M2) meet up the group's tree through Chan, Golub and
// LeVeque's merge,
//   n = na + nb,  delta = mean_b - mean_a,
//   mean = mean_a + delta nb / n,  M2 = M2_a + M2_b + delta^2 na nb / n
// var = M2 / cols. The merge is not symmetric in a and b; group_reduce keeps a fixed order, so
// the result is the same on every run.
//
// Backward ("fused"; "naive" takes a thread per row for dx and per column for the sums), with
// xhat = (x - mean) rstd and gw = g weight:
//   dx = rstd (gw - mean(gw) - xhat mean(gw xhat))     per row: a group per row, two passes
//   dweight = sum_rows g xhat,  dbias = sum_rows g       per column
// The column sums run in a second kernel: thread j owns column j (so a warp reads 32
// neighbouring elements of a row at once) and sums a chunk of rows in double; a third, tiny
// kernel adds the chunks in chunk order. No float atomics: the same bits on every run.
//
// Cost (docs/COSTS.md): forward 6 FLOPs per element (+1 weight, +1 bias), backward 9 (+1 with
// a weight, +2 for dweight, +1 for dbias). `prism lab layer_norm --device cuda` (and
// layer_norm_backward) prints the figures: two_pass is faster than one_pass here (Welford's
// update costs a float64 division per element), and the fused backward far faster than naive
// (measured: docs/PERFORMANCE.md, "GPU (CUDA)").
#include <algorithm>
#include <cstdint>

#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/cuda/row_reduce.cuh"
#include "kernels/ops/elementwise/math.cuh"
#include "kernels/ops/layer_norm/args.h"

namespace prism::kernels::cuda {
namespace {

// y_j = (x_j - mean) rstd weight_j + bias_j for the group's elements of one row, in the CPU's
// order of operations.
template <class T, int kThreads>
__device__ void normalize_row(const LayerNormArgs<T>& a, const T* x, T* y, T mean, T rstd) {
  for (int64_t j = threadIdx.x; j < a.cols; j += kThreads) {
    T v = (x[j * a.col_stride] - mean) * rstd;
    if (a.weight) v = v * a.weight[j];
    if (a.bias) v = v + a.bias[j];
    y[j] = v;
  }
}

template <class T>
__device__ void save_stats(const LayerNormArgs<T>& a, int64_t r, T mean, T rstd) {
  if (threadIdx.x != 0) return;
  if (a.mean) a.mean[r] = mean;
  if (a.rstd) a.rstd[r] = rstd;
}

// ---- two_pass: mean, variance, output --------------------------------------------------------

template <class T, int kThreads>
__global__ void layer_norm_two_pass_rows(LayerNormArgs<T> a) {
  using Spread = RowSpread<kThreads>;
  const double n = static_cast<double>(a.cols);
  for (int64_t r = Spread::first_row(); r < a.rows; r += Spread::row_step()) {
    const T* x = a.x + r * a.row_stride;
    double sum = 0;
    for (int64_t j = threadIdx.x; j < a.cols; j += kThreads) sum += x[j * a.col_stride];
    const double mean = group_reduce<kThreads>(sum, SumOp{}) / n;
    double sq = 0;
    for (int64_t j = threadIdx.x; j < a.cols; j += kThreads) {
      const double d = x[j * a.col_stride] - mean;
      sq += d * d;
    }
    sq = group_reduce<kThreads>(sq, SumOp{});
    const T mean_t = static_cast<T>(mean);
    const T rstd = static_cast<T>(1.0 / math::dsqrt(sq / n + a.eps));
    normalize_row<T, kThreads>(a, x, a.out + r * a.cols, mean_t, rstd);
    save_stats(a, r, mean_t, rstd);
  }
}

// ---- one_pass: Welford per thread, Chan's merge up the tree ----------------------------------

struct Moments {
  double count, mean, m2;
};
__device__ Moments shfl_down(Moments a, int delta) {
  return {cuda::shfl_down(a.count, delta), cuda::shfl_down(a.mean, delta),
          cuda::shfl_down(a.m2, delta)};
}
__device__ Moments shfl_from(Moments a, int lane) {
  return {cuda::shfl_from(a.count, lane), cuda::shfl_from(a.mean, lane),
          cuda::shfl_from(a.m2, lane)};
}

struct ChanMerge {
  __device__ Moments operator()(Moments a, Moments b) const {
    if (a.count == 0) return b;
    if (b.count == 0) return a;
    Moments m;
    m.count = a.count + b.count;
    const double delta = b.mean - a.mean;
    m.mean = a.mean + delta * (b.count / m.count);
    m.m2 = a.m2 + b.m2 + delta * delta * (a.count * b.count / m.count);
    return m;
  }
};

template <class T, int kThreads>
__global__ void layer_norm_one_pass_rows(LayerNormArgs<T> a) {
  using Spread = RowSpread<kThreads>;
  for (int64_t r = Spread::first_row(); r < a.rows; r += Spread::row_step()) {
    const T* x = a.x + r * a.row_stride;
    Moments mo{0, 0, 0};
    for (int64_t j = threadIdx.x; j < a.cols; j += kThreads) {
      const double v = x[j * a.col_stride];
      mo.count += 1;
      const double d = v - mo.mean;
      mo.mean += d / mo.count;
      mo.m2 += d * (v - mo.mean);
    }
    mo = group_reduce<kThreads>(mo, ChanMerge{});
    const double var = mo.m2 / static_cast<double>(a.cols);
    const T mean = static_cast<T>(mo.mean);
    const T rstd = static_cast<T>(1.0 / math::dsqrt(var + a.eps));
    normalize_row<T, kThreads>(a, x, a.out + r * a.cols, mean, rstd);
    save_stats(a, r, mean, rstd);
  }
}

// ---- backward: dx per row --------------------------------------------------------------------

struct TwoSums {
  double gw, gwx;  // sum of gw, sum of gw * xhat
};
__device__ TwoSums shfl_down(TwoSums a, int delta) {
  return {cuda::shfl_down(a.gw, delta), cuda::shfl_down(a.gwx, delta)};
}
__device__ TwoSums shfl_from(TwoSums a, int lane) {
  return {cuda::shfl_from(a.gw, lane), cuda::shfl_from(a.gwx, lane)};
}
struct TwoSumsAdd {
  __device__ TwoSums operator()(TwoSums a, TwoSums b) const { return {a.gw + b.gw, a.gwx + b.gwx}; }
};

template <class T, int kThreads>
__global__ void layer_norm_dx_rows(LayerNormBackwardArgs<T> a) {
  using Spread = RowSpread<kThreads>;
  const int64_t n = a.cols;
  const T* w = a.weight;
  for (int64_t r = Spread::first_row(); r < a.rows; r += Spread::row_step()) {
    const T* x = a.x + r * a.row_stride;
    const T* g = a.g + r * n;
    const T mean = a.mean[r], rstd = a.rstd[r];
    // Pass 1: the row sums of gw and gw * xhat.
    TwoSums s{0, 0};
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
      const T xhat = (x[j * a.col_stride] - mean) * rstd;
      const T gw = w ? g[j] * w[j] : g[j];
      s.gw += gw;
      s.gwx += gw * xhat;
    }
    s = group_reduce<kThreads>(s, TwoSumsAdd{});
    const T mean_gw = static_cast<T>(s.gw / static_cast<double>(n));
    const T mean_gwx = static_cast<T>(s.gwx / static_cast<double>(n));
    // Pass 2: dx = rstd (gw - mean(gw) - xhat mean(gw xhat)).
    T* dx = a.dx + r * n;
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
      const T xhat = (x[j * a.col_stride] - mean) * rstd;
      const T gw = w ? g[j] * w[j] : g[j];
      dx[j] = rstd * (gw - mean_gw - xhat * mean_gwx);
    }
  }
}

// ---- backward: dweight and dbias, column sums in row chunks ----------------------------------

constexpr int kColumnThreads = 256;
constexpr int64_t kMinRowsPerChunk = 32;
constexpr int64_t kTargetBlocks = 512;
constexpr int64_t kMaxChunks = 1024;

// Block (bx, c): columns bx * 256 + tx (grid-stride), rows [c * chunk, (c + 1) * chunk).
// partial_w / partial_b are [chunks, cols] doubles, or null with one chunk: then the sums go
// straight to dweight and dbias.
template <class T>
__global__ void layer_norm_column_sums(LayerNormBackwardArgs<T> a, int64_t chunk, double* partial_w,
                                       double* partial_b) {
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * chunk;
  const int64_t r1 = r0 + chunk < a.rows ? r0 + chunk : a.rows;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < a.cols;
       j += step) {
    double sw = 0, sb = 0;
    for (int64_t r = r0; r < r1; ++r) {
      const T g = a.g[r * a.cols + j];
      if (a.dweight) sw += g * ((a.x[r * a.row_stride + j * a.col_stride] - a.mean[r]) * a.rstd[r]);
      sb += g;
    }
    if (partial_w) {
      const int64_t at = static_cast<int64_t>(blockIdx.y) * a.cols + j;
      partial_w[at] = sw;
      partial_b[at] = sb;
    } else {
      if (a.dweight) a.dweight[j] = static_cast<T>(sw);
      if (a.dbias) a.dbias[j] = static_cast<T>(sb);
    }
  }
}

template <class T>
__global__ void layer_norm_fold_chunks(LayerNormBackwardArgs<T> a, int64_t chunks,
                                       const double* partial_w, const double* partial_b) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < a.cols;
       j += step) {
    double sw = 0, sb = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      sw += partial_w[c * a.cols + j];
      sb += partial_b[c * a.cols + j];
    }
    if (a.dweight) a.dweight[j] = static_cast<T>(sw);
    if (a.dbias) a.dbias[j] = static_cast<T>(sb);
  }
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

template <class T>
void column_sums(const LayerNormBackwardArgs<T>& a) {
  const int64_t col_blocks = std::min<int64_t>(ceil_div(a.cols, kColumnThreads), 65535);
  const int64_t chunks = std::clamp<int64_t>(
      std::min(ceil_div(a.rows, kMinRowsPerChunk), ceil_div(kTargetBlocks, col_blocks)), 1,
      kMaxChunks);
  const int64_t chunk = std::max<int64_t>(ceil_div(a.rows, chunks), 1);
  const dim3 grid(static_cast<unsigned>(col_blocks), static_cast<unsigned>(chunks));
  if (chunks == 1) {
    layer_norm_column_sums<T><<<grid, kColumnThreads, 0, stream()>>>(a, chunk, nullptr, nullptr);
    PRISM_CUDA_CHECK_LAUNCH("layer_norm_backward (column sums)");
    return;
  }
  DeviceBuffer partial(2 * static_cast<size_t>(chunks * a.cols) * sizeof(double));
  double* pw = partial.as<double>();
  double* pb = pw + chunks * a.cols;
  layer_norm_column_sums<T><<<grid, kColumnThreads, 0, stream()>>>(a, chunk, pw, pb);
  PRISM_CUDA_CHECK_LAUNCH("layer_norm_backward (column sums)");
  layer_norm_fold_chunks<T>
      <<<static_cast<unsigned>(col_blocks), kColumnThreads, 0, stream()>>>(a, chunks, pw, pb);
  PRISM_CUDA_CHECK_LAUNCH("layer_norm_backward (fold chunks)");
}

// ---- launchers -------------------------------------------------------------------------------

template <class T>
void layer_norm_two_pass(const LayerNormArgs<T>& a) {
  if (warp_per_row(a.cols)) {
    launch_rows<32>(&layer_norm_two_pass_rows<T, 32>, a.rows, a);
  } else {
    launch_rows<kRowBlockThreads>(&layer_norm_two_pass_rows<T, kRowBlockThreads>, a.rows, a);
  }
  PRISM_CUDA_CHECK_LAUNCH("layer_norm (two_pass)");
}

template <class T>
void layer_norm_one_pass(const LayerNormArgs<T>& a) {
  if (warp_per_row(a.cols)) {
    launch_rows<32>(&layer_norm_one_pass_rows<T, 32>, a.rows, a);
  } else {
    launch_rows<kRowBlockThreads>(&layer_norm_one_pass_rows<T, kRowBlockThreads>, a.rows, a);
  }
  PRISM_CUDA_CHECK_LAUNCH("layer_norm (one_pass)");
}

template <class T>
void layer_norm_backward_fused(const LayerNormBackwardArgs<T>& a) {
  if (a.cols == 0) return;
  if (a.dx && a.rows > 0) {
    if (warp_per_row(a.cols)) {
      launch_rows<32>(&layer_norm_dx_rows<T, 32>, a.rows, a);
    } else {
      launch_rows<kRowBlockThreads>(&layer_norm_dx_rows<T, kRowBlockThreads>, a.rows, a);
    }
    PRISM_CUDA_CHECK_LAUNCH("layer_norm_backward (dx)");
  }
  // With no rows the column sums still run: they write the zeros the gradients then are.
  if (a.dweight || a.dbias) column_sums(a);
}

// The naive backward: each gradient from its formula (kernels/args.h) in double, as the CPU's
// naive variant computes it. dx: one thread per row, two passes over it (the row means of g w
// and g w xhat, then dx); dweight and dbias: one thread per column summing over every row.
// Few threads and uncoalesced row walks: the baseline the fused kernel is checked against.
template <class T>
__device__ double naive_xhat(const LayerNormBackwardArgs<T>& a, int64_t r, int64_t j) {
  return (static_cast<double>(a.x[r * a.row_stride + j * a.col_stride]) - a.mean[r]) *
         static_cast<double>(a.rstd[r]);
}

template <class T>
__global__ void layer_norm_backward_naive_dx(LayerNormBackwardArgs<T> a) {
  PRISM_GRID_STRIDE(r, a.rows) {
    const T* g = a.g + r * a.cols;
    double sum_gw = 0, sum_gwx = 0;
    for (int64_t j = 0; j < a.cols; ++j) {
      const double gw = static_cast<double>(g[j]) * (a.weight ? a.weight[j] : T(1));
      sum_gw += gw;
      sum_gwx += gw * naive_xhat(a, r, j);
    }
    const double mean_gw = sum_gw / a.cols, mean_gwx = sum_gwx / a.cols;
    for (int64_t j = 0; j < a.cols; ++j) {
      const double gw = static_cast<double>(g[j]) * (a.weight ? a.weight[j] : T(1));
      a.dx[r * a.cols + j] =
          static_cast<T>(a.rstd[r] * (gw - mean_gw - naive_xhat(a, r, j) * mean_gwx));
    }
  }
}

template <class T>
__global__ void layer_norm_backward_naive_columns(LayerNormBackwardArgs<T> a) {
  PRISM_GRID_STRIDE(j, a.cols) {
    double dw = 0, db = 0;
    for (int64_t r = 0; r < a.rows; ++r) {
      const double g = a.g[r * a.cols + j];
      dw += g * naive_xhat(a, r, j);
      db += g;
    }
    if (a.dweight) a.dweight[j] = static_cast<T>(dw);
    if (a.dbias) a.dbias[j] = static_cast<T>(db);
  }
}

template <class T>
void layer_norm_backward_naive(const LayerNormBackwardArgs<T>& a) {
  if (a.dx && a.rows > 0) {
    layer_norm_backward_naive_dx<T><<<grid_for(a.rows), kBlock, 0, stream()>>>(a);
    PRISM_CUDA_CHECK_LAUNCH("layer_norm_backward (naive, dx)");
  }
  if ((a.dweight || a.dbias) && a.cols > 0) {
    layer_norm_backward_naive_columns<T><<<grid_for(a.cols), kBlock, 0, stream()>>>(a);
    PRISM_CUDA_CHECK_LAUNCH("layer_norm_backward (naive, dweight and dbias)");
  }
}

}  // namespace

void register_layer_norm(Registry& r) {
  r.op("layer_norm", Device::cuda)
      .add<LayerNormArgs>("two_pass", VariantTag::naive,
                          "three passes per row: mean, variance, normalise (double sums)",
                          &layer_norm_two_pass<float>, &layer_norm_two_pass<double>);
  r.op("layer_norm", Device::cuda)
      .add<LayerNormArgs>("one_pass", VariantTag::fused,
                          "two passes per row: Welford per thread, Chan's merge, normalise",
                          &layer_norm_one_pass<float>, &layer_norm_one_pass<double>);
  r.op("layer_norm_backward", Device::cuda)
      .add<LayerNormBackwardArgs>("fused", VariantTag::fused,
                                  "dx a group per row; dweight, dbias column sums in row chunks",
                                  &layer_norm_backward_fused<float>,
                                  &layer_norm_backward_fused<double>);
  r.op("layer_norm_backward", Device::cuda)
      .add<LayerNormBackwardArgs>(
          "naive", VariantTag::naive, "dx a thread per row, dweight and dbias a thread per column",
          &layer_norm_backward_naive<float>, &layer_norm_backward_naive<double>);
}
PRISM_CUDA_KERNELS(50, register_layer_norm);

}  // namespace prism::kernels::cuda
