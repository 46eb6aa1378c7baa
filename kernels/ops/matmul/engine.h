// The optimized matmul's loop nest (optimized.cpp) with the linear op's prologue and
// epilogue (kernels/args.h, LinearArgs): the fused linear variant, and the GEMM that the unfused
// one runs between its passes.
//
// Where each piece runs, so that no pass reads data another core wrote:
//   relu_a / relu_b   as the operand is packed, by the thread that packs it (pack.h: one
//                     compare and blend per element of a copy that is made anyway); the paths
//                     that read an operand in place (one row, dot products) get a ReLU'd copy;
//   bias, mask        on each block of C, by the thread that computed the block, right after
//                     its last k step (the block is in that core's cache); a split-k product
//                     applies them to the band of rows each thread finishes.
// Every C element goes through the same code at any thread count (the path, gemm, dot or gemv,
// is chosen for the whole product), so the bits do not depend on the threads
// (tests/ops/determinism_test.cpp), and for a contiguous operand they equal the composed
// ops' (relu, matmul with the optimized variant, add, relu_backward): the same products, the
// same additions. A ReLU'd copy for the in-place paths is made in the calling thread's packing
// buffer: one copy of A (gemv_block then needs none of its own: the copy is contiguous) and one
// of B, so neither overwrites the other.
#pragma once

#include "kernels/ops/linear/args.h"

namespace prism::kernels::cpu {

template <class T>
void linear_gemm(const LinearArgs<T>& a);

}  // namespace prism::kernels::cpu
