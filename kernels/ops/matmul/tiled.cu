// Matmul, tiled variant: 32 x 32 tiles of A and B staged through shared memory.
//
// Idea: the naive kernel loads every operand element from global memory once per output it
// contributes to (n times for A, m times for B). Here a block of 32 x 32 threads computes a
// 32 x 32 tile of C; for each step of 32 along k it first copies a 32 x 32 tile of A and one of
// B into shared memory (each thread one element of each), waits, and then every thread reads
// its row of the A tile and its column of the B tile from shared memory:
//   C_tile += A[rows, p0:p0+32] @ B[p0:p0+32, cols]
// Global traffic drops 32x; the inner loop is now two shared-memory loads per multiply-add,
// which is what bounds this kernel (optimized.cu keeps an 8 x 8 block of C in registers
// to reuse each loaded value 8 times). Elements outside the matrices load as 0, so sizes that
// are not multiples of 32 need no special case; the strides are read as given, so a transposed
// view works (with uncoalesced loads).
// A warp is one row ty of the block: it reads one As element (a broadcast) and 32 consecutive
// Bs elements (32 banks) per step, so the tiles need no padding against bank conflicts.
// Cost: 2 m n k FLOPs per batch; bytes = A + B + C. Faster than naive, several times slower than
// optimized (`prism lab matmul --device cuda`; measured: docs/PERFORMANCE.md, "GPU (CUDA)").
#include <algorithm>

#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/ops/matmul/args.h"

namespace prism::kernels::cuda {
namespace {

constexpr int kTile = 32;

template <class T>
__global__ void __launch_bounds__(kTile* kTile)
    matmul_tiled_kernel(const MatmulArgs<T> a, int64_t tiles_n, int64_t tiles) {
  __shared__ T As[kTile][kTile];
  __shared__ T Bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;  // tx: column of C, ty: row of C
  for (int64_t b = blockIdx.y; b < a.batch; b += gridDim.y) {
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
      const int64_t i = (t / tiles_n) * kTile + ty, j = (t % tiles_n) * kTile + tx;
      const T* A = a.a + b * a.a_bs;
      const T* B = a.b + b * a.b_bs;
      T acc = 0;
      for (int64_t p0 = 0; p0 < a.k; p0 += kTile) {
        // Thread (ty, tx) loads A[i, p0 + tx] and B[p0 + ty, j]; 0 outside the matrices.
        const int64_t pa = p0 + tx, pb = p0 + ty;
        As[ty][tx] = (i < a.m && pa < a.k) ? A[i * a.a_rs + pa * a.a_cs] : T(0);
        Bs[ty][tx] = (pb < a.k && j < a.n) ? B[pb * a.b_rs + j * a.b_cs] : T(0);
        __syncthreads();
#pragma unroll
        for (int p = 0; p < kTile; ++p) acc += As[ty][p] * Bs[p][tx];
        __syncthreads();  // the tiles are overwritten by the next step
      }
      if (i < a.m && j < a.n) a.c[(b * a.m + i) * a.n + j] = acc;
    }
  }
}

template <class T>
void matmul_tiled(const MatmulArgs<T>& a) {
  if (a.batch * a.m * a.n == 0) return;
  const int64_t tiles_n = (a.n + kTile - 1) / kTile;
  const int64_t tiles = ((a.m + kTile - 1) / kTile) * tiles_n;
  // The grid's x holds 2^31 - 1 blocks, y 65535: loops in the kernel cover anything beyond.
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(tiles, 1 << 30)),
                  static_cast<unsigned>(std::min<int64_t>(a.batch, 65535)));
  matmul_tiled_kernel<T><<<grid, dim3(kTile, kTile), 0, stream()>>>(a, tiles_n, tiles);
  PRISM_CUDA_CHECK_LAUNCH("matmul_tiled_kernel");
}

}  // namespace

void register_matmul_tiled(Registry& r) {
  r.op("matmul", Device::cuda)
      .add<MatmulArgs>("tiled", VariantTag::optimized,
                       "32x32 shared-memory tiles of A and B, one output per thread",
                       &matmul_tiled<float>, &matmul_tiled<double>);
}
PRISM_CUDA_KERNELS(120, register_matmul_tiled);

}  // namespace prism::kernels::cuda
