// Scaled dot-product attention, flash variant, backward: P rebuilt tile by tile from the
// forward's lse, never stored (FlashAttention-2's backward, split so nothing needs an atomic).
//
// With D_i = dout_i . out_i and, for every visible pair (i, j),
//   P_ij = exp(scale q_i . k_j - lse_i),   dP_ij = dout_i . v_j,   dS_ij = P_ij (dP_ij - D_i)
// the gradients are
//   dv_j = sum_i P_ij dout_i,   dk_j = scale sum_i dS_ij q_i,   dq_i = scale sum_j dS_ij k_j.
// FlashAttention-2 computes all three in one pass over key tiles and adds each tile's share
// of dq with atomic adds (dq_i collects from every key tile). Float atomics make the result
// depend on the order the blocks finish, so here the work is split in three kernels that each
// own their outputs:
//   1. row_dot:    D_i = dout_i . out_i, one warp per query row, into the workspace;
//   2. dkdv:       a block owns R keys (k_j, v_j, dk_j, dv_j in registers) and streams the
//                  query tiles (q, dout, lse, D) through shared memory;
//   3. dq:         a block owns R queries (q_i, dout_i, dq_i in registers) and streams the key
//                  tiles (k, v) through shared memory.
// Both 2 and 3 recompute P_ij and dP_ij (two dot products per pair each): 14 d FLOPs per pair
// instead of 10, the price of determinism and no atomics. Thread layout, tiles and register
// rows as in the forward (tile.cuh). Causal: kernel 2 starts at the first query that
// sees its keys (i >= j0), kernel 3 stops at the last key its queries see.
// Workspace: batch * heads * lq elements for D (the tensor layer allocates it; a buffer of our
// own when a caller passes less). Head sizes above kFlashMaxHead run the naive backward.
// Cost: 10 lq lk d + 5 lq lk + 2 lq d FLOPs per head as counted (14 lq lk d executed). Measured
// slower than the naive backward, whose products are cuBLAS GEMMs (`prism lab attention_backward
// --device cuda`; docs/PERFORMANCE.md, "GPU (CUDA)").
#include <algorithm>
#include <optional>

#include "kernels/ops/attention/cuda.h"
#include "kernels/ops/attention/tile.cuh"
#include "kernels/ops/attention/args.h"

namespace prism::kernels::cuda {
namespace {

using flash::Config;

// D[r] = sum_c dout[r, c] out[r, c] over rows = batch heads lq, both contiguous [rows, d].
template <class T>
__global__ void row_dot_kernel(const T* __restrict__ dout, const T* __restrict__ out, T* D,
                               int64_t rows, int64_t d) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t{gridDim.x} * (blockDim.x / 32);
  for (int64_t r = blockIdx.x * int64_t{blockDim.x / 32} + threadIdx.x / 32; r < rows; r += warps) {
    T acc = 0;
    for (int64_t c = lane; c < d; c += 32) acc += dout[r * d + c] * out[r * d + c];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0) D[r] = acc;
  }
}

// The (batch, head, row, column) strides of a contiguous [batch, heads, rows, d] buffer.
struct Dense {
  int64_t s[4];
  Dense(int64_t heads, int64_t rows, int64_t d) : s{heads * rows * d, rows * d, d, 1} {}
};

template <class T, int DMAX>
__global__ void __launch_bounds__(128)
    flash_dkdv_kernel(const AttentionBackwardArgs<T> a, const T* __restrict__ D, Dense dense_q,
                      int64_t ktiles) {
  using C = Config<T, DMAX>;
  constexpr int G = C::G, E = C::E, R = C::R, BC = C::BC;
  __shared__ T Qs[BC][DMAX];
  __shared__ T dOs[BC][DMAX];
  __shared__ T lse_s[BC], D_s[BC];
  const int g = threadIdx.x % G, rl = threadIdx.x / G;
  const T scale = static_cast<T>(a.scale);
  const int64_t items = a.batch * a.heads * ktiles;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t bh = item / ktiles, kt = item % ktiles;
    const int64_t b = bh / a.heads, h = bh % a.heads;
    const int64_t j0 = kt * R, j = j0 + rl;
    const bool key_ok = j < a.lk;
    const int64_t jr = key_ok ? j : 0;
    T k[E], v[E], dk[E], dv[E];
    flash::load_row<T, G, E>(k, a.k + b * a.k_stride[0] + h * a.k_stride[1] + jr * a.k_stride[2],
                             a.k_stride[3], a.d, g, key_ok, T(1));
    flash::load_row<T, G, E>(v, a.v + b * a.v_stride[0] + h * a.v_stride[1] + jr * a.v_stride[2],
                             a.v_stride[3], a.d, g, key_ok, T(1));
#pragma unroll
    for (int e = 0; e < E; ++e) dk[e] = dv[e] = T(0);
    // Causal: query i sees key j only if j <= i, so queries before j0 see none of these keys.
    for (int64_t i0 = a.causal ? j0 : 0; i0 < a.lq; i0 += BC) {
      __syncthreads();
      flash::load_tile<T, DMAX, BC>(Qs, a.q, a.q_stride, b, h, i0, a.lq, a.d);
      flash::load_tile<T, DMAX, BC>(dOs, a.dout, dense_q.s, b, h, i0, a.lq, a.d);
      for (int t = threadIdx.x; t < BC; t += blockDim.x) {
        const bool ok = i0 + t < a.lq;
        lse_s[t] = ok ? a.lse[bh * a.lq + i0 + t] : T(0);
        D_s[t] = ok ? D[bh * a.lq + i0 + t] : T(0);
      }
      __syncthreads();
#pragma unroll 4
      for (int ii = 0; ii < BC; ++ii) {
        const int64_t i = i0 + ii;
        T sp = T(0), dpp = T(0);
#pragma unroll
        for (int e = 0; e < E; ++e) {
          sp += Qs[ii][g + G * e] * k[e];
          dpp += dOs[ii][g + G * e] * v[e];
        }
        const T s = scale * flash::group_sum<G>(sp);
        const T dp = flash::group_sum<G>(dpp);
        const bool visible = i < a.lq && key_ok && !(a.causal && j > i);
        const T p = visible ? flash::dexp(s - lse_s[ii]) : T(0);
        const T ds = p * (dp - D_s[ii]);
#pragma unroll
        for (int e = 0; e < E; ++e) {
          dv[e] += p * dOs[ii][g + G * e];
          dk[e] += ds * Qs[ii][g + G * e];
        }
      }
    }
    if (key_ok) {
      const int64_t row = (bh * a.lk + j) * a.d;
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const int64_t c = g + G * e;
        if (c < a.d) {
          a.dk[row + c] = scale * dk[e];
          a.dv[row + c] = dv[e];
        }
      }
    }
  }
}

template <class T, int DMAX>
__global__ void __launch_bounds__(128)
    flash_dq_kernel(const AttentionBackwardArgs<T> a, const T* __restrict__ D, Dense dense_q,
                    int64_t qtiles) {
  using C = Config<T, DMAX>;
  constexpr int G = C::G, E = C::E, R = C::R, BC = C::BC;
  __shared__ T Ks[BC][DMAX];
  __shared__ T Vs[BC][DMAX];
  const int g = threadIdx.x % G, rl = threadIdx.x / G;
  const T scale = static_cast<T>(a.scale);
  const int64_t items = a.batch * a.heads * qtiles;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t bh = item / qtiles;
    const int64_t qt = a.causal ? qtiles - 1 - item % qtiles : item % qtiles;
    const int64_t b = bh / a.heads, h = bh % a.heads;
    const int64_t i0 = qt * R, i = i0 + rl;
    const bool row_ok = i < a.lq;
    const int64_t ir = row_ok ? i : 0;
    T q[E], dout[E], dq[E];
    flash::load_row<T, G, E>(q, a.q + b * a.q_stride[0] + h * a.q_stride[1] + ir * a.q_stride[2],
                             a.q_stride[3], a.d, g, row_ok, T(1));
    flash::load_row<T, G, E>(dout, a.dout + b * dense_q.s[0] + h * dense_q.s[1] + ir * a.d, 1, a.d,
                             g, row_ok, T(1));
#pragma unroll
    for (int e = 0; e < E; ++e) dq[e] = T(0);
    const T lse_i = row_ok ? a.lse[bh * a.lq + i] : T(0);
    const T d_i = row_ok ? D[bh * a.lq + i] : T(0);
    const int64_t kend = a.causal ? std::min<int64_t>(a.lk, i0 + R) : a.lk;
    for (int64_t j0 = 0; j0 < kend; j0 += BC) {
      __syncthreads();
      flash::load_tile<T, DMAX, BC>(Ks, a.k, a.k_stride, b, h, j0, a.lk, a.d);
      flash::load_tile<T, DMAX, BC>(Vs, a.v, a.v_stride, b, h, j0, a.lk, a.d);
      __syncthreads();
#pragma unroll 4
      for (int jj = 0; jj < BC; ++jj) {
        const int64_t j = j0 + jj;
        T sp = T(0), dpp = T(0);
#pragma unroll
        for (int e = 0; e < E; ++e) {
          sp += q[e] * Ks[jj][g + G * e];
          dpp += dout[e] * Vs[jj][g + G * e];
        }
        const T s = scale * flash::group_sum<G>(sp);
        const T dp = flash::group_sum<G>(dpp);
        const bool visible = row_ok && j < a.lk && !(a.causal && j > i);
        const T p = visible ? flash::dexp(s - lse_i) : T(0);
        const T ds = p * (dp - d_i);
#pragma unroll
        for (int e = 0; e < E; ++e) dq[e] += ds * Ks[jj][g + G * e];
      }
    }
    if (row_ok) {
      const int64_t row = (bh * a.lq + i) * a.d;
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const int64_t c = g + G * e;
        if (c < a.d) a.dq[row + c] = scale * dq[e];
      }
    }
  }
}

unsigned grid_of(int64_t items) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(items, int64_t{1} << 30)));
}

template <class T, int DMAX>
void launch_backward(const AttentionBackwardArgs<T>& a, const T* D) {
  using C = Config<T, DMAX>;
  const Dense dense_q(a.heads, a.lq, a.d);
  const int64_t ktiles = (a.lk + C::R - 1) / C::R, qtiles = (a.lq + C::R - 1) / C::R;
  flash_dkdv_kernel<T, DMAX>
      <<<grid_of(a.batch * a.heads * ktiles), C::kThreads, 0, stream()>>>(a, D, dense_q, ktiles);
  PRISM_CUDA_CHECK_LAUNCH("flash_dkdv_kernel");
  flash_dq_kernel<T, DMAX>
      <<<grid_of(a.batch * a.heads * qtiles), C::kThreads, 0, stream()>>>(a, D, dense_q, qtiles);
  PRISM_CUDA_CHECK_LAUNCH("flash_dq_kernel");
}

}  // namespace

template <class T>
void attention_backward_flash(const AttentionBackwardArgs<T>& a) {
  if (a.batch * a.heads == 0) return;
  if (a.d > kFlashMaxHead) return attention_backward_naive(a);
  const int64_t rows = a.batch * a.heads * a.lq;
  if (rows == 0) {  // no queries: nothing flows to the keys and values
    gpu::backend::memset_zero(a.dk,
                              static_cast<size_t>(a.batch * a.heads * a.lk * a.d) * sizeof(T));
    gpu::backend::memset_zero(a.dv,
                              static_cast<size_t>(a.batch * a.heads * a.lk * a.d) * sizeof(T));
    return;
  }
  std::optional<DeviceBuffer> own;
  T* D = a.workspace;
  if (!D || a.workspace_size < rows) {
    own.emplace(static_cast<size_t>(rows) * sizeof(T));
    D = own->as<T>();
  }
  row_dot_kernel<T><<<grid_for(rows * 32), kBlock, 0, stream()>>>(a.dout, a.out, D, rows, a.d);
  PRISM_CUDA_CHECK_LAUNCH("row_dot_kernel");
  if (a.d <= 32) return launch_backward<T, 32>(a, D);
  if (a.d <= 64) return launch_backward<T, 64>(a, D);
  if (a.d <= 128) return launch_backward<T, 128>(a, D);
  launch_backward<T, 256>(a, D);
}

template void attention_backward_flash<float>(const AttentionBackwardArgs<float>&);
template void attention_backward_flash<double>(const AttentionBackwardArgs<double>&);

}  // namespace prism::kernels::cuda
