// softmax and log_softmax over the last dim, and their gradients.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/softmax/args.h"

namespace prism::kernels::ops {

inline constexpr OpDef softmax{
    .name = "softmax",
    .op_class = OpClass::normalisation,
    .cost_formula = "4 FLOPs per element (max, sub+exp, sum, div); bytes = in + out",
    .cpu = {.variant = "online",
            .why = "one read of each row with a running max (docs/PERFORMANCE.md, \"Fused vs "
                   "unfused (CPU)\")"},
    .cuda = {.variant = "online",
             .why = "one read with a running max (docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};
inline constexpr OpDef softmax_backward{
    .name = "softmax_backward",
    .op_class = OpClass::normalisation,
    .cost_formula = "4 FLOPs per element; bytes = y + g + dx",
};
inline constexpr OpDef log_softmax{
    .name = "log_softmax",
    .op_class = OpClass::normalisation,
    .cost_formula = "4 FLOPs per element (max, sub+exp, sum, sub); bytes = in + out",
    .cpu = {.variant = "online",
            .why = "one read of each row with a running max (docs/PERFORMANCE.md, \"Fused vs "
                   "unfused (CPU)\")"},
    .cuda = {.variant = "online",
             .why = "one read with a running max (docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};
inline constexpr OpDef log_softmax_backward{
    .name = "log_softmax_backward",
    .op_class = OpClass::normalisation,
    .cost_formula = "4 FLOPs per element; bytes = y + g + dx",
};

}  // namespace prism::kernels::ops

namespace prism::costs {

// softmax / log_softmax of `numel` elements: 4 FLOPs each (max, subtract + exp, sum, divide).
Cost softmax(int64_t numel, int64_t elem_size);

// softmax_backward / log_softmax_backward: 4 FLOPs per element (product or sum, subtract,
// multiply, and the exp of log_softmax counted as 1); reads y and g, writes dx.
Cost softmax_backward(int64_t numel, int64_t elem_size);

}  // namespace prism::costs
