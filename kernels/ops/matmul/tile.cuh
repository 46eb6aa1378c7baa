// The register-blocked GEMM tile shared by matmul's "optimized" variant and the fused
// linear_gelu: C = A @ B with an epilogue that decides what is written (C itself, or
// gelu(C + bias)).
//
// Blocking (the classic SIMT SGEMM recipe):
//   a block of 256 threads owns a 128 x 128 tile of C and walks k in steps of 8;
//   per step it stages A[128 x 8] and B[8 x 128] in shared memory (each thread loads 4 + 4
//   elements, as one float4 each when the operand's layout allows);
//   each thread accumulates an 8 x 8 micro-tile of C in registers: per k it reads 8 values of
//   A and 8 of B from shared memory (four float4 loads) and does 64 FMAs with them, so every
//   shared-memory load feeds 8 FMAs (the tiled kernel: 1 FMA per 2 loads).
// The thread's 8 rows are two groups of 4 (ty*4 and 64 + ty*4), and its 8 columns likewise
// (tx*4 and 64 + tx*4): neighbouring threads read neighbouring float4 of the B tile, which
// spreads a warp's loads over all 32 banks.
// Double buffering: two stages of shared memory; while the block computes on one, each
// thread already holds the next step's global loads in registers and stores them to the other
// stage afterwards, so one __syncthreads per step separates every write from every read of a
// stage (the stage written at step t was last read at step t - 1, before that step's barrier).
// Tiles are visited in groups of 8 tile rows (tile t -> (row, col) down a group first), so the
// blocks running at one time share panels of A and B in L2.
//
// Layouts. A (m x k) is loaded 4 elements along k when it is row-major (unit column stride),
// 4 along m when it is column-major (a transposed view); B (k x n) 4 along n when row-major, 4
// along k when column-major (a Linear layer's weight used as W^T). A float4 load needs a 16-byte
// aligned address: the host checks base pointer, row/batch strides (multiples of 4) and picks
// the vector path per operand; anything else (odd strides, float64) takes the same kernel with
// four guarded scalar loads. Elements outside the matrices load as 0, so every size works;
// edge tiles take the scalar path for the elements that stick out.
// Shared memory: 2 stages x (8 x 132 + 8 x 132) x 4 bytes = 16.5 KB (33 KB for float64); rows
// are padded to 132 so the transposing stores (As[k][m] from a row-major A) do not collide.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/ops/matmul/args.h"
#include "kernels/cuda/cuda_common.h"

namespace prism::kernels::cuda::tile {

constexpr int kBM = 128, kBN = 128, kBK = 8;
constexpr int kThreads = 256;  // 16 x 16 threads, 8 x 8 outputs each
constexpr int kPad = 4;        // keeps float4 alignment of rows (132 * 4 bytes = 33 x 16)
constexpr int kGroupRows = 8;  // tile rows per L2 group

// How an operand is loaded: 4 elements along its contiguous dim with one float4 (row or col),
// or 4 guarded scalar loads along k (strided; also every float64 operand).
enum Layout : int { kRow = 0, kCol = 1, kStrided = 2 };

template <class T>
constexpr bool kIsFloat = std::is_same_v<T, float>;

// Four elements p[0], p[s], p[2s], p[3s], of which the first `valid` exist (0 beyond); one
// float4 load when `vec` (then s == 1 and p is 16-byte aligned).
template <class T, bool Vec>
__device__ __forceinline__ void load4(const T* p, int64_t s, int64_t valid, T (&r)[4]) {
  if constexpr (Vec && kIsFloat<T>) {
    if (valid >= 4) {
      const float4 v = *reinterpret_cast<const float4*>(p);
      r[0] = v.x, r[1] = v.y, r[2] = v.z, r[3] = v.w;
      return;
    }
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) r[e] = e < valid ? p[e * s] : T(0);
}

// Thread tid's share of the A tile [kBM x kBK] at (m0, k0) into registers.
template <class T, int LA>
__device__ __forceinline__ void load_a(const MatmulArgs<T>& g, const T* A, int64_t m0, int64_t k0,
                                       int tid, T (&r)[4]) {
  if constexpr (LA == kCol) {  // 4 consecutive rows of one column k
    const int64_t gk = k0 + (tid >> 5), gi = m0 + (tid & 31) * 4;
    const int64_t valid = gk < g.k ? std::min<int64_t>(4, g.m - gi) : 0;
    load4<T, true>(A + gk * g.a_cs + gi * g.a_rs, g.a_rs, valid, r);
  } else {  // 4 consecutive k of one row
    const int64_t gi = m0 + (tid >> 1), gk = k0 + (tid & 1) * 4;
    const int64_t valid = gi < g.m ? std::min<int64_t>(4, g.k - gk) : 0;
    load4<T, LA == kRow>(A + gi * g.a_rs + gk * g.a_cs, g.a_cs, valid, r);
  }
}

// ... and stored k-major, As[k][m], so the compute loop reads rows of m as float4.
template <class T, int LA>
__device__ __forceinline__ void store_a(T (*As)[kBM + kPad], int tid, const T (&r)[4]) {
  if constexpr (LA == kCol) {
    const int kk = tid >> 5, i = (tid & 31) * 4;
#pragma unroll
    for (int e = 0; e < 4; ++e) As[kk][i + e] = r[e];
  } else {
    const int i = tid >> 1, kk = (tid & 1) * 4;
#pragma unroll
    for (int e = 0; e < 4; ++e) As[kk + e][i] = r[e];
  }
}

// Thread tid's share of the B tile [kBK x kBN] at (k0, n0).
template <class T, int LB>
__device__ __forceinline__ void load_b(const MatmulArgs<T>& g, const T* B, int64_t k0, int64_t n0,
                                       int tid, T (&r)[4]) {
  if constexpr (LB == kCol) {  // 4 consecutive k of one column j
    const int64_t gj = n0 + (tid >> 1), gk = k0 + (tid & 1) * 4;
    const int64_t valid = gj < g.n ? std::min<int64_t>(4, g.k - gk) : 0;
    load4<T, true>(B + gk * g.b_rs + gj * g.b_cs, g.b_rs, valid, r);
  } else {  // 4 consecutive columns of one row k
    const int64_t gk = k0 + (tid >> 5), gj = n0 + (tid & 31) * 4;
    const int64_t valid = gk < g.k ? std::min<int64_t>(4, g.n - gj) : 0;
    load4<T, LB == kRow>(B + gk * g.b_rs + gj * g.b_cs, g.b_cs, valid, r);
  }
}

template <class T, int LB>
__device__ __forceinline__ void store_b(T (*Bs)[kBN + kPad], int tid, const T (&r)[4]) {
  if constexpr (LB == kCol) {
    const int j = tid >> 1, kk = (tid & 1) * 4;
#pragma unroll
    for (int e = 0; e < 4; ++e) Bs[kk + e][j] = r[e];
  } else {
    const int kk = tid >> 5, j = (tid & 31) * 4;
#pragma unroll
    for (int e = 0; e < 4; ++e) Bs[kk][j + e] = r[e];
  }
}

// Four consecutive shared-memory values (16-byte aligned for float).
template <class T>
__device__ __forceinline__ void read4(const T* p, T* r) {
  if constexpr (kIsFloat<T>) {
    const float4 v = *reinterpret_cast<const float4*>(p);
    r[0] = v.x, r[1] = v.y, r[2] = v.z, r[3] = v.w;
  } else {
#pragma unroll
    for (int e = 0; e < 4; ++e) r[e] = p[e];
  }
}

// The kernel. `epi(b, i, j0, v)` writes the four results v[0..3] of row i, columns j0..j0+3 of
// batch entry b (it checks j0 + e < n itself); it is called only for rows i < m.
template <class T, int LA, int LB, class Epilogue>
__global__ void __launch_bounds__(kThreads, kIsFloat<T> ? 2 : 1)
    gemm_tile_kernel(const MatmulArgs<T> g, const Epilogue epi, int64_t tiles_m, int64_t tiles_n) {
  __shared__ __align__(16) T As[2][kBK][kBM + kPad];
  __shared__ __align__(16) T Bs[2][kBK][kBN + kPad];
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const int64_t tiles = tiles_m * tiles_n;
  const int64_t ktiles = (g.k + kBK - 1) / kBK;
  for (int64_t b = blockIdx.y; b < g.batch; b += gridDim.y) {
    const T* A = g.a + b * g.a_bs;
    const T* B = g.b + b * g.b_bs;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
      // Grouped order: kGroupRows tile rows at a time, down each column of the group.
      const int64_t per_group = kGroupRows * tiles_n, group = t / per_group;
      const int64_t first = group * kGroupRows;
      const int64_t rows_here = std::min<int64_t>(tiles_m - first, kGroupRows);
      const int64_t tm = first + (t % per_group) % rows_here, tn = (t % per_group) / rows_here;
      const int64_t m0 = tm * kBM, n0 = tn * kBN;

      T acc[8][8];
#pragma unroll
      for (int i = 0; i < 8; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = T(0);
      }
      T ra[4], rb[4];
      load_a<T, LA>(g, A, m0, 0, tid, ra);
      load_b<T, LB>(g, B, 0, n0, tid, rb);
      store_a<T, LA>(As[0], tid, ra);
      store_b<T, LB>(Bs[0], tid, rb);
      __syncthreads();
      for (int64_t kt = 0; kt < ktiles; ++kt) {
        const int s = static_cast<int>(kt & 1);
        const bool more = kt + 1 < ktiles;
        if (more) {  // the next step's loads are in flight during this step's FMAs
          load_a<T, LA>(g, A, m0, (kt + 1) * kBK, tid, ra);
          load_b<T, LB>(g, B, (kt + 1) * kBK, n0, tid, rb);
        }
#pragma unroll
        for (int kk = 0; kk < kBK; ++kk) {
          T af[8], bf[8];
          read4(&As[s][kk][ty * 4], af);
          read4(&As[s][kk][64 + ty * 4], af + 4);
          read4(&Bs[s][kk][tx * 4], bf);
          read4(&Bs[s][kk][64 + tx * 4], bf + 4);
#pragma unroll
          for (int i = 0; i < 8; ++i) {
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] += af[i] * bf[j];
          }
        }
        if (more) {
          store_a<T, LA>(As[s ^ 1], tid, ra);
          store_b<T, LB>(Bs[s ^ 1], tid, rb);
        }
        __syncthreads();
      }
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int64_t gi = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
        if (gi >= g.m) continue;
        epi(b, gi, n0 + tx * 4, acc[i]);
        epi(b, gi, n0 + 64 + tx * 4, acc[i] + 4);
      }
    }
  }
}

// Which loader an operand X [rows, cols] (row stride rs, column stride cs) can use: float4
// loads need float, a unit stride along the loaded dim, and 16-byte alignment of every row.
template <class T>
int layout_of(const T* p, int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t bs) {
  if (!kIsFloat<T>) return kStrided;
  const bool aligned = reinterpret_cast<uintptr_t>(p) % 16 == 0 && bs % 4 == 0;
  if (!aligned) return kStrided;
  if (cs == 1 && (rows == 1 || rs % 4 == 0)) return kRow;
  if (rs == 1 && (cols == 1 || cs % 4 == 0)) return kCol;
  return kStrided;
}

template <class T, int LA, int LB, class Epilogue>
void launch_tile(const MatmulArgs<T>& g, const Epilogue& epi, const char* name) {
  const int64_t tiles_m = (g.m + kBM - 1) / kBM, tiles_n = (g.n + kBN - 1) / kBN;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(tiles_m * tiles_n, int64_t{1} << 30)),
                  static_cast<unsigned>(std::min<int64_t>(g.batch, 65535)));
  gemm_tile_kernel<T, LA, LB, Epilogue><<<grid, kThreads, 0, stream()>>>(g, epi, tiles_m, tiles_n);
  PRISM_CUDA_CHECK_LAUNCH(name);
}

// Runs C = A @ B (g.c is ignored: the epilogue writes the result) with the loaders the
// operands allow. float64 always takes the scalar loaders (one instantiation).
template <class T, class Epilogue>
void run_gemm_tile(const MatmulArgs<T>& g, const Epilogue& epi, const char* name) {
  if (g.batch * g.m * g.n == 0) return;
  if constexpr (!kIsFloat<T>) {
    launch_tile<T, kStrided, kStrided>(g, epi, name);
  } else {
    const int la = layout_of(g.a, g.m, g.k, g.a_rs, g.a_cs, g.a_bs);
    const int lb = layout_of(g.b, g.k, g.n, g.b_rs, g.b_cs, g.b_bs);
    auto with_a = [&](auto la_c) {
      constexpr int LA = decltype(la_c)::value;
      switch (lb) {
        case kRow:
          return launch_tile<T, LA, kRow>(g, epi, name);
        case kCol:
          return launch_tile<T, LA, kCol>(g, epi, name);
        default:
          return launch_tile<T, LA, kStrided>(g, epi, name);
      }
    };
    switch (la) {
      case kRow:
        return with_a(std::integral_constant<int, kRow>{});
      case kCol:
        return with_a(std::integral_constant<int, kCol>{});
      default:
        return with_a(std::integral_constant<int, kStrided>{});
    }
  }
}

// The plain epilogue: C contiguous [batch, m, n], stored as float4 when n allows it.
template <class T>
struct StoreC {
  T* c;
  int64_t m, n;
  bool vec;  // float, n % 4 == 0 and c 16-byte aligned
  __device__ __forceinline__ void operator()(int64_t b, int64_t i, int64_t j0, const T* v) const {
    T* row = c + (b * m + i) * n;
    if constexpr (kIsFloat<T>) {
      if (vec && j0 + 3 < n) {
        *reinterpret_cast<float4*>(row + j0) = make_float4(v[0], v[1], v[2], v[3]);
        return;
      }
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (j0 + e < n) row[j0 + e] = v[e];
    }
  }
};

template <class T>
StoreC<T> store_c(T* c, int64_t m, int64_t n) {
  return {c, m, n, kIsFloat<T> && n % 4 == 0 && reinterpret_cast<uintptr_t>(c) % 16 == 0};
}

}  // namespace prism::kernels::cuda::tile
