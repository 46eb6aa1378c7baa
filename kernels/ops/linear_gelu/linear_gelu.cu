// linear_gelu on the GPU: y = gelu(x w^T + b), z = x w^T + b kept for backward when asked.
//
// unfused (tag naive): what three separate ops would do, minus their allocations:
//   1. z = x w^T                cuBLAS GEMM into z (or y when z is not kept)
//   2. z += b; y = gelu(z)      one elementwise pass over [rows, out]
// At transformer sizes pass 2 reads and writes the whole output once more through DRAM
// (a [4096 x 3072] float32 output is 50 MB, read once and written once or twice).
// fused: the register-blocked GEMM tile of matmul_optimized (kernels/ops/matmul/tile.cuh) with its
// store replaced by the bias + GELU epilogue: each 8 x 8 block of results goes from the registers
// straight to z and y, so the output crosses DRAM once (twice with z) and pass 2 disappears.
// Unlike unfused it rides on our own GEMM, not cuBLAS: it wins only if the saved pass is worth
// more than the gap between the two GEMMs (at the sizes measured it is not: below).
// GELU is the tanh approximation of kernels/ops/elementwise/math.h:
//   gelu(z) = 0.5 z (1 + tanh(s (z + 0.044715 z^3))),  s = sqrt(2 / pi).
// Cost: 2 rows out in FLOPs + 9 per output (bias add + GELU; 8 without bias). Measured slower
// than unfused at both sizes tried, a transformer layer's and the MLP's (`prism lab linear_gelu
// --device cuda`; docs/PERFORMANCE.md, "GPU (CUDA)").
#include "kernels/cuda/cublas_gemm.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/ops/matmul/tile.cuh"
#include "kernels/ops/linear_gelu/args.h"
#include "kernels/ops/matmul/args.h"

namespace prism::kernels::cuda {
namespace {

template <class T>
__device__ __forceinline__ T gelu(T z) {
  const T s = T(0.7978845608028654), c = T(0.044715);
  return T(0.5) * z * (T(1) + tanh(s * (z + c * z * z * z)));
}

// Pass 2 of unfused: zy holds x w^T; adds the bias in place and writes y = gelu.
template <class T>
__global__ void bias_gelu_kernel(T* zy, const T* __restrict__ bias, T* y, int64_t rows,
                                 int64_t cols) {
  const int64_t total = rows * cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    T z = zy[i];
    if (bias) {
      z += bias[i % cols];
      zy[i] = z;
    }
    y[i] = gelu(z);
  }
}

// The fused epilogue: four results of row i at columns j0..j0+3.
template <class T>
struct BiasGeluStore {
  const T* bias;
  T* z;  // null: not kept
  T* y;
  int64_t n;
  __device__ __forceinline__ void operator()(int64_t, int64_t i, int64_t j0, const T* v) const {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int64_t j = j0 + e;
      if (j >= n) break;
      const T zz = bias ? v[e] + bias[j] : v[e];
      if (z) z[i * n + j] = zz;
      y[i * n + j] = gelu(zz);
    }
  }
};

// x [rows, in] @ w^T: B(p, j) = w[j, p], so B's row stride is w's column stride.
template <class T>
MatmulArgs<T> as_matmul(const LinearGeluArgs<T>& a) {
  MatmulArgs<T> g{};
  g.a = a.x, g.b = a.weight, g.c = nullptr;
  g.batch = 1, g.m = a.rows, g.n = a.out, g.k = a.in;
  g.a_rs = a.x_rs, g.a_cs = a.x_cs;
  g.b_rs = a.w_cs, g.b_cs = a.w_rs;
  return g;
}

template <class T>
void linear_gelu_unfused(const LinearGeluArgs<T>& a) {
  if (a.rows * a.out == 0) return;
  T* z = a.z ? a.z : a.y;
  gemm<T>(1, a.rows, a.out, a.in, T(1), {a.x, a.x_rs, a.x_cs, 0}, {a.weight, a.w_cs, a.w_rs, 0},
          T(0), z, a.out, 0);
  const int64_t total = a.rows * a.out;
  bias_gelu_kernel<T><<<grid_for(total), kBlock, 0, stream()>>>(z, a.bias, a.y, a.rows, a.out);
  PRISM_CUDA_CHECK_LAUNCH("bias_gelu_kernel");
}

template <class T>
void linear_gelu_fused(const LinearGeluArgs<T>& a) {
  tile::run_gemm_tile(as_matmul(a), BiasGeluStore<T>{a.bias, a.z, a.y, a.out},
                      "gemm_tile_kernel (linear_gelu fused)");
}

}  // namespace

void register_linear_gelu(Registry& r) {
  r.op("linear_gelu", Device::cuda)
      .add<LinearGeluArgs>("unfused", VariantTag::naive,
                           "cuBLAS GEMM, then one bias + GELU pass over the output",
                           &linear_gelu_unfused<float>, &linear_gelu_unfused<double>);
  r.op("linear_gelu", Device::cuda)
      .add<LinearGeluArgs>("fused", VariantTag::fused,
                           "register-blocked GEMM tile with bias + GELU in its epilogue",
                           &linear_gelu_fused<float>, &linear_gelu_fused<double>);
}
PRISM_CUDA_KERNELS(190, register_linear_gelu);

}  // namespace prism::kernels::cuda
