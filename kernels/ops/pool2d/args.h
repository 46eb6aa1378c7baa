// The pooling ops' argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

// 2-D max / average pooling over kernel x kernel windows of contiguous [planes, h, w] buffers
// (planes = n * c: every channel of every image is pooled on its own). A window starts at
// (i*stride - padding, j*stride - padding); padding never wins a max and is not counted in an
// average (the divisor is the number of real input elements in the window, at least 1 because
// padding <= kernel / 2). Forward ops overwrite out [planes, ho, wo]; backward ops overwrite
// out = dx [planes, h, w] from dy [planes, ho, wo].
//   max_pool2d            reads x; writes out and index (the argmax, h_in * w + w_in, in its plane)
//   max_pool2d_backward   reads dy and index; dx[index] += dy
//   avg_pool2d            reads x; index is null
//   avg_pool2d_backward   reads dy; dx gets dy / count over each window; index is null
template <class T>
struct Pool2dArgs {
  const T* x;   // [planes, h, w] (forward)
  const T* dy;  // [planes, ho, wo] (backward)
  T* out;
  int64_t* index;  // [planes, ho, wo] (max pool: written by forward, read by backward)
  int64_t planes, h, w, ho, wo;
  int64_t kernel, stride, padding;
};

}  // namespace prism::kernels
