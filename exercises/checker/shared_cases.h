// What several exercises' checks share (each exercise's own checks are in its folder's
// check.cpp): the hint for a view read without its strides, and the matmul cases, tolerance and
// first tier hint of exercises 03 and 04.
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

}  // namespace prism::exercises
