// Row reductions over the last dim: sum, mean, max (with its indices), argmax.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/reduce/args.h"

namespace prism::kernels::ops {

inline constexpr OpDef sum{
    .name = "sum",
    .op_class = OpClass::elementwise,
    .cost_formula = "(cols-1) FLOPs per output; bytes = in + out",
    .cpu = {.variant = "optimized",
            .why = "32 double lanes per row; Eigen's strided rowwise sum does not vectorize "
                   "(docs/PERFORMANCE.md, \"sum and mean: vectorized double accumulation\")"},
    .cuda = {.variant = "optimized",
             .why = "a warp or block per row with a tree; one thread per row is far slower on long "
                    "rows (docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};
inline constexpr OpDef mean{
    .name = "mean",
    .op_class = OpClass::elementwise,
    .cost_formula = "(cols-1) adds + 1 divide per output; bytes = in + out",
    .cpu = {.variant = "optimized", .why = "the sum's kernel, then one divide per row"},
    .cuda = {.variant = "optimized", .why = "the sum's kernel, then one divide per row"},
};
inline constexpr OpDef max{
    .name = "max",
    .op_class = OpClass::elementwise,
    .cost_formula = "(cols-1) compares per output; bytes = in + out + indices",
    .cpu = {.variant = "reference",
            .why = "Eigen's maxCoeff per row: no faster CPU max has been written"},
    .cuda = {.variant = "optimized",
             .why = "a warp or block per row with a tree (docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};
inline constexpr OpDef argmax{
    .name = "argmax",
    .op_class = OpClass::elementwise,
    .cost_formula = "(cols-1) compares per output; bytes = in + indices",
    .cpu = {.variant = "reference",
            .why = "Eigen's maxCoeff per row: no faster CPU argmax has been written"},
    .cuda = {.variant = "optimized",
             .why = "a warp or block per row with a tree (docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};

}  // namespace prism::kernels::ops

namespace prism::costs {

// A reduction of `in_numel` elements to `out_numel` outputs, `flops_per_in` per input element
// (sum: 1 add per element, minus one per output).
Cost reduce(int64_t in_numel, int64_t out_numel, int64_t elem_size, int64_t out_elem_size);

// mean: reduce's sum, plus one divide per output.
Cost mean(int64_t in_numel, int64_t out_numel, int64_t elem_size);

}  // namespace prism::costs
