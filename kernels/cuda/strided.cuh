// Strided addressing for one-thread-per-element kernels (elementwise, copy, gather).
//
// The CPU kernels walk the output with an odometer, carrying each input's offset along. A GPU
// thread starts at an arbitrary element i instead, so it decodes i into coordinates (row-major
// over `shape`, last dim fastest) and takes the dot product with each operand's strides:
//   i = sum_d c_d * prod_{e > d} shape_e,   offset = sum_d c_d * stride_d
// The tensor layer has already merged the dims it could (a contiguous operand arrives as one
// dim), so ndim is small and the loop short.
//
// The division is the expensive part (64-bit integer division is a long software sequence on a
// GPU), so kernels are instantiated twice: with 32-bit index math when every element number
// fits (the common case), 64-bit otherwise. Offsets are always accumulated in 64 bits, since a
// view's strides can reach past 2^31 even when its element count does not.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

namespace prism::kernels::cuda {

// Offsets of element i in two operands with strides sa and sb over `shape`.
template <class I>
__device__ inline void strided_offsets2(I i, int ndim, const int64_t* shape, const int64_t* sa,
                                        const int64_t* sb, int64_t& oa, int64_t& ob) {
  oa = 0;
  ob = 0;
  for (int d = ndim - 1; d >= 0; --d) {
    const I n = static_cast<I>(shape[d]);
    const I q = i / n;
    const int64_t c = static_cast<int64_t>(i - q * n);
    oa += c * sa[d];
    ob += c * sb[d];
    i = q;
  }
}

// The offset of element i in one operand.
template <class I>
__device__ inline int64_t strided_offset(I i, int ndim, const int64_t* shape,
                                         const int64_t* stride) {
  int64_t off = 0;
  for (int d = ndim - 1; d >= 0; --d) {
    const I n = static_cast<I>(shape[d]);
    const I q = i / n;
    off += static_cast<int64_t>(i - q * n) * stride[d];
    i = q;
  }
  return off;
}

// True when element numbers below `numel` fit 32-bit index math (with room for the grid-stride
// step, which may overshoot numel by one grid before the loop test).
inline bool fits_32bit(int64_t numel) {
  return numel < (int64_t{1} << 30);
}

}  // namespace prism::kernels::cuda
