// Exercise 14, a typical mistake: no bounds checks on partial tiles.
//
// Written as if m, n and k were multiples of the tile: every thread loads its A and B elements
// and stores its C element unconditionally. When a size is not a multiple of 32, the threads of
// the last tile reach past the matrices: they read elements of other rows (or past the end of
// the buffer) into the tiles, and store C[i][j] for j >= n into the next row's elements, or for
// i >= m past the end of C. The checker runs the kernel on an output with guard zones around
// it: the first case, 1 x 1, already writes 62 elements past the end of C.
// checker-expects: \[1,1\] @ \[1,1\] +FAIL
#include <algorithm>
#include <cstdint>

#include "exercises/14_cuda_matmul_tiled/cuda_exercise.h"
#include "kernels/ops/matmul/args.h"

using prism::kernels::MatmulArgs;

namespace {

constexpr int kTile = 32;  // 32 x 32 = 1024 threads per block (the most a block may have)

__global__ void matmul_tiled_kernel(const MatmulArgs<float> a, int64_t tiles_m, int64_t tiles_n) {
  __shared__ float As[kTile][kTile + 1];
  __shared__ float Bs[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  // A transposed view (unit row stride) is read down its columns; see the top of the file.
  const bool a_by_cols = a.a_rs == 1 && a.a_cs != 1;
  const bool b_by_cols = a.b_rs == 1 && a.b_cs != 1;
  for (int64_t b = blockIdx.z; b < a.batch; b += gridDim.z) {
    const float* A = a.a + b * a.a_bs;
    const float* B = a.b + b * a.b_bs;
    for (int64_t tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
      for (int64_t tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
        const int64_t i0 = tm * kTile, j0 = tn * kTile;
        float acc = 0.0f;
        for (int64_t p0 = 0; p0 < a.k; p0 += kTile) {
          // One element of each tile per thread.
          {
            const int r = a_by_cols ? tx : ty, c = a_by_cols ? ty : tx;  // tile row, column
            const int64_t i = i0 + r, p = p0 + c;
            As[r][c] = A[i * a.a_rs + p * a.a_cs];  // no check: past the edge of A
          }
          {
            const int r = b_by_cols ? tx : ty, c = b_by_cols ? ty : tx;
            const int64_t p = p0 + r, j = j0 + c;
            Bs[r][c] = B[p * a.b_rs + j * a.b_cs];  // no check: past the edge of B
          }
          __syncthreads();  // every element of both tiles is in place
#pragma unroll
          for (int p = 0; p < kTile; ++p) acc += As[ty][p] * Bs[p][tx];
          __syncthreads();  // nobody still reads the tiles the next step overwrites
        }
        const int64_t i = i0 + ty, j = j0 + tx;
        a.c[(b * a.m + i) * a.n + j] = acc;  // no check: past the edge of C
      }
    }
  }
}

}  // namespace

void my_cuda_matmul_tiled(const MatmulArgs<float>& a) {
  if (a.batch == 0 || a.m == 0 || a.n == 0) return;
  const int64_t tiles_m = (a.m + kTile - 1) / kTile, tiles_n = (a.n + kTile - 1) / kTile;
  // Grid y and z hold at most 65535 blocks; the kernel's loops cover anything beyond.
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(tiles_n, 65535)),
                  static_cast<unsigned>(std::min<int64_t>(tiles_m, 65535)),
                  static_cast<unsigned>(std::min<int64_t>(a.batch, 65535)));
  matmul_tiled_kernel<<<grid, dim3(kTile, kTile)>>>(a, tiles_m, tiles_n);
}

PRISM_REGISTER_CUDA_MATMUL(my_cuda_matmul_tiled);
