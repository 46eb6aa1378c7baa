// conv2d (forward, dx, dw) and max / avg pooling (forward, backward) on the GPU: every CUDA
// variant against the CPU's naive kernel on the same Args, then the front ends on CUDA tensors.
//
// Conv cases: 1x1 kernels (the pointwise shortcut), 3x3 with padding, non-square kernels,
// stride 2 and 3, even kernels, one pixel, no input channels; with and without bias; the
// scratch given as null (the kernel allocates), exactly one image's patches, and three images'
// for five images (the chunk loop with a short last chunk).
// Tolerance (conv): each output is a sum of `terms` products of inputs in [-1, 1] (C kh kw for
// y, O kh kw for dx, N Ho Wo for dw), summed in another order than the CPU's; two float32 such
// sums differ by about sqrt(terms) u (terms u at worst), so 4 terms u relative to the output's
// size leaves a wide margin (float64: the same with u = 2^-53). A wrong index is off by O(1).
// Pooling is exact: max picks an element, and the averages add the same numbers in the same
// order as the CPU (the backward gather visits windows in output order) with IEEE division.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/ops/conv2d/args.h"
#include "kernels/ops/pool2d/args.h"
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
using cuda_kernel_test::random_vector;
using cuda_kernel_test::scaled_error;

struct ConvCase {
  int64_t n, c, h, w, o, kh, kw, stride, padding;
};

// The last two cases have no input channels: every GEMM has an empty inner dimension (K = 0),
// so y is the bias (or 0) everywhere; the second of them takes the 1x1 pointwise shortcut.
const ConvCase kConvCases[] = {
    {1, 1, 1, 1, 1, 1, 1, 1, 0},   {2, 3, 7, 9, 4, 3, 3, 1, 1},   {5, 2, 13, 11, 3, 3, 2, 2, 1},
    {3, 4, 8, 8, 5, 1, 1, 1, 0},   {2, 3, 10, 10, 2, 5, 5, 3, 2}, {1, 2, 6, 5, 3, 2, 2, 1, 0},
    {5, 1, 28, 28, 6, 5, 5, 1, 2}, {2, 5, 4, 6, 7, 1, 1, 2, 0},   {2, 0, 5, 5, 3, 3, 3, 1, 1},
    {2, 0, 4, 4, 3, 1, 1, 1, 0},
};

enum class Scratch { none, one_image, three_images };

template <class T>
void check_conv_op(const char* op, std::mt19937& rng) {
  const auto& cpu = kernels::registry().at(op, Device::cpu).at("naive");
  const double u = std::numeric_limits<T>::epsilon() / 2;
  for (const kernels::KernelEntry* e : entries_of(op)) {
    if (!e->has(kernels::dtype_of<T>())) continue;
    for (const ConvCase& cc : kConvCases) {
      for (bool with_bias : {false, true}) {
        for (Scratch sc : {Scratch::none, Scratch::one_image, Scratch::three_images}) {
          const std::string name = op;
          if (with_bias && name != "conv2d") continue;
          INFO(prism::testing::info_text(
              op, " ", e->name, sizeof(T) == 4 ? " f32 " : " f64 ", "n", cc.n, " c", cc.c, " ",
              cc.h, "x", cc.w, " o", cc.o, " k", cc.kh, "x", cc.kw, " s", cc.stride, " p",
              cc.padding, with_bias ? " bias" : "", " scratch ", static_cast<int>(sc)));
          kernels::Conv2dArgs<T> a{};
          a.n = cc.n, a.c = cc.c, a.h = cc.h, a.w = cc.w, a.o = cc.o, a.kh = cc.kh, a.kw = cc.kw;
          a.stride = cc.stride, a.padding = cc.padding;
          a.ho = (cc.h + 2 * cc.padding - cc.kh) / cc.stride + 1;
          a.wo = (cc.w + 2 * cc.padding - cc.kw) / cc.stride + 1;
          const int64_t K = a.c * a.kh * a.kw, P = a.ho * a.wo;
          std::vector<T> x = random_vector<T>(size_t(a.n * a.c * a.h * a.w), rng);
          std::vector<T> w = random_vector<T>(size_t(a.o * K), rng);
          std::vector<T> b = random_vector<T>(size_t(a.o), rng);
          std::vector<T> dy = random_vector<T>(size_t(a.n * a.o * P), rng);
          size_t out_n = 0;
          int64_t terms = 0;
          if (name == "conv2d") out_n = size_t(a.n * a.o * P), terms = K;
          if (name == "conv2d_backward_input") out_n = x.size(), terms = a.o * a.kh * a.kw;
          if (name == "conv2d_backward_weight") out_n = w.size(), terms = a.n * P;
          std::vector<T> want(out_n);
          a.x = x.data(), a.weight = w.data(), a.bias = with_bias ? b.data() : nullptr;
          a.dy = dy.data(), a.out = want.data();
          cpu.get<kernels::Conv2dArgs, T>()(a);

          const int64_t images = sc == Scratch::none ? 0 : sc == Scratch::one_image ? 1 : 3;
          std::vector<T> nan(out_n, std::numeric_limits<T>::quiet_NaN());
          std::vector<T> ws(size_t(std::max<int64_t>(1, images * K * P)),
                            std::numeric_limits<T>::quiet_NaN());
          DeviceArray<T> dx(x), dw(w), db(b), ddy(dy), dout(nan), dws(ws);
          a.x = dx.get(), a.weight = dw.get(), a.bias = with_bias ? db.get() : nullptr;
          a.dy = ddy.get(), a.out = dout.get();
          a.workspace = images ? dws.get() : nullptr;
          a.workspace_size = images * K * P;
          e->get<kernels::Conv2dArgs, T>()(a);
          CHECK(scaled_error(dout.to_host(), want) <= 4.0 * double(terms) * u + 1e-12);
        }
      }
    }
  }
}

TEST_CASE("every cuda conv2d variant matches the cpu naive kernel, forward and both gradients") {
  std::mt19937 rng(31);
  for (const char* op : {"conv2d", "conv2d_backward_input", "conv2d_backward_weight"}) {
    check_conv_op<float>(op, rng);
    check_conv_op<double>(op, rng);
  }
}

struct PoolCase {
  int64_t planes, h, w, kernel, stride, padding;
};

const PoolCase kPoolCases[] = {
    {1, 1, 1, 1, 1, 0},   {3, 7, 9, 3, 2, 1}, {2, 8, 8, 2, 2, 0},
    {4, 13, 11, 3, 1, 1}, {2, 5, 6, 4, 3, 2}, {1, 10, 7, 5, 5, 2},
};

// Values on a coarse grid (multiples of 1/4 in [-1, 1]) so windows hold ties: the first maximum
// in row-major order must win on both devices. With `nans`, a few NaNs that must propagate.
template <class T>
std::vector<T> pool_input(size_t n, bool nans, std::mt19937& rng) {
  std::uniform_int_distribution<int> q(-4, 4);
  std::vector<T> v(n);
  for (T& x : v) x = T(q(rng)) / T(4);
  if (nans) {
    for (size_t i = 3; i < n; i += 17) v[i] = std::numeric_limits<T>::quiet_NaN();
  }
  return v;
}

// Exact comparison that treats NaN == NaN.
template <class T>
bool same(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i]) && !(std::isnan(a[i]) && std::isnan(b[i]))) return false;
  }
  return true;
}

template <class T>
void check_pool(std::mt19937& rng) {
  const auto& reg = kernels::registry();
  for (const PoolCase& pc : kPoolCases) {
    for (bool nans : {false, true}) {
      INFO(prism::testing::info_text((sizeof(T) == 4 ? "f32 " : "f64 "), pc.planes, " planes ",
                                     pc.h, "x", pc.w, " k", pc.kernel, " s", pc.stride, " p",
                                     pc.padding, nans ? " with NaNs" : ""));
      kernels::Pool2dArgs<T> a{};
      a.planes = pc.planes, a.h = pc.h, a.w = pc.w;
      a.kernel = pc.kernel, a.stride = pc.stride, a.padding = pc.padding;
      a.ho = (pc.h + 2 * pc.padding - pc.kernel) / pc.stride + 1;
      a.wo = (pc.w + 2 * pc.padding - pc.kernel) / pc.stride + 1;
      const size_t in_n = size_t(a.planes * a.h * a.w), out_n = size_t(a.planes * a.ho * a.wo);
      std::vector<T> x = pool_input<T>(in_n, nans, rng);
      std::vector<T> dy = random_vector<T>(out_n, rng);
      std::vector<T> nan_out(out_n, std::numeric_limits<T>::quiet_NaN());
      std::vector<T> nan_in(in_n, std::numeric_limits<T>::quiet_NaN());
      std::vector<int64_t> idx_init(out_n, -7);

      // CPU references (naive), then each CUDA variant of each op.
      std::vector<T> y_max(out_n), y_avg(out_n), dx_max(in_n), dx_avg(in_n);
      std::vector<int64_t> idx(out_n);
      a.x = x.data(), a.dy = dy.data();
      a.out = y_max.data(), a.index = idx.data();
      reg.at("max_pool2d", Device::cpu).at("naive").get<kernels::Pool2dArgs, T>()(a);
      a.out = dx_max.data();
      reg.at("max_pool2d_backward", Device::cpu).at("naive").get<kernels::Pool2dArgs, T>()(a);
      a.index = nullptr;
      a.out = y_avg.data();
      reg.at("avg_pool2d", Device::cpu).at("naive").get<kernels::Pool2dArgs, T>()(a);
      a.out = dx_avg.data();
      reg.at("avg_pool2d_backward", Device::cpu).at("naive").get<kernels::Pool2dArgs, T>()(a);

      DeviceArray<T> dx(x), ddy(dy);
      for (const kernels::KernelEntry* e : entries_of("max_pool2d")) {
        INFO(prism::testing::info_text("max_pool2d ", e->name));
        DeviceArray<T> out(nan_out);
        DeviceArray<int64_t> index(idx_init);
        a.x = dx.get(), a.out = out.get(), a.index = index.get();
        e->get<kernels::Pool2dArgs, T>()(a);
        CHECK(same(out.to_host(), y_max));
        CHECK(index.to_host() == idx);
      }
      DeviceArray<int64_t> saved_idx(idx);  // backward reads the CPU's argmax
      for (const kernels::KernelEntry* e : entries_of("max_pool2d_backward")) {
        INFO(prism::testing::info_text("max_pool2d_backward ", e->name));
        DeviceArray<T> out(nan_in);
        a.dy = ddy.get(), a.out = out.get(), a.index = saved_idx.get();
        e->get<kernels::Pool2dArgs, T>()(a);
        CHECK(same(out.to_host(), dx_max));
      }
      a.index = nullptr;
      for (const kernels::KernelEntry* e : entries_of("avg_pool2d")) {
        INFO(prism::testing::info_text("avg_pool2d ", e->name));
        DeviceArray<T> out(nan_out);
        a.x = dx.get(), a.out = out.get();
        e->get<kernels::Pool2dArgs, T>()(a);
        CHECK(same(out.to_host(), y_avg));
      }
      for (const kernels::KernelEntry* e : entries_of("avg_pool2d_backward")) {
        INFO(prism::testing::info_text("avg_pool2d_backward ", e->name));
        DeviceArray<T> out(nan_in);
        a.dy = ddy.get(), a.out = out.get();
        e->get<kernels::Pool2dArgs, T>()(a);
        CHECK(same(out.to_host(), dx_avg));
      }
    }
  }
}

TEST_CASE("every cuda pooling variant matches the cpu exactly, ties and NaNs included") {
  std::mt19937 rng(32);
  check_pool<float>(rng);
  check_pool<double>(rng);
}

// ---- the front ends on CUDA tensors ----------------------------------------------------------

using cuda_test::gpu;
using cuda_test::mismatch;

TEST_CASE("cuda conv2d front end: forward and gradients match the cpu") {
  manual_seed(33);
  cuda_test::for_each_cuda_variant("conv2d", [](const std::string& variant) {
    for (DType dt : cuda_test::kFloatTypes) {
      INFO(prism::testing::info_text(variant, " ", dtype_name(dt)));
      const double rt = dt == DType::f32 ? 1e-4 : 1e-11, at = dt == DType::f32 ? 1e-5 : 1e-12;
      Tensor x = randn({3, 2, 9, 7}, dt), w = randn({4, 2, 3, 3}, dt), b = randn({4}, dt);
      Tensor xc = x.detach().set_requires_grad(), wc = w.detach().set_requires_grad();
      Tensor bc = b.detach().set_requires_grad();
      Tensor yc = conv2d(xc, wc, bc, 2, 1);
      Tensor g = randn(yc.shape(), dt);
      yc.backward(g);
      Tensor xg = gpu(x).set_requires_grad(), wg = gpu(w).set_requires_grad();
      Tensor bg = gpu(b).set_requires_grad();
      Tensor yg = conv2d(xg, wg, bg, 2, 1);
      CHECK(mismatch(yc, yg, rt, at) == "");
      yg.backward(gpu(g));
      REQUIRE(xg.grad().defined());
      CHECK(mismatch(xc.grad(), xg.grad(), rt, at) == "");
      CHECK(mismatch(wc.grad(), wg.grad(), rt, at) == "");
      CHECK(mismatch(bc.grad(), bg.grad(), rt, at) == "");
      // A transposed (non-contiguous) input is made contiguous by the front end.
      Tensor xt = randn({3, 2, 7, 9}, dt).transpose(2, 3);
      CHECK(mismatch(conv2d(xt, w), conv2d(gpu(xt), gpu(w)), rt, at) == "");
    }
  });
}

TEST_CASE("cuda pooling front ends: forward and gradients match the cpu exactly") {
  manual_seed(34);
  for (DType dt : cuda_test::kFloatTypes) {
    INFO(dtype_name(dt));
    Tensor x = randn({2, 3, 11, 9}, dt), g = randn({2, 3, 6, 5}, dt);
    for (bool use_max : {true, false}) {
      auto pool = [use_max](const Tensor& t) {
        return use_max ? max_pool2d(t, 3, 2, 1) : avg_pool2d(t, 3, 2, 1);
      };
      Tensor xc = x.detach().set_requires_grad();
      Tensor yc = pool(xc);
      yc.backward(g);
      Tensor xg = gpu(x).set_requires_grad();
      Tensor yg = pool(xg);
      CHECK(cuda_test::differs(yc, yg) == "");
      yg.backward(gpu(g));
      REQUIRE(xg.grad().defined());
      CHECK(cuda_test::differs(xc.grad(), xg.grad()) == "");
    }
  }
}

}  // namespace
}  // namespace prism
