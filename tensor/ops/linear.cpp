// linear: y = relu?(x) weight^T + bias as one op, a Linear layer with the ReLU before it folded in.
//
// x [..., in], weight [out, in] (as nn::Linear stores it), bias [out] or undefined ->
// y [..., out]. With relu_input the layer reads max(0, x): the ReLU of the layer below,
// applied while the GEMM packs x, so its output is never materialised. The leading dims of x
// merge into rows (a view when they merge, a profiled copy otherwise).
//
// The three products, each one call of the linear kernel (kernels/args.h, LinearArgs) with its
// prologue and epilogue:
//   forward  y  = relu(x) W^T + b        ReLU on x as packed, bias on each finished block
//   dx       dx = (g W) * [x > 0]        the ReLU's gradient on each finished block of dx
//   dW       dW = g^T relu(x)            ReLU on x as packed
// and db = sum over rows of g, computed inside dW's call (the row sums of its A = g^T). In the
// profile they are rows `linear`, `linear (linear.dx)` and `linear (linear.dw)`; db is a
// `sum (linear.db)` row only when the weight needs no gradient.
//
// What it saves (docs/PERFORMANCE.md, "Threads"): the relu, add, relu_backward and sum ops of an
// MLP layer, i.e. two passes over [rows, out] forward and two backward, and the relu output
// buffer. They matter at two threads, where each was a serial op reading what both cores had
// written: in the MLP's step at batch 64 they took 30.5 us at 2 threads against 22.7 at 1, and
// with them gone the 2-thread step is 0.54 of the 1-thread one (1.85x) instead of 0.56.
//
// Where the fused kernel cannot run, the op is the ops it stands for, each its own row: on the
// GPU, under bf16 autocast, and when the matmul op runs another variant than `optimized` (the
// fused kernel is that matmul with a prologue and epilogue; `--kernel matmul=naive` must still
// put the naive matmul into every Linear layer of the MLP).
#include <string>

#include "kernels/costs.h"
#include "kernels/ops/linear/op.h"
#include "kernels/ops/matmul/op.h"
#include "tensor/autocast.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/layout.h"
#include "tensor/ops.h"

namespace prism {

namespace {

detail::OpHandle op_linear(kernels::ops::linear);
detail::OpHandle op_matmul(kernels::ops::matmul);

// A 2-D operand as the kernel reads it: data and strides.
struct Operand {
  Tensor t;
  int64_t rs, cs;
};

// One call of the linear kernel, C [m, n] = relu?(a) relu?(b) (+ bias) (* relu'(mask)), as one
// record of op `linear` (its gradient label, if any, comes from the caller's GradOfGuard).
// With row_sums, also a's row sums, into a new [m] tensor there.
Tensor run_linear(const Operand& a, const Operand& b, int64_t m, int64_t n, int64_t k, bool relu_a,
                  bool relu_b, const Tensor& bias, const Operand* mask,
                  std::initializer_list<const Tensor*> inputs, Tensor* row_sums = nullptr) {
  const Device dev = a.t.device();
  const DType dt = a.t.dtype();
  const auto& kern = op_linear.kernel(dev, dt);
  detail::OpRecordScope rec(op_linear.name(), kern.name.c_str(), dev, inputs, [&] {
    const int64_t relu_elems = (relu_a ? m * k : 0) + (relu_b ? k * n : 0);
    return costs::linear(m, n, k, relu_elems, bias.defined(), mask != nullptr, row_sums != nullptr,
                         a.t.element_size());
  });
  Tensor c = detail::empty_like_shape(Dims{m, n}, dt, dev);
  if (row_sums) *row_sums = detail::empty_like_shape(Dims{m}, dt, dev);
  if (m == 0) return c;
  Tensor workspace;
  const int64_t scratch = kernels::linear_workspace(m, n, k, relu_a, relu_b);
  if (op_linear.planned(kern, dt).tag == kernels::VariantTag::naive && scratch > 0) {
    AllocRole role(MemRole::temporary);
    workspace = detail::empty_like_shape(Dims{scratch}, dt, dev);
  }
  if (kern.meta) return c;
  auto call = [&](auto zero) {
    using T = decltype(zero);
    kernels::LinearArgs<T> args{};
    args.a = a.t.data<T>(), args.b = b.t.data<T>(), args.c = c.data<T>();
    args.m = m, args.n = n, args.k = k;
    args.a_rs = a.rs, args.a_cs = a.cs, args.b_rs = b.rs, args.b_cs = b.cs;
    args.relu_a = relu_a, args.relu_b = relu_b;
    args.bias = bias.defined() ? bias.data<T>() : nullptr;
    if (mask) {
      args.mask = mask->t.data<T>();
      args.mask_rs = mask->rs, args.mask_cs = mask->cs;
    }
    args.row_sums = row_sums ? row_sums->data<T>() : nullptr;
    args.workspace = workspace.defined() ? workspace.data<T>() : nullptr;
    args.workspace_size = workspace.defined() ? workspace.numel() : 0;
    kern.get<kernels::LinearArgs, T>()(args);
  };
  if (dt == DType::f32)
    call(0.0f);
  else
    call(0.0);
  return c;
}

// The ops the fused kernel stands for, each with its own row (and, for relu, its own buffer).
Tensor composed_linear(const Tensor& x, const Tensor& weight, const Tensor& bias, bool relu_input) {
  Tensor y = matmul(relu_input ? relu(x) : x, weight.t());
  return bias.defined() ? add(y, bias) : y;
}

bool fused_kernel_runs(const Tensor& x, const Tensor& weight) {
  if (x.device() != Device::cpu && x.device() != Device::meta) return false;
  if (detail::autocast_bf16(x, weight)) return false;
  return op_matmul.kernel(Device::cpu, x.dtype()).name == "optimized";
}

// What backward needs besides the saved x (as [rows, in], strided) and weight.
struct Geometry {
  Dims x_shape;
  int64_t rows, in, out, x_rs, x_cs;
  bool relu_input;
};

// dx = (g W) * [x > 0], dW = g^T relu(x) and db = the column sums of g, each where needed.
void linear_backward(const Geometry& geo, const Tensor& g0, autograd::Grads& gr) {
  const Tensor g = g0.reshape({geo.rows, geo.out}).contiguous();
  const Tensor& x = gr.saved(0);
  const Tensor& w = gr.saved(1);
  const Operand xo{x, geo.x_rs, geo.x_cs};
  gr.set(0, "linear.dx", [&] {
    const Operand go{g, geo.out, 1};
    const Operand wo{w, w.strides()[0], w.strides()[1]};
    return run_linear(go, wo, geo.rows, geo.in, geo.out, false, false, Tensor(),
                      geo.relu_input ? &xo : nullptr, {&g, &w, &x})
        .reshape(geo.x_shape);
  });
  // db in the same call as dW: the row sums of g^T, each thread summing the columns of g that
  // its block of dW packs, so the bias gradient takes no pass of its own over g on one core
  // (at two threads g was written by both).
  Tensor db;
  gr.set(1, "linear.dw", [&] {
    const Operand gt{g, 1, geo.out};  // g^T [out, rows]
    return run_linear(gt, xo, geo.out, geo.in, geo.rows, false, geo.relu_input, Tensor(), nullptr,
                      {&g, &x}, gr.needs(2) ? &db : nullptr);
  });
  gr.set(2, "linear.db", [&] { return db.defined() ? db : sum(g, {0}); });
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, bool relu_input) {
  detail::check_linear_operands(kernels::ops::linear.name, x, weight, bias);
  if (!fused_kernel_runs(x, weight)) return composed_linear(x, weight, bias, relu_input);
  const int64_t in = weight.size(1), out = weight.size(0);
  // x as [rows, in]: a strided view when its leading dims merge, else a copy.
  Tensor x2 = x.detach();
  int64_t rows = 1, x_rs = in, cols = in, x_cs = 1;
  for (int d = 0; d + 1 < x.dim(); ++d) rows *= x.size(d);
  if (x.dim() == 1) {
    x_cs = x.strides()[0];
  } else if (x.numel() == 0 || !detail::as_2d(x2, x.dim() - 1, rows, x_rs, cols, x_cs)) {
    x2 = x2.contiguous();
    x_rs = in, x_cs = 1;
  }
  const Tensor w = weight.detach();
  const Tensor b = bias.defined() ? bias.detach().contiguous() : Tensor();
  const Operand xo{x2, x_rs, x_cs};
  // W^T [in, out]: W's strides exchanged.
  const Operand wt{w, w.strides()[1], w.strides()[0]};
  Tensor y = run_linear(xo, wt, rows, out, in, relu_input, false, b, nullptr, {&x, &weight, &bias});
  Dims y_shape = x.shape();
  y_shape[y_shape.size() - 1] = out;
  Tensor result = y.reshape(y_shape);
  // dW reads x, and so does dx when it applies the ReLU's mask; dx reads the weight.
  const bool keep_x = weight.requires_grad() || (relu_input && x.requires_grad());
  Tensor saved_x = keep_x ? x2 : Tensor();
  Tensor saved_w = x.requires_grad() ? w : Tensor();
  autograd::record(result, kernels::ops::linear.name, {&x, &weight, &bias},
                   {autograd::input(saved_x, 0), autograd::input(saved_w, 1)},
                   [geo = Geometry{x.shape(), rows, in, out, x_rs, x_cs, relu_input}](
                       const Tensor& g, autograd::Grads& gr) { linear_backward(geo, g, gr); });
  return result;
}

}  // namespace prism
