// The register-blocked microkernel of the optimized matmul: an MR x NR tile of C held in vector
// registers while it accumulates the product of one packed A sliver (MR rows) and one packed B
// sliver (NR columns) over kc steps.
//
// One step p of the loop is an outer product: load NR values of B's row p (NV vectors), then for
// each of the MR rows broadcast A[i][p] and do NV fused multiply-adds:
//
//   for p < kc:  b[0..NV) = B[p][0..NR)            NV vector loads
//                for i < MR:  a = A[i][p]           1 broadcast load
//                             acc[i][v] += a * b[v] NV FMAs
//
// so MR * NV FMAs per MR + NV loads. The sizes follow from the register file: MR * NV
// accumulators + NV vectors of B + 1 broadcast must fit, so with NV = 2 the tallest tile is
// MR = (registers - 3) / 2: 14 x 32 floats on AVX-512 (28 accumulators of 32 zmm registers),
// 6 x 16 on AVX2 (12 of 16 ymm). Zen 4 retires one 512-bit FMA per cycle with a latency of 4,
// so 4 independent accumulators would keep the FMA units busy; the other 24 buy reuse: each B
// vector loaded serves MR FMAs and each broadcast NV, so a step needs 16 loads for 28 FMAs, well
// within the two loads per cycle the core can issue. Measured on 2048^3 with kc = 512: 14 x 32,
// 12 x 32, 8 x 48 and 6 x 64 tiles all ran as fast, within the noise (docs/PERFORMANCE.md,
// "Matmul ladder").
// Both slivers are packed contiguously in the order the loop reads them (kernels/cpu/
// kernels/ops/matmul/pack.h), so the loop walks two arrays with unit stride and no index
// arithmetic.
//
// Edges: a tile cut by the bottom or right edge of C runs a smaller instance of the same
// kernel, R <= MR rows (rounded up to even) and NV' <= NV vectors, so a product with m = 128
// (9 tiles of 14 rows and one of 2) or n = 10 (one vector of 16) does not pay for full tiles.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "kernels/ops/matmul/simd.h"

namespace prism::kernels::cpu {

// Tile shape for element type T on the instruction set being compiled for.
template <class T>
struct MicroTile {
  static constexpr int nv = 2;                                 // vectors per tile row
  static constexpr int lanes = simd::Vec<T>::lanes;            // elements per vector
  static constexpr int nr = nv * lanes;                        // tile columns
  static constexpr int mr = (simd::kRegisters - nv - 1) / nv;  // tile rows
};

// C[0:R, 0:NV*lanes] = (or +=, when accumulate) Ap * Bp, with Ap the packed kc x mr sliver of A
// (element (i, p) at ap[p * mr + i]; only its first R rows are used) and Bp a kc x nr sliver of
// B whose row p starts at bp + p * b_step (only its first NV vectors are used): b_step = nr for
// a packed sliver, B's row stride for one read in place (optimized.cpp, direct B). C has
// row stride ldc and unit column stride.
template <class T, int R, int NV>
inline void microkernel(int64_t kc, const T* __restrict ap, const T* __restrict bp, int64_t b_step,
                        T* __restrict c, int64_t ldc, bool accumulate) {
  using S = simd::Vec<T>;
  using V = typename S::V;
  constexpr int MR = MicroTile<T>::mr, L = MicroTile<T>::lanes;

  // The tile of C is read (or written) only after the loop; start bringing it in now.
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    __builtin_prefetch(c + i * ldc, 1);
    __builtin_prefetch(c + i * ldc + NV * L - 1, 1);
  }

  V acc[R][NV];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = S::zero();
  }

#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    V b[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) b[v] = S::load(bp + v * L);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const V a = S::broadcast(ap[i]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = S::fma(a, b[v], acc[i][v]);
    }
    ap += MR;
    bp += b_step;
  }

#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      T* dst = c + i * ldc + v * L;
      S::store(dst, accumulate ? S::add(S::load(dst), acc[i][v]) : acc[i][v]);
    }
  }
}

template <class T>
using MicrokernelFn = void (*)(int64_t, const T*, const T*, int64_t, T*, int64_t, bool);

// The edge kernels, indexed by (R / 2 - 1) * nv + (NV - 1) for R = 2, 4, ..., NV = 1 .. nv.
template <class T, size_t... I>
constexpr auto make_edge_kernels(std::index_sequence<I...>) {
  constexpr int MR = MicroTile<T>::mr, NV = MicroTile<T>::nv;
  return std::array<MicrokernelFn<T>, sizeof...(I)>{
      &microkernel<T, std::min<int>(MR, 2 * (I / NV) + 2), I % NV + 1>...};
}

template <class T>
inline constexpr auto kEdgeKernels =
    make_edge_kernels<T>(std::make_index_sequence<(MicroTile<T>::mr + 1) / 2 * MicroTile<T>::nv>());

// The same update for any tile of C: C has row stride c_rs and column stride c_cs, and the tile
// may be cut by the edge of C (rows <= mr, cols <= nr). A full tile of a C with unit column
// stride goes straight to the full-size microkernel. Any other runs the smallest kernel that
// covers rows x cols into a scratch tile, and only the rows x cols part that exists is copied
// to C. The packed slivers are zero-padded, so the extra rows and columns computed are zeros
// that are never stored. B's sliver has rows b_step apart (see microkernel); one read in place
// must hold the vectors' whole width (cols == nr), since nothing pads it.
template <class T>
inline void tile_update(int64_t kc, const T* ap, const T* bp, int64_t b_step, T* c, int64_t c_rs,
                        int64_t c_cs, int64_t rows, int64_t cols, bool accumulate) {
  constexpr int MR = MicroTile<T>::mr, NR = MicroTile<T>::nr, NV = MicroTile<T>::nv;
  constexpr int L = MicroTile<T>::lanes;
  if (rows == MR && cols == NR && c_cs == 1) {
    microkernel<T, MR, NV>(kc, ap, bp, b_step, c, c_rs, accumulate);
    return;
  }
  alignas(64) T scratch[MR * NR];
  const int64_t row_pairs = (rows + 1) / 2, vectors = (cols + L - 1) / L;
  kEdgeKernels<T>[(row_pairs - 1) * NV + (vectors - 1)](kc, ap, bp, b_step, scratch, NR, false);
  for (int64_t i = 0; i < rows; ++i) {
    T* dst = c + i * c_rs;
    const T* src = scratch + i * NR;
    if (accumulate) {
      for (int64_t j = 0; j < cols; ++j) dst[j * c_cs] += src[j];
    } else {
      for (int64_t j = 0; j < cols; ++j) dst[j * c_cs] = src[j];
    }
  }
}

}  // namespace prism::kernels::cpu
