// Finding the op where a NaN or an infinity first appears.
//
// A diverging run shows up as a non-finite loss, many ops after the value that started it. While
// a DetectNonFinite guard lives, the output of every op autograd records (forward) and every
// gradient a backward function computes (backward) is checked, and the first one holding a NaN or
// an infinity throws NonFiniteError naming the op. Run the failing step again under the guard,
// from finite weights and inputs, and the first op to make a non-finite value from finite ones is
// the one named (prism train does exactly this when a loss diverges).
//
//   {
//     prism::autograd::DetectNonFinite detect;
//     Tensor loss = nn::cross_entropy(model(x), y);  // throws in the first op that overflows
//     loss.backward();                               // ... or in the first gradient that does
//   }
//
// The check copies each tensor to the host and reads every element: a debugging tool, tens of
// times slower than the step itself, never on in a normal run (where it costs one branch).
#pragma once

#include <string>

#include "tensor/tensor.h"

namespace prism::autograd {

class DetectNonFinite {
 public:
  DetectNonFinite();
  ~DetectNonFinite();
  DetectNonFinite(const DetectNonFinite&) = delete;
  DetectNonFinite& operator=(const DetectNonFinite&) = delete;

 private:
  bool saved_;
};

// Whether a DetectNonFinite guard is alive on this thread.
bool detecting_non_finite();

struct NonFiniteError : Error {
  NonFiniteError(const std::string& what, std::string op_name, std::string phase_name)
      : Error(what), op(std::move(op_name)), phase(std::move(phase_name)) {}
  std::string op;     // "exp", "matmul.dA"
  std::string phase;  // "forward" or "backward"
};

// How many elements of `t` (any device, float or not) are NaN or infinite; the first one's flat
// index and value go to *first and *first_value when given.
int64_t count_non_finite(const Tensor& t, int64_t* first = nullptr, double* first_value = nullptr);

// Throws NonFiniteError when `t` holds a non-finite value: "<op> (<phase>) produced ...".
void check_finite(const Tensor& t, const char* op, const char* phase);

}  // namespace prism::autograd
