// RMSNorm over the last dim: y = x / sqrt(mean(x^2) + eps) * weight, and its gradient.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/rms_norm/args.h"

namespace prism::kernels::ops {

inline constexpr OpDef rms_norm{
    .name = "rms_norm",
    .op_class = OpClass::normalisation,
    .cost_formula =
        "3 FLOPs per element (+1 with weight) + 4 per row; bytes = x + y + weight (+ rstd when "
        "saved)",
    .cpu = {.variant = "fused",
            .why = "one pass over each row where naive makes a pass per step (docs/PERFORMANCE.md, "
                   "\"RMSNorm and SwiGLU (CPU)\")"},
    .cuda = {.variant = "fused",
             .why = "one pass over memory where naive makes a pass per step (docs/PERFORMANCE.md, "
                    "\"GPU (CUDA)\")"},
};
inline constexpr OpDef rms_norm_backward{
    .name = "rms_norm_backward",
    .op_class = OpClass::normalisation,
    .cost_formula =
        "6 FLOPs per element (+1 with weight, +2 for dweight); bytes = x + g + rstd + weight + dx "
        "+ dweight",
    .cpu = {.variant = "fused",
            .why = "one pass over each row (docs/PERFORMANCE.md, \"RMSNorm and SwiGLU (CPU)\")"},
    .cuda = {.variant = "fused",
             .why = "one pass over memory (docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};

}  // namespace prism::kernels::ops

namespace prism::costs {

// rms_norm of `rows` rows of `cols` elements: per element 3 FLOPs (square and add for the sum of
// squares, the multiply by rstd), +1 with a weight; per row 4 (divide by cols, + eps, sqrt,
// reciprocal). Bytes = x + y + weight, + rstd ([rows]) when it is saved for backward.
Cost rms_norm(int64_t rows, int64_t cols, bool has_weight, bool saves_rstd, int64_t elem_size);

// rms_norm_backward: dx costs 6 FLOPs per element (xhat 1; the row sum of gw xhat 2; rstd (gw -
// xhat mean) 3), +1 for g * weight when there is a weight; dweight 2 (g xhat, summed over rows).
// Bytes: x, g, rstd and weight read; dx and dweight written (each only when it is computed).
Cost rms_norm_backward(int64_t rows, int64_t cols, bool has_weight, bool dx, bool dweight,
                       int64_t elem_size);

}  // namespace prism::costs
