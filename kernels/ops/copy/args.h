// copy's argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

// dst = src elementwise over `shape`, both strided: contiguous(), concat, and copies into views.
template <class T>
struct CopyArgs {
  const T* src;
  T* dst;
  int ndim;
  int64_t shape[kMaxDims];
  int64_t src_stride[kMaxDims];
  int64_t dst_stride[kMaxDims];
};

}  // namespace prism::kernels
