// checked_shape_size (kernels/dims.h): the one place a shape from outside the program becomes an
// element count and a byte size, with every overflow an Error instead of undefined behaviour
// (issue 12, finding 4). The figures are exact.
#include <doctest/doctest.h>

#include <cstdint>

#include "tensor/ops.h"
#include "tests/test_util.h"

using namespace prism;
using prism::testing::contains;
using prism::testing::error_of;

namespace {
constexpr int64_t k40 = int64_t{1} << 40;
}

TEST_CASE("checked_shape_size: exact counts, and the boundary at 2^50 bytes") {
  CHECK(checked_shape_size(Dims{2, 3}, DType::f32, "t").numel == 6);
  CHECK(checked_shape_size(Dims{2, 3}, DType::f32, "t").nbytes == 24);
  CHECK(checked_shape_size(Dims{}, DType::f64, "t").numel == 1);  // a scalar
  CHECK(checked_shape_size(Dims{}, DType::f64, "t").nbytes == 8);
  CHECK(checked_shape_size(Dims{0, 7}, DType::i64, "t").numel == 0);
  // [0, 2^20, 2^20] holds nothing, and its strides (2^40 elements, 2^42 bytes) are fine.
  CHECK(checked_shape_size(Dims{0, 1 << 20, 1 << 20}, DType::f32, "t").nbytes == 0);
  // The largest f32 vector: 2^48 elements, 2^50 bytes exactly; one more element is refused.
  const int64_t most = int64_t{1} << 48;
  CHECK(kMaxTensorBytes == int64_t{1} << 50);
  CHECK(checked_shape_size(Dims{most}, DType::f32, "t").nbytes == kMaxTensorBytes);
  CHECK(contains(error_of([&] { checked_shape_size(Dims{most + 1}, DType::f32, "t"); }),
                 "t: shape [281474976710657] is too large"));
  CHECK(contains(error_of([&] { checked_shape_size(Dims{most / 2 + 1}, DType::f64, "t"); }),
                 "is too large: with 8-byte elements"));
}

TEST_CASE("checked_shape_size: overflow and negative sizes are errors naming the shape") {
  // The example: no elements, but strides of 2^80.
  CHECK(contains(error_of([] {
                   checked_shape_size(Dims{0, k40, k40}, DType::f32, "load");
                 }),
                 "load: shape [0,1099511627776,1099511627776] is too large: with 4-byte "
                 "elements its size or strides exceed prism's limit of 2^50 bytes (1 PiB) per "
                 "tensor"));
  CHECK(contains(error_of([] {
                   checked_shape_size(Dims{k40, k40, k40}, DType::f32, "x");
                 }),
                 "is too large"));
  CHECK(contains(error_of([] {
                   checked_shape_size(Dims{3, -2}, DType::f32, "x");
                 }),
                 "x: negative size -2 in shape [3,-2]"));
}

TEST_CASE("checked_shape_size guards every way a tensor is made") {
  CHECK(contains(error_of([] { (void)zeros({0, k40, k40}); }), "zeros: shape"));
  CHECK(contains(error_of([] { (void)empty({k40, k40}); }), "empty: shape [1099511627776,"));
  {
    DefaultDevice meta(Device::meta);  // shapes only: the check is not about memory
    CHECK(contains(error_of([] { (void)empty({k40, k40}); }), "is too large"));
    CHECK(empty({k40, 4}).numel() == 4 * k40);
  }
  // A view whose element count would overflow, and an op whose output would.
  const Tensor one = ones({1, 1});
  CHECK(contains(error_of([&] { (void)one.expand({k40, k40}); }), "expand: shape"));
  DefaultDevice meta(Device::meta);
  const Tensor a = empty({k40, 1}), b = empty({1, k40});
  CHECK(contains(error_of([&] { (void)add(a, b); }), "cannot allocate a tensor: shape"));
}
