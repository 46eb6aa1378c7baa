// checked_shape_size (tensor/dims.h): the one place a shape from outside the program becomes an
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

TEST_CASE("checked_shape_size: exact counts, and the boundary at 2^63 - 1 bytes") {
  CHECK(checked_shape_size(Dims{2, 3}, DType::f32, "t").numel == 6);
  CHECK(checked_shape_size(Dims{2, 3}, DType::f32, "t").nbytes == 24);
  CHECK(checked_shape_size(Dims{}, DType::f64, "t").numel == 1);  // a scalar
  CHECK(checked_shape_size(Dims{}, DType::f64, "t").nbytes == 8);
  CHECK(checked_shape_size(Dims{0, 7}, DType::i64, "t").numel == 0);
  // [0, 2^30, 2^30] holds nothing, and its strides (2^60 elements, 2^62 bytes) still fit.
  CHECK(checked_shape_size(Dims{0, 1 << 30, 1 << 30}, DType::f32, "t").nbytes == 0);
  // The largest f32 vector whose byte size fits: 4 (2^61 - 1) = 2^63 - 4.
  const int64_t most = (int64_t{1} << 61) - 1;
  CHECK(checked_shape_size(Dims{most}, DType::f32, "t").nbytes == INT64_MAX - 3);
  CHECK(contains(error_of([&] { checked_shape_size(Dims{most + 1}, DType::f32, "t"); }),
                 "t: shape [2305843009213693952] is too large"));
}

TEST_CASE("checked_shape_size: overflow and negative sizes are errors naming the shape") {
  // The example: no elements, but strides of 2^80.
  CHECK(contains(error_of([] {
                   checked_shape_size(Dims{0, k40, k40}, DType::f32, "load");
                 }),
                 "load: shape [0,1099511627776,1099511627776] is too large: with 4-byte "
                 "elements its size or strides exceed 2^63 - 1 bytes"));
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
