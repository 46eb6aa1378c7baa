// gradcheck: compares autograd's gradients with finite differences, in float64.
//
// For a function f of some tensors, we project the output onto a fixed random direction r,
// L(x) = sum(f(x) * r), and compare dL/dx from backward with the central difference
//   (L(x + eps e_i) - L(x - eps e_i)) / (2 eps)
// for every input element i. A wrong gradient is caught unless its error happens to be
// orthogonal to r, which has probability zero. Central differences have error O(eps^2), so
// with eps = 1e-6 in float64 an agreement to ~1e-7 relative is expected for smooth functions.
//
// That costs two evaluations of f per input element: fine for a [3, 4] input, minutes for a
// [300, 263] one. The directional mode (`directions` = k > 0) checks k random directions v per
// input instead of the n unit vectors e_i:
//   analytic  dL/dx . v   (one backward, then a dot product)
//   numeric   (L(x + eps v) - L(x - eps v)) / (2 eps)
// two evaluations of f per direction, whatever the size. A wrong gradient g' passes only if its
// error g' - g is orthogonal to every v drawn, which has probability zero; what is lost is the
// element the message can name (it names the input and the direction).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace prism {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-6;
  double rtol = 1e-4;
  uint64_t seed = 1234;  // for the projection direction r (and the directions v)
  int directions = 0;    // 0: every element of every input; k > 0: k random directions an input
};

struct GradcheckResult {
  bool ok = true;
  double max_abs_error = 0;
  std::string message;  // on failure: which input and element (or direction), analytic vs numeric
};

// Inputs must be float64 leaves with requires_grad (views of them are fine inside f).
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& opts = {});

}  // namespace prism
