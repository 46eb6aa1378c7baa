// Cross-entropy of logits against class indices (log-softmax and the pick fused), and its
// gradient.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/op_def.h"

namespace prism::kernels::ops {

inline constexpr OpDef cross_entropy{
    .name = "cross_entropy",
    .op_class = OpClass::normalisation,
    .cost_formula =
        "4 FLOPs per logit (max, sub+exp, sum) + 3 per row; bytes = logits + int64 targets + loss "
        "(+ float64 lse per row when saved)",
    .cpu = {.variant = "fused",
            .why = "log-softmax and the pick in one pass over each row (docs/PERFORMANCE.md, "
                   "\"Fused vs unfused (CPU)\")"},
    .cuda = {.variant = "fused",
             .why = "one pass over each row (docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};
inline constexpr OpDef cross_entropy_backward{
    .name = "cross_entropy_backward",
    .op_class = OpClass::normalisation,
    .cost_formula =
        "3 FLOPs per logit (sub+exp, scale) + 1 per row (the one-hot); bytes = logits + targets + "
        "lse + dlogits",
};

}  // namespace prism::kernels::ops
