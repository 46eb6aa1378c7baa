// gradcheck: compares autograd's gradients with finite differences, in float64.
//
// For a function f of some tensors, we project the output onto a fixed random direction r,
// L(x) = sum(f(x) * r), and compare dL/dx from backward with the central difference
//   (L(x + eps e_i) - L(x - eps e_i)) / (2 eps)
// for every input element i. A wrong gradient is caught unless its error happens to be
// orthogonal to r, which has probability zero. Central differences have error O(eps^2), so
// with eps = 1e-6 in float64 an agreement to ~1e-7 relative is expected for smooth functions.
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
  uint64_t seed = 1234;  // for the projection direction r
};

struct GradcheckResult {
  bool ok = true;
  double max_abs_error = 0;
  std::string message;  // on failure: which input and element, analytic vs numeric
};

// Inputs must be float64 leaves with requires_grad (views of them are fine inside f).
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& opts = {});

}  // namespace prism
