// What the flash attention kernels (forward and backward) share: the tile shapes, the loader
// of a [rows x d] tile into shared memory, and the sum over the threads of one row.
//
// Thread layout. A row (a query in forward and in dQ, a key in dK/dV) belongs to a group of
// G = DMAX / 16 adjacent lanes; lane g of the group holds the row's elements c = g + G e,
// e < 16, in registers (interleaved, so that for one e the G lanes read G consecutive words of
// a shared-memory row: G different banks, while the other groups of the warp read the same
// words, a broadcast). A dot product of a register row with a shared-memory row is 16 FMAs
// per lane and log2(G) shuffles to add the G partial sums; every lane of the group ends with
// the full value, so the softmax bookkeeping needs no further communication.
// A block is 128 threads = 128 / G rows; the other operand streams through shared memory in
// tiles of BC rows, two tiles of BC x DMAX (16 KB each at most, 32 KB in all).
// DMAX is the head size rounded up to 32, 64, 128 or 256 (a template parameter, so the
// register arrays have fixed sizes); columns d..DMAX-1 are zeros in every tile and register.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cuda/cuda_common.h"
#include "kernels/ops/elementwise/math.cuh"

namespace prism::kernels::cuda::flash {

template <class T, int DMAX>
struct Config {
  static constexpr int kThreads = 128;
  static constexpr int E = 16;            // elements of a row per lane
  static constexpr int G = DMAX / E;      // lanes per row: 2, 4, 8 or 16
  static constexpr int R = kThreads / G;  // rows per block
  static constexpr int BC_fit = 16384 / (DMAX * static_cast<int>(sizeof(T)));
  static constexpr int BC = BC_fit < 32 ? BC_fit : 32;  // rows per streamed tile
  static_assert(G >= 1 && G <= 32 && (G & (G - 1)) == 0, "G must be a power of two <= 32");
};

// exp and log in T's precision (one definition for every CUDA file:
// kernels/ops/elementwise/math.cuh).
using math::dexp;
using math::dlog;

template <class T>
__device__ __forceinline__ T neg_inf() {
  return -INFINITY;
}

// The sum of v over the G lanes of this lane's group (every lane of the warp must call it).
template <int G, class T>
__device__ __forceinline__ T group_sum(T v) {
#pragma unroll
  for (int off = G / 2; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

// tile[r][c] = src[b, h, r0 + r, c] for r < BC, c < DMAX; 0 past `rows` or past d.
// s: the tensor's (batch, head, row, column) strides. Consecutive threads take consecutive c:
// coalesced when the column stride is 1.
template <class T, int DMAX, int BC>
__device__ __forceinline__ void load_tile(T (*tile)[DMAX], const T* src, const int64_t* s,
                                          int64_t b, int64_t h, int64_t r0, int64_t rows,
                                          int64_t d) {
  const T* base = src + b * s[0] + h * s[1];
  for (int idx = threadIdx.x; idx < BC * DMAX; idx += blockDim.x) {
    const int r = idx / DMAX, c = idx % DMAX;
    const int64_t row = r0 + r;
    tile[r][c] = (row < rows && c < d) ? base[row * s[2] + c * s[3]] : T(0);
  }
}

// A row of a strided head tensor into this lane's registers: x[e] = scale * row[g + G e].
template <class T, int G, int E>
__device__ __forceinline__ void load_row(T (&x)[E], const T* row, int64_t col_stride, int64_t d,
                                         int g, bool ok, T scale) {
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const int64_t c = g + G * e;
    x[e] = (ok && c < d) ? scale * row[c * col_stride] : T(0);
  }
}

}  // namespace prism::kernels::cuda::flash
