// matmul against the float64 reference: vectors, 2-D, batched and broadcast batches, strided
// operands, empty and k = 0 products, under every kernel variant.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kernels/registry.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/tensor/reference.h"

namespace prism {
namespace {

using ref::Array;
using ref::Input;
using ref::Layout;
using ref::Shape;

constexpr DType kFloatTypes[] = {DType::f32, DType::f64};

struct MatmulCase {
  Shape a, b, out;
};

const MatmulCase kCases[] = {
    {{5}, {5}, {}},                           // dot product: a 0-d result
    {{1}, {1}, {}},                           //
    {{5}, {5, 3}, {3}},                       // row vector @ matrix
    {{7, 13}, {13}, {7}},                     // matrix @ column vector
    {{7, 13}, {13, 5}, {7, 5}},               // primes
    {{1, 1}, {1, 1}, {1, 1}},                 //
    {{1, 13}, {13, 1}, {1, 1}},               //
    {{13, 1}, {1, 7}, {13, 7}},               // outer product, k = 1
    {{3, 4, 5}, {3, 5, 6}, {3, 4, 6}},        // batched
    {{3, 4, 5}, {5, 6}, {3, 4, 6}},           // batch broadcast from a 2-D right operand
    {{4, 5}, {3, 5, 6}, {3, 4, 6}},           // ... and left
    {{2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}},  // broadcast batch dims on both sides
    {{1, 3, 2, 7}, {3, 1, 7, 3}, {3, 3, 2, 3}},
    {{5}, {2, 5, 3}, {2, 3}},        // vector @ batch
    {{2, 3, 5}, {5}, {2, 3}},        // batch @ vector
    {{0, 5}, {5, 3}, {0, 3}},        // empty results
    {{4, 5}, {5, 0}, {4, 0}},        //
    {{0, 4, 5}, {5, 3}, {0, 4, 3}},  //
    {{4, 0}, {0, 3}, {4, 3}},        // k = 0: a sum of nothing is zero
    {{0}, {0}, {}},                  //
};

const std::pair<Layout, Layout> kLayoutPairs[] = {
    {Layout::contiguous, Layout::contiguous}, {Layout::transposed, Layout::contiguous},
    {Layout::contiguous, Layout::transposed}, {Layout::transposed, Layout::transposed},
    {Layout::stepped, Layout::expanded},      {Layout::expanded, Layout::stepped},
};

TEST_CASE("matmul matches the reference for every shape rule, layout and variant") {
  ref::Rng rng(31);
  for (const auto& entry : kernels::registry().at("matmul", Device::cpu).entries()) {
    kernels::Use use("matmul", entry.name);
    for (DType dt : kFloatTypes) {
      for (const MatmulCase& c : kCases) {
        for (auto [la, lb] : kLayoutPairs) {
          const std::string ctx = "[" + entry.name + "] " + dtype_name(dt) + " " +
                                  ref::shape_str(c.a) + " " + ref::layout_name(la) + " @ " +
                                  ref::shape_str(c.b) + " " + ref::layout_name(lb);
          INFO(ctx);
          Input a = ref::make_input(c.a, la, dt, rng);
          Input b = ref::make_input(c.b, lb, dt, rng);
          Tensor y = matmul(a.t, b.t);
          CHECK(y.shape() == Dims(c.out));
          CHECK(y.dtype() == dt);
          Array expect = ref::matmul(a.a, b.a);
          REQUIRE(expect.shape == c.out);  // the reference agrees with the table
          // Each output is a k-term dot product: its error scales with sum |a_ip| |b_pj|.
          Array scale = ref::matmul(ref::abs(a.a), ref::abs(b.a));
          ref::Tol tol = ref::tol_for(dt, 1e-5, 1e-6);
          CHECK(ref::mismatch(y, expect, tol.rtol, tol.atol, &scale) == "");
        }
      }
    }
  }
}

TEST_CASE("matmul: a layer's [B, T, k] @ [k, n] is one GEMM, and k = 0 still gives zeros") {
  // One GEMM over B T rows: one matmul op of [B T, k] @ [k, n] in the profile, the values
  // and gradients of the batched rule (checked against the reference above).
  prism::manual_seed(7);
  Tensor a = prism::randn({2, 3, 5}), b = prism::randn({5, 4});
  a.set_requires_grad();
  b.set_requires_grad();
  Tensor c = prism::matmul(a, b);
  CHECK(c.shape() == Dims{2, 3, 4});
  for (int64_t i = 0; i < 2; ++i) {
    const Tensor ci = prism::matmul(a.detach().select(0, i), b.detach());
    for (int64_t j = 0; j < 12; ++j) {
      CHECK(c.detach().select(0, i).contiguous().data<float>()[j] ==
            doctest::Approx(ci.data<float>()[j]).epsilon(1e-6));
    }
  }
  prism::sum(c).backward();
  CHECK(b.grad().shape() == Dims{5, 4});
  CHECK(b.grad().is_contiguous());
  // k = 0: the empty sum is zero (a [-1, 0] view cannot be inferred, so it stays batched).
  const Tensor z = prism::matmul(prism::zeros({2, 3, 0}), prism::zeros({0, 5}));
  CHECK(z.shape() == Dims{2, 3, 5});
  for (double v : z.to_vector()) CHECK(v == 0);
}

TEST_CASE("matmul of known small matrices") {
  // [[1,2,3],[4,5,6]] @ [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]
  for (DType dt : kFloatTypes) {
    Tensor a = ref::to_tensor(Array({2, 3}, {1, 2, 3, 4, 5, 6}), dt);
    Tensor b = ref::to_tensor(Array({3, 2}, {7, 8, 9, 10, 11, 12}), dt);
    CHECK(matmul(a, b).to_vector<double>() == std::vector<double>{58, 64, 139, 154});
    // b^T @ a^T = (a b)^T, through transposed views (no copies).
    CHECK(matmul(b.t(), a.t()).to_vector<double>() == std::vector<double>{58, 139, 64, 154});
    Tensor v = ref::to_tensor(Array({3}, {1, 0, -1}), dt);
    CHECK(matmul(a, v).to_vector<double>() == std::vector<double>{-2, -2});
    CHECK(matmul(v, b).to_vector<double>() == std::vector<double>{-4, -4});
    CHECK(matmul(v, v).item<double>() == 2);
  }
}

TEST_CASE("matmul of a large-ish odd product under each variant") {
  // Big enough for a blocked or packed kernel to take its fast paths and its edge cases.
  ref::Rng rng(32);
  for (const auto& entry : kernels::registry().at("matmul", Device::cpu).entries()) {
    kernels::Use use("matmul", entry.name);
    INFO(entry.name);
    Input a = ref::make_input({67, 131}, Layout::contiguous, DType::f32, rng);
    Input b = ref::make_input({131, 61}, Layout::transposed, DType::f32, rng);
    Array scale = ref::matmul(ref::abs(a.a), ref::abs(b.a));
    CHECK(ref::mismatch(matmul(a.t, b.t), ref::matmul(a.a, b.a), 1e-5, 1e-6, &scale) == "");
  }
}

TEST_CASE("matmul refuses mismatched shapes, 0-d operands and mixed dtypes") {
  CHECK_THROWS_WITH_AS(matmul(zeros({3, 4}), zeros({5, 6})), doctest::Contains("[3,4] @ [5,6]"),
                       Error);
  CHECK_THROWS_AS(matmul(zeros({4}), zeros({5})), Error);
  CHECK_THROWS_AS(matmul(zeros({2, 3, 4}), zeros({3, 4, 5})), Error);  // batch 2 vs 3
  CHECK_THROWS_AS(matmul(scalar(2), zeros({3})), Error);
  CHECK_THROWS_AS(matmul(zeros({2, 2}), zeros({2, 2}, DType::f64)), Error);
  CHECK_THROWS_AS(matmul(zeros({2, 2}, DType::i64), zeros({2, 2}, DType::i64)), Error);
}

}  // namespace
}  // namespace prism
