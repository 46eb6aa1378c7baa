// Every error reachable from the public API is a prism::Error (never a crash or an abort) whose
// message names the op and the shapes or values at fault.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tensor/ops.h"
#include "tensor/tensor.h"

using prism::Dims;
using prism::DType;
using prism::Tensor;

// Checks that the expression (which may contain commas) throws a prism::Error whose message
// contains `text`.
#define CHECK_ERROR(text, ...) \
  CHECK_THROWS_WITH_AS((void)(__VA_ARGS__), doctest::Contains(text), prism::Error)

namespace {

Tensor iota(const Dims& shape, DType dt = DType::f32) {
  return prism::arange(0, static_cast<double>(shape.numel()), 1, dt).reshape(shape);
}

}  // namespace

TEST_CASE("errors: broadcasting names the op and both shapes") {
  Tensor a = prism::ones({2, 3}), b = prism::ones({4});
  CHECK_ERROR("add: shapes [2,3] and [4] cannot be broadcast", a + b);
  CHECK_ERROR("sub: shapes [2,3] and [4] cannot be broadcast", prism::sub(a, b));
  CHECK_ERROR("mul: shapes [4] and [2,3] cannot be broadcast", b * a);
  CHECK_ERROR("div: shapes [2,3] and [3,2]", a / prism::ones({3, 2}));
  CHECK_ERROR("pow: shapes", prism::pow(a, b));
  // Inputs are untouched by a refused op.
  CHECK(a.to_vector() == std::vector<double>(6, 1.0));
}

TEST_CASE("errors: matmul") {
  Tensor a = prism::ones({3, 4}), b = prism::ones({5, 6});
  CHECK_THROWS_WITH_AS((void)prism::matmul(a, b), "matmul: inner dimensions differ: [3,4] @ [5,6]",
                       prism::Error);
  CHECK_ERROR("matmul: inner dimensions differ", prism::matmul(prism::ones({3}), prism::ones({4})));
  CHECK_ERROR("matmul: needs tensors of at least 1 dim",
              prism::matmul(prism::scalar(1), prism::ones({1})));
  CHECK_ERROR("matmul: shapes [2] and [3] cannot be broadcast",
              prism::matmul(prism::ones({2, 3, 4}), prism::ones({3, 4, 5})));
  CHECK_ERROR("matmul: dtypes differ: float32 [3,4] and float64 [4,2]",
              prism::matmul(a, prism::ones({4, 2}, DType::f64)));
  CHECK_ERROR("matmul: needs a float32 or float64 tensor, got int64",
              prism::matmul(iota({2, 2}, DType::i64), iota({2, 2}, DType::i64)));
}

TEST_CASE("errors: reductions") {
  Tensor x = prism::ones({2, 3});
  CHECK_ERROR("sum: dim 2 is out of range for a 2-d tensor", prism::sum(x, {2}));
  CHECK_ERROR("sum: dim -3 is out of range for a 2-d tensor", prism::sum(x, {-3}));
  CHECK_ERROR("sum: dim -1 appears twice", prism::sum(x, {1, -1}));
  CHECK_ERROR("sum: dim 0 appears twice", prism::sum(x, {0, 0}));
  CHECK_ERROR("mean: dim 1 appears twice", prism::mean(x, {1, 1}));
  CHECK_ERROR("mean: dim 5 is out of range", prism::mean(x, {5}));
  CHECK_ERROR("max: dim 2 is out of range", prism::max(x, 2));
  CHECK_ERROR("argmax: dim -3 is out of range", prism::argmax(x, -3));
  CHECK_ERROR("sum: needs a float32 or float64 tensor, got int64 [3]",
              prism::sum(iota({3}, DType::i64)));
  CHECK_ERROR("mean: cannot reduce an empty tensor [0]", prism::mean(prism::zeros({0})));
  CHECK_ERROR("max: cannot reduce an empty tensor", prism::max(prism::zeros({2, 0}), 1));
  CHECK_ERROR("sum_to: [2,3] does not broadcast from [4]", prism::sum_to(x, {4}));
  CHECK_ERROR("sum_to: cannot sum [2,3] to the larger rank", prism::sum_to(x, {1, 2, 3}));
}

TEST_CASE("errors: softmax") {
  CHECK_ERROR("softmax: dim 2 is out of range", prism::softmax(prism::ones({2, 3}), 2));
  CHECK_ERROR("log_softmax", prism::log_softmax(iota({3}, DType::i64)));
}

TEST_CASE("errors: views") {
  Tensor x = iota({2, 3});
  CHECK_ERROR("view: cannot view [2,3] (6 elements) as [4]", x.view({4}));
  CHECK_ERROR("reshape: cannot view [2,3] (6 elements) as [4,2]", x.reshape({4, 2}));
  CHECK_ERROR("view: only one dim can be -1, got [-1,-1]", x.view({-1, -1}));
  CHECK_ERROR("reshape: invalid size -2 in [-2,-3]", x.reshape({-2, -3}));
  CHECK_ERROR("reshape: cannot view [2,3] (6 elements) as [-1,4]", x.reshape({-1, 4}));
  CHECK_ERROR("view: cannot view a tensor of shape [3,2] and strides [1,3] as [6]",
              x.t().view({6}));

  CHECK_ERROR("permute: dim 0 repeats in [0,0]", x.permute({0, 0}));
  CHECK_ERROR("permute: dim 1 repeats in [-1,1]", x.permute({-1, 1}));
  CHECK_ERROR("permute: order [0] has 1 entries for a 2-d tensor", x.permute({0}));
  CHECK_ERROR("permute: dim 2 is out of range for a 2-d tensor", x.permute({0, 2}));
  CHECK_ERROR("transpose: dim 2 is out of range for a 2-d tensor", x.transpose(0, 2));
  CHECK_ERROR("t: expects a 2-d tensor, got [2,3,1]", x.unsqueeze(2).t());

  CHECK_ERROR("narrow: window [2, 5) is outside dim 1 of size 3", x.narrow(1, 2, 3));
  CHECK_ERROR("narrow: window [-1, 0) is outside dim 0 of size 2", x.narrow(0, -1, 1));
  CHECK_ERROR("narrow: dim 2 is out of range", x.narrow(2, 0, 1));
  CHECK_ERROR("slice: step must be positive, got 0", x.slice(0, 0, 2, 0));
  CHECK_ERROR("slice: step must be positive, got -1", x.slice(0, 0, 2, -1));
  CHECK_ERROR("slice: dim -3 is out of range", x.slice(-3, 0, 1));
  CHECK_ERROR("select: index 2 is out of range for dim 0 of size 2", x.select(0, 2));
  CHECK_ERROR("select: index -4 is out of range for dim 1 of size 3", x.select(1, -4));

  CHECK_ERROR("expand: cannot expand [2,3] to [2,4] (dim 1 has size 3, not 1)", x.expand({2, 4}));
  CHECK_ERROR("expand: cannot expand [2,3] to fewer dims [3]", x.expand({3}));
  CHECK_ERROR("expand: -1 is not allowed for a new leading dim", x.expand({-1, 2, 3}));
  CHECK_ERROR("expand: invalid size -2", prism::ones({1}).expand({-2}));

  CHECK_ERROR("squeeze: dim 2 is out of range for a 2-d tensor", x.squeeze(2));
  CHECK_ERROR("unsqueeze: dim 3 is out of range for a 2-d tensor", x.unsqueeze(3));
  CHECK_ERROR("unsqueeze: dim -4 is out of range for a 2-d tensor", x.unsqueeze(-4));
  CHECK_ERROR("flatten: start dim 1 is after end dim 0", x.flatten(1, 0));
  CHECK_ERROR("flatten: dim 2 is out of range", x.flatten(2));
  CHECK_ERROR("size: dim 2 is out of range for a 2-d tensor", x.size(2));
  CHECK(x.size(-1) == 3);

  // A 0-d tensor has no dims to read or cut.
  Tensor s = prism::scalar(1);
  CHECK_ERROR("size: a 0-d tensor has no dim 0", s.size(0));
  CHECK_ERROR("slice: a 0-d tensor has no dim 0", s.slice(0, 0, 1));
  CHECK_ERROR("narrow: a 0-d tensor has no dim -1", s.narrow(-1, 0, 1));
  CHECK_ERROR("select: a 0-d tensor has no dim 0", s.select(0, 0));
  CHECK(s.squeeze(0).dim() == 0);  // squeezing nothing is fine
}

TEST_CASE("errors: element access") {
  Tensor x = iota({2, 3});
  CHECK_ERROR("at: index 3 out of range for dim 1 of [2,3]", x.at({0, 3}));
  CHECK_ERROR("at: index -1 out of range for dim 0 of [2,3]", x.at({-1, 0}));
  CHECK_ERROR("at: 1 indices for a 2-d tensor [2,3]", x.at({1}));
  CHECK_ERROR("at: 3 indices", x.at({0, 0, 0}));
  CHECK_ERROR("item: tensor has 6 elements [2,3], expected exactly 1", x.item());
  CHECK_ERROR("item: tensor has 0 elements [0]", prism::zeros({0}).item());
  CHECK_ERROR("data<T>: tensor is float32, asked for float64", x.data<double>());
  CHECK_ERROR("data<T>: tensor is float32, asked for int64", x.data<int64_t>());
  CHECK_ERROR("data<T>: tensor is int64, asked for float32",
              prism::zeros({1}, DType::i64).data<float>());
  CHECK(x.at({1, 2}) == 5);
}

TEST_CASE("errors: more than 8 dims") {
  CHECK_ERROR("tensors have at most 8 dims, asked for 9",
              prism::zeros({1, 1, 1, 1, 1, 1, 1, 1, 1}));
  Tensor x8 = prism::ones({1, 2, 1, 2, 1, 2, 1, 2});
  CHECK(x8.dim() == 8);
  CHECK_ERROR("at most 8 dims", x8.unsqueeze(0));
  CHECK_ERROR("at most 8 dims", x8.expand({2, 1, 2, 1, 2, 1, 2, 1, 2}));
  CHECK_ERROR("at most 8 dims", x8.reshape({1, 1, 1, 1, 1, 1, 1, 1, 16}));
  CHECK_ERROR("at most 8 dims", Dims(std::vector<int64_t>(20, 1)));
  // 8 dims work end to end.
  CHECK(prism::sum(x8 * x8).item() == 16);
  CHECK(x8.permute({7, 6, 5, 4, 3, 2, 1, 0}).contiguous().numel() == 16);
}

TEST_CASE("errors: dtypes") {
  Tensor i = iota({3}, DType::i64);
  CHECK_ERROR("exp: needs a float32 or float64 tensor, got int64 [3]", prism::exp(i));
  CHECK_ERROR("relu: needs a float32 or float64 tensor, got int64", prism::relu(i));
  CHECK_ERROR("neg: needs a float32 or float64", -i);
  CHECK_ERROR("add: needs a float32 or float64", i + i);
  CHECK_ERROR("add: dtypes differ: float32 [2] and float64 [2]",
              prism::ones({2}) + prism::ones({2}, DType::f64));
  CHECK_ERROR("mul: dtypes differ: float64 [2] and float32 [2]",
              prism::ones({2}, DType::f64) * prism::ones({2}));
  // A double operand follows the tensor's dtype, so mixing with a scalar is fine.
  CHECK((prism::ones({2}, DType::f64) * 2.0).dtype() == DType::f64);
}

TEST_CASE("errors: gather and index_select") {
  Tensor x = iota({2, 3});
  Tensor bad = prism::from_vector(std::vector<int64_t>{0, 3}, {2, 1});
  CHECK_ERROR("gather: index 3 is out of range for dim 1 of size 3", prism::gather(x, 1, bad));
  Tensor neg = prism::from_vector(std::vector<int64_t>{-1, 0}, {2, 1});
  CHECK_ERROR("gather: index -1 is out of range", prism::gather(x, 1, neg));
  CHECK_ERROR("gather: index must be int64, got float32",
              prism::gather(x, 1, prism::zeros({2, 1})));
  CHECK_ERROR("gather: index [2] must have as many dims as the input [2,3]",
              prism::gather(x, 1, prism::zeros({2}, DType::i64)));
  CHECK_ERROR("gather: index [3,1] is larger than the input [2,3] in dim 0",
              prism::gather(x, 1, prism::zeros({3, 1}, DType::i64)));
  CHECK_ERROR("gather: dim 2 is out of range", prism::gather(x, 2, bad));
  // The good case still works after all that.
  Tensor ok = prism::from_vector(std::vector<int64_t>{2, 0}, {2, 1});
  CHECK(prism::gather(x, 1, ok).to_vector() == std::vector<double>{2, 3});

  CHECK_ERROR("index_select: index must be int64, got float32",
              prism::index_select(x, 0, prism::zeros({1})));
  CHECK_ERROR("index_select: index must be int64, got float64",
              prism::index_select(x, 0, prism::zeros({1}, DType::f64)));
  CHECK_ERROR("index_select: index must be 0-d or 1-d, got [1,1]",
              prism::index_select(x, 0, prism::zeros({1, 1}, DType::i64)));
  CHECK_ERROR("index_select: index 2 is out of range",
              prism::index_select(x, 0, prism::from_vector(std::vector<int64_t>{2}, {1})));
  CHECK_ERROR("index_select: index 5 is out of range",
              prism::index_select(x, 1, prism::from_vector(std::vector<int64_t>{0, 5}, {2})));
  CHECK_ERROR("index_select: dim 2 is out of range",
              prism::index_select(x, 2, prism::zeros({1}, DType::i64)));
  CHECK_ERROR("index_select: needs at least a 1-d input",
              prism::index_select(prism::scalar(1), 0, prism::zeros({1}, DType::i64)));
}

TEST_CASE("errors: concat") {
  CHECK_ERROR("concat: needs at least one tensor", prism::concat({}));
  CHECK_ERROR("concat: tensor 1 has shape [2,4], which differs from [2,3] outside dim 0",
              prism::concat({prism::ones({2, 3}), prism::ones({2, 4})}, 0));
  CHECK_ERROR("concat: dtypes differ",
              prism::concat({prism::ones({2}), prism::ones({2}, DType::f64)}));
  CHECK_ERROR("concat: cannot concatenate 0-d tensors",
              prism::concat({prism::scalar(1), prism::scalar(2)}));
  CHECK_ERROR("concat: dim 1 is out of range", prism::concat({prism::ones({2})}, 1));
  CHECK_ERROR("concat: tensor 1 has shape [2,3,1]",
              prism::concat({prism::ones({2, 3}), prism::ones({2, 3, 1})}, 1));
}

TEST_CASE("errors: undefined tensors") {
  Tensor u;
  CHECK_FALSE(u.defined());
  CHECK_ERROR("use of an undefined tensor", u.shape());
  CHECK_ERROR("use of an undefined tensor", u.numel());
  CHECK_ERROR("add: got an undefined tensor", u + prism::ones({1}));
  CHECK_ERROR("exp: got an undefined tensor", prism::exp(u));
  CHECK_ERROR("contiguous: got an undefined tensor", prism::contiguous(u));
  CHECK_ERROR("backward: called on an undefined tensor", u.backward());
  CHECK_ERROR("concat: got an undefined tensor", prism::concat({prism::ones({1}), u}));
  CHECK(u.str() == "tensor(undefined)");
}

TEST_CASE("errors: factories and random") {
  CHECK_ERROR("zeros: negative size -1 in shape [-1]", prism::zeros({-1}));
  CHECK_ERROR("from_vector: 2 values for shape [3] (3 elements)",
              prism::from_vector(std::vector<double>{1, 2}, {3}));
  CHECK_ERROR("arange: step must not be zero", prism::arange(0, 3, 0));
  CHECK_ERROR("rand: needs a float dtype", prism::rand({2}, DType::i64));
}
