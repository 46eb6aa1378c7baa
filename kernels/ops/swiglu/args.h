// swiglu's argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

// SwiGLU (Shazeer, 2020, "GLU Variants Improve Transformer"; the feed-forward of LLaMA and most
// transformers since) of a 2-D view [rows, cols], elementwise:
//   out = silu(gate) * up,   silu(z) = z sigmoid(z) = z / (1 + e^-z)
// gate and up are each read through their own row and column strides, so the two halves of one
// [rows, 2 hidden] projection, split by slicing, reach the kernel without a copy. out is
// contiguous [rows, cols].
template <class T>
struct SwiGluArgs {
  const T* gate;
  const T* up;
  T* out;
  int64_t rows, cols;
  int64_t gate_rs, gate_cs;
  int64_t up_rs, up_cs;
};

// Its gradient, one kernel for both inputs: from g = dloss/dout (contiguous [rows, cols]) and
// gate and up as in forward (strided), with s = sigmoid(gate):
//   dgate = g up silu'(gate),   silu'(z) = s + z s (1 - s) = s (1 + z (1 - s))
//   dup   = g silu(gate)     = g gate s
// dgate and dup (contiguous [rows, cols]) are overwritten; a null one is not needed and not
// computed.
template <class T>
struct SwiGluBackwardArgs {
  const T* gate;
  const T* up;
  const T* g;
  T* dgate;
  T* dup;
  int64_t rows, cols;
  int64_t gate_rs, gate_cs;  // g, dgate and dup are contiguous
  int64_t up_rs, up_cs;
};

}  // namespace prism::kernels
