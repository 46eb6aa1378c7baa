// swiglu(gate, up) = silu(gate) * up, one op forward and one op backward (tensor/ops.h;
// kernels/args.h has the math).
//
// gate and up [..., C] are each seen as a 2-D strided view [rows, C] (the leading dims merged,
// as norm.cpp does; a copy only when they cannot merge), so the two halves of one
// [..., 2 hidden] projection, taken with slice(-1, ...), reach the kernel with their row stride
// of 2 hidden and no copy. The output is contiguous with gate's shape.
//
// In grad mode the op saves gate and up (not silu(gate): backward recomputes the sigmoid, one
// exp per element, rather than keep a third [rows, C] tensor alive until backward), and its
// backward is one op, swiglu_backward, writing dgate and dup together, recorded under the
// label "swiglu.dgate,dup". The composition it replaces, mul(silu(gate), up), is two ops and
// two [rows, C] buffers forward, and in backward three ops (mul's two gradients and
// silu_backward) with their three buffers.
//
// Variants: "fused" (one pass) and "naive" (silu into the output, then a second pass multiplying
// by up). Each device's default, with its reason, is in the op's definition
// (kernels/ops/swiglu/op.h).
#include <string>
#include <utility>

#include "kernels/costs.h"
#include "kernels/ops/swiglu/op.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/layout.h"
#include "tensor/ops.h"

namespace prism {

namespace {

detail::OpHandle op_swiglu(kernels::ops::swiglu), op_swiglu_bw(kernels::ops::swiglu_backward);

using detail::RowsView;

void check_swiglu(const Tensor& gate, const Tensor& up) {
  detail::check_float(kernels::ops::swiglu.name, gate);
  detail::check_float(kernels::ops::swiglu.name, up);
  if (gate.dim() == 0 || up.dim() == 0) {
    throw Error("swiglu: gate and up must have at least one dim, got gate " + gate.shape().str() +
                " and up " + up.shape().str());
  }
  // No broadcasting: gate and up are two halves of one projection, element for element, and a
  // size-1 dim stretched silently would hide a wrong split.
  if (gate.shape() != up.shape()) {
    throw Error("swiglu: gate " + gate.shape().str() + " and up " + up.shape().str() +
                " must have the same shape");
  }
  detail::check_same_dtype(kernels::ops::swiglu.name, gate, up);
  detail::check_same_device(kernels::ops::swiglu.name, gate, up);
}

template <class T>
void run_forward(const kernels::KernelEntry& k, const RowsView& gate, const RowsView& up,
                 const Tensor& out) {
  kernels::SwiGluArgs<T> a{};
  a.gate = gate.v.data<T>();
  a.up = up.v.data<T>();
  a.out = out.data<T>();
  a.rows = gate.rows;
  a.cols = gate.cols;
  a.gate_rs = gate.row_stride;
  a.gate_cs = gate.col_stride;
  a.up_rs = up.row_stride;
  a.up_cs = up.col_stride;
  k.get<kernels::SwiGluArgs, T>()(a);
}

// What backward needs: the two views (their tensors saved with the autograd node, put back
// here by the backward function) and the shape of the gradients.
struct Saved {
  RowsView gate, up;
  Dims shape;
};

template <class T>
void run_backward(const kernels::KernelEntry& k, const Saved& s, const Tensor& g,
                  const Tensor& dgate, const Tensor& dup) {
  kernels::SwiGluBackwardArgs<T> a{};
  a.gate = s.gate.v.data<T>();
  a.up = s.up.v.data<T>();
  a.g = g.data<T>();
  a.dgate = dgate.defined() ? dgate.data<T>() : nullptr;
  a.dup = dup.defined() ? dup.data<T>() : nullptr;
  a.rows = s.gate.rows;
  a.cols = s.gate.cols;
  a.gate_rs = s.gate.row_stride;
  a.gate_cs = s.gate.col_stride;
  a.up_rs = s.up.row_stride;
  a.up_cs = s.up.col_stride;
  k.get<kernels::SwiGluBackwardArgs, T>()(a);
}

std::pair<Tensor, Tensor> swiglu_backward(const Tensor& g0, const Saved& s, bool need_dgate,
                                          bool need_dup) {
  Tensor g = g0.contiguous();  // row-major: the same element order as the kernel's output
  const DType dt = g.dtype();
  const Device dev = g.device();
  const auto& k = op_swiglu_bw.kernel(dev, dt);
  const Tensor& gate = s.gate.v;
  const Tensor& up = s.up.v;
  detail::OpRecordScope rec(op_swiglu_bw.name(), k.name.c_str(), dev, {&g0, &gate, &up}, [&] {
    return costs::swiglu_backward(g.numel(), need_dgate, need_dup, g.element_size());
  });
  Tensor dgate = need_dgate ? detail::empty_like_shape(s.shape, dt, dev) : Tensor();
  Tensor dup = need_dup ? detail::empty_like_shape(s.shape, dt, dev) : Tensor();
  if (g.numel() > 0) {
    if (dt == DType::f32)
      run_backward<float>(k, s, g, dgate, dup);
    else
      run_backward<double>(k, s, g, dgate, dup);
  }
  return {dgate, dup};
}

}  // namespace

Tensor swiglu(const Tensor& gate, const Tensor& up) {
  check_swiglu(gate, up);
  const RowsView gv = detail::rows_view(gate), uv = detail::rows_view(up);
  const DType dt = gate.dtype();
  const Device dev = gate.device();
  const auto& k = op_swiglu.kernel(dev, dt);
  Tensor out;
  {
    detail::OpRecordScope rec(op_swiglu.name(), k.name.c_str(), dev, {&gate, &up},
                              [&] { return costs::swiglu(gate.numel(), gate.element_size()); });
    out = detail::empty_like_shape(gate.shape(), dt, dev);
    if (gate.numel() > 0) {
      if (dt == DType::f32)
        run_forward<float>(k, gv, uv, out);
      else
        run_forward<double>(k, gv, uv, out);
    }
  }
  if (autograd::should_record({&gate, &up})) {
    // The tensors are saved with the node; the lambda keeps the sizes and strides.
    Saved sizes{gv, uv, gate.shape()};
    sizes.gate.v = Tensor();
    sizes.up.v = Tensor();
    autograd::record(out, op_swiglu.name(), {&gate, &up},
                     {autograd::input(gv.v, 0, "gate"), autograd::input(uv.v, 1, "up")},
                     [sizes = std::move(sizes)](const Tensor& g, autograd::Grads& gr) {
                       Saved s = sizes;
                       s.gate.v = gr.saved(0);
                       s.up.v = gr.saved(1);
                       std::pair<Tensor, Tensor> d;
                       {
                         profiler::GradOfGuard label("swiglu.dgate,dup");
                         d = swiglu_backward(g, s, gr.needs(0), gr.needs(1));
                       }
                       gr.set(0, "swiglu.dgate", [&] { return d.first; });
                       gr.set(1, "swiglu.dup", [&] { return d.second; });
                     });
  }
  return out;
}

}  // namespace prism
