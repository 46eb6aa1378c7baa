// linear_gelu, fused variant: the bias and the GELU applied to each block of the product while
// it is still in cache.
//
// Idea: cut the output [rows, out] into tiles of kTileRows x kTileCols (256 x 256: 256 KB in
// float32, inside the 1 MB L2). For each tile, Eigen computes the block of x w^T into its
// place in the output, and the same thread immediately runs z = block + b, y = gelu(z) over
// it: the block goes from the GEMM to L2 to the GELU and out to memory once, instead of being
// written by the GEMM and then read and written again by two more passes. Tiles are
// independent, so large products spread them over OpenMP threads (each tile's GEMM
// single-threaded), and the GELU runs in parallel with them. The price: Eigen packs each block
// of x and w once per tile instead of once per panel of one large GEMM (256 x 256 tiles keep
// that cost small, measured apart: docs/PERFORMANCE.md, "Attention and linear+GELU (CPU)").
// In grad mode the tile goes to z (pre-activation, kept for backward) and y = gelu(z) is
// written beside it: two output buffers; without grad only y.
// Cost: the same as unfused: 2 rows out in FLOPs + 9 per output element.
// Measured (same section): at 1 thread fusing bought no time, a little slower than unfused: with
// glibc's scalar tanhf the GELU was compute-bound, so the two saved memory passes were worth
// little; and since the vectorised tanh made the GELU a cheap pass, the tiling costs more than
// the pass it saves. At 2 threads fused is about twice unfused, whose bias and GELU passes run
// on one thread.
#include <omp.h>

#include <algorithm>

#include "kernels/cpu/eigen_threads.h"
#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/elementwise/fast.h"
#include "kernels/ops/linear_gelu/gemm.h"
#include "kernels/ops/linear_gelu/args.h"

namespace prism::kernels::cpu {
namespace {

constexpr int64_t kTileRows = 256;
constexpr int64_t kTileCols = 256;

template <class T>
void linear_gelu_tile(const LinearGeluArgs<T>& a, int64_t r0, int64_t c0) {
  const int64_t nr = std::min(kTileRows, a.rows - r0), nc = std::min(kTileCols, a.out - c0);
  T* z = (a.z ? a.z : a.y) + r0 * a.out + c0;
  T* y = a.y + r0 * a.out + c0;
  linear_block(a, r0, nr, c0, nc, z, a.out);
  const fast::Gelu gelu;  // the vectorised GELU prism::gelu runs (kernels/ops/elementwise/fast.h)
  for (int64_t r = 0; r < nr; ++r) {
    T* zr = z + r * a.out;
    T* yr = y + r * a.out;
    if (a.bias) {
      const T* b = a.bias + c0;
      for (int64_t c = 0; c < nc; ++c) zr[c] += b[c];
    }
#pragma omp simd
    for (int64_t c = 0; c < nc; ++c) yr[c] = gelu(zr[c]);
  }
}

template <class T>
void linear_gelu_fused(const LinearGeluArgs<T>& a) {
  Eigen::setNbThreads(1);  // each tile's GEMM stays on the thread that applies its GELU
  const int64_t row_tiles = (a.rows + kTileRows - 1) / kTileRows;
  const int64_t col_tiles = (a.out + kTileCols - 1) / kTileCols;
  const int64_t tiles = row_tiles * col_tiles;
  // One row (a decoding step) is bound by reading w and splits sooner (parallel.h).
  const int64_t macs = a.rows * a.out * a.in;
  const int threads = static_cast<int>(std::min<int64_t>(
      tiles, a.rows == 1 ? threads_for_macs(macs, kParallelGemvMacs, kGemvMacsPerThread)
                         : threads_for_macs(macs, kParallelGemmMacs, kGemmMacsPerThread)));
  note_threads(threads);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t t = 0; t < tiles; ++t) {
    // Down a column of tiles first: consecutive tiles share the weight block, which stays in L2.
    linear_gelu_tile(a, (t % row_tiles) * kTileRows, (t / row_tiles) * kTileCols);
  }
}

}  // namespace

void register_linear_gelu_fused(Registry& r) {
  r.op("linear_gelu", Device::cpu)
      .add<LinearGeluArgs>("fused", VariantTag::fused,
                           "256x256 output tiles: GEMM, bias and GELU while the tile is in L2",
                           &linear_gelu_fused<float>, &linear_gelu_fused<double>);
}
PRISM_CPU_KERNELS(280, register_linear_gelu_fused);

}  // namespace prism::kernels::cpu
