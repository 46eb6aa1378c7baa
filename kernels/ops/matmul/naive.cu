// Matmul, naive variant on the GPU: one thread per output element, a plain loop over k.
//
//   C[b, i, j] = sum_p A[b, i, p] B[b, p, j]
//
// Idea: the CPU's triple loop with the two outer loops turned into threads. Consecutive threads
// take consecutive j, so their B reads (row-major B) and C writes are coalesced, and all the
// threads of a warp read the same A element (a broadcast). Every multiply-add still loads both
// operands from global memory (L1/L2 catch most of it), so this is bound by memory traffic, far
// below the FMA units' rate: the shared-memory tiles of kernels/ops/matmul/tiled.cu are the next
// step. A grid-stride loop over the flattened (b, i, j) index handles any size, with 64-bit
// indices. Cost: 2 m n k FLOPs per batch; bytes = A + B + C. The slowest rung, and far slower
// still with B transposed, whose reads are then uncoalesced (`prism lab matmul --device cuda`;
// measured: docs/PERFORMANCE.md, "GPU (CUDA)", "The matmul ladder").
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/ops/matmul/args.h"

namespace prism::kernels::cuda {
namespace {

template <class T>
__global__ void matmul_naive_kernel(const MatmulArgs<T> a) {
  const int64_t total = a.batch * a.m * a.n;
  for (int64_t idx = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += int64_t{gridDim.x} * blockDim.x) {
    const int64_t j = idx % a.n, i = (idx / a.n) % a.m, b = idx / (a.n * a.m);
    const T* A = a.a + b * a.a_bs + i * a.a_rs;
    const T* B = a.b + b * a.b_bs + j * a.b_cs;
    T acc = 0;
    for (int64_t p = 0; p < a.k; ++p) acc += A[p * a.a_cs] * B[p * a.b_rs];
    a.c[idx] = acc;  // C is contiguous [batch, m, n]: idx is its offset
  }
}

template <class T>
void matmul_naive(const MatmulArgs<T>& a) {
  const int64_t total = a.batch * a.m * a.n;
  if (total == 0) return;
  matmul_naive_kernel<T><<<grid_for(total), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("matmul_naive_kernel");
}

}  // namespace

void register_matmul_naive(Registry& r) {
  r.op("matmul", Device::cuda)
      .add<MatmulArgs>("naive", VariantTag::naive, "one thread per output element, k loop",
                       &matmul_naive<float>, &matmul_naive<double>);
}
PRISM_CUDA_KERNELS(110, register_matmul_naive);

}  // namespace prism::kernels::cuda
