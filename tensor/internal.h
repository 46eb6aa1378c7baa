// Internal helpers shared by the op front ends (not part of the public API).
#pragma once

#include "tensor/dispatch.h"
#include "tensor/tensor.h"

namespace prism::detail {

// Copies src into dst (same shape, any strides) with the copy kernel, recorded as op `op`
// (a string literal: "contiguous", "concat", "slice_backward").
void copy_into(const Tensor& dst, const Tensor& src, const char* op);

// The copy kernel alone, no record: for front ends that record the copy as their own op.
void run_copy_kernel(const kernels::KernelEntry& k, const Tensor& dst, const Tensor& src);
extern OpHandle g_copy;

// dst (contiguous, zeroed by the caller) gets dst[..index[i]..] += src[i] along `dim`: the
// gradient of gather and of max over a dim. Recorded as op "scatter_add".
void scatter_add_into(const Tensor& dst, int dim, const Tensor& index, const Tensor& src);

}  // namespace prism::detail
