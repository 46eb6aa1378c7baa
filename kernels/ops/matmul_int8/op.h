// int8 post-training quantization: quantize_int8 turns float activations into int8 with a
// scale, and matmul_int8 multiplies int8 by int8 into int32, then requantizes.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/matmul_int8/args.h"

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

namespace prism::costs {

// matmul_int8 of a [m, k] int8 by w [n, k] int8 with the requantization fused (kernels/args.h):
// m n k MACs (2 m n k integer ops, counted as FLOPs so GOP/s compare with float GEMMs) + 3 FLOPs
// per output (the scale product a_scale * w_scale[j], then the fma's multiply and add). Bytes at
// the real sizes: a and w 1 per element, out 4 per element, w_scale 4 n, a_scale 4, bias 4 n.
Cost matmul_int8(int64_t m, int64_t n, int64_t k, bool has_bias);

// quantize of numel float elements to int8: 1 FLOP per element (the divide; the round and the
// clamp are not counted); bytes = in_elem_size + 1 per element.
Cost quantize(int64_t numel, int64_t in_elem_size);

}  // namespace prism::costs
