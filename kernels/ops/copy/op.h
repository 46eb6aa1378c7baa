// Copies: a strided tensor made contiguous on one device (copy), and the transfers between
// host and device, which the runtime does (to_cuda, to_cpu: recorded, with no kernel).
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/op_def.h"

namespace prism::kernels::ops {

inline constexpr OpDef copy{
    .name = "copy",
    .op_class = OpClass::elementwise,
    .cost_formula = "0 FLOPs; bytes = 2 x numel x elem size",
    .cpu = {.variant = "optimized", .why = "the naive loop, split over the threads"},
};
inline constexpr OpDef to_cuda{
    .name = "to_cuda",
    .op_class = OpClass::data,
    .cost_formula =
        "0 FLOPs; bytes = 2 x numel x elem size (read on one device, written on the other)",
    .has_kernels = false,
};
inline constexpr OpDef to_cpu{
    .name = "to_cpu",
    .op_class = OpClass::data,
    .cost_formula =
        "0 FLOPs; bytes = 2 x numel x elem size (read on one device, written on the other)",
    .has_kernels = false,
};

}  // namespace prism::kernels::ops
