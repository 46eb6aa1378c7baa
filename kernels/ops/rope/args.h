// rope's argument struct (the math is in op.h): one header the CPU and the CUDA kernels share.
#pragma once

#include <cstdint>

namespace prism::kernels {

// x: [outer0, outer1, t, d] read through strides (its last dim contiguous), so a head's q or k
// can be a view of the fused qkv projection; y: the same shape, contiguous, written in full.
// Row (b, hd, s) is at position pos0 + s. A [t, d] or [n, t, d] input has outer sizes 1.
template <class T>
struct RopeArgs {
  const T* x;
  T* y;
  int64_t outer0, outer1, t, d;  // d even
  int64_t x_s0, x_s1, x_st;      // x's strides (elements) of outer0, outer1 and t
  int64_t pos0;                  // the first row's position (a KV cache's length)
  double base;                   // theta_i = base^(-2i / d), > 0
};

}  // namespace prism::kernels
