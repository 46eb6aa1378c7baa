// conv2d's argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

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

}  // namespace prism::kernels
