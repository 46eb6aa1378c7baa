// Views and strides: every view shares its base's storage, has the shape / strides / offset the
// math says, reads the right elements, and allocates nothing. contiguous() copies only when it
// has to.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "profiler/memory.h"
#include "tensor/ops.h"
#include "tensor/tensor.h"
#include "tests/test_util.h"

using prism::testing::error_of;

using prism::Dims;
using prism::DType;
using prism::Tensor;

namespace {

// 0, 1, 2, ... as float32, in the given shape.
Tensor iota(const Dims& shape) {
  return prism::arange(shape.numel()).view(shape);
}

// Tensor allocations on the CPU so far (views must add none).
int64_t alloc_count() {
  return prism::profiler::memory_stats(0).alloc_count;
}

}  // namespace

TEST_CASE("views: a fresh tensor is contiguous with row-major strides") {
  Tensor x = iota({2, 3, 4});
  CHECK(x.shape() == Dims{2, 3, 4});
  CHECK(x.strides() == Dims{12, 4, 1});
  CHECK(x.offset() == 0);
  CHECK(x.is_contiguous());
  CHECK(x.at({1, 2, 3}) == 23);
  CHECK(prism::contiguous_strides({5, 1, 3}) == Dims{3, 3, 1});
}

TEST_CASE("views: reshape and view, including -1") {
  Tensor x = iota({2, 3, 4});
  Tensor v = x.view({4, -1});
  CHECK(v.shape() == Dims{4, 6});
  CHECK(v.strides() == Dims{6, 1});
  CHECK(v.shares_storage_with(x));
  CHECK(v.is_contiguous());
  CHECK(v.at({2, 5}) == 17);

  Tensor r = x.reshape({-1, 2});
  CHECK(r.shape() == Dims{12, 2});
  CHECK(r.shares_storage_with(x));
  CHECK(r.to_vector() == x.to_vector());

  // Size-1 dims can go anywhere.
  Tensor u = x.view({1, 2, 1, 12, 1});
  CHECK(u.shape() == Dims{1, 2, 1, 12, 1});
  CHECK(u.shares_storage_with(x));
  CHECK(u.at({0, 1, 0, 11, 0}) == 23);

  // A 0-d tensor views as [1] and back.
  Tensor s = prism::scalar(7);
  CHECK(s.view({1}).item() == 7);
  CHECK(s.view({1}).view({}).dim() == 0);
}

TEST_CASE("views: view of a non-contiguous tensor that is still viewable") {
  // x[:, 0:3] of a [4,6] tensor: rows are strided by 6, not 3, so it is not contiguous, but
  // splitting dim 0 into [2,2] needs no copy.
  Tensor x = iota({4, 6});
  Tensor n = x.narrow(1, 0, 3);
  CHECK_FALSE(n.is_contiguous());
  Tensor v = n.view({2, 2, 3});
  CHECK(v.shares_storage_with(x));
  CHECK(v.strides() == Dims{12, 6, 1});
  CHECK_FALSE(v.is_contiguous());
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 2; ++j) {
      for (int64_t k = 0; k < 3; ++k) {
        CHECK(v.at({i, j, k}) == static_cast<double>((2 * i + j) * 6 + k));
      }
    }
  }

  // A transposed tensor gains a size-1 dim without a copy.
  Tensor t = iota({3, 4}).t();  // [4,3], strides [1,4]
  Tensor w = t.view({4, 1, 3});
  CHECK(w.shares_storage_with(t));
  CHECK(w.shape()[0] == 4);
  CHECK(w.strides()[0] == 1);
  CHECK(w.strides()[2] == 4);
  CHECK(w.at({2, 0, 1}) == 6);  // t[2][1] = x[1][2] = 6
}

TEST_CASE("views: view that needs a copy fails clearly, reshape copies instead") {
  Tensor x = iota({4, 6});
  Tensor t = x.t();  // [6,4], strides [1,6]
  std::string msg = error_of([&] { (void)t.view({24}); });
  CHECK(msg.find("view:") == 0);
  CHECK(msg.find("[6,4]") != std::string::npos);
  CHECK(msg.find("[1,6]") != std::string::npos);
  CHECK(msg.find("reshape") != std::string::npos);

  Tensor r = t.reshape({24});
  CHECK_FALSE(r.shares_storage_with(x));
  CHECK(r.is_contiguous());
  std::vector<double> want;
  for (int j = 0; j < 6; ++j) {
    for (int i = 0; i < 4; ++i) want.push_back(i * 6 + j);
  }
  CHECK(r.to_vector() == want);

  // An expanded (stride 0) dim cannot merge with its neighbour either.
  Tensor e = prism::arange(3).view({1, 3}).expand({4, 3});
  CHECK_THROWS_AS((void)e.view({12}), prism::Error);
  Tensor er = e.reshape({12});
  CHECK(er.to_vector() == std::vector<double>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2});
  // But it can split without a copy: the stride stays 0.
  Tensor es = e.view({2, 2, 3});
  CHECK(es.shares_storage_with(e));
  CHECK(es.strides() == Dims{0, 0, 1});
}

TEST_CASE("views: transpose, permute and t") {
  Tensor x = iota({2, 3, 4});
  Tensor tr = x.transpose(0, 2);
  CHECK(tr.shape() == Dims{4, 3, 2});
  CHECK(tr.strides() == Dims{1, 4, 12});
  CHECK(tr.shares_storage_with(x));
  CHECK_FALSE(tr.is_contiguous());
  CHECK(tr.at({3, 1, 1}) == 1 * 12 + 1 * 4 + 3);
  CHECK(x.transpose(-1, -3).strides() == tr.strides());

  Tensor p = x.permute({2, 0, 1});
  CHECK(p.shape() == Dims{4, 2, 3});
  CHECK(p.strides() == Dims{1, 12, 4});
  CHECK(p.shares_storage_with(x));
  // p[k][i][j] = x[i][j][k]
  for (int64_t k = 0; k < 4; ++k) {
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 3; ++j) CHECK(p.at({k, i, j}) == x.at({i, j, k}));
    }
  }
  // Permuting back gives the original geometry.
  Tensor back = p.permute({1, 2, 0});
  CHECK(back.strides() == x.strides());
  CHECK(back.is_contiguous());

  Tensor m = iota({3, 4});
  Tensor mt = m.t();
  CHECK(mt.shape() == Dims{4, 3});
  CHECK(mt.strides() == Dims{1, 4});
  CHECK(mt.to_vector() == std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  CHECK(mt.t().is_contiguous());
}

TEST_CASE("views: narrow and slice (negative indices, step)") {
  Tensor x = iota({3, 4});
  Tensor n = x.narrow(1, 1, 2);
  CHECK(n.shape() == Dims{3, 2});
  CHECK(n.strides() == Dims{4, 1});
  CHECK(n.offset() == 1);
  CHECK(n.shares_storage_with(x));
  CHECK_FALSE(n.is_contiguous());
  CHECK(n.to_vector() == std::vector<double>{1, 2, 5, 6, 9, 10});

  // Narrowing whole rows keeps the result contiguous (with an offset).
  Tensor rows = x.narrow(0, 1, 2);
  CHECK(rows.is_contiguous());
  CHECK(rows.offset() == 4);
  CHECK(rows.to_vector() == std::vector<double>{4, 5, 6, 7, 8, 9, 10, 11});

  // x[:, -3:-1]
  Tensor s = x.slice(1, -3, -1);
  CHECK(s.shape() == Dims{3, 2});
  CHECK(s.offset() == 1);
  CHECK(s.to_vector() == n.to_vector());

  Tensor a = prism::arange(10);
  Tensor st = a.slice(0, 0, 5, 2);  // 0, 2, 4
  CHECK(st.shape() == Dims{3});
  CHECK(st.strides() == Dims{2});
  CHECK(st.to_vector() == std::vector<double>{0, 2, 4});
  // Out-of-range bounds clamp, as in Python.
  CHECK(a.slice(0, 1, 100, 3).to_vector() == std::vector<double>{1, 4, 7});
  CHECK(a.slice(0, -100, 2).to_vector() == std::vector<double>{0, 1});
  CHECK(a.slice(0, 7, 3).numel() == 0);
  CHECK(a.slice(0, -2, 10).to_vector() == std::vector<double>{8, 9});
  // A slice of a slice composes offsets and strides.
  Tensor ss = a.slice(0, 1, 10, 2).slice(0, 1, 4, 2);  // [1,3,5,7,9] -> [3,7]
  CHECK(ss.to_vector() == std::vector<double>{3, 7});
  CHECK(ss.offset() == 3);
  CHECK(ss.strides()[0] == 4);
  CHECK(ss.shares_storage_with(a));
}

TEST_CASE("views: select drops a dim") {
  Tensor x = iota({3, 4});
  Tensor r = x.select(0, 1);
  CHECK(r.shape() == Dims{4});
  CHECK(r.offset() == 4);
  CHECK(r.is_contiguous());
  CHECK(r.shares_storage_with(x));
  CHECK(r.to_vector() == std::vector<double>{4, 5, 6, 7});

  Tensor c = x.select(1, -1);
  CHECK(c.shape() == Dims{3});
  CHECK(c.strides() == Dims{4});
  CHECK(c.offset() == 3);
  CHECK(c.to_vector() == std::vector<double>{3, 7, 11});

  Tensor e = x.select(0, 2).select(0, 1);
  CHECK(e.dim() == 0);
  CHECK(e.item() == 9);
}

TEST_CASE("views: expand uses stride 0") {
  Tensor x = prism::from_vector(std::vector<float>{1, 2, 3}, {3, 1});
  Tensor e = x.expand({2, 3, 4});
  CHECK(e.shape() == Dims{2, 3, 4});
  CHECK(e.strides() == Dims{0, 1, 0});
  CHECK(e.shares_storage_with(x));
  CHECK_FALSE(e.is_contiguous());
  for (int64_t a = 0; a < 2; ++a) {
    for (int64_t b = 0; b < 3; ++b) {
      for (int64_t c = 0; c < 4; ++c) CHECK(e.at({a, b, c}) == b + 1);
    }
  }
  // -1 keeps a dim; expanding to the same shape keeps the strides.
  Tensor k = x.expand({-1, 5});
  CHECK(k.shape() == Dims{3, 5});
  CHECK(k.strides() == Dims{1, 0});
  CHECK(x.expand({3, 1}).strides() == x.strides());
  // A 0-d tensor expands to anything.
  Tensor s = prism::scalar(4).expand({2, 2});
  CHECK(s.strides() == Dims{0, 0});
  CHECK(s.to_vector() == std::vector<double>{4, 4, 4, 4});
}

TEST_CASE("views: squeeze and unsqueeze") {
  Tensor x = iota({1, 3, 1, 4});
  Tensor all = x.squeeze();
  CHECK(all.shape() == Dims{3, 4});
  CHECK(all.shares_storage_with(x));
  CHECK(all.to_vector() == x.to_vector());

  CHECK(x.squeeze(0).shape() == Dims{3, 1, 4});
  CHECK(x.squeeze(-2).shape() == Dims{1, 3, 4});
  CHECK(x.squeeze(1).shape() == Dims{1, 3, 1, 4});  // size 3: unchanged

  Tensor y = iota({3, 4});
  Tensor u0 = y.unsqueeze(0);
  CHECK(u0.shape() == Dims{1, 3, 4});
  CHECK(u0.shares_storage_with(y));
  Tensor ul = y.unsqueeze(-1);
  CHECK(ul.shape() == Dims{3, 4, 1});
  CHECK(y.unsqueeze(1).shape() == Dims{3, 1, 4});
  CHECK(ul.at({2, 1, 0}) == 9);

  // On a non-contiguous tensor: still a view with the right elements.
  Tensor t = y.t();
  Tensor tu = t.unsqueeze(1);
  CHECK(tu.shares_storage_with(y));
  CHECK(tu.at({3, 0, 2}) == 11);
  CHECK(tu.squeeze(1).strides() == t.strides());

  CHECK(prism::scalar(2).unsqueeze(0).shape() == Dims{1});
}

TEST_CASE("views: flatten") {
  Tensor x = iota({2, 3, 4});
  Tensor f = x.flatten();
  CHECK(f.shape() == Dims{24});
  CHECK(f.shares_storage_with(x));
  CHECK(x.flatten(1).shape() == Dims{2, 12});
  CHECK(x.flatten(0, 1).shape() == Dims{6, 4});
  CHECK(x.flatten(-2, -1).shape() == Dims{2, 12});
  CHECK(prism::scalar(1).flatten().shape() == Dims{1});

  // Flattening a permuted tensor has to copy, and keeps the permuted order.
  Tensor p = x.permute({2, 0, 1});
  Tensor pf = p.flatten();
  CHECK_FALSE(pf.shares_storage_with(x));
  CHECK(pf.at({0}) == 0);
  CHECK(pf.at({1}) == 4);
  CHECK(pf.at({6}) == 1);
}

TEST_CASE("views: contiguous copies a view and returns a contiguous tensor itself") {
  Tensor x = iota({3, 5});
  Tensor same = x.contiguous();
  CHECK(same.shares_storage_with(x));
  CHECK(same.impl_ptr() == x.impl_ptr());

  Tensor t = x.t();
  Tensor c = t.contiguous();
  CHECK_FALSE(c.shares_storage_with(x));
  CHECK(c.is_contiguous());
  CHECK(c.shape() == Dims{5, 3});
  CHECK(c.strides() == Dims{3, 1});
  CHECK(c.offset() == 0);
  CHECK(c.to_vector() == t.to_vector());
  CHECK(c.at({4, 2}) == 14);

  // A contiguous view with an offset is returned as is, too.
  Tensor row = x.select(0, 2);
  CHECK(row.contiguous().impl_ptr() == row.impl_ptr());

  // clone always copies.
  Tensor cl = x.clone();
  CHECK_FALSE(cl.shares_storage_with(x));
  CHECK(cl.to_vector() == x.to_vector());
}

TEST_CASE("views: writes through one view are seen by the others") {
  Tensor x = prism::zeros({3, 4});
  Tensor col = x.select(1, 2);
  Tensor t = x.t();
  x.data<float>()[1 * 4 + 2] = 5;  // x[1][2]
  CHECK(col.at({1}) == 5);
  CHECK(t.at({2, 1}) == 5);
  // data<T>() points at element (0, ..., 0) of the view, offset included.
  CHECK(x.select(0, 1).data<float>()[2] == 5);
}

TEST_CASE("views: empty tensors") {
  Tensor e = prism::zeros({3, 0});
  CHECK(e.numel() == 0);
  // An empty tensor is contiguous whatever its strides: it has no elements to be out of order.
  CHECK(e.is_contiguous());
  CHECK(e.contiguous().impl_ptr() == e.impl_ptr());
  CHECK(e.t().is_contiguous());
  CHECK(e.view({0, 5}).shape() == Dims{0, 5});
  CHECK(e.reshape({-1}).numel() == 0);
  CHECK(prism::arange(5).slice(0, 3, 3).is_contiguous());
}

TEST_CASE("views: allocate no tensor memory") {
  Tensor x = iota({4, 6});
  Tensor row = prism::arange(6).view({1, 6});
  const int64_t before = alloc_count();
  const int64_t live = prism::profiler::memory_stats(0).live_bytes;
  {
    Tensor a = x.view({2, 12});
    Tensor b = x.reshape({6, 4});
    Tensor c = x.t().narrow(0, 1, 3).select(1, 2);
    Tensor d = x.permute({1, 0}).transpose(0, 1);
    Tensor e = x.slice(1, 0, 6, 2).unsqueeze(0).squeeze();
    Tensor f = row.expand({5, 6});
    Tensor g = x.flatten();
    Tensor h = x.detach();
    Tensor i = x.contiguous();
    CHECK(a.shares_storage_with(x));
    CHECK(b.shares_storage_with(x));
    CHECK(c.shares_storage_with(x));
    CHECK(d.shares_storage_with(x));
    CHECK(e.shares_storage_with(x));
    CHECK(f.shares_storage_with(row));
    CHECK(g.shares_storage_with(x));
    CHECK(h.shares_storage_with(x));
    CHECK(i.shares_storage_with(x));
  }
  CHECK(alloc_count() == before);
  CHECK(prism::profiler::memory_stats(0).live_bytes == live);
}

TEST_CASE("views: dtypes are kept by views") {
  Tensor x = prism::arange(0, 6, 1, DType::i64).view({2, 3});
  CHECK(x.dtype() == DType::i64);
  CHECK(x.t().dtype() == DType::i64);
  CHECK(x.t().at({2, 1}) == 5);
  CHECK(x.element_size() == 8);
  CHECK(x.nbytes() == 48);
  Tensor d = prism::zeros({2, 2}, DType::f64);
  CHECK(d.select(0, 1).dtype() == DType::f64);
}
