// C = A B with bfloat16 operands and float32 accumulation (the bf16 mixed-precision path).
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/matmul_bf16/args.h"

namespace prism::kernels::ops {

inline constexpr OpDef matmul_bf16{
    .name = "matmul_bf16",
    .op_class = OpClass::matmul,
    .cost_formula =
        "2*m*n*k FLOPs per batch (m*n*k MACs); bytes = 2 x (A + B) elements (bf16) + 4 x C (fp32)",
    .cpu = {.variant = "amx",
            .why = "AMX tiles where the CPU has them, else the packed AVX-512 kernel "
                   "(docs/PERFORMANCE.md, \"bf16 mixed precision\")",
            .without_its_hardware = "optimized"},
};

}  // namespace prism::kernels::ops

namespace prism::costs {

// matmul_bf16: the same m n k multiply-adds per batch entry, bfloat16 inputs (2 bytes an
// element) and a float32 output (4): bytes = 2 (A + B) + 4 C.
Cost matmul_bf16(const Dims& a, const Dims& b);

}  // namespace prism::costs
