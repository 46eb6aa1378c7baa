// Tensor-level drivers of the ops' kernel variants (tests/kernels/variants_test.cpp): how to
// make an op's inputs and call it through its front end, so that every variant, chosen with
// kernels::Use, is checked against the naive one on the same inputs.
//
// An op's drivers live in its folder, kernels/ops/<op>/drivers.cpp (compiled into the kernels
// test suite only), and add themselves to the list:
//   const DriverFile kRope("rope", [] { return std::vector<Driver>{...}; });
// Ops whose drivers have not moved yet keep them in variants_test.cpp's own table.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tests/tensor/reference.h"

namespace prism::kernels {

// Makes the inputs of one case, then runs the op on them (possibly forward + backward, for the
// backward kernels) and returns the tensor the kernel under test produced.
struct Driver {
  std::function<std::vector<Tensor>(DType, ref::Rng&, bool strided)> make;
  std::function<Tensor(const std::vector<Tensor>&)> run;
};

inline Tensor input(const ref::Shape& s, bool strided, DType dt, ref::Rng& rng, double lo = -1,
                    double hi = 1) {
  return ref::make_input(s, strided ? ref::Layout::transposed : ref::Layout::contiguous, dt, rng,
                         lo, hi)
      .t;
}

// A float input for a backward driver: the op is run on a fresh leaf made from it.
inline Tensor grad_of_input(const Tensor& x, const std::function<Tensor(const Tensor&)>& f,
                            const Tensor& g) {
  Tensor leaf = x.detach();
  leaf.set_requires_grad();
  f(leaf).backward(g);
  return leaf.grad();
}

// The drivers the op folders added, by op name (a function-local static: it exists before the
// first DriverFile runs, whatever the order of static initialisation).
inline std::map<std::string, std::function<std::vector<Driver>()>>& folder_drivers() {
  static std::map<std::string, std::function<std::vector<Driver>()>> drivers;
  return drivers;
}

struct DriverFile {
  DriverFile(const std::string& op, std::function<std::vector<Driver>()> make) {
    folder_drivers()[op] = std::move(make);
  }
};

}  // namespace prism::kernels
