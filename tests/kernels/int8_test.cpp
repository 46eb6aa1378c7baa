// The int8 inference kernels: matmul_int8 (every variant bit-exact against an integer
// reference, the requantization within half an output ulp of a float64 recompute), quantize
// (round half to even, saturation), their cost formulas, and the front ends' errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/ops/matmul_int8/op.h"
#include "kernels/registry.h"
#include "tensor/ops.h"
#include "tensor/quantized_ops.h"
#include "tensor/random.h"

namespace prism {
namespace {

using kernels::registry;
using kernels::Use;

// Deterministic int8 values over the whole symmetric range [-127, 127].
Tensor random_int8(const Dims& shape, uint64_t seed) {
  Tensor t = empty(shape, DType::i8);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    t.data<int8_t>()[i] = static_cast<int8_t>(static_cast<int64_t>(s % 255) - 127);
  }
  return t;
}

Tensor random_float(const Dims& shape, uint64_t seed, float lo, float hi) {
  manual_seed(seed);
  return rand(shape, DType::f32, lo, hi);
}

// acc[i][j] = sum_p a[i][p] w[j][p] in int64 (no overflow possible), read through strides.
std::vector<int64_t> integer_reference(const Tensor& a, const Tensor& w) {
  const int64_t m = a.size(0), k = a.size(1), n = w.size(0);
  std::vector<int64_t> acc(static_cast<size_t>(m * n), 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) {
        const int64_t x = a.data<int8_t>()[i * a.strides()[0] + p * a.strides()[1]];
        const int64_t y = w.data<int8_t>()[j * w.strides()[0] + p * w.strides()[1]];
        acc[static_cast<size_t>(i * n + j)] += x * y;
      }
  return acc;
}

std::string vnni_note() {
  return __builtin_cpu_supports("avx512vnni")
             ? "this CPU has AVX512-VNNI: 'optimized' ran the vpdpbusd path"
             : "this CPU lacks AVX512-VNNI: 'optimized' ran its portable path";
}

struct Shape3 {
  int64_t m, k, n;
  bool a_transposed;
};

TEST_CASE("matmul_int8: every variant equals the exact integer sum, requantized with one fma") {
  MESSAGE(vnni_note());
  const float a_scale = 0.0173f;
  // Size 1, primes, k not a multiple of 4 (the VNNI packing pads it), n not a multiple of 32
  // (the packed weight blocks), m not a multiple of 4 (the micro-kernel's rows), the MLP's
  // first layer, and a transposed (non-contiguous) a.
  const std::vector<Shape3> shapes = {{1, 1, 1, false},    {1, 7, 5, false}, {3, 13, 37, false},
                                      {5, 131, 33, true},  {7, 9, 16, true}, {2, 784, 256, false},
                                      {67, 257, 61, false}};
  int checked = 0;
  for (const Shape3& s : shapes) {
    const uint64_t seed = static_cast<uint64_t>(s.m * 1000 + s.k * 10 + s.n);
    Tensor a = s.a_transposed ? random_int8({s.k, s.m}, seed).t() : random_int8({s.m, s.k}, seed);
    Tensor w = random_int8({s.n, s.k}, seed + 1);
    Tensor ws = random_float({s.n}, seed + 2, 1e-3f, 2e-2f);
    Tensor b = random_float({s.n}, seed + 3, -1, 1);
    const std::vector<int64_t> acc = integer_reference(a, w);
    for (const auto& e : registry().at("matmul_int8", Device::cpu).entries()) {
      if (e.tag == kernels::VariantTag::user) continue;
      INFO("variant " << e.name << " m=" << s.m << " k=" << s.k << " n=" << s.n
                      << (s.a_transposed ? " (a transposed)" : ""));
      Use use("matmul_int8", e.name);
      for (bool with_bias : {true, false}) {
        Tensor out = matmul_int8(a, a_scale, w, ws, with_bias ? b : Tensor());
        REQUIRE(out.dtype() == DType::f32);
        REQUIRE(out.shape() == Dims{s.m, s.n});
        for (int64_t i = 0; i < s.m; ++i) {
          for (int64_t j = 0; j < s.n; ++j) {
            const int64_t x = acc[static_cast<size_t>(i * s.n + j)];
            const float scale = a_scale * ws.data<float>()[j];
            const float bias = with_bias ? b.data<float>()[j] : 0.f;
            // Bit-exact: the same single-rounding expression on the exact integer sum.
            const float expect = std::fma(static_cast<float>(x), scale, bias);
            const float got = out.data<float>()[i * s.n + j];
            CHECK(got == expect);
            // Within half an output ulp of the float64 recompute of the same expression
            // (|x| < 2^24 here, so float(x) is exact and the fma is the only rounding).
            REQUIRE(std::abs(x) < (int64_t{1} << 24));
            const double exact = static_cast<double>(x) * scale + bias;
            const double half_ulp = 0.5 * (std::nextafter(std::abs(got), INFINITY) - std::abs(got));
            CHECK(std::abs(got - exact) <= half_ulp);
            ++checked;
          }
        }
      }
    }
  }
  // 4,993 outputs over the shapes, with and without bias, for naive, portable and optimized.
  CHECK(checked >= 3 * 2 * 4993);
}

TEST_CASE("matmul_int8: the extremes, all +-127 at k = 1040, sum without overflow or wrap") {
  // -127 * -127 * 1040 = 16,774,160 < 2^24: the largest all-extreme k whose sum a float holds
  // exactly. On the VNNI path a + 128 = 1 and the column-sum correction does all the work.
  const int64_t k = 1040;
  // 20 rows: the packed (blocked) path of the optimized variant; 2 rows: its few-rows path.
  for (int64_t rows : {2, 20}) {
    Tensor a = full({rows, k}, -127, DType::i8), w = full({3, k}, -127, DType::i8);
    w.data<int8_t>()[k] = 127;  // row 1 starts with +127
    Tensor ws = ones({3});
    for (const auto& e : registry().at("matmul_int8", Device::cpu).entries()) {
      if (e.tag == kernels::VariantTag::user) continue;
      INFO(e.name);
      Use use("matmul_int8", e.name);
      Tensor out = matmul_int8(a, 1.f, w, ws, Tensor());
      CHECK(out.data<float>()[0] == 16129.f * k);
      CHECK(out.data<float>()[1] == 16129.f * (k - 2));
      CHECK(out.data<float>()[(rows - 1) * 3 + 1] == 16129.f * (k - 2));
    }
  }
}

TEST_CASE("quantize: round half to even, saturate at +-127, exact") {
  // scale 0.5: x / 0.5 is exact for these values, so the expected q follow from the rules alone.
  const std::vector<float> x = {0.f,    0.25f, 0.75f, 1.25f, -0.25f, -0.75f, 63.25f, 63.5f,
                                63.75f, 64.f,  -64.f, 1e9f,  -1e9f,  63.74f, 0.5f,   -0.5f};
  const std::vector<int8_t> expect = {0,   0,   2,    2,   0,    -2,  126, 127,
                                      127, 127, -127, 127, -127, 127, 1,   -1};
  // 0.25/0.5 = 0.5 -> 0 (even); 0.75/0.5 = 1.5 -> 2; 1.25/0.5 = 2.5 -> 2; 63.25/0.5 = 126.5 ->
  // 126; 63.5/0.5 = 127; 63.75/0.5 = 127.5 -> 128 -> saturates to 127; -64/0.5 = -128 -> -127.
  Tensor q = quantize(from_vector(x, {static_cast<int64_t>(x.size())}), 0.5f);
  REQUIRE(q.dtype() == DType::i8);
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("x = " << x[i]);
    CHECK(static_cast<int>(q.data<int8_t>()[i]) == static_cast<int>(expect[i]));
  }
  // NaN has no nearest integer: it maps to 0 (calibration never yields it from finite data).
  CHECK(quantize(full({3}, NAN), 1.f).data<int8_t>()[1] == 0);
  // A strided input reads through a copy; the result keeps the shape.
  Tensor m = random_float({7, 5}, 3, -2, 2);
  Tensor qt = quantize(m.t(), 0.01f);
  CHECK(qt.shape() == Dims{5, 7});
  CHECK(qt.data<int8_t>()[1] == quantize(m.t().contiguous(), 0.01f).data<int8_t>()[1]);
}

TEST_CASE("int8 cost formulas: exact counts at the real element sizes") {
  // matmul_int8 3 x 5 by 7 x 5, with bias: 105 MACs, 210 integer ops + 3 * 21 requantize FLOPs;
  // bytes = 15 + 35 (int8) + 4 * 21 (out) + 4 * 7 (w_scale) + 4 (a_scale) + 4 * 7 (bias).
  profiler::Cost c = costs::matmul_int8(3, 7, 5, true);
  CHECK(c.macs == 105);
  CHECK(c.flops == 210 + 63);
  CHECK(c.bytes == 15 + 35 + 84 + 28 + 4 + 28);
  CHECK(costs::matmul_int8(3, 7, 5, false).bytes == 15 + 35 + 84 + 28 + 4);
  // quantize of 10 float32 elements: 10 divides; 40 bytes read, 10 written.
  c = costs::quantize(10, 4);
  CHECK(c.flops == 10);
  CHECK(c.macs == 0);
  CHECK(c.bytes == 50);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("int8 ops: bad input is a clear error naming the op, shapes and dtypes") {
  Tensor a = random_int8({2, 3}, 1), w = random_int8({4, 3}, 2), ws = ones({4});
  CHECK(error_of([&] {
          matmul_int8(a, 1, random_int8({4, 5}, 3), ws, Tensor());
        }).find("matmul_int8: expects a [m, k], w [n, k]") != std::string::npos);
  CHECK(error_of([&] {
          matmul_int8(a.to(DType::f32), 1, w, ws, Tensor());
        }).find("expects int8 a and w") != std::string::npos);
  CHECK(error_of([&] { matmul_int8(a, 1, w, ones({3}), Tensor()); }).find("w_scale [n]") !=
        std::string::npos);
  CHECK(error_of([&] { matmul_int8(a, 1, w, ws, ones({3})); }).find("bias must be float32 [4]") !=
        std::string::npos);
  CHECK(error_of([&] { matmul_int8(a, 0, w, ws, Tensor()); }).find("a_scale") != std::string::npos);
  CHECK(error_of([&] { quantize(ones({3}), -1); }).find("quantize_int8: the scale") !=
        std::string::npos);
  CHECK(error_of([&] { quantize(ones({3}, DType::f64), 1); }).find("expects a float32") !=
        std::string::npos);
}

}  // namespace
}  // namespace prism
