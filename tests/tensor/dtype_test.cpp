// The storage dtypes beyond float32/float64/int64: bfloat16 (round to nearest even), int8 and
// int32 (quantized weights and their accumulators). Sizes, conversions, printing, errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

#include "tensor/autograd/anomaly.h"
#include "tensor/ops.h"
#include "tensor/tensor.h"
#include "tests/test_util.h"

using prism::BFloat16;
using prism::DType;
using prism::Tensor;
using prism::testing::contains;
using prism::testing::error_of;

namespace {
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
}  // namespace

TEST_CASE("dtype: sizes and names") {
  CHECK(prism::dtype_size(DType::bf16) == 2);
  CHECK(prism::dtype_size(DType::i8) == 1);
  CHECK(prism::dtype_size(DType::i32) == 4);
  CHECK(std::string(prism::dtype_name(DType::bf16)) == "bfloat16");
  CHECK(std::string(prism::dtype_name(DType::i8)) == "int8");
  CHECK(std::string(prism::dtype_name(DType::i32)) == "int32");
  CHECK(prism::zeros({3, 5}, DType::bf16).nbytes() == 30);
  CHECK(prism::zeros({3, 5}, DType::i8).nbytes() == 15);
}

TEST_CASE("dtype: bfloat16 rounds to nearest, ties to even") {
  CHECK(prism::to_bf16(1.0f).bits == 0x3F80);
  CHECK(prism::to_bf16(-2.0f).bits == 0xC000);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: the tie goes to the even mantissa, 1.
  CHECK(prism::to_bf16(1.0f + 0x1p-8f).bits == 0x3F80);
  // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even): up.
  CHECK(prism::to_bf16(1.0f + 3 * 0x1p-8f).bits == 0x3F82);
  // Just above the tie rounds up, just below rounds down.
  CHECK(prism::to_bf16(from_bits(0x3F808001u)).bits == 0x3F81);
  CHECK(prism::to_bf16(from_bits(0x3F807FFFu)).bits == 0x3F80);
  // The largest float32 is past bfloat16's largest value plus half an ulp: infinity.
  CHECK(prism::to_bf16(std::numeric_limits<float>::max()).bits == 0x7F80);
  CHECK(prism::to_bf16(std::numeric_limits<float>::infinity()).bits == 0x7F80);
  // NaN stays NaN, even one whose payload sits only in the low bits that are cut.
  CHECK(std::isnan(prism::to_float(prism::to_bf16(from_bits(0x7F800001u)))));
  CHECK(std::isnan(prism::to_float(prism::to_bf16(std::nanf("")))));
  // Subnormals keep their upper bits.
  CHECK(prism::to_bf16(from_bits(0x00010000u)).bits == 0x0001);
  // Back to float32 is exact.
  CHECK(prism::to_float(BFloat16{0x4049}) == 3.140625f);
}

TEST_CASE("dtype: the relative error of float32 -> bfloat16 is at most 2^-8") {
  double worst = 0;
  for (uint32_t u = 0x00800000u; u < 0x7F000000u; u += 0x1357u) {  // normal floats, a sweep
    const float f = from_bits(u);
    worst =
        std::max(worst, static_cast<double>(std::fabs(prism::to_float(prism::to_bf16(f)) - f) / f));
  }
  CHECK(worst <= 0x1p-8);
  CHECK(worst > 0x1p-9);  // the bound is reached, not loose
}

TEST_CASE("dtype: cast to and from bfloat16, int8 and int32") {
  Tensor x = prism::from_vector(std::vector<float>{1.0f, -2.5f, 3.14159f, 1e30f, 0.0f}, {5});
  Tensor b = prism::cast(x, DType::bf16);
  CHECK(b.dtype() == DType::bf16);
  CHECK(b.data<BFloat16>()[2].bits == prism::to_bf16(3.14159f).bits);
  Tensor back = prism::cast(b, DType::f32);
  CHECK(back.data<float>()[0] == 1.0f);
  CHECK(back.data<float>()[1] == -2.5f);
  CHECK(back.data<float>()[2] == 3.140625f);
  CHECK(prism::cast(b, DType::f64).to_vector<double>()[1] == -2.5);

  // A strided (transposed) view converts element by element in logical order.
  Tensor m = prism::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor mt = prism::cast(m.transpose(0, 1), DType::bf16);
  CHECK(prism::cast(mt, DType::f32).to_vector<float>() == std::vector<float>{1, 4, 2, 5, 3, 6});

  Tensor q = prism::cast(prism::from_vector(std::vector<float>{-128.9f, 127.5f, -0.5f, 3.99f}, {4}),
                         DType::i8);
  CHECK(q.to_vector<int64_t>() == std::vector<int64_t>{-128, 127, 0, 3});  // toward zero
  CHECK(prism::cast(q, DType::i32).to_vector<int64_t>() == std::vector<int64_t>{-128, 127, 0, 3});
  CHECK(prism::cast(prism::scalar(2147483520.0, DType::f64), DType::i32).item<int64_t>() ==
        2147483520);
}

TEST_CASE("dtype: a value an integer type cannot hold is an error naming the element") {
  auto v = [](std::vector<float> x) {
    return prism::from_vector(x, {static_cast<int64_t>(x.size())});
  };
  CHECK(contains(error_of([&] {
                   prism::cast(v({1, 128.0f}), DType::i8);
                 }),
                 "element 1 is 128.000000, which int8 cannot hold"));
  CHECK(contains(error_of([&] { prism::cast(v({-129.0f}), DType::i8); }), "int8 cannot hold"));
  CHECK(contains(error_of([&] { prism::cast(v({std::nanf("")}), DType::i32); }),
                 "int32 cannot hold"));
  CHECK(contains(error_of([&] { prism::cast(v({INFINITY}), DType::i64); }), "int64 cannot hold"));
  CHECK(contains(error_of([&] { prism::cast(prism::cast(v({300}), DType::i32), DType::i8); }),
                 "element 0 is 300, which int8 cannot hold"));
}

TEST_CASE("dtype: printing, non-finite scans and unsupported ops") {
  std::ostringstream os;
  os << prism::cast(prism::from_vector(std::vector<float>{1.5f, -3.0f}, {2}), DType::bf16);
  CHECK(contains(os.str(), "1.5000"));
  CHECK(contains(os.str(), "bfloat16"));
  std::ostringstream oi;
  oi << prism::cast(prism::from_vector(std::vector<float>{-7, 9}, {2}), DType::i8);
  CHECK(contains(oi.str(), "-7, 9"));

  Tensor nan_b =
      prism::cast(prism::from_vector(std::vector<float>{0, INFINITY, 1}, {3}), DType::bf16);
  int64_t first = -1;
  CHECK(prism::autograd::count_non_finite(nan_b, &first) == 1);
  CHECK(first == 1);

  // An op with no kernel for the dtype says so before doing anything.
  Tensor a = prism::zeros({2, 2}, DType::i8);
  CHECK(contains(error_of([&] { prism::softmax(a, -1); }), "int8"));
}

TEST_CASE("dtype: gradients flow through casts between float types only") {
  Tensor x = prism::from_vector(std::vector<float>{0.5f, 2.0f}, {2}).set_requires_grad();
  Tensor y = prism::cast(prism::cast(x, DType::bf16), DType::f32);
  prism::sum(y * y).backward();
  CHECK(x.grad().to_vector<float>() == std::vector<float>{1.0f, 4.0f});
  CHECK_FALSE(prism::cast(x, DType::i8).requires_grad());
}
