// linear_gelu's argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

// y = gelu(z), z = x weight^T + bias (GELU's tanh approximation, kernels/ops/elementwise/math.h):
// x [rows, in] strided, weight [out, in] strided (a Linear layer's weight as it is stored),
// bias [out] or null. y is contiguous [rows, out]; z, when not null, receives the
// pre-activation (contiguous [rows, out]) that backward needs: gelu'(z).
template <class T>
struct LinearGeluArgs {
  const T* x;
  const T* weight;
  const T* bias;
  T* z;
  T* y;
  int64_t rows, in, out;
  int64_t x_rs, x_cs, w_rs, w_cs;
};

}  // namespace prism::kernels
