// SwiGLU's gate: out = silu(gate) * up, and its gradient. Classed as elementwise: it is the
// MLP's activation.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/op_def.h"

namespace prism::kernels::ops {

inline constexpr OpDef swiglu{
    .name = "swiglu",
    .op_class = OpClass::elementwise,
    .cost_formula = "5 FLOPs per element (silu(gate) 4, times up 1); bytes = gate + up + out",
    .cpu = {.variant = "fused",
            .why = "one pass where naive makes a pass per function; the exp dominates both "
                   "(docs/PERFORMANCE.md, \"RMSNorm and SwiGLU (CPU)\")"},
    .cuda = {.variant = "fused",
             .why = "one pass over memory where naive makes a pass per function "
                    "(docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};
inline constexpr OpDef swiglu_backward{
    .name = "swiglu_backward",
    .op_class = OpClass::elementwise,
    .cost_formula =
        "11 FLOPs per element (sigmoid 3, dgate 6, dup 2); bytes = gate + up + g + dgate + dup",
    .cpu = {.variant = "fused",
            .why =
                "one pass over gate, up and g (docs/PERFORMANCE.md, \"RMSNorm and SwiGLU (CPU)\")"},
    .cuda = {.variant = "fused",
             .why = "one pass over memory (docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};

}  // namespace prism::kernels::ops
