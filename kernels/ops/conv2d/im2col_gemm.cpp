// conv2d and its two gradients, im2col variant: unfold the patches, then one GEMM per image.
//
// Idea. For one image, copy every kh x kw patch the kernel visits into a column of a matrix
//   cols[(c, p, q), (i, j)] = x[c, i*s - pad + p, j*s - pad + q]     (0 where that is padding)
// of shape [K, P] with K = C kh kw and P = Ho Wo. The convolution is then a plain matrix
// product with the weight seen as a [O, K] matrix:
//   y_n   = W @ cols_n                  [O, P]   (+ bias on every column)
//   dw    = sum_n dy_n @ cols_n^T       [O, K]
//   dx_n  = col2im(W^T @ dy_n)          the [K, P] patch gradients added back where they came from
// so all the arithmetic runs in a packed, SIMD GEMM instead of short bounds-checked loops.
//
// Which GEMM: the matmul variant selected now, the same one `matmul` itself runs (its default,
// or `--kernel matmul=naive`, or a learner's kernel). conv2d is "im2col + the best matmul", and
// swapping the matmul for a whole training run shows up in the conv rows of the profile too.
// The price is memory: cols_n holds each input element up to kh kw times (K P elements; the
// tensor layer allocates it once per call as a temporary buffer, so the profile shows it).
// A 1x1 kernel with stride 1 and no padding needs no unfold at all: cols_n is x_n itself.
// Chunks of images run on the threads (kernels/args.h, conv_chunks); inside a chunk each product
// runs on that thread alone, and a single chunk leaves the product to thread itself as the
// matmul variant decides (the Eigen reference only when it is large enough to pay,
// eigen_threads.h).
//
// Unfold and fold walk rows of `cols` contiguously; for each (c, p, q) row the range of output
// columns j that land inside the input is computed once, so the inner loop is a plain copy
// (stride 1) or a strided gather, with the padding written as runs of zeros. The unfold's runs
// are short (Wo elements), so they move a SIMD register at a time with a masked tail
// (simd_runs.h), not through memmove / memset calls, which cost more than the run itself; the
// fold stays a plain loop (im2col_image.h's col2im_image_add says why).
//
// Cost: the same FLOPs as the naive loops (2 N O Ho Wo C kh kw per op), plus the unfold's
// K P copies per image.
//
// Measured on LeNet's two convolutions, forward and both gradients: over an order of magnitude
// faster than the naive loops, and well below the core's FMA peak, since the per-image products
// are small and the unfold is memory traffic (docs/PERFORMANCE.md, "Convolution and pooling
// kernels"; later figures in "Conv at one thread (2026-11-25)").
#include <Eigen/Core>
#include <algorithm>
#include <vector>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/conv2d/im2col_image.h"
#include "kernels/ops/matmul/op.h"
#include "kernels/ops/conv2d/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// C [m, n] = A [m, k] @ B [k, n], each operand given by its row and column strides, through the
// matmul kernel selected at the time of the call (looked up once per conv call).
template <class T>
class SelectedGemm {
 public:
  SelectedGemm()
      : fn_(registry()
                .at(kernels::ops::matmul.name, Device::cpu)
                .select(dtype_of<T>())
                .template get<MatmulArgs, T>()) {}
  void operator()(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_rs, int64_t a_cs,
                  const T* b, int64_t b_rs, int64_t b_cs, T* c) const {
    MatmulArgs<T> args{};
    args.a = a;
    args.b = b;
    args.c = c;
    args.batch = 1;
    args.m = m;
    args.n = n;
    args.k = k;
    args.a_rs = a_rs;
    args.a_cs = a_cs;
    args.b_rs = b_rs;
    args.b_cs = b_cs;
    fn_(args);
  }

 private:
  void (*fn_)(const MatmulArgs<T>&);
};

// True when the patch matrix of an image is the image itself ([C, H W] = [K, P]).
template <class T>
bool is_pointwise(const Conv2dArgs<T>& a) {
  return a.kh == 1 && a.kw == 1 && a.stride == 1 && a.padding == 0;
}

// Where a kernel's patch matrices, products and dw partials live: the tensor layer's workspace,
// laid out as kernels/args.h's conv_im2col_workspace says, or (when a caller passes none, e.g. a
// test calling the kernel directly) a buffer of our own laid out the same way.
template <class T>
class Scratch {
 public:
  Scratch(const Conv2dArgs<T>& a, bool weight_grad) {
    const int64_t K = a.c * a.kh * a.kw, P = a.ho * a.wo;
    const bool pointwise = is_pointwise(a);
    const ConvChunks chunks = conv_chunks(a.n, a.o * K * P, weight_grad);
    patch_ = pointwise ? 0 : K * P;
    worker_ = conv_im2col_worker(a.n, a.c, a.kh, a.kw, a.ho, a.wo, a.o, pointwise, weight_grad);
    const int64_t partials = weight_grad && chunks.count > 1 ? (chunks.count - 1) * a.o * K : 0;
    T* base = a.workspace;
    int64_t size = a.workspace_size;
    if (!base || size < partials + worker_) {
      size = conv_im2col_workspace(a.n, a.c, a.kh, a.kw, a.ho, a.wo, a.o, pointwise, weight_grad,
                                   threads_for(chunks.count));
      own_.resize(static_cast<size_t>(size));
      base = own_.data();
    }
    workers_ = worker_ > 0 ? (size - partials) / worker_ : threads_for(chunks.count);
    workers_base_ = base;
    partials_ = base + (size - partials);
  }
  // Thread t's patch matrix and product (t < workers()).
  T* patches(int t) const { return workers_base_ + t * worker_; }
  T* product(int t) const { return workers_base_ + t * worker_ + patch_; }
  // Chunk c's partial dw (c >= 1; chunk 0 sums into dw itself).
  T* partial(int64_t chunk, int64_t size) const { return partials_ + (chunk - 1) * size; }
  int workers() const { return static_cast<int>(std::max<int64_t>(workers_, 1)); }

 private:
  std::vector<T> own_;
  T* workers_base_ = nullptr;
  T* partials_ = nullptr;
  int64_t patch_ = 0, worker_ = 0, workers_ = 1;
};

// Runs body(n) for every image n, the images cut into conv_chunks() chunks spread over at most
// `workers` threads (kernels/cpu/parallel.h); body also gets the running thread's number, which
// picks its patch matrix.
template <class T, class Body>
void for_each_image(const Conv2dArgs<T>& a, const ConvChunks& chunks, int workers, Body&& body) {
  parallel_chunks(
      a.n, chunks.images,
      [&](int64_t, int64_t n0, int64_t n1) {
        const int thread = omp_get_thread_num();
        for (int64_t n = n0; n < n1; ++n) body(thread, n);
      },
      workers);
}

template <class T>
void conv2d_im2col(const Conv2dArgs<T>& a) {
  const int64_t K = a.c * a.kh * a.kw, P = a.ho * a.wo;
  const SelectedGemm<T> gemm;
  const Scratch<T> scratch(a, false);
  const bool pointwise = is_pointwise(a);
  for_each_image(a, conv_chunks(a.n, a.o * K * P, false), scratch.workers(), [&](int t, int64_t n) {
    const T* xn = a.x + n * a.c * a.h * a.w;
    const T* cols = xn;
    if (!pointwise) {
      im2col_image(a, xn, scratch.patches(t));
      cols = scratch.patches(t);
    }
    Eigen::Map<RowMajor<T>> Y(a.out + n * a.o * P, a.o, P);
    if (K == 0) {
      Y.setZero();  // an empty sum (no input channels)
    } else {
      gemm(a.o, P, K, a.weight, K, 1, cols, P, 1, Y.data());  // W [O, K] @ cols [K, P]
    }
    if (a.bias) {
      for (int64_t o = 0; o < a.o; ++o) {
        T* y = Y.data() + o * P;
        const T b = a.bias[o];
        for (int64_t j = 0; j < P; ++j) y[j] += b;
      }
    }
  });
}

template <class T>
void conv2d_backward_input_im2col(const Conv2dArgs<T>& a) {
  const int64_t K = a.c * a.kh * a.kw, P = a.ho * a.wo, image = a.c * a.h * a.w;
  if (a.o == 0) {  // no outputs: nothing flows back
    std::fill(a.out, a.out + a.n * image, T(0));
    return;
  }
  const SelectedGemm<T> gemm;
  const Scratch<T> scratch(a, false);
  const bool pointwise = is_pointwise(a);
  for_each_image(a, conv_chunks(a.n, a.o * K * P, false), scratch.workers(), [&](int t, int64_t n) {
    const T* dyn = a.dy + n * a.o * P;
    T* dxn = a.out + n * image;
    // W^T [K, O] (W read through swapped strides, no copy) @ dy_n [O, P]
    gemm(K, P, a.o, a.weight, 1, K, dyn, P, 1, pointwise ? dxn : scratch.patches(t));
    if (!pointwise) {
      std::fill(dxn, dxn + image, T(0));
      col2im_image_add(a, scratch.patches(t), dxn);
    }
  });
}

// dw = sum over images of dy_n @ cols_n^T. Each chunk of images sums into its own partial, in
// image order; the partials are then added in chunk order (kernels/args.h, conv_chunks).
template <class T>
void conv2d_backward_weight_im2col(const Conv2dArgs<T>& a) {
  const int64_t K = a.c * a.kh * a.kw, P = a.ho * a.wo, OK = a.o * K;
  const SelectedGemm<T> gemm;
  const Scratch<T> scratch(a, true);
  const bool pointwise = is_pointwise(a);
  const ConvChunks chunks = conv_chunks(a.n, OK * P, true);
  parallel_chunks(
      a.n, chunks.images,
      [&](int64_t c, int64_t n0, int64_t n1) {
        const int t = omp_get_thread_num();
        T* partial = c == 0 ? a.out : scratch.partial(c, OK);
        for (int64_t n = n0; n < n1; ++n) {
          const T* xn = a.x + n * a.c * a.h * a.w;
          const T* cols = xn;
          if (!pointwise) {
            im2col_image(a, xn,
                         scratch.patches(t));  // recomputed: cheaper than keeping every image's
            cols = scratch.patches(t);         // patches from forward
          }
          // dy_n [O, P] @ cols_n^T [P, K] (cols read through swapped strides). The matmul
          // kernels write C, they do not add to it: the chunk's first image writes its partial,
          // each further one its product, which is then added.
          T* c_out = n == n0 ? partial : scratch.product(t);
          gemm(a.o, K, P, a.dy + n * a.o * P, P, 1, cols, 1, P, c_out);
          if (n != n0) {
            for (int64_t i = 0; i < OK; ++i) partial[i] += c_out[i];
          }
        }
      },
      scratch.workers());
  if (chunks.count == 0 || K == 0) {  // no images, or no input channels: an empty sum
    std::fill(a.out, a.out + OK, T(0));
    return;
  }
  for (int64_t c = 1; c < chunks.count; ++c) {
    const T* partial = scratch.partial(c, OK);
    for (int64_t i = 0; i < OK; ++i) a.out[i] += partial[i];
  }
}

}  // namespace

void register_conv_im2col(Registry& r) {
  r.op("conv2d", Device::cpu)
      .add<Conv2dArgs>(
          "im2col", VariantTag::optimized,
          "unfold patches to a [C*kh*kw, Ho*Wo] matrix, one GEMM per image (the selected matmul)",
          &conv2d_im2col<float>, &conv2d_im2col<double>);
  r.op("conv2d_backward_input", Device::cpu)
      .add<Conv2dArgs>("im2col", VariantTag::optimized,
                       "W^T @ dy per image (the selected matmul), then col2im adds patches back",
                       &conv2d_backward_input_im2col<float>, &conv2d_backward_input_im2col<double>);
  r.op("conv2d_backward_weight", Device::cpu)
      .add<Conv2dArgs>(
          "im2col", VariantTag::optimized,
          "sum over images of dy @ cols^T (the selected matmul on re-unfolded patches)",
          &conv2d_backward_weight_im2col<float>, &conv2d_backward_weight_im2col<double>);
}
PRISM_CPU_KERNELS(200, register_conv_im2col);

}  // namespace prism::kernels::cpu
