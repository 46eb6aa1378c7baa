// Scaled dot-product attention, softmax(Q K^T / sqrt(d)) V, optionally causal, and its
// gradient.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/op_def.h"

namespace prism::kernels::ops {

inline constexpr OpDef attention{
    .name = "attention",
    .op_class = OpClass::attention,
    .cost_formula =
        "4*B*H*Lq*Lk*d FLOPs (two products) + 5*B*H*Lq*Lk (softmax), causal: only pairs j <= i; "
        "bytes = q + k + v + out + lse",
    .cpu = {.variant = "flash",
            .why = "128 x 128 tiles with an online softmax: faster than naive and O(L) scratch "
                   "instead of O(L^2) (docs/PERFORMANCE.md, \"Attention and linear+GELU (CPU)\")"},
    .cuda = {.variant = "naive",
             .why = "measured against intent: the L x L scores through cuBLAS beat the scalar "
                    "flash kernel at every length measured; choose flash where the scores do not "
                    "fit (docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};
inline constexpr OpDef attention_backward{
    .name = "attention_backward",
    .op_class = OpClass::attention,
    .cost_formula =
        "10*B*H*Lq*Lk*d FLOPs (five products) + 5*B*H*Lq*Lk + 2*B*H*Lq*d, causal: pairs j <= i; "
        "bytes = q + k + v + out + dout + lse + dq + dk + dv",
    .cpu = {.variant = "flash",
            .why = "tiles rebuilt from the saved log-sum-exp, O(L) scratch (docs/PERFORMANCE.md, "
                   "\"Attention and linear+GELU (CPU)\")"},
    .cuda = {.variant = "naive",
             .why = "the forward's reason: five cuBLAS GEMMs beat the flash kernels "
                    "(docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};

}  // namespace prism::kernels::ops
