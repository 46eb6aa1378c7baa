// Reductions across the threads that share one row: the building block of every row kernel
// (reduce, softmax, layer_norm, cross_entropy).
//
// A row is handled by a "group" of kThreads threads, threadIdx.x in [0, kThreads):
//   kThreads = 32:  one warp per row, several rows per block (threadIdx.y picks the row). The
//                   warp's registers are combined with shuffles; no shared memory, no barrier.
//                   Best for short rows (up to ~1024 elements), where a block per row would
//                   leave most of its threads idle.
//   kThreads = 256: one block per row, for long rows. Each warp combines its lanes with
//                   shuffles, lane 0 of each warp writes one partial to shared memory, and
//                   after a barrier every thread folds the kThreads / 32 partials.
//
// Deterministic by construction: the combination tree depends only on kThreads, never on
// timing, so the same input gives the same bits on every run (no atomics). The combining
// operation need not be commutative (Chan's merge of Welford moments is not): a value from a
// lower lane is always the left operand, and the partials are folded in warp order.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/cuda_common.h"

namespace prism::kernels::cuda {

constexpr unsigned kFullMask = 0xffffffffu;

__device__ inline float shfl_down(float v, int delta) {
  return __shfl_down_sync(kFullMask, v, delta);
}
__device__ inline double shfl_down(double v, int delta) {
  return __shfl_down_sync(kFullMask, v, delta);
}
__device__ inline int64_t shfl_down(int64_t v, int delta) {
  return static_cast<int64_t>(__shfl_down_sync(kFullMask, static_cast<long long>(v), delta));
}
__device__ inline float shfl_from(float v, int lane) {
  return __shfl_sync(kFullMask, v, lane);
}
__device__ inline double shfl_from(double v, int lane) {
  return __shfl_sync(kFullMask, v, lane);
}
__device__ inline int64_t shfl_from(int64_t v, int lane) {
  return static_cast<int64_t>(__shfl_sync(kFullMask, static_cast<long long>(v), lane));
}
// A struct type V reduces through these when it provides shfl_down(V, int) and shfl_from(V,
// int) overloads in its own namespace (found by argument-dependent lookup).

// Combines v over the kThreads threads of this row's group with op(left, right); every thread
// of the group gets the result. Every thread of the group must call it (shuffles and the
// barrier need them all), so callers keep the row loop uniform across the group.
template <int kThreads, class V, class Op>
__device__ V group_reduce(V v, Op op) {
  static_assert(kThreads % 32 == 0 && kThreads >= 32 && kThreads <= 1024, "whole warps");
  // Tree inside the warp: after the step with delta d, lane l holds lanes [l, l + 2d).
  for (int delta = 16; delta > 0; delta >>= 1) {
    const V other = shfl_down(v, delta);
    v = op(v, other);
  }
  if constexpr (kThreads == 32) {
    return shfl_from(v, 0);
  } else {
    constexpr int kWarps = kThreads / 32;
    // V must have a trivial constructor (shared memory is never initialised).
    __shared__ V partial[kWarps];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    V r = partial[0];
    for (int w = 1; w < kWarps; ++w) r = op(r, partial[w]);
    __syncthreads();  // every thread has read `partial` before a later call overwrites it
    return r;
  }
}

struct SumOp {
  template <class V>
  __device__ V operator()(V a, V b) const {
    return a + b;
  }
};

// ---- launch shape of row kernels -------------------------------------------------------------

// Threads per row group for a row of `cols` elements (see the top of this file).
inline bool warp_per_row(int64_t cols) {
  return cols <= 1024;
}
constexpr int kRowBlockThreads = 256;
constexpr int kWarpRowsPerBlock = 8;  // warp-per-row kernels: 8 warps (8 rows) per block

// Where row kernels with kThreads threads per row find their rows: a grid-stride loop over
// rows, so any number of rows runs on a capped grid.
template <int kThreads>
struct RowSpread {
  static constexpr int kRowsPerBlock = kThreads == 32 ? kWarpRowsPerBlock : 1;
  static dim3 block() { return dim3(kThreads, kRowsPerBlock); }
  static unsigned grid(int64_t rows) {
    int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
    if (blocks < 1) blocks = 1;
    if (blocks > 65535) blocks = 65535;
    return static_cast<unsigned>(blocks);
  }
  __device__ static int64_t first_row() {
    return static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  }
  __device__ static int64_t row_step() { return static_cast<int64_t>(gridDim.x) * kRowsPerBlock; }
};

// Launches a row kernel instantiated for kThreads threads per row over `rows` rows, on prism's
// stream: launch_rows<32>(&my_kernel<float, 32>, rows, args...).
template <int kThreads, class... Params, class... Args>
void launch_rows(void (*kernel)(Params...), int64_t rows, Args&&... args) {
  kernel<<<RowSpread<kThreads>::grid(rows), RowSpread<kThreads>::block(), 0, stream()>>>(
      static_cast<Args&&>(args)...);
}

}  // namespace prism::kernels::cuda
