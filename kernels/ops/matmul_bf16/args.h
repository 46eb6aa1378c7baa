// matmul_bf16's argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"
#include "kernels/bfloat16.h"

namespace prism::kernels {

// matmul_bf16: C[b] = A[b] @ B[b] with bfloat16 A and B (any strides, like MatmulArgs) and C of
// the accumulator type T, contiguous [batch, m, n]. The registry files a kernel under its T, the
// type it accumulates in and writes (float32: the mixed-precision GEMM); the inputs are always
// bfloat16, as the op's name says. Products of two bfloat16 values are exact in float32 (8 x 8
// significant bits fit in 24), so the only rounding is the accumulation's.
template <class T>
struct MatmulBf16Args {
  const BFloat16* a;
  const BFloat16* b;
  T* c;
  int64_t batch, m, n, k;
  int64_t a_bs, a_rs, a_cs;  // batch, row, column strides of A
  int64_t b_bs, b_rs, b_cs;
};

}  // namespace prism::kernels
