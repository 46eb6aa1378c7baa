// Every elementwise op: unary out = f(x), and binary out = f(a, b) with broadcasting, the
// activations' gradients among them (f(x, g) = g f'(x)). The functors are listed once in
// kernels/ops/elementwise/list.h for both devices.
//
// The ops' definitions (kernels/op_def.h): name, class, cost formula, and each device's default
// variant with its reason.
#pragma once

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/elementwise/args.h"

namespace prism::kernels::ops {

// The CPU default of every elementwise op, and why.
inline constexpr DefaultVariant kSimdRowsOnThreads{
    .variant = "optimized",
    .why =
        "SIMD rows with vectorised exp and tanh, fixed chunks over the threads "
        "(docs/PERFORMANCE.md, \"Threads\")"};

inline constexpr OpDef neg{
    .name = "neg",
    .op_class = OpClass::elementwise,
    .cost_formula = "1 FLOP/elem; bytes = in + out",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef exp{
    .name = "exp",
    .op_class = OpClass::elementwise,
    .cost_formula = "1 FLOP/elem; bytes = in + out",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef log{
    .name = "log",
    .op_class = OpClass::elementwise,
    .cost_formula = "1 FLOP/elem; bytes = in + out",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef sqrt{
    .name = "sqrt",
    .op_class = OpClass::elementwise,
    .cost_formula = "1 FLOP/elem; bytes = in + out",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef tanh{
    .name = "tanh",
    .op_class = OpClass::elementwise,
    .cost_formula = "1 FLOP/elem; bytes = in + out",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef relu{
    .name = "relu",
    .op_class = OpClass::elementwise,
    .cost_formula = "1 FLOP/elem (a compare); bytes = in + out",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef sigmoid{
    .name = "sigmoid",
    .op_class = OpClass::elementwise,
    .cost_formula = "3 FLOP/elem (neg, exp, add+div counted as 1); bytes = in + out",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef gelu{
    .name = "gelu",
    .op_class = OpClass::elementwise,
    .cost_formula = "8 FLOP/elem (tanh approximation); bytes = in + out",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef silu{
    .name = "silu",
    .op_class = OpClass::elementwise,
    .cost_formula = "4 FLOP/elem (x / (1 + e^-x): neg, exp, add, div); bytes = in + out",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef add{
    .name = "add",
    .op_class = OpClass::elementwise,
    .cost_formula = "1 FLOP/out elem; bytes = a + b + out",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef sub{
    .name = "sub",
    .op_class = OpClass::elementwise,
    .cost_formula = "1 FLOP/out elem; bytes = a + b + out",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef mul{
    .name = "mul",
    .op_class = OpClass::elementwise,
    .cost_formula = "1 FLOP/out elem; bytes = a + b + out",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef div{
    .name = "div",
    .op_class = OpClass::elementwise,
    .cost_formula = "1 FLOP/out elem; bytes = a + b + out",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef pow{
    .name = "pow",
    .op_class = OpClass::elementwise,
    .cost_formula = "1 FLOP/out elem; bytes = a + b + out",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef relu_backward{
    .name = "relu_backward",
    .op_class = OpClass::elementwise,
    .cost_formula = "1 FLOP/elem; bytes = x + g + dx",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef sigmoid_backward{
    .name = "sigmoid_backward",
    .op_class = OpClass::elementwise,
    .cost_formula = "3 FLOP/elem; bytes = y + g + dx",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef tanh_backward{
    .name = "tanh_backward",
    .op_class = OpClass::elementwise,
    .cost_formula = "3 FLOP/elem; bytes = y + g + dx",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef gelu_backward{
    .name = "gelu_backward",
    .op_class = OpClass::elementwise,
    .cost_formula = "16 FLOP/elem; bytes = x + g + dx",
    .cpu = kSimdRowsOnThreads,
};
inline constexpr OpDef silu_backward{
    .name = "silu_backward",
    .op_class = OpClass::elementwise,
    .cost_formula =
        "8 FLOP/elem (g s (1 + x (1 - s)), s = sigmoid(x) recomputed); bytes = x + g + dx",
    .cpu = kSimdRowsOnThreads,
};

}  // namespace prism::kernels::ops

namespace prism::costs {

// An elementwise op: `flops_per_elem` arithmetic steps per output element; reads each input's
// own elements once (a broadcast input is read once, not once per use).
Cost elementwise(const Dims& out, int flops_per_elem, int64_t in_bytes, int64_t elem_size);

// The arithmetic steps per element of the elementwise op `op` (docs/COSTS.md, "Elementwise"):
// 1 for add, exp, relu...; sigmoid 3, silu 4, gelu 8, silu_backward 8, gelu_backward 16. An
// unknown op is an Error.
int elementwise_steps(std::string_view op);

}  // namespace prism::costs
