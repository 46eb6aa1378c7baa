// Max and average pooling over k x k windows, and their gradients.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/pool2d/args.h"

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

namespace prism::costs {

// max_pool2d / avg_pool2d of x [N, C, H, W]: kernel^2 FLOPs per output element (max: compares;
// avg: kernel^2 - 1 adds and 1 divide), counted over the whole window even where it overlaps
// padding. Bytes = x + y, plus the int64 argmax per output for max pooling.
Cost pool2d(const Dims& x, int64_t kernel, int64_t stride, int64_t padding, bool with_index,
            int64_t elem_size);

// max_pool2d_backward: 1 add per output gradient element; reads dy and the index, writes dx.
// avg_pool2d_backward: kernel^2 FLOPs per output gradient element (each spread over its
// window); reads dy, writes dx. `x` is the forward input's shape.
Cost max_pool2d_backward(const Dims& x, int64_t kernel, int64_t stride, int64_t padding,
                         int64_t elem_size);
Cost avg_pool2d_backward(const Dims& x, int64_t kernel, int64_t stride, int64_t padding,
                         int64_t elem_size);

}  // namespace prism::costs
