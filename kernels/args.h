// Kernel argument structs: what every kernel sees (pointers, sizes, strides; never a Tensor).
//
// Words, the same in every struct. Sizes and strides count elements, never bytes. A 2-D view is
// `rows` x `cols`, element (i, j) at x[i * row_stride + j * col_stride] (reductions, softmax,
// the norms, cross-entropy: every row-wise op). Where several operands are strided, each
// stride carries its operand's name: X_rs, X_cs and X_bs are operand X's row, column and batch
// strides (matmul's a_rs, swiglu's gate_cs, linear_gelu's w_rs), and an n-d walk is a `shape`
// with one stride array per operand (copy's src_stride, attention's q_stride). A split around
// one dim is [outer, n, inner] (index_select). The structs are plain aggregates, filled by name
// (field by field, or with designated initialisers {.x = ..., .rows = ...}), so a kernel's
// whole input reads in one place and no constructor's argument order can be mixed up.
//
// The contract, the same for every struct below and for a learner's kernel:
//   - Trust the struct. The tensor layer has checked shapes, dtypes and devices and filled the
//     struct; a kernel checks only what it alone can see (an index out of range in gather).
//   - Outputs are fresh and contiguous unless a struct says otherwise, and the kernel writes
//     every element of them (the lab and the tests poison outputs with NaN to check). They
//     alias no input. The exceptions are named where they occur: the optimizer updates read
//     and write param and its state in place (the front end refuses two of them sharing
//     memory), and scatter_add and index_add add into an output the front end has zeroed.
//   - Empty input. Elementwise, copy, gather / index and optimizer kernels may be called with
//     zero elements and must then do nothing (a loop that runs zero times; a CUDA kernel
//     returns before launching, since a grid of zero blocks is an error). Every other op
//     settles its empty cases before any kernel runs: matmul with k = 0 gets C = 0 from the
//     front end; a reduction over zero columns never reaches a kernel (sum gives 0, mean, max
//     and argmax refuse); softmax, the norms, conv2d, pooling and attention with no elements
//     return first. So a row, a dot product or a window that reaches one of these kernels is
//     never empty. The named exception is linear, whose epilogue has work even when the product
//     is empty: its kernels take k = 0 (C = 0, then bias and mask) and n = 0 (A's row sums
//     alone); m = 0 returns in the front end.
//   - Threads. A CPU kernel may use OpenMP (the caller has set the thread count); a CUDA kernel
//     queues its work on prism's one stream and returns without waiting.
#pragma once

#include <cstdint>

#include "kernels/bfloat16.h"

namespace prism::kernels {

constexpr int kMaxDims = 8;

// An n-d strided walk over `shape`. The tensor layer merges dims that are contiguous with each
// other first, so a contiguous tensor of any shape arrives here as ndim = 1.
struct Layout {
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t stride[kMaxDims] = {};
};

// out[i] = f(x[i]) over `layout` (the op names f: relu, exp, gelu, ...).
template <class T>
struct UnaryArgs {
  const T* x;
  T* out;         // contiguous, numel elements
  Layout layout;  // x's strides over the output shape
  int64_t numel;
};

// out[i] = f(a[i], b[i]) with NumPy broadcasting: a broadcast dim has stride 0.
template <class T>
struct BinaryArgs {
  const T* a;
  const T* b;
  T* out;  // contiguous, numel elements
  int ndim;
  int64_t shape[kMaxDims];
  int64_t a_stride[kMaxDims];
  int64_t b_stride[kMaxDims];
  int64_t numel;
};

// Reduction of each row of a 2-D strided view [rows, cols] to one value.
template <class T>
struct ReduceArgs {
  const T* x;
  int64_t rows, cols;
  int64_t row_stride, col_stride;
  T* out;          // [rows], contiguous; may be null for argmax
  int64_t* index;  // [rows] position of the max (max, argmax); null otherwise
};

// C[b] = A[b] @ B[b] for b < batch; A is m x k, B is k x n, each with its own strides, so
// transposed views need no copy. C is contiguous [batch, m, n].
template <class T>
struct MatmulArgs {
  const T* a;
  const T* b;
  T* c;
  int64_t batch, m, n, k;
  int64_t a_bs, a_rs, a_cs;  // batch, row, column strides of A
  int64_t b_bs, b_rs, b_cs;
};

// matmul_bf16: C[b] = A[b] @ B[b] with bfloat16 A and B (any strides, like MatmulArgs) and C of
// the accumulator type T, contiguous [batch, m, n]. The registry files a kernel under its T, the
// type it accumulates in and writes (float32: the mixed-precision GEMM); the inputs are always
// bfloat16, as the op's name says. Products of two bfloat16 values are exact in float32 (8 x 8
// significant bits fit in 24), so the only rounding is the accumulation's.
template <class T>
struct MatmulBf16Args {
  const BFloat16* a;
  const BFloat16* b;
  T* c;
  int64_t batch, m, n, k;
  int64_t a_bs, a_rs, a_cs;  // batch, row, column strides of A
  int64_t b_bs, b_rs, b_cs;
};

// Row-wise softmax / log_softmax of a 2-D strided view [rows, cols]; out is contiguous.
template <class T>
struct SoftmaxArgs {
  const T* x;
  T* out;
  int64_t rows, cols;
  int64_t row_stride, col_stride;
};

// Backward of softmax / log_softmax along rows: y is the forward output, g the output's
// gradient, dx the input's gradient; all three contiguous [rows, cols].
template <class T>
struct SoftmaxBackwardArgs {
  const T* y;
  const T* g;
  T* dx;
  int64_t rows, cols;
};

// Layer normalisation of each row of a 2-D strided view [rows, cols] (x's last dim is cols):
//   mean = sum_j x_j / cols,  var = sum_j (x_j - mean)^2 / cols  (biased),
//   rstd = 1 / sqrt(var + eps),  out_j = (x_j - mean) * rstd * weight_j + bias_j
// weight and bias are contiguous [cols], or null (weight 1, bias 0). out is contiguous
// [rows, cols]. mean and rstd, when not null, receive each row's statistics (contiguous
// [rows]): what backward needs, so the front end asks for them only when autograd records.
template <class T>
struct LayerNormArgs {
  const T* x;
  const T* weight;
  const T* bias;
  T* out;
  T* mean;
  T* rstd;
  int64_t rows, cols;
  int64_t row_stride, col_stride;
  double eps;
};

// Its gradient, one kernel for all three: from g = dloss/dout (contiguous [rows, cols]), x as
// in forward (strided) and the saved mean and rstd, with xhat = (x - mean) rstd, gw = g weight:
//   dx_j = rstd (gw_j - mean_k(gw_k) - xhat_j mean_k(gw_k xhat_k))       each row
//   dweight_j = sum_rows g_j xhat_j,  dbias_j = sum_rows g_j             each column
// dx (contiguous [rows, cols]), dweight and dbias ([cols]) are overwritten; a null one is not
// needed and not computed.
template <class T>
struct LayerNormBackwardArgs {
  const T* x;
  const T* g;
  const T* weight;
  const T* mean;
  const T* rstd;
  T* dx;
  T* dweight;
  T* dbias;
  int64_t rows, cols;
  int64_t row_stride, col_stride;  // x's; g and dx are contiguous
};

// RMS normalisation of each row of a 2-D strided view [rows, cols] (Zhang & Sennrich, 2019; the
// normalisation of LLaMA and most transformers since): layer_norm without the mean and the bias,
//   rstd = 1 / sqrt(sum_j x_j^2 / cols + eps),  out_j = x_j * rstd * weight_j
// weight is contiguous [cols], or null (1). out is contiguous [rows, cols]; rstd, when not null,
// receives each row's rstd (contiguous [rows]), what backward needs.
template <class T>
struct RmsNormArgs {
  const T* x;
  const T* weight;
  T* out;
  T* rstd;
  int64_t rows, cols;
  int64_t row_stride, col_stride;
  double eps;
};

// Its gradient, one kernel for both: from g = dloss/dout (contiguous [rows, cols]), x as in
// forward (strided) and the saved rstd, with xhat = x rstd and gw = g weight (rstd depends on
// every x_k of the row: d rstd / d x_k = -rstd^3 x_k / cols):
//   dx_j = rstd (gw_j - xhat_j mean_k(gw_k xhat_k))       each row
//   dweight_j = sum_rows g_j xhat_j                        each column
// dx (contiguous [rows, cols]) and dweight ([cols]) are overwritten; a null one is not needed.
template <class T>
struct RmsNormBackwardArgs {
  const T* x;
  const T* g;
  const T* weight;
  const T* rstd;
  T* dx;
  T* dweight;
  int64_t rows, cols;
  int64_t row_stride, col_stride;  // x's; g and dx are contiguous
};

// SwiGLU (Shazeer, 2020, "GLU Variants Improve Transformer"; the feed-forward of LLaMA and most
// transformers since) of a 2-D view [rows, cols], elementwise:
//   out = silu(gate) * up,   silu(z) = z sigmoid(z) = z / (1 + e^-z)
// gate and up are each read through their own row and column strides, so the two halves of one
// [rows, 2 hidden] projection, split by slicing, reach the kernel without a copy. out is
// contiguous [rows, cols].
template <class T>
struct SwiGluArgs {
  const T* gate;
  const T* up;
  T* out;
  int64_t rows, cols;
  int64_t gate_rs, gate_cs;
  int64_t up_rs, up_cs;
};

// Its gradient, one kernel for both inputs: from g = dloss/dout (contiguous [rows, cols]) and
// gate and up as in forward (strided), with s = sigmoid(gate):
//   dgate = g up silu'(gate),   silu'(z) = s + z s (1 - s) = s (1 + z (1 - s))
//   dup   = g silu(gate)     = g gate s
// dgate and dup (contiguous [rows, cols]) are overwritten; a null one is not needed and not
// computed.
template <class T>
struct SwiGluBackwardArgs {
  const T* gate;
  const T* up;
  const T* g;
  T* dgate;
  T* dup;
  int64_t rows, cols;
  int64_t gate_rs, gate_cs;  // g, dgate and dup are contiguous
  int64_t up_rs, up_cs;
};

// Cross-entropy of logits [rows, cols] (a strided view) against int64 class indices
// target [rows] (strided; the front end has checked every one is in [0, cols)):
//   lse_i = log sum_j exp(x_ij),  loss = scale * sum_i (lse_i - x_i,target_i)
// with scale = 1 / rows for the mean, 1 for the sum. `loss` is one element; lse, when not null,
// receives each row's lse (contiguous [rows], saved for backward), in float64 whatever T is:
// near logits of 1000 a float32 lse is only good to 6e-5, an error exp(x - lse) would carry
// into every gradient. workspace: scratch of
// `workspace_size` elements that the front end allocates as a temporary, so the profile shows
// it: rows * cols for a variant that materialises log_softmax (tag naive), else null and 0.
template <class T>
struct CrossEntropyArgs {
  const T* logits;
  const int64_t* target;
  T* loss;
  double* lse;
  T* workspace;
  int64_t workspace_size;
  int64_t rows, cols;
  int64_t row_stride, col_stride, target_stride;
  double scale;
};

// Its gradient from the saved lse and the loss's gradient g (one element):
//   dlogits_ij = g * scale * (exp(x_ij - lse_i) - [j == target_i])    (softmax minus one-hot)
// dlogits is contiguous [rows, cols] and overwritten.
template <class T>
struct CrossEntropyBackwardArgs {
  const T* logits;
  const int64_t* target;
  const double* lse;
  const T* g;
  T* dlogits;
  int64_t rows, cols;
  int64_t row_stride, col_stride, target_stride;
  double scale;
};

// dst = src elementwise over `shape`, both strided: contiguous(), concat, and copies into views.
template <class T>
struct CopyArgs {
  const T* src;
  T* dst;
  int ndim;
  int64_t shape[kMaxDims];
  int64_t src_stride[kMaxDims];
  int64_t dst_stride[kMaxDims];
};

// Gather along `dim`: out[..i..] = x[..index[..i..]..] (PyTorch's torch.gather). `shape` is the
// index's (and output's) shape; the index is strided, the output contiguous.
// scatter_add is the reverse: x_grad[..index[..i..]..] += src[..i..], with x_grad contiguous.
template <class T>
struct GatherArgs {
  const T* x;  // gather: source (strided). scatter_add: src (contiguous, index shape)
  const int64_t* index;
  T* out;  // gather: [shape] contiguous. scatter_add: destination, contiguous x shape, zeroed
  int ndim;
  int dim;
  int64_t shape[kMaxDims];
  int64_t x_stride[kMaxDims];  // strides of the x side (source for gather, dest for scatter)
  int64_t index_stride[kMaxDims];
  int64_t dim_size;  // x.size(dim): valid indices are [0, dim_size)
};

// index_select along one dim of a 3-D view [outer, n, inner] (x contiguous after the front end):
// out[o, j, i] = x[o, index[j], i]. index_add is the reverse, accumulating into a zeroed out.
template <class T>
struct IndexSelectArgs {
  const T* x;
  const int64_t* index;  // contiguous, count entries
  T* out;
  int64_t outer, n, inner, count;
  int dim;  // the tensor dim that n stands for (for error messages)
};

// In-place optimizer updates (phase "optimizer"): param and its state are read and written,
// grad is read. All buffers are contiguous with `numel` elements; the front end checked shapes
// and dtypes. Hyperparameters arrive as doubles; a kernel converts them to T once.
//
// SGD (momentum, weight decay and Nesterov as in PyTorch's torch.optim.SGD, dampening 0):
//   g = grad + weight_decay * p
//   v = momentum * v + g                      (only when velocity != nullptr)
//   step = nesterov ? g + momentum * v : v    (g itself without momentum)
//   p = p - lr * step
template <class T>
struct SgdArgs {
  T* param;
  const T* grad;
  T* velocity;  // nullptr when momentum is 0 (no state)
  int64_t numel;
  double lr, momentum, weight_decay;
  bool nesterov;
  // Scratch for the unfused "per_tensor" variant (tag naive), allocated by the front end as a
  // temporary so the profile shows the buffers a framework without fusion makes:
  // sgd_per_tensor_workspace() elements; null and 0 for every other variant.
  T* workspace;
  int64_t workspace_size;
};

// The decayed gradient g = grad + wd p (with weight decay) and the Nesterov step g + mu v
// (with Nesterov), one [numel] temporary each.
inline int64_t sgd_per_tensor_workspace(int64_t numel, bool weight_decay, bool nesterov) {
  return numel * ((weight_decay ? 1 : 0) + (nesterov ? 1 : 0));
}

// Adam / AdamW (Kingma & Ba 2015; Loshchilov & Hutter 2019), at step t >= 1:
//   decoupled (AdamW): p = p * (1 - lr * weight_decay);  g = grad
//   otherwise (Adam, L2): g = grad + weight_decay * p
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g * g
//   p = p - (lr / bias_correction1) * m / (sqrt(v) / sqrt(bias_correction2) + eps)
// with bias_correction1 = 1 - beta1^t and bias_correction2 = 1 - beta2^t (the front end
// computes both in double). That last line is lr * m_hat / (sqrt(v_hat) + eps) with
// m_hat = m / bias_correction1 and v_hat = v / bias_correction2, arranged as PyTorch does.
template <class T>
struct AdamArgs {
  T* param;
  const T* grad;
  T* m;  // first moment (exp_avg)
  T* v;  // second moment (exp_avg_sq)
  int64_t numel;
  double lr, beta1, beta2, eps, weight_decay;
  bool decoupled;
  double bias_correction1, bias_correction2;
  // Scratch for the unfused "per_tensor" variant (tag naive), as in SgdArgs:
  // adam_per_tensor_workspace() elements; null and 0 for every other variant.
  T* workspace;
  int64_t workspace_size;
};

// The denominator sqrt(v) / sqrt(bias_correction2) + eps, and with L2 weight decay (Adam, not
// AdamW) the decayed gradient grad + wd p: one [numel] temporary each.
inline int64_t adam_per_tensor_workspace(int64_t numel, bool l2_weight_decay) {
  return numel * (1 + (l2_weight_decay ? 1 : 0));
}

// 2-D convolution (a cross-correlation, as in every framework) on contiguous NCHW buffers:
//   y[n,o,i,j] = bias[o] + sum_{c,p,q} x[n, c, i*stride - padding + p, j*stride - padding + q]
//                                      * weight[o, c, p, q]
// where an x index outside [0,h) x [0,w) reads 0 (zero padding). One struct serves the three
// ops; each reads some inputs and overwrites every element of `out`:
//   conv2d                  reads x, weight, bias (null: no bias)  out = y  [n, o, ho, wo]
//   conv2d_backward_input   reads dy, weight                       out = dx [n, c, h, w]
//   conv2d_backward_weight  reads dy, x                            out = dw [o, c, kh, kw]
// The tensor layer has checked the shapes: ho = (h + 2 padding - kh) / stride + 1 >= 1, and
// the same for wo.
template <class T>
struct Conv2dArgs {
  const T* x;       // [n, c, h, w]
  const T* weight;  // [o, c, kh, kw]
  const T* bias;    // [o] or null
  const T* dy;      // [n, o, ho, wo], the gradient of y (backward ops)
  T* out;
  // Scratch for variants that want it (im2col's column matrix): `workspace_size` elements,
  // at least c*kh*kw * ho*wo (one image's patches). The tensor layer allocates it as a
  // temporary buffer, so the memory profile shows it; naive variants get null and size 0.
  T* workspace;
  int64_t workspace_size;
  int64_t n, c, h, w;  // input
  int64_t o, kh, kw;   // output channels and kernel size
  int64_t ho, wo;      // output size
  int64_t stride, padding;
};

// How the CPU im2col variants (kernels/ops/conv2d/im2col_gemm.cpp) split a batch over threads: into
// chunks of whole images, each chunk at least kConvChunkMacs multiply-adds (the measured
// crossover, docs/PERFORMANCE.md "Threads"). conv2d_backward_weight sums over the images, so
// its chunks each add their images into a partial [o, c kh kw] sum (chunk 0 into dw itself) and
// the partials are added in chunk order; it makes at most kConvWeightGradChunks chunks, and
// only one when a single image's product reaches kConvImageGemmMacs, which the matmul then
// splits over the threads itself (kParallelGemmMacs, kernels/cpu/parallel.h), so no partials are
// needed. The cut depends on the shapes alone, never on the thread count: every op gives the
// same bits on any number of threads.
constexpr int64_t kConvChunkMacs = int64_t{1} << 18;
constexpr int64_t kConvImageGemmMacs = int64_t{4} << 20;
constexpr int64_t kConvWeightGradChunks = 8;
struct ConvChunks {
  int64_t images;  // images per chunk (the last chunk may have fewer)
  int64_t count;   // chunks
};
inline ConvChunks conv_chunks(int64_t n, int64_t macs_per_image, bool weight_grad) {
  int64_t per = kConvChunkMacs / (macs_per_image > 0 ? macs_per_image : 1);
  per = per < 1 ? 1 : per;
  if (weight_grad && macs_per_image >= kConvImageGemmMacs) per = n > 0 ? n : 1;
  int64_t count = (n + per - 1) / per;
  if (weight_grad && count > kConvWeightGradChunks) {
    per = (n + kConvWeightGradChunks - 1) / kConvWeightGradChunks;
    count = (n + per - 1) / per;
  }
  return {per, count};
}
// Their scratch, per worker thread: one image's patch matrix [c kh kw, ho wo] (none for a 1x1
// kernel with stride 1 and no padding, whose patches are the image itself) and, for a
// conv2d_backward_weight whose chunks hold several images, one image's product [o, c kh kw];
// then dw's partial sums for chunks 1, 2, ... A kernel runs on as many threads as the scratch
// has workers, at most one per chunk.
inline int64_t conv_im2col_worker(int64_t n, int64_t c, int64_t kh, int64_t kw, int64_t ho,
                                  int64_t wo, int64_t o, bool pointwise, bool weight_grad) {
  const int64_t k = c * kh * kw, p = ho * wo;
  const bool product = weight_grad && conv_chunks(n, o * k * p, true).images > 1;
  return (pointwise ? 0 : k * p) + (product ? o * k : 0);
}
inline int64_t conv_im2col_workspace(int64_t n, int64_t c, int64_t kh, int64_t kw, int64_t ho,
                                     int64_t wo, int64_t o, bool pointwise, bool weight_grad,
                                     int64_t workers) {
  const int64_t k = c * kh * kw, p = ho * wo;
  const int64_t chunks = conv_chunks(n, o * k * p, weight_grad).count;
  const int64_t partials = weight_grad && chunks > 1 ? (chunks - 1) * o * k : 0;
  return workers * conv_im2col_worker(n, c, kh, kw, ho, wo, o, pointwise, weight_grad) + partials;
}

// Scaled dot-product attention of every (batch, head), forward:
//   S = scale Q K^T  [lq, lk];  S_ij = -inf where causal and j > i (token i sees keys 0..i)
//   P = softmax(S) over j;  out = P V  [lq, d];  lse_i = log sum_j exp(S_ij)
// q [batch, heads, lq, d], k and v [batch, heads, lk, d] are read through their own strides
// (batch, head, row, column), so the heads split out of a [B, T, 3, H, d] projection by a
// permute need no copy. out is contiguous [batch, heads, lq, d], lse contiguous [batch, heads,
// lq] (saved for backward, which rebuilds P_ij = exp(S_ij - lse_i) from it). The front end has
// checked lk >= 1 and, for causal, lq == lk.
//
// Scratch: `workspace_size` elements that the front end allocates as a temporary buffer, so
// the profile shows what a variant trades for memory: attention_scores_workspace() for a
// variant that keeps the whole score matrix of every head (tag naive, and learners' kernels),
// attention_tiled_workspace() for tiled variants (a few fixed tiles per thread).
template <class T>
struct AttentionArgs {
  const T* q;
  const T* k;
  const T* v;
  T* out;
  T* lse;
  T* workspace;
  int64_t workspace_size;
  int64_t batch, heads, lq, lk, d;
  int64_t q_stride[4], k_stride[4], v_stride[4];  // batch, head, row, column strides
  double scale;                                   // usually 1 / sqrt(d)
  bool causal;
};

// Its gradient: every input read as above, plus the forward's out and lse and the output
// gradient dout (both contiguous [batch, heads, lq, d]); dq, dk, dv are contiguous with q's,
// k's and v's shapes and are overwritten. With D_i = sum_c dout_ic out_ic:
//   P = exp(S - lse);  dV = P^T dout;  dP = dout V^T;  dS = P * (dP - D)
//   dQ = scale dS K;   dK = scale dS^T Q
template <class T>
struct AttentionBackwardArgs {
  const T* q;
  const T* k;
  const T* v;
  const T* out;
  const T* dout;
  const T* lse;
  T* dq;
  T* dk;
  T* dv;
  T* workspace;
  int64_t workspace_size;
  int64_t batch, heads, lq, lk, d;
  int64_t q_stride[4], k_stride[4], v_stride[4];
  double scale;
  bool causal;
};

// The tiles of the tiled attention kernels: kAttentionBlock query rows against kAttentionBlock
// key rows at a time. At 128 a float32 score tile is 64 KB and a thread's tiles about 260 KB at
// d = 64, inside a 1 MB L2 (128 measured 3-10 % faster than 64 here: fewer, larger products).
constexpr int64_t kAttentionBlock = 128;

// Elements of scratch for a variant that materialises every head's lq x lk scores (O(L^2)).
inline int64_t attention_scores_workspace(int64_t batch, int64_t heads, int64_t lq, int64_t lk) {
  return batch * heads * lq * lk;
}
// Per worker thread of a tiled variant: q, k, v tiles and the output accumulator (4 B d), the
// score tile and its gradient (2 B^2), the running max and sum (2 B), and one value per query
// row (backward's D_i): O(B^2 + B d + L), linear in the sequence length. A kernel runs on at most
// workspace_size / attention_tiled_workspace(lq, d, 1) threads.
inline int64_t attention_tiled_workspace(int64_t lq, int64_t d, int64_t workers) {
  const int64_t b = kAttentionBlock;
  return workers * (4 * b * d + 2 * b * b + 2 * b + lq);
}

// y = gelu(z), z = x weight^T + bias (GELU's tanh approximation, kernels/ops/elementwise/math.h):
// x [rows, in] strided, weight [out, in] strided (a Linear layer's weight as it is stored),
// bias [out] or null. y is contiguous [rows, out]; z, when not null, receives the
// pre-activation (contiguous [rows, out]) that backward needs: gelu'(z).
template <class T>
struct LinearGeluArgs {
  const T* x;
  const T* weight;
  const T* bias;
  T* z;
  T* y;
  int64_t rows, in, out;
  int64_t x_rs, x_cs, w_rs, w_cs;
};

// linear: one product with a ReLU folded into an operand (a prologue) and a bias or a ReLU mask
// folded into the result (an epilogue), the three products of a ReLU-then-Linear layer
// (tensor/ops/linear.cpp):
//   C = relu_a(A) @ relu_b(B)                relu_x(M) = max(0, M) when the flag is set, else M
//   C[i, j] += bias[j]                       when bias is not null
//   C[i, j] = mask[i, j] > 0 ? C[i, j] : 0   when mask is not null (relu's gradient, relu'(mask))
//   row_sums[i] = sum over p of relu_a(A)[i, p]   when row_sums is not null, added in order of p
// with the operands as the layer uses them:
//   forward  y  = relu(x) @ W^T + b     A = x [rows, in], B = W^T, relu_a, bias
//   dx       dx = (g @ W) * [x > 0]     A = g [rows, out], B = W, mask = x
//   dW       dW = g^T @ relu(x)         A = g^T, B = x, relu_b; row_sums = db, g's column sums
// A [m, k], B [k, n] and the mask [m, n] are read through their strides; C is contiguous [m, n].
// The fused variant applies prologue and epilogue inside the optimized matmul's blocks; the
// unfused one runs them as passes and needs `workspace` for each ReLU'd operand
// (linear_workspace elements).
template <class T>
struct LinearArgs {
  const T* a;
  const T* b;
  T* c;
  int64_t m, n, k;
  int64_t a_rs, a_cs, b_rs, b_cs;
  bool relu_a, relu_b;
  const T* bias;  // [n], contiguous
  const T* mask;  // [m, n]
  int64_t mask_rs, mask_cs;
  T* row_sums;  // [m], contiguous
  T* workspace;
  int64_t workspace_size;
};

// The unfused linear variant's scratch: a contiguous copy of each operand it ReLUs.
inline int64_t linear_workspace(int64_t m, int64_t n, int64_t k, bool relu_a, bool relu_b) {
  return (relu_a ? m * k : 0) + (relu_b ? k * n : 0);
}

// 2-D max / average pooling over kernel x kernel windows of contiguous [planes, h, w] buffers
// (planes = n * c: every channel of every image is pooled on its own). A window starts at
// (i*stride - padding, j*stride - padding); padding never wins a max and is not counted in an
// average (the divisor is the number of real input elements in the window, at least 1 because
// padding <= kernel / 2). Forward ops overwrite out [planes, ho, wo]; backward ops overwrite
// out = dx [planes, h, w] from dy [planes, ho, wo].
//   max_pool2d            reads x; writes out and index (the argmax, h_in * w + w_in, in its plane)
//   max_pool2d_backward   reads dy and index; dx[index] += dy
//   avg_pool2d            reads x; index is null
//   avg_pool2d_backward   reads dy; dx gets dy / count over each window; index is null
template <class T>
struct Pool2dArgs {
  const T* x;   // [planes, h, w] (forward)
  const T* dy;  // [planes, ho, wo] (backward)
  T* out;
  int64_t* index;  // [planes, ho, wo] (max pool: written by forward, read by backward)
  int64_t planes, h, w, ho, wo;
  int64_t kernel, stride, padding;
};

// int8 inference GEMM with its requantization fused in (kernels/ops/matmul_int8/):
//   acc[i][j] = sum_p a[i][p] * w[j][p]                   int8 x int8, exact in int32
//   out[i][j] = fma(float(acc[i][j]), a_scale * w_scale[j], bias[j])   (bias null: + 0)
// a [m, k] strided (quantized activations), w [n, k] strided (a Linear's weight as stored, one
// row per output channel), out contiguous float [m, n]. T is the float type of the output and
// the scales (the registry's dtype slot: float32); the integer operands are always int8.
// |acc| <= k * 127 * 127, so int32 holds any k below 133,000 (the front end checks).
template <class T>
struct MatmulInt8Args {
  const int8_t* a;
  const int8_t* w;
  const T* w_scale;  // [n], one per output channel
  const T* bias;     // [n] or null
  T* out;
  T a_scale;
  int64_t m, n, k;
  int64_t a_rs, a_cs, w_rs, w_cs;
};

// out[i] = clamp(round_half_even(x[i] / scale), -127, 127) over a contiguous x of numel
// elements: symmetric quantization (the zero point is 0, and -128 is left out so that the
// range is symmetric and the negation of any value is representable).
template <class T>
struct QuantizeArgs {
  const T* x;
  int8_t* out;
  T scale;
  int64_t numel;
};

}  // namespace prism::kernels
