// Embedding-style indexing: gather and index_select read rows by index; scatter_add and
// index_add are their gradients, adding rows back.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/index/args.h"

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

namespace prism::costs {

// gather / index_select of `out_numel` elements picked by `index_numel` int64 indices: no
// FLOPs; bytes = the index + each picked element read once and written once.
Cost gather(int64_t index_numel, int64_t out_numel, int64_t elem_size);

// scatter_add / index_add of `src_numel` elements into a zeroed destination by `index_numel`
// int64 indices: 1 add per src element; bytes = the index + src read + the destination
// element each one lands on read and written (3 accesses per src element).
Cost scatter_add(int64_t index_numel, int64_t src_numel, int64_t elem_size);

}  // namespace prism::costs
