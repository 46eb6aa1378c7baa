// The reductions' argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

// Reduction of each row of a 2-D strided view [rows, cols] to one value.
template <class T>
struct ReduceArgs {
  const T* x;
  int64_t rows, cols;
  int64_t row_stride, col_stride;
  T* out;          // [rows], contiguous; may be null for argmax
  int64_t* index;  // [rows] position of the max (max, argmax); null otherwise
};

}  // namespace prism::kernels
