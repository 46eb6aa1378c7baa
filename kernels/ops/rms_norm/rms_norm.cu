// rms_norm and its gradient on the GPU (the math is in kernels/args.h beside RmsNormArgs; the
// CPU kernels, kernels/ops/rms_norm/rms_norm.cpp, are the baseline these are checked against).
//
// "naive": one thread per row, the formula as the CPU's loops: the row's sum of squares in
// double, then the scaled output. Rows are walked by single threads, so neighbouring threads
// read addresses `cols` apart (uncoalesced) and short inputs leave most of the GPU idle.
// "fused": a group of threads per row (a warp for rows up to 1024, a block beyond:
// row_reduce.cuh), the sum of squares combined across the group by shuffles, then the output
// written by the same threads, coalesced. Deterministic: the combining tree is fixed.
//
// Backward: dx by row (naive: a thread per row; fused: a group per row, the row mean of
// gw xhat by group_reduce), dweight by column (a thread per column summing over every row, in
// row order: the same bits every run, no atomics). `prism lab rms_norm --device cuda` (and
// rms_norm_backward) prints the figures (measured: docs/PERFORMANCE.md, "GPU (CUDA)"). Both
// backwards share the dweight kernel (a thread per column): at 16384 x 128 that is 128 threads,
// so both are far slower than layer_norm_backward, whose column sums run in row chunks.
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/cuda/row_reduce.cuh"
#include "kernels/ops/elementwise/math.cuh"
#include "kernels/ops/rms_norm/args.h"

namespace prism::kernels::cuda {
namespace {

template <class T>
__global__ void rms_norm_naive_rows(RmsNormArgs<T> a) {
  PRISM_GRID_STRIDE(r, a.rows) {
    const T* x = a.x + r * a.row_stride;
    double s = 0;
    for (int64_t j = 0; j < a.cols; ++j) {
      const double v = x[j * a.col_stride];
      s += v * v;
    }
    const T rstd = static_cast<T>(1.0 / math::dsqrt(s / static_cast<double>(a.cols) + a.eps));
    if (a.rstd) a.rstd[r] = rstd;
    for (int64_t j = 0; j < a.cols; ++j) {
      const T v = x[j * a.col_stride] * rstd;
      a.out[r * a.cols + j] = a.weight ? v * a.weight[j] : v;
    }
  }
}

template <class T, int kThreads>
__global__ void rms_norm_fused_rows(RmsNormArgs<T> a) {
  using Spread = RowSpread<kThreads>;
  for (int64_t r = Spread::first_row(); r < a.rows; r += Spread::row_step()) {
    const T* x = a.x + r * a.row_stride;
    double s = 0;
    for (int64_t j = threadIdx.x; j < a.cols; j += kThreads) {
      const double v = x[j * a.col_stride];
      s += v * v;
    }
    s = group_reduce<kThreads>(s, SumOp{});
    const T rstd = static_cast<T>(1.0 / math::dsqrt(s / static_cast<double>(a.cols) + a.eps));
    if (a.rstd && threadIdx.x == 0) a.rstd[r] = rstd;
    T* y = a.out + r * a.cols;
    for (int64_t j = threadIdx.x; j < a.cols; j += kThreads) {
      const T v = x[j * a.col_stride] * rstd;
      y[j] = a.weight ? v * a.weight[j] : v;
    }
  }
}

template <class T>
void rms_norm_naive(const RmsNormArgs<T>& a) {
  if (a.rows == 0) return;
  rms_norm_naive_rows<T><<<grid_for(a.rows), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("rms_norm (naive)");
}

template <class T>
void rms_norm_fused(const RmsNormArgs<T>& a) {
  if (a.rows == 0) return;
  if (warp_per_row(a.cols)) {
    launch_rows<32>(&rms_norm_fused_rows<T, 32>, a.rows, a);
  } else {
    launch_rows<kRowBlockThreads>(&rms_norm_fused_rows<T, kRowBlockThreads>, a.rows, a);
  }
  PRISM_CUDA_CHECK_LAUNCH("rms_norm (fused)");
}

// ---- backward --------------------------------------------------------------------------------

template <class T>
__device__ double rms_xhat(const RmsNormBackwardArgs<T>& a, int64_t r, int64_t j) {
  return static_cast<double>(a.x[r * a.row_stride + j * a.col_stride]) * a.rstd[r];
}

template <class T>
__device__ double rms_gw(const RmsNormBackwardArgs<T>& a, int64_t r, int64_t j) {
  const double g = a.g[r * a.cols + j];
  return a.weight ? g * static_cast<double>(a.weight[j]) : g;
}

// dweight_j = sum over rows of g xhat: a thread per column, rows in order.
template <class T>
__global__ void rms_norm_dweight_columns(RmsNormBackwardArgs<T> a) {
  PRISM_GRID_STRIDE(j, a.cols) {
    double s = 0;
    for (int64_t r = 0; r < a.rows; ++r)
      s += static_cast<double>(a.g[r * a.cols + j]) * rms_xhat(a, r, j);
    a.dweight[j] = static_cast<T>(s);
  }
}

template <class T>
__global__ void rms_norm_dx_naive_rows(RmsNormBackwardArgs<T> a) {
  PRISM_GRID_STRIDE(r, a.rows) {
    double s = 0;
    for (int64_t j = 0; j < a.cols; ++j) s += rms_gw(a, r, j) * rms_xhat(a, r, j);
    const double mean_gwx = s / static_cast<double>(a.cols);
    for (int64_t j = 0; j < a.cols; ++j) {
      a.dx[r * a.cols + j] =
          static_cast<T>(a.rstd[r] * (rms_gw(a, r, j) - rms_xhat(a, r, j) * mean_gwx));
    }
  }
}

template <class T, int kThreads>
__global__ void rms_norm_dx_fused_rows(RmsNormBackwardArgs<T> a) {
  using Spread = RowSpread<kThreads>;
  for (int64_t r = Spread::first_row(); r < a.rows; r += Spread::row_step()) {
    double s = 0;
    for (int64_t j = threadIdx.x; j < a.cols; j += kThreads)
      s += rms_gw(a, r, j) * rms_xhat(a, r, j);
    s = group_reduce<kThreads>(s, SumOp{});
    const double mean_gwx = s / static_cast<double>(a.cols);
    for (int64_t j = threadIdx.x; j < a.cols; j += kThreads) {
      a.dx[r * a.cols + j] =
          static_cast<T>(a.rstd[r] * (rms_gw(a, r, j) - rms_xhat(a, r, j) * mean_gwx));
    }
  }
}

template <class T>
void launch_dweight(const RmsNormBackwardArgs<T>& a) {
  if (!a.dweight || a.cols == 0) return;
  rms_norm_dweight_columns<T><<<grid_for(a.cols), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("rms_norm_backward (dweight)");
}

template <class T>
void rms_norm_backward_naive(const RmsNormBackwardArgs<T>& a) {
  if (a.dx && a.rows > 0) {
    rms_norm_dx_naive_rows<T><<<grid_for(a.rows), kBlock, 0, stream()>>>(a);
    PRISM_CUDA_CHECK_LAUNCH("rms_norm_backward (naive, dx)");
  }
  launch_dweight(a);
}

template <class T>
void rms_norm_backward_fused(const RmsNormBackwardArgs<T>& a) {
  if (a.dx && a.rows > 0) {
    if (warp_per_row(a.cols)) {
      launch_rows<32>(&rms_norm_dx_fused_rows<T, 32>, a.rows, a);
    } else {
      launch_rows<kRowBlockThreads>(&rms_norm_dx_fused_rows<T, kRowBlockThreads>, a.rows, a);
    }
    PRISM_CUDA_CHECK_LAUNCH("rms_norm_backward (fused, dx)");
  }
  launch_dweight(a);
}

}  // namespace

void register_rms_norm(Registry& r) {
  r.op("rms_norm", Device::cuda)
      .add<RmsNormArgs>("fused", VariantTag::fused,
                        "a warp or block per row: shuffled sum of squares, coalesced output",
                        &rms_norm_fused<float>, &rms_norm_fused<double>);
  r.op("rms_norm", Device::cuda)
      .add<RmsNormArgs>("naive", VariantTag::naive, "one thread per row: sum of squares, scale",
                        &rms_norm_naive<float>, &rms_norm_naive<double>);
  r.op("rms_norm_backward", Device::cuda)
      .add<RmsNormBackwardArgs>("fused", VariantTag::fused,
                                "dx a group per row, dweight a thread per column",
                                &rms_norm_backward_fused<float>, &rms_norm_backward_fused<double>);
  r.op("rms_norm_backward", Device::cuda)
      .add<RmsNormBackwardArgs>("naive", VariantTag::naive,
                                "dx a thread per row, dweight a thread per column",
                                &rms_norm_backward_naive<float>, &rms_norm_backward_naive<double>);
}
PRISM_CUDA_KERNELS(60, register_rms_norm);

}  // namespace prism::kernels::cuda
