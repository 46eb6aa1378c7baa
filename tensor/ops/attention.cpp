// Scaled dot-product attention as one op: out = softmax(scale q k^T (+ causal mask)) v.
//
// q [B, H, Lq, d], k and v [B, H, Lk, d] (or 3-D [BH, L, d], seen as B = 1) -> out [B, H, Lq, d].
// The kernels read q, k and v through their strides (kernels/args.h, AttentionArgs), so the
// heads a MultiHeadAttention splits out of its qkv projection with a permute are not copied.
//
// Variants (kernels/ops/attention/naive.cpp, kernels/ops/attention/flash.cpp) differ in memory: the
// naive one keeps every head's Lq x Lk scores, the flash one 128 x 128 tiles per thread. That
// scratch is allocated here, inside the op's record and tagged temporary, so the profile's
// allocation columns show it (a buffer a kernel made for itself would be invisible to the tracker).
// The size follows the variant's tag: naive, reference and learners' (user) kernels get the full
// score matrix, optimized and fused ones the tiled workspace. On the meta device the variant
// the CPU would run decides, so `prism summary` reports the same memory as a real run.
//
// Forward also returns lse [B, H, Lq], each row's log-sum-exp of the scaled scores, which
// backward (op attention_backward, one call for dq, dk and dv) uses to rebuild the softmax
// without its max and sum passes. lse itself carries no gradient.
//
// Cost (docs/COSTS.md), over the (query, key) pairs that count: Lq Lk per head, or
// L (L + 1) / 2 when causal (the masked half is neither computed by the tiled kernel nor
// counted): forward 4 d + 5 FLOPs per pair; backward 10 d + 5 per pair + 2 d per query row.
#include <omp.h>

#include <cmath>
#include <string>

#include "kernels/costs.h"
#include "kernels/ops/attention/op.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"

namespace prism {

namespace {

detail::OpHandle op_attention(kernels::ops::attention),
    op_attention_bw(kernels::ops::attention_backward);

struct Sizes {
  int64_t batch, heads, lq, lk, d;
  double scale;
  bool causal;
};

std::string shapes(const Tensor& q, const Tensor& k, const Tensor& v) {
  return "q " + q.shape().str() + ", k " + k.shape().str() + ", v " + v.shape().str();
}

// Checks the inputs and returns the sizes; q, k, v are 3-D or 4-D (all the same).
Sizes check_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal,
                      double scale) {
  const char* op = kernels::ops::attention.name;
  for (const Tensor* t : {&q, &k, &v}) detail::check_float(op, *t);
  detail::check_same_dtype(op, q, k);
  detail::check_same_dtype(op, q, v);
  detail::check_same_device(op, q, k);
  detail::check_same_device(op, q, v);
  const int nd = q.dim();
  if ((nd != 3 && nd != 4) || k.dim() != nd || v.dim() != nd) {
    throw Error("attention: q, k and v must all be 4-D [B, H, L, d] or all 3-D [BH, L, d], got " +
                shapes(q, k, v));
  }
  for (int i = 0; i < nd - 2; ++i) {
    if (k.size(i) != q.size(i) || v.size(i) != q.size(i)) {
      throw Error("attention: batch and head dims must match, got " + shapes(q, k, v));
    }
  }
  if (k.size(-1) != q.size(-1) || v.size(-1) != q.size(-1)) {
    throw Error("attention: q, k and v must have the same head size d (last dim), got " +
                shapes(q, k, v));
  }
  if (k.size(-2) != v.size(-2)) {
    throw Error("attention: k and v must have the same number of keys (dim -2), got " +
                shapes(q, k, v));
  }
  if (k.size(-2) == 0 || q.size(-1) == 0) {
    throw Error("attention: needs at least one key and a head size d >= 1, got " + shapes(q, k, v));
  }
  if (causal && q.size(-2) != k.size(-2)) {
    throw Error("attention: causal attention needs as many queries as keys (Lq == Lk), got " +
                shapes(q, k, v));
  }
  if (!std::isfinite(scale)) throw Error("attention: scale must be finite");
  Sizes s{};
  s.batch = nd == 4 ? q.size(0) : 1;
  s.heads = q.size(-3);
  s.lq = q.size(-2);
  s.lk = k.size(-2);
  s.d = q.size(-1);
  s.scale = scale == 0 ? 1.0 / std::sqrt(static_cast<double>(s.d)) : scale;
  s.causal = causal;
  return s;
}

// 3-D [BH, L, d] is the 4-D [1, BH, L, d]: a free view.
Tensor as_4d(const Tensor& t) {
  return t.dim() == 4 ? t.detach() : t.detach().unsqueeze(0);
}

// The variant's scratch (kernels/args.h), a temporary buffer attributed to the open record.
// On the GPU a tiled variant keeps its tiles in shared memory and registers: it needs no
// scratch in forward and one value per query row (D_i = dout_i . out_i) in backward.
Tensor workspace(const kernels::KernelEntry& plan, const Sizes& s, DType dt, Device dev,
                 bool backward) {
  const bool tiled =
      plan.tag == kernels::VariantTag::fused || plan.tag == kernels::VariantTag::optimized;
  int64_t n = 0;
  if (!tiled)
    n = kernels::attention_scores_workspace(s.batch, s.heads, s.lq, s.lk);
  else if (dev == Device::cuda)
    n = backward ? s.batch * s.heads * s.lq : 0;
  else
    n = kernels::attention_tiled_workspace(s.lq, s.d, omp_get_max_threads());
  AllocRole role(MemRole::temporary);
  return detail::empty_like_shape(Dims{n}, dt, dev);
}

template <class Args>
void fill_common(Args& a, const Sizes& s, const Tensor& q, const Tensor& k, const Tensor& v) {
  a.batch = s.batch, a.heads = s.heads, a.lq = s.lq, a.lk = s.lk, a.d = s.d;
  a.scale = s.scale;
  a.causal = s.causal;
  for (int i = 0; i < 4; ++i) {
    a.q_stride[i] = q.strides()[i];
    a.k_stride[i] = k.strides()[i];
    a.v_stride[i] = v.strides()[i];
  }
}

template <class T>
void run_forward(const kernels::KernelEntry& kern, const Sizes& s, const Tensor& q, const Tensor& k,
                 const Tensor& v, const Tensor& out, const Tensor& lse, const Tensor& ws) {
  kernels::AttentionArgs<T> a{};
  a.q = q.data<T>(), a.k = k.data<T>(), a.v = v.data<T>();
  a.out = out.data<T>(), a.lse = lse.data<T>();
  a.workspace = ws.data<T>();
  a.workspace_size = ws.numel();
  fill_common(a, s, q, k, v);
  kern.get<kernels::AttentionArgs, T>()(a);
}

struct QkvGrads {
  Tensor dq, dk, dv;
};

template <class T>
void run_backward(const kernels::KernelEntry& kern, const Sizes& s, const Tensor& q,
                  const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& dout,
                  const Tensor& lse, const QkvGrads& g, const Tensor& ws) {
  kernels::AttentionBackwardArgs<T> a{};
  a.q = q.data<T>(), a.k = k.data<T>(), a.v = v.data<T>();
  a.out = out.data<T>(), a.dout = dout.data<T>(), a.lse = lse.data<T>();
  a.dq = g.dq.data<T>(), a.dk = g.dk.data<T>(), a.dv = g.dv.data<T>();
  a.workspace = ws.data<T>();
  a.workspace_size = ws.numel();
  fill_common(a, s, q, k, v);
  kern.get<kernels::AttentionBackwardArgs, T>()(a);
}

// dq, dk, dv [B, H, L, d] from the output gradient (any layout) and what forward saved.
QkvGrads attention_backward(const Sizes& s, const Tensor& q, const Tensor& k, const Tensor& v,
                            const Tensor& out, const Tensor& lse, const Tensor& dout0) {
  Tensor dout = dout0.contiguous();
  const auto& kern = op_attention_bw.kernel(q.device(), q.dtype());
  detail::OpRecordScope rec(
      op_attention_bw.name(), kern.name.c_str(), q.device(), {&q, &k, &v, &dout0},
      [&] { return costs::attention_backward(q.shape(), k.shape(), s.causal, q.element_size()); });
  QkvGrads g;
  g.dq = detail::empty_like_shape(q.shape(), q.dtype(), q.device());
  if (q.numel() == 0) {  // no queries: no gradient flows to the keys and values
    g.dk = zeros_like(k);
    g.dv = zeros_like(v);
    return g;
  }
  g.dk = detail::empty_like_shape(k.shape(), k.dtype(), k.device());
  g.dv = detail::empty_like_shape(v.shape(), v.dtype(), v.device());
  Tensor ws = workspace(op_attention_bw.planned(kern, q.dtype()), s, q.dtype(), q.device(), true);
  if (q.device() == Device::meta) return g;
  if (q.dtype() == DType::f32)
    run_backward<float>(kern, s, q, k, v, out, dout, lse, g, ws);
  else
    run_backward<double>(kern, s, q, k, v, out, dout, lse, g, ws);
  return g;
}

}  // namespace

AttentionResult attention_with_lse(const Tensor& q, const Tensor& k, const Tensor& v, bool causal,
                                   double scale) {
  const Sizes s = check_attention(q, k, v, causal, scale);
  const Tensor q4 = as_4d(q), k4 = as_4d(k), v4 = as_4d(v);
  const auto& kern = op_attention.kernel(q.device(), q.dtype());
  Tensor out4, lse3;
  {
    detail::OpRecordScope rec(
        op_attention.name(), kern.name.c_str(), q.device(), {&q, &k, &v},
        [&] { return costs::attention(q4.shape(), k4.shape(), causal, q.element_size()); });
    out4 = detail::empty_like_shape(q4.shape(), q.dtype(), q.device());
    lse3 = detail::empty_like_shape(Dims{s.batch, s.heads, s.lq}, q.dtype(), q.device());
    if (s.lq > 0) {
      Tensor ws = workspace(op_attention.planned(kern, q.dtype()), s, q.dtype(), q.device(), false);
      if (q.device() != Device::meta) {
        if (q.dtype() == DType::f32)
          run_forward<float>(kern, s, q4, k4, v4, out4, lse3, ws);
        else
          run_forward<double>(kern, s, q4, k4, v4, out4, lse3, ws);
      }
    }
  }
  const bool three_d = q.dim() == 3;
  AttentionResult r;
  r.out = three_d ? out4.squeeze(0) : out4;
  r.lse = three_d ? lse3.squeeze(0) : lse3;
  autograd::record(r.out, kernels::ops::attention.name, {&q, &k, &v},
                   {autograd::input(q4, 0), autograd::input(k4, 1), autograd::input(v4, 2),
                    autograd::output(out4), autograd::output(lse3, "lse")},
                   [s, three_d](const Tensor& g, autograd::Grads& gr) {
                     QkvGrads d;
                     {
                       profiler::GradOfGuard label("attention.dqkv");
                       d = attention_backward(s, gr.saved(0), gr.saved(1), gr.saved(2), gr.saved(3),
                                              gr.saved(4), three_d ? g.unsqueeze(0) : g);
                     }
                     auto back = [three_d](const Tensor& t) { return three_d ? t.squeeze(0) : t; };
                     gr.set(0, "attention.dq", [&] { return back(d.dq); });
                     gr.set(1, "attention.dk", [&] { return back(d.dk); });
                     gr.set(2, "attention.dv", [&] { return back(d.dv); });
                   });
  return r;
}

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal, double scale) {
  return attention_with_lse(q, k, v, causal, scale).out;
}

}  // namespace prism
