// RMSNorm over the last dim: y = x / sqrt(mean(x^2) + eps) * weight, and its gradient.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/op_def.h"

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
