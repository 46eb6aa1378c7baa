// Every elementwise op, the functor that computes it, and its FLOPs per element, listed once for
// both devices: the CPU (math.h) and the GPU (math.cuh) each define a functor of every name
// below, and each registers the whole list (naive.cpp, optimized.cpp, elementwise.cu) by
// expanding it with a macro of its own:
//   #define PRISM_ADD_UNARY(Functor, op, flops) add_unary<Functor>(r, op);
//   PRISM_UNARY_OPS(PRISM_ADD_UNARY)
// The cost formulas read the FLOPs from here too (costs::elementwise_steps). So an elementwise op
// is its two functors, its definition in op.h, and one line here.
//
// FLOPs per element: a transcendental (exp, log, tanh, sqrt, pow) and a compare (relu) count 1;
// sigmoid 1 / (1 + e^-x) 3 (neg, exp, add and divide as 1); silu x / (1 + e^-x) 4; gelu's tanh
// approximation 8; tanh' = g (1 - y^2) and sigmoid' = g y (1 - y) 3; silu' = g s (1 + x (1 - s))
// with s = sigmoid(x) recomputed: 3 for s, then 1 - s, x *, 1 +, s *, g *: 8; gelu' 16.
#pragma once

// Unary ops: out = f(x).
#define PRISM_UNARY_OPS(X) \
  X(Neg, "neg", 1)         \
  X(Exp, "exp", 1)         \
  X(Log, "log", 1)         \
  X(Sqrt, "sqrt", 1)       \
  X(Tanh, "tanh", 1)       \
  X(Relu, "relu", 1)       \
  X(Sigmoid, "sigmoid", 3) \
  X(Gelu, "gelu", 8)       \
  X(Silu, "silu", 4)

// Binary ops, broadcasting: out = f(a, b). The *_backward ones are the activations' gradients:
// f(x, g) = g f'(x), from the input (relu, gelu, silu) or from the saved output y (sigmoid:
// g y (1 - y); tanh: g (1 - y^2)).
#define PRISM_BINARY_OPS(X)                 \
  X(Add, "add", 1)                          \
  X(Sub, "sub", 1)                          \
  X(Mul, "mul", 1)                          \
  X(Div, "div", 1)                          \
  X(Pow, "pow", 1)                          \
  X(ReluBackward, "relu_backward", 1)       \
  X(SigmoidBackward, "sigmoid_backward", 3) \
  X(TanhBackward, "tanh_backward", 3)       \
  X(GeluBackward, "gelu_backward", 16)      \
  X(SiluBackward, "silu_backward", 8)
