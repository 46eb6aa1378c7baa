// Kernel argument structs: what every kernel sees (pointers, sizes, strides; never a Tensor).
//
// Strides are in elements, not bytes. Outputs are always freshly allocated and contiguous,
// except where a struct says otherwise. The tensor layer fills these structs after checking
// shapes, so a kernel may trust them; it only checks values it alone can see (an index out of
// range in gather).
#pragma once

#include <cstdint>

namespace prism::kernels {

constexpr int kMaxDims = 8;

// An n-d strided walk over `shape`. The tensor layer merges dims that are contiguous with each
// other first, so a contiguous tensor of any shape arrives here as ndim = 1.
struct Layout {
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t stride[kMaxDims] = {};
};

// out[i] = f(x[i]) over `layout`; `alpha` is the op's scalar parameter where it has one.
template <class T>
struct UnaryArgs {
  const T* x;
  T* out;  // contiguous, numel elements
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

// Reduction of each row of a 2-D strided view [outer, inner] to one value.
template <class T>
struct ReduceArgs {
  const T* x;
  int64_t outer, inner;
  int64_t outer_stride, inner_stride;
  T* out;          // [outer], contiguous; may be null for argmax
  int64_t* index;  // [outer] position of the max (max, argmax); null otherwise
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
  int64_t x_stride[kMaxDims];      // strides of the x side (source for gather, dest for scatter)
  int64_t index_stride[kMaxDims];
  int64_t dim_size;                // x.size(dim): valid indices are [0, dim_size)
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
};

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
};

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

}  // namespace prism::kernels
