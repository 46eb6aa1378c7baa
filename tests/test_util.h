// Helpers shared by the test suites of every layer.
#pragma once

#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/types.h"
#include "profiler/session.h"
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

// One string of all the parts, for INFO: doctest 2.4.9's INFO(a, b, c) prints every const char*
// after the first as a pointer ("layer_norm [two_pass] 0x55e6d81ca341"), so tests write
// INFO(info_text(a, b, c)).
template <class... Ts>
std::string info_text(const Ts&... parts) {
  std::ostringstream s;
  (s << ... << parts);
  return s.str();
}

// The largest |a - b| over the elements of two tensors of one shape, read as float64. A NaN
// facing a number counts as infinitely far; two NaNs are equal (both kernels let it through).
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  const std::vector<double> x = a.to_vector(), y = b.to_vector();
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) != std::isnan(y[i])) return INFINITY;
    if (!std::isnan(x[i])) m = std::max(m, std::abs(x[i] - y[i]));
  }
  return m;
}

// (allocations, bytes) of the op records named `op` in a profile.
inline std::pair<int64_t, int64_t> allocs_of(const profiler::Profile& p, const char* op) {
  int64_t n = 0, bytes = 0;
  for (const auto& r : p.recording.records) {
    if (r.kind == profiler::Kind::op && std::string(r.op) == op)
      n += r.allocs, bytes += r.alloc_bytes;
  }
  return {n, bytes};
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

// Runs this test executable again under `env` ("NAME=value ...") with only the named test case:
// for what a process reads once (PRISM_KERNELS, the GPU backend). Its exit status and output.
inline std::pair<int, std::string> run_child(const std::string& env, const std::string& test_case) {
  std::array<char, 4096> exe{};
  const ssize_t n = readlink("/proc/self/exe", exe.data(), exe.size() - 1);
  REQUIRE(n > 0);
  const std::string cmd = "env " + env + " '" + std::string(exe.data(), static_cast<size_t>(n)) +
                          "' -tc='" + test_case + "' --no-colors 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), static_cast<int>(buf.size()), p)) out += buf.data();
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
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
