// SwiGLU's gate: out = silu(gate) * up, and its gradient. Classed as elementwise: it is the
// MLP's activation.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/swiglu/args.h"

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

namespace prism::costs {

// swiglu of `numel` elements (out = silu(gate) up): 5 FLOPs per element, counted as the
// elementwise ops it fuses: silu 4 (gate / (1 + e^-gate): neg, exp, add, divide; sigmoid's 3 and
// one more, as elementwise_steps counts silu) and the multiply by up 1. Bytes = gate + up + out.
Cost swiglu(int64_t numel, int64_t elem_size);

// swiglu_backward, with s = sigmoid(gate) = 1 / d, d = 1 + e^-gate: 3 FLOPs per element for s
// (sigmoid's count), shared by both gradients; dgate = g up s (1 + gate (1 - s)) 6 more (1 - s,
// times gate, 1 +, times s: 4; times g and times up: 2); dup = g (gate / d) 2 more. 11 per
// element for both. Bytes: gate and g
// read, up read when dgate is computed (dup does not need it); dgate and dup written (each only
// when it is computed).
Cost swiglu_backward(int64_t numel, bool dgate, bool dup, int64_t elem_size);

}  // namespace prism::costs
