// The index ops' argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

// Gather along `dim`: out[..i..] = x[..index[..i..]..] (PyTorch's torch.gather). `shape` is the
// index's (and output's) shape; the index is strided, the output contiguous.
// scatter_add is the reverse: x_grad[..index[..i..]..] += src[..i..], with x_grad contiguous.
template <class T>
struct GatherArgs {
  const T* x;  // gather: source (strided). scatter_add: src (contiguous, index shape)
  const int64_t* index;
  T* out;  // gather: [shape] contiguous. scatter_add: destination, contiguous x shape, zeroed
  int ndim;
  int dim;
  int64_t shape[kMaxDims];
  int64_t x_stride[kMaxDims];  // strides of the x side (source for gather, dest for scatter)
  int64_t index_stride[kMaxDims];
  int64_t dim_size;  // x.size(dim): valid indices are [0, dim_size)
};

// index_select along one dim of a 3-D view [outer, n, inner] (x contiguous after the front end):
// out[o, j, i] = x[o, index[j], i]. index_add is the reverse, accumulating into a zeroed out.
template <class T>
struct IndexSelectArgs {
  const T* x;
  const int64_t* index;  // contiguous, count entries
  T* out;
  int64_t outer, n, inner, count;
  int dim;  // the tensor dim that n stands for (for error messages)
};

}  // namespace prism::kernels
