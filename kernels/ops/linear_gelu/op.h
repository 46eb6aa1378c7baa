// y = gelu(x W^T + b): a GEMM with a bias + GELU epilogue.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/op_def.h"

namespace prism::kernels::ops {

inline constexpr OpDef linear_gelu{
    .name = "linear_gelu",
    .op_class = OpClass::matmul,
    .cost_formula =
        "2*rows*out*in FLOPs (GEMM) + 9 per output (bias add + GELU; 8 without bias); bytes = x + "
        "w + b + y (+ z when saved for backward)",
    .cpu = {.variant = "fused",
            .why = "its GELU runs on every thread inside the GEMM's tiles, with the same memory as "
                   "unfused (docs/PERFORMANCE.md, \"Attention and linear+GELU (CPU)\")"},
    .cuda = {.variant = "unfused",
             .why = "cuBLAS then a bias + GELU pass: the fused tile's GEMM is slower than cuBLAS's "
                    "by more than the pass it saves (docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};

}  // namespace prism::kernels::ops
