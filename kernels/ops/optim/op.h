// The optimizers' parameter updates, in place: SGD (momentum, Nesterov, weight decay) and
// Adam / AdamW.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/optim/args.h"

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

namespace prism::costs {

// sgd_update of `numel` elements in place (kernels/args.h has the math): 2 FLOPs per element
// for p -= lr * g, + 2 for weight decay (g += wd * p), + 2 for momentum (v = mu * v + g),
// + 2 more for Nesterov (g + mu * v). Bytes: param read and written, grad read; with momentum
// the velocity read and written too (3 or 5 accesses per element).
Cost sgd_update(int64_t numel, int64_t elem_size, bool weight_decay, bool momentum, bool nesterov);

// adam_update of `numel` elements in place: 13 FLOPs per element (m: 3, v: 4, denominator
// sqrt / divide / add: 3, p -= step_size * m / denom: 3), + 2 for L2 weight decay (Adam) or
// + 1 for the decoupled shrink p *= 1 - lr wd (AdamW). Bytes: param, m and v read and written,
// grad read (7 accesses per element).
Cost adam_update(int64_t numel, int64_t elem_size, bool weight_decay, bool decoupled);

}  // namespace prism::costs
