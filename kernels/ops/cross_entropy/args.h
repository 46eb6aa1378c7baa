// cross_entropy's argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

// Cross-entropy of logits [rows, cols] (a strided view) against int64 class indices
// target [rows] (strided; the front end has checked every one is in [0, cols)):
//   lse_i = log sum_j exp(x_ij),  loss = scale * sum_i (lse_i - x_i,target_i)
// with scale = 1 / rows for the mean, 1 for the sum. `loss` is one element; lse, when not null,
// receives each row's lse (contiguous [rows], saved for backward), in float64 whatever T is:
// near logits of 1000 a float32 lse is only good to 6e-5, an error exp(x - lse) would carry
// into every gradient. workspace: scratch of
// `workspace_size` elements that the front end allocates as a temporary, so the profile shows
// it: rows * cols for a variant that materialises log_softmax (tag naive), else null and 0.
template <class T>
struct CrossEntropyArgs {
  const T* logits;
  const int64_t* target;
  T* loss;
  double* lse;
  T* workspace;
  int64_t workspace_size;
  int64_t rows, cols;
  int64_t row_stride, col_stride, target_stride;
  double scale;
};

// Its gradient from the saved lse and the loss's gradient g (one element):
//   dlogits_ij = g * scale * (exp(x_ij - lse_i) - [j == target_i])    (softmax minus one-hot)
// dlogits is contiguous [rows, cols] and overwritten.
template <class T>
struct CrossEntropyBackwardArgs {
  const T* logits;
  const int64_t* target;
  const double* lse;
  const T* g;
  T* dlogits;
  int64_t rows, cols;
  int64_t row_stride, col_stride, target_stride;
  double scale;
};

}  // namespace prism::kernels
