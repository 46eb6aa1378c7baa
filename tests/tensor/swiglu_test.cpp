// swiglu (tensor/ops/swiglu.cpp): both variants, forward and backward, against a long-double
// reference written here from the definition, on odd shapes and strided views (transposed,
// stepped, broadcast by stride 0, and the two halves of one projection); gradients against
// finite differences, with both inputs or one needing a gradient; exact costs on the meta
// device; errors naming the op. (Every variant against the baseline on raw buffers:
// kernels/ops/swiglu/opinfo.cpp via the op-description tests.)
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "profiler/session.h"
#include "tensor/autograd/grad_mode.h"
#include "tests/tensor/reference.h"
#include "tests/test_util.h"

namespace prism {
namespace {

using ref::Array;
using ref::Layout;
using ref::Shape;
using testing::contains;
using testing::error_of;

long double sigmoid_ld(long double z) {
  return 1 / (1 + std::exp(-z));
}

// silu(gate) * up, silu(z) = z sigmoid(z), in long double.
Array swiglu_ref(const Array& gate, const Array& up) {
  Array y(gate.shape);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const long double z = gate[i];
    y[i] = static_cast<double>(z * sigmoid_ld(z) * up[i]);
  }
  return y;
}

// dgate = g up s (1 + z (1 - s)), dup = g z s, s = sigmoid(z): the derivative of z s(z) is
// s + z s (1 - s).
struct RefGrads {
  Array dgate, dup;
};
RefGrads swiglu_backward_ref(const Array& gate, const Array& up, const Array& g) {
  RefGrads d{Array(gate.shape), Array(gate.shape)};
  for (int64_t i = 0; i < gate.numel(); ++i) {
    const long double z = gate[i], s = sigmoid_ld(z);
    d.dgate[i] = static_cast<double>(g[i] * up[i] * s * (1 + z * (1 - s)));
    d.dup[i] = static_cast<double>(g[i] * z * s);
  }
  return d;
}

const char* kVariants[] = {"fused", "naive"};

const std::vector<Shape> kShapes = {{1},     {5},         {1, 7},   {7, 1},
                                    {3, 64}, {2, 3, 131}, {13, 67}, {4, 1031}};

// Elementwise in float32: a few ulps of the result, an absolute floor where the result is near
// 0 (silu(z) for z << 0, and dgate near z = -1.28 where silu' crosses 0).
ref::Tol tol(DType dt) {
  return ref::tol_for(dt, 4e-6, 1e-6);
}

// The layout of up for a gate of layout `l`: always another one, so the two inputs reach the
// kernel with different strides.
Layout other(Layout l) {
  const int n = sizeof(ref::kAllLayouts) / sizeof(ref::kAllLayouts[0]);
  for (int i = 0; i < n; ++i) {
    if (ref::kAllLayouts[i] == l) return ref::kAllLayouts[(i + 1) % n];
  }
  return Layout::contiguous;
}

TEST_CASE("swiglu matches the reference: variants, dtypes, odd shapes, strided views") {
  ref::Rng rng(31);
  for (const char* variant : kVariants) {
    kernels::Use use("swiglu", variant);
    for (DType dt : {DType::f32, DType::f64}) {
      for (const Shape& s : kShapes) {
        for (Layout l : ref::kAllLayouts) {
          INFO(prism::testing::info_text(variant, " ", dtype_name(dt), " ", ref::shape_str(s),
                                         " gate ", ref::layout_name(l), " up ",
                                         ref::layout_name(other(l))));
          ref::Input gate = ref::make_input(s, l, dt, rng, -8, 8);
          ref::Input up = ref::make_input(s, other(l), dt, rng, -2, 2);
          Tensor y = swiglu(gate.t, up.t);
          CHECK(y.shape() == Dims(s));
          CHECK(y.dtype() == dt);
          CHECK(y.is_contiguous());
          const ref::Tol t = tol(dt);
          CHECK(ref::mismatch(y, swiglu_ref(gate.a, up.a), t.rtol, t.atol) == "");
        }
      }
    }
  }
}

TEST_CASE("swiglu reads the two halves of one projection in place, without a copy") {
  ref::Rng rng(32);
  for (const char* variant : kVariants) {
    kernels::Use use("swiglu", variant);
    for (const Shape& s : {Shape{5, 2 * 37}, Shape{2, 3, 2 * 131}, Shape{2}}) {
      INFO(prism::testing::info_text(variant, " ", ref::shape_str(s)));
      ref::Input both = ref::make_input(s, Layout::contiguous, DType::f32, rng, -6, 6);
      const int64_t c = s.back() / 2;
      Tensor gate = both.t.slice(-1, 0, c), up = both.t.slice(-1, c, 2 * c);
      const int last = static_cast<int>(s.size()) - 1;
      profiler::Session session;
      Tensor y = swiglu(gate, up);
      const profiler::Profile& p = session.stop();
      int ops = 0;
      for (const auto& r : p.recording.records) {
        if (r.kind != profiler::Kind::op) continue;
        ++ops;
        CHECK(std::string(r.op) == "swiglu");  // no "contiguous" row before it
      }
      CHECK(ops == 1);
      const Array expect =
          swiglu_ref(ref::slice(both.a, last, 0, c), ref::slice(both.a, last, c, 2 * c));
      CHECK(ref::mismatch(y, expect, 4e-6, 1e-6) == "");
    }
  }
}

TEST_CASE("swiglu at extreme and special inputs") {
  for (DType dt : {DType::f32, DType::f64}) {
    INFO(std::string(dtype_name(dt)));
    // silu(z) -> 0 for z -> -inf and -> z for z -> +inf, with no inf * 0 on the way.
    Tensor gate = ref::to_tensor(Array({5}, {-1000, -100, 0, 100, 1000}), dt);
    Tensor up = ref::to_tensor(Array({5}, {2, 2, 2, 2, 2}), dt);
    for (const char* variant : kVariants) {
      kernels::Use use("swiglu", variant);
      const std::vector<double> y = swiglu(gate, up).to_vector<double>();
      CHECK(y == std::vector<double>{0, y[1], 0, 200, 2000});
      CHECK(std::fabs(y[1]) < 1e-40);
    }
    // Empty tensors are fine: no elements, no kernel call.
    CHECK(swiglu(zeros({3, 0}, dt), zeros({3, 0}, dt)).shape() == Dims{3, 0});
  }
}

TEST_CASE("swiglu backward matches the reference: variants, strided inputs, one gradient or both") {
  ref::Rng rng(33);
  struct Need {
    bool gate, up;
  };
  for (const char* variant : kVariants) {
    kernels::Use use("swiglu_backward", variant);
    for (DType dt : {DType::f32, DType::f64}) {
      for (const Shape& s : {Shape{1}, Shape{7, 1}, Shape{2, 3, 131}, Shape{13, 67}}) {
        for (Layout l : ref::kAllLayouts) {
          for (Need need : {Need{true, true}, Need{true, false}, Need{false, true}}) {
            INFO(prism::testing::info_text(variant, " ", dtype_name(dt), " ", ref::shape_str(s),
                                           " gate ", ref::layout_name(l), need.gate ? " dgate" : "",
                                           need.up ? " dup" : ""));
            // Leaves of their own, viewed with the layout: the gradient reaches the leaf
            // through the view's backward.
            ref::Input gate = ref::make_input(s, l, dt, rng, -8, 8);
            ref::Input up = ref::make_input(s, other(l), dt, rng, -2, 2);
            ref::Input g = ref::make_input(s, Layout::transposed, dt, rng);
            Tensor gate_leaf = gate.t.detach().contiguous().set_requires_grad(need.gate);
            Tensor up_leaf = up.t.detach().contiguous().set_requires_grad(need.up);
            // The strided views themselves as inputs: the kernel reads gate.t, up.t in place.
            Tensor gate_in = need.gate ? gate_leaf : gate.t;
            Tensor up_in = need.up ? up_leaf : up.t;
            swiglu(gate_in, up_in).backward(g.t);
            const RefGrads d = swiglu_backward_ref(gate.a, up.a, g.a);
            const ref::Tol t = tol(dt);
            if (need.gate) {
              CHECK(ref::mismatch(gate_leaf.grad(), d.dgate, t.rtol, t.atol) == "");
            }
            if (need.up) CHECK(ref::mismatch(up_leaf.grad(), d.dup, t.rtol, t.atol) == "");
          }
        }
      }
    }
  }
}

TEST_CASE("swiglu gradients match finite differences (float64, both variants)") {
  ref::Rng rng(34);
  for (const char* variant : kVariants) {
    kernels::Use fwd("swiglu", variant);
    kernels::Use bwd("swiglu_backward", variant);
    INFO(variant);
    for (const Shape& s : {Shape{3, 7}, Shape{2, 3, 5}, Shape{1, 1}, Shape{4, 1}, Shape{6}}) {
      INFO(ref::shape_str(s));
      Tensor gate = ref::make_input(s, Layout::contiguous, DType::f64, rng, -4, 4).t;
      Tensor up = ref::make_input(s, Layout::contiguous, DType::f64, rng, -2, 2).t;
      gate.set_requires_grad();
      up.set_requires_grad();
      CHECK_GRAD([](const std::vector<Tensor>& in) { return swiglu(in[0], in[1]); }, gate, up);
      // One input a constant: the kernel is asked for one gradient only.
      Tensor up_const = up.detach(), gate_const = gate.detach();
      CHECK_GRAD([up_const](const std::vector<Tensor>& in) { return swiglu(in[0], up_const); },
                 gate);
      CHECK_GRAD([gate_const](const std::vector<Tensor>& in) { return swiglu(gate_const, in[0]); },
                 up);
      // The two halves of one leaf [..., 2C], the way a fused projection is split.
      Shape wide = s;
      wide.back() *= 2;
      Tensor both = ref::make_input(wide, Layout::contiguous, DType::f64, rng, -4, 4).t;
      both.set_requires_grad();
      const int64_t c = s.back();
      CHECK_GRAD(
          [c](const std::vector<Tensor>& in) {
            return swiglu(in[0].slice(-1, 0, c), in[0].slice(-1, c, 2 * c));
          },
          both);
      if (s.size() == 2) {  // transposed views of both inputs
        Tensor gt = ref::make_input({s[1], s[0]}, Layout::contiguous, DType::f64, rng, -4, 4).t;
        Tensor ut = ref::make_input({s[1], s[0]}, Layout::contiguous, DType::f64, rng).t;
        gt.set_requires_grad();
        ut.set_requires_grad();
        CHECK_GRAD([](const std::vector<Tensor>& in) { return swiglu(in[0].t(), in[1].t()); }, gt,
                   ut);
      }
    }
  }
}

TEST_CASE("swiglu backward is one op that gives dgate and dup, and no_grad saves nothing") {
  Tensor gate = randn({6, 10}).set_requires_grad();
  Tensor up = randn({6, 10}).set_requires_grad();
  Tensor loss = sum(swiglu(gate, up) * randn({6, 10}));
  profiler::Session session;
  loss.backward();
  Tensor y_no_grad;
  {
    NoGrad no_grad;
    y_no_grad = swiglu(gate, up);
  }
  const profiler::Profile& p = session.stop();
  int backward_ops = 0;
  std::vector<int64_t> forward_allocs;
  for (const auto& r : p.recording.records) {
    if (r.kind != profiler::Kind::op) continue;
    CHECK(std::string(r.op) != "silu_backward");  // not the composition's ops
    if (std::string(r.op) == "swiglu_backward") {
      ++backward_ops;
      CHECK(std::string(r.grad_of) == "swiglu.dgate,dup");
      CHECK(r.allocs == 2);  // dgate, dup
    }
    if (std::string(r.op) == "swiglu") forward_allocs.push_back(r.allocs);
  }
  CHECK(backward_ops == 1);
  CHECK(forward_allocs == std::vector<int64_t>{1});  // the output only, saves nothing of its own
  CHECK(gate.grad().shape() == Dims{6, 10});
  CHECK(up.grad().shape() == Dims{6, 10});
  CHECK_FALSE(y_no_grad.requires_grad());
}

TEST_CASE("swiglu costs: exact FLOPs and bytes on the meta device") {
  DefaultDevice meta(Device::meta);
  const int64_t n = 4 * 5 * 32;
  struct Expect {
    bool gate, up;  // which inputs need a gradient
    int64_t flops, streams;
  };
  const Expect cases[] = {
      {true, true, 11 * n, 5},  // sigmoid 3, dgate 6, dup 2; gate, up, g read, dgate, dup written
      {true, false, 9 * n, 4},  // sigmoid 3, dgate 6; gate, up, g read, dgate written
      {false, true, 5 * n, 3},  // sigmoid 3, dup 2; gate, g read (not up), dup written
  };
  for (const Expect& e : cases) {
    INFO(prism::testing::info_text("dgate ", e.gate, " dup ", e.up));
    Tensor gate = randn({4, 5, 32}).set_requires_grad(e.gate);
    Tensor up = randn({4, 5, 32}).set_requires_grad(e.up);
    profiler::Session session;
    Tensor y = swiglu(gate, up);
    sum(y).backward();
    const profiler::Profile& p = session.stop();
    CHECK((e.gate ? gate : up).grad().shape() == Dims{4, 5, 32});
    int seen = 0;
    for (const auto& r : p.recording.records) {
      if (r.kind != profiler::Kind::op) continue;
      if (std::string(r.op) == "swiglu") {
        ++seen;
        CHECK(r.cost.flops == 5 * n);  // silu 4 + times up 1
        CHECK(r.cost.macs == 0);
        CHECK(r.cost.bytes == 3 * n * 4);  // gate, up, out
      }
      if (std::string(r.op) == "swiglu_backward") {
        ++seen;
        CHECK(r.cost.flops == e.flops);
        CHECK(r.cost.macs == 0);
        CHECK(r.cost.bytes == e.streams * n * 4);
      }
    }
    CHECK(seen == 2);
  }
  // float64 counts 8 bytes an element.
  Tensor g64 = randn({3, 7}, DType::f64), u64 = randn({3, 7}, DType::f64);
  profiler::Session session;
  swiglu(g64, u64);
  const profiler::Profile& p = session.stop();
  REQUIRE(p.recording.records.size() >= 1);
  for (const auto& r : p.recording.records) {
    if (r.kind == profiler::Kind::op && std::string(r.op) == "swiglu") {
      CHECK(r.cost.flops == 5 * 21);
      CHECK(r.cost.bytes == 3 * 21 * 8);
    }
  }
}

TEST_CASE("swiglu errors name the op and the shapes") {
  CHECK(contains(error_of([] {
                   swiglu(zeros({2, 6}), zeros({2, 5}));
                 }),
                 "swiglu: gate [2,6] and up [2,5] must have the same shape"));
  // No broadcasting, even where NumPy's rules would allow it.
  CHECK(contains(error_of([] {
                   swiglu(zeros({2, 6}), zeros({1, 6}));
                 }),
                 "swiglu: gate [2,6] and up [1,6] must have the same shape"));
  CHECK(contains(error_of([] {
                   swiglu(zeros({2, 6}), zeros({2, 6}, DType::f64));
                 }),
                 "swiglu: dtypes differ: float32 [2,6] and float64 [2,6]"));
  CHECK(contains(error_of([] {
                   swiglu(zeros({2, 6}, DType::i64), zeros({2, 6}));
                 }),
                 "swiglu: needs a float32 or float64 tensor, got int64 [2,6]"));
  CHECK(contains(error_of([] { swiglu(scalar(1.0), scalar(2.0)); }),
                 "swiglu: gate and up must have at least one dim, got gate [] and up []"));
  CHECK(
      contains(error_of([] { swiglu(zeros({2}), Tensor()); }), "swiglu: got an undefined tensor"));
  Tensor on_meta;
  {
    DefaultDevice meta(Device::meta);
    on_meta = zeros({2, 6});
  }
  CHECK(contains(error_of([&] {
                   swiglu(zeros({2, 6}), on_meta);
                 }),
                 "swiglu: tensors are on different devices: cpu and meta"));
}

}  // namespace
}  // namespace prism
