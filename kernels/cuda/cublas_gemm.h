// cuBLAS behind one row-major call: the GEMM that matmul's reference variant, conv's im2col, the
// naive attention and the unfused linear_gelu all use.
//
// cuBLAS is column-major; prism's buffers are row-major with arbitrary strides. A row-major
// C [m, n] (unit column stride, row stride ldc) read column-major is C^T [n, m] with leading
// dimension ldc, and C^T = B^T A^T, so every call asks cuBLAS for the transposed product with
// the operands swapped. Each operand X(r, c) = p[r rs + c cs] is handed over as it lies:
//   cs == 1 (row-major):    X^T is a column-major matrix with ld = rs, no transpose (N)
//   rs == 1 (column-major): X   is a column-major matrix with ld = cs, transposed (T)
// so a transposed view costs no copy. An operand with neither unit stride (a strided slice,
// an expanded dim) is first copied contiguous into a DeviceBuffer.
//
// The 64-bit-index API (cublas*gemmStridedBatched_64, CUDA 12+) takes sizes past 2^31. The
// default math mode is kept: float32 products run in true float32, never silently in TF32, so
// results compare with the CPU at float32 tolerances.
#pragma once

#include <cublas_v2.h>

#include <cstdint>

#include "kernels/cuda/cuda_common.h"

namespace prism::kernels::cuda {

// The process's cuBLAS handle, created on first use and bound to stream(). Never destroyed:
// destroying it from a static destructor could run after the CUDA context is gone.
cublasHandle_t cublas_handle();

// Throws prism::Error "cuBLAS error in <what> (<file>:<line>): <status name>" on failure.
void check_cublas(cublasStatus_t status, const char* what, const char* file, int line);

// A row-major-sense strided matrix operand: X_b(r, c) = p[b bs + r rs + c cs].
template <class T>
struct GemmOperand {
  const T* p;
  int64_t rs, cs, bs;
};

// C_b = alpha A_b B_b + beta C_b for b < batch, A_b [m, k], B_b [k, n] strided as given,
// C_b [m, n] row-major (unit column stride) with row stride ldc >= n and batch stride c_bs.
// With beta == 0, C is not read (it may hold garbage). Queued on stream(); returns at once.
template <class T>
void gemm(int64_t batch, int64_t m, int64_t n, int64_t k, T alpha, GemmOperand<T> a,
          GemmOperand<T> b, T beta, T* c, int64_t ldc, int64_t c_bs);

}  // namespace prism::kernels::cuda

#define PRISM_CUBLAS_CHECK(expr) \
  ::prism::kernels::cuda::check_cublas((expr), #expr, __FILE__, __LINE__)
