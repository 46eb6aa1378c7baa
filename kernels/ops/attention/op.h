// Scaled dot-product attention, softmax(Q K^T / sqrt(d)) V, optionally causal, and its
// gradient.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/attention/args.h"

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

namespace prism::costs {

// The (query, key) pairs attention computes for q [B, H, Lq, d] and k [B, H, Lk, d]: B H Lq Lk,
// or B H L (L + 1) / 2 when causal (only j <= i; the masked half is not useful work).
int64_t attention_pairs(const Dims& q, const Dims& k, bool causal);

// attention forward: per pair 2 d MACs (a row of q k^T and a row of P v), 4 d FLOPs, + 5 FLOPs
// for the softmax (scale, max, subtract + exp, sum, divide). Bytes = q + k + v + out + lse.
Cost attention(const Dims& q, const Dims& k, bool causal, int64_t elem_size);

// attention_backward: five products per pair (q k^T again, dV, dP, dQ, dK: 5 d MACs) + 5 FLOPs
// (P = exp(S - lse): 3, dS = P (dP - D): 2), plus D_i = dout_i . out_i (d MACs per query row).
// Bytes = q + k + v + out + dout + lse read, dq + dk + dv written.
Cost attention_backward(const Dims& q, const Dims& k, bool causal, int64_t elem_size);

}  // namespace prism::costs
