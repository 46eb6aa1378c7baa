// Elementwise ops and copies on the GPU against the CPU kernels: every unary and binary op, with
// broadcasting, non-contiguous inputs and odd sizes, forward and (through autograd) the backward
// helpers relu_backward, gelu_backward, tanh_backward, sigmoid_backward and silu_backward.
//
// Tolerance, float32: CUDA's single-precision exp, log, tanh and pow are within 2 ulp of the
// exact value (CUDA C++ Programming Guide, "Mathematical Functions"), glibc's within 1, and
// nvcc may contract a*b + c into one FMA where the CPU rounds twice; a few ulp apart, so 1e-5
// relative. GELU near x = -4 computes 1 + tanh(..) ~ 4e-5, where a 1-ulp difference in tanh
// is a 1e-3 relative difference in a value of ~1e-4: an absolute floor of 1e-6 covers it. A
// wrong index or stride gives differences of order 1, far outside either. float64: 1e-12.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/cuda/cuda_compare.h"
#include "tests/test_util.h"

namespace prism {
namespace {

using cuda_test::base_shape_for;
using cuda_test::gpu;
using cuda_test::kFloatTypes;
using cuda_test::mismatch;
using cuda_test::views_2d;

double rtol_for(DType dt) {
  return dt == DType::f32 ? 1e-5 : 1e-12;
}
double atol_for(DType dt) {
  return dt == DType::f32 ? 1e-6 : 1e-13;
}

const std::vector<Dims> kShapes = {{1, 1}, {1, 7}, {13, 17}, {3, 5, 7}, {2, 1031}, {257, 3}};

struct Unary {
  const char* name;
  Tensor (*fn)(const Tensor&);
  double low, high;  // input range (log and sqrt need positive input)
};

const Unary kUnary[] = {
    {"neg", [](const Tensor& x) { return neg(x); }, -4, 4},
    {"exp", [](const Tensor& x) { return exp(x); }, -4, 4},
    {"log", [](const Tensor& x) { return log(x); }, 0.05, 5},
    {"sqrt", [](const Tensor& x) { return sqrt(x); }, 0.05, 5},
    {"tanh", [](const Tensor& x) { return tanh(x); }, -4, 4},
    {"relu", [](const Tensor& x) { return relu(x); }, -4, 4},
    {"sigmoid", [](const Tensor& x) { return sigmoid(x); }, -12, 12},
    {"gelu", [](const Tensor& x) { return gelu(x); }, -4, 4},
    {"silu", [](const Tensor& x) { return silu(x); }, -12, 12},
};

TEST_CASE("cuda unary ops match the cpu on odd shapes and strided views") {
  manual_seed(11);
  for (const Unary& op : kUnary) {
    for (const std::string& variant : cuda_test::cuda_variants(op.name)) {
      cuda_test::ForceVariant force(op.name, variant);
      for (DType dt : kFloatTypes) {
        for (const Dims& shape : kShapes) {
          for (const auto& view : views_2d()) {
            INFO(prism::testing::info_text(op.name, " [", variant, "] ", dtype_name(dt), " ",
                                           shape.str(), " ", view.name));
            Tensor base = rand(base_shape_for(view.name, shape), dt, op.low, op.high);
            Tensor x = view.apply(base);
            Tensor xg = view.apply(gpu(base));
            REQUIRE(x.shape() == shape);
            Tensor y = op.fn(x);
            Tensor yg = op.fn(xg);
            CHECK(yg.device() == Device::cuda);
            CHECK(mismatch(y, yg, rtol_for(dt), atol_for(dt)) == "");
          }
        }
      }
    }
  }
}

struct Binary {
  const char* name;
  Tensor (*fn)(const Tensor&, const Tensor&);
  bool positive_a;  // pow needs a positive base
};

const Binary kBinary[] = {
    {"add", [](const Tensor& a, const Tensor& b) { return add(a, b); }, false},
    {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); }, false},
    {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }, false},
    {"div", [](const Tensor& a, const Tensor& b) { return div(a, b); }, false},
    {"pow", [](const Tensor& a, const Tensor& b) { return pow(a, b); }, true},
};

// (a's shape, b's shape): same shape, NumPy broadcasting both ways, a scalar, size-1 dims.
const std::vector<std::pair<Dims, Dims>> kPairs = {
    {{13, 17}, {13, 17}}, {{7, 13}, {13}},    {{3, 1, 5}, {4, 1}}, {{1}, {5, 3}},
    {{}, {2, 1031}},      {{257, 1}, {1, 3}}, {{1, 1}, {1, 1}},
};

TEST_CASE("cuda binary ops broadcast like the cpu") {
  manual_seed(12);
  for (const Binary& op : kBinary) {
    for (const std::string& variant : cuda_test::cuda_variants(op.name)) {
      cuda_test::ForceVariant force(op.name, variant);
      for (DType dt : kFloatTypes) {
        for (const auto& pair : kPairs) {
          const Dims& sa = pair.first;
          const Dims& sb = pair.second;
          INFO(prism::testing::info_text(op.name, " [", variant, "] ", dtype_name(dt), " ",
                                         sa.str(), " and ", sb.str()));
          // b keeps away from 0 so div stays well conditioned.
          Tensor a = op.positive_a ? rand(sa, dt, 0.1, 3) : randn(sa, dt);
          Tensor b = rand(sb, dt, 0.5, 2);
          Tensor y = op.fn(a, b);
          CHECK(mismatch(y, op.fn(gpu(a), gpu(b)), rtol_for(dt), atol_for(dt)) == "");
        }
        // A transposed operand against a contiguous one (different strides on each side).
        Tensor a = op.positive_a ? rand({17, 13}, dt, 0.1, 3) : randn({17, 13}, dt);
        Tensor b = rand({13, 17}, dt, 0.5, 2);
        INFO(prism::testing::info_text(op.name, " [", variant, "] ", dtype_name(dt),
                                       " transposed a"));
        CHECK(mismatch(op.fn(a.t(), b), op.fn(gpu(a).t(), gpu(b)), rtol_for(dt), atol_for(dt)) ==
              "");
      }
    }
  }
}

// d/dx sum(w * f(x)) on both devices: runs f's backward helper (relu_backward, gelu_backward,
// tanh_backward, sigmoid_backward, silu_backward) and mul's broadcast backward (sum_to).
TEST_CASE("cuda elementwise backward helpers match the cpu") {
  manual_seed(13);
  const char* helpers[] = {"relu", "gelu", "tanh", "sigmoid", "silu"};
  for (const char* name : helpers) {
    const Unary* op = nullptr;
    for (const Unary& u : kUnary) {
      if (std::string(u.name) == name) op = &u;
    }
    REQUIRE(op != nullptr);
    for (DType dt : kFloatTypes) {
      for (const Dims& shape : kShapes) {
        INFO(prism::testing::info_text(name, " backward ", dtype_name(dt), " ", shape.str()));
        Tensor x = randn(shape, dt, 0, 2);
        Tensor w = randn({shape[shape.size() - 1]}, dt);
        Tensor xc = x.detach().set_requires_grad();
        sum(mul(op->fn(xc), w)).backward();
        Tensor xg = gpu(x).set_requires_grad();
        sum(mul(op->fn(xg), gpu(w))).backward();
        REQUIRE(xg.grad().defined());
        CHECK(xg.grad().device() == Device::cuda);
        CHECK(mismatch(xc.grad(), xg.grad(), rtol_for(dt), atol_for(dt)) == "");
      }
    }
  }
}

TEST_CASE("cuda copy makes strided views contiguous, int64 included") {
  manual_seed(14);
  for (const std::string& variant : cuda_test::cuda_variants("copy")) {
    cuda_test::ForceVariant force("copy", variant);
    for (DType dt : {DType::f32, DType::f64, DType::i64}) {
      for (const Dims& shape : {Dims{1, 1}, Dims{13, 17}, Dims{3, 5, 7}, Dims{1031, 3}}) {
        INFO(prism::testing::info_text("copy [", variant, "] ", dtype_name(dt), " ", shape.str()));
        const int64_t n = shape.numel();
        Tensor base = arange(0.0, static_cast<double>(n), 1.0, dt).reshape(shape);
        Tensor bg = gpu(base);
        // Transposed, sliced with a step, and an expanded (stride 0) view.
        CHECK(cuda_test::differs(base.transpose(0, 1).contiguous(),
                                 bg.transpose(0, 1).contiguous()) == "");
        CHECK(cuda_test::differs(base.slice(0, 0, shape[0], 2).contiguous(),
                                 bg.slice(0, 0, shape[0], 2).contiguous()) == "");
        Dims wide = shape;
        wide[0] = 1;
        Dims big = wide;
        big[0] = 5;
        Tensor one = base.narrow(0, 0, 1);
        CHECK(cuda_test::differs(one.expand(big).contiguous(),
                                 bg.narrow(0, 0, 1).expand(big).contiguous()) == "");
        // concat writes into strided windows of its output.
        CHECK(cuda_test::differs(concat({base, base.narrow(1, 0, 1)}, 1),
                                 concat({bg, bg.narrow(1, 0, 1)}, 1)) == "");
      }
    }
  }
}

}  // namespace
}  // namespace prism
