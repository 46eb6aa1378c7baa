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
// fold stays a plain loop (col2im_add says why).
//
// Cost: the same FLOPs as the naive loops (2 N O Ho Wo C kh kw per op), plus the unfold's
// K P copies per image.
//
// Measured (2-core AMD EPYC VM, GCC 12 -O2 -march=native, 1 thread, float32, batch 64, the
// kernel alone, best of 20, thread CPU time because the machine was shared, load ~10):
//   conv 1->16 3x3 on 28x28    forward 0.34 ms (37 GFLOP/s)  dx 0.32 ms  dw 0.34 ms
//   conv 16->32 3x3 on 13x13   forward 1.34 ms (53 GFLOP/s)  dx 1.55 ms  dw 1.37 ms
// against 7-46 ms (1.2-1.8 GFLOP/s) per op for the naive loops: ~30x.
#include <Eigen/Core>
#include <algorithm>
#include <vector>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd_runs.h"

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
                .at("matmul", Device::cpu)
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

// The output positions j in [0, out) whose input position j*stride + off lies in [0, in):
// the range [lo, hi) (empty when lo == hi).
struct Range {
  int64_t lo, hi;
};
Range valid_range(int64_t off, int64_t in, int64_t out, int64_t stride) {
  int64_t lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
  int64_t hi = in - 1 - off >= 0 ? (in - 1 - off) / stride + 1 : 0;
  lo = std::min(lo, out);
  hi = std::max(std::min(hi, out), lo);
  return {lo, hi};
}

// True when the patch matrix of an image is the image itself ([C, H W] = [K, P]).
template <class T>
bool is_pointwise(const Conv2dArgs<T>& a) {
  return a.kh == 1 && a.kw == 1 && a.stride == 1 && a.padding == 0;
}

// cols [K, P] <- the patches of one image x [C, H, W].
//
// Patch row (c, p, q) is the input window x[c, i s - pad + p, j s - pad + q] over the output
// positions (i, j): rows i in [ir.lo, ir.hi) and columns j in [jr.lo, jr.hi) fall inside the
// input, the rest is padding. Each window row is one run of Wo elements, copied a register at a
// time (simd_runs.h). The loop over i has no branch: a row with padding columns is zeroed whole
// first, then its inside copied over it (one extra store of a few hundred floats, cheaper than
// two short zero runs per window row).
template <class T>
void im2col(const Conv2dArgs<T>& args, const T* x, T* cols) {
  const Conv2dArgs<T> a = args;  // a local copy: the stores to cols cannot alias the sizes
  const int64_t P = a.ho * a.wo;
  for (int64_t c = 0; c < a.c; ++c) {
    const T* xc = x + c * a.h * a.w;
    for (int64_t p = 0; p < a.kh; ++p) {
      const Range ir = valid_range(p - a.padding, a.h, a.ho, a.stride);
      for (int64_t q = 0; q < a.kw; ++q) {
        T* row = cols + ((c * a.kh + p) * a.kw + q) * P;
        const Range jr = valid_range(q - a.padding, a.w, a.wo, a.stride);
        const int64_t inside = jr.hi - jr.lo;
        zero_run(row, ir.lo * a.wo);                          // window rows above the input
        zero_run(row + ir.hi * a.wo, (a.ho - ir.hi) * a.wo);  // and below it
        if (inside < a.wo) zero_run(row + ir.lo * a.wo, (ir.hi - ir.lo) * a.wo);
        // dst[j] = src[j s] for j in [jr.lo, jr.hi): src is input row i s - pad + p, shifted
        // so that output column j reads input column j s - pad + q.
        const T* src =
            xc + (ir.lo * a.stride - a.padding + p) * a.w + (jr.lo * a.stride - a.padding + q);
        T* dst = row + ir.lo * a.wo + jr.lo;
        for (int64_t i = ir.lo; i < ir.hi; ++i, src += a.stride * a.w, dst += a.wo) {
          if (a.stride == 1) {
            copy_run(src, inside, dst);
          } else {
            for (int64_t j = 0; j < inside; ++j) dst[j] = src[j * a.stride];
          }
        }
      }
    }
  }
}

// dx [C, H, W] += the patch gradients dcols [K, P] of one image (the reverse of im2col; a
// patch element that came from padding is dropped).
//
// A plain loop, not simd_runs.h's masked runs: each dx row is read, added to and written back
// by runs that lie a row apart (Wo elements of a W-element row), closer than one register. A
// masked load whose register-wide footprint overlaps an earlier masked store still in the store
// buffer cannot take its data from it and waits until the store reaches the cache; on 16
// channels of 13x13 masked runs took 11 us an image, this loop (which GCC vectorises with
// unmasked 8-wide steps and a scalar tail) 2.8 us.
template <class T>
void col2im_add(const Conv2dArgs<T>& args, const T* dcols, T* dx) {
  const Conv2dArgs<T> a = args;  // a local copy, as in im2col
  const int64_t P = a.ho * a.wo;
  for (int64_t c = 0; c < a.c; ++c) {
    T* dxc = dx + c * a.h * a.w;
    for (int64_t p = 0; p < a.kh; ++p) {
      const Range ir = valid_range(p - a.padding, a.h, a.ho, a.stride);
      for (int64_t q = 0; q < a.kw; ++q) {
        const Range jr = valid_range(q - a.padding, a.w, a.wo, a.stride);
        const int64_t inside = jr.hi - jr.lo;
        const T* src = dcols + ((c * a.kh + p) * a.kw + q) * P + ir.lo * a.wo + jr.lo;
        T* dst =
            dxc + (ir.lo * a.stride - a.padding + p) * a.w + (jr.lo * a.stride - a.padding + q);
        for (int64_t i = ir.lo; i < ir.hi; ++i, src += a.wo, dst += a.stride * a.w) {
          if (a.stride == 1) {
            for (int64_t j = 0; j < inside; ++j) dst[j] += src[j];
          } else {
            for (int64_t j = 0; j < inside; ++j) dst[j * a.stride] += src[j];
          }
        }
      }
    }
  }
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
      im2col(a, xn, scratch.patches(t));
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
      col2im_add(a, scratch.patches(t), dxn);
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
            im2col(a, xn, scratch.patches(t));  // recomputed: cheaper than keeping every image's
            cols = scratch.patches(t);          // patches from forward
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
