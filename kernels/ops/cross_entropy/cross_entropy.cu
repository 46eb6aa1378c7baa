// cross_entropy of logits [rows, cols] against int64 class indices on the GPU (the math is in
// kernels/args.h beside CrossEntropyArgs): two forward variants and the one backward kernel.
// Rows are spread as in every row kernel: a warp per row up to 1024 classes, a block of 256
// beyond (kernels/cuda/row_reduce.cuh).
//
// "composed" (tag naive): nll_loss(log_softmax(x)) as two steps. A three-pass log_softmax
// writes every log-probability into the [rows, cols] workspace the front end allocated, then a
// one-block kernel picks each row's target entry and sums them. The logits are read three
// times and an [rows, cols] buffer written, for rows numbers.
//
// "fused" (tag fused): per row, the online log-sum-exp (kernels/cuda/online_softmax.cuh: max
// and sum of exponentials in one read) and the target's logit, read directly:
//   loss_i = lse_i - x_i,target_i = (m_i - x_i,target_i) + log(s_i)
// Each row's loss goes to a [rows] scratch array in double; a one-block kernel adds them in a
// fixed tree (no atomics: the same bits on every run). One read of the logits, no [rows, cols]
// buffer.
//
// Labels: the CPU front end checks them before any kernel runs; on the GPU they are not
// readable from the host, so these kernels check them on the device. A row whose label is
// outside [0, cols) reads nothing and records its position (kernels/cuda/bad_index.cuh); the
// launcher then throws the CPU front end's message for the first such row. This costs one wait
// for the device per forward call.
//
// Backward ("fused"; "naive" is the same formula, one thread per logit, in double), one pass
// from the logits and the saved lse:
//   dlogits_ij = g scale (exp(x_ij - lse_i) - [j == target_i])
// lse is kept in double and subtracted in two parts (hi + lo, each in T), as on the CPU, so
// large logits lose nothing there. g is read on the device: nothing waits for the host.
//
// Cost (docs/COSTS.md): forward 4 FLOPs per logit + 3 per row, backward 3 per logit + 1 per
// row. `prism lab cross_entropy --device cuda` (and cross_entropy_backward) prints the figures;
// fused is the faster in both directions (measured: docs/PERFORMANCE.md, "GPU (CUDA)").
#include <cstdint>
#include <limits>
#include <string>

#include "kernels/cuda/bad_index.cuh"
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/cuda/online_softmax.cuh"
#include "kernels/cuda/row_reduce.cuh"
#include "kernels/ops/elementwise/math.cuh"
#include "kernels/ops/cross_entropy/args.h"

namespace prism::kernels::cuda {
namespace {

constexpr int kFoldThreads = 256;  // the one block that adds the rows' losses

// ---- fused: online lse and the picked logit per row ------------------------------------------

template <class T, int kThreads>
__global__ void cross_entropy_fused_rows(CrossEntropyArgs<T> a, double* row_loss,
                                         BadIndexWord* bad) {
  using Spread = RowSpread<kThreads>;
  for (int64_t r = Spread::first_row(); r < a.rows; r += Spread::row_step()) {
    const T* x = a.logits + r * a.row_stride;
    const MaxSum<T> ms = row_max_sum<kThreads>(x, a.cols, a.col_stride);
    if (threadIdx.x != 0) continue;
    const double log_s = math::dlog(static_cast<double>(ms.s));
    if (a.lse) a.lse[r] = static_cast<double>(ms.m) + log_s;
    const int64_t t = a.target[r * a.target_stride];
    if (t < 0 || t >= a.cols) {
      flag_bad_index(bad, r);
      row_loss[r] = 0;
      continue;
    }
    const T picked = x[t * a.col_stride];
    row_loss[r] = (static_cast<double>(ms.m) - static_cast<double>(picked)) + log_s;
  }
}

// loss = scale * sum_r row_loss[r], one block.
template <class T>
__global__ void fold_row_losses(CrossEntropyArgs<T> a, const double* row_loss) {
  double acc = 0;
  for (int64_t r = threadIdx.x; r < a.rows; r += kFoldThreads) acc += row_loss[r];
  acc = group_reduce<kFoldThreads>(acc, SumOp{});
  if (threadIdx.x == 0) a.loss[0] = static_cast<T>(acc * a.scale);
}

// ---- composed: log_softmax into the workspace, then pick and sum -----------------------------

struct MaxOp {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a < b ? b : a;  // the CPU's std::max(m, x)
  }
};

template <class T, int kThreads>
__global__ void log_softmax_into_workspace(CrossEntropyArgs<T> a) {
  using Spread = RowSpread<kThreads>;
  const int64_t n = a.cols, cs = a.col_stride;
  for (int64_t r = Spread::first_row(); r < a.rows; r += Spread::row_step()) {
    const T* x = a.logits + r * a.row_stride;
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t j = threadIdx.x; j < n; j += kThreads) m = MaxOp{}(m, x[j * cs]);
    m = group_reduce<kThreads>(m, MaxOp{});
    double sum = 0;
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
      sum += math::dexp(static_cast<double>(x[j * cs] - m));
    }
    sum = group_reduce<kThreads>(sum, SumOp{});
    const T log_sum = static_cast<T>(math::dlog(sum));
    T* logp = a.workspace + r * n;
    for (int64_t j = threadIdx.x; j < n; j += kThreads) logp[j] = (x[j * cs] - m) - log_sum;
    if (threadIdx.x == 0 && a.lse) a.lse[r] = static_cast<double>(m) + math::dlog(sum);
  }
}

// loss = -scale * sum_r logp[r, target_r], one block; bad labels are flagged and skipped.
template <class T>
__global__ void pick_and_sum(CrossEntropyArgs<T> a, BadIndexWord* bad) {
  double acc = 0;
  for (int64_t r = threadIdx.x; r < a.rows; r += kFoldThreads) {
    const int64_t t = a.target[r * a.target_stride];
    if (t < 0 || t >= a.cols) {
      flag_bad_index(bad, r);
      continue;
    }
    acc -= a.workspace[r * a.cols + t];
  }
  acc = group_reduce<kFoldThreads>(acc, SumOp{});
  if (threadIdx.x == 0) a.loss[0] = static_cast<T>(acc * a.scale);
}

// ---- host side -------------------------------------------------------------------------------

// Throws the front end's message for the first bad label, if the kernels flagged one.
template <class T>
void report_bad_label(const CrossEntropyArgs<T>& a, const FirstBadIndex& bad) {
  const int64_t row = bad.read();
  if (row < 0) return;
  const int64_t v = read_device_int64(a.target + row * a.target_stride);
  throw Error("cross_entropy: label " + std::to_string(v) + " at position " + std::to_string(row) +
              " is out of range [0, " + std::to_string(a.cols) + ")");
}

template <class T>
void cross_entropy_fused(const CrossEntropyArgs<T>& a) {
  FirstBadIndex bad;
  DeviceBuffer row_loss(static_cast<size_t>(a.rows) * sizeof(double));
  if (warp_per_row(a.cols)) {
    launch_rows<32>(&cross_entropy_fused_rows<T, 32>, a.rows, a, row_loss.as<double>(),
                    bad.device());
  } else {
    launch_rows<kRowBlockThreads>(&cross_entropy_fused_rows<T, kRowBlockThreads>, a.rows, a,
                                  row_loss.as<double>(), bad.device());
  }
  PRISM_CUDA_CHECK_LAUNCH("cross_entropy (fused)");
  fold_row_losses<T><<<1, kFoldThreads, 0, stream()>>>(a, row_loss.as<double>());
  PRISM_CUDA_CHECK_LAUNCH("cross_entropy (fused, sum of rows)");
  report_bad_label(a, bad);
}

template <class T>
void cross_entropy_composed(const CrossEntropyArgs<T>& a) {
  FirstBadIndex bad;
  if (warp_per_row(a.cols)) {
    launch_rows<32>(&log_softmax_into_workspace<T, 32>, a.rows, a);
  } else {
    launch_rows<kRowBlockThreads>(&log_softmax_into_workspace<T, kRowBlockThreads>, a.rows, a);
  }
  PRISM_CUDA_CHECK_LAUNCH("cross_entropy (composed, log_softmax)");
  pick_and_sum<T><<<1, kFoldThreads, 0, stream()>>>(a, bad.device());
  PRISM_CUDA_CHECK_LAUNCH("cross_entropy (composed, pick and sum)");
  report_bad_label(a, bad);
}

// ---- backward --------------------------------------------------------------------------------

template <class T, int kThreads>
__global__ void cross_entropy_backward_rows(CrossEntropyBackwardArgs<T> a) {
  using Spread = RowSpread<kThreads>;
  const T gs = static_cast<T>(static_cast<double>(a.g[0]) * a.scale);
  for (int64_t r = Spread::first_row(); r < a.rows; r += Spread::row_step()) {
    const T* x = a.logits + r * a.row_stride;
    T* d = a.dlogits + r * a.cols;
    // lse as hi + lo in T: x - hi is exact where it matters (x close to lse), and lo carries
    // the bits a single rounding of lse to T would drop.
    const double lse = a.lse[r];
    const T hi = static_cast<T>(lse);
    const T lo = static_cast<T>(lse - static_cast<double>(hi));
    // The forward checked the labels; one still out of range only loses its one-hot term.
    const int64_t t = a.target[r * a.target_stride];
    for (int64_t j = threadIdx.x; j < a.cols; j += kThreads) {
      T v = gs * math::dexp((x[j * a.col_stride] - hi) - lo);
      if (j == t) v -= gs;
      d[j] = v;
    }
  }
}

template <class T>
void cross_entropy_backward_fused(const CrossEntropyBackwardArgs<T>& a) {
  if (warp_per_row(a.cols)) {
    launch_rows<32>(&cross_entropy_backward_rows<T, 32>, a.rows, a);
  } else {
    launch_rows<kRowBlockThreads>(&cross_entropy_backward_rows<T, kRowBlockThreads>, a.rows, a);
  }
  PRISM_CUDA_CHECK_LAUNCH("cross_entropy_backward (fused)");
}

// The naive backward: one thread per logit, the formula as it reads, in double (the CPU's naive
// variant's arithmetic): dlogits_ij = g scale (exp(x_ij - lse_i) - [j == target_i]).
template <class T>
__global__ void cross_entropy_backward_naive_kernel(CrossEntropyBackwardArgs<T> a) {
  const double gs = static_cast<double>(a.g[0]) * a.scale;
  PRISM_GRID_STRIDE(e, a.rows * a.cols) {
    const int64_t r = e / a.cols, j = e % a.cols;
    const double p =
        exp(static_cast<double>(a.logits[r * a.row_stride + j * a.col_stride]) - a.lse[r]);
    const double onehot = j == a.target[r * a.target_stride] ? 1.0 : 0.0;
    a.dlogits[e] = static_cast<T>(gs * (p - onehot));
  }
}

template <class T>
void cross_entropy_backward_naive(const CrossEntropyBackwardArgs<T>& a) {
  if (a.rows * a.cols == 0) return;
  cross_entropy_backward_naive_kernel<T><<<grid_for(a.rows * a.cols), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("cross_entropy_backward (naive)");
}

}  // namespace

void register_cross_entropy(Registry& r) {
  r.op("cross_entropy", Device::cuda)
      .add<CrossEntropyArgs>("composed", VariantTag::naive,
                             "log_softmax into a [rows, cols] buffer, then pick and reduce",
                             &cross_entropy_composed<float>, &cross_entropy_composed<double>);
  r.op("cross_entropy", Device::cuda)
      .add<CrossEntropyArgs>("fused", VariantTag::fused,
                             "online log-sum-exp and the target's logit per row, no buffer",
                             &cross_entropy_fused<float>, &cross_entropy_fused<double>);
  r.op("cross_entropy_backward", Device::cuda)
      .add<CrossEntropyBackwardArgs>(
          "fused", VariantTag::fused, "softmax minus one-hot from the saved lse, a group per row",
          &cross_entropy_backward_fused<float>, &cross_entropy_backward_fused<double>);
  r.op("cross_entropy_backward", Device::cuda)
      .add<CrossEntropyBackwardArgs>(
          "naive", VariantTag::naive, "one thread per logit: softmax minus one-hot, in double",
          &cross_entropy_backward_naive<float>, &cross_entropy_backward_naive<double>);
}
PRISM_CUDA_KERNELS(80, register_cross_entropy);

}  // namespace prism::kernels::cuda
