// layer_norm and rms_norm over the last dim, each one op forward and one op backward
// (tensor/ops.h).
//
// x [..., D] is seen as a 2-D strided view [rows, D] (the leading dims merged; a copy only when
// they cannot merge), so the kernels normalise "each row". The output is contiguous with x's
// shape. In grad mode the kernel also writes each row's mean and rstd = 1 / sqrt(var + eps)
// ([rows] each), saved with x and the weight for backward; without autograd they are neither
// allocated nor written.
//
// Backward is one op, layer_norm_backward, that writes dx, dweight and dbias together
// (kernels/ops/layer_norm/layer_norm.cpp has the math), recorded under the label
// "layer_norm.dx,dw,db". The composed LayerNorm this op replaces in nn/ was eleven ops forward
// (mean, sub, mul, mean, full + add for eps, sqrt, div, mul, add) each with its own [rows, D]
// buffer, and more than twice that backward.
//
// Variants: "one_pass" (fused, Welford) and "two_pass" (naive, mean then variance then output).
// Each device's default, with the measurement that chose it, is in the op's definition
// (kernels/ops/layer_norm/op.h; rms_norm's in kernels/ops/rms_norm/op.h).
//
// rms_norm is the same shape of op without the mean and the bias (kernels/args.h): it saves x,
// the weight and each row's rstd, and its backward writes dx and dweight together.
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "kernels/costs.h"
#include "kernels/ops/layer_norm/op.h"
#include "kernels/ops/rms_norm/op.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/layout.h"
#include "tensor/ops.h"

namespace prism {

namespace {

detail::OpHandle op_layer_norm(kernels::ops::layer_norm),
    op_layer_norm_bw(kernels::ops::layer_norm_backward);
detail::OpHandle op_rms_norm(kernels::ops::rms_norm),
    op_rms_norm_bw(kernels::ops::rms_norm_backward);

using detail::RowsView;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// weight or bias of `op`: undefined, or a float [D] tensor matching x.
void check_affine(const char* op, const char* what, const Tensor& t, const Tensor& x) {
  if (!t.defined()) return;
  detail::check_float(op, t);
  detail::check_same_device(op, x, t);
  const int64_t d = x.size(-1);
  if (t.dim() != 1 || t.size(0) != d) {
    throw Error(std::string(op) + ": " + what + " must be [D] = [" + std::to_string(d) +
                "] for input " + x.shape().str() + ", got " + t.shape().str());
  }
  if (t.dtype() != x.dtype()) {
    throw Error(std::string(op) + ": " + what + " is " + dtype_name(t.dtype()) +
                " but the input is " + dtype_name(x.dtype()));
  }
}

// What layer_norm and rms_norm both ask of x and eps.
void check_rows_input(const char* op, const Tensor& x, double eps) {
  detail::check_float(op, x);
  if (x.dim() == 0) {
    throw Error(std::string(op) + ": input must have at least one dim, got a 0-d tensor");
  }
  if (x.size(-1) == 0) {
    throw Error(std::string(op) + ": the last dim of input " + x.shape().str() +
                " is empty (no elements to normalise over)");
  }
  if (!(std::isfinite(eps) && eps >= 0)) {
    throw Error(std::string(op) + ": eps must be a finite number >= 0, got " + num(eps));
  }
}

void check_layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  check_rows_input(kernels::ops::layer_norm.name, x, eps);
  check_affine(kernels::ops::layer_norm.name, "weight", weight, x);
  check_affine(kernels::ops::layer_norm.name, "bias", bias, x);
}

template <class T>
const T* data_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}
template <class T>
T* mutable_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

template <class T>
void run_forward(const kernels::KernelEntry& k, const RowsView& r, const Tensor& w, const Tensor& b,
                 const Tensor& out, const Tensor& mean, const Tensor& rstd, double eps) {
  kernels::LayerNormArgs<T> a{};
  a.x = r.v.data<T>();
  a.weight = data_or_null<T>(w);
  a.bias = data_or_null<T>(b);
  a.out = out.data<T>();
  a.mean = mutable_or_null<T>(mean);
  a.rstd = mutable_or_null<T>(rstd);
  a.rows = r.rows;
  a.cols = r.cols;
  a.row_stride = r.row_stride;
  a.col_stride = r.col_stride;
  a.eps = eps;
  k.get<kernels::LayerNormArgs, T>()(a);
}

// What backward needs: its tensors are saved with the autograd node (SavedTensor), the rest is
// captured by the backward function, and backward puts the two together again.
struct Saved {
  RowsView x;  // the forward's [rows, cols] view of x
  Tensor weight, mean, rstd;
  Dims x_shape;
};

struct Grads3 {
  Tensor dx, dweight, dbias;
};

template <class T>
void run_backward(const kernels::KernelEntry& k, const Saved& s, const Tensor& g,
                  const Grads3& out) {
  kernels::LayerNormBackwardArgs<T> a{};
  a.x = s.x.v.data<T>();
  a.g = g.data<T>();
  a.weight = data_or_null<T>(s.weight);
  a.mean = s.mean.data<T>();
  a.rstd = s.rstd.data<T>();
  a.dx = mutable_or_null<T>(out.dx);
  a.dweight = mutable_or_null<T>(out.dweight);
  a.dbias = mutable_or_null<T>(out.dbias);
  a.rows = s.x.rows;
  a.cols = s.x.cols;
  a.row_stride = s.x.row_stride;
  a.col_stride = s.x.col_stride;
  k.get<kernels::LayerNormBackwardArgs, T>()(a);
}

Grads3 layer_norm_backward(const Tensor& g0, const Saved& s, bool need_dx, bool need_dw,
                           bool need_db) {
  Tensor g = g0.contiguous();  // row-major: the same row order as the forward's view of x
  const DType dt = g.dtype();
  const Device dev = g.device();
  const auto& k = op_layer_norm_bw.kernel(dev, dt);
  const Tensor& x = s.x.v;
  detail::OpRecordScope rec(op_layer_norm_bw.name(), k.name.c_str(), dev, {&g0, &x}, [&] {
    return costs::layer_norm_backward(s.x.rows, s.x.cols, s.weight.defined(), need_dx, need_dw,
                                      need_db, g.element_size());
  });
  Grads3 out;
  const Dims d{s.x.cols};
  if (need_dx) out.dx = detail::empty_like_shape(s.x_shape, dt, dev);
  if (need_dw) out.dweight = detail::empty_like_shape(d, dt, dev);
  if (need_db) out.dbias = detail::empty_like_shape(d, dt, dev);
  if (dt == DType::f32)
    run_backward<float>(k, s, g, out);
  else
    run_backward<double>(k, s, g, out);
  return out;
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  check_layer_norm(x, weight, bias, eps);
  const RowsView r = detail::rows_view(x);
  const Tensor w = weight.defined() ? weight.detach().contiguous() : Tensor();
  const Tensor b = bias.defined() ? bias.detach().contiguous() : Tensor();
  const bool saves = autograd::should_record({&x, &weight, &bias});
  const DType dt = x.dtype();
  const Device dev = x.device();
  const auto& k = op_layer_norm.kernel(dev, dt);
  Tensor out, mean, rstd;
  {
    detail::OpRecordScope rec(op_layer_norm.name(), k.name.c_str(), dev, {&x, &weight, &bias}, [&] {
      return costs::layer_norm(r.rows, r.cols, w.defined(), b.defined(), saves, x.element_size());
    });
    out = detail::empty_like_shape(x.shape(), dt, dev);
    if (saves) {
      mean = detail::empty_like_shape(Dims{r.rows}, dt, dev);
      rstd = detail::empty_like_shape(Dims{r.rows}, dt, dev);
    }
    if (x.numel() > 0) {
      if (dt == DType::f32)
        run_forward<float>(k, r, w, b, out, mean, rstd, eps);
      else
        run_forward<double>(k, r, w, b, out, mean, rstd, eps);
    }
  }
  if (saves) {
    // The tensors are saved with the node; the lambda keeps the sizes and strides.
    Saved sizes{r, Tensor(), Tensor(), Tensor(), x.shape()};
    sizes.x.v = Tensor();
    autograd::record(out, op_layer_norm.name(), {&x, &weight, &bias},
                     {autograd::input(r.v, 0), autograd::input(w, 1, "weight"),
                      autograd::internal(mean, "mean"), autograd::internal(rstd, "rstd")},
                     [sizes = std::move(sizes)](const Tensor& g, autograd::Grads& gr) {
                       Saved s = sizes;
                       s.x.v = gr.saved(0);
                       s.weight = gr.saved(1);
                       s.mean = gr.saved(2);
                       s.rstd = gr.saved(3);
                       Grads3 d;
                       {
                         profiler::GradOfGuard label("layer_norm.dx,dw,db");
                         d = layer_norm_backward(g, s, gr.needs(0), gr.needs(1), gr.needs(2));
                       }
                       gr.set(0, "layer_norm.dx", [&] { return d.dx; });
                       gr.set(1, "layer_norm.dw", [&] { return d.dweight; });
                       gr.set(2, "layer_norm.db", [&] { return d.dbias; });
                     });
  }
  return out;
}

// ---- rms_norm ------------------------------------------------------------------------------

namespace {

struct RmsSaved {
  RowsView x;
  Tensor weight, rstd;
  Dims x_shape;
};

template <class T>
void run_rms_forward(const kernels::KernelEntry& k, const RowsView& r, const Tensor& w,
                     const Tensor& out, const Tensor& rstd, double eps) {
  kernels::RmsNormArgs<T> a{};
  a.x = r.v.data<T>();
  a.weight = data_or_null<T>(w);
  a.out = out.data<T>();
  a.rstd = mutable_or_null<T>(rstd);
  a.rows = r.rows;
  a.cols = r.cols;
  a.row_stride = r.row_stride;
  a.col_stride = r.col_stride;
  a.eps = eps;
  k.get<kernels::RmsNormArgs, T>()(a);
}

template <class T>
void run_rms_backward(const kernels::KernelEntry& k, const RmsSaved& s, const Tensor& g,
                      const Tensor& dx, const Tensor& dweight) {
  kernels::RmsNormBackwardArgs<T> a{};
  a.x = s.x.v.data<T>();
  a.g = g.data<T>();
  a.weight = data_or_null<T>(s.weight);
  a.rstd = s.rstd.data<T>();
  a.dx = mutable_or_null<T>(dx);
  a.dweight = mutable_or_null<T>(dweight);
  a.rows = s.x.rows;
  a.cols = s.x.cols;
  a.row_stride = s.x.row_stride;
  a.col_stride = s.x.col_stride;
  k.get<kernels::RmsNormBackwardArgs, T>()(a);
}

std::pair<Tensor, Tensor> rms_norm_backward(const Tensor& g0, const RmsSaved& s, bool need_dx,
                                            bool need_dw) {
  Tensor g = g0.contiguous();  // row-major: the same row order as the forward's view of x
  const DType dt = g.dtype();
  const Device dev = g.device();
  const auto& k = op_rms_norm_bw.kernel(dev, dt);
  const Tensor& x = s.x.v;
  detail::OpRecordScope rec(op_rms_norm_bw.name(), k.name.c_str(), dev, {&g0, &x}, [&] {
    return costs::rms_norm_backward(s.x.rows, s.x.cols, s.weight.defined(), need_dx, need_dw,
                                    g.element_size());
  });
  Tensor dx = need_dx ? detail::empty_like_shape(s.x_shape, dt, dev) : Tensor();
  Tensor dw = need_dw ? detail::empty_like_shape(Dims{s.x.cols}, dt, dev) : Tensor();
  if (dt == DType::f32)
    run_rms_backward<float>(k, s, g, dx, dw);
  else
    run_rms_backward<double>(k, s, g, dx, dw);
  return {dx, dw};
}

}  // namespace

Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps) {
  check_rows_input(kernels::ops::rms_norm.name, x, eps);
  check_affine(kernels::ops::rms_norm.name, "weight", weight, x);
  const RowsView r = detail::rows_view(x);
  const Tensor w = weight.defined() ? weight.detach().contiguous() : Tensor();
  const bool saves = autograd::should_record({&x, &weight});
  const DType dt = x.dtype();
  const Device dev = x.device();
  const auto& k = op_rms_norm.kernel(dev, dt);
  Tensor out, rstd;
  {
    detail::OpRecordScope rec(op_rms_norm.name(), k.name.c_str(), dev, {&x, &weight}, [&] {
      return costs::rms_norm(r.rows, r.cols, w.defined(), saves, x.element_size());
    });
    out = detail::empty_like_shape(x.shape(), dt, dev);
    if (saves) rstd = detail::empty_like_shape(Dims{r.rows}, dt, dev);
    if (x.numel() > 0) {
      if (dt == DType::f32)
        run_rms_forward<float>(k, r, w, out, rstd, eps);
      else
        run_rms_forward<double>(k, r, w, out, rstd, eps);
    }
  }
  if (saves) {
    RmsSaved sizes{r, Tensor(), Tensor(), x.shape()};
    sizes.x.v = Tensor();
    autograd::record(out, op_rms_norm.name(), {&x, &weight},
                     {autograd::input(r.v, 0), autograd::input(w, 1, "weight"),
                      autograd::internal(rstd, "rstd")},
                     [sizes = std::move(sizes)](const Tensor& g, autograd::Grads& gr) {
                       RmsSaved s = sizes;
                       s.x.v = gr.saved(0);
                       s.weight = gr.saved(1);
                       s.rstd = gr.saved(2);
                       std::pair<Tensor, Tensor> d;
                       {
                         profiler::GradOfGuard label("rms_norm.dx,dw");
                         d = rms_norm_backward(g, s, gr.needs(0), gr.needs(1));
                       }
                       gr.set(0, "rms_norm.dx", [&] { return d.first; });
                       gr.set(1, "rms_norm.dw", [&] { return d.second; });
                     });
  }
  return out;
}

}  // namespace prism
