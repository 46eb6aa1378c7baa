// The autocast policy (tensor/autocast.h) and the matmul_bf16 front end.
//
// Bounds, derived from bf16's rounding: rounding to 8 significant bits errs by at most half a
// unit in the last place, |bf16(x) - x| <= 2^-8 |x| (x normal). A product of two rounded values
// is then x y (1 + d), |d| <= 2 2^-8 + 2^-16 = e, exact in float32; summing k of them in float32
// adds at most gamma_k = k 2^-24 / (1 - k 2^-24) of the sum of magnitudes. So against the
// float64 product of the unrounded float32 values, every element of a bf16 GEMM (forward, or a
// gradient dA = bf16(g) bf16(B)^T) errs by at most (e + gamma_k (1 + e)) sum_p |x_p y_p|.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "profiler/aggregate.h"
#include "profiler/memory.h"
#include "profiler/session.h"
#include "tensor/autocast.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/test_util.h"

namespace prism {
namespace {

using testing::contains;
using testing::error_of;

double bound_factor(int64_t k) {
  const double e = 2 * std::ldexp(1.0, -8) + std::ldexp(1.0, -16);
  const double gamma = k * std::ldexp(1.0, -24) / (1 - k * std::ldexp(1.0, -24));
  return e + gamma * (1 + e);
}

// c (float32, [m, n]) against the float64 product of a [m, k] and b [k, n] (any strides),
// element by element within the bound above.
void check_product(const Tensor& c, const Tensor& a, const Tensor& b, const char* what) {
  REQUIRE(c.dtype() == DType::f32);
  const Tensor A = cast(a.detach(), DType::f64), B = cast(b.detach(), DType::f64);
  const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  const std::vector<double> av = A.contiguous().to_vector<double>();
  const std::vector<double> bv = B.contiguous().to_vector<double>();
  const std::vector<float> cv = c.contiguous().to_vector<float>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0, mag = 0;
      for (int64_t p = 0; p < k; ++p) {
        ref += av[i * k + p] * bv[p * n + j];
        mag += std::abs(av[i * k + p] * bv[p * n + j]);
      }
      const double err = std::abs(cv[i * n + j] - ref);
      if (!(err <= bound_factor(k) * mag)) {
        FAIL_CHECK(std::string(what) << ": element (" << i << ", " << j << ") = " << cv[i * n + j]
                                     << ", float64 " << ref << ", bound " << bound_factor(k) * mag);
        return;
      }
    }
  }
}

// The bias gradient of sum(y * r): r summed over N, H, W, in float64.
std::vector<double> bias_grad64(const Tensor& r) {
  return sum(sum(cast(r, DType::f64), {2, 3}), {0}).to_vector<double>();
}

int count_rows(const profiler::Profile& p, const std::string& name) {
  int64_t calls = 0;
  for (const profiler::OpRow& r : profiler::aggregate_ops(p)) {
    if (r.name == name) calls += r.calls;
  }
  return static_cast<int>(calls);
}

}  // namespace

TEST_CASE("autocast: matmul runs as casts + matmul_bf16 and returns float32") {
  manual_seed(1);
  const Tensor a = randn({13, 37}), b = randn({37, 11});
  Tensor c;
  profiler::Profile prof;
  {
    profiler::Session session;
    Autocast policy(DType::bf16);
    CHECK(autocast_dtype() == DType::bf16);
    c = matmul(a, b);
    prof = session.stop();
  }
  CHECK(autocast_dtype() == DType::f32);
  CHECK(c.shape() == Dims{13, 11});
  check_product(c, a, b, "forward");
  CHECK(count_rows(prof, "cast") == 2);
  CHECK(count_rows(prof, "matmul_bf16") == 1);
  CHECK(count_rows(prof, "matmul") == 0);
  // Off again outside the scope, and an inner f32 scope turns it off.
  {
    Autocast outer(DType::bf16);
    Autocast inner(DType::f32);
    const Tensor d = matmul(a, b);
    CHECK(d.to_vector<float>() == matmul(a, b).to_vector<float>());
  }
}

TEST_CASE("autocast: odd shapes, vectors, batches and strided views") {
  manual_seed(2);
  Autocast policy(DType::bf16);
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                         {1, 7, 1},
                         {5, 3, 7},
                         {17, 31, 2},
                         {2, 600, 3}}) {
    const Tensor a = randn({m, k}), b = randn({k, n});
    check_product(matmul(a, b), a, b, "2-D");
  }
  // Non-contiguous views: every other column of a wider tensor, and a transposed operand.
  const Tensor wide = randn({9, 26}), bt = randn({5, 13});
  const Tensor a = wide.slice(1, 0, 26, 2);
  check_product(matmul(a, bt.t()), a, bt.t(), "strided A, transposed B");
  // Vectors: [k] @ [k, n] and [m, k] @ [k].
  const Tensor v = randn({13}), m = randn({13, 4});
  const Tensor row = matmul(v, m);
  CHECK(row.shape() == Dims{4});
  check_product(row.unsqueeze(0), v.unsqueeze(0), m, "vector @ matrix");
  const Tensor col = matmul(m.t(), v);
  CHECK(col.shape() == Dims{4});
  check_product(col.unsqueeze(1), m.t(), v.unsqueeze(1), "matrix @ vector");
  // A batch over a shared B.
  const Tensor x = randn({3, 5, 7}), w = randn({7, 6});
  const Tensor y = matmul(x, w);
  REQUIRE(y.shape() == Dims{3, 5, 6});
  for (int64_t i = 0; i < 3; ++i) check_product(y.select(0, i), x.select(0, i), w, "batched");
}

TEST_CASE("autocast: gradients are float32 and within the bf16 bound of the float32 ones") {
  manual_seed(3);
  // y = x @ W^T + b, loss = sum(y * r): dx = r W, dW = r^T x, exactly what the bound covers.
  const int64_t rows = 19, in = 23, out = 29;
  Tensor x = randn({rows, in}).set_requires_grad();
  Tensor W = randn({out, in}).set_requires_grad();
  Tensor bias = randn({out}).set_requires_grad();
  const Tensor r = randn({rows, out});
  {
    Autocast policy(DType::bf16);
    sum(mul(add(matmul(x, W.t()), bias), r)).backward();
  }
  REQUIRE(x.grad().dtype() == DType::f32);
  REQUIRE(W.grad().dtype() == DType::f32);
  CHECK(W.grad().shape() == Dims{out, in});
  CHECK(W.grad().is_contiguous());
  check_product(x.grad(), r, W, "dx = r W");
  check_product(W.grad(), r.t(), x, "dW = r^T x");
  // The bias's gradient does not go through a GEMM: it is float32's sum of r's columns.
  const Tensor db = sum(r, {0});
  const std::vector<float> got = bias.grad().to_vector<float>(), want = db.to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
}

TEST_CASE("autocast: backward keeps the bf16 copies (2 bytes an element)") {
  manual_seed(4);
  Tensor x = randn({8, 16}).set_requires_grad();
  Tensor W = randn({16, 4}).set_requires_grad();
  const int64_t before = profiler::memory_stats().live_bytes;
  Tensor y;
  {
    Autocast policy(DType::bf16);
    y = matmul(x, W);
  }
  // What the forward left alive: y (float32) and the two bf16 copies the node saved.
  CHECK(profiler::memory_stats().live_bytes - before == 8 * 4 * 4 + 2 * (8 * 16 + 16 * 4));
  y.backward(full({8, 4}, 1.0));
  CHECK(W.grad().dtype() == DType::f32);
}

// |got - want| <= bound_factor(terms) * mag, element by element (float64 want and mag).
void check_within(const Tensor& got, const Tensor& want, const Tensor& mag, int64_t terms,
                  const char* what) {
  REQUIRE(got.shape() == want.shape());
  const std::vector<double> g = cast(got.detach(), DType::f64).contiguous().to_vector<double>();
  const std::vector<double> w = want.detach().contiguous().to_vector<double>();
  const std::vector<double> m = mag.detach().contiguous().to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    if (!(std::abs(g[i] - w[i]) <= bound_factor(terms) * m[i] + 1e-12)) {
      FAIL_CHECK(std::string(what) << ": element " << i << " = " << g[i] << ", float64 " << w[i]
                                   << ", bound " << bound_factor(terms) * m[i]);
      return;
    }
  }
}

TEST_CASE("autocast: conv2d and its gradients within the bf16 bound of float64") {
  manual_seed(6);
  // Odd sizes: 3 images of 3 x 7 x 6, 5 filters of 3 x 3, stride 2, padding 1; then a 1 x 1.
  for (auto [stride, padding, kk] : {std::tuple<int, int, int64_t>{2, 1, 3}, {1, 0, 1}}) {
    const Tensor x0 = randn({3, 3, 7, 6}), w0 = randn({5, 3, kk, kk}), b0 = randn({5});
    Tensor x = x0.detach().set_requires_grad(), w = w0.detach().set_requires_grad();
    Tensor b = b0.detach().set_requires_grad();
    Tensor y;
    profiler::Profile prof;
    {
      profiler::Session session;
      Autocast policy(DType::bf16);
      y = conv2d(x, w, b, stride, padding);
      prof = session.stop();
    }
    CHECK(count_rows(prof, "im2col") == 1);
    CHECK(count_rows(prof, "matmul_bf16") == 1);
    CHECK(count_rows(prof, "conv2d") == 0);
    const Tensor r = randn(y.shape());
    {
      Autocast policy(DType::bf16);
      sum(mul(y, r)).backward();
    }
    REQUIRE(x.grad().dtype() == DType::f32);
    // float64 references; the magnitudes are the same sums over |x|, |w|, |r|.
    auto f64 = [](const Tensor& t) { return cast(t, DType::f64); };
    auto mag = [&](const Tensor& t) { return f64(sqrt(mul(t, t))); };
    Tensor x64 = f64(x0).set_requires_grad(), w64 = f64(w0).set_requires_grad();
    const Tensor y64 = conv2d(x64, w64, f64(b0), stride, padding);
    sum(mul(y64, f64(r))).backward();
    const int64_t K = 3 * kk * kk;
    const Tensor ymag =
        add(conv2d(mag(x0), mag(w0), Tensor(), stride, padding), mag(b0).reshape({1, 5, 1, 1}));
    check_within(y, y64, ymag, K + 1, "y");
    Tensor xm = f64(x0).set_requires_grad(), wm = f64(w0).set_requires_grad();
    sum(mul(conv2d(xm, mag(w0), Tensor(), stride, padding), mag(r))).backward();
    sum(mul(conv2d(mag(x0), wm, Tensor(), stride, padding), mag(r))).backward();
    check_within(x.grad(), x64.grad(), xm.grad(), 5 * kk * kk, "dx");
    check_within(w.grad(), w64.grad(), wm.grad(), y.numel() / 5, "dw");
    const std::vector<float> db = b.grad().to_vector<float>();
    const std::vector<double> db64 = bias_grad64(r);
    for (size_t i = 0; i < db.size(); ++i) CHECK(db[i] == doctest::Approx(db64[i]).epsilon(1e-5));
  }
}

TEST_CASE("autocast: linear_gelu runs its GEMM in bf16 and stays near float32") {
  manual_seed(7);
  const Tensor x = randn({9, 17}), w = randn({11, 17}), b = randn({11});
  Tensor y;
  profiler::Profile prof;
  {
    profiler::Session session;
    Autocast policy(DType::bf16);
    y = linear_gelu(x, w, b);
    prof = session.stop();
  }
  CHECK(count_rows(prof, "matmul_bf16") == 1);
  CHECK(count_rows(prof, "linear_gelu") == 0);
  // z = x W^T + b within the GEMM bound; GELU's slope is at most 1.13, so |dy| <= 1.13 |dz|.
  const Tensor z64 = add(matmul(cast(x, DType::f64), cast(w, DType::f64).t()), cast(b, DType::f64));
  const Tensor mag =
      add(matmul(cast(sqrt(mul(x, x)), DType::f64), cast(sqrt(mul(w, w)), DType::f64).t()),
          cast(sqrt(mul(b, b)), DType::f64));
  const std::vector<double> yv = cast(y, DType::f64).to_vector<double>();
  const std::vector<double> want = gelu(z64).to_vector<double>(), m = mag.to_vector<double>();
  for (size_t i = 0; i < yv.size(); ++i) {
    CHECK(std::abs(yv[i] - want[i]) <= 1.13 * bound_factor(18) * m[i] + 1e-6);
  }
}

TEST_CASE("matmul_bf16: bf16 operands, float32 result, bf16 gradients, clear errors") {
  manual_seed(5);
  const Tensor a = randn({6, 9}), b = randn({9, 4});
  Tensor ab = cast(a, DType::bf16).set_requires_grad(), bb = cast(b, DType::bf16);
  const Tensor c = matmul_bf16(ab, bb);
  CHECK(c.dtype() == DType::f32);
  check_product(c, cast(ab, DType::f32), cast(bb, DType::f32), "matmul_bf16");
  sum(c).backward();
  CHECK(ab.grad().dtype() == DType::bf16);
  CHECK(ab.grad().shape() == Dims{6, 9});
  CHECK(contains(error_of([&] { matmul_bf16(a, b); }), "matmul_bf16: needs bf16 operands"));
  CHECK(contains(error_of([&] { matmul_bf16(bb, bb); }), "inner dimensions differ"));
  CHECK(contains(error_of([&] { matmul_bf16(cast(randn({9}), DType::bf16), bb); }),
                 "at least 2 dims"));
  CHECK(contains(error_of([] { Autocast p(DType::f64); }), "bf16 or f32"));
  // Under the policy, matmul's own checks still come first.
  Autocast policy(DType::bf16);
  CHECK(contains(error_of([&] { matmul(a, a); }), "matmul: inner dimensions differ"));
}

}  // namespace prism
