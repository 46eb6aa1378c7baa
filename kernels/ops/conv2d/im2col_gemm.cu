// conv2d and its two gradients on the GPU, im2col variant: unfold patches, then cuBLAS GEMMs.
//
// Idea (the same as kernels/ops/conv2d/im2col_gemm.cpp): the patches of image n form a matrix
//   cols_n[(c, p, q), (i, j)] = x[n, c, i*s - pad + p, j*s - pad + q]   (0 where padding)
// of shape [K, P], K = C kh kw, P = Ho Wo, and then
//   y_n  = W @ cols_n                 [O, P]   (+ bias)
//   dx_n = col2im(W^T @ dy_n)         the patch gradients added back where they came from
//   dw   = sum_n dy_n @ cols_n^T      [O, K]
// On a GPU one image's GEMM is too small to fill the device (LeNet: [16 x 9] @ [9 x 676]), so
// a chunk of images is unfolded at once and each product is one call:
//   forward, dx: a strided-batched GEMM over the chunk (W shared, batch stride 0);
//   dw: the chunk's patches are laid out as one [K, nb P] matrix and dy as [O, nb P] (a
//       transposing copy), so the sum over images is the inner dimension of a single GEMM,
//       accumulated over chunks with beta = 1.
// The chunk is as many images as the workspace holds (the tensor layer sizes it, a temporary
// the profile shows; at least one image, about 128 MB at most). 1x1 kernels with stride 1 and
// no padding skip the unfold in forward and dx: cols_n is x_n itself.
// GEMMs run on cuBLAS, not on the currently selected matmul variant: dw needs C += A B
// (beta = 1), which MatmulArgs (C overwritten) cannot express without another buffer and a
// reduction pass; and conv's own profile row should measure conv, not the matmul lesson.
// col2im is written as a gather: thread (n, c, r, w) sums the patch entries that came from it,
// so no two threads write one element (no atomics; deterministic).
// Cost: 2 N O Ho Wo C kh kw FLOPs per op, plus the unfold's K P copies per image. `prism lab
// conv2d --device cuda` (and its two gradients) prints the figures (measured:
// docs/PERFORMANCE.md, "GPU (CUDA)").
#include <algorithm>
#include <optional>

#include "kernels/cuda/cublas_gemm.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/ops/conv2d/args.h"

namespace prism::kernels::cuda {
namespace {

// Where patch entry (image nl of the chunk, row kk = (c, p, q), column pix = (i, j)) lives:
// cols[nl * img_stride + kk * row_stride + pix].
struct ColsLayout {
  int64_t img_stride, row_stride;
};

template <class T>
__global__ void im2col_kernel(const Conv2dArgs<T> a, const T* __restrict__ x, int64_t nb,
                              T* __restrict__ cols, ColsLayout L) {
  const int64_t P = a.ho * a.wo, K = a.c * a.kh * a.kw;
  PRISM_GRID_STRIDE(e, nb * K * P) {
    const int64_t pix = e % P, kk = (e / P) % K, nl = e / (P * K);
    const int64_t j = pix % a.wo, i = pix / a.wo;
    const int64_t q = kk % a.kw, p = (kk / a.kw) % a.kh, c = kk / (a.kw * a.kh);
    const int64_t hi = i * a.stride - a.padding + p, wi = j * a.stride - a.padding + q;
    const bool inside = hi >= 0 && hi < a.h && wi >= 0 && wi < a.w;
    cols[nl * L.img_stride + kk * L.row_stride + pix] =
        inside ? x[((nl * a.c + c) * a.h + hi) * a.w + wi] : T(0);
  }
}

// dx[nl, c, r, w] = sum over (p, q) with r = i s - pad + p, w = j s - pad + q for an output
// position (i, j) of dcols[nl, (c, p, q), (i, j)]; in (p, q) order, as the CPU adds them.
template <class T>
__global__ void col2im_kernel(const Conv2dArgs<T> a, const T* __restrict__ dcols, int64_t nb,
                              T* __restrict__ dx) {
  const int64_t P = a.ho * a.wo, K = a.c * a.kh * a.kw;
  PRISM_GRID_STRIDE(e, nb * a.c * a.h * a.w) {
    const int64_t w = e % a.w, r = (e / a.w) % a.h, c = (e / (a.w * a.h)) % a.c;
    const int64_t nl = e / (a.w * a.h * a.c);
    const T* base = dcols + nl * K * P + c * a.kh * a.kw * P;
    T acc = 0;
    for (int64_t p = 0; p < a.kh; ++p) {
      const int64_t ti = r + a.padding - p;  // = i * stride
      if (ti < 0 || ti % a.stride != 0 || ti / a.stride >= a.ho) continue;
      const int64_t i = ti / a.stride;
      for (int64_t q = 0; q < a.kw; ++q) {
        const int64_t tj = w + a.padding - q;
        if (tj < 0 || tj % a.stride != 0 || tj / a.stride >= a.wo) continue;
        acc += base[(p * a.kw + q) * P + i * a.wo + tj / a.stride];
      }
    }
    dx[e] = acc;
  }
}

// y[n, o, pix] = bias[o]: the GEMM then adds W cols on top (beta = 1).
template <class T>
__global__ void fill_bias_kernel(T* __restrict__ y, const T* __restrict__ bias, int64_t n,
                                 int64_t o, int64_t P) {
  PRISM_GRID_STRIDE(e, n * o * P) {
    y[e] = bias[(e / P) % o];
  }
}

// dyt[o, nl P + pix] = dy[nl, o, pix]: the chunk's gradients as one [O, nb P] matrix.
template <class T>
__global__ void gather_dy_kernel(const T* __restrict__ dy, T* __restrict__ dyt, int64_t nb,
                                 int64_t o, int64_t P) {
  PRISM_GRID_STRIDE(e, nb * o * P) {
    const int64_t pix = e % P, nl = (e / P) % nb, oc = e / (P * nb);
    dyt[e] = dy[(nl * o + oc) * P + pix];
  }
}

template <class T>
bool is_pointwise(const Conv2dArgs<T>& a) {
  return a.kh == 1 && a.kw == 1 && a.stride == 1 && a.padding == 0;
}

// Images per chunk and the patch buffer: the tensor layer's workspace (as many whole images
// as it holds), or, when a caller passes none, a buffer of our own for up to 2^25 elements.
template <class T>
struct Scratch {
  T* cols = nullptr;
  int64_t images = 1;
  std::optional<DeviceBuffer> own;
  explicit Scratch(const Conv2dArgs<T>& a) {
    const int64_t per = std::max<int64_t>(1, a.c * a.kh * a.kw * a.ho * a.wo);
    if (a.workspace && a.workspace_size >= per) {
      cols = a.workspace;
      images = std::min(a.n, a.workspace_size / per);
    } else {
      images = std::clamp<int64_t>((int64_t{1} << 25) / per, 1, std::max<int64_t>(a.n, 1));
      own.emplace(static_cast<size_t>(images * per) * sizeof(T));
      cols = own->template as<T>();
    }
  }
};

template <class T>
void im2col(const Conv2dArgs<T>& a, int64_t n0, int64_t nb, T* cols, ColsLayout L) {
  const int64_t total = nb * a.c * a.kh * a.kw * a.ho * a.wo;
  im2col_kernel<T>
      <<<grid_for(total), kBlock, 0, stream()>>>(a, a.x + n0 * a.c * a.h * a.w, nb, cols, L);
  PRISM_CUDA_CHECK_LAUNCH("im2col_kernel");
}

template <class T>
void conv2d_im2col(const Conv2dArgs<T>& a) {
  const int64_t K = a.c * a.kh * a.kw, P = a.ho * a.wo, image = a.c * a.h * a.w;
  if (a.n * a.o * P == 0) return;
  if (a.bias) {
    fill_bias_kernel<T>
        <<<grid_for(a.n * a.o * P), kBlock, 0, stream()>>>(a.out, a.bias, a.n, a.o, P);
    PRISM_CUDA_CHECK_LAUNCH("fill_bias_kernel");
  }
  const T beta = a.bias ? T(1) : T(0);
  const GemmOperand<T> W{a.weight, K, 1, 0};
  if (is_pointwise(a)) {  // cols_n = x_n: one batched GEMM over every image
    gemm<T>(a.n, a.o, P, K, T(1), W, {a.x, P, 1, image}, beta, a.out, P, a.o * P);
    return;
  }
  Scratch<T> s(a);
  for (int64_t n0 = 0; n0 < a.n; n0 += s.images) {
    const int64_t nb = std::min(s.images, a.n - n0);
    im2col(a, n0, nb, s.cols, {K * P, P});
    gemm<T>(nb, a.o, P, K, T(1), W, {s.cols, P, 1, K * P}, beta, a.out + n0 * a.o * P, P, a.o * P);
  }
}

template <class T>
void conv2d_backward_input_im2col(const Conv2dArgs<T>& a) {
  const int64_t K = a.c * a.kh * a.kw, P = a.ho * a.wo, image = a.c * a.h * a.w;
  if (a.n * image == 0) return;
  if (a.o == 0) {  // no outputs: nothing flows back
    gpu::backend::memset_zero(a.out, static_cast<size_t>(a.n * image) * sizeof(T));
    return;
  }
  const GemmOperand<T> Wt{a.weight, 1, K, 0};  // W^T [K, O]
  if (is_pointwise(a)) {
    gemm<T>(a.n, K, P, a.o, T(1), Wt, {a.dy, P, 1, a.o * P}, T(0), a.out, P, image);
    return;
  }
  Scratch<T> s(a);
  for (int64_t n0 = 0; n0 < a.n; n0 += s.images) {
    const int64_t nb = std::min(s.images, a.n - n0);
    gemm<T>(nb, K, P, a.o, T(1), Wt, {a.dy + n0 * a.o * P, P, 1, a.o * P}, T(0), s.cols, P, K * P);
    col2im_kernel<T>
        <<<grid_for(nb * image), kBlock, 0, stream()>>>(a, s.cols, nb, a.out + n0 * image);
    PRISM_CUDA_CHECK_LAUNCH("col2im_kernel");
  }
}

template <class T>
void conv2d_backward_weight_im2col(const Conv2dArgs<T>& a) {
  const int64_t K = a.c * a.kh * a.kw, P = a.ho * a.wo;
  if (a.o * K == 0) return;
  if (a.n * P == 0) {  // an empty sum
    gpu::backend::memset_zero(a.out, static_cast<size_t>(a.o * K) * sizeof(T));
    return;
  }
  Scratch<T> s(a);
  DeviceBuffer dyt(static_cast<size_t>(std::min(s.images, a.n) * a.o * P) * sizeof(T));
  for (int64_t n0 = 0; n0 < a.n; n0 += s.images) {
    const int64_t nb = std::min(s.images, a.n - n0), cols = nb * P;
    im2col(a, n0, nb, s.cols, {P, cols});  // [K, nb P]
    gather_dy_kernel<T><<<grid_for(nb * a.o * P), kBlock, 0, stream()>>>(a.dy + n0 * a.o * P,
                                                                         dyt.as<T>(), nb, a.o, P);
    PRISM_CUDA_CHECK_LAUNCH("gather_dy_kernel");
    // dw (+)= dyt [O, nb P] @ cols^T [nb P, K]
    gemm<T>(1, a.o, K, cols, T(1), {dyt.as<T>(), cols, 1, 0}, {s.cols, 1, cols, 0},
            n0 == 0 ? T(0) : T(1), a.out, K, 0);
  }
}

}  // namespace

void register_conv(Registry& r) {
  r.op("conv2d", Device::cuda)
      .add<Conv2dArgs>("im2col", VariantTag::optimized,
                       "unfold a chunk of images, one batched cuBLAS GEMM per chunk",
                       &conv2d_im2col<float>, &conv2d_im2col<double>);
  r.op("conv2d_backward_input", Device::cuda)
      .add<Conv2dArgs>("im2col", VariantTag::optimized,
                       "W^T @ dy per chunk (batched cuBLAS GEMM), then a col2im gather",
                       &conv2d_backward_input_im2col<float>, &conv2d_backward_input_im2col<double>);
  r.op("conv2d_backward_weight", Device::cuda)
      .add<Conv2dArgs>("im2col", VariantTag::optimized,
                       "dy [O, nb*P] @ cols^T per chunk: the image sum inside one cuBLAS GEMM",
                       &conv2d_backward_weight_im2col<float>,
                       &conv2d_backward_weight_im2col<double>);
}
PRISM_CUDA_KERNELS(150, register_conv);

}  // namespace prism::kernels::cuda
