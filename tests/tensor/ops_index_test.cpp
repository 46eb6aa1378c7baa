// Indexing, joining and copies against the reference: gather, index_select, concat,
// contiguous, clone and cast, on odd shapes and strided inputs.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/tensor/reference.h"

namespace prism {
namespace {

using ref::Array;
using ref::Input;
using ref::Layout;
using ref::Shape;

constexpr DType kAllTypes[] = {DType::f32, DType::f64, DType::i64};

// Inputs of any dtype: int64 inputs hold small integers (still exact in the reference).
Input make_any(const Shape& s, Layout l, DType dt, ref::Rng& rng) {
  return dt == DType::i64 ? ref::make_input(s, l, dt, rng, -50, 50)
                          : ref::make_input(s, l, dt, rng);
}

TEST_CASE("gather matches the reference along every dim") {
  ref::Rng rng(51);
  struct Case {
    Shape x, index;
  };
  const Case cases[] = {
      {{7}, {11}},       {{7, 13}, {7, 13}},     {{7, 13}, {3, 5}},
      {{7, 13}, {7, 1}}, {{3, 1, 5}, {3, 1, 5}}, {{3, 4, 5}, {2, 6, 3}},
      {{1}, {1}},        {{4, 5}, {0, 5}},
  };
  for (DType dt : kAllTypes) {
    for (const Case& c : cases) {
      for (Layout lx : ref::kAllLayouts) {
        for (Layout li : {Layout::contiguous, Layout::transposed, Layout::stepped}) {
          const int nd = static_cast<int>(c.x.size());
          for (int d = -nd; d < nd; ++d) {
            const int dd = d < 0 ? d + nd : d;
            // The index may be larger than x only along the gathered dim.
            Shape is = c.index;
            bool fits = true;
            for (int i = 0; i < nd; ++i)
              fits = fits && (i == dd || is[static_cast<size_t>(i)] <= c.x[static_cast<size_t>(i)]);
            if (!fits) continue;
            const std::string ctx = std::string(dtype_name(dt)) + " x " + ref::shape_str(c.x) +
                                    " " + ref::layout_name(lx) + " index " + ref::shape_str(is) +
                                    " " + ref::layout_name(li) + " dim " + std::to_string(d);
            INFO(ctx);
            Input x = make_any(c.x, lx, dt, rng);
            // A random int64 index in [0, size(d)), laid out as asked.
            Input idx = ref::make_input(is, li, DType::i64, rng, 0,
                                        static_cast<double>(c.x[static_cast<size_t>(dd)]));
            Tensor y = gather(x.t, d, idx.t);
            CHECK(y.dtype() == dt);
            CHECK(ref::mismatch(y, ref::gather(x.a, d, idx.a), 0, 0) == "");
          }
        }
      }
    }
  }
}

TEST_CASE("gather checks its index") {
  Tensor x = zeros({3, 4});
  CHECK_THROWS_WITH_AS(gather(x, 1, from_vector(std::vector<int64_t>{0, 4, 1}, {3, 1})),
                       doctest::Contains("out of range"), Error);
  CHECK_THROWS_AS(gather(x, 1, from_vector(std::vector<int64_t>{-1}, {1, 1})), Error);
  CHECK_THROWS_AS(gather(x, 1, zeros({3, 1})), Error);              // not int64
  CHECK_THROWS_AS(gather(x, 1, zeros({3}, DType::i64)), Error);     // ndim differs
  CHECK_THROWS_AS(gather(x, 1, zeros({4, 1}, DType::i64)), Error);  // too big in dim 0
  CHECK_THROWS_AS(gather(x, 2, zeros({3, 1}, DType::i64)), Error);
}

TEST_CASE("index_select matches the reference, with repeated indices") {
  ref::Rng rng(52);
  const Shape shapes[] = {{7}, {7, 13}, {3, 1, 5}, {3, 4, 5}, {2, 3, 4, 5}};
  for (DType dt : kAllTypes) {
    for (const Shape& s : shapes) {
      for (Layout l : ref::kAllLayouts) {
        const int nd = static_cast<int>(s.size());
        for (int d = -nd; d < nd; ++d) {
          const int64_t n = s[static_cast<size_t>(d < 0 ? d + nd : d)];
          Input x = make_any(s, l, dt, rng);
          // Repeats, reversed order, a single entry, and none at all.
          std::vector<std::vector<int64_t>> lists = {{n - 1, 0, n - 1, 0}, {0}, {}};
          std::vector<int64_t> rev;
          for (int64_t i = n - 1; i >= 0; --i) rev.push_back(i);
          lists.push_back(rev);
          for (const auto& list : lists) {
            const std::string ctx = std::string(dtype_name(dt)) + " " + ref::shape_str(s) + " " +
                                    ref::layout_name(l) + " dim " + std::to_string(d) + " index " +
                                    ref::shape_str(list);
            INFO(ctx);
            Tensor index = from_vector(list, {static_cast<int64_t>(list.size())});
            Tensor y = index_select(x.t, d, index);
            CHECK(y.dtype() == dt);
            CHECK(ref::mismatch(y, ref::index_select(x.a, d, list), 0, 0) == "");
          }
        }
      }
    }
  }
  // A strided index (every other entry of a longer one) and a 0-d index.
  Tensor x = arange(20, DType::f64).reshape({4, 5});
  Tensor idx = from_vector(std::vector<int64_t>{3, 9, 1, 9, 3}, {5}).slice(0, 0, 5, 2);
  CHECK(index_select(x, 0, idx).to_vector<double>() ==
        ref::index_select(ref::of(x), 0, {3, 1, 3}).v);
  Tensor i0 = from_vector(std::vector<int64_t>{2}, {});
  CHECK(index_select(x, 1, i0).shape() == Dims{4, 1});
  CHECK(index_select(x, 1, i0).to_vector<double>() == std::vector<double>{2, 7, 12, 17});
}

TEST_CASE("index_select checks its index") {
  Tensor x = zeros({3, 4});
  CHECK_THROWS_WITH_AS(index_select(x, 0, from_vector(std::vector<int64_t>{0, 3}, {2})),
                       doctest::Contains("out of range"), Error);
  CHECK_THROWS_AS(index_select(x, 1, from_vector(std::vector<int64_t>{-1}, {1})), Error);
  CHECK_THROWS_AS(index_select(x, 0, zeros({2, 1}, DType::i64)), Error);  // 2-d index
  CHECK_THROWS_AS(index_select(x, 0, zeros({2})), Error);                 // float index
  CHECK_THROWS_AS(index_select(x, 2, zeros({1}, DType::i64)), Error);
}

TEST_CASE("concat matches the reference along every dim") {
  ref::Rng rng(53);
  for (DType dt : kAllTypes) {
    for (const Shape& s : std::vector<Shape>{{7}, {7, 13}, {3, 1, 5}, {2, 3, 4, 5}}) {
      const int nd = static_cast<int>(s.size());
      for (int d = -nd; d < nd; ++d) {
        const size_t dd = static_cast<size_t>(d < 0 ? d + nd : d);
        // Three parts of different sizes along d (one of them empty), each laid out differently.
        std::vector<Input> parts;
        const int64_t sizes[] = {s[dd], 1, 0, 3};
        Layout layouts[] = {Layout::transposed, Layout::stepped, Layout::contiguous,
                            Layout::expanded};
        std::vector<Tensor> ts;
        std::vector<Array> as;
        for (int i = 0; i < 4; ++i) {
          Shape ps = s;
          ps[dd] = sizes[i];
          Input p = make_any(ps, layouts[i], dt, rng);
          ts.push_back(p.t);
          as.push_back(p.a);
        }
        const std::string ctx =
            std::string(dtype_name(dt)) + " " + ref::shape_str(s) + " dim " + std::to_string(d);
        INFO(ctx);
        Tensor y = concat(ts, d);
        CHECK(y.dtype() == dt);
        CHECK(ref::mismatch(y, ref::concat(as, d), 0, 0) == "");
        // A single tensor: a copy of it.
        Tensor one = concat({ts[0]}, d);
        CHECK(ref::mismatch(one, as[0], 0, 0) == "");
        CHECK_FALSE(one.shares_storage_with(ts[0]));
      }
    }
  }
  CHECK_THROWS_AS(concat({}, 0), Error);
  CHECK_THROWS_AS(concat({zeros({2, 3}), zeros({2, 4})}, 0), Error);
  CHECK_THROWS_AS(concat({zeros({2, 3}), zeros({2, 3}, DType::f64)}, 0), Error);
  CHECK_THROWS_AS(concat({zeros({2, 3}), zeros({2, 3, 1})}, 0), Error);
  CHECK_THROWS_AS(concat({scalar(1), scalar(2)}, 0), Error);
  CHECK_THROWS_AS(concat({zeros({2, 3})}, 2), Error);
}

TEST_CASE("contiguous copies only strided tensors, clone always copies") {
  ref::Rng rng(54);
  for (DType dt : kAllTypes) {
    for (Layout l : ref::kAllLayouts) {
      for (const Shape& s : std::vector<Shape>{{}, {1}, {7, 13}, {3, 1, 5}, {2, 3, 4, 5}}) {
        const std::string ctx =
            std::string(dtype_name(dt)) + " " + ref::shape_str(s) + " " + ref::layout_name(l);
        INFO(ctx);
        Input x = make_any(s, l, dt, rng);
        Tensor c = contiguous(x.t);
        CHECK(c.is_contiguous());
        CHECK(c.dtype() == dt);
        CHECK(ref::mismatch(c, x.a, 0, 0) == "");
        if (x.t.is_contiguous()) {
          CHECK(c.impl_ptr() == x.t.impl_ptr());  // no copy at all
        } else {
          CHECK_FALSE(c.shares_storage_with(x.t));
        }
        Tensor k = clone(x.t);
        CHECK(k.is_contiguous());
        CHECK_FALSE(k.shares_storage_with(x.t));
        CHECK(ref::mismatch(k, x.a, 0, 0) == "");
        // The copy is independent of the original.
        if (k.numel() > 0) {
          if (dt == DType::f32) k.data<float>()[0] = 12345;
          if (dt == DType::f64) k.data<double>()[0] = 12345;
          if (dt == DType::i64) k.data<int64_t>()[0] = 12345;
          CHECK(x.t.to_vector<double>()[0] != 12345);
        }
      }
    }
  }
}

TEST_CASE("cast converts between every pair of dtypes") {
  ref::Rng rng(55);
  for (DType from : kAllTypes) {
    for (DType to : kAllTypes) {
      for (Layout l : {Layout::contiguous, Layout::transposed, Layout::expanded}) {
        const std::string ctx =
            std::string(dtype_name(from)) + " -> " + dtype_name(to) + " " + ref::layout_name(l);
        INFO(ctx);
        Input x = ref::make_input({3, 7}, l, from, rng, -20, 20);
        Tensor y = cast(x.t, to);
        CHECK(y.dtype() == to);
        CHECK(y.shape() == Dims{3, 7});
        // float -> int truncates toward zero (C++ conversion), -> float32 rounds to nearest.
        CHECK(ref::mismatch(y, ref::rounded(x.a, to), 0, 0) == "");
        if (from == to) CHECK(y.impl_ptr() == x.t.impl_ptr());
      }
    }
  }
  Tensor f = from_vector(std::vector<double>{-2.7, -0.5, 0.5, 2.7, 1e10}, {5});
  CHECK(cast(f, DType::i64).to_vector<int64_t>() == std::vector<int64_t>{-2, 0, 0, 2, 10000000000});
  CHECK(cast(scalar(1.5, DType::f64), DType::f32).item<double>() == 1.5);
  CHECK(cast(zeros({0, 2}), DType::f64).shape() == Dims{0, 2});
}

}  // namespace
}  // namespace prism
