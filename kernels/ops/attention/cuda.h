// The CUDA attention kernels, one file each (naive.cu, kernels/ops/attention/flash.cu,
// kernels/ops/attention/flash_backward.cu); register_attention (in kernels/ops/attention/naive.cu)
// registers them all. Host functions on device pointers, queued on cuda::stream(), as every CUDA
// kernel here.
#pragma once

#include "kernels/ops/attention/args.h"

namespace prism::kernels::cuda {

// Naive: the whole score matrix of every head, in a.workspace when it holds
// attention_scores_workspace() elements, else in a buffer of its own (the flash variants fall
// back to these for head sizes above kFlashMaxHead).
template <class T>
void attention_naive(const AttentionArgs<T>& a);
template <class T>
void attention_backward_naive(const AttentionBackwardArgs<T>& a);

// Flash: tiles and an online softmax, O(L) memory.
template <class T>
void attention_flash(const AttentionArgs<T>& a);
template <class T>
void attention_backward_flash(const AttentionBackwardArgs<T>& a);

// The largest head size d the flash kernels keep in registers (q, o: 16 elements per thread,
// d / 16 threads per row).
constexpr int64_t kFlashMaxHead = 256;

}  // namespace prism::kernels::cuda
