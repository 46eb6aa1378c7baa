// How far a kernel's output is from the reference's, as one number.
//
//   error = max_i |got_i - want_i| / max(1, max_i |want_i|)
//
// Dividing by the largest reference value makes the error relative for outputs larger than 1
// (a row sum of 10^4, a matmul entry of 60) and absolute for small ones (softmax
// probabilities, where a relative error of a value near 0 would mean nothing). A NaN or
// infinity where the reference has something else makes the error infinite; NaN against NaN
// and the same infinity against itself count as equal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace prism::exercises {

struct Comparison {
  double error = 0;
  int64_t worst = -1;  // flat index of the element with the largest difference; -1 if none
  double got = 0, want = 0;
  std::string part;  // compare_parts: the part the worst error is in ("dx")
};

// Both float32 tensors of the same shape.
Comparison compare(const Tensor& got, const Tensor& want);

// One part of an output that stacks several along dim 0: its name and its rows.
struct Part {
  std::string name;
  int64_t rows = 0;
};

// The same for an output made of parts stacked along dim 0 (exercise 07's dx, dweight and dbias),
// each compared on its own scale: error = the largest over the parts of
//   max_i |got_i - want_i| / max(1, max_i |want_i|),   i over the part's elements,
// so a part of small values is not judged against a large one's (a dx 47 times too large hid
// under a dbias summed over 16411 rows). The worst part's name, and the element's flat index in
// the whole output, are returned. Parts must cover the rows exactly.
Comparison compare_parts(const Tensor& got, const Tensor& want, const std::vector<Part>& parts);

// "[2,5]": the row-major position of flat index i in `shape`.
std::string index_str(const Dims& shape, int64_t i);

}  // namespace prism::exercises
