// Helpers that turn tensor shapes and strides into kernel arguments.
#pragma once

#include "kernels/args.h"
#include "tensor/tensor.h"

namespace prism::detail {

// Normalises a possibly negative dim index against ndim; an Error naming `op` if out of range.
int wrap_dim(const char* op, int d, int ndim);

// The broadcast shape of a and b (NumPy rules); an Error naming `op` and both shapes otherwise.
Dims broadcast_shapes(const char* op, const Dims& a, const Dims& b);

// x's strides seen from `out_shape` (x broadcast to it): stretched dims get stride 0.
Dims broadcast_strides(const Tensor& x, const Dims& out_shape);

// A strided walk over `shape`: size-1 dims dropped, neighbours merged where the strides allow
// (stride[d] == stride[d+1] * shape[d+1]). Always at least one dim.
kernels::Layout make_layout(const Dims& shape, const Dims& strides);

// The same merge applied jointly to two stride lists over one shape (binary ops).
int merge_dims2(const Dims& shape, const Dims& sa, const Dims& sb, int64_t* shape_out,
                int64_t* sa_out, int64_t* sb_out);

// Fills a CopyArgs-style triple (shape, src strides, dst strides) with merged dims.
int merge_dims_copy(const Dims& shape, const Dims& ss, const Dims& ds, int64_t* shape_out,
                    int64_t* ss_out, int64_t* ds_out);

// When the tensor's dims [0, split) and [split, ndim) each collapse to one strided dim,
// returns true and the (size, stride) of each: the 2-D view reductions and softmax run on.
bool as_2d(const Tensor& x, int split, int64_t& rows, int64_t& row_stride, int64_t& cols,
           int64_t& col_stride);

// The batch dims of a [batch..., r, c] matmul operand (all but the last two) as one stride:
// false when they do not merge into one (the caller copies), stride 0 for a single batch.
bool batch_stride(const Tensor& t, int64_t& stride);

// A 2-D view whose rows are adjacent in memory (a transposed contiguous matrix, such as a
// Linear's weight.t()): its gradient is best made as the transpose of a contiguous product.
bool is_transposed(const Tensor& t);

// A tensor as [rows, cols], cols its last dim, with the two strides: what the row-wise kernels
// read (normalisations, softmax, SwiGLU). v is the tensor detached, or a contiguous copy of it
// when its leading dims do not merge into one stride (a permuted view).
struct RowsView {
  Tensor v;
  int64_t rows = 1, cols = 1, row_stride = 1, col_stride = 1;
};
RowsView rows_view(const Tensor& x);

}  // namespace prism::detail
