// Every op's cost formula in words, one line each: what `prism ops` prints under the op's
// kernels and what docs/COSTS.md's "Every op in one line" table is generated from
// (`prism ops --costs-markdown`; tests/kernels/cost_formulas_test.cpp checks the page against
// it). The arithmetic is in costs.cpp; each line here says the same thing for a reader, and
// an op's line belongs to the op whatever device runs it.
#include <algorithm>
#include <iterator>
#include <string_view>

#include "kernels/costs.h"

namespace prism::costs {

namespace {
struct FormulaRow {
  const char* op;
  const char* text;
};
// Sorted by op name (a test keeps it so; lookups bisect).
constexpr FormulaRow kFormulas[] = {
    {"adam_update",
     "13 FLOP/elem + 2 with L2 weight decay (Adam) or + 1 decoupled (AdamW); bytes = param, m, v "
     "read+write + grad"},
    {"add", "1 FLOP/out elem; bytes = a + b + out"},
    {"argmax", "(cols-1) compares per output; bytes = in + indices"},
    {"attention",
     "4*B*H*Lq*Lk*d FLOPs (two products) + 5*B*H*Lq*Lk (softmax), causal: only pairs j <= i; bytes "
     "= q + k + v + out + lse"},
    {"attention_backward",
     "10*B*H*Lq*Lk*d FLOPs (five products) + 5*B*H*Lq*Lk + 2*B*H*Lq*d, causal: pairs j <= i; bytes "
     "= q + k + v + out + dout + lse + dq + dk + dv"},
    {"avg_pool2d", "k*k FLOPs (adds + divide) per output; bytes = x + y"},
    {"avg_pool2d_backward", "k*k FLOPs per dy element; bytes = dy + dx"},
    {"col2im", "N*K*P adds (K = C*kh*kw, P = Ho*Wo); bytes = patch gradients + dx"},
    {"conv2d",
     "2*N*O*Ho*Wo*C*kh*kw FLOPs (+ N*O*Ho*Wo bias adds); MACs half without bias; bytes = x + w (+ "
     "bias) + y"},
    {"conv2d_backward_input", "2*N*O*Ho*Wo*C*kh*kw FLOPs (MACs half); bytes = dy + w + dx"},
    {"conv2d_backward_weight", "2*N*O*Ho*Wo*C*kh*kw FLOPs (MACs half); bytes = dy + x + dw"},
    {"copy", "0 FLOPs; bytes = 2 x numel x elem size"},
    {"cross_entropy",
     "4 FLOPs per logit (max, sub+exp, sum) + 3 per row; bytes = logits + int64 targets + loss (+ "
     "float64 lse per row when saved)"},
    {"cross_entropy_backward",
     "3 FLOPs per logit (sub+exp, scale) + 1 per row (the one-hot); bytes = logits + targets + lse "
     "+ dlogits"},
    {"div", "1 FLOP/out elem; bytes = a + b + out"},
    {"exp", "1 FLOP/elem; bytes = in + out"},
    {"gather", "0 FLOPs; bytes = index + 2 x out"},
    {"gelu", "8 FLOP/elem (tanh approximation); bytes = in + out"},
    {"gelu_backward", "16 FLOP/elem; bytes = x + g + dx"},
    {"im2col", "0 FLOPs; bytes = x + N*K*P patches (K = C*kh*kw, P = Ho*Wo)"},
    {"index_add", "1 FLOP per src element; bytes = index + 3 x src"},
    {"index_select", "0 FLOPs; bytes = index + 2 x out"},
    {"layer_norm",
     "6 FLOPs per element (+1 with weight, +1 with bias) + 5 per row; bytes = x + y + weight + "
     "bias (+ mean and rstd when saved)"},
    {"layer_norm_backward",
     "11 FLOPs per element (+2 for dweight, +1 for dbias); bytes = x + g + dx + weight + mean + "
     "rstd + dweight + dbias"},
    {"linear",
     "2*m*n*k FLOPs (GEMM) + 1 per ReLU'd operand element + 1 per output for the bias, 1 for the "
     "mask + m*(k-1) for A's row sums; bytes = A + B + C (+ bias + mask + row sums)"},
    {"linear_gelu",
     "2*rows*out*in FLOPs (GEMM) + 9 per output (bias add + GELU; 8 without bias); bytes = x + w + "
     "b + y (+ z when saved for backward)"},
    {"log", "1 FLOP/elem; bytes = in + out"},
    {"log_softmax", "4 FLOPs per element (max, sub+exp, sum, sub); bytes = in + out"},
    {"log_softmax_backward", "4 FLOPs per element; bytes = y + g + dx"},
    {"matmul", "2*m*n*k FLOPs per batch (m*n*k MACs); bytes = A + B + C"},
    {"matmul_bf16",
     "2*m*n*k FLOPs per batch (m*n*k MACs); bytes = 2 x (A + B) elements (bf16) + 4 x C (fp32)"},
    {"matmul_int8",
     "2*m*n*k integer ops (m*n*k MACs) + 3 per output (requantize); bytes = a + w (1 each) + 4 x "
     "out + 4 x (w_scale + bias) + 4"},
    {"max", "(cols-1) compares per output; bytes = in + out + indices"},
    {"max_pool2d", "k*k FLOPs (compares) per output; bytes = x + y + int64 argmax per output"},
    {"max_pool2d_backward", "1 FLOP per dy element; bytes = dy + argmax + dx"},
    {"mean", "(cols-1) adds + 1 divide per output; bytes = in + out"},
    {"mul", "1 FLOP/out elem; bytes = a + b + out"},
    {"neg", "1 FLOP/elem; bytes = in + out"},
    {"pow", "1 FLOP/out elem; bytes = a + b + out"},
    {"quantize_int8", "1 FLOP/elem (divide; round and clamp not counted); bytes = in + 1 x out"},
    {"relu", "1 FLOP/elem (a compare); bytes = in + out"},
    {"relu_backward", "1 FLOP/elem; bytes = x + g + dx"},
    {"rms_norm",
     "3 FLOPs per element (+1 with weight) + 4 per row; bytes = x + y + weight (+ rstd when "
     "saved)"},
    {"rms_norm_backward",
     "6 FLOPs per element (+1 with weight, +2 for dweight); bytes = x + g + rstd + weight + dx "
     "+ dweight"},
    {"scatter_add", "1 FLOP per src element; bytes = index + src + 2 x src"},
    {"sgd_update",
     "2 FLOP/elem + 2 with weight decay + 2 with momentum + 2 more for Nesterov; bytes = param "
     "read+write + grad (+ velocity read+write)"},
    {"sigmoid", "3 FLOP/elem (neg, exp, add+div counted as 1); bytes = in + out"},
    {"sigmoid_backward", "3 FLOP/elem; bytes = y + g + dx"},
    {"silu", "4 FLOP/elem (x / (1 + e^-x): neg, exp, add, div); bytes = in + out"},
    {"silu_backward",
     "8 FLOP/elem (g s (1 + x (1 - s)), s = sigmoid(x) recomputed); bytes = x + g + dx"},
    {"softmax", "4 FLOPs per element (max, sub+exp, sum, div); bytes = in + out"},
    {"softmax_backward", "4 FLOPs per element; bytes = y + g + dx"},
    {"sqrt", "1 FLOP/elem; bytes = in + out"},
    {"sub", "1 FLOP/out elem; bytes = a + b + out"},
    {"sum", "(cols-1) FLOPs per output; bytes = in + out"},
    {"swiglu", "5 FLOPs per element (silu(gate) 4, times up 1); bytes = gate + up + out"},
    {"swiglu_backward",
     "11 FLOPs per element (sigmoid 3, dgate 6, dup 2); bytes = gate + up + g + dgate + dup"},
    {"tanh", "1 FLOP/elem; bytes = in + out"},
    {"tanh_backward", "3 FLOP/elem; bytes = y + g + dx"},
};
}  // namespace

const char* formula(std::string_view op) {
  const auto* it =
      std::lower_bound(std::begin(kFormulas), std::end(kFormulas), op,
                       [](const FormulaRow& r, std::string_view o) { return r.op < o; });
  return it != std::end(kFormulas) && it->op == op ? it->text : "";
}

std::vector<std::string_view> ops_with_formulas() {
  std::vector<std::string_view> out;
  for (const auto& r : kFormulas) out.emplace_back(r.op);
  return out;
}

}  // namespace prism::costs
