// linear's argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

// linear: one product with a ReLU folded into an operand (a prologue) and a bias or a ReLU mask
// folded into the result (an epilogue), the three products of a ReLU-then-Linear layer
// (tensor/ops/linear.cpp):
//   C = relu_a(A) @ relu_b(B)                relu_x(M) = max(0, M) when the flag is set, else M
//   C[i, j] += bias[j]                       when bias is not null
//   C[i, j] = mask[i, j] > 0 ? C[i, j] : 0   when mask is not null (relu's gradient, relu'(mask))
//   row_sums[i] = sum over p of relu_a(A)[i, p]   when row_sums is not null, added in order of p
// with the operands as the layer uses them:
//   forward  y  = relu(x) @ W^T + b     A = x [rows, in], B = W^T, relu_a, bias
//   dx       dx = (g @ W) * [x > 0]     A = g [rows, out], B = W, mask = x
//   dW       dW = g^T @ relu(x)         A = g^T, B = x, relu_b; row_sums = db, g's column sums
// A [m, k], B [k, n] and the mask [m, n] are read through their strides; C is contiguous [m, n].
// The fused variant applies prologue and epilogue inside the optimized matmul's blocks; the
// unfused one runs them as passes and needs `workspace` for each ReLU'd operand
// (linear_workspace elements).
template <class T>
struct LinearArgs {
  const T* a;
  const T* b;
  T* c;
  int64_t m, n, k;
  int64_t a_rs, a_cs, b_rs, b_cs;
  bool relu_a, relu_b;
  const T* bias;  // [n], contiguous
  const T* mask;  // [m, n]
  int64_t mask_rs, mask_cs;
  T* row_sums;  // [m], contiguous
  T* workspace;
  int64_t workspace_size;
};

// The unfused linear variant's scratch: a contiguous copy of each operand it ReLUs.
inline int64_t linear_workspace(int64_t m, int64_t n, int64_t k, bool relu_a, bool relu_b) {
  return (relu_a ? m * k : 0) + (relu_b ? k * n : 0);
}

}  // namespace prism::kernels
