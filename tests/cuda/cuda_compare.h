// Helpers for the CUDA suites that check a GPU kernel against the CPU kernel on the same input.
//
// The pattern: build an input on the CPU, copy it to the GPU, apply the same view on both sides
// (a transpose, a strided slice, an expand), run the op on each, and compare the GPU result,
// copied back, with the CPU's. Every CUDA variant of an op is forced in turn, so a variant added
// later is checked too.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "tensor/ops.h"

namespace prism::cuda_test {

// The names of every CUDA variant of `op`.
inline std::vector<std::string> cuda_variants(const char* op) {
  std::vector<std::string> names;
  for (const auto& e : kernels::registry().at(op, Device::cuda).entries()) names.push_back(e.name);
  return names;
}

// Forces CUDA variant `name` of `op` for the life of the object (a process-wide choice, cleared
// on exit). set_variant, like kernels::Use, applies on every device that has the variant, so a
// GPU-only variant (matmul's "tiled", max's "optimized") leaves the CPU side on its default.
class ForceVariant {
 public:
  ForceVariant(const char* op, const std::string& name) : op_(op) {
    kernels::set_variant(op, name);
  }
  ~ForceVariant() { kernels::set_variant(op_, ""); }
  ForceVariant(const ForceVariant&) = delete;
  ForceVariant& operator=(const ForceVariant&) = delete;

 private:
  const char* op_;
};

// Calls fn(variant) once per CUDA variant of op, with that variant forced.
template <class F>
void for_each_cuda_variant(const char* op, F&& fn) {
  for (const std::string& name : cuda_variants(op)) {
    ForceVariant force(op, name);
    fn(name);
  }
}

inline Tensor gpu(const Tensor& t) {
  return t.to(Device::cuda);
}

inline std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// "" when `got` (any device) matches `expect` (cpu) elementwise within atol + rtol |expect|
// (NaN matches NaN, an infinity itself); otherwise what differs first, for the failure message.
inline std::string mismatch(const Tensor& expect, const Tensor& got, double rtol, double atol) {
  if (!(expect.shape() == got.shape())) {
    return "shape " + got.shape().str() + ", expected " + expect.shape().str();
  }
  if (expect.dtype() != got.dtype()) {
    return std::string("dtype ") + dtype_name(got.dtype()) + ", expected " +
           dtype_name(expect.dtype());
  }
  const std::vector<double> e = expect.to_vector<double>();
  const std::vector<double> g = got.to_vector<double>();
  for (size_t i = 0; i < e.size(); ++i) {
    if (std::isnan(e[i]) && std::isnan(g[i])) continue;
    if (e[i] == g[i]) continue;
    if (!(std::fabs(e[i] - g[i]) <= atol + rtol * std::fabs(e[i]))) {
      return "element " + std::to_string(i) + ": got " + num(g[i]) + ", expected " + num(e[i]) +
             " (rtol " + num(rtol) + ", atol " + num(atol) + ")";
    }
  }
  return "";
}

// Bit-for-bit equality (values through double, which holds every float32 and float64 exactly).
inline std::string differs(const Tensor& expect, const Tensor& got) {
  return mismatch(expect, got, 0, 0);
}

// A view applied the same way to a tensor on either device.
struct View {
  const char* name;
  std::function<Tensor(const Tensor&)> apply;
};

// Views of a base tensor of shape [a, b, ...] (at least 2-d) with the result's shape noted:
// contiguous, the last two dims swapped (transposed: no dim of stride 1 in the last place), and
// every other element of dim 0 (a strided slice, rows not adjacent in memory).
inline std::vector<View> views_2d() {
  return {
      {"contiguous", [](const Tensor& t) { return t; }},
      {"transposed", [](const Tensor& t) { return t.transpose(-2, -1); }},
      {"every other row", [](const Tensor& t) { return t.slice(0, 0, t.size(0), 2); }},
  };
}

// The shape a base must have so that `view` gives `shape`.
inline Dims base_shape_for(const std::string& view, Dims shape) {
  if (view == "transposed" && shape.size() >= 2) {
    std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
  } else if (view == "every other row" && shape.size() >= 1) {
    shape[0] = 2 * shape[0] - 1;
  }
  return shape;
}

constexpr DType kFloatTypes[] = {DType::f32, DType::f64};

}  // namespace prism::cuda_test
