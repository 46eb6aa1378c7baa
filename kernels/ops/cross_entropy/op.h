// Cross-entropy of logits against class indices (log-softmax and the pick fused), and its
// gradient.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/cross_entropy/args.h"

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

namespace prism::costs {

// cross_entropy of logits [rows, cols]: 4 FLOPs per logit (max, subtract + exp, sum), 3 per row
// (log, add, subtract the target's logit), 1 for the reduction. Bytes = logits + 8 per int64
// target + the loss, + 8 per row for the float64 lse when it is saved for backward.
Cost cross_entropy(int64_t rows, int64_t cols, bool saves_lse, int64_t elem_size);

// cross_entropy_backward: 3 FLOPs per logit (subtract + exp, times g / N) + 1 per row (the
// one-hot subtract). Bytes = logits + targets + lse read, dlogits written.
Cost cross_entropy_backward(int64_t rows, int64_t cols, int64_t elem_size);

}  // namespace prism::costs
