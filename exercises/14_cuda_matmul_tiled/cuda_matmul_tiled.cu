// Exercise 14: matmul on the GPU in tiles staged through shared memory. The task is in
// README.md, next to this file.
//
// Your kernel receives a MatmulArgs<float> (kernels/args.h) whose pointers are GPU memory:
//   a.a, a.b    A (m x k) and B (k x n): A[i][p] is a.a[i * a.a_rs + p * a.a_cs], B[p][j] is
//               a.b[p * a.b_rs + j * a.b_cs]; a transposed view just has other strides
//   a.c         C (m x n), contiguous: C[i][j] is a.c[i * a.n + j]
//   a.batch     how many products: matrix b of the batch starts at a.a + b * a.a_bs,
//               a.b + b * a.b_bs and a.c + b * a.m * a.n (a_bs may be 0: A shared by the batch)
// and computes C[b][i][j] = sum_{p < k} A[b][i][p] * B[b][p][j].
//
// The launch is written: a block of kTile x kTile threads per kTile x kTile tile of C, thread
// (threadIdx.y, threadIdx.x) owning C[i0 + threadIdx.y][j0 + threadIdx.x], a grid of tiles
// (x along n, y along m, z along the batch). Write the kernel: for each step of kTile along k,
// load a tile of A and one of B into shared memory, __syncthreads(), accumulate, __syncthreads().
//
// Check it:  build/prism check cuda_matmul_tiled   (needs a CUDA GPU)
#include <algorithm>
#include <cstdint>

#include "exercises/14_cuda_matmul_tiled/cuda_exercise.h"
#include "kernels/ops/matmul/args.h"

using prism::kernels::MatmulArgs;

namespace {

constexpr int kTile = 32;  // 32 x 32 = 1024 threads per block (the most a block may have)

// [[maybe_unused]]: the empty body does not read its parameters yet.
__global__ void matmul_tiled_kernel([[maybe_unused]] const MatmulArgs<float> a,
                                    [[maybe_unused]] int64_t tiles_m,
                                    [[maybe_unused]] int64_t tiles_n) {
  // TODO(exercise): declare the two tiles, __shared__ float As[kTile][kTile] and Bs likewise;
  // then, for the tile (blockIdx.y, blockIdx.x) of batch entry blockIdx.z (grid-stride loops
  // over tiles_m, tiles_n and a.batch when the grid is smaller), walk k in steps of kTile:
  // load A[i0 + ty][p0 + tx] and B[p0 + ty][j0 + tx] (0 outside the matrices), sync, add
  // As[ty][p] * Bs[p][tx] for p < kTile, sync. Store C only where i < m and j < n. When the
  // checker passes, delete this TODO comment: ctest then checks your kernel instead of
  // expecting this empty one to fail.
}

}  // namespace

void my_cuda_matmul_tiled(const MatmulArgs<float>& a) {
  if (a.batch == 0 || a.m == 0 || a.n == 0) return;
  const int64_t tiles_m = (a.m + kTile - 1) / kTile, tiles_n = (a.n + kTile - 1) / kTile;
  // Grid y and z hold at most 65535 blocks; the kernel's loops must cover anything beyond.
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(tiles_n, 65535)),
                  static_cast<unsigned>(std::min<int64_t>(tiles_m, 65535)),
                  static_cast<unsigned>(std::min<int64_t>(a.batch, 65535)));
  matmul_tiled_kernel<<<grid, dim3(kTile, kTile)>>>(a, tiles_m, tiles_n);
}

PRISM_REGISTER_CUDA_MATMUL(my_cuda_matmul_tiled);
