// linear_gelu: every variant against the chain gelu(add(matmul(x, transpose(w)), b)) on odd
// shapes (one element, primes, several 64 x 256 tiles with ragged edges, a vector input, no
// bias, strided x and w); gradients; the allocations the profile records (one buffer where the
// chain makes three); the cost formula; errors; the meta device.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/ops/linear_gelu/op.h"
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

Tensor chain(const Tensor& x, const Tensor& w, const Tensor& b) {
  Tensor z = matmul(x, w.transpose(0, 1));
  return gelu(b.defined() ? add(z, b) : z);
}

struct Case {
  Dims x, w;
  bool bias;
};

const std::vector<Case> kCases = {
    {{1, 1}, {1, 1}, true},      {{37, 29}, {41, 29}, true}, {{3, 50, 70}, {300, 70}, true},
    {{29}, {7, 29}, true},       {{5, 13}, {11, 13}, false}, {{2, 1, 3, 5}, {2, 5}, true},
    {{130, 8}, {513, 8}, false},
};

TEST_CASE("linear_gelu: every variant equals the matmul-add-gelu chain") {
  for (const Case& c : kCases) {
    for (DType dt : {DType::f64, DType::f32}) {
      manual_seed(1);
      Tensor x = randn(c.x, dt), w = randn(c.w, dt);
      Tensor b = c.bias ? randn({c.w[0]}, dt) : Tensor();
      const Tensor want = chain(x, w, b);
      for (const char* variant : kVariants) {
        INFO(variant << " x " << c.x.str() << " w " << c.w.str() << " " << dtype_name(dt)
                     << (c.bias ? "" : " no bias"));
        kernels::Use use("linear_gelu", variant);
        Tensor got = linear_gelu(x, w, b);
        CHECK(got.shape() == want.shape());
        CHECK(max_abs_diff(got, want) < (dt == DType::f64 ? 1e-12 : 2e-5));
      }
    }
  }
}

TEST_CASE("linear_gelu: strided inputs") {
  manual_seed(2);
  Tensor x = randn({29, 37}, DType::f64).t();                    // [37, 29], column stride 37
  Tensor w = randn({29, 41}, DType::f64).t();                    // [41, 29]: a transposed weight
  Tensor x3 = randn({4, 6, 29}, DType::f64).permute({1, 0, 2});  // leading dims do not merge
  Tensor b = randn({82}, DType::f64).slice(0, 0, 82, 2);         // stride-2 bias
  for (const char* variant : kVariants) {
    INFO(variant);
    kernels::Use use("linear_gelu", variant);
    CHECK(max_abs_diff(linear_gelu(x, w, b), chain(x, w, b)) < 1e-12);
    CHECK(max_abs_diff(linear_gelu(x3, w, b), chain(x3, w, b)) < 1e-12);
  }
}

TEST_CASE("linear_gelu: gradcheck in float64, with and without bias") {
  for (const char* variant : kVariants) {
    INFO(variant);
    kernels::Use use("linear_gelu", variant);
    manual_seed(3);
    Tensor x = randn({2, 3, 4}, DType::f64).set_requires_grad();
    Tensor w = randn({5, 4}, DType::f64).set_requires_grad();
    Tensor b = randn({5}, DType::f64).set_requires_grad();
    CHECK_GRAD([](const std::vector<Tensor>& in) { return linear_gelu(in[0], in[1], in[2]); }, x, w,
               b);
    CHECK_GRAD([](const std::vector<Tensor>& in) { return linear_gelu(in[0], in[1], Tensor()); }, x,
               w);
    Tensor v = randn({4}, DType::f64).set_requires_grad();
    CHECK_GRAD([](const std::vector<Tensor>& in) { return linear_gelu(in[0], in[1], in[2]); }, v, w,
               b);
  }
}

TEST_CASE("linear_gelu: gradients equal the chain's") {
  manual_seed(4);
  Tensor x = randn({70, 33}, DType::f64).set_requires_grad();
  Tensor w = randn({300, 33}, DType::f64).set_requires_grad();
  Tensor b = randn({300}, DType::f64).set_requires_grad();
  Tensor g = randn({70, 300}, DType::f64);
  chain(x, w, b).backward(g);
  const Tensor dx = x.grad(), dw = w.grad(), db = b.grad();
  for (const char* variant : kVariants) {
    INFO(variant);
    kernels::Use use("linear_gelu", variant);
    for (const Tensor* t : {&x, &w, &b}) t->zero_grad();
    linear_gelu(x, w, b).backward(g);
    CHECK(max_abs_diff(x.grad(), dx) < 1e-10);
    CHECK(max_abs_diff(w.grad(), dw) < 1e-10);
    CHECK(max_abs_diff(b.grad(), db) < 1e-10);
    CHECK(w.grad().is_contiguous());
  }
}

TEST_CASE("linear_gelu: one output buffer where the chain allocates three") {
  Tensor x = randn({64, 48}), w = randn({96, 48}).set_requires_grad(), b = randn({96});
  const int64_t out_bytes = 64 * 96 * 4;
  {
    NoGrad no_grad;
    profiler::Session chain_session;
    chain(x, w, b);
    const profiler::Profile& pc = chain_session.stop();
    const int64_t chain_allocs =
        allocs_of(pc, "matmul").first + allocs_of(pc, "add").first + allocs_of(pc, "gelu").first;
    CHECK(chain_allocs == 3);
    CHECK(allocs_of(pc, "matmul").second + allocs_of(pc, "add").second +
              allocs_of(pc, "gelu").second ==
          3 * out_bytes);
    for (const char* variant : kVariants) {
      INFO(variant);
      kernels::Use use("linear_gelu", variant);
      profiler::Session s;
      linear_gelu(x, w, b);
      const profiler::Profile& p = s.stop();
      CHECK(allocs_of(p, "linear_gelu") == std::pair<int64_t, int64_t>{1, out_bytes});
    }
  }
  // In grad mode the pre-activation is kept for backward: two buffers.
  profiler::Session s;
  Tensor y = linear_gelu(x, w, b);
  const profiler::Profile& p = s.stop();
  CHECK(allocs_of(p, "linear_gelu") == std::pair<int64_t, int64_t>{2, 2 * out_bytes});
}

TEST_CASE("linear_gelu: cost formula, and the profile records it") {
  // rows 6, in 5, out 7: 210 MACs; 42 outputs, each a bias add and a GELU (8).
  CHECK(costs::linear_gelu(6, 5, 7, true, false, 4) ==
        Cost{420 + 9 * 42, 210, (30 + 35 + 7 + 42) * 4});
  CHECK(costs::linear_gelu(6, 5, 7, false, true, 8) == Cost{420 + 8 * 42, 210, (30 + 35 + 84) * 8});
  // The chain's three ops count the same FLOPs: matmul 2 m n k, add 1 and gelu 8 per output.
  Tensor x = randn({2, 3, 5}), w = randn({7, 5}), b = randn({7});
  {
    NoGrad no_grad;
    profiler::Session s;
    linear_gelu(x, w, b);
    const profiler::Profile& p = s.stop();
    int seen = 0;
    for (const auto& r : p.recording.records) {
      if (std::string(r.op) != "linear_gelu") continue;
      CHECK(r.cost == costs::linear_gelu(6, 5, 7, true, false, 4));
      ++seen;
    }
    CHECK(seen == 1);
  }
  w.set_requires_grad();
  profiler::Session s;
  sum(linear_gelu(x, w, b)).backward();
  const profiler::Profile& p = s.stop();
  std::vector<std::string> grads;
  for (const auto& r : p.recording.records) {
    if (std::string(r.op) == "linear_gelu")
      CHECK(r.cost == costs::linear_gelu(6, 5, 7, true, true, 4));
    if (r.phase == profiler::Phase::backward && r.kind == profiler::Kind::op)
      grads.push_back(std::string(r.op) + " " + r.grad_of);
  }
  // x and b need no gradient: only dz and dw run.
  CHECK(std::find(grads.begin(), grads.end(), "gelu_backward linear_gelu.dz") != grads.end());
  CHECK(std::find(grads.begin(), grads.end(), "matmul linear_gelu.dw") != grads.end());
  CHECK(std::find(grads.begin(), grads.end(), "matmul linear_gelu.dx") == grads.end());
}

TEST_CASE("linear_gelu: a clear error for every bad input") {
  Tensor x = zeros({4, 5}), w = zeros({7, 5}), b = zeros({7});
  CHECK(contains(error_of([&] {
                   linear_gelu(zeros({4, 6}), w, b);
                 }),
                 "linear_gelu: input [4,6] must end in 5 features (weight [7,5])"));
  CHECK(contains(error_of([&] {
                   linear_gelu(x, zeros({7, 5, 1}), b);
                 }),
                 "weight must be 2-D [out, in]"));
  CHECK(contains(error_of([&] { linear_gelu(x, w, zeros({6})); }), "bias must be 1-D [7]"));
  CHECK(contains(error_of([&] { linear_gelu(x, w.to(DType::f64), b); }), "dtypes differ"));
  CHECK(contains(error_of([&] { linear_gelu(x, w, b.to(DType::f64)); }), "dtypes differ"));
  CHECK(contains(error_of([&] {
                   linear_gelu(zeros({4, 5}, DType::i64), w, b);
                 }),
                 "needs a float32 or float64"));
  CHECK(contains(error_of([&] { linear_gelu(scalar(1), w, b); }), "must end in 5 features"));
  CHECK(contains(error_of([&] {
                   linear_gelu(zeros({4, 0}), zeros({7, 0}), b);
                 }),
                 "has no features"));
}

TEST_CASE("linear_gelu: the meta device gives shapes, costs and memory") {
  DefaultDevice meta(Device::meta);
  Tensor x = randn({8, 16, 32});
  Tensor w = randn({128, 32}).set_requires_grad(), b = randn({128}).set_requires_grad();
  profiler::Session s;
  Tensor y = linear_gelu(x, w, b);
  sum(y).backward();
  const profiler::Profile& p = s.stop();
  CHECK(y.shape() == Dims{8, 16, 128});
  CHECK(y.device() == Device::meta);
  CHECK(w.grad().shape() == Dims{128, 32});
  CHECK(b.grad().shape() == Dims{128});
  CHECK(allocs_of(p, "linear_gelu") == std::pair<int64_t, int64_t>{2, 2 * 128 * 128 * 4});
}

}  // namespace
}  // namespace prism
