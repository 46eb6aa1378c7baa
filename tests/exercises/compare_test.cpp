// The checker's comparison (exercises/checker/compare.h): one scale for a single output, and a
// scale per part for an output that stacks several (exercise 07's dx, dweight and dbias).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "exercises/checker/compare.h"
#include "tensor/ops.h"

namespace prism::exercises {

TEST_CASE("compare: the error is relative past 1 and absolute below, NaN against NaN is equal") {
  const Tensor want = from_vector(std::vector<float>{100, 0.5f, -2}, {3});
  CHECK(compare(want, want).error == 0);
  const Comparison c = compare(from_vector(std::vector<float>{101, 0.5f, -2}, {3}), want);
  CHECK(c.error == doctest::Approx(0.01));
  CHECK(c.worst == 0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor with_nan = from_vector(std::vector<float>{nan, 1}, {2});
  CHECK(compare(with_nan, with_nan).error == 0);
  CHECK(std::isinf(compare(from_vector(std::vector<float>{0, 1}, {2}), with_nan).error));
}

TEST_CASE("compare_parts: a small part's error is judged on its own scale, and named") {
  // Two rows of dx (values near 1) above a dbias row that sums 16411 rows; dx 47 times too large.
  const Tensor want = from_vector(std::vector<float>{1, -0.5f, 0.25f, 2, 16411, -16000}, {3, 2});
  std::vector<float> g = {47, -0.5f, 0.25f, 2, 16411, -16000};
  const Tensor got = from_vector(g, {3, 2});
  const std::vector<Part> parts = {{"dx", 2}, {"dbias", 1}};
  // One scale for the whole output hides it: 46 / 16411.
  CHECK(compare(got, want).error == doctest::Approx(46.0 / 16411));
  const Comparison c = compare_parts(got, want, parts);
  CHECK(c.error == doctest::Approx(46.0 / 2));  // dx's own scale: its largest value, 2
  CHECK(c.part == "dx");
  CHECK(c.worst == 0);
  // An error in the last part is placed in the whole output, and named.
  g = {1, -0.5f, 0.25f, 2, 16411, -15000};
  const Comparison d = compare_parts(from_vector(g, {3, 2}), want, parts);
  CHECK(d.part == "dbias");
  CHECK(d.worst == 5);
  CHECK(d.error == doctest::Approx(1000.0 / 16411));
  // Parts that do not cover the rows are the checker's bug, said so.
  CHECK_THROWS_AS(compare_parts(got, want, {{"dx", 2}}), Error);
}

}  // namespace prism::exercises
