// Matmul, reference variant: cuBLAS SGEMM / DGEMM, the yardstick for the CUDA ladder
// (naive -> tiled -> optimized).
//
// One cublas{S,D}gemmStridedBatched call for the whole batch. cuBLAS is column-major, so
// cublas_gemm.h computes C^T = B^T A^T and reads each operand with the transpose flag and
// leading dimension its strides give: a transposed view (backward's A^T and B^T) costs no copy;
// only an operand with neither a unit row nor a unit column stride is copied contiguous first.
// float32 runs in true float32 (cuBLAS's default math mode; no TF32 tensor cores).
// Cost: 2 m n k FLOPs per batch; bytes = A + B + C. The fastest rung, near `prism machine`'s
// SGEMM roof; prism's optimized variant meets its target fraction of it at 4096 (`prism lab
// matmul --device cuda`; measured: docs/PERFORMANCE.md, "GPU (CUDA)", "The matmul ladder").
#include "kernels/cuda/cublas_gemm.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/ops/matmul/args.h"

namespace prism::kernels::cuda {
namespace {

template <class T>
void matmul_cublas(const MatmulArgs<T>& a) {
  gemm<T>(a.batch, a.m, a.n, a.k, T(1), {a.a, a.a_rs, a.a_cs, a.a_bs},
          {a.b, a.b_rs, a.b_cs, a.b_bs}, T(0), a.c, a.n, a.m * a.n);
}

}  // namespace

void register_matmul_cublas(Registry& r) {
  r.op("matmul", Device::cuda)
      .add<MatmulArgs>("reference", VariantTag::reference,
                       "cuBLAS strided-batched GEMM (C^T = B^T A^T), transposes read in place",
                       &matmul_cublas<float>, &matmul_cublas<double>);
}
PRISM_CUDA_KERNELS(140, register_matmul_cublas);

}  // namespace prism::kernels::cuda
