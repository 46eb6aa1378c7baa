// linear (relu?(x) W^T + b as one op): both variants against the ops it stands for, relu ->
// matmul -> add, to the bit on contiguous inputs and within rounding on strided ones (odd
// shapes: one element, primes, a vector, 3-D and 4-D inputs, no bias, the narrow and one-row
// and dot-product paths of the optimized matmul); gradients against the composed ops' and by
// gradcheck; what the profile records (rows, labels, costs, allocations); the fallback to the
// composed ops under another matmul variant; the cost formula; errors; the meta device.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/ops/linear/op.h"
#include "kernels/registry.h"
#include "profiler/session.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/test_util.h"

namespace prism {
namespace {

using profiler::Cost;
using testing::allocs_of;
using testing::contains;
using testing::error_of;
using testing::max_abs_diff;

const char* const kVariants[] = {"unfused", "fused"};

// What the op stands for: the ops one after the other.
Tensor composed(const Tensor& x, const Tensor& w, const Tensor& b, bool relu_input) {
  Tensor y = matmul(relu_input ? relu(x) : x, w.transpose(0, 1));
  return b.defined() ? add(y, b) : y;
}

struct Case {
  Dims x, w;
  bool bias;
};

// 64 x 256 by 10 outputs: the MLP's last layer (its product computed transposed); 2 x 300 by 10:
// the dot-product form; a vector input and a single row: the one-row path; 67 x 263 by 509:
// split-k in dx; 2 inputs: dW (16 x 2) computed transposed, its bias gradient summed apart; one
// output: dW and db on the one-row path.
const std::vector<Case> kCases = {
    {{1, 1}, {1, 1}, true},       {{37, 29}, {41, 29}, true},    {{3, 50, 70}, {300, 70}, true},
    {{29}, {7, 29}, true},        {{5, 13}, {11, 13}, false},    {{2, 1, 3, 5}, {2, 5}, true},
    {{130, 8}, {513, 8}, false},  {{64, 256}, {10, 256}, true},  {{2, 300}, {10, 300}, true},
    {{1, 300}, {257, 300}, true}, {{67, 263}, {509, 263}, true}, {{50, 2}, {16, 2}, true},
    {{7, 5}, {1, 5}, true},
};

TEST_CASE("linear: both variants equal relu, matmul and add, to the bit") {
  for (const Case& c : kCases) {
    for (DType dt : {DType::f64, DType::f32}) {
      for (bool relu_input : {false, true}) {
        manual_seed(1);
        Tensor x = randn(c.x, dt), w = randn(c.w, dt);
        Tensor b = c.bias ? randn({c.w[0]}, dt) : Tensor();
        const Tensor want = composed(x, w, b, relu_input);
        for (const char* variant : kVariants) {
          INFO(variant << " x " << c.x.str() << " w " << c.w.str() << " " << dtype_name(dt)
                       << (c.bias ? "" : " no bias") << (relu_input ? " relu input" : ""));
          kernels::Use use("linear", variant);
          Tensor got = linear(x, w, b, relu_input);
          CHECK(got.shape() == want.shape());
          CHECK(max_abs_diff(got, want) == 0);
        }
      }
    }
  }
}

TEST_CASE("linear: NaN and -0 go through the ReLU as relu() lets them") {
  // relu(NaN) = NaN reaches the output; relu(-0) = +0; a -inf input contributes 0.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = from_vector(std::vector<double>{1.0, nan, -0.0, -inf, 2.0, -3.0}, {2, 3});
  Tensor w = from_vector(std::vector<double>{1.0, 2.0, 3.0, -1.0, 0.5, 0.25}, {2, 3});
  for (const char* variant : kVariants) {
    INFO(variant);
    kernels::Use use("linear", variant);
    const std::vector<double> y = linear(x, w, Tensor(), true).to_vector();
    CHECK(std::isnan(y[0]));
    CHECK(std::isnan(y[1]));
    CHECK(y[2] == 4.0);  // relu(-inf) 0 * 1 + 2 * 2 + relu(-3) 0 * 3
    CHECK(y[3] == 1.0);  // 0 * -1 + 2 * 0.5 + 0 * 0.25
  }
}

TEST_CASE("linear: strided inputs") {
  manual_seed(2);
  Tensor x = randn({29, 37}, DType::f64).t();                    // [37, 29], column stride 37
  Tensor w = randn({29, 41}, DType::f64).t();                    // [41, 29]: a transposed weight
  Tensor x3 = randn({4, 6, 29}, DType::f64).permute({1, 0, 2});  // leading dims do not merge
  Tensor b = randn({82}, DType::f64).slice(0, 0, 82, 2);         // stride-2 bias
  for (const char* variant : kVariants) {
    for (bool relu_input : {false, true}) {
      INFO(variant << (relu_input ? " relu input" : ""));
      kernels::Use use("linear", variant);
      CHECK(max_abs_diff(linear(x, w, b, relu_input), composed(x, w, b, relu_input)) < 1e-12);
      CHECK(max_abs_diff(linear(x3, w, b, relu_input), composed(x3, w, b, relu_input)) < 1e-12);
    }
  }
}

TEST_CASE("linear: gradcheck in float64, with and without bias and ReLU") {
  for (const char* variant : kVariants) {
    for (bool relu_input : {false, true}) {
      INFO(variant << (relu_input ? " relu input" : ""));
      kernels::Use use("linear", variant);
      manual_seed(3);
      Tensor x = randn({2, 3, 4}, DType::f64).set_requires_grad();
      Tensor w = randn({5, 4}, DType::f64).set_requires_grad();
      Tensor b = randn({5}, DType::f64).set_requires_grad();
      auto with_bias = [relu_input](const std::vector<Tensor>& in) {
        return linear(in[0], in[1], in[2], relu_input);
      };
      auto no_bias = [relu_input](const std::vector<Tensor>& in) {
        return linear(in[0], in[1], Tensor(), relu_input);
      };
      CHECK_GRAD(with_bias, x, w, b);
      CHECK_GRAD(no_bias, x, w);
      Tensor v = randn({4}, DType::f64).set_requires_grad();
      CHECK_GRAD(with_bias, v, w, b);
    }
  }
}

TEST_CASE("linear: gradients equal the composed ops'") {
  for (const Case& c : kCases) {
    for (bool relu_input : {false, true}) {
      manual_seed(4);
      Tensor x = randn(c.x, DType::f64).set_requires_grad();
      Tensor w = randn(c.w, DType::f64).set_requires_grad();
      Tensor b = c.bias ? randn({c.w[0]}, DType::f64).set_requires_grad() : Tensor();
      Dims y_shape = c.x;
      y_shape[y_shape.size() - 1] = c.w[0];
      Tensor g = randn(y_shape, DType::f64);
      composed(x, w, b, relu_input).backward(g);
      const Tensor dx = x.grad(), dw = w.grad(), db = c.bias ? b.grad() : Tensor();
      for (const char* variant : kVariants) {
        INFO(variant << " x " << c.x.str() << " w " << c.w.str()
                     << (relu_input ? " relu input" : ""));
        kernels::Use use("linear", variant);
        x.zero_grad(), w.zero_grad();
        if (c.bias) b.zero_grad();
        linear(x, w, b, relu_input).backward(g);
        // dx is the same product and mask as relu_backward(matmul(g, W)): the same bits; dW is
        // computed as [out, in] here and as its transpose by matmul's backward, and db row by
        // row in order where the sum op adds in its own order.
        CHECK(max_abs_diff(x.grad(), dx) == 0);
        CHECK(max_abs_diff(w.grad(), dw) < 1e-10);
        if (c.bias) CHECK(max_abs_diff(b.grad(), db) < 1e-10);
        CHECK(w.grad().is_contiguous());
      }
    }
  }
}

TEST_CASE("linear: one output buffer where relu, matmul and add allocate three") {
  Tensor x = randn({64, 48}), w = randn({96, 48}), b = randn({96});
  NoGrad no_grad;
  profiler::Session chain_session;
  composed(x, w, b, true);
  const profiler::Profile& pc = chain_session.stop();
  CHECK(allocs_of(pc, "relu") == std::pair<int64_t, int64_t>{1, 64 * 48 * 4});
  CHECK(allocs_of(pc, "matmul") == std::pair<int64_t, int64_t>{1, 64 * 96 * 4});
  CHECK(allocs_of(pc, "add") == std::pair<int64_t, int64_t>{1, 64 * 96 * 4});
  {
    profiler::Session s;
    linear(x, w, b, true);
    const profiler::Profile& p = s.stop();
    CHECK(allocs_of(p, "linear") == std::pair<int64_t, int64_t>{1, 64 * 96 * 4});
  }
  // The unfused variant also takes its ReLU'd copy of x, as the relu op would.
  kernels::Use use("linear", "unfused");
  profiler::Session s;
  linear(x, w, b, true);
  const profiler::Profile& p = s.stop();
  CHECK(allocs_of(p, "linear") == std::pair<int64_t, int64_t>{2, (64 * 96 + 64 * 48) * 4});
}

TEST_CASE("linear: cost formula, and the profile's rows and labels") {
  // m 6, n 7, k 5: 210 MACs; a ReLU'd A (6 x 5 = 30 elements), a bias on 42 outputs.
  CHECK(costs::linear(6, 7, 5, 30, true, false, false, 4) ==
        Cost{420 + 30 + 42, 210, (30 + 35 + 42 + 7) * 4});
  // A mask and no bias, float64.
  CHECK(costs::linear(6, 7, 5, 0, false, true, false, 8) ==
        Cost{420 + 42, 210, (30 + 35 + 42 + 42) * 8});
  // A ReLU'd B (5 x 7) and A's row sums: 6 rows of 4 additions, 6 sums written.
  CHECK(costs::linear(6, 7, 5, 35, false, false, true, 4) ==
        Cost{420 + 35 + 24, 210, (30 + 35 + 42 + 6) * 4});
  // The same FLOPs as the ops it replaces: relu 1 per input element, matmul 2 m n k, add 1 per
  // output; in backward relu_backward 1 per element of dx, sum (rows - 1) per bias element.
  Tensor x = randn({2, 3, 5}).set_requires_grad(), w = randn({7, 5}).set_requires_grad();
  Tensor b = randn({7}).set_requires_grad();
  profiler::Session s;
  sum(linear(x, w, b, true)).backward();
  const profiler::Profile& p = s.stop();
  std::vector<std::string> rows;
  for (const auto& r : p.recording.records) {
    if (r.kind != profiler::Kind::op) continue;
    const std::string name = std::string(r.op) + (r.grad_of[0] ? std::string(" ") + r.grad_of : "");
    rows.push_back(name);
    if (name == "linear") CHECK(r.cost == costs::linear(6, 7, 5, 30, true, false, false, 4));
    if (name == "linear linear.dx") {
      CHECK(r.cost == costs::linear(6, 5, 7, 0, false, true, false, 4));
    }
    if (name == "linear linear.dw") {
      CHECK(r.cost == costs::linear(7, 5, 6, 30, false, false, true, 4));
    }
  }
  for (const char* want : {"linear", "linear linear.dx", "linear linear.dw"}) {
    INFO(want);
    CHECK(std::count(rows.begin(), rows.end(), want) == 1);
  }
  // db comes out of dW's call: no row of its own; nor do the ops the layer stands for.
  for (const char* gone : {"sum linear.db", "relu", "add", "matmul", "relu_backward"}) {
    INFO(gone);
    CHECK(std::find(rows.begin(), rows.end(), gone) == rows.end());
  }
  // Without a weight gradient, db is the sum op's.
  w.set_requires_grad(false);
  profiler::Session s2;
  sum(linear(x, w, b, true)).backward();
  const profiler::Profile& p2 = s2.stop();
  int db_rows = 0;
  for (const auto& r : p2.recording.records) {
    db_rows += r.kind == profiler::Kind::op && std::string(r.grad_of) == "linear.db" &&
               std::string(r.op) == "sum";
  }
  CHECK(db_rows == 1);
}

TEST_CASE("linear: another matmul variant runs the ops it stands for") {
  manual_seed(5);
  Tensor x = randn({9, 6}, DType::f64).set_requires_grad(), w = randn({4, 6}, DType::f64);
  Tensor b = randn({4}, DType::f64);
  kernels::Use use("matmul", "naive");
  profiler::Session s;
  Tensor y = linear(x, w, b, true);
  const profiler::Profile& p = s.stop();
  CHECK(max_abs_diff(y, composed(x, w, b, true)) == 0);
  std::vector<std::string> ops;
  for (const auto& r : p.recording.records) {
    if (r.kind == profiler::Kind::op) ops.push_back(std::string(r.op) + " " + r.variant);
  }
  CHECK(ops == std::vector<std::string>{"relu optimized", "matmul naive", "add optimized"});
}

TEST_CASE("linear: a clear error for every bad input") {
  Tensor x = zeros({4, 5}), w = zeros({7, 5}), b = zeros({7});
  CHECK(contains(error_of([&] {
                   linear(zeros({4, 6}), w, b);
                 }),
                 "linear: input [4,6] must end in 5 features (weight [7,5])"));
  CHECK(contains(error_of([&] {
                   linear(x, zeros({7, 5, 1}), b);
                 }),
                 "weight must be 2-D [out, in]"));
  CHECK(contains(error_of([&] { linear(x, w, zeros({6}), true); }), "bias must be 1-D [7]"));
  CHECK(contains(error_of([&] { linear(x, w.to(DType::f64), b); }), "dtypes differ"));
  CHECK(contains(error_of([&] { linear(x, w, b.to(DType::f64)); }), "dtypes differ"));
  CHECK(contains(error_of([&] {
                   linear(zeros({4, 5}, DType::i64), w, b);
                 }),
                 "needs a float32 or float64"));
  CHECK(contains(error_of([&] { linear(scalar(1), w, b); }), "must end in 5 features"));
}

TEST_CASE("linear: empty sizes") {
  // No input features: y = b on every row (an empty sum is 0), and no rows at all.
  for (const char* variant : kVariants) {
    INFO(variant);
    kernels::Use use("linear", variant);
    Tensor b = from_vector(std::vector<double>{1.0, -2.0, 3.0}, {3});
    CHECK(linear(zeros({2, 0}, DType::f64), zeros({3, 0}, DType::f64), b, true).to_vector() ==
          std::vector<double>{1, -2, 3, 1, -2, 3});
    CHECK(linear(zeros({0, 4}, DType::f64), zeros({3, 4}, DType::f64), b, true).shape() ==
          Dims{0, 3});
    // Backward with no input features: dW is [3, 0], db still sums g over the rows.
    Tensor w0 = zeros({3, 0}, DType::f64).set_requires_grad();
    Tensor b0 = from_vector(std::vector<double>{1.0, -2.0, 3.0}, {3}).set_requires_grad();
    linear(zeros({2, 0}, DType::f64), w0, b0, true)
        .backward(from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3}));
    CHECK(w0.grad().shape() == Dims{3, 0});
    CHECK(b0.grad().to_vector() == std::vector<double>{5, 7, 9});
  }
}

TEST_CASE("linear: the meta device gives shapes, costs and memory") {
  DefaultDevice meta(Device::meta);
  Tensor x = randn({8, 16, 32}).set_requires_grad();
  Tensor w = randn({128, 32}).set_requires_grad(), b = randn({128}).set_requires_grad();
  profiler::Session s;
  Tensor y = linear(x, w, b, true);
  sum(y).backward();
  const profiler::Profile& p = s.stop();
  CHECK(y.shape() == Dims{8, 16, 128});
  CHECK(y.device() == Device::meta);
  CHECK(x.grad().shape() == Dims{8, 16, 32});
  CHECK(w.grad().shape() == Dims{128, 32});
  CHECK(b.grad().shape() == Dims{128});
  // y, then dx, dW and db.
  CHECK(allocs_of(p, "linear") ==
        std::pair<int64_t, int64_t>{4, (128 * 128 + 128 * 32 + 128 * 32 + 128) * 4});
}

}  // namespace
}  // namespace prism
