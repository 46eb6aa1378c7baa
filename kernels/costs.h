// Cost formulas of the ops, from shapes alone (DESIGN.md conventions; docs/COSTS.md table).
// Each op's front end calls its formula only while a profiling session records. Each op's
// definition (kernels/ops/<op>/op.h) says the same formula in one line of words.
#pragma once

#include <string_view>
#include <vector>

#include "kernels/dims.h"
#include "profiler/cost.h"

namespace prism::costs {

using profiler::Cost;

// A count of FLOPs, MACs or bytes, with overflow checked. A count is a product of sizes (conv2d:
// N O Ho Wo C kh kw), and sizes that are each fine, such as `prism summary` accepts on the meta
// device, can multiply past 2^63 - 1: signed overflow, undefined behaviour, printed as a
// negative count. Every formula below computes in Count, whose *, + and - throw an Error ("a
// FLOP, MAC or byte count exceeds 2^63 - 1") instead; the op's front end adds the op's name.
class Count {
 public:
  Count(int64_t v) : v_(v) {}  // implicit: a formula mixes counts and plain sizes
  int64_t value() const { return v_; }
  friend Count operator*(Count a, Count b);
  friend Count operator+(Count a, Count b);
  friend Count operator-(Count a, Count b);
  friend Count operator/(Count a, Count b) { return a.v_ / b.v_; }

 private:
  int64_t v_;
};
inline Cost make_cost(Count flops, Count macs, Count bytes) {
  return {flops.value(), macs.value(), bytes.value()};
}

// An elementwise op: `flops_per_elem` arithmetic steps per output element; reads each input's
// own elements once (a broadcast input is read once, not once per use).
Cost elementwise(const Dims& out, int flops_per_elem, int64_t in_bytes, int64_t elem_size);
// The arithmetic steps per element of the elementwise op `op` (docs/COSTS.md, "Elementwise"):
// 1 for add, exp, relu...; sigmoid 3, silu 4, gelu 8, silu_backward 8, gelu_backward 16. An
// unknown op is an Error.
int elementwise_steps(std::string_view op);

// matmul of a [..., m, k] by b [..., k, n] (shapes after NumPy broadcasting of the batch dims):
// m n k multiply-adds per batch entry.
Cost matmul(const Dims& a, const Dims& b, int64_t elem_size);
// matmul_bf16: the same m n k multiply-adds per batch entry, bfloat16 inputs (2 bytes an
// element) and a float32 output (4): bytes = 2 (A + B) + 4 C.
Cost matmul_bf16(const Dims& a, const Dims& b);

// A reduction of `in_numel` elements to `out_numel` outputs, `flops_per_in` per input element
// (sum: 1 add per element, minus one per output).
Cost reduce(int64_t in_numel, int64_t out_numel, int64_t elem_size, int64_t out_elem_size);
// mean: reduce's sum, plus one divide per output.
Cost mean(int64_t in_numel, int64_t out_numel, int64_t elem_size);

// softmax / log_softmax of `numel` elements: 4 FLOPs each (max, subtract + exp, sum, divide).
Cost softmax(int64_t numel, int64_t elem_size);

// softmax_backward / log_softmax_backward: 4 FLOPs per element (product or sum, subtract,
// multiply, and the exp of log_softmax counted as 1); reads y and g, writes dx.
Cost softmax_backward(int64_t numel, int64_t elem_size);

// layer_norm of `rows` rows of `cols` elements: per element 6 FLOPs (the mean's add; the
// variance's subtract, square, add; the output's subtract and multiply by rstd), +1 with a
// weight, +1 with a bias; per row 5 (two divides by cols, + eps, sqrt, reciprocal). Bytes =
// x + y + weight + bias, + mean and rstd ([rows] each) when they are saved for backward.
Cost layer_norm(int64_t rows, int64_t cols, bool has_weight, bool has_bias, bool saves_stats,
                int64_t elem_size);
// layer_norm_backward: dx costs 9 FLOPs per element (xhat 2; the row sums of g w and g w xhat
// 3; rstd (g w - mean - xhat mean) 4), +1 for g * weight when there is a weight; dweight 2
// (g xhat, summed over rows), dbias 1. Bytes: x, g, mean, rstd and weight read; dx, dweight,
// dbias written (each only when that gradient is computed).
Cost layer_norm_backward(int64_t rows, int64_t cols, bool has_weight, bool dx, bool dweight,
                         bool dbias, int64_t elem_size);
// rms_norm of `rows` rows of `cols` elements: per element 3 FLOPs (square and add for the sum of
// squares, the multiply by rstd), +1 with a weight; per row 4 (divide by cols, + eps, sqrt,
// reciprocal). Bytes = x + y + weight, + rstd ([rows]) when it is saved for backward.
Cost rms_norm(int64_t rows, int64_t cols, bool has_weight, bool saves_rstd, int64_t elem_size);
// rms_norm_backward: dx costs 6 FLOPs per element (xhat 1; the row sum of gw xhat 2; rstd (gw -
// xhat mean) 3), +1 for g * weight when there is a weight; dweight 2 (g xhat, summed over rows).
// Bytes: x, g, rstd and weight read; dx and dweight written (each only when it is computed).
Cost rms_norm_backward(int64_t rows, int64_t cols, bool has_weight, bool dx, bool dweight,
                       int64_t elem_size);
// swiglu of `numel` elements (out = silu(gate) up): 5 FLOPs per element, counted as the
// elementwise ops it fuses: silu 4 (gate / (1 + e^-gate): neg, exp, add, divide; sigmoid's 3 and
// one more, as elementwise_steps counts silu) and the multiply by up 1. Bytes = gate + up + out.
Cost swiglu(int64_t numel, int64_t elem_size);
// swiglu_backward, with s = sigmoid(gate) = 1 / d, d = 1 + e^-gate: 3 FLOPs per element for s
// (sigmoid's count), shared by both gradients; dgate = g up s (1 + gate (1 - s)) 6 more (1 - s,
// times gate, 1 +, times s: 4; times g and times up: 2); dup = g (gate / d) 2 more. 11 per
// element for both. Bytes: gate and g
// read, up read when dgate is computed (dup does not need it); dgate and dup written (each only
// when it is computed).
Cost swiglu_backward(int64_t numel, bool dgate, bool dup, int64_t elem_size);
// cross_entropy of logits [rows, cols]: 4 FLOPs per logit (max, subtract + exp, sum), 3 per row
// (log, add, subtract the target's logit), 1 for the reduction. Bytes = logits + 8 per int64
// target + the loss, + 8 per row for the float64 lse when it is saved for backward.
Cost cross_entropy(int64_t rows, int64_t cols, bool saves_lse, int64_t elem_size);
// cross_entropy_backward: 3 FLOPs per logit (subtract + exp, times g / N) + 1 per row (the
// one-hot subtract). Bytes = logits + targets + lse read, dlogits written.
Cost cross_entropy_backward(int64_t rows, int64_t cols, int64_t elem_size);

// A copy of numel elements: no FLOPs, read once and write once.
Cost copy(int64_t numel, int64_t elem_size);
// cast of numel elements to another dtype: no FLOPs; read in one element size, write in the other.
Cost cast(int64_t numel, int64_t in_elem_size, int64_t out_elem_size);

// gather / index_select of `out_numel` elements picked by `index_numel` int64 indices: no
// FLOPs; bytes = the index + each picked element read once and written once.
Cost gather(int64_t index_numel, int64_t out_numel, int64_t elem_size);
// scatter_add / index_add of `src_numel` elements into a zeroed destination by `index_numel`
// int64 indices: 1 add per src element; bytes = the index + src read + the destination
// element each one lands on read and written (3 accesses per src element).
Cost scatter_add(int64_t index_numel, int64_t src_numel, int64_t elem_size);

// sgd_update of `numel` elements in place (kernels/args.h has the math): 2 FLOPs per element
// for p -= lr * g, + 2 for weight decay (g += wd * p), + 2 for momentum (v = mu * v + g),
// + 2 more for Nesterov (g + mu * v). Bytes: param read and written, grad read; with momentum
// the velocity read and written too (3 or 5 accesses per element).
Cost sgd_update(int64_t numel, int64_t elem_size, bool weight_decay, bool momentum, bool nesterov);

// adam_update of `numel` elements in place: 13 FLOPs per element (m: 3, v: 4, denominator
// sqrt / divide / add: 3, p -= step_size * m / denom: 3), + 2 for L2 weight decay (Adam) or
// + 1 for the decoupled shrink p *= 1 - lr wd (AdamW). Bytes: param, m and v read and written,
// grad read (7 accesses per element).
Cost adam_update(int64_t numel, int64_t elem_size, bool weight_decay, bool decoupled);

// The output size of a convolution or pooling window along one dim (floor mode):
// (in + 2 padding - kernel) / stride + 1. The caller has checked kernel <= in + 2 padding.
int64_t window_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t padding);

// conv2d of x [N, C, H, W] by weight [O, C, kh, kw]: every output element is a C kh kw-term
// dot product, so N O Ho Wo C kh kw MACs = 2x that in FLOPs, plus 1 FLOP per output element for
// the bias add when there is a bias (MACs leave it out, like fvcore). Bytes = x + weight
// (+ bias) + y.
Cost conv2d(const Dims& x, const Dims& weight, bool has_bias, int64_t stride, int64_t padding,
            int64_t elem_size);
// im2col of n images into [k, p] patch matrices (k = C kh kw, p = Ho Wo): 0 FLOPs; bytes = the
// input (x_numel elements) + the patches. col2im, its reverse: n k p adds into dx (dx_numel
// elements); bytes = the patch gradients + dx.
Cost im2col(int64_t n, int64_t k, int64_t p, int64_t x_numel, int64_t elem_size);
Cost col2im(int64_t n, int64_t k, int64_t p, int64_t dx_numel, int64_t elem_size);
// Gradients of conv2d: each is one multiply-add per forward multiply-add (the forward's FLOPs
// without the bias). backward_input reads dy + weight and writes dx (x's size); backward_weight
// reads dy + x and writes dw (weight's size). `x` and `weight` are the forward's shapes.
Cost conv2d_backward_input(const Dims& x, const Dims& weight, int64_t stride, int64_t padding,
                           int64_t elem_size);
Cost conv2d_backward_weight(const Dims& x, const Dims& weight, int64_t stride, int64_t padding,
                            int64_t elem_size);

// max_pool2d / avg_pool2d of x [N, C, H, W]: kernel^2 FLOPs per output element (max: compares;
// avg: kernel^2 - 1 adds and 1 divide), counted over the whole window even where it overlaps
// padding. Bytes = x + y, plus the int64 argmax per output for max pooling.
Cost pool2d(const Dims& x, int64_t kernel, int64_t stride, int64_t padding, bool with_index,
            int64_t elem_size);
// max_pool2d_backward: 1 add per output gradient element; reads dy and the index, writes dx.
// avg_pool2d_backward: kernel^2 FLOPs per output gradient element (each spread over its
// window); reads dy, writes dx. `x` is the forward input's shape.
Cost max_pool2d_backward(const Dims& x, int64_t kernel, int64_t stride, int64_t padding,
                         int64_t elem_size);
Cost avg_pool2d_backward(const Dims& x, int64_t kernel, int64_t stride, int64_t padding,
                         int64_t elem_size);

// The (query, key) pairs attention computes for q [B, H, Lq, d] and k [B, H, Lk, d]: B H Lq Lk,
// or B H L (L + 1) / 2 when causal (only j <= i; the masked half is not useful work).
int64_t attention_pairs(const Dims& q, const Dims& k, bool causal);
// attention forward: per pair 2 d MACs (a row of q k^T and a row of P v), 4 d FLOPs, + 5 FLOPs
// for the softmax (scale, max, subtract + exp, sum, divide). Bytes = q + k + v + out + lse.
Cost attention(const Dims& q, const Dims& k, bool causal, int64_t elem_size);
// attention_backward: five products per pair (q k^T again, dV, dP, dQ, dK: 5 d MACs) + 5 FLOPs
// (P = exp(S - lse): 3, dS = P (dP - D): 2), plus D_i = dout_i . out_i (d MACs per query row).
// Bytes = q + k + v + out + dout + lse read, dq + dk + dv written.
Cost attention_backward(const Dims& q, const Dims& k, bool causal, int64_t elem_size);

// linear_gelu of x [rows, in] by weight [out, in]: rows out in MACs (2x in FLOPs) + per output
// element 1 FLOP for the bias add (when there is a bias) and 8 for GELU (elementwise gelu's
// count). Bytes = x + weight (+ bias) + y, + z when the pre-activation is kept for backward.
Cost linear_gelu(int64_t rows, int64_t in, int64_t out, bool has_bias, bool keeps_z,
                 int64_t elem_size);

// linear (kernels/args.h, LinearArgs): C [m, n] = relu?(A [m, k]) @ relu?(B [k, n]), + bias,
// masked, and A's row sums: m n k MACs (2x in FLOPs) + 1 FLOP per element of each ReLU'd
// operand (`relu_elems`: m k for A, k n for B) + 1 per output for a bias and 1 for a mask +
// m (k - 1) for the row sums: the FLOPs of the relu, matmul, add, relu_backward and sum ops it
// replaces. Bytes = A + B + C (+ bias n + mask m n + row sums m).
Cost linear(int64_t m, int64_t n, int64_t k, int64_t relu_elems, bool has_bias, bool has_mask,
            bool has_row_sums, int64_t elem_size);

// matmul_int8 of a [m, k] int8 by w [n, k] int8 with the requantization fused (kernels/args.h):
// m n k MACs (2 m n k integer ops, counted as FLOPs so GOP/s compare with float GEMMs) + 3 FLOPs
// per output (the scale product a_scale * w_scale[j], then the fma's multiply and add). Bytes at
// the real sizes: a and w 1 per element, out 4 per element, w_scale 4 n, a_scale 4, bias 4 n.
Cost matmul_int8(int64_t m, int64_t n, int64_t k, bool has_bias);
// quantize of numel float elements to int8: 1 FLOP per element (the divide; the round and the
// clamp are not counted); bytes = in_elem_size + 1 per element.
Cost quantize(int64_t numel, int64_t in_elem_size);

}  // namespace prism::costs
