// linear_gelu: y = gelu(x weight^T + bias) as one op, the first half of a transformer's MLP.
//
// x [..., in], weight [out, in] (a Linear layer's weight as stored), bias [out] or undefined
// -> y [..., out]. The leading dims of x are merged into rows (a view when they merge, a
// profiled copy otherwise); the weight is read through its strides.
//
// Memory. The tensor-level chain gelu(add(matmul(x, weight^T), bias)) allocates three
// [rows, out] buffers (the product, the sum, the GELU). This op allocates y alone when no
// gradient is wanted, and y plus the pre-activation z = x w^T + b in grad mode: backward needs
// gelu'(z), and keeping z is cheaper than recomputing the product.
//
// Backward, with g the gradient of y:
//   dz = g * gelu'(z)       the gelu_backward kernel (the one prism::gelu's backward runs)
//   dx = dz weight          [rows, out] x [out, in]
//   dw = dz^T x             [out, in], contiguous like the weight
//   db = sum over rows of dz
// each an ordinary op in the profile, labelled linear_gelu.dz / .dx / .dw / .db.
//
// Cost (docs/COSTS.md): 2 rows out in FLOPs (rows out in MACs) + 9 FLOPs per output element
// (bias add 1, GELU 8; 8 without a bias); bytes = x + weight + bias + y (+ z when kept).
#include <string>

#include "kernels/costs.h"
#include "kernels/ops/elementwise/op.h"
#include "kernels/ops/linear_gelu/op.h"
#include "tensor/autocast.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/layout.h"
#include "tensor/ops.h"

namespace prism {

namespace {

detail::OpHandle op_linear_gelu(kernels::ops::linear_gelu);
detail::OpHandle op_gelu_grad(kernels::ops::gelu_backward);

// The linear layer's operands, and at least one feature in and out.
void check_linear_gelu(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  detail::check_linear_operands(kernels::ops::linear_gelu.name, x, weight, bias);
  if (weight.size(1) == 0 || weight.size(0) == 0) {
    throw Error("linear_gelu: weight " + weight.shape().str() + " has no features");
  }
}

template <class T>
void run_linear_gelu(const kernels::KernelEntry& k, const Tensor& x2, int64_t x_rs, int64_t x_cs,
                     const Tensor& weight, const Tensor& bias, const Tensor& z, const Tensor& y) {
  kernels::LinearGeluArgs<T> a{};
  a.x = x2.data<T>();
  a.weight = weight.data<T>();
  a.bias = bias.defined() ? bias.data<T>() : nullptr;
  a.z = z.defined() ? z.data<T>() : nullptr;
  a.y = y.data<T>();
  a.rows = y.size(0);
  a.out = y.size(1);
  a.in = weight.size(1);
  a.x_rs = x_rs, a.x_cs = x_cs;
  a.w_rs = weight.strides()[0], a.w_cs = weight.strides()[1];
  k.get<kernels::LinearGeluArgs, T>()(a);
}

// dz = g * gelu'(z): the gelu_backward kernel on two contiguous [rows, out] buffers.
template <class T>
void run_gelu_grad(const kernels::KernelEntry& k, const Tensor& z, const Tensor& g,
                   const Tensor& dz) {
  kernels::BinaryArgs<T> a{};
  a.a = z.data<T>();
  a.b = g.data<T>();
  a.out = dz.data<T>();
  a.ndim = 1;
  a.shape[0] = z.numel();
  a.a_stride[0] = 1;
  a.b_stride[0] = 1;
  a.numel = z.numel();
  k.get<kernels::BinaryArgs, T>()(a);
}

Tensor gelu_grad(const Tensor& z, const Tensor& g0) {
  Tensor g = g0.reshape(z.shape()).contiguous();
  const auto& k = op_gelu_grad.kernel(z.device(), z.dtype());
  detail::OpRecordScope rec(op_gelu_grad.name(), k.name.c_str(), z.device(), {&z, &g}, [&] {
    return costs::elementwise(z.shape(), costs::elementwise_steps(kernels::ops::gelu_backward.name),
                              z.nbytes() + g.nbytes(), z.element_size());
  });
  Tensor dz = detail::empty_like_shape(z.shape(), z.dtype(), z.device());
  if (z.numel() > 0) {
    if (z.dtype() == DType::f32)
      run_gelu_grad<float>(k, z, g, dz);
    else
      run_gelu_grad<double>(k, z, g, dz);
  }
  return dz;
}

}  // namespace

Tensor linear_gelu(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  check_linear_gelu(x, weight, bias);
  // Under prism::Autocast(DType::bf16) (tensor/autocast.h): the GEMM in bf16 (matmul's policy
  // path), the bias add and GELU unfused in float32.
  if (detail::autocast_bf16(x, weight)) {
    Tensor z = matmul(x, weight.t());
    return gelu(bias.defined() ? add(z, bias) : z);
  }
  const int64_t in = weight.size(1), out_features = weight.size(0);
  // x as [rows, in]: a strided view when its leading dims merge, else a copy.
  Tensor x2 = x.detach();
  int64_t rows = 1, x_rs = in, cols = in, x_cs = 1;
  if (x.dim() == 1) {
    x_cs = x.strides()[0];
  } else if (!detail::as_2d(x2, x.dim() - 1, rows, x_rs, cols, x_cs)) {
    x2 = x2.contiguous();
    detail::as_2d(x2, x.dim() - 1, rows, x_rs, cols, x_cs);
  }
  if (x.dim() > 1) rows = x.numel() / in;
  const Tensor w = weight.detach();
  const Tensor b = bias.defined() ? bias.detach().contiguous() : Tensor();
  const bool keep_z = autograd::should_record({&x, &weight, &bias});
  Dims y_shape = x.shape();
  y_shape[y_shape.size() - 1] = out_features;

  const auto& k = op_linear_gelu.kernel(x.device(), x.dtype());
  Tensor y, z;
  {
    detail::OpRecordScope rec(op_linear_gelu.name(), k.name.c_str(), x.device(),
                              {&x, &weight, &bias}, [&] {
                                return costs::linear_gelu(rows, in, out_features, bias.defined(),
                                                          keep_z, x.element_size());
                              });
    y = detail::empty_like_shape(Dims{rows, out_features}, x.dtype(), x.device());
    if (keep_z) z = detail::empty_like_shape(Dims{rows, out_features}, x.dtype(), x.device());
    if (rows > 0 && x.device() != Device::meta) {
      if (x.dtype() == DType::f32)
        run_linear_gelu<float>(k, x2, x_rs, x_cs, w, b, z, y);
      else
        run_linear_gelu<double>(k, x2, x_rs, x_cs, w, b, z, y);
    }
  }
  Tensor result = y.reshape(y_shape);
  // dx needs the weight, dw needs x: each kept only if the other's gradient is wanted.
  Tensor saved_x = weight.requires_grad() ? x2.reshape({rows, in}) : Tensor();
  Tensor saved_w = x.requires_grad() ? w : Tensor();
  autograd::record(result, kernels::ops::linear_gelu.name, {&x, &weight, &bias},
                   {autograd::input(saved_x, 0), autograd::input(saved_w, 1),
                    autograd::internal(z, "pre-activation")},
                   [xs = x.shape()](const Tensor& g, autograd::Grads& gr) {
                     Tensor dz;
                     {
                       profiler::GradOfGuard label("linear_gelu.dz");
                       dz = gelu_grad(gr.saved(2), g);
                     }
                     gr.set(0, "linear_gelu.dx",
                            [&] { return matmul(dz, gr.saved(1)).reshape(xs); });
                     gr.set(1, "linear_gelu.dw", [&] { return matmul(dz.t(), gr.saved(0)); });
                     gr.set(2, "linear_gelu.db", [&] { return sum(dz, {0}); });
                   });
  return result;
}

}  // namespace prism
