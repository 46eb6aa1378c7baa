// Reductions against the float64 reference: sum, mean, max, argmax and sum_to over single dims,
// several dims (adjacent or not), all dims, keepdim and negative dims, on odd shapes and
// non-contiguous inputs, under every kernel variant.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "profiler/session.h"
#include "tests/tensor/reference.h"

namespace prism {
namespace {

using ref::Array;
using ref::Input;
using ref::Layout;
using ref::Shape;

constexpr DType kFloatTypes[] = {DType::f32, DType::f64};

// Every dim list worth trying for an n-d tensor: all ({}), each single dim (both signs), every
// pair (adjacent or not), and every dim listed explicitly.
std::vector<std::vector<int>> dim_lists(int nd) {
  std::vector<std::vector<int>> out = {{}};
  for (int d = 0; d < nd; ++d) {
    out.push_back({d});
    out.push_back({d - nd});
  }
  for (int d0 = 0; d0 < nd; ++d0) {
    for (int d1 = d0 + 1; d1 < nd; ++d1) {
      out.push_back({d0, d1});
      out.push_back({d1 - nd, d0});  // order and sign do not matter
    }
  }
  if (nd >= 3) {
    std::vector<int> all;
    for (int d = nd - 1; d >= 0; --d) all.push_back(d);
    out.push_back(all);
  }
  if (nd == 4) out.push_back({0, 2, 3});
  return out;
}

std::string dims_str(const std::vector<int>& dims) {
  std::string s = "{";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  s += '}';
  return s;
}

// Runs fn for every variant of `op` registered on the cpu (reference, naive, ...), by name.
template <class F>
void for_each_variant(const char* op, F&& fn) {
  for (const auto& e : kernels::registry().at(op, Device::cpu).entries()) {
    kernels::Use use(op, e.name);
    fn(e.name);
  }
}

const std::vector<Shape> kShapes = {{}, {1}, {13}, {7, 13}, {3, 1, 5}, {2, 3, 4, 5}};

TEST_CASE("sum and mean match the reference over any set of dims") {
  ref::Rng rng(21);
  for (const char* op : {"sum", "mean"}) {
    for_each_variant(op, [&](const std::string& variant) {
      for (DType dt : kFloatTypes) {
        for (const Shape& s : kShapes) {
          for (Layout l : ref::kAllLayouts) {
            Input in = ref::make_input(s, l, dt, rng);
            for (const auto& dims : dim_lists(static_cast<int>(s.size()))) {
              for (bool keepdim : {false, true}) {
                const std::string ctx = std::string(op) + " [" + variant + "] " + dtype_name(dt) +
                                        " " + ref::shape_str(s) + " " + ref::layout_name(l) +
                                        " dims " + dims_str(dims) + (keepdim ? " keepdim" : "");
                INFO(ctx);
                const bool is_sum = std::string(op) == "sum";
                Tensor y = is_sum ? sum(in.t, dims, keepdim) : mean(in.t, dims, keepdim);
                Array expect =
                    is_sum ? ref::sum(in.a, dims, keepdim) : ref::mean(in.a, dims, keepdim);
                // Error of a float32 sum grows with the sum of |x|, not with the result.
                Array scale = is_sum ? ref::sum(ref::abs(in.a), dims, keepdim)
                                     : ref::mean(ref::abs(in.a), dims, keepdim);
                ref::Tol tol = ref::tol_for(dt, 1e-5, 1e-6);
                CHECK(y.dtype() == dt);
                CHECK(ref::mismatch(y, expect, tol.rtol, tol.atol, &scale) == "");
              }
            }
          }
        }
      }
    });
  }
}

TEST_CASE("sum of an empty tensor is zero, mean of one is an error") {
  Tensor e = zeros({0, 3});
  CHECK(sum(e).item<double>() == 0);
  CHECK(sum(e).dim() == 0);
  Tensor s0 = sum(e, {0});
  CHECK(s0.shape() == Dims{3});
  CHECK(s0.to_vector<double>() == std::vector<double>{0, 0, 0});
  CHECK(sum(e, {1}).shape() == Dims{0});
  CHECK(sum(e, {0}, true).shape() == Dims{1, 3});
  CHECK_THROWS_AS(mean(e), Error);
  CHECK_THROWS_AS(mean(e, {0}), Error);
  CHECK_THROWS_AS(max(e, 0), Error);
  CHECK_THROWS_AS(argmax(e), Error);
}

TEST_CASE("reductions reject repeated and out-of-range dims") {
  Tensor x = zeros({2, 3, 4});
  CHECK_THROWS_WITH_AS(sum(x, {1, -2}), doctest::Contains("twice"), Error);
  CHECK_THROWS_AS(sum(x, {3}), Error);
  CHECK_THROWS_AS(mean(x, {-4}), Error);
  CHECK_THROWS_AS(max(x, 3), Error);
  CHECK_THROWS_AS(argmax(x, -4), Error);
  CHECK_THROWS_AS(sum(zeros({2}, DType::i64)), Error);
}

TEST_CASE("reducing non-adjacent dims copies the input first, adjacent dims do not") {
  Tensor x = randn({3, 4, 5});
  auto copies_during = [&](const std::vector<int>& dims) {
    profiler::Session session;
    Tensor y = sum(x, dims);
    const profiler::Profile& p = session.stop();
    int copies = 0;
    for (const auto& r : p.recording.records) {
      if (std::string(r.op) == "contiguous") {
        ++copies;
        CHECK(r.cost.bytes == 2 * x.nbytes());
      }
    }
    return copies;
  };
  CHECK(copies_during({1, 2}) == 0);
  CHECK(copies_during({0, 1}) == 0);
  CHECK(copies_during({0}) == 0);
  CHECK(copies_during({}) == 0);
  CHECK(copies_during({0, 2}) == 1);
  // The result is right either way.
  CHECK(ref::mismatch(sum(x, {0, 2}), ref::sum(ref::of(x), {0, 2}), 1e-5, 1e-6) == "");
}

TEST_CASE("max and argmax match the reference over each dim") {
  ref::Rng rng(22);
  for (const char* op : {"max", "argmax"}) {
    for_each_variant(op, [&](const std::string& variant) {
      for (DType dt : kFloatTypes) {
        for (const Shape& s : kShapes) {
          for (Layout l : ref::kAllLayouts) {
            Input in = ref::make_input(s, l, dt, rng);
            const int nd = static_cast<int>(s.size());
            for (int d = -std::max(nd, 1); d < std::max(nd, 1); ++d) {
              for (bool keepdim : {false, true}) {
                const std::string ctx = std::string(op) + " [" + variant + "] " + dtype_name(dt) +
                                        " " + ref::shape_str(s) + " " + ref::layout_name(l) +
                                        " dim " + std::to_string(d) + (keepdim ? " keepdim" : "");
                INFO(ctx);
                if (std::string(op) == "max") {
                  Tensor y = max(in.t, d, keepdim);
                  CHECK(y.dtype() == dt);
                  CHECK(ref::mismatch(y, ref::amax(in.a, d, keepdim), 0, 0) == "");  // exact
                } else {
                  Tensor y = argmax(in.t, d, keepdim);
                  CHECK(y.dtype() == DType::i64);
                  CHECK(ref::mismatch(y, ref::argmax(in.a, d, keepdim), 0, 0) == "");
                }
              }
            }
          }
        }
      }
    });
  }
}

TEST_CASE("max and argmax over all elements") {
  ref::Rng rng(23);
  for (DType dt : kFloatTypes) {
    for (Layout l : ref::kAllLayouts) {
      INFO((std::string(dtype_name(dt)) + " " + ref::layout_name(l)));
      Input in = ref::make_input({7, 13}, l, dt, rng);
      Array flat = ref::reshape(in.a, {in.a.numel()});
      CHECK(max(in.t).dim() == 0);
      CHECK(max(in.t).item<double>() == ref::amax(flat, 0)[0]);
      Tensor am = argmax(in.t);
      CHECK(am.dim() == 0);
      CHECK(am.dtype() == DType::i64);
      CHECK(am.item<double>() == ref::argmax(flat, 0)[0]);  // a flat row-major index
    }
  }
  CHECK(max(scalar(4.5)).item<double>() == 4.5);
  CHECK(argmax(scalar(4.5)).item<double>() == 0);
}

TEST_CASE("max with ties returns the first index, under every variant and layout") {
  // Rows with ties in different places, including all-equal rows and ties at the end.
  Array rows({4, 5}, {1,  6,  6,  2,  0,   //
                      4,  4,  4,  4,  4,   //
                      -1, -5, -1, -9, -1,  //
                      4,  6,  1,  4,  4});
  const std::vector<double> first_in_row = {1, 0, 0, 1};
  const std::vector<double> first_in_col = {1, 0, 0, 1, 1};  // along dim 0 (strided)
  for (const char* op : {"max", "argmax"}) {
    for_each_variant(op, [&](const std::string& variant) {
      for (DType dt : kFloatTypes) {
        INFO((std::string(op) + " [" + variant + "] " + dtype_name(dt)));
        Tensor x = ref::to_tensor(rows, dt);
        CHECK(argmax(x, 1).to_vector<double>() == first_in_row);
        CHECK(argmax(x, -1, true).to_vector<double>() == first_in_row);
        CHECK(argmax(x, 0).to_vector<double>() == first_in_col);
        // The transpose walks the same ties with a strided inner dim.
        CHECK(argmax(x.t(), 0).to_vector<double>() == first_in_row);
        CHECK(argmax(x.t(), 1).to_vector<double>() == first_in_col);
        // Flat argmax: the first 6 is element 1, not a later one.
        CHECK(argmax(x).item<double>() == 1);
        CHECK(argmax(ref::to_tensor(Array({6}, {2, 2, 2, 2, 2, 2}), dt)).item<double>() == 0);
        CHECK(max(x, 1).to_vector<double>() == std::vector<double>{6, 4, -1, 6});
        CHECK(max(x, 0).to_vector<double>() == std::vector<double>{4, 6, 6, 4, 4});
      }
    });
  }
}

TEST_CASE("max and argmax let NaN win at its first position, under every variant") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // Rows: NaN in the middle, NaN first, two NaNs, all -inf, +inf twice. A kernel that leaves NaN
  // to a SIMD max (Eigen's default) returns 9 and index 3 for the first row.
  Array rows({5, 5}, {1,    7,    nan,  9,    2,     //
                      nan,  3,    4,    5,    6,     //
                      1,    nan,  2,    nan,  3,     //
                      -inf, -inf, -inf, -inf, -inf,  //
                      1,    inf,  3,    inf,  0});
  const std::vector<double> first_in_row = {2, 0, 1, 0, 1};
  for (const char* op : {"max", "argmax"}) {
    for_each_variant(op, [&](const std::string& variant) {
      for (DType dt : kFloatTypes) {
        INFO((std::string(op) + " [" + variant + "] " + dtype_name(dt)));
        Tensor x = ref::to_tensor(rows, dt);
        CHECK(argmax(x, 1).to_vector<double>() == first_in_row);
        CHECK(argmax(x.t(), 0).to_vector<double>() == first_in_row);  // strided rows
        const std::vector<double> m = max(x, 1).to_vector<double>();
        CHECK((std::isnan(m[0]) && std::isnan(m[1]) && std::isnan(m[2])));
        CHECK(m[3] == -inf);
        CHECK(m[4] == inf);
        CHECK(argmax(x).item<double>() == 2);  // the first NaN of the whole tensor
        CHECK(std::isnan(max(x).item<double>()));
      }
    });
  }
}

TEST_CASE("sum_to sums a broadcast shape back down") {
  ref::Rng rng(24);
  const std::pair<Shape, Shape> cases[] = {
      {{3, 4, 5}, {4, 1}}, {{3, 4, 5}, {1, 5}},    {{3, 4, 5}, {}},  {{3, 4, 5}, {3, 1, 5}},
      {{3, 4, 5}, {5}},    {{3, 4, 5}, {3, 4, 5}}, {{7, 1}, {1}},    {{2, 3, 4, 5}, {3, 1, 1}},
      {{1, 1}, {1}},       {{0, 3}, {3}},          {{4, 0}, {1, 0}},
  };
  for (DType dt : kFloatTypes) {
    for (const auto& [from, to] : cases) {
      for (Layout l : {Layout::contiguous, Layout::transposed}) {
        INFO((std::string(dtype_name(dt)) + " " + ref::shape_str(from) + " -> " +
              ref::shape_str(to) + " " + ref::layout_name(l)));
        Input in = ref::make_input(from, l, dt, rng);
        Tensor y = sum_to(in.t, Dims(to));
        Array scale = ref::sum_to(ref::abs(in.a), to);
        ref::Tol tol = ref::tol_for(dt, 1e-5, 1e-6);
        CHECK(ref::mismatch(y, ref::sum_to(in.a, to), tol.rtol, tol.atol, &scale) == "");
      }
    }
  }
  CHECK_THROWS_AS(sum_to(zeros({3, 4}), {5}), Error);
  CHECK_THROWS_AS(sum_to(zeros({3, 4}), {2, 3, 4}), Error);
  CHECK_THROWS_AS(sum_to(zeros({3, 4}), {3, 2}), Error);
}

TEST_CASE("a float32 sum of many elements stays accurate") {
  // 100003 copies of 0.1f: a float accumulator drifts by ~1e-3 relative; the result must not.
  const int64_t n = 100003;
  Tensor x = full({n}, 0.1);
  const double exact = static_cast<double>(n) * static_cast<double>(0.1f);
  for_each_variant("sum", [&](const std::string& variant) {
    INFO(variant);
    CHECK(sum(x).item<double>() == doctest::Approx(exact).epsilon(1e-6));
    CHECK(sum(x.reshape({1, n}), {1}).item<double>() == doctest::Approx(exact).epsilon(1e-6));
  });
  for_each_variant("mean", [&](const std::string& variant) {
    INFO(variant);
    CHECK(mean(x).item<double>() == doctest::Approx(0.1f).epsilon(1e-6));
  });
}

}  // namespace
}  // namespace prism

TEST_CASE("sum of an empty tensor is zero, over all dims or some") {
  prism::Tensor x = prism::zeros({1, 2, 0, 4});
  CHECK(prism::sum(x).item() == 0.0);
  prism::Tensor s = prism::sum(x, {2});
  CHECK(s.shape() == prism::Dims{1, 2, 4});
  for (int64_t i = 0; i < s.numel(); ++i) CHECK(s.data<float>()[i] == 0.0f);
}
