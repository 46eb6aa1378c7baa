// Helpers shared by the nn tests: error checks, float64 gradient checks of whole modules, and
// scratch file paths.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "nn/nn.h"
#include "tensor/autograd/gradcheck.h"
#include "tensor/ops.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace prism::nn::test {

// Runs the enclosed code on one OpenMP thread. Used around checkpointed models and the cpu ResNet
// and gpt-char: their convolutions and matmuls are many small Eigen GEMMs, each an OpenMP parallel
// region, and on a shared 2-core machine under load every region waits for a descheduled thread.
// Measured there: the ResNet-18 forward below took 5 s with 2 threads against 0.07 s with 1,
// gpt-char's test 1.2 s against 0.1 s.
class OneThread {
 public:
#ifdef _OPENMP
  OneThread() : saved_(omp_get_max_threads()) {
    omp_set_num_threads(1);
  }
  ~OneThread() {
    omp_set_num_threads(saved_);
  }

 private:
  int saved_;
#endif
};

// Checks that the expression (which may contain commas) throws a prism::Error whose message
// contains `text`.
#define CHECK_ERROR(text, ...) \
  CHECK_THROWS_WITH_AS((void)(__VA_ARGS__), ::prism::nn::test::contains(text), prism::Error)

// doctest::Contains takes a doctest::String, which has no std::string constructor.
inline doctest::Contains contains(const std::string& s) {
  return doctest::Contains(doctest::String(s.c_str()));
}

// A float64 leaf with requires_grad, uniform in [lo, hi).
inline Tensor leaf64(const Dims& shape, double lo = -1, double hi = 1) {
  Tensor t = rand(shape, DType::f64, lo, hi);
  t.set_requires_grad();
  return t;
}

// Gradient check of `m` in float64 against finite differences, with respect to the input (when
// it requires grad) and every parameter. The module is converted with Module::to(f64) first.
inline GradcheckResult gradcheck_module(Module& m, const Tensor& x) {
  m.to(DType::f64);
  std::vector<Tensor> inputs;
  const bool with_x = x.requires_grad();
  if (with_x) inputs.push_back(x);
  for (const Tensor& p : m.parameters()) inputs.push_back(p);
  auto f = [&m, with_x, x](const std::vector<Tensor>& in) { return m(with_x ? in[0] : x); };
  return gradcheck(f, inputs);
}

#define CHECK_GRADCHECK(...)            \
  do {                                  \
    GradcheckResult r_ = (__VA_ARGS__); \
    CHECK_MESSAGE(r_.ok, r_.message);   \
  } while (0)

// A scratch file path unique to this process (ctest runs test cases in parallel processes).
inline std::string scratch_path(const std::string& stem) {
  return (std::filesystem::temp_directory_path() /
          ("prism_nn_" + stem + "_" + std::to_string(::getpid()) + ".safetensors"))
      .string();
}

inline bool all_close(const Tensor& a, const Tensor& b, double tol = 1e-5) {
  if (!(a.shape() == b.shape())) return false;
  std::vector<double> va = a.to_vector(), vb = b.to_vector();
  for (size_t i = 0; i < va.size(); ++i) {
    if (std::abs(va[i] - vb[i]) > tol * (1 + std::abs(vb[i]))) return false;
  }
  return true;
}

}  // namespace prism::nn::test
