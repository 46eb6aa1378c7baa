// Every elementwise op and the functor that computes it, listed once for both devices: the CPU
// (kernels/ops/elementwise/math.h) and the GPU (kernels/ops/elementwise/math.cuh) each define
// a functor of every name below, and each registers the whole list (elementwise_naive.cpp,
// kernels/ops/elementwise/elementwise.cu) by expanding it with a macro of its own:
//   #define PRISM_ADD_UNARY(Functor, op) add_unary<Functor>(r, op);
//   PRISM_UNARY_OPS(PRISM_ADD_UNARY)
// So an elementwise op is its two functors and one line here.
#pragma once

// Unary ops: out = f(x).
#define PRISM_UNARY_OPS(X) \
  X(Neg, "neg")            \
  X(Exp, "exp")            \
  X(Log, "log")            \
  X(Sqrt, "sqrt")          \
  X(Tanh, "tanh")          \
  X(Relu, "relu")          \
  X(Sigmoid, "sigmoid")    \
  X(Gelu, "gelu")          \
  X(Silu, "silu")

// Binary ops, broadcasting: out = f(a, b). The *_backward ones are the activations' gradients:
// f(x, g) = g f'(x), from the input (relu, gelu, silu) or from the saved output y (sigmoid:
// g y (1 - y); tanh: g (1 - y^2)).
#define PRISM_BINARY_OPS(X)              \
  X(Add, "add")                          \
  X(Sub, "sub")                          \
  X(Mul, "mul")                          \
  X(Div, "div")                          \
  X(Pow, "pow")                          \
  X(ReluBackward, "relu_backward")       \
  X(SigmoidBackward, "sigmoid_backward") \
  X(TanhBackward, "tanh_backward")       \
  X(GeluBackward, "gelu_backward")       \
  X(SiluBackward, "silu_backward")
