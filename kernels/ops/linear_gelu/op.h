// y = gelu(x W^T + b): a GEMM with a bias + GELU epilogue.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/linear_gelu/args.h"

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

namespace prism::costs {

// linear_gelu of x [rows, in] by weight [out, in]: rows out in MACs (2x in FLOPs) + per output
// element 1 FLOP for the bias add (when there is a bias) and 8 for GELU (elementwise gelu's
// count). Bytes = x + weight (+ bias) + y, + z when the pre-activation is kept for backward.
Cost linear_gelu(int64_t rows, int64_t in, int64_t out, bool has_bias, bool keeps_z,
                 int64_t elem_size);

}  // namespace prism::costs
