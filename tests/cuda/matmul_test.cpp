// matmul and linear_gelu on the GPU: every CUDA variant against a host reference.
//
// Kernel level (raw buffers, MatmulArgs / LinearGeluArgs filled by hand, as the front end would):
//   - shapes: 1 x 1 x 1, 7 x 13 x 5, 129 x 65 x 257 (no size a multiple of any tile), exact
//     128-multiples, and multiples of 4 that are not of 128 (the float4 loaders with edge tiles);
//   - every layout of A and B: row-major, transposed (column-major) and fully strided, with the
//     elements a view skips set to NaN, so reading one shows up in the result;
//   - batches with their own strides and a broadcast B (batch stride 0);
//   - C pre-filled with NaN and followed by a guard zone: a kernel must write every element of
//     C without reading it, and nothing after it.
// Tensor level: the front end on CUDA tensors (2-D, batched with broadcasting, vectors,
// transposed views, an empty inner dimension) and autograd's dA, dB against the CPU.
//
// Tolerance. The reference is summed in long double. A float32 dot product of k terms differs
// from the exact one by at most gamma_k sum_p |a_p b_p|, gamma_k ~ k u (u = 2^-24, any order of
// summation, FMA or not), so each element is checked against 2 k u sum_p |a_p b_p| (float64:
// u = 2^-53), plus a tiny floor. A wrong index, stride or missed tile is off by O(1).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/ops/linear_gelu/args.h"
#include "kernels/ops/matmul/args.h"
#include "kernels/registry.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/cuda/cuda_compare.h"
#include "tests/cuda/cuda_kernel_test_util.h"
#include "tests/test_util.h"

namespace prism {
namespace {

using cuda_kernel_test::DeviceArray;
using cuda_kernel_test::entries_of;

enum class Layout { row_major, transposed, strided };
const Layout kLayouts[] = {Layout::row_major, Layout::transposed, Layout::strided};

const char* layout_name(Layout l) {
  return l == Layout::row_major ? "row-major" : l == Layout::transposed ? "transposed" : "strided";
}

// `batch` rows x cols matrices in one host buffer, element (b, i, j) at b bs + i rs + j cs;
// every element no matrix element maps to is NaN.
template <class T>
struct Operand {
  std::vector<T> data;
  int64_t bs = 0, rs = 0, cs = 0;

  Operand(int64_t batch, int64_t rows, int64_t cols, Layout layout, bool broadcast,
          std::mt19937& rng) {
    if (layout == Layout::row_major) rs = cols, cs = 1;
    if (layout == Layout::transposed) rs = 1, cs = rows;
    if (layout == Layout::strided) rs = 2 * cols + 3, cs = 2;
    const int64_t extent = (rows - 1) * rs + (cols - 1) * cs + 1;
    const int64_t gap = layout == Layout::strided ? 5 : 0;
    const int64_t stored = broadcast ? 1 : batch;
    bs = broadcast ? 0 : extent + gap;
    data.assign(static_cast<size_t>(stored * (extent + gap)), std::numeric_limits<T>::quiet_NaN());
    std::uniform_real_distribution<double> u(-1, 1);
    for (int64_t b = 0; b < stored; ++b) {
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) data[b * bs + i * rs + j * cs] = T(u(rng));
      }
    }
  }
  T at(int64_t b, int64_t i, int64_t j) const { return data[b * bs + i * rs + j * cs]; }
};

struct Shape {
  int64_t batch, m, n, k;
};

const Shape kShapes[] = {
    {1, 1, 1, 1},      {1, 7, 13, 5},    {1, 129, 65, 257}, {3, 33, 17, 70},
    {2, 128, 128, 64}, {1, 132, 68, 36}, {1, 1, 300, 9},    {2, 260, 1, 17},
};

constexpr int kGuard = 16;
constexpr double kSentinel = 12345.0;

template <class T>
void check_matmul_variant(const kernels::KernelEntry& e, std::mt19937& rng) {
  const double u = std::numeric_limits<T>::epsilon() / 2;
  for (const Shape& s : kShapes) {
    for (Layout la : kLayouts) {
      for (Layout lb : kLayouts) {
        for (bool broadcast_b : {false, true}) {
          if (broadcast_b && s.batch == 1) continue;
          INFO(prism::testing::info_text(
              e.name, " ", sizeof(T) == 4 ? "f32 " : "f64 ", s.batch, "x", s.m, "x", s.n, "x", s.k,
              " A ", layout_name(la), " B ", layout_name(lb), broadcast_b ? " (B broadcast)" : ""));
          Operand<T> A(s.batch, s.m, s.k, la, false, rng);
          Operand<T> B(s.batch, s.k, s.n, lb, broadcast_b, rng);
          const int64_t cn = s.batch * s.m * s.n;
          std::vector<T> c0(static_cast<size_t>(cn), std::numeric_limits<T>::quiet_NaN());
          c0.resize(static_cast<size_t>(cn + kGuard), T(kSentinel));
          DeviceArray<T> dA(A.data), dB(B.data), dC(c0);
          kernels::MatmulArgs<T> args{};
          args.a = dA.get(), args.b = dB.get(), args.c = dC.get();
          args.batch = s.batch, args.m = s.m, args.n = s.n, args.k = s.k;
          args.a_bs = A.bs, args.a_rs = A.rs, args.a_cs = A.cs;
          args.b_bs = B.bs, args.b_rs = B.rs, args.b_cs = B.cs;
          e.get<kernels::MatmulArgs, T>()(args);
          const std::vector<T> c = dC.to_host();
          int bad = 0;
          for (int64_t b = 0; b < s.batch && bad < 3; ++b) {
            for (int64_t i = 0; i < s.m && bad < 3; ++i) {
              for (int64_t j = 0; j < s.n && bad < 3; ++j) {
                long double exact = 0, mag = 0;
                for (int64_t p = 0; p < s.k; ++p) {
                  const long double t = static_cast<long double>(A.at(b, i, p)) * B.at(b, p, j);
                  exact += t;
                  mag += std::fabs(t);
                }
                const double got = c[static_cast<size_t>((b * s.m + i) * s.n + j)];
                const double err = std::fabs(got - static_cast<double>(exact));
                const double tol =
                    2.0 * static_cast<double>(s.k) * u * static_cast<double>(mag) + 1e-30;
                if (!(err <= tol)) {
                  ++bad;
                  FAIL_CHECK("C[", b, ",", i, ",", j, "] = ", got, ", expected ",
                             static_cast<double>(exact), " (tolerance ", tol, ")");
                }
              }
            }
          }
          for (int g = 0; g < kGuard; ++g) CHECK(c[static_cast<size_t>(cn + g)] == T(kSentinel));
        }
      }
    }
  }
}

TEST_CASE("every cuda matmul variant matches a long double reference, all layouts") {
  std::mt19937 rng(5);
  for (const kernels::KernelEntry* e : entries_of("matmul")) {
    if (e->has(DType::f32)) check_matmul_variant<float>(*e, rng);
    if (e->has(DType::f64)) check_matmul_variant<double>(*e, rng);
  }
}

// ---- linear_gelu: each CUDA variant against the CPU's unfused kernel on the same Args -------

template <class T>
void check_linear_gelu_variant(const kernels::KernelEntry& e, std::mt19937& rng) {
  const auto& cpu = kernels::registry().at("linear_gelu", Device::cpu).at("unfused");
  struct LgShape {
    int64_t rows, in, out;
  };
  const LgShape shapes[] = {{1, 1, 1}, {7, 13, 5}, {129, 65, 257}, {130, 64, 132}, {3, 300, 2}};
  const double u = std::numeric_limits<T>::epsilon() / 2;
  for (const LgShape& s : shapes) {
    for (Layout lx : kLayouts) {
      for (Layout lw : {Layout::row_major, Layout::transposed}) {
        for (bool with_bias : {false, true}) {
          for (bool keep_z : {false, true}) {
            INFO(prism::testing::info_text(e.name, " ", sizeof(T) == 4 ? "f32 " : "f64 ", s.rows,
                                           "x", s.in, "x", s.out, " x ", layout_name(lx), " w ",
                                           layout_name(lw), with_bias ? " bias" : "",
                                           keep_z ? " z" : ""));
            Operand<T> X(1, s.rows, s.in, lx, false, rng);
            Operand<T> W(1, s.out, s.in, lw, false, rng);
            std::vector<T> bias = cuda_kernel_test::random_vector<T>(size_t(s.out), rng);
            const size_t outn = static_cast<size_t>(s.rows * s.out);
            std::vector<T> y_cpu(outn), z_cpu(outn);
            std::vector<T> nan(outn, std::numeric_limits<T>::quiet_NaN());
            kernels::LinearGeluArgs<T> a{};
            a.x = X.data.data(), a.weight = W.data.data();
            a.bias = with_bias ? bias.data() : nullptr;
            a.z = keep_z ? z_cpu.data() : nullptr;
            a.y = y_cpu.data();
            a.rows = s.rows, a.in = s.in, a.out = s.out;
            a.x_rs = X.rs, a.x_cs = X.cs, a.w_rs = W.rs, a.w_cs = W.cs;
            cpu.get<kernels::LinearGeluArgs, T>()(a);
            DeviceArray<T> dx(X.data), dw(W.data), db(bias), dy(nan), dz(nan);
            a.x = dx.get(), a.weight = dw.get(), a.bias = with_bias ? db.get() : nullptr;
            a.z = keep_z ? dz.get() : nullptr;
            a.y = dy.get();
            e.get<kernels::LinearGeluArgs, T>()(a);
            // Relative to the output's size: two float32 sums of `in` terms of this size
            // differ by about sqrt(in) u in practice (in u at worst), so 4 in u leaves a wide
            // margin; GELU (|gelu'| <= 1.13) adds a few ulp. A wrong index is off by O(1).
            const double tol = 4.0 * static_cast<double>(s.in) * u + 1e-12;
            CHECK(cuda_kernel_test::scaled_error(dy.to_host(), y_cpu) <= tol);
            if (keep_z) CHECK(cuda_kernel_test::scaled_error(dz.to_host(), z_cpu) <= tol);
          }
        }
      }
    }
  }
}

TEST_CASE("every cuda linear_gelu variant matches the cpu kernel") {
  std::mt19937 rng(6);
  for (const kernels::KernelEntry* e : entries_of("linear_gelu")) {
    if (e->has(DType::f32)) check_linear_gelu_variant<float>(*e, rng);
    if (e->has(DType::f64)) check_linear_gelu_variant<double>(*e, rng);
  }
}

// ---- the front ends on CUDA tensors ----------------------------------------------------------

using cuda_test::gpu;
using cuda_test::mismatch;

double rtol_for(DType dt) {
  return dt == DType::f32 ? 1e-4 : 1e-11;
}
double atol_for(DType dt) {
  return dt == DType::f32 ? 1e-5 : 1e-12;
}

TEST_CASE("cuda matmul front end: shapes, broadcasting, views, empty k, gradients") {
  manual_seed(21);
  cuda_test::for_each_cuda_variant("matmul", [](const std::string& variant) {
    for (DType dt : cuda_test::kFloatTypes) {
      INFO(prism::testing::info_text(variant, " ", dtype_name(dt)));
      const double rt = rtol_for(dt), at = atol_for(dt);
      Tensor a = randn({7, 13}, dt), b = randn({13, 5}, dt), bt = randn({5, 13}, dt);
      CHECK(mismatch(matmul(a, b), matmul(gpu(a), gpu(b)), rt, at) == "");
      CHECK(mismatch(matmul(a, bt.t()), matmul(gpu(a), gpu(bt).t()), rt, at) == "");
      Tensor batched = randn({3, 1, 7, 13}, dt), rhs = randn({2, 13, 9}, dt);
      CHECK(mismatch(matmul(batched, rhs), matmul(gpu(batched), gpu(rhs)), rt, at) == "");
      Tensor vec = randn({13}, dt);
      CHECK(mismatch(matmul(vec, b), matmul(gpu(vec), gpu(b)), rt, at) == "");
      CHECK(mismatch(matmul(a, vec), matmul(gpu(a), gpu(vec)), rt, at) == "");
      Tensor e1 = randn({4, 0}, dt), e2 = randn({0, 6}, dt);
      CHECK(mismatch(matmul(e1, e2), matmul(gpu(e1), gpu(e2)), 0, 0) == "");  // zeros

      Tensor x = randn({6, 11}, dt), w = randn({4, 11}, dt), g = randn({6, 4}, dt);
      Tensor xc = x.detach().set_requires_grad(), wc = w.detach().set_requires_grad();
      matmul(xc, wc.t()).backward(g);
      Tensor xg = gpu(x).set_requires_grad(), wg = gpu(w).set_requires_grad();
      matmul(xg, wg.t()).backward(gpu(g));
      REQUIRE(xg.grad().defined());
      REQUIRE(wg.grad().defined());
      CHECK(mismatch(xc.grad(), xg.grad(), rt, at) == "");
      CHECK(mismatch(wc.grad(), wg.grad(), rt, at) == "");
    }
  });
}

TEST_CASE("cuda linear_gelu front end: forward and gradients match the cpu") {
  manual_seed(22);
  cuda_test::for_each_cuda_variant("linear_gelu", [](const std::string& variant) {
    for (DType dt : cuda_test::kFloatTypes) {
      INFO(prism::testing::info_text(variant, " ", dtype_name(dt)));
      const double rt = rtol_for(dt), at = atol_for(dt);
      Tensor x = randn({2, 5, 24}, dt), w = randn({17, 24}, dt), b = randn({17}, dt);
      Tensor g = randn({2, 5, 17}, dt);
      CHECK(mismatch(linear_gelu(x, w, b), linear_gelu(gpu(x), gpu(w), gpu(b)), rt, at) == "");
      CHECK(mismatch(linear_gelu(x, w, Tensor()), linear_gelu(gpu(x), gpu(w), Tensor()), rt, at) ==
            "");
      Tensor xc = x.detach().set_requires_grad(), wc = w.detach().set_requires_grad();
      Tensor bc = b.detach().set_requires_grad();
      linear_gelu(xc, wc, bc).backward(g);
      Tensor xg = gpu(x).set_requires_grad(), wg = gpu(w).set_requires_grad();
      Tensor bg = gpu(b).set_requires_grad();
      linear_gelu(xg, wg, bg).backward(gpu(g));
      REQUIRE(xg.grad().defined());
      CHECK(mismatch(xc.grad(), xg.grad(), rt, at) == "");
      CHECK(mismatch(wc.grad(), wg.grad(), rt, at) == "");
      CHECK(mismatch(bc.grad(), bg.grad(), rt, at) == "");
    }
  });
}

}  // namespace
}  // namespace prism
