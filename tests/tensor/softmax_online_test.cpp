// The "online" softmax and log_softmax variant through the front end: rows of length 1, long
// rows over several of its chunks, -inf entries, huge values, strided views (every layout of
// ops_softmax_test.cpp runs it too), and gradients in float64 through its output.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "profiler/session.h"
#include "tests/tensor/reference.h"
#include "tests/test_util.h"

namespace prism {
namespace {

using ref::Array;
using ref::Layout;

Tensor run(bool log, const Tensor& x, int dim) {
  return log ? log_softmax(x, dim) : softmax(x, dim);
}

TEST_CASE("online softmax: the profile records the online variant") {
  kernels::Use use("softmax", "online");
  profiler::Session session;
  softmax(randn({3, 5}));
  const profiler::Profile& p = session.stop();
  REQUIRE(p.recording.records.size() >= 1);
  bool found = false;
  for (const auto& r : p.recording.records) {
    if (r.kind == profiler::Kind::op && std::string(r.op) == "softmax") {
      found = true;
      CHECK(std::string(r.variant) == "online");
    }
  }
  CHECK(found);
}

TEST_CASE("online softmax matches the reference: length-1 rows, long rows, strided views") {
  ref::Rng rng(31);
  for (const char* op : {"softmax", "log_softmax"}) {
    const bool log = std::string(op) == "log_softmax";
    kernels::Use use(op, "online");
    for (DType dt : {DType::f32, DType::f64}) {
      for (const ref::Shape& s :
           {ref::Shape{5, 1}, ref::Shape{1, 1}, ref::Shape{3, 1537}, ref::Shape{2, 4099}}) {
        for (Layout l : {Layout::contiguous, Layout::transposed, Layout::stepped}) {
          INFO((std::string(op) + " " + dtype_name(dt) + " " + ref::shape_str(s) + " " +
                ref::layout_name(l)));
          ref::Input in = ref::make_input(s, l, dt, rng, -30, 30);
          Tensor y = run(log, in.t, -1);
          Array expect = log ? ref::log_softmax(in.a, -1) : ref::softmax(in.a, -1);
          const double tol = dt == DType::f32 ? 4e-6 : 1e-12;
          CHECK(ref::mismatch(y, expect, tol, log ? tol : 1e-9) == "");
        }
      }
    }
  }
}

TEST_CASE("online softmax: -inf entries give 0, an all -inf row gives NaN like naive") {
  const double inf = std::numeric_limits<double>::infinity();
  for (DType dt : {DType::f32, DType::f64}) {
    // 700 entries: -inf for the first 600, then 0..99 (the max appears after a chunk of -inf).
    std::vector<double> v(700, -inf);
    for (int j = 600; j < 700; ++j) v[static_cast<size_t>(j)] = (j - 600) * 0.01;
    Tensor x = ref::to_tensor(Array({1, 700}, v), dt);
    Tensor all_neg_inf = ref::to_tensor(Array({1, 3}, -inf), dt);
    for (const char* op : {"softmax", "log_softmax"}) {
      const bool log = std::string(op) == "log_softmax";
      INFO((std::string(op) + " " + dtype_name(dt)));
      std::vector<double> naive, online, nan_naive, nan_online;
      {
        kernels::Use use(op, "naive");
        naive = run(log, x, 1).to_vector();
        nan_naive = run(log, all_neg_inf, 1).to_vector();
      }
      {
        kernels::Use use(op, "online");
        online = run(log, x, 1).to_vector();
        nan_online = run(log, all_neg_inf, 1).to_vector();
      }
      CHECK(online[0] == (log ? -inf : 0.0));
      for (size_t j = 0; j < online.size(); ++j) {
        if (std::isinf(naive[j])) {
          CHECK(online[j] == naive[j]);
        } else {
          CHECK(online[j] == doctest::Approx(naive[j]).epsilon(1e-5));
        }
      }
      for (size_t j = 0; j < 3; ++j) {
        CHECK(std::isnan(nan_naive[j]));
        CHECK(std::isnan(nan_online[j]));
      }
    }
  }
}

TEST_CASE("online softmax: values near the float maximum do not overflow") {
  kernels::Use use("softmax", "online");
  kernels::Use use_log("log_softmax", "online");
  Tensor x = from_vector(std::vector<float>{3e38f, 3e38f, -3e38f, 1e38f}, {1, 4});
  std::vector<double> y = softmax(x, 1).to_vector();
  REQUIRE(y.size() == 4);
  CHECK(y[0] == 0.5);
  CHECK(y[1] == 0.5);
  CHECK(y[2] == 0.0);
  CHECK(y[3] == 0.0);
  std::vector<double> ly = log_softmax(x, 1).to_vector();
  CHECK(ly[0] == doctest::Approx(-std::log(2.0)));
  CHECK(std::isinf(ly[2]));  // (x - m) = -6e38 overflows to -inf in float: log-probability -inf
}

TEST_CASE("online softmax gradients (float64) through its output") {
  ref::Rng rng(37);
  for (const char* op : {"softmax", "log_softmax"}) {
    const bool log = std::string(op) == "log_softmax";
    kernels::Use use(op, "online");
    INFO(op);
    Tensor x = ref::make_input({4, 7}, Layout::contiguous, DType::f64, rng, -3, 3).t;
    x.set_requires_grad();
    CHECK_GRAD([log](const std::vector<Tensor>& in) { return run(log, in[0], 1); }, x);
    CHECK_GRAD([log](const std::vector<Tensor>& in) { return run(log, in[0].t(), 0); }, x);
  }
}

}  // namespace
}  // namespace prism
