// Front ends of the int8 inference ops: quantize and matmul_int8 (tensor/quantized_ops.h).
//
// They check shapes and dtypes, fill the kernels' argument structs (kernels/args.h), record a
// profile row with the cost formula at the real element sizes (kernels/costs.h: 1 byte per int8
// element), and run the selected variant. No autograd: these ops serve inference only.
#include <cmath>
#include <string>

#include "kernels/costs.h"
#include "kernels/ops/matmul_int8/op.h"
#include "tensor/dispatch.h"
#include "tensor/quantized_ops.h"

namespace prism {

namespace {

detail::OpHandle op_quantize(kernels::ops::quantize_int8);
detail::OpHandle op_matmul_int8(kernels::ops::matmul_int8);

// |acc| <= k 127^2 must fit int32: k < 2^31 / 127^2 = 133,144.
constexpr int64_t kMaxInt8Depth = 133144;

std::string dtype_str(const Tensor& t) {
  return dtype_name(t.dtype());
}

}  // namespace

Tensor quantize(const Tensor& x, float scale) {
  detail::check_defined(kernels::ops::quantize_int8.name, x);
  if (x.dtype() != DType::f32) {
    throw Error("quantize_int8: expects a float32 tensor, got " + dtype_str(x) + " " +
                x.shape().str());
  }
  detail::check_cpu_or_meta(kernels::ops::quantize_int8.name, x);
  if (!(scale > 0) || !std::isfinite(scale)) {
    throw Error("quantize_int8: the scale must be finite and > 0, got " + std::to_string(scale));
  }
  const Tensor xc = x.detach().contiguous();
  const auto& k = op_quantize.kernel(x.device(), DType::f32);
  detail::OpRecordScope rec(op_quantize.name(), k.name.c_str(), x.device(), {&x},
                            [&] { return costs::quantize(x.numel(), 4); });
  Tensor q = detail::empty_like_shape(x.shape(), DType::i8, x.device());
  if (x.numel() > 0) {
    kernels::QuantizeArgs<float> a{};
    a.x = xc.data<float>();
    a.out = q.data<int8_t>();
    a.scale = scale;
    a.numel = x.numel();
    k.get<kernels::QuantizeArgs, float>()(a);
  }
  return q;
}

Tensor matmul_int8(const Tensor& a, float a_scale, const Tensor& w, const Tensor& w_scale,
                   const Tensor& bias) {
  const char* op = kernels::ops::matmul_int8.name;
  detail::check_defined(op, a);
  detail::check_defined(op, w);
  detail::check_defined(op, w_scale);
  // Built only for an error message (a string per call would cost more than a small GEMM).
  auto shapes = [&] {
    return "a " + dtype_str(a) + " " + a.shape().str() + ", w " + dtype_str(w) + " " +
           w.shape().str() + ", w_scale " + dtype_str(w_scale) + " " + w_scale.shape().str();
  };
  if (a.dtype() != DType::i8 || w.dtype() != DType::i8 || w_scale.dtype() != DType::f32) {
    throw Error("matmul_int8: expects int8 a and w and float32 w_scale, got " + shapes());
  }
  if (a.dim() != 2 || w.dim() != 2 || a.size(1) != w.size(1) || w_scale.dim() != 1 ||
      w_scale.size(0) != w.size(0)) {
    throw Error("matmul_int8: expects a [m, k], w [n, k] and w_scale [n], got " + shapes());
  }
  if (bias.defined() &&
      (bias.dtype() != DType::f32 || bias.dim() != 1 || bias.size(0) != w.size(0))) {
    throw Error("matmul_int8: bias must be float32 [" + std::to_string(w.size(0)) + "], got " +
                dtype_str(bias) + " " + bias.shape().str());
  }
  if (a.size(1) == 0 || a.size(1) > kMaxInt8Depth) {
    throw Error("matmul_int8: k = " + std::to_string(a.size(1)) +
                " must be in [1, 133144] (the int32 sum of k products of +-127 must not "
                "overflow), got " +
                shapes());
  }
  if (!(a_scale > 0) || !std::isfinite(a_scale)) {
    throw Error("matmul_int8: a_scale must be finite and > 0, got " + std::to_string(a_scale));
  }
  for (const Tensor* t : {&a, &w, &w_scale, &bias}) {
    if (!t->defined()) continue;
    detail::check_cpu_or_meta(op, *t);
    detail::check_same_device(op, a, *t);
  }
  const Tensor ws = w_scale.detach().contiguous();
  const Tensor b = bias.defined() ? bias.detach().contiguous() : Tensor();
  const int64_t m = a.size(0), n = w.size(0), kk = a.size(1);
  const auto& k = op_matmul_int8.kernel(a.device(), DType::f32);
  detail::OpRecordScope rec(op_matmul_int8.name(), k.name.c_str(), a.device(),
                            {&a, &w, &w_scale, &bias},
                            [&] { return costs::matmul_int8(m, n, kk, bias.defined()); });
  Tensor out = detail::empty_like_shape(Dims{m, n}, DType::f32, a.device());
  if (m > 0 && n > 0) {
    kernels::MatmulInt8Args<float> args{};
    args.a = a.data<int8_t>();
    args.w = w.data<int8_t>();
    args.w_scale = ws.data<float>();
    args.bias = b.defined() ? b.data<float>() : nullptr;
    args.out = out.data<float>();
    args.a_scale = a_scale;
    args.m = m, args.n = n, args.k = kk;
    args.a_rs = a.strides()[0], args.a_cs = a.strides()[1];
    args.w_rs = w.strides()[0], args.w_cs = w.strides()[1];
    k.get<kernels::MatmulInt8Args, float>()(args);
  }
  return out;
}

}  // namespace prism
