// Printing: the exact text of small tensors, and a readable summary of big ones.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "tensor/ops.h"
#include "tensor/tensor.h"

using prism::Dims;
using prism::DType;
using prism::Tensor;

namespace {

std::string printed(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("print: a 2x2 float tensor") {
  Tensor x = prism::from_vector(std::vector<float>{1, 2, 3.5f, -4}, {2, 2});
  CHECK(printed(x) ==
        "tensor([[1.0000, 2.0000],\n"
        "        [3.5000, -4.0000]], shape=[2,2], dtype=float32)");
  CHECK(x.str() == printed(x));
}

TEST_CASE("print: views print their own elements") {
  Tensor x = prism::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  CHECK(printed(x.t()) ==
        "tensor([[1.0000, 3.0000],\n"
        "        [2.0000, 4.0000]], shape=[2,2], dtype=float32)");
  CHECK(printed(x.select(1, 1)) == "tensor([2.0000, 4.0000], shape=[2], dtype=float32)");
  CHECK(printed(prism::scalar(5).expand({3})) ==
        "tensor([5.0000, 5.0000, 5.0000], shape=[3], dtype=float32)");
}

TEST_CASE("print: int64 and float64") {
  Tensor i = prism::from_vector(std::vector<int64_t>{1, -20, 300}, {3});
  CHECK(printed(i) == "tensor([1, -20, 300], shape=[3], dtype=int64)");
  Tensor big = prism::from_vector(std::vector<int64_t>{4000000000000LL}, {1});
  CHECK(printed(big) == "tensor([4000000000000], shape=[1], dtype=int64)");
  // Beyond 2^53 a double cannot hold every integer: the digits must come from the int64.
  Tensor huge =
      prism::from_vector(std::vector<int64_t>{9007199254740993LL, -9007199254740993LL}, {2});
  CHECK(printed(huge) == "tensor([9007199254740993, -9007199254740993], shape=[2], dtype=int64)");
  CHECK(printed(huge.select(0, 0)) == "tensor(9007199254740993, shape=[], dtype=int64)");
  Tensor d = prism::from_vector(std::vector<double>{0.125, 2}, {2});
  CHECK(printed(d) == "tensor([0.1250, 2.0000], shape=[2], dtype=float64)");
}

TEST_CASE("print: 0-d tensors") {
  CHECK(printed(prism::scalar(3.5)) == "tensor(3.5000, shape=[], dtype=float32)");
  CHECK(printed(prism::scalar(-7, DType::i64)) == "tensor(-7, shape=[], dtype=int64)");
}

TEST_CASE("print: very large and very small values use exponent notation") {
  Tensor x = prism::from_vector(std::vector<double>{123456, 0.00001, 0, -1e-7}, {4});
  CHECK(printed(x) ==
        "tensor([1.2346e+05, 1.0000e-05, 0.0000, -1.0000e-07], shape=[4], dtype=float64)");
}

TEST_CASE("print: a 3-d tensor") {
  Tensor x = prism::arange(0, 8, 1, DType::i64).reshape({2, 2, 2});
  CHECK(printed(x) ==
        "tensor([[[0, 1],\n"
        "         [2, 3]],\n"
        "        [[4, 5],\n"
        "         [6, 7]]], shape=[2,2,2], dtype=int64)");
}

TEST_CASE("print: requires_grad, empty and undefined tensors") {
  Tensor x = prism::ones({2});
  x.set_requires_grad();
  CHECK(printed(x) == "tensor([1.0000, 1.0000], shape=[2], dtype=float32, requires_grad)");
  CHECK(printed(prism::zeros({0})) == "tensor([], shape=[0], dtype=float32)");
  CHECK(printed(Tensor()) == "tensor(undefined)");
}

TEST_CASE("print: a 2000-element tensor is summarised") {
  Tensor x = prism::arange(2000);
  std::string s = printed(x);
  CHECK(s ==
        "tensor([0.0000, 1.0000, 2.0000, ..., 1997.0000, 1998.0000, 1999.0000], shape=[2000], "
        "dtype=float32)");

  // A 2-D one elides rows and columns, and stays a few lines long.
  Tensor m = prism::arange(2000).reshape({40, 50});
  std::string t = printed(m);
  CHECK(contains(t, "..."));
  CHECK(std::count(t.begin(), t.end(), '\n') < 10);
  CHECK(contains(t, "[0.0000, 1.0000, 2.0000, ..., 47.0000, 48.0000, 49.0000]"));
  CHECK(contains(t, "[1950.0000, 1951.0000, 1952.0000, ..., 1997.0000, 1998.0000, 1999.0000]"));
  CHECK_FALSE(contains(t, "1000.0000"));
  CHECK(contains(t, "shape=[40,50]"));

  // At the threshold (1000 elements) nothing is elided.
  std::string full = printed(prism::arange(1000));
  CHECK_FALSE(contains(full, "..."));
  CHECK(contains(full, "500.0000"));
}
