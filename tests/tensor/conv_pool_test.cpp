// conv2d, max_pool2d and avg_pool2d: forward against direct-loop float64 references written here
// from the definitions (odd and prime sizes, kernels 1 to 5, strides, padding, non-square
// kernels, strided inputs), the naive and im2col variants against each other, gradients by
// finite differences under each variant, the cost formulas and what the profiler records, and
// the errors bad arguments give.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kernels/costs.h"
#include "kernels/ops/conv2d/op.h"
#include "kernels/ops/pool2d/op.h"
#include "kernels/registry.h"
#include "profiler/session.h"
#include "tensor/autograd/gradcheck.h"
#include "tests/records.h"
#include "tests/tensor/reference.h"
#include "tests/test_util.h"

namespace prism {

namespace {

using profiler::Cost;
using profiler::OpRecord;
using profiler::Phase;
using ref::Array;
using ref::Shape;
using testing::named;
using testing::only;
using testing::record;

constexpr DType kFloatTypes[] = {DType::f32, DType::f64};
const char* const kConvOps[] = {"conv2d", "conv2d_backward_input", "conv2d_backward_weight"};

// Selects one variant for the forward and both gradient ops of conv2d at once.
struct UseConv {
  explicit UseConv(const std::string& v)
      : f(kConvOps[0], v), dx(kConvOps[1], v), dw(kConvOps[2], v) {}
  kernels::Use f, dx, dw;
};

std::vector<std::string> conv_variants() {
  std::vector<std::string> names;
  for (const auto& e : kernels::registry().at("conv2d", Device::cpu).entries()) {
    names.push_back(e.name);
  }
  return names;
}

// ---- references: the definitions as loops, in float64 --------------------------------------

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p) {
  return (in + 2 * p - k) / s + 1;
}

// y[n,o,i,j] = b[o] + sum_{c,p,q} x[n, c, i*s - pad + p, j*s - pad + q] w[o,c,p,q], x = 0
// outside. With `absolute`, sums |x| |w| (+ |b|): the scale of the rounding error of a sum.
Array ref_conv2d(const Array& x, const Array& w, const Array* b, int64_t s, int64_t pad,
                 bool absolute = false) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t O = w.shape[0], KH = w.shape[2], KW = w.shape[3];
  const int64_t HO = out_size(H, KH, s, pad), WO = out_size(W, KW, s, pad);
  auto f = [absolute](double v) { return absolute ? std::fabs(v) : v; };
  Array y({N, O, HO, WO});
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t o = 0; o < O; ++o) {
      for (int64_t i = 0; i < HO; ++i) {
        for (int64_t j = 0; j < WO; ++j) {
          long double acc = b ? f(b->at({o})) : 0.0;
          for (int64_t c = 0; c < C; ++c) {
            for (int64_t p = 0; p < KH; ++p) {
              for (int64_t q = 0; q < KW; ++q) {
                const int64_t hi = i * s - pad + p, wi = j * s - pad + q;
                if (hi < 0 || hi >= H || wi < 0 || wi >= W) continue;
                acc += static_cast<long double>(f(x.at({n, c, hi, wi}))) * f(w.at({o, c, p, q}));
              }
            }
          }
          y.at({n, o, i, j}) = static_cast<double>(acc);
        }
      }
    }
  }
  return y;
}

// Pooling over the real elements of each window (padding is skipped, not counted).
Array ref_pool(const Array& x, int64_t k, int64_t s, int64_t pad, bool is_max) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t HO = out_size(H, k, s, pad), WO = out_size(W, k, s, pad);
  Array y({N, C, HO, WO});
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t i = 0; i < HO; ++i) {
        for (int64_t j = 0; j < WO; ++j) {
          double best = -std::numeric_limits<double>::infinity(), sum = 0;
          int64_t count = 0;
          for (int64_t p = 0; p < k; ++p) {
            for (int64_t q = 0; q < k; ++q) {
              const int64_t hi = i * s - pad + p, wi = j * s - pad + q;
              if (hi < 0 || hi >= H || wi < 0 || wi >= W) continue;
              const double v = x.at({n, c, hi, wi});
              best = std::max(best, v);
              sum += v;
              ++count;
            }
          }
          y.at({n, c, i, j}) = is_max ? best : sum / static_cast<double>(count);
        }
      }
    }
  }
  return y;
}

// A [N,C,H,W] input whose memory is [N,C,W,H] (a transpose view), or a plain contiguous one.
ref::Input input4(const Shape& s, bool strided, DType dt, ref::Rng& rng) {
  return ref::make_input(s, strided ? ref::Layout::transposed : ref::Layout::contiguous, dt, rng);
}

// ---- conv2d forward ------------------------------------------------------------------------

struct ConvCase {
  int64_t n, c, h, w, o, kh, kw;
  int stride, padding;
  bool bias;
};

const ConvCase kConvCases[] = {
    {1, 1, 7, 5, 3, 3, 3, 1, 1, true},   // N = 1, C = 1, prime sizes, "same" padding
    {2, 3, 7, 5, 3, 1, 1, 1, 0, false},  // 1x1 kernel: im2col's no-unfold path
    {2, 2, 7, 5, 3, 5, 5, 2, 2, true},   // kernel 5, stride 2, padding 2
    {1, 3, 5, 7, 3, 3, 3, 2, 1, true},   // stride 2 on odd sizes
    {2, 1, 7, 5, 1, 5, 5, 1, 2, false},  // O = 1
    {1, 2, 4, 4, 3, 4, 4, 1, 0, true},   // the kernel covers the whole input: 1x1 output
    {2, 2, 7, 5, 3, 2, 3, 1, 1, true},   // non-square kernel
    {1, 3, 7, 5, 2, 3, 1, 3, 2, false},  // stride 3, padding wider than a 1-wide kernel dim
    {1, 2, 3, 3, 2, 5, 5, 1, 1, true},   // kernel larger than the input, not the padded one
    {3, 2, 6, 6, 3, 1, 1, 2, 0, true},   // 1x1 with stride: the unfold path again
};

std::string conv_case_str(const ConvCase& c) {
  return "x [" + std::to_string(c.n) + "," + std::to_string(c.c) + "," + std::to_string(c.h) + "," +
         std::to_string(c.w) + "] w [" + std::to_string(c.o) + "," + std::to_string(c.c) + "," +
         std::to_string(c.kh) + "," + std::to_string(c.kw) + "] stride " +
         std::to_string(c.stride) + " padding " + std::to_string(c.padding) +
         (c.bias ? " bias" : "");
}

TEST_CASE("conv2d matches a direct-loop float64 reference under each variant") {
  ref::Rng rng(301);
  for (const std::string& variant : conv_variants()) {
    UseConv use(variant);
    for (DType dt : kFloatTypes) {
      for (const ConvCase& c : kConvCases) {
        for (bool strided : {false, true}) {
          INFO(("[" + variant + "] " + dtype_name(dt) + " " + conv_case_str(c) +
                (strided ? " strided" : "")));
          ref::Input x = input4({c.n, c.c, c.h, c.w}, strided, dt, rng);
          ref::Input w = input4({c.o, c.c, c.kh, c.kw}, strided, dt, rng);
          ref::Input b = ref::make_input(
              {c.o}, strided ? ref::Layout::stepped : ref::Layout::contiguous, dt, rng);
          Tensor y = conv2d(x.t, w.t, c.bias ? b.t : Tensor(), c.stride, c.padding);
          CHECK(y.dtype() == dt);
          const Array* bias = c.bias ? &b.a : nullptr;
          Array expect = ref_conv2d(x.a, w.a, bias, c.stride, c.padding);
          Array scale = ref_conv2d(x.a, w.a, bias, c.stride, c.padding, true);
          ref::Tol tol = ref::tol_for(dt, 1e-5, 1e-6);
          CHECK(ref::mismatch(y, expect, tol.rtol, tol.atol, &scale) == "");
        }
      }
    }
  }
}

TEST_CASE("conv2d of a known small example") {
  // x = 1..9 as 3x3, a 2x2 kernel [[1,0],[0,-1]] (x[i][j] - x[i+1][j+1] = -4 everywhere), and
  // bias 0.5; with padding 1 the corners see a single element of x.
  for (const std::string& variant : conv_variants()) {
    UseConv use(variant);
    for (DType dt : kFloatTypes) {
      INFO(variant);
      Tensor x = ref::to_tensor(Array({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), dt);
      Tensor w = ref::to_tensor(Array({1, 1, 2, 2}, {1, 0, 0, -1}), dt);
      Tensor b = ref::to_tensor(Array({1}, {0.5}), dt);
      CHECK(conv2d(x, w, b).to_vector<double>() == std::vector<double>{-3.5, -3.5, -3.5, -3.5});
      CHECK(conv2d(x, w, Tensor(), 2, 1).to_vector<double>() ==
            std::vector<double>{-1, -3, -7, -4});
    }
  }
}

TEST_CASE("conv2d naive and im2col agree, forward and both gradients") {
  ref::Rng rng(302);
  for (DType dt : kFloatTypes) {
    for (const ConvCase& c : kConvCases) {
      INFO((std::string(dtype_name(dt)) + " " + conv_case_str(c)));
      ref::Input x = input4({c.n, c.c, c.h, c.w}, false, dt, rng);
      ref::Input w = input4({c.o, c.c, c.kh, c.kw}, false, dt, rng);
      Tensor b = c.bias ? ref::make_input({c.o}, ref::Layout::contiguous, dt, rng).t : Tensor();
      const int64_t ho = out_size(c.h, c.kh, c.stride, c.padding);
      const int64_t wo = out_size(c.w, c.kw, c.stride, c.padding);
      Tensor g = ref::make_input({c.n, c.o, ho, wo}, ref::Layout::contiguous, dt, rng).t;
      std::vector<std::vector<double>> results[2];
      const std::string names[2] = {"naive", "im2col"};
      for (int v = 0; v < 2; ++v) {
        UseConv use(names[v]);
        Tensor xl = x.t.detach(), wl = w.t.detach(), bl = b.defined() ? b.detach() : Tensor();
        xl.set_requires_grad();
        wl.set_requires_grad();
        if (bl.defined()) bl.set_requires_grad();
        Tensor y = conv2d(xl, wl, bl, c.stride, c.padding);
        y.backward(g);
        results[v] = {y.to_vector<double>(), xl.grad().to_vector<double>(),
                      wl.grad().to_vector<double>()};
        if (bl.defined()) results[v].push_back(bl.grad().to_vector<double>());
      }
      REQUIRE(results[0].size() == results[1].size());
      const char* what[] = {"y", "dx", "dw", "db"};
      for (size_t r = 0; r < results[0].size(); ++r) {
        INFO(what[r]);
        const auto& a = results[0][r];
        const auto& e = results[1][r];
        REQUIRE(a.size() == e.size());
        double worst = 0, norm = 0;
        for (size_t i = 0; i < a.size(); ++i) {
          worst = std::max(worst, std::fabs(a[i] - e[i]));
          norm = std::max(norm, std::fabs(e[i]));
        }
        CHECK(worst <= (dt == DType::f32 ? 1e-5 : 1e-12) * std::max(norm, 1.0));
      }
    }
  }
}

TEST_CASE("conv2d with zero-sized batch or channels") {
  for (const std::string& variant : conv_variants()) {
    UseConv use(variant);
    INFO(variant);
    CHECK(conv2d(zeros({0, 2, 5, 5}), ones({3, 2, 3, 3})).shape() == Dims{0, 3, 3, 3});
    // No input channels: each output is the bias alone.
    Tensor y = conv2d(zeros({2, 0, 5, 5}), ones({3, 0, 3, 3}), full({3}, 1.5));
    CHECK(y.shape() == Dims{2, 3, 3, 3});
    for (double v : y.to_vector<double>()) CHECK(v == 1.5);
  }
}

// ---- conv2d gradients --------------------------------------------------------------------------

Tensor leaf(const Shape& s, ref::Rng& rng) {
  Tensor t = ref::to_tensor(ref::random(s, rng), DType::f64);
  t.set_requires_grad();
  return t;
}

Tensor leaf_distinct(const Shape& s, ref::Rng& rng) {
  Tensor t = ref::to_tensor(ref::distinct(s, rng), DType::f64);
  t.set_requires_grad();
  return t;
}

TEST_CASE("gradcheck: conv2d input, weight and bias under each variant") {
  ref::Rng rng(303);
  for (const std::string& variant : conv_variants()) {
    UseConv use(variant);
    for (const ConvCase& c : kConvCases) {
      INFO(("[" + variant + "] " + conv_case_str(c)));
      const int s = c.stride, p = c.padding;
      Tensor x = leaf({c.n, c.c, c.h, c.w}, rng), w = leaf({c.o, c.c, c.kh, c.kw}, rng);
      if (c.bias) {
        CHECK_GRAD(
            [s, p](const std::vector<Tensor>& in) { return conv2d(in[0], in[1], in[2], s, p); }, x,
            w, leaf({c.o}, rng));
      } else {
        CHECK_GRAD(
            [s, p](const std::vector<Tensor>& in) { return conv2d(in[0], in[1], Tensor(), s, p); },
            x, w);
      }
    }
    // A strided input (the front end copies it), and one input alone requiring grad.
    CHECK_GRAD(
        [](const std::vector<Tensor>& in) {
          return conv2d(in[0].transpose(2, 3), in[1], in[2], 2, 1);
        },
        leaf({2, 2, 5, 7}, rng), leaf({3, 2, 3, 3}, rng), leaf({3}, rng));
    Tensor wc = ref::to_tensor(ref::random({2, 3, 3, 3}, rng), DType::f64);
    Tensor xc = ref::to_tensor(ref::random({2, 3, 5, 4}, rng), DType::f64);
    CHECK_GRAD([wc](const std::vector<Tensor>& in) { return conv2d(in[0], wc, Tensor(), 1, 1); },
               leaf({2, 3, 5, 4}, rng));
    CHECK_GRAD([xc](const std::vector<Tensor>& in) { return conv2d(xc, in[0], Tensor(), 1, 1); },
               leaf({2, 3, 3, 3}, rng));
    // Two convolutions in a row with a relu between: gradients flow through conv2d.dx.
    CHECK_GRAD(
        [](const std::vector<Tensor>& in) {
          Tensor h = relu(conv2d(in[0], in[1], Tensor(), 1, 1));
          return conv2d(h, in[2], Tensor(), 2, 0);
        },
        leaf({1, 2, 6, 5}, rng), leaf({3, 2, 3, 3}, rng), leaf({2, 3, 2, 2}, rng));
  }
}

// ---- pooling ------------------------------------------------------------------------------------

struct PoolCase {
  int64_t n, c, h, w;
  int kernel, stride, padding;  // stride 0 = kernel
};

const PoolCase kPoolCases[] = {
    {1, 1, 7, 5, 2, 0, 0},  // the default stride: 3x2 output, the odd last row/column dropped
    {2, 3, 7, 5, 3, 1, 1},  // overlapping windows with padding
    {1, 2, 5, 7, 3, 2, 1},  // stride 2, padding 1
    {2, 1, 7, 5, 5, 2, 2},  // kernel 5, padding 2
    {1, 3, 4, 4, 1, 1, 0},  // kernel 1: the identity
    {1, 1, 3, 3, 3, 0, 0},  // one window over everything
    {2, 2, 6, 6, 2, 2, 1},  // padding on every side
};

std::string pool_case_str(const PoolCase& c) {
  return "x [" + std::to_string(c.n) + "," + std::to_string(c.c) + "," + std::to_string(c.h) + "," +
         std::to_string(c.w) + "] kernel " + std::to_string(c.kernel) + " stride " +
         std::to_string(c.stride) + " padding " + std::to_string(c.padding);
}

TEST_CASE("max_pool2d and avg_pool2d match direct-loop references") {
  ref::Rng rng(304);
  for (DType dt : kFloatTypes) {
    for (const PoolCase& c : kPoolCases) {
      for (bool strided : {false, true}) {
        INFO((std::string(dtype_name(dt)) + " " + pool_case_str(c) + (strided ? " strided" : "")));
        ref::Input x = input4({c.n, c.c, c.h, c.w}, strided, dt, rng);
        const int s = c.stride == 0 ? c.kernel : c.stride;
        Tensor ym = max_pool2d(x.t, c.kernel, c.stride, c.padding);
        CHECK(ref::mismatch(ym, ref_pool(x.a, c.kernel, s, c.padding, true), 0, 0) == "");
        Tensor ya = avg_pool2d(x.t, c.kernel, c.stride, c.padding);
        ref::Tol tol = ref::tol_for(dt, 1e-6, 1e-7);
        CHECK(ref::mismatch(ya, ref_pool(x.a, c.kernel, s, c.padding, false), tol.rtol, tol.atol) ==
              "");
        CHECK(ym.shape() == ya.shape());
      }
    }
  }
}

TEST_CASE("pooling of known small examples: padding excluded from the average") {
  Tensor x = ref::to_tensor(Array({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), DType::f64);
  CHECK(max_pool2d(x, 2).to_vector<double>() == std::vector<double>{5});
  CHECK(max_pool2d(x, 2, 1).to_vector<double>() == std::vector<double>{5, 6, 8, 9});
  CHECK(avg_pool2d(x, 2, 1).to_vector<double>() == std::vector<double>{3, 4, 6, 7});
  // Padding 1, kernel 3, stride 1: the corner window covers 4 real elements (1,2,4,5 -> 3).
  std::vector<double> a = avg_pool2d(x, 3, 1, 1).to_vector<double>();
  CHECK(a == std::vector<double>{3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7});
  CHECK(max_pool2d(-x, 3, 1, 1).to_vector<double>() ==
        std::vector<double>{-1, -1, -2, -1, -1, -2, -4, -4, -5});  // padding is never the max
  // A NaN propagates through max instead of being hidden.
  Tensor n = ref::to_tensor(Array({1, 1, 2, 2}, {1, std::nan(""), 3, 2}), DType::f32);
  CHECK(std::isnan(max_pool2d(n, 2).item<double>()));
}

TEST_CASE("gradcheck: max_pool2d and avg_pool2d") {
  ref::Rng rng(305);
  for (const PoolCase& c : kPoolCases) {
    INFO(pool_case_str(c));
    const int k = c.kernel, s = c.stride, p = c.padding;
    // Distinct values: no ties, so finite differences never move the argmax.
    CHECK_GRAD([k, s, p](const std::vector<Tensor>& in) { return max_pool2d(in[0], k, s, p); },
               leaf_distinct({c.n, c.c, c.h, c.w}, rng));
    CHECK_GRAD([k, s, p](const std::vector<Tensor>& in) { return avg_pool2d(in[0], k, s, p); },
               leaf({c.n, c.c, c.h, c.w}, rng));
  }
  CHECK_GRAD(
      [](const std::vector<Tensor>& in) { return max_pool2d(in[0].transpose(2, 3), 3, 2, 1); },
      leaf_distinct({2, 2, 5, 7}, rng));
  // conv -> relu -> max pool, the CNN block.
  CHECK_GRAD(
      [](const std::vector<Tensor>& in) {
        return max_pool2d(relu(conv2d(in[0], in[1], in[2], 1, 1)), 2);
      },
      leaf_distinct({2, 1, 6, 6}, rng), leaf_distinct({3, 1, 3, 3}, rng), leaf({3}, rng));
}

// ---- costs -------------------------------------------------------------------------------------

TEST_CASE("costs::conv2d: 2 N O Ho Wo C kh kw FLOPs, the bias add counted in FLOPs only") {
  // The oracle: x 2x3x6x6, w 6x3x4x4, padding 1 -> 5x5 outputs; 2*2*6*5*5*3*4*4 = 28,800.
  const Dims x{2, 3, 6, 6}, w{6, 3, 4, 4};
  const int64_t xn = 216, wn = 288, yn = 300;
  CHECK(costs::conv2d(x, w, false, 1, 1, 4) == Cost{28800, 14400, (xn + wn + yn) * 4});
  CHECK(costs::conv2d(x, w, true, 1, 1, 4) == Cost{28800 + yn, 14400, (xn + wn + 6 + yn) * 4});
  CHECK(costs::conv2d_backward_input(x, w, 1, 1, 8) == Cost{28800, 14400, (yn + wn + xn) * 8});
  CHECK(costs::conv2d_backward_weight(x, w, 1, 1, 8) == Cost{28800, 14400, (yn + xn + wn) * 8});
  // Stride 2, no padding: 2x2 outputs.
  CHECK(costs::conv2d(x, w, false, 2, 0, 4).flops == 2 * 2 * 6 * 2 * 2 * 3 * 4 * 4);
  CHECK(costs::window_out_size(28, 3, 1, 0) == 26);
  CHECK(costs::window_out_size(7, 2, 2, 0) == 3);
  CHECK(costs::window_out_size(7, 5, 2, 2) == 4);
}

TEST_CASE("costs::pool2d: kernel^2 FLOPs per output, the argmax bytes for max") {
  const Dims x{2, 3, 6, 6};  // kernel 2 -> 3x3 outputs: 54 of them
  CHECK(costs::pool2d(x, 2, 2, 0, true, 4) == Cost{54 * 4, 0, 216 * 4 + 54 * (4 + 8)});
  CHECK(costs::pool2d(x, 2, 2, 0, false, 4) == Cost{54 * 4, 0, (216 + 54) * 4});
  CHECK(costs::max_pool2d_backward(x, 2, 2, 0, 4) == Cost{54, 0, 54 * (4 + 8) + 216 * 4});
  CHECK(costs::avg_pool2d_backward(x, 2, 2, 0, 8) == Cost{54 * 4, 0, (54 + 216) * 8});
}

TEST_CASE("recorded conv2d and pool costs are the formulas', forward and backward") {
  for (const std::string& variant : conv_variants()) {
    UseConv use(variant);
    INFO(variant);
    Tensor x = ones({2, 3, 6, 6}), w = ones({6, 3, 4, 4});
    OpRecord r = only(record([&] { conv2d(x, w, Tensor(), 1, 1); }), "conv2d");
    CHECK(r.cost == Cost{28800, 14400, (216 + 288 + 300) * 4});
    CHECK(std::string(r.variant) == variant);
    CHECK(r.shapes.to_string() == "[2,3,6,6] [6,3,4,4]");
    // im2col's patch matrix is a second allocation inside the record (3*4*4 x 5*5 floats).
    if (variant == "im2col") {
      CHECK(r.allocs == 2);
      CHECK(r.alloc_bytes == (300 + 48 * 25) * 4);
    } else {
      CHECK(r.allocs == 1);
    }

    Tensor xg = ones({2, 3, 6, 6}), wg = ones({6, 3, 4, 4}), bg = ones({6});
    xg.set_requires_grad();
    wg.set_requires_grad();
    bg.set_requires_grad();
    auto recs = record([&] { conv2d(xg, wg, bg, 1, 1).backward(ones({2, 6, 5, 5})); });
    CHECK(only(recs, "conv2d").cost == Cost{28800 + 300, 14400, (216 + 288 + 6 + 300) * 4});
    OpRecord dx = only(recs, "conv2d_backward_input", Phase::backward);
    OpRecord dw = only(recs, "conv2d_backward_weight", Phase::backward);
    CHECK(dx.cost == Cost{28800, 14400, (300 + 288 + 216) * 4});
    CHECK(dw.cost == Cost{28800, 14400, (300 + 216 + 288) * 4});
    CHECK(std::string(dx.grad_of) == "conv2d.dx");
    CHECK(std::string(dw.grad_of) == "conv2d.dw");
    // The bias gradient: sum over H, W, then over N.
    std::vector<OpRecord> db = named(recs, "sum", Phase::backward);
    REQUIRE(db.size() == 2);
    for (const OpRecord& s : db) CHECK(std::string(s.grad_of) == "conv2d.db");
    CHECK(db[0].cost == Cost{300 - 12, 0, (300 + 12) * 4});
  }
  Tensor x = ones({2, 3, 6, 6});
  x.set_requires_grad();
  auto recs = record([&] {
    sum(max_pool2d(x, 2)).backward();
    sum(avg_pool2d(x, 2)).backward();
  });
  CHECK(only(recs, "max_pool2d").cost == Cost{216, 0, 216 * 4 + 54 * 12});
  CHECK(only(recs, "avg_pool2d").cost == Cost{216, 0, (216 + 54) * 4});
  CHECK(only(recs, "max_pool2d_backward", Phase::backward).cost == Cost{54, 0, 54 * 12 + 216 * 4});
  CHECK(only(recs, "avg_pool2d_backward", Phase::backward).cost == Cost{216, 0, (54 + 216) * 4});
}

TEST_CASE("conv2d copies a strided input first, and the profile shows the copy") {
  Tensor x = ones({1, 2, 5, 7}).transpose(2, 3);
  auto recs = record([&] { conv2d(x, ones({3, 2, 3, 3})); });
  CHECK(only(recs, "contiguous").cost == Cost{0, 0, 2 * 70 * 4});
  CHECK(only(recs, "conv2d").shapes.to_string() == "[1,2,7,5] [3,2,3,3]");
}

TEST_CASE("conv2d and pooling on the meta device: shapes and costs, no data") {
  DefaultDevice meta(Device::meta);
  Tensor x = randn({2, 3, 6, 6});
  Tensor w = randn({6, 3, 4, 4}).set_requires_grad();
  Tensor b = zeros({6}).set_requires_grad();
  profiler::Session session;
  Tensor y = max_pool2d(relu(conv2d(x, w, b, 1, 1)), 2, 0, 1);
  CHECK(y.shape() == Dims{2, 6, 3, 3});
  sum(y).backward();
  const auto& recs = session.stop().recording.records;
  OpRecord r = only(recs, "conv2d");
  CHECK(std::string(r.variant) == "meta");
  CHECK(r.cost.flops == 28800 + 300);
  // The output and the im2col scratch of the variant the cpu would run: a dry run allocates
  // what a real run does (tests/ops/tensor_level_test.cpp checks it for every op).
  CHECK(r.allocs == 2);
  {
    DefaultDevice cpu(Device::cpu);
    profiler::Session real;
    (void)conv2d(randn({2, 3, 6, 6}), randn({6, 3, 4, 4}), zeros({6}), 1, 1);
    const OpRecord c = only(real.stop().recording.records, "conv2d");
    CHECK(c.allocs == r.allocs);
    CHECK(c.alloc_bytes == r.alloc_bytes);
  }
  CHECK(only(recs, "conv2d_backward_weight", Phase::backward).cost.flops == 28800);
  CHECK(named(recs, "conv2d_backward_input", Phase::backward).empty());  // x needs no grad
  CHECK(w.grad().shape() == Dims{6, 3, 4, 4});
  CHECK(b.grad().shape() == Dims{6});
  CHECK_THROWS_AS(conv2d(x, randn({6, 2, 4, 4})), Error);  // shapes are still checked
}

// ---- errors ------------------------------------------------------------------------------------

TEST_CASE("conv2d refuses bad shapes and arguments with messages naming the op and shapes") {
  Tensor x = zeros({2, 3, 6, 6}), w = zeros({4, 3, 3, 3});
  CHECK_THROWS_WITH_AS(conv2d(zeros({3, 6, 6}), w),
                       doctest::Contains("conv2d: input must be 4-D [N, C, H, W], got [3,6,6]"),
                       Error);
  CHECK_THROWS_WITH_AS(conv2d(x, zeros({4, 3, 3})),
                       doctest::Contains("conv2d: weight must be 4-D [O, C, kh, kw], got [4,3,3]"),
                       Error);
  CHECK_THROWS_WITH_AS(conv2d(x, zeros({4, 2, 3, 3})),
                       doctest::Contains("input has 3 channels but the weight expects 2 (input "
                                         "[2,3,6,6], weight [4,2,3,3])"),
                       Error);
  CHECK_THROWS_WITH_AS(conv2d(x, w, zeros({3})), doctest::Contains("conv2d: bias must be 1-D [4]"),
                       Error);
  CHECK_THROWS_WITH_AS(conv2d(x, w, zeros({4, 1})), doctest::Contains("got [4,1]"), Error);
  CHECK_THROWS_WITH_AS(conv2d(x, w, Tensor(), 0),
                       doctest::Contains("conv2d: stride must be at least 1, got 0"), Error);
  CHECK_THROWS_WITH_AS(conv2d(x, w, Tensor(), 1, -1),
                       doctest::Contains("conv2d: padding must be at least 0, got -1"), Error);
  CHECK_THROWS_WITH_AS(conv2d(zeros({1, 3, 2, 6}), w),
                       doctest::Contains("conv2d: kernel 3x3 is larger than the padded input 2x6 "
                                         "(input [1,3,2,6], weight [4,3,3,3], padding 0)"),
                       Error);
  CHECK_NOTHROW(conv2d(zeros({1, 3, 2, 6}), w, Tensor(), 1, 1));  // padded to 4x8: fits
  CHECK_THROWS_WITH_AS(conv2d(x, zeros({4, 3, 0, 3})), doctest::Contains("empty kernel"), Error);
  CHECK_THROWS_WITH_AS(conv2d(x, zeros({4, 3, 3, 3}, DType::f64)),
                       doctest::Contains("conv2d: dtypes differ"), Error);
  CHECK_THROWS_WITH_AS(conv2d(x, w, zeros({4}, DType::f64)), doctest::Contains("conv2d"), Error);
  CHECK_THROWS_WITH_AS(conv2d(zeros({2, 3, 6, 6}, DType::i64), zeros({4, 3, 3, 3}, DType::i64)),
                       doctest::Contains("conv2d: needs a float32 or float64 tensor"), Error);
  CHECK_THROWS_WITH_AS(conv2d(Tensor(), w), doctest::Contains("conv2d"), Error);
}

doctest::Contains has(const std::string& text) {
  return doctest::Contains(text.c_str());
}

TEST_CASE("max_pool2d and avg_pool2d refuse bad shapes and arguments") {
  Tensor x = zeros({2, 3, 6, 6});
  for (auto pool : {&max_pool2d, &avg_pool2d}) {
    const std::string op = pool == &max_pool2d ? "max_pool2d" : "avg_pool2d";
    INFO(op);
    CHECK_THROWS_WITH_AS(pool(zeros({3, 6, 6}), 2, 0, 0),
                         has(op + ": input must be 4-D [N, C, H, W], got [3,6,6]"), Error);
    CHECK_THROWS_WITH_AS(pool(x, 0, 0, 0), has(op + ": kernel size must be at least 1"), Error);
    CHECK_THROWS_WITH_AS(pool(x, 2, -1, 0), has(op + ": stride must be at least 1"), Error);
    CHECK_THROWS_WITH_AS(pool(x, 3, 1, 2),
                         has(op + ": padding must be between 0 and half the kernel"), Error);
    CHECK_THROWS_WITH_AS(pool(x, 2, 1, -1), doctest::Contains("got -1"), Error);
    CHECK_THROWS_WITH_AS(pool(zeros({1, 1, 6, 2}), 3, 0, 0),
                         has(op + ": kernel 3x3 is larger than the padded input 6x2 "
                                  "(input [1,1,6,2], padding 0)"),
                         Error);
    CHECK_THROWS_WITH_AS(pool(zeros({1, 1, 4, 4}, DType::i64), 2, 0, 0),
                         has(op + ": needs a float32 or float64 tensor"), Error);
  }
}

}  // namespace
}  // namespace prism
