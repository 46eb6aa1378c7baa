// Exercise 14, a typical mistake: no __syncthreads() between loading the tiles and using them.
//
// Each thread stores its one element of As and Bs, then at once reads a whole row of As and a
// whole column of Bs, elements other threads store. The 32 warps of a block run independently:
// a warp whose loads from global memory came back early reads the tiles while other warps'
// elements are still on their way, and adds stale values (the previous step's tile, or whatever
// shared memory held). Which elements are stale changes from run to run, so the error does too;
// with many tiles and a long k, some output is wrong on practically every run.
// (Only the first barrier is missing here; without the second, a fast warp would overwrite a
// tile that slower warps are still reading.)
// checker-expects: \[512,512\] @ \[512,512\] +FAIL +error
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
          // One element of each tile per thread, 0 outside the matrices.
          {
            const int r = a_by_cols ? tx : ty, c = a_by_cols ? ty : tx;  // tile row, column
            const int64_t i = i0 + r, p = p0 + c;
            As[r][c] = (i < a.m && p < a.k) ? A[i * a.a_rs + p * a.a_cs] : 0.0f;
          }
          {
            const int r = b_by_cols ? tx : ty, c = b_by_cols ? ty : tx;
            const int64_t p = p0 + r, j = j0 + c;
            Bs[r][c] = (p < a.k && j < a.n) ? B[p * a.b_rs + j * a.b_cs] : 0.0f;
          }
          // (missing: __syncthreads(), so the reads below race with other warps' stores)
#pragma unroll
          for (int p = 0; p < kTile; ++p) acc += As[ty][p] * Bs[p][tx];
          __syncthreads();  // nobody still reads the tiles the next step overwrites
        }
        const int64_t i = i0 + ty, j = j0 + tx;
        if (i < a.m && j < a.n) a.c[(b * a.m + i) * a.n + j] = acc;  // C: contiguous [batch,m,n]
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
