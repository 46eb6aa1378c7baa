// The optimized matmul's path for a product with one row, c[0:n] = a[0:k] @ B[0:k, 0:n]
// (a matrix-vector product; one column, C = A @ b, arrives here transposed).
//
// Packing pays for itself by being reused: a packed B sliver serves mc / MR tiles of A. With a
// single row nothing is reused, every element of B is read once, so the product is bound by
// reading B and the copy would double that. And a 14-row register tile would do 14 times the
// arithmetic. So B is read where it is, in the order that walks it with unit stride:
//   B row-major (column stride 1):     c += a[p] * B[p, :], four rows of B per pass over c so
//                                      that c is loaded and stored once per four rows;
//   B column-major (row stride 1):     c[j] = dot(a, B[:, j]), each column a contiguous run,
//                                      summed into four vector accumulators;
//   anything else:                     the same dot products through the strides.
// a is first copied to a contiguous scratch buffer when its own stride is not 1 (k elements).
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/ops/matmul/rows.h"

namespace prism::kernels::cpu {

// c[0:n] += a0 * b0[0:n] + a1 * b1[0:n] + a2 * b2[0:n] + a3 * b3[0:n] (vectorized).
template <class T>
void axpy4(int64_t n, const T* a, const T* __restrict b0, const T* __restrict b1,
           const T* __restrict b2, const T* __restrict b3, T* __restrict c) {
  const T a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
  for (int64_t j = 0; j < n; ++j) c[j] += a0 * b0[j] + a1 * b1[j] + a2 * b2[j] + a3 * b3[j];
}

// c[0:n] = a @ B with a contiguous (k elements), B[p, j] at b[p * b_rs + j * b_cs], c contiguous.
template <class T>
void gemv_row(int64_t n, int64_t k, const T* a, const T* b, int64_t b_rs, int64_t b_cs, T* c) {
  if (b_cs == 1) {
    std::fill(c, c + n, T(0));
    int64_t p = 0;
    for (; p + 4 <= k; p += 4) {
      const T* r = b + p * b_rs;
      axpy4(n, a + p, r, r + b_rs, r + 2 * b_rs, r + 3 * b_rs, c);
    }
    for (; p < k; ++p) {
      const T s = a[p];
      const T* r = b + p * b_rs;
      for (int64_t j = 0; j < n; ++j) c[j] += s * r[j];
    }
  } else if (b_rs == 1) {
    for (int64_t j = 0; j < n; ++j) c[j] = dot_contiguous(k, a, b + j * b_cs);
  } else {
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += a[p] * b[p * b_rs + j * b_cs];
      c[j] = sum;
    }
  }
}

}  // namespace prism::kernels::cpu
