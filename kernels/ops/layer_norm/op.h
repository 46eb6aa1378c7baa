// Layer normalisation over the last dim (mean, variance, optional weight and bias), and its
// gradient.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/op_def.h"

namespace prism::kernels::ops {

inline constexpr OpDef layer_norm{
    .name = "layer_norm",
    .op_class = OpClass::normalisation,
    .cost_formula =
        "6 FLOPs per element (+1 with weight, +1 with bias) + 5 per row; bytes = x + y + weight + "
        "bias (+ mean and rstd when saved)",
    .cpu =
        {.variant = "one_pass",
         .why =
             "Welford's one pass over each row (docs/PERFORMANCE.md, \"Fused vs unfused (CPU)\")"},
    .cuda = {.variant = "two_pass",
             .why = "measured against intent: three reads of each row, two from cache, beat "
                    "Welford's one pass, whose update costs a float64 division per element "
                    "(docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};
inline constexpr OpDef layer_norm_backward{
    .name = "layer_norm_backward",
    .op_class = OpClass::normalisation,
    .cost_formula =
        "11 FLOPs per element (+2 for dweight, +1 for dbias); bytes = x + g + dx + weight + mean + "
        "rstd + dweight + dbias",
};

}  // namespace prism::kernels::ops
