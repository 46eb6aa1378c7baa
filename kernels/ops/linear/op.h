// A Linear layer's GEMM with its prologue and epilogue fused: y = relu?(x) W^T + b.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/linear/args.h"

namespace prism::kernels::ops {

inline constexpr OpDef linear{
    .name = "linear",
    .op_class = OpClass::matmul,
    .cost_formula =
        "2*m*n*k FLOPs (GEMM) + 1 per ReLU'd operand element + 1 per output for the bias, 1 for "
        "the mask + m*(k-1) for A's row sums; bytes = A + B + C (+ bias + mask + row sums)",
    .cpu = {.variant = "fused",
            .why = "takes the MLP's bias adds, ReLUs and ReLU gradients off the step, where they "
                   "ran serially on data both cores wrote (docs/PERFORMANCE.md, \"Threads\")"},
};

}  // namespace prism::kernels::ops

namespace prism::costs {

// linear (kernels/args.h, LinearArgs): C [m, n] = relu?(A [m, k]) @ relu?(B [k, n]), + bias,
// masked, and A's row sums: m n k MACs (2x in FLOPs) + 1 FLOP per element of each ReLU'd
// operand (`relu_elems`: m k for A, k n for B) + 1 per output for a bias and 1 for a mask +
// m (k - 1) for the row sums: the FLOPs of the relu, matmul, add, relu_backward and sum ops it
// replaces. Bytes = A + B + C (+ bias n + mask m n + row sums m).
Cost linear(int64_t m, int64_t n, int64_t k, int64_t relu_elems, bool has_bias, bool has_mask,
            bool has_row_sums, int64_t elem_size);

}  // namespace prism::costs
