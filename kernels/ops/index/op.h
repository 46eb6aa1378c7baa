// Embedding-style indexing: gather and index_select read rows by index; scatter_add and
// index_add are their gradients, adding rows back.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/op_def.h"

namespace prism::kernels::ops {

// The CPU default of every index op, and why.
inline constexpr DefaultVariant kLoopsOnThreads{.variant = "optimized",
                                                .why = "the naive loops, split over the threads"};

inline constexpr OpDef gather{
    .name = "gather",
    .op_class = OpClass::elementwise,
    .cost_formula = "0 FLOPs; bytes = index + 2 x out",
    .cpu = kLoopsOnThreads,
};
inline constexpr OpDef scatter_add{
    .name = "scatter_add",
    .op_class = OpClass::elementwise,
    .cost_formula = "1 FLOP per src element; bytes = index + src + 2 x src",
    .cpu = kLoopsOnThreads,
};
inline constexpr OpDef index_select{
    .name = "index_select",
    .op_class = OpClass::elementwise,
    .cost_formula = "0 FLOPs; bytes = index + 2 x out",
    .cpu = kLoopsOnThreads,
};
inline constexpr OpDef index_add{
    .name = "index_add",
    .op_class = OpClass::elementwise,
    .cost_formula = "1 FLOP per src element; bytes = index + 3 x src",
    .cpu = kLoopsOnThreads,
};

}  // namespace prism::kernels::ops
