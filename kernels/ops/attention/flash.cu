// Scaled dot-product attention, flash variant, forward: one kernel, never the L x L matrix
// (Dao et al., FlashAttention-2, 2023; the same algorithm as kernels/ops/attention/flash.cpp).
//
// A block owns R query rows of one (batch, head) (R = 128 / G, see kernels/ops/attention/tile.cuh
// for the thread layout) and keeps, per row, the scaled query q_i, the running max m_i, the running
// sum l_i and the unnormalised output o_i in registers. It walks the keys in tiles of BC rows,
// staging K_j and V_j in shared memory, and for each tile, per row:
//   s_j   = scale q_i . k_j              (-inf where causal and j > i, or past the last key)
//   m_new = max(m_i, max_j s_j);  alpha = exp(m_i - m_new)
//   l_i   = alpha l_i + sum_j exp(s_j - m_new)
//   o_i   = alpha o_i + sum_j exp(s_j - m_new) v_j
// and at the end out_i = o_i / l_i, lse_i = m_i + log l_i (what backward rebuilds P from).
// Causal: key tiles past the block's last query are never loaded; the masked half is skipped.
// Blocks are handed out heaviest first under the causal mask (the last query tiles see the
// most keys), as the CPU kernel does with its threads.
//
// What bounds it: every FMA reads one operand from shared memory (the other is in registers),
// so the shared-memory pipe, not the FMA units, sets the pace; the scores never leave
// registers, so DRAM traffic is q, k, v read about L / R times from L2 and out written once.
// The next step would be register micro-tiles (several rows x several keys per lane) or
// tensor cores (TF32 / BF16), as FlashAttention does.
// Head sizes above kFlashMaxHead (256) run the naive variant instead (said in
// kernels/ops/attention/cuda.h). Cost: 4 lq lk d + 5 lq lk FLOPs per head (about half when causal).
// Measured slower than the naive variant, whose two GEMMs run on cuBLAS and which is therefore
// the CUDA default (`prism lab attention --device cuda`; docs/PERFORMANCE.md, "GPU (CUDA)").
#include <algorithm>

#include "kernels/ops/attention/cuda.h"
#include "kernels/ops/attention/tile.cuh"
#include "kernels/ops/attention/args.h"

namespace prism::kernels::cuda {
namespace {

using flash::Config;

template <class T, int DMAX>
__global__ void __launch_bounds__(128)
    flash_forward_kernel(const AttentionArgs<T> a, int64_t qtiles) {
  using C = Config<T, DMAX>;
  constexpr int G = C::G, E = C::E, R = C::R, BC = C::BC;
  __shared__ T Ks[BC][DMAX];
  __shared__ T Vs[BC][DMAX];
  const int g = threadIdx.x % G, rl = threadIdx.x / G;
  const int64_t items = a.batch * a.heads * qtiles;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t bh = item / qtiles;
    const int64_t qt = a.causal ? qtiles - 1 - item % qtiles : item % qtiles;
    const int64_t b = bh / a.heads, h = bh % a.heads;
    const int64_t i0 = qt * R, i = i0 + rl;
    const bool row_ok = i < a.lq;
    T q[E], o[E];
    flash::load_row<T, G, E>(
        q, a.q + b * a.q_stride[0] + h * a.q_stride[1] + (row_ok ? i : 0) * a.q_stride[2],
        a.q_stride[3], a.d, g, row_ok, static_cast<T>(a.scale));
#pragma unroll
    for (int e = 0; e < E; ++e) o[e] = T(0);
    T m = flash::neg_inf<T>(), l = T(0);
    const int64_t kend = a.causal ? std::min<int64_t>(a.lk, i0 + R) : a.lk;
    for (int64_t j0 = 0; j0 < kend; j0 += BC) {
      __syncthreads();  // every lane is done with the previous tile
      flash::load_tile<T, DMAX, BC>(Ks, a.k, a.k_stride, b, h, j0, a.lk, a.d);
      flash::load_tile<T, DMAX, BC>(Vs, a.v, a.v_stride, b, h, j0, a.lk, a.d);
      __syncthreads();
      T s[BC];
      T mx = m;
#pragma unroll
      for (int jj = 0; jj < BC; ++jj) {
        T part = T(0);
#pragma unroll
        for (int e = 0; e < E; ++e) part += q[e] * Ks[jj][g + G * e];
        s[jj] = flash::group_sum<G>(part);
        const int64_t j = j0 + jj;
        if (j >= a.lk || (a.causal && j > i)) s[jj] = flash::neg_inf<T>();
        mx = s[jj] > mx ? s[jj] : mx;
      }
      if (mx == flash::neg_inf<T>()) continue;  // nothing visible to this row yet
      const T alpha = flash::dexp(m - mx);      // exp(-inf) = 0 on the first visible tile
      l *= alpha;
#pragma unroll
      for (int e = 0; e < E; ++e) o[e] *= alpha;
#pragma unroll
      for (int jj = 0; jj < BC; ++jj) {
        const T p = flash::dexp(s[jj] - mx);  // masked: exp(-inf) = 0
        l += p;
#pragma unroll
        for (int e = 0; e < E; ++e) o[e] += p * Vs[jj][g + G * e];
      }
      m = mx;
    }
    if (row_ok) {
      const int64_t row = bh * a.lq + i;
      const T inv = T(1) / l;
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const int64_t c = g + G * e;
        if (c < a.d) a.out[row * a.d + c] = o[e] * inv;
      }
      if (g == 0) a.lse[row] = m + flash::dlog(l);
    }
  }
}

template <class T, int DMAX>
void launch_forward(const AttentionArgs<T>& a) {
  constexpr int R = Config<T, DMAX>::R;
  const int64_t qtiles = (a.lq + R - 1) / R;
  const int64_t items = a.batch * a.heads * qtiles;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(items, int64_t{1} << 30));
  flash_forward_kernel<T, DMAX><<<grid, Config<T, DMAX>::kThreads, 0, stream()>>>(a, qtiles);
  PRISM_CUDA_CHECK_LAUNCH("flash_forward_kernel");
}

}  // namespace

template <class T>
void attention_flash(const AttentionArgs<T>& a) {
  if (a.batch * a.heads * a.lq == 0) return;
  if (a.d <= 32) return launch_forward<T, 32>(a);
  if (a.d <= 64) return launch_forward<T, 64>(a);
  if (a.d <= 128) return launch_forward<T, 128>(a);
  if (a.d <= kFlashMaxHead) return launch_forward<T, 256>(a);
  attention_naive(a);  // registers cannot hold such a row: materialise the scores instead
}

template void attention_flash<float>(const AttentionArgs<float>&);
template void attention_flash<double>(const AttentionArgs<double>&);

}  // namespace prism::kernels::cuda
