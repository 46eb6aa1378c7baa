// Layer normalisation over the last dim (mean, variance, optional weight and bias), and its
// gradient.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/layer_norm/args.h"

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

namespace prism::costs {

// layer_norm of `rows` rows of `cols` elements: per element 6 FLOPs (the mean's add; the
// variance's subtract, square, add; the output's subtract and multiply by rstd), +1 with a
// weight, +1 with a bias; per row 5 (two divides by cols, + eps, sqrt, reciprocal). Bytes =
// x + y + weight + bias, + mean and rstd ([rows] each) when they are saved for backward.
Cost layer_norm(int64_t rows, int64_t cols, bool has_weight, bool has_bias, bool saves_stats,
                int64_t elem_size);

// layer_norm_backward: dx costs 9 FLOPs per element (xhat 2; the row sums of g w and g w xhat
// 3; rstd (g w - mean - xhat mean) 4), +1 for g * weight when there is a weight; dweight 2
// (g xhat, summed over rows), dbias 1. Bytes: x, g, mean, rstd and weight read; dx, dweight,
// dbias written (each only when that gradient is computed).
Cost layer_norm_backward(int64_t rows, int64_t cols, bool has_weight, bool dx, bool dweight,
                         bool dbias, int64_t elem_size);

}  // namespace prism::costs
