// Exercise 14, solution: C = A @ B on the GPU in 32 x 32 tiles staged through shared memory.
//
//   C[b, i, j] = sum_p A[b, i, p] B[b, p, j]
//
// A block of 32 x 32 threads owns a 32 x 32 tile of C, one output per thread. It walks k in
// steps of 32; at each step every thread copies one element of the A tile (rows i0.., columns
// p0..) and one of the B tile (rows p0.., columns j0..) from global into shared memory, the
// block waits (__syncthreads), and every thread then reads its row of the A tile and its column
// of the B tile from shared memory:
//   acc += sum_{p < 32} As[ty][p] * Bs[p][tx]
// and the block waits again before the next step overwrites the tiles. Each element of A and B
// is read from global memory once per tile instead of once per output: 32 times less traffic
// than the naive kernel (kernels/ops/matmul/naive.cu).
//
// Coalescing. The 32 threads of a warp have the same ty and tx = 0..31. Loading As[ty][tx] =
// A[i0 + ty, p0 + tx] makes a warp read 32 consecutive addresses when A's column stride is 1
// (one 128-byte transaction), but 32 addresses a_rs apart for a transposed A (a_rs = 1, a_cs =
// m: 32 transactions). For that layout the roles swap: thread (ty, tx) loads A[i0 + tx, p0 + ty]
// into As[tx][ty], consecutive in memory again. The same for B. Which mapping is a uniform
// branch (the same for every thread of the launch), so it costs nothing.
// Bank conflicts. Shared memory has 32 banks of 4 bytes: As[tx][ty] for tx = 0..31 is one
// column, 32 floats a row apart; with rows of 32 floats they all sit in one bank (a 32-way
// conflict). Rows of 33 floats put them in 32 different banks. The compute loop reads
// As[ty][p] (one address for the whole warp: a broadcast) and Bs[p][tx] (32 consecutive:
// conflict-free either way).
// Edges. Elements outside the matrices load as 0 (they add nothing), and only threads with
// i < m and j < n store: every size works, 1 and primes included.
// Cost: 2 m n k FLOPs per batch entry. Bound by shared memory: two shared loads per multiply-add.
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
          __syncthreads();  // every element of both tiles is in place
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
