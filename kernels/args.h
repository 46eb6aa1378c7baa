// Kernel argument structs: what every kernel sees (pointers, sizes, strides; never a Tensor).
// Each op's structs live in its folder, kernels/ops/<op>/args.h; this header holds what they all
// share: the words below, the contract every kernel keeps, and the n-d Layout.
//
// Words, the same in every struct. Sizes and strides count elements, never bytes. A 2-D view is
// `rows` x `cols`, element (i, j) at x[i * row_stride + j * col_stride] (reductions, softmax,
// the norms, cross-entropy: every row-wise op). Where several operands are strided, each
// stride carries its operand's name: X_rs, X_cs and X_bs are operand X's row, column and batch
// strides (matmul's a_rs, swiglu's gate_cs, linear_gelu's w_rs), and an n-d walk is a `shape`
// with one stride array per operand (copy's src_stride, attention's q_stride). A split around
// one dim is [outer, n, inner] (index_select). The structs are plain aggregates, filled by name
// (field by field, or with designated initialisers {.x = ..., .rows = ...}), so a kernel's
// whole input reads in one place and no constructor's argument order can be mixed up.
//
// The contract, the same for every struct below and for a learner's kernel:
//   - Trust the struct. The tensor layer has checked shapes, dtypes and devices and filled the
//     struct; a kernel checks only what it alone can see (an index out of range in gather).
//   - Outputs are fresh and contiguous unless a struct says otherwise, and the kernel writes
//     every element of them (the lab and the tests poison outputs with NaN to check). They
//     alias no input. The exceptions are named where they occur: the optimizer updates read
//     and write param and its state in place (the front end refuses two of them sharing
//     memory), and scatter_add and index_add add into an output the front end has zeroed.
//   - Empty input. Elementwise, copy, gather / index and optimizer kernels may be called with
//     zero elements and must then do nothing (a loop that runs zero times; a CUDA kernel
//     returns before launching, since a grid of zero blocks is an error). Every other op
//     settles its empty cases before any kernel runs: matmul with k = 0 gets C = 0 from the
//     front end; a reduction over zero columns never reaches a kernel (sum gives 0, mean, max
//     and argmax refuse); softmax, the norms, conv2d, pooling and attention with no elements
//     return first. So a row, a dot product or a window that reaches one of these kernels is
//     never empty. The named exception is linear, whose epilogue has work even when the product
//     is empty: its kernels take k = 0 (C = 0, then bias and mask) and n = 0 (A's row sums
//     alone); m = 0 returns in the front end.
//   - Threads. A CPU kernel may use OpenMP (the caller has set the thread count); a CUDA kernel
//     queues its work on prism's one stream and returns without waiting.
#pragma once

#include <cstdint>

namespace prism::kernels {

constexpr int kMaxDims = 8;

// An n-d strided walk over `shape`. The tensor layer merges dims that are contiguous with each
// other first, so a contiguous tensor of any shape arrives here as ndim = 1.
struct Layout {
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t stride[kMaxDims] = {};
};

}  // namespace prism::kernels
