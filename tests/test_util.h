// Helpers shared by the test suites of every layer.
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/types.h"
#include "tensor/autograd/gradcheck.h"

namespace prism::testing {

// The message of the prism::Error that f throws, or "(no error)" (so a failed check that looks
// for a phrase in it prints what happened).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const prism::Error& e) {
    return e.what();
  }
  return "(no error)";
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// gradcheck of f over the given float64 leaves.
template <class F, class... Ts>
GradcheckResult run_gradcheck(F&& f, const Ts&... inputs) {
  return gradcheck(std::function<Tensor(const std::vector<Tensor>&)>(std::forward<F>(f)),
                   std::vector<Tensor>{inputs...});
}

}  // namespace prism::testing

// CHECK_GRAD(function, input, input, ...): a macro (not a function) so a failure names the
// caller's line; variadic because lambdas with several captures contain commas.
#define CHECK_GRAD(...)                                                         \
  do {                                                                          \
    ::prism::GradcheckResult r_ = ::prism::testing::run_gradcheck(__VA_ARGS__); \
    CHECK_MESSAGE(r_.ok, r_.message);                                           \
    CHECK(r_.max_abs_error < 1e-6);                                             \
  } while (0)
