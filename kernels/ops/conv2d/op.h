// 2-D convolution and its two gradients, and the unfolding (im2col) and folding (col2im)
// they are built on.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/op_def.h"

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
