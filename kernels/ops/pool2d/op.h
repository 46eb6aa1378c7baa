// Max and average pooling over k x k windows, and their gradients.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/op_def.h"

namespace prism::kernels::ops {

// The CPU default of every pooling op, and why.
inline constexpr DefaultVariant kPlanesOnThreads{
    .variant = "optimized",
    .why =
        "chunks of planes on every thread (docs/PERFORMANCE.md, \"Convolution and "
        "pooling kernels\")"};

inline constexpr OpDef max_pool2d{
    .name = "max_pool2d",
    .op_class = OpClass::pooling,
    .cost_formula = "k*k FLOPs (compares) per output; bytes = x + y + int64 argmax per output",
    .cpu = kPlanesOnThreads,
};
inline constexpr OpDef max_pool2d_backward{
    .name = "max_pool2d_backward",
    .op_class = OpClass::pooling,
    .cost_formula = "1 FLOP per dy element; bytes = dy + argmax + dx",
    .cpu = kPlanesOnThreads,
};
inline constexpr OpDef avg_pool2d{
    .name = "avg_pool2d",
    .op_class = OpClass::pooling,
    .cost_formula = "k*k FLOPs (adds + divide) per output; bytes = x + y",
    .cpu = kPlanesOnThreads,
};
inline constexpr OpDef avg_pool2d_backward{
    .name = "avg_pool2d_backward",
    .op_class = OpClass::pooling,
    .cost_formula = "k*k FLOPs per dy element; bytes = dy + dx",
    .cpu = kPlanesOnThreads,
};

}  // namespace prism::kernels::ops
