// What several exercises' checks share (each exercise's own checks are in its folder's
// check.cpp): the hint for a view read without its strides, the matmul cases, tolerance and
// first tier hint of exercises 03 and 04, and the extreme rows of the sums of 02 and 13.
//
// Case order, in every exercise: the smallest shapes first (a failure there is the easiest to
// debug), then views with strides, then edge sizes, then large-ish shapes and values chosen to
// expose one specific mistake (each case's hint says which). Every view is cut from a storage
// that holds at least as many elements past the view's first as the view has, so a kernel that
// ignores strides reads wrong values but never reads past an allocation: the wrong kernels run
// in the test suite, also under AddressSanitizer.
#pragma once

#include <vector>

#include "exercises/checker/checker.h"

namespace prism::exercises {

extern const char* const kStridesHint;

// Exercises 03 and 04: the same cases, tolerance and first tier ("beats naive").
std::vector<Case> matmul_cases();
extern const char* const kMatmulToleranceWhy;
extern const char* const kLoop1;
// For a matmul tier missed only where B is transposed (the lab's size "512:nt").
extern const char* const kTransposedB;

// Exercises 02 and 13 (a sum of each row): rows whose extremes a float32 partial sum cannot hold.
// [rows, cols] of N(0, 1) whose every row holds +3e38 at columns 0 and 64 and -3e38 at column
// 128 (cols > 128): the row's sum, 3e38 plus the small ones, fits in float32 (FLT_MAX = 3.4e38),
// but 3e38 + 3e38 does not, so a float partial sum holding columns 0 and 64 without 128 (a float
// running sum, lane i mod 8, 16, 32 or 64, a pairwise tree's left half, a chunk's float sum)
// overflows to inf.
Tensor near_float_max(int64_t rows, int64_t cols);
// [4, cols] of N(0, 1) with infinities: +inf in row 0, -inf in row 1, none in row 2, +inf twice
// in row 3 (cols / 2 apart: in two chunks of any chunk length below that). Each row's sum is its
// infinity (row 2's a number); no row holds both signs (+inf + -inf = NaN).
Tensor with_infinities(int64_t cols);

}  // namespace prism::exercises
