// Elementwise ops: unary (exp, relu, ...) and binary with NumPy broadcasting (add, mul, ...).
//
// Cost (docs/COSTS.md): FLOPs = steps per element x output elements; bytes = each input's own
// elements once + the output. Gradients of a broadcast input are summed back to its shape
// (sum_to), which the profile shows as a "sum" row in the backward phase.
#include "kernels/costs.h"
#include "kernels/ops/elementwise/op.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/layout.h"
#include "tensor/ops.h"

namespace prism {

namespace {

using detail::OpHandle;

template <class T>
void run_unary(const kernels::KernelEntry& k, const Tensor& x, const Tensor& out) {
  kernels::UnaryArgs<T> a{};
  a.x = x.data<T>();
  a.out = out.data<T>();
  a.layout = detail::make_layout(x.shape(), x.strides());
  a.numel = x.numel();
  k.get<kernels::UnaryArgs, T>()(a);
}

Tensor unary_forward(OpHandle& op, const Tensor& x) {
  detail::check_float(op.name(), x);
  const auto& k = op.kernel(x.device(), x.dtype());
  detail::OpRecordScope rec(op.name(), k.name.c_str(), x.device(), {&x}, [&] {
    return costs::elementwise(x.shape(), costs::elementwise_steps(op.name()), x.nbytes(),
                              x.element_size());
  });
  Tensor out = detail::empty_like_shape(x.shape(), x.dtype(), x.device());
  if (x.dtype() == DType::f32)
    run_unary<float>(k, x, out);
  else
    run_unary<double>(k, x, out);
  return out;
}

template <class T>
void run_binary(const kernels::KernelEntry& k, const Tensor& a, const Tensor& b,
                const Tensor& out) {
  kernels::BinaryArgs<T> args{};
  args.a = a.data<T>();
  args.b = b.data<T>();
  args.out = out.data<T>();
  args.ndim = detail::merge_dims2(out.shape(), detail::broadcast_strides(a, out.shape()),
                                  detail::broadcast_strides(b, out.shape()), args.shape,
                                  args.a_stride, args.b_stride);
  args.numel = out.numel();
  k.get<kernels::BinaryArgs, T>()(args);
}

Tensor binary_forward(OpHandle& op, const Tensor& a, const Tensor& b) {
  detail::check_float(op.name(), a);
  detail::check_float(op.name(), b);
  detail::check_same_dtype(op.name(), a, b);
  detail::check_same_device(op.name(), a, b);
  Dims shape = detail::broadcast_shapes(op.name(), a.shape(), b.shape());
  const auto& k = op.kernel(a.device(), a.dtype());
  detail::OpRecordScope rec(op.name(), k.name.c_str(), a.device(), {&a, &b}, [&] {
    return costs::elementwise(shape, costs::elementwise_steps(op.name()), a.nbytes() + b.nbytes(),
                              a.element_size());
  });
  Tensor out = detail::empty_like_shape(shape, a.dtype(), a.device());
  if (a.dtype() == DType::f32)
    run_binary<float>(k, a, b, out);
  else
    run_binary<double>(k, a, b, out);
  return out;
}

OpHandle op_add(kernels::ops::add), op_sub(kernels::ops::sub), op_mul(kernels::ops::mul),
    op_div(kernels::ops::div), op_pow(kernels::ops::pow);
OpHandle op_neg(kernels::ops::neg), op_exp(kernels::ops::exp), op_log(kernels::ops::log),
    op_sqrt(kernels::ops::sqrt), op_relu(kernels::ops::relu);
OpHandle op_gelu(kernels::ops::gelu), op_tanh(kernels::ops::tanh),
    op_sigmoid(kernels::ops::sigmoid), op_silu(kernels::ops::silu);
OpHandle op_relu_bw(kernels::ops::relu_backward), op_gelu_bw(kernels::ops::gelu_backward),
    op_silu_bw(kernels::ops::silu_backward);
OpHandle op_tanh_bw(kernels::ops::tanh_backward), op_sigmoid_bw(kernels::ops::sigmoid_backward);

// A 0-d tensor holding v, with t's dtype and device, for tensor-scalar arithmetic.
Tensor like(double v, const Tensor& t) {
  DefaultDevice on(t.device());
  return scalar(v, t.dtype());
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(op_add, a, b);
  autograd::record(out, kernels::ops::add.name, {&a, &b},
                   [sa = a.shape(), sb = b.shape()](const Tensor& g, autograd::Grads& gr) {
                     gr.set(0, "add.da", [&] { return sum_to(g, sa); });
                     gr.set(1, "add.db", [&] { return sum_to(g, sb); });
                   });
  return out;
}

void add_into(const Tensor& dst, const Tensor& src) {
  detail::check_defined("add_into", dst);
  detail::check_defined("add_into", src);
  detail::check_float("add_into", dst);
  detail::check_same_dtype("add_into", dst, src);
  detail::check_same_device("add_into", dst, src);
  if (!(dst.shape() == src.shape())) {
    throw Error("add_into: cannot add " + src.shape().str() + " into " + dst.shape().str() +
                " (the shapes must be equal)");
  }
  if (!dst.is_contiguous()) {
    throw Error("add_into: dst " + dst.shape().str() +
                " must be contiguous (it is written in place)");
  }
  if (grad_enabled() && src.requires_grad()) {
    throw Error("add_into: src " + src.shape().str() +
                " requires grad, but an in-place add records no gradient; use NoGrad");
  }
  const auto& k = op_add.kernel(dst.device(), dst.dtype());
  // add's bytes: dst and src read once, dst written once (3 n elements for contiguous ones).
  detail::OpRecordScope rec("add_into", k.name.c_str(), dst.device(), {&dst, &src}, [&] {
    return costs::elementwise(dst.shape(), costs::elementwise_steps(kernels::ops::add.name),
                              dst.nbytes() + src.nbytes(), dst.element_size());
  });
  // The kernel reads a[i] and b[i] before it writes out[i], so out may be a itself.
  if (dst.dtype() == DType::f32)
    run_binary<float>(k, dst, src, dst);
  else
    run_binary<double>(k, dst, src, dst);
}

Tensor sub(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(op_sub, a, b);
  autograd::record(out, kernels::ops::sub.name, {&a, &b},
                   [sa = a.shape(), sb = b.shape()](const Tensor& g, autograd::Grads& gr) {
                     gr.set(0, "sub.da", [&] { return sum_to(g, sa); });
                     gr.set(1, "sub.db", [&] { return sum_to(neg(g), sb); });
                   });
  return out;
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(op_mul, a, b);
  autograd::record(out, kernels::ops::mul.name, {&a, &b},
                   {autograd::input(a, 0), autograd::input(b, 1)},
                   [](const Tensor& g, autograd::Grads& gr) {
                     const Tensor& sa = gr.saved(0);
                     const Tensor& sb = gr.saved(1);
                     gr.set(0, "mul.da", [&] { return sum_to(mul(g, sb), sa.shape()); });
                     gr.set(1, "mul.db", [&] { return sum_to(mul(g, sa), sb.shape()); });
                   });
  return out;
}

// d(a/b)/da = 1/b;  d(a/b)/db = -a/b^2 = -(a/b)/b
Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(op_div, a, b);
  autograd::record(
      out, kernels::ops::div.name, {&a, &b}, {autograd::input(b, 1), autograd::output(out)},
      [a_shape = a.shape()](const Tensor& g, autograd::Grads& gr) {
        const Tensor& sb = gr.saved(0);
        const Tensor& y = gr.saved(1);
        gr.set(0, "div.da", [&] { return sum_to(div(g, sb), a_shape); });
        gr.set(1, "div.db", [&] { return sum_to(neg(mul(g, div(y, sb))), sb.shape()); });
      });
  return out;
}

// d(a^b)/da = b a^(b-1);  d(a^b)/db = a^b ln a
Tensor pow(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(op_pow, a, b);
  autograd::record(
      out, kernels::ops::pow.name, {&a, &b},
      {autograd::input(a, 0), autograd::input(b, 1), autograd::output(out)},
      [](const Tensor& g, autograd::Grads& gr) {
        const Tensor& sa = gr.saved(0);
        const Tensor& sb = gr.saved(1);
        const Tensor& y = gr.saved(2);
        gr.set(0, "pow.da",
               [&] { return sum_to(mul(g, mul(sb, pow(sa, sub(sb, like(1, sb))))), sa.shape()); });
        gr.set(1, "pow.db", [&] { return sum_to(mul(g, mul(y, log(sa))), sb.shape()); });
      });
  return out;
}

Tensor pow(const Tensor& a, double exponent) {
  return pow(a, like(exponent, a));
}

Tensor neg(const Tensor& x) {
  Tensor out = unary_forward(op_neg, x);
  autograd::record(out, kernels::ops::neg.name, {&x}, [](const Tensor& g, autograd::Grads& gr) {
    gr.set(0, "neg.dx", [&] { return neg(g); });
  });
  return out;
}

// d e^x = e^x: the saved output is the gradient's factor.
Tensor exp(const Tensor& x) {
  Tensor out = unary_forward(op_exp, x);
  autograd::record(out, kernels::ops::exp.name, {&x}, {autograd::output(out)},
                   [](const Tensor& g, autograd::Grads& gr) {
                     gr.set(0, "exp.dx", [&] { return mul(g, gr.saved(0)); });
                   });
  return out;
}

Tensor log(const Tensor& x) {
  Tensor out = unary_forward(op_log, x);
  autograd::record(out, kernels::ops::log.name, {&x}, {autograd::input(x, 0)},
                   [](const Tensor& g, autograd::Grads& gr) {
                     gr.set(0, "log.dx", [&] { return div(g, gr.saved(0)); });
                   });
  return out;
}

// d sqrt(x) = 1 / (2 sqrt(x))
Tensor sqrt(const Tensor& x) {
  Tensor out = unary_forward(op_sqrt, x);
  autograd::record(out, kernels::ops::sqrt.name, {&x}, {autograd::output(out)},
                   [](const Tensor& g, autograd::Grads& gr) {
                     const Tensor& y = gr.saved(0);
                     gr.set(0, "sqrt.dx", [&] { return div(g, mul(y, like(2, y))); });
                   });
  return out;
}

Tensor relu(const Tensor& x) {
  Tensor out = unary_forward(op_relu, x);
  autograd::record(out, kernels::ops::relu.name, {&x}, {autograd::input(x, 0)},
                   [](const Tensor& g, autograd::Grads& gr) {
                     gr.set(0, "relu.dx",
                            [&] { return binary_forward(op_relu_bw, gr.saved(0), g); });
                   });
  return out;
}

Tensor gelu(const Tensor& x) {
  Tensor out = unary_forward(op_gelu, x);
  autograd::record(out, kernels::ops::gelu.name, {&x}, {autograd::input(x, 0)},
                   [](const Tensor& g, autograd::Grads& gr) {
                     gr.set(0, "gelu.dx",
                            [&] { return binary_forward(op_gelu_bw, gr.saved(0), g); });
                   });
  return out;
}

Tensor tanh(const Tensor& x) {
  Tensor out = unary_forward(op_tanh, x);
  autograd::record(out, kernels::ops::tanh.name, {&x}, {autograd::output(out)},
                   [](const Tensor& g, autograd::Grads& gr) {
                     gr.set(0, "tanh.dx",
                            [&] { return binary_forward(op_tanh_bw, gr.saved(0), g); });
                   });
  return out;
}

Tensor sigmoid(const Tensor& x) {
  Tensor out = unary_forward(op_sigmoid, x);
  autograd::record(out, kernels::ops::sigmoid.name, {&x}, {autograd::output(out)},
                   [](const Tensor& g, autograd::Grads& gr) {
                     gr.set(0, "sigmoid.dx",
                            [&] { return binary_forward(op_sigmoid_bw, gr.saved(0), g); });
                   });
  return out;
}

// silu'(x) = s (1 + x (1 - s)), s = sigmoid(x): one op, silu_backward(x, g), which recomputes s
// from the saved input (as gelu_backward does) instead of saving a second tensor.
Tensor silu(const Tensor& x) {
  Tensor out = unary_forward(op_silu, x);
  autograd::record(out, kernels::ops::silu.name, {&x}, {autograd::input(x, 0)},
                   [](const Tensor& g, autograd::Grads& gr) {
                     gr.set(0, "silu.dx",
                            [&] { return binary_forward(op_silu_bw, gr.saved(0), g); });
                   });
  return out;
}

Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
Tensor operator-(const Tensor& x) {
  return neg(x);
}
Tensor operator+(const Tensor& a, double b) {
  return add(a, like(b, a));
}
Tensor operator-(const Tensor& a, double b) {
  return sub(a, like(b, a));
}
Tensor operator*(const Tensor& a, double b) {
  return mul(a, like(b, a));
}
Tensor operator/(const Tensor& a, double b) {
  return div(a, like(b, a));
}
Tensor operator+(double a, const Tensor& b) {
  return add(like(a, b), b);
}
Tensor operator-(double a, const Tensor& b) {
  return sub(like(a, b), b);
}
Tensor operator*(double a, const Tensor& b) {
  return mul(like(a, b), b);
}
Tensor operator/(double a, const Tensor& b) {
  return div(like(a, b), b);
}

}  // namespace prism
