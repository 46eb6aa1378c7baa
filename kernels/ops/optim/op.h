// The optimizers' parameter updates, in place: SGD (momentum, Nesterov, weight decay) and
// Adam / AdamW.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/op_def.h"

namespace prism::kernels::ops {

inline constexpr OpDef sgd_update{
    .name = "sgd_update",
    .op_class = OpClass::optimizer,
    .cost_formula =
        "2 FLOP/elem + 2 with weight decay + 2 with momentum + 2 more for Nesterov; bytes = param "
        "read+write + grad (+ velocity read+write)",
    .cpu = {.variant = "fused", .why = "one in-place loop over every tensor a parameter has"},
    .cuda = {.variant = "fused",
             .why =
                 "one kernel instead of one per tensor op (docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};
inline constexpr OpDef adam_update{
    .name = "adam_update",
    .op_class = OpClass::optimizer,
    .cost_formula =
        "13 FLOP/elem + 2 with L2 weight decay (Adam) or + 1 decoupled (AdamW); bytes = param, m, "
        "v read+write + grad",
    .cpu = {.variant = "fused", .why = "one in-place loop over param, grad, m and v"},
    .cuda = {.variant = "fused",
             .why =
                 "one kernel instead of one per tensor op (docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};

}  // namespace prism::kernels::ops
