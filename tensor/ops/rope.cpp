// rope(x, pos0, base): rotary position embeddings, one op forward ("rope") and one backward
// ("rope_backward", the same rotation turned back: a rotation's inverse is its transpose). The
// math is in kernels/ops/rope/op.h.
//
// x [T, D], [N, T, D] or [B, H, T, D] (D even) reaches the kernel as a strided view: a head's q
// or k, a permuted view of the fused qkv projection, is read in place. Only a last dim that is
// not contiguous is copied first. The output is contiguous with x's shape. Nothing is saved for
// backward but the positions and the base: the gradient needs no activation.
#include <cmath>
#include <string>

#include "kernels/ops/rope/op.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"

namespace prism {

namespace {

detail::OpHandle op_rope(kernels::ops::rope), op_rope_bw(kernels::ops::rope_backward);

void check_rope(const Tensor& x, int64_t pos0, double base) {
  detail::check_float(kernels::ops::rope.name, x);
  if (x.dim() < 2 || x.dim() > 4) {
    throw Error("rope: x " + x.shape().str() + " must be [T, D], [N, T, D] or [B, H, T, D]");
  }
  if (x.size(-1) % 2 != 0) {
    throw Error("rope: x " + x.shape().str() + " has an odd last dim (" +
                std::to_string(x.size(-1)) + "); rope turns pairs of entries, so D must be even");
  }
  // Positions are exact in double up to 2^53; 2^31 keeps pos0 + T far from that and from int64.
  if (pos0 < 0 || pos0 >= (int64_t{1} << 31)) {
    throw Error("rope: the first position " + std::to_string(pos0) + " is not in [0, 2^31)");
  }
  if (!std::isfinite(base) || base <= 0) {
    throw Error("rope: base " + std::to_string(base) + " must be finite and > 0");
  }
}

template <class T>
void run(const kernels::KernelEntry& k, const Tensor& x, const Tensor& y, int64_t pos0,
         double base) {
  const int nd = static_cast<int>(x.dim());
  kernels::RopeArgs<T> a{};
  a.x = x.data<T>();
  a.y = y.data<T>();
  a.t = x.size(nd - 2), a.d = x.size(nd - 1);
  a.x_st = x.strides()[nd - 2];
  a.outer0 = nd == 4 ? x.size(0) : 1;
  a.outer1 = nd >= 3 ? x.size(nd - 3) : 1;
  a.x_s0 = nd == 4 ? x.strides()[0] : 0;
  a.x_s1 = nd >= 3 ? x.strides()[nd - 3] : 0;
  a.pos0 = pos0;
  a.base = base;
  k.get<kernels::RopeArgs, T>()(a);
}

// One rotation op: rope (op_rope) or its gradient (op_rope_bw), from x to a new tensor.
Tensor turn(detail::OpHandle& op, const Tensor& x0, int64_t pos0, double base) {
  const Tensor x = x0.strides()[x0.dim() - 1] == 1 ? x0 : x0.contiguous();
  const DType dt = x.dtype();
  const Device dev = x.device();
  const auto& k = op.kernel(dev, dt);
  detail::OpRecordScope rec(op.name(), k.name.c_str(), dev, {&x0},
                            [&] { return costs::rope(x.numel(), x.element_size()); });
  Tensor y = detail::empty_like_shape(x.shape(), dt, dev);
  if (x.numel() > 0) {
    if (dt == DType::f32)
      run<float>(k, x, y, pos0, base);
    else
      run<double>(k, x, y, pos0, base);
  }
  return y;
}

}  // namespace

Tensor rope(const Tensor& x, int64_t pos0, double base) {
  check_rope(x, pos0, base);
  Tensor out = turn(op_rope, x, pos0, base);
  autograd::record(out, op_rope.name(), {&x}, [pos0, base](const Tensor& g, autograd::Grads& gr) {
    gr.set(0, "rope.dx", [&] { return turn(op_rope_bw, g, pos0, base); });
  });
  return out;
}

}  // namespace prism
