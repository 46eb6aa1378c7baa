// int8 post-training quantization: quantize_int8 turns float activations into int8 with a
// scale, and matmul_int8 multiplies int8 by int8 into int32, then requantizes.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/op_def.h"

namespace prism::kernels::ops {

inline constexpr OpDef matmul_int8{
    .name = "matmul_int8",
    .op_class = OpClass::matmul,
    .cost_formula =
        "2*m*n*k integer ops (m*n*k MACs) + 3 per output (requantize); bytes = a + w (1 each) + 4 "
        "x out + 4 x (w_scale + bias) + 4",
    .cpu = {.variant = "optimized",
            .why = "VNNI dot products on packed panels (docs/PERFORMANCE.md, \"int8 post-training "
                   "quantization\")"},
};
inline constexpr OpDef quantize_int8{
    .name = "quantize_int8",
    .op_class = OpClass::elementwise,
    .cost_formula = "1 FLOP/elem (divide; round and clamp not counted); bytes = in + 1 x out",
};

}  // namespace prism::kernels::ops
