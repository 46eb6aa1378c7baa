// The op front end: every function here checks its inputs, computes its cost, picks a kernel
// through the registry, records a profile row, runs, and (in grad mode) records how to
// differentiate itself. See DESIGN.md, "The life of one op call".
//
// Elementwise binary ops broadcast like NumPy: shapes are aligned at the right, and a dim of
// size 1 (or a missing dim) stretches to match the other.
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace prism {

// ---- factories (tensor/factories.cpp) ---------------------------------------------------------
// New tensors go on default_device() (tensor/storage.h): the cpu unless a DefaultDevice guard
// says otherwise; the *_like factories follow their argument's device.
Tensor empty(const Dims& shape, DType dtype = DType::f32);
Tensor zeros(const Dims& shape, DType dtype = DType::f32);
Tensor ones(const Dims& shape, DType dtype = DType::f32);
Tensor full(const Dims& shape, double value, DType dtype = DType::f32);
Tensor scalar(double value, DType dtype = DType::f32);  // a 0-dim tensor
// [start, start+step, ...) up to but excluding `end`.
Tensor arange(double start, double end, double step = 1, DType dtype = DType::f32);
Tensor arange(int64_t n, DType dtype = DType::f32);
Tensor from_vector(const std::vector<float>& values, const Dims& shape);
Tensor from_vector(const std::vector<double>& values, const Dims& shape);
Tensor from_vector(const std::vector<int64_t>& values, const Dims& shape);
// Uniform in [low, high) / standard normal, from the global seeded generator (random.h).
Tensor rand(const Dims& shape, DType dtype = DType::f32, double low = 0, double high = 1);
Tensor randn(const Dims& shape, DType dtype = DType::f32, double mean = 0, double std = 1);
Tensor zeros_like(const Tensor& t);
// 1 with probability p, else 0 (dropout masks), from the global generator.
Tensor bernoulli(const Dims& shape, double p, DType dtype = DType::f32);
Tensor ones_like(const Tensor& t);

// ---- elementwise (tensor/ops/elementwise.cpp) -------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, double exponent);
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);  // tanh approximation
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
// SiLU / Swish (Elfwing et al., 2018): x sigmoid(x), the gate of SwiGLU. Its gradient is one op,
// silu_backward(x, g) = g s (1 + x (1 - s)) with s = sigmoid(x).
Tensor silu(const Tensor& x);
// dst += src in place: same shape, dtype and device; dst contiguous, src any strides; dst must
// not overlap src unless it is src itself. Recorded as op "add_into" with add's cost
// and kernel, and no allocation. The autograd engine sums gradients with it (a leaf's .grad, a
// node's pending gradient). Like copy_into it records no gradient: refused while grad mode is
// on and src requires grad.
void add_into(const Tensor& dst, const Tensor& src);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& x);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(double a, const Tensor& b);

// ---- reductions (tensor/ops/reduce.cpp) -------------------------------------------------------
// dims empty = all dims. Negative dims count from the end.
Tensor sum(const Tensor& x, const std::vector<int>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int>& dims = {}, bool keepdim = false);
Tensor max(const Tensor& x, int dim, bool keepdim = false);
Tensor max(const Tensor& x);                                    // over all elements
Tensor argmax(const Tensor& x, int dim, bool keepdim = false);  // int64
Tensor argmax(const Tensor& x);                                 // flat index, int64 scalar
// Sums `x` down to `shape` (the gradient of broadcasting `shape` up to x's shape).
Tensor sum_to(const Tensor& x, const Dims& shape);

// ---- matmul (tensor/ops/matmul.cpp) ------------------------------------------------------------
// [m,k] @ [k,n] -> [m,n]; batched [..., m, k] @ [..., k, n] with broadcast batch dims;
// 1-D operands are treated as a row (left) or column (right) vector, as in NumPy.
Tensor matmul(const Tensor& a, const Tensor& b);
// The mixed-precision GEMM (tensor/ops/matmul_bf16.cpp): bfloat16 a and b, float32 result
// summed in float32, same shapes as matmul (at least 2-D). Autocast (tensor/autocast.h) is how
// float32 models use it; the gradients of a and b come back in bfloat16, their dtype.
Tensor matmul_bf16(const Tensor& a, const Tensor& b);

// ---- softmax (tensor/ops/softmax.cpp) ----------------------------------------------------------
Tensor softmax(const Tensor& x, int dim = -1);
Tensor log_softmax(const Tensor& x, int dim = -1);

// ---- normalization and loss (tensor/ops/norm.cpp, tensor/ops/loss.cpp) ----------------------
// Layer normalisation over the last dim D = x.size(-1): each row becomes
// (x - mean) / sqrt(var + eps) * weight + bias, with the row's mean and biased variance;
// weight and bias are [D], or undefined (1 and 0). One op forward ("layer_norm", variants
// one_pass and two_pass) and one backward ("layer_norm_backward": dx, dweight, dbias at once).
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);
// RMS normalisation over the last dim (Zhang & Sennrich, 2019; LLaMA's norm): each row becomes
// x / sqrt(mean(x^2) + eps) * weight, weight [D] or undefined (1). No mean, no bias. One op
// forward ("rms_norm", variants fused and naive) and one backward ("rms_norm_backward": dx and
// dweight at once).
Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps = 1e-6);

enum class Reduction { mean, sum };
// Cross-entropy of logits [N, C] against int64 class indices target [N], each in [0, C):
// the mean (or sum) over rows of log(sum_j exp(logits_ij)) - logits_i,target_i, a 0-d tensor.
// The same as nll(log_softmax(logits, 1), target), in one op ("cross_entropy", variants fused
// and composed) that never makes the [N, C] log-probabilities; its backward is one op too.
Tensor cross_entropy(const Tensor& logits, const Tensor& target,
                     Reduction reduction = Reduction::mean);

// ---- indexing and joining (tensor/ops/index.cpp)
// ------------------------------------------------- out[i][j] = x[i][index[i][j]] for dim 1
// (torch.gather); index is int64, same ndim as x.
Tensor gather(const Tensor& x, int dim, const Tensor& index);
// Picks entries of a 1-D int64 index along `dim`: out.size(dim) = index.numel().
Tensor index_select(const Tensor& x, int dim, const Tensor& index);
Tensor concat(const std::vector<Tensor>& xs, int dim = 0);

// ---- convolution and pooling (tensor/ops/conv.cpp, tensor/ops/pool.cpp) -------------------
// x [N, C, H, W], weight [O, C, kh, kw], bias [O] or undefined -> [N, O, Ho, Wo] with
// Ho = (H + 2 padding - kh) / stride + 1 (and the same for W).
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), int stride = 1,
              int padding = 0);
// Max / average over kernel x kernel windows; stride defaults to the kernel size. Padding
// counts as -inf for max and is excluded from the average's count.
Tensor max_pool2d(const Tensor& x, int kernel, int stride = 0, int padding = 0);
Tensor avg_pool2d(const Tensor& x, int kernel, int stride = 0, int padding = 0);

// ---- fused ops (tensor/ops/attention.cpp, linear_gelu.cpp, linear.cpp) ------------------------
// Scaled dot-product attention: softmax(scale q k^T, masked j > i when causal) v, per head.
// q [B, H, Lq, d], k and v [B, H, Lk, d] -> [B, H, Lq, d]; or all 3-D [BH, L, d]. scale 0
// means 1 / sqrt(d). Causal needs Lq == Lk. Strided q, k, v (head views) are not copied.
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal, double scale = 0);
// The same, also returning lse [B, H, Lq] (or [BH, Lq]): log sum_j exp(scale q_i . k_j) over
// the visible keys, what backward rebuilds the softmax from. lse carries no gradient.
struct AttentionResult {
  Tensor out;
  Tensor lse;
};
AttentionResult attention_with_lse(const Tensor& q, const Tensor& k, const Tensor& v, bool causal,
                                   double scale = 0);
// gelu(x weight^T + bias) in one op (GELU's tanh approximation, as gelu()): x [..., in],
// weight [out, in], bias [out] or undefined -> [..., out]. Allocates one output buffer, two in
// grad mode (the pre-activation is kept for backward).
Tensor linear_gelu(const Tensor& x, const Tensor& weight, const Tensor& bias);
// relu?(x) weight^T + bias in one op (tensor/ops/linear.cpp): a Linear layer, with the ReLU of
// the layer below folded in when relu_input. x [..., in], weight [out, in], bias [out] or
// undefined -> [..., out]. Allocates the output alone; backward runs the same fused kernel for
// dx (with the ReLU's mask) and dW (with the ReLU), and a sum for db.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, bool relu_input = false);

// ---- SwiGLU (tensor/ops/swiglu.cpp) -----------------------------------------------------------
// silu(gate) * up elementwise (Shazeer, 2020; LLaMA's feed-forward), with silu(z) = z sigmoid(z).
// gate and up have the same shape (at least one dim, no broadcasting), the same float dtype and
// device; either may be a strided view (the two halves of one [..., 2 hidden] projection,
// sliced, are read in place). One op forward ("swiglu", variants fused and naive) and one
// backward ("swiglu_backward": dgate and dup at once).
Tensor swiglu(const Tensor& gate, const Tensor& up);

// ---- rotary position embeddings (tensor/ops/rope.cpp) -----------------------------------------
// x [T, D], [N, T, D] or [B, H, T, D], D even: each row at position pos0 + t has its pairs
// (x_i, x_{i+D/2}) turned by the angle (pos0 + t) base^(-2i/D) (Su et al., 2021; the math in
// kernels/ops/rope/op.h). x may be a strided view (a head's q or k); the result is contiguous.
// One op forward ("rope") and one backward ("rope_backward", the rotation turned back).
Tensor rope(const Tensor& x, int64_t pos0 = 0, double base = 10000.0);

// ---- copies (tensor/ops/copy.cpp) -------------------------------------------------------------
Tensor contiguous(const Tensor& x);
Tensor clone(const Tensor& x);
Tensor cast(const Tensor& x, DType dtype);
// x copied to `device` (x itself if already there); see Tensor::to(Device).
Tensor to_device(const Tensor& x, Device device);
// Writes src's values into dst in place: same shape, dtype and device, any strides (dst is
// typically a slice of a buffer allocated once, e.g. a transformer's KV cache, nn/kv_cache.h).
// Recorded as op "copy_into" with the copy kernel's cost (2 x numel x elem size bytes). An
// in-place write has no gradient: it is refused while grad mode is on and src requires grad.
void copy_into(const Tensor& dst, const Tensor& src);

}  // namespace prism
