// Matmul, optimized variant: register-blocked tiles, 128 x 128 x 8 through shared memory,
// an 8 x 8 micro-tile of C per thread, float4 loads where the strides allow, double buffered.
//
// Idea: the tiled kernel (tiled.cu) does one FMA per two shared-memory loads, so the
// shared-memory pipe, not the FMA units, sets its pace. Giving each thread an 8 x 8 block of C
// in registers turns 16 loaded values into 64 FMAs (4 FMAs per load), and staging 128 x 8
// panels of A and B per step reuses each global load 128 times. The kernel itself lives in
// kernels/ops/matmul/tile.cuh, shared with the fused linear_gelu (which swaps this file's plain
// store for a bias + GELU epilogue). Operands are read through their strides: a row-major or a
// transposed (column-major) operand gets float4 loads along its contiguous dim; anything else takes
// guarded scalar loads (same kernel, same tiles). float64 runs the scalar path. Cost: 2 m n k FLOPs
// per batch; bytes = A + B + C. Target: >= 70 % of cuBLAS SGEMM at n = 4096, met (`prism lab
// matmul --device cuda`; measured: docs/PERFORMANCE.md, "GPU (CUDA)", "The matmul ladder").
#include "kernels/cuda/kernel_list.h"
#include "kernels/ops/matmul/tile.cuh"
#include "kernels/ops/matmul/args.h"

namespace prism::kernels::cuda {
namespace {

template <class T>
void matmul_optimized(const MatmulArgs<T>& a) {
  tile::run_gemm_tile(a, tile::store_c(a.c, a.m, a.n), "gemm_tile_kernel (matmul optimized)");
}

}  // namespace

void register_matmul_optimized(Registry& r) {
  r.op("matmul", Device::cuda)
      .add<MatmulArgs>("optimized", VariantTag::optimized,
                       "128x128x8 smem tiles, 8x8 register micro-tile per thread, float4 loads",
                       &matmul_optimized<float>, &matmul_optimized<double>);
}
PRISM_CUDA_KERNELS(130, register_matmul_optimized);

}  // namespace prism::kernels::cuda
