// matmul's argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

// C[b] = A[b] @ B[b] for b < batch; A is m x k, B is k x n, each with its own strides, so
// transposed views need no copy. C is contiguous [batch, m, n].
template <class T>
struct MatmulArgs {
  const T* a;
  const T* b;
  T* c;
  int64_t batch, m, n, k;
  int64_t a_bs, a_rs, a_cs;  // batch, row, column strides of A
  int64_t b_bs, b_rs, b_cs;
};

}  // namespace prism::kernels
