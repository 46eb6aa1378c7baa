// softmax and log_softmax over one dim.
//
// The dim is moved last (a free permute) and the rest merged into rows, so the kernels see a
// 2-D strided [rows, cols] view; the output is made contiguous in that order and permuted
// back. Backward uses the saved output y (kernels/ops/softmax/naive.cpp has the math).
#include <string>

#include "kernels/costs.h"
#include "kernels/ops/softmax/op.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/layout.h"
#include "tensor/ops.h"

namespace prism {

namespace {

detail::OpHandle op_softmax(kernels::ops::softmax), op_log_softmax(kernels::ops::log_softmax);
detail::OpHandle op_softmax_bw(kernels::ops::softmax_backward),
    op_log_softmax_bw(kernels::ops::log_softmax_backward);

// x with `dim` moved last, as [rows, cols] (detail::rows_view), and the permutation that moved it.
struct PermutedRows {
  detail::RowsView rows;
  Dims order;    // the permutation applied
  Dims inverse;  // its inverse
};

PermutedRows to_rows(const char* op, const Tensor& x, int dim) {
  PermutedRows r;
  const int nd = x.dim();
  if (nd == 0) {
    r.rows = detail::rows_view(x.detach().reshape({1}));
    r.order = Dims{0};
    r.inverse = Dims{0};
    return r;
  }
  const int d = detail::wrap_dim(op, dim, nd);
  for (int i = 0; i < nd; ++i) {
    if (i != d) r.order.push_back(i);
  }
  r.order.push_back(d);
  r.inverse = r.order;
  for (int i = 0; i < nd; ++i) r.inverse[static_cast<int>(r.order[i])] = i;
  r.rows = detail::rows_view(x.detach().permute(r.order));
  return r;
}

template <class T>
void run_softmax(const kernels::KernelEntry& k, const detail::RowsView& r, const Tensor& out) {
  kernels::SoftmaxArgs<T> a{};
  a.x = r.v.data<T>();
  a.out = out.data<T>();
  a.rows = r.rows;
  a.cols = r.cols;
  a.row_stride = r.row_stride;
  a.col_stride = r.col_stride;
  k.get<kernels::SoftmaxArgs, T>()(a);
}

template <class T>
void run_softmax_bw(const kernels::KernelEntry& k, const Tensor& y, const Tensor& g,
                    const Tensor& dx, int64_t rows, int64_t cols) {
  kernels::SoftmaxBackwardArgs<T> a{};
  a.y = y.data<T>();
  a.g = g.data<T>();
  a.dx = dx.data<T>();
  a.rows = rows;
  a.cols = cols;
  k.get<kernels::SoftmaxBackwardArgs, T>()(a);
}

// y_rows is the forward output in row order (contiguous [.., cols]); g is in x's order.
Tensor softmax_backward(detail::OpHandle& op, const Tensor& y_rows, const Tensor& g,
                        const Dims& order, const Dims& inverse, int64_t rows, int64_t cols) {
  Tensor gr = (g.dim() == 0 ? g.reshape({1}) : g.permute(order)).contiguous();
  const auto& k = op.kernel(g.device(), g.dtype());
  detail::OpRecordScope rec(op.name(), k.name.c_str(), g.device(), {&y_rows, &g},
                            [&] { return costs::softmax_backward(g.numel(), g.element_size()); });
  Tensor dx = detail::empty_like_shape(y_rows.shape(), g.dtype(), g.device());
  if (g.dtype() == DType::f32)
    run_softmax_bw<float>(k, y_rows, gr, dx, rows, cols);
  else
    run_softmax_bw<double>(k, y_rows, gr, dx, rows, cols);
  return g.dim() == 0 ? dx.reshape(g.shape()) : dx.permute(inverse);
}

Tensor softmax_impl(detail::OpHandle& op, detail::OpHandle& bw, const char* grad_label,
                    const Tensor& x, int dim) {
  detail::check_float(op.name(), x);
  const PermutedRows p = to_rows(op.name(), x, dim);
  const detail::RowsView& r = p.rows;
  const auto& k = op.kernel(x.device(), x.dtype());
  Tensor y_rows;
  {
    detail::OpRecordScope rec(op.name(), k.name.c_str(), x.device(), {&x},
                              [&] { return costs::softmax(x.numel(), x.element_size()); });
    Dims row_shape = r.v.shape();
    y_rows = detail::empty_like_shape(row_shape, x.dtype(), x.device());
    if (x.numel() > 0) {
      if (x.dtype() == DType::f32)
        run_softmax<float>(k, r, y_rows);
      else
        run_softmax<double>(k, r, y_rows);
    }
  }
  Tensor out = x.dim() == 0 ? y_rows.reshape(x.shape()) : y_rows.permute(p.inverse);
  autograd::record(out, op.name(), {&x}, {autograd::output(y_rows)},
                   [&bw, grad_label, order = p.order, inverse = p.inverse, rows = r.rows,
                    cols = r.cols](const Tensor& g, autograd::Grads& gr) {
                     gr.set(0, grad_label, [&] {
                       return softmax_backward(bw, gr.saved(0), g, order, inverse, rows, cols);
                     });
                   });
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, int dim) {
  return softmax_impl(op_softmax, op_softmax_bw, "softmax.dx", x, dim);
}

Tensor log_softmax(const Tensor& x, int dim) {
  return softmax_impl(op_log_softmax, op_log_softmax_bw, "log_softmax.dx", x, dim);
}

}  // namespace prism
