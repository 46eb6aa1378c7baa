// The elementwise ops' argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

// out[i] = f(x[i]) over `layout` (the op names f: relu, exp, gelu, ...).
template <class T>
struct UnaryArgs {
  const T* x;
  T* out;         // contiguous, numel elements
  Layout layout;  // x's strides over the output shape
  int64_t numel;
};

// out[i] = f(a[i], b[i]) with NumPy broadcasting: a broadcast dim has stride 0.
template <class T>
struct BinaryArgs {
  const T* a;
  const T* b;
  T* out;  // contiguous, numel elements
  int ndim;
  int64_t shape[kMaxDims];
  int64_t a_stride[kMaxDims];
  int64_t b_stride[kMaxDims];
  int64_t numel;
};

}  // namespace prism::kernels
