// 2-D convolution and its two gradients, and the unfolding (im2col) and folding (col2im)
// they are built on.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/conv2d/args.h"

namespace prism::kernels::ops {

inline constexpr OpDef conv2d{
    .name = "conv2d",
    .op_class = OpClass::conv,
    .cost_formula =
        "2*N*O*Ho*Wo*C*kh*kw FLOPs (+ N*O*Ho*Wo bias adds); MACs half without bias; bytes = x + w "
        "(+ bias) + y",
    .cpu = {.variant = "im2col",
            .why = "unfolded patches and the selected matmul are many times the direct loops "
                   "(docs/PERFORMANCE.md, \"Convolution and pooling kernels\")"},
    .cuda = {.variant = "im2col",
             .why = "cuBLAS GEMMs on unfolded patches (docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};
inline constexpr OpDef conv2d_backward_input{
    .name = "conv2d_backward_input",
    .op_class = OpClass::conv,
    .cost_formula = "2*N*O*Ho*Wo*C*kh*kw FLOPs (MACs half); bytes = dy + w + dx",
    .cpu = {.variant = "im2col", .why = "the forward's reason: one GEMM per image, then col2im"},
    .cuda = {.variant = "im2col", .why = "the forward's reason"},
};
inline constexpr OpDef conv2d_backward_weight{
    .name = "conv2d_backward_weight",
    .op_class = OpClass::conv,
    .cost_formula = "2*N*O*Ho*Wo*C*kh*kw FLOPs (MACs half); bytes = dy + x + dw",
    .cpu = {.variant = "im2col",
            .why = "the forward's reason: one GEMM per image on the unfolded input"},
    .cuda = {.variant = "im2col", .why = "the forward's reason"},
};
inline constexpr OpDef im2col{
    .name = "im2col",
    .op_class = OpClass::conv,
    .cost_formula = "0 FLOPs; bytes = x + N*K*P patches (K = C*kh*kw, P = Ho*Wo)",
    .cpu = {.variant = "optimized",
            .why = "each window row copied as one run, the padding found once per row"},
};
inline constexpr OpDef col2im{
    .name = "col2im",
    .op_class = OpClass::conv,
    .cost_formula = "N*K*P adds (K = C*kh*kw, P = Ho*Wo); bytes = patch gradients + dx",
    .cpu = {.variant = "optimized",
            .why = "each window row added as one run, the padding found once per row"},
};

}  // namespace prism::kernels::ops

namespace prism::costs {

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

}  // namespace prism::costs
