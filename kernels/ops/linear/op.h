// A Linear layer's GEMM with its prologue and epilogue fused: y = relu?(x) W^T + b.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/op_def.h"

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
