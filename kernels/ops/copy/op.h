// Copies: a strided tensor made contiguous on one device (copy), and the transfers between
// host and device, which the runtime does (to_cuda, to_cpu: recorded, with no kernel).
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/copy/args.h"

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

namespace prism::costs {

// A copy of numel elements: no FLOPs, read once and write once.
Cost copy(int64_t numel, int64_t elem_size);

// cast of numel elements to another dtype: no FLOPs; read in one element size, write in the other.
Cost cast(int64_t numel, int64_t in_elem_size, int64_t out_elem_size);

}  // namespace prism::costs
