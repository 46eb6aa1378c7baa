// Scaled dot-product attention, naive variant: every head's whole Lq x Lk score matrix.
//
// Idea: the definition as the unfused chain a framework without fusion runs, per (batch, head):
//   S = scale Q K^T                  cuBLAS GEMM into the workspace       [lq x lk]
//   P = softmax(S), lse              one block per row (max, sum, divide; -inf where causal)
//   out = P V                        cuBLAS GEMM
// The workspace is the O(L^2) memory flash attention never allocates: 4 lq lk bytes per head
// in float32 (512 MB for 8 heads at L = 4096). The products are cuBLAS's, so this is the
// baseline a GPU user knows (what an unfused PyTorch attention runs), not a strawman.
//
// Backward, with D_i = dout_i . out_i:
//   P   = exp(scale Q K^T - lse)     GEMM, then an elementwise pass (0 where masked)
//   dV  = P^T dout                   GEMM (P read transposed in place)
//   dP  = dout V^T                   GEMM into a second lq x lk buffer per head (a scratch
//                                    buffer of this kernel: the tensor layer's workspace holds
//                                    one score matrix, and P is still needed)
//   dS  = P (dP - D)                 elementwise, over P
//   dQ  = scale dS K,  dK = scale dS^T Q     GEMMs
// The heads of one batch entry are one strided-batched GEMM (all of them at once when the
// batch and head strides merge, the usual case).
// Cost: forward 4 lq lk d + 5 lq lk FLOPs per head, backward 10 lq lk d + 5 lq lk + 2 lq d
// (the masked half is computed and thrown away). Faster than the flash variant in both
// directions, so the CUDA default (`prism lab attention --device cuda`, and attention_backward;
// measured: docs/PERFORMANCE.md, "GPU (CUDA)").
//
// This file also registers the flash variants (flash.cu,
// kernels/ops/attention/flash_backward.cu).
#include <algorithm>
#include <cmath>
#include <optional>

#include "kernels/cuda/cublas_gemm.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/ops/attention/cuda.h"
#include "kernels/ops/elementwise/math.cuh"
#include "kernels/ops/attention/args.h"

namespace prism::kernels::cuda {
namespace {

constexpr int kRowThreads = 256;

using math::dexp;
using math::dlog;

// The max (Max = true) or the sum of v over the block; every thread gets the result.
template <bool Max, class T>
__device__ T block_reduce(T v, T* scratch /* [32] */) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const T o = __shfl_xor_sync(0xffffffffu, v, off);
    v = Max ? (o > v ? o : v) : v + o;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  __syncthreads();  // scratch may still be read from the previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  T r = scratch[0];
  for (int w = 1; w < warps; ++w) r = Max ? (scratch[w] > r ? scratch[w] : r) : r + scratch[w];
  return r;
}

// Row r of the [rows, lk] scores (query i = r % lq): P = softmax in place, lse[r] written.
template <class T>
__global__ void __launch_bounds__(kRowThreads)
    softmax_rows_kernel(T* S, T* lse, int64_t rows, int64_t lq, int64_t lk, bool causal) {
  __shared__ T scratch[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    T* row = S + r * lk;
    const int64_t visible = causal ? std::min<int64_t>(r % lq + 1, lk) : lk;  // keys 0..i
    T m = -INFINITY;
    for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) m = row[j] > m ? row[j] : m;
    m = block_reduce<true>(m, scratch);
    T l = 0;
    for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) {
      const T e = dexp(row[j] - m);
      row[j] = e;
      l += e;
    }
    l = block_reduce<false>(l, scratch);
    for (int64_t j = threadIdx.x; j < lk; j += blockDim.x) row[j] = j < visible ? row[j] / l : T(0);
    if (threadIdx.x == 0) lse[r] = m + dlog(l);
  }
}

// Backward: P_ij = exp(S_ij - lse_i) over the scores, 0 where masked.
template <class T>
__global__ void probs_kernel(T* S, const T* lse, int64_t rows, int64_t lq, int64_t lk,
                             bool causal) {
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < rows * lk;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t j = e % lk, r = e / lk;
    S[e] = (causal && j > r % lq) ? T(0) : dexp(S[e] - lse[r]);
  }
}

// D_r = dout_r . out_r, one warp per row.
template <class T>
__global__ void row_dot_kernel(const T* dout, const T* out, T* D, int64_t rows, int64_t d) {
  const int lane = threadIdx.x % 32;
  for (int64_t r = blockIdx.x * int64_t{blockDim.x / 32} + threadIdx.x / 32; r < rows;
       r += int64_t{gridDim.x} * (blockDim.x / 32)) {
    T acc = 0;
    for (int64_t c = lane; c < d; c += 32) acc += dout[r * d + c] * out[r * d + c];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0) D[r] = acc;
  }
}

// dS = P (dP - D_i), written over P.
template <class T>
__global__ void softmax_grad_kernel(T* P, const T* dP, const T* D, int64_t rows, int64_t lk) {
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < rows * lk;
       e += int64_t{gridDim.x} * blockDim.x) {
    P[e] = P[e] * (dP[e] - D[e / lk]);
  }
}

// Calls f(b, count): the heads of batch entries b.. as one batched GEMM of `count` heads, with
// head stride stride[1]. All batch entries at once when every strided operand's batch stride
// is heads x its head stride (or there is one batch entry); else one call per batch entry.
template <class Args, class F>
void for_head_batches(const Args& a, F&& f) {
  const bool merge = a.batch == 1 || (a.q_stride[0] == a.heads * a.q_stride[1] &&
                                      a.k_stride[0] == a.heads * a.k_stride[1] &&
                                      a.v_stride[0] == a.heads * a.v_stride[1]);
  if (merge) return f(int64_t{0}, a.batch * a.heads);
  for (int64_t b = 0; b < a.batch; ++b) f(b, a.heads);
}

// Operands of head (b, 0): q [lq, d], k^T [d, lk], v [lk, d] seen through their strides.
template <class T, class Args>
GemmOperand<T> q_of(const Args& a, int64_t b) {
  return {a.q + b * a.q_stride[0], a.q_stride[2], a.q_stride[3], a.q_stride[1]};
}
template <class T, class Args>
GemmOperand<T> k_of(const Args& a, int64_t b) {
  return {a.k + b * a.k_stride[0], a.k_stride[2], a.k_stride[3], a.k_stride[1]};
}
template <class T, class Args>
GemmOperand<T> kt_of(const Args& a, int64_t b) {
  return {a.k + b * a.k_stride[0], a.k_stride[3], a.k_stride[2], a.k_stride[1]};
}
template <class T, class Args>
GemmOperand<T> v_of(const Args& a, int64_t b) {
  return {a.v + b * a.v_stride[0], a.v_stride[2], a.v_stride[3], a.v_stride[1]};
}
template <class T, class Args>
GemmOperand<T> vt_of(const Args& a, int64_t b) {
  return {a.v + b * a.v_stride[0], a.v_stride[3], a.v_stride[2], a.v_stride[1]};
}

// The score buffer: the tensor layer's workspace when it is large enough, else our own.
template <class T, class Args>
T* scores_buffer(const Args& a, std::optional<DeviceBuffer>& own) {
  const int64_t need = attention_scores_workspace(a.batch, a.heads, a.lq, a.lk);
  if (a.workspace && a.workspace_size >= need) return a.workspace;
  own.emplace(static_cast<size_t>(need) * sizeof(T));
  return own->template as<T>();
}

// S = scale Q K^T for every head.
template <class T, class Args>
void scores(const Args& a, T* S) {
  const int64_t LL = a.lq * a.lk;
  for_head_batches(a, [&](int64_t b, int64_t count) {
    gemm<T>(count, a.lq, a.lk, a.d, static_cast<T>(a.scale), q_of<T>(a, b), kt_of<T>(a, b), T(0),
            S + b * a.heads * LL, a.lk, LL);
  });
}

}  // namespace

template <class T>
void attention_naive(const AttentionArgs<T>& a) {
  const int64_t rows = a.batch * a.heads * a.lq, LL = a.lq * a.lk;
  if (rows == 0) return;
  std::optional<DeviceBuffer> own;
  T* S = scores_buffer<T>(a, own);
  scores<T>(a, S);
  softmax_rows_kernel<T>
      <<<grid_for(rows, 1), kRowThreads, 0, stream()>>>(S, a.lse, rows, a.lq, a.lk, a.causal);
  PRISM_CUDA_CHECK_LAUNCH("softmax_rows_kernel");
  for_head_batches(a, [&](int64_t b, int64_t count) {
    gemm<T>(count, a.lq, a.d, a.lk, T(1), {S + b * a.heads * LL, a.lk, 1, LL}, v_of<T>(a, b), T(0),
            a.out + b * a.heads * a.lq * a.d, a.d, a.lq * a.d);
  });
}

template <class T>
void attention_backward_naive(const AttentionBackwardArgs<T>& a) {
  const int64_t rows = a.batch * a.heads * a.lq, LL = a.lq * a.lk;
  const int64_t kv = a.batch * a.heads * a.lk * a.d;
  if (a.batch * a.heads == 0) return;
  if (rows == 0) {
    gpu::backend::memset_zero(a.dk, static_cast<size_t>(kv) * sizeof(T));
    gpu::backend::memset_zero(a.dv, static_cast<size_t>(kv) * sizeof(T));
    return;
  }
  std::optional<DeviceBuffer> own;
  T* P = scores_buffer<T>(a, own);
  DeviceBuffer dP_buf(static_cast<size_t>(rows * a.lk) * sizeof(T));
  DeviceBuffer D_buf(static_cast<size_t>(rows) * sizeof(T));
  T* dP = dP_buf.as<T>();
  T* D = D_buf.as<T>();
  const T scale = static_cast<T>(a.scale);
  scores<T>(a, P);
  probs_kernel<T>
      <<<grid_for(rows * a.lk), kBlock, 0, stream()>>>(P, a.lse, rows, a.lq, a.lk, a.causal);
  PRISM_CUDA_CHECK_LAUNCH("probs_kernel");
  row_dot_kernel<T><<<grid_for(rows * 32), kBlock, 0, stream()>>>(a.dout, a.out, D, rows, a.d);
  PRISM_CUDA_CHECK_LAUNCH("row_dot_kernel");
  for_head_batches(a, [&](int64_t b, int64_t count) {
    const int64_t h0 = b * a.heads;
    const GemmOperand<T> dout{a.dout + h0 * a.lq * a.d, a.d, 1, a.lq * a.d};
    // dV = P^T dout;  dP = dout V^T
    gemm<T>(count, a.lk, a.d, a.lq, T(1), {P + h0 * LL, 1, a.lk, LL}, dout, T(0),
            a.dv + h0 * a.lk * a.d, a.d, a.lk * a.d);
    gemm<T>(count, a.lq, a.lk, a.d, T(1), dout, vt_of<T>(a, b), T(0), dP + h0 * LL, a.lk, LL);
  });
  softmax_grad_kernel<T><<<grid_for(rows * a.lk), kBlock, 0, stream()>>>(P, dP, D, rows, a.lk);
  PRISM_CUDA_CHECK_LAUNCH("softmax_grad_kernel");
  for_head_batches(a, [&](int64_t b, int64_t count) {
    const int64_t h0 = b * a.heads;
    // dQ = scale dS K;  dK = scale dS^T Q
    gemm<T>(count, a.lq, a.d, a.lk, scale, {P + h0 * LL, a.lk, 1, LL}, k_of<T>(a, b), T(0),
            a.dq + h0 * a.lq * a.d, a.d, a.lq * a.d);
    gemm<T>(count, a.lk, a.d, a.lq, scale, {P + h0 * LL, 1, a.lk, LL}, q_of<T>(a, b), T(0),
            a.dk + h0 * a.lk * a.d, a.d, a.lk * a.d);
  });
}

template void attention_naive<float>(const AttentionArgs<float>&);
template void attention_naive<double>(const AttentionArgs<double>&);
template void attention_backward_naive<float>(const AttentionBackwardArgs<float>&);
template void attention_backward_naive<double>(const AttentionBackwardArgs<double>&);

void register_attention(Registry& r) {
  r.op("attention", Device::cuda)
      .add<AttentionArgs>("naive", VariantTag::naive,
                          "cuBLAS QK^T into an lq x lk matrix per head, row softmax, cuBLAS PV",
                          &attention_naive<float>, &attention_naive<double>);
  r.op("attention", Device::cuda)
      .add<AttentionArgs>("flash", VariantTag::fused,
                          "one kernel: K/V tiles in shared memory, online softmax in registers",
                          &attention_flash<float>, &attention_flash<double>);
  r.op("attention_backward", Device::cuda)
      .add<AttentionBackwardArgs>(
          "naive", VariantTag::naive, "P and dP as lq x lk matrices per head, five cuBLAS GEMMs",
          &attention_backward_naive<float>, &attention_backward_naive<double>);
  r.op("attention_backward", Device::cuda)
      .add<AttentionBackwardArgs>("flash", VariantTag::fused,
                                  "P rebuilt from lse in tiles; dK/dV and dQ kernels, no atomics",
                                  &attention_backward_flash<float>,
                                  &attention_backward_flash<double>);
}
PRISM_CUDA_KERNELS(180, register_attention);

}  // namespace prism::kernels::cuda
