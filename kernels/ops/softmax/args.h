// softmax's argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

// Row-wise softmax / log_softmax of a 2-D strided view [rows, cols]; out is contiguous.
template <class T>
struct SoftmaxArgs {
  const T* x;
  T* out;
  int64_t rows, cols;
  int64_t row_stride, col_stride;
};

// Backward of softmax / log_softmax along rows: y is the forward output, g the output's
// gradient, dx the input's gradient; all three contiguous [rows, cols].
template <class T>
struct SoftmaxBackwardArgs {
  const T* y;
  const T* g;
  T* dx;
  int64_t rows, cols;
};

}  // namespace prism::kernels
