#include "kernels/costs.h"

#include <algorithm>
#include <string>

#include "kernels/ops/elementwise/list.h"

namespace prism::costs {

namespace {
[[noreturn]] void overflow() {
  throw Error(
      "a FLOP, MAC or byte count exceeds 2^63 - 1: the shapes are too large to count in int64");
}
}  // namespace

Count operator*(Count a, Count b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a.v_, b.v_, &r)) overflow();
  return r;
}
Count operator+(Count a, Count b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a.v_, b.v_, &r)) overflow();
  return r;
}
Count operator-(Count a, Count b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a.v_, b.v_, &r)) overflow();
  return r;
}

Cost elementwise(const Dims& out, int flops_per_elem, int64_t in_bytes, int64_t elem_size) {
  const Count n = out.numel();
  return make_cost(n * flops_per_elem, 0, in_bytes + n * elem_size);
}

int elementwise_steps(std::string_view op) {
  struct Steps {
    std::string_view op;
    int steps;
  };
  // The elementwise list holds each op's FLOPs per element, and the reasons.
#define PRISM_STEPS(Functor, op, flops) {op, flops},
  static constexpr Steps kSteps[] = {PRISM_UNARY_OPS(PRISM_STEPS) PRISM_BINARY_OPS(PRISM_STEPS)};
#undef PRISM_STEPS
  for (const Steps& s : kSteps) {
    if (s.op == op) return s.steps;
  }
  throw Error("costs: '" + std::string(op) + "' is not an elementwise op");
}

Cost matmul(const Dims& a, const Dims& b, int64_t elem_size) {
  // a: [..., m, k], b: [..., k, n]; the batch is the product of the broadcast batch dims.
  const int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  Count batch = 1;
  const int na = a.size() - 2, nb = b.size() - 2, nbatch = std::max(na, nb);
  for (int i = 0; i < nbatch; ++i) {
    int ia = na - nbatch + i, ib = nb - nbatch + i;
    batch = batch * std::max(ia >= 0 ? a[ia] : 1, ib >= 0 ? b[ib] : 1);
  }
  const Count macs = batch * m * n * k;
  return make_cost(2 * macs, macs, (Count(a.numel()) + b.numel() + batch * m * n) * elem_size);
}

Cost im2col(int64_t n, int64_t k, int64_t p, int64_t x_numel, int64_t elem_size) {
  return make_cost(0, 0, (Count(x_numel) + n * k * p) * elem_size);
}

Cost col2im(int64_t n, int64_t k, int64_t p, int64_t dx_numel, int64_t elem_size) {
  const Count patches = Count(n) * k * p;
  return make_cost(patches, 0, (patches + dx_numel) * elem_size);
}

Cost matmul_bf16(const Dims& a, const Dims& b) {
  Cost c = matmul(a, b, 2);                                      // every element at 2 bytes
  const Count out = Count(c.bytes) / 2 - a.numel() - b.numel();  // C's elements
  c.bytes = (Count(c.bytes) + out * 2).value();                  // C's at 4 bytes
  return c;
}

Cost reduce(int64_t in_numel, int64_t out_numel, int64_t elem_size, int64_t out_elem_size) {
  return make_cost(std::max<int64_t>(in_numel - out_numel, 0), 0,
                   Count(in_numel) * elem_size + Count(out_numel) * out_elem_size);
}

Cost mean(int64_t in_numel, int64_t out_numel, int64_t elem_size) {
  Cost c = reduce(in_numel, out_numel, elem_size, elem_size);
  c.flops = (Count(c.flops) + out_numel).value();
  return c;
}

Cost cast(int64_t numel, int64_t in_elem_size, int64_t out_elem_size) {
  return make_cost(0, 0, Count(numel) * (in_elem_size + out_elem_size));
}

Cost matmul_int8(int64_t m, int64_t n, int64_t k, bool has_bias) {
  const Count macs = Count(m) * n * k, outs = Count(m) * n;
  const Count bytes = Count(m) * k + Count(n) * k + 4 * outs + 4 * Count(n) + 4 +
                      (has_bias ? 4 * Count(n) : Count(0));
  return make_cost(2 * macs + 3 * outs, macs, bytes);
}

Cost quantize(int64_t numel, int64_t in_elem_size) {
  return make_cost(numel, 0, Count(numel) * (in_elem_size + 1));
}

Cost gather(int64_t index_numel, int64_t out_numel, int64_t elem_size) {
  return make_cost(0, 0, 8 * Count(index_numel) + 2 * Count(out_numel) * elem_size);
}

Cost scatter_add(int64_t index_numel, int64_t src_numel, int64_t elem_size) {
  return make_cost(src_numel, 0, 8 * Count(index_numel) + 3 * Count(src_numel) * elem_size);
}

Cost softmax(int64_t numel, int64_t elem_size) {
  return make_cost(4 * Count(numel), 0, 2 * Count(numel) * elem_size);
}

Cost softmax_backward(int64_t numel, int64_t elem_size) {
  return make_cost(4 * Count(numel), 0, 3 * Count(numel) * elem_size);
}

Cost layer_norm(int64_t rows, int64_t cols, bool has_weight, bool has_bias, bool saves_stats,
                int64_t elem_size) {
  const Count n = Count(rows) * cols;
  const Count flops = (6 + (has_weight ? 1 : 0) + (has_bias ? 1 : 0)) * n + 5 * Count(rows);
  const Count elems =
      2 * n + (has_weight ? cols : 0) + (has_bias ? cols : 0) + (saves_stats ? 2 * Count(rows) : 0);
  return make_cost(flops, 0, elems * elem_size);
}

Cost rms_norm(int64_t rows, int64_t cols, bool has_weight, bool saves_rstd, int64_t elem_size) {
  const Count n = Count(rows) * cols;
  const Count flops = (3 + (has_weight ? 1 : 0)) * n + 4 * Count(rows);
  const Count elems = 2 * n + (has_weight ? cols : 0) + (saves_rstd ? Count(rows) : 0);
  return make_cost(flops, 0, elems * elem_size);
}

Cost rms_norm_backward(int64_t rows, int64_t cols, bool has_weight, bool dx, bool dweight,
                       int64_t elem_size) {
  const Count n = Count(rows) * cols;
  const int64_t per_elem = (dx ? 6 + (has_weight ? 1 : 0) : 0) + (dweight ? 2 : 0);
  // Read x, g, rstd (and weight); write what is asked for.
  const Count elems =
      2 * n + Count(rows) + (has_weight ? cols : 0) + (dx ? n : 0) + (dweight ? cols : 0);
  return make_cost(per_elem * n, 0, elems * elem_size);
}

Cost swiglu(int64_t numel, int64_t elem_size) {
  const Count n = numel;
  return make_cost(5 * n, 0, 3 * n * elem_size);  // silu 4 + the multiply; gate, up, out
}

Cost swiglu_backward(int64_t numel, bool dgate, bool dup, int64_t elem_size) {
  const Count n = numel;
  // s = sigmoid(gate) once (3), then dgate 6 and dup 2 (costs.h has the count).
  const int64_t per_elem = (dgate || dup ? 3 : 0) + (dgate ? 6 : 0) + (dup ? 2 : 0);
  // Read gate and g, and up only for dgate; write what is asked for.
  const int64_t streams = 2 + (dgate ? 2 : 0) + (dup ? 1 : 0);
  return make_cost(per_elem * n, 0, streams * n * elem_size);
}

Cost layer_norm_backward(int64_t rows, int64_t cols, bool has_weight, bool dx, bool dweight,
                         bool dbias, int64_t elem_size) {
  const Count n = Count(rows) * cols;
  const int64_t per_elem =
      (dx ? 9 + (has_weight ? 1 : 0) : 0) + (dweight ? 2 : 0) + (dbias ? 1 : 0);
  // Read x, g, mean, rstd (and weight); write what is asked for.
  const Count elems = 2 * n + 2 * Count(rows) + (has_weight ? cols : 0) + (dx ? n : 0) +
                      (dweight ? cols : 0) + (dbias ? cols : 0);
  return make_cost(per_elem * n, 0, elems * elem_size);
}

Cost cross_entropy(int64_t rows, int64_t cols, bool saves_lse, int64_t elem_size) {
  const Count logits = Count(rows) * cols;
  const Count bytes =
      (logits + 1) * elem_size + 8 * Count(rows) + (saves_lse ? 8 * Count(rows) : 0);
  return make_cost(4 * logits + 3 * Count(rows) + 1, 0, bytes);
}

Cost cross_entropy_backward(int64_t rows, int64_t cols, int64_t elem_size) {
  const Count logits = Count(rows) * cols;
  return make_cost(3 * logits + rows, 0,
                   2 * logits * elem_size + 8 * Count(rows) + 8 * Count(rows));
}

Cost copy(int64_t numel, int64_t elem_size) {
  return make_cost(0, 0, 2 * Count(numel) * elem_size);
}

Cost sgd_update(int64_t numel, int64_t elem_size, bool weight_decay, bool momentum, bool nesterov) {
  const int64_t flops = 2 + (weight_decay ? 2 : 0) + (momentum ? 2 : 0) + (nesterov ? 2 : 0);
  const int64_t accesses = momentum ? 5 : 3;
  return make_cost(flops * Count(numel), 0, accesses * Count(numel) * elem_size);
}

Cost adam_update(int64_t numel, int64_t elem_size, bool weight_decay, bool decoupled) {
  const int64_t flops = 13 + (weight_decay ? (decoupled ? 1 : 2) : 0);
  return make_cost(flops * Count(numel), 0, 7 * Count(numel) * elem_size);
}

int64_t window_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t padding) {
  return (in + 2 * padding - kernel) / stride + 1;
}

namespace {

// N O Ho Wo C kh kw: the multiply-adds of one conv2d (and of each of its gradients).
Count conv2d_macs(const Dims& x, const Dims& weight, int64_t stride, int64_t padding) {
  const int64_t ho = window_out_size(x[2], weight[2], stride, padding);
  const int64_t wo = window_out_size(x[3], weight[3], stride, padding);
  return Count(x[0]) * weight[0] * ho * wo * weight[1] * weight[2] * weight[3];
}

Count conv2d_out_numel(const Dims& x, const Dims& weight, int64_t stride, int64_t padding) {
  return Count(x[0]) * weight[0] * window_out_size(x[2], weight[2], stride, padding) *
         window_out_size(x[3], weight[3], stride, padding);
}

Count pool2d_out_numel(const Dims& x, int64_t kernel, int64_t stride, int64_t padding) {
  return Count(x[0]) * x[1] * window_out_size(x[2], kernel, stride, padding) *
         window_out_size(x[3], kernel, stride, padding);
}

}  // namespace

Cost conv2d(const Dims& x, const Dims& weight, bool has_bias, int64_t stride, int64_t padding,
            int64_t elem_size) {
  const Count macs = conv2d_macs(x, weight, stride, padding);
  const Count out = conv2d_out_numel(x, weight, stride, padding);
  const int64_t bias = has_bias ? weight[0] : 0;
  return make_cost(2 * macs + (has_bias ? out : 0), macs,
                   (Count(x.numel()) + weight.numel() + bias + out) * elem_size);
}

Cost conv2d_backward_input(const Dims& x, const Dims& weight, int64_t stride, int64_t padding,
                           int64_t elem_size) {
  const Count macs = conv2d_macs(x, weight, stride, padding);
  const Count dy = conv2d_out_numel(x, weight, stride, padding);
  return make_cost(2 * macs, macs, (dy + weight.numel() + x.numel()) * elem_size);
}

Cost conv2d_backward_weight(const Dims& x, const Dims& weight, int64_t stride, int64_t padding,
                            int64_t elem_size) {
  const Count macs = conv2d_macs(x, weight, stride, padding);
  const Count dy = conv2d_out_numel(x, weight, stride, padding);
  return make_cost(2 * macs, macs, (dy + x.numel() + weight.numel()) * elem_size);
}

Cost pool2d(const Dims& x, int64_t kernel, int64_t stride, int64_t padding, bool with_index,
            int64_t elem_size) {
  const Count out = pool2d_out_numel(x, kernel, stride, padding);
  return make_cost(out * kernel * kernel, 0,
                   Count(x.numel()) * elem_size + out * (elem_size + (with_index ? 8 : 0)));
}

Cost max_pool2d_backward(const Dims& x, int64_t kernel, int64_t stride, int64_t padding,
                         int64_t elem_size) {
  const Count dy = pool2d_out_numel(x, kernel, stride, padding);
  return make_cost(dy, 0, dy * (elem_size + 8) + Count(x.numel()) * elem_size);
}

Cost avg_pool2d_backward(const Dims& x, int64_t kernel, int64_t stride, int64_t padding,
                         int64_t elem_size) {
  const Count dy = pool2d_out_numel(x, kernel, stride, padding);
  return make_cost(dy * kernel * kernel, 0, (dy + x.numel()) * elem_size);
}

int64_t attention_pairs(const Dims& q, const Dims& k, bool causal) {
  const Count heads = Count(q[0]) * q[1];
  const int64_t lq = q[2], lk = k[2];
  return (causal ? heads * lq * (Count(lq) + 1) / 2 : heads * lq * lk).value();
}

Cost attention(const Dims& q, const Dims& k, bool causal, int64_t elem_size) {
  const Count pairs = attention_pairs(q, k, causal);
  const int64_t d = q[3];
  const Count lse = Count(q[0]) * q[1] * q[2];
  return make_cost(pairs * (4 * Count(d) + 5), 2 * pairs * d,
                   (2 * Count(q.numel()) + 2 * Count(k.numel()) + lse) * elem_size);
}

Cost attention_backward(const Dims& q, const Dims& k, bool causal, int64_t elem_size) {
  const Count pairs = attention_pairs(q, k, causal);
  const int64_t d = q[3];
  const Count rows = Count(q[0]) * q[1] * q[2];
  const Count macs = 5 * pairs * d + rows * d;
  // read q, k, v, out, dout, lse (3 q + 2 k + rows); write dq, dk, dv (q + 2 k)
  const Count elems = 4 * Count(q.numel()) + 4 * Count(k.numel()) + rows;
  return make_cost(2 * macs + 5 * pairs, macs, elems * elem_size);
}

Cost linear(int64_t m, int64_t n, int64_t k, int64_t relu_elems, bool has_bias, bool has_mask,
            bool has_row_sums, int64_t elem_size) {
  const Count macs = Count(m) * n * k, outputs = Count(m) * n;
  const Count elems = Count(m) * k + Count(k) * n + outputs + (has_bias ? n : 0) +
                      (has_mask ? outputs : 0) + (has_row_sums ? m : 0);
  const Count sums = has_row_sums ? Count(m) * std::max<int64_t>(k - 1, 0) : Count(0);
  return make_cost(2 * macs + relu_elems + (Count(has_bias) + Count(has_mask)) * outputs + sums,
                   macs, elems * elem_size);
}

Cost linear_gelu(int64_t rows, int64_t in, int64_t out, bool has_bias, bool keeps_z,
                 int64_t elem_size) {
  const Count macs = Count(rows) * out * in, outputs = Count(rows) * out;
  const Count elems =
      Count(rows) * in + Count(out) * in + (has_bias ? out : 0) + outputs * (keeps_z ? 2 : 1);
  return make_cost(2 * macs + (has_bias ? 9 : 8) * outputs, macs, elems * elem_size);
}

}  // namespace prism::costs
