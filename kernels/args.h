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

}  // namespace prism::kernels
