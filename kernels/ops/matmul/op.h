// C = A B, batched: the ladder from the naive triple loop to the packed AVX-512 kernel.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/matmul/args.h"

namespace prism::kernels::ops {

inline constexpr OpDef matmul{
    .name = "matmul",
    .op_class = OpClass::matmul,
    .cost_formula = "2*m*n*k FLOPs per batch (m*n*k MACs); bytes = A + B + C",
    .cpu = {.variant = "optimized",
            .why = "the packed AVX-512 kernel is ahead of Eigen at n = 1024 and 2048 on one thread "
                   "and two, and on the MLP's and the conv's shapes too (docs/PERFORMANCE.md, "
                   "\"Matmul ladder\")"},
    .cuda = {.variant = "reference",
             .why = "cuBLAS: the hand-written tiles reach most of it at 4096 but a fraction at the "
                    "MLP's small shapes, where cuBLAS picks a kernel for the shape "
                    "(docs/PERFORMANCE.md, \"GPU (CUDA)\")"},
};

}  // namespace prism::kernels::ops

namespace prism::costs {

// matmul of a [..., m, k] by b [..., k, n] (shapes after NumPy broadcasting of the batch dims):
// m n k multiply-adds per batch entry.
Cost matmul(const Dims& a, const Dims& b, int64_t elem_size);

}  // namespace prism::costs
