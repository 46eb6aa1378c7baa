// Rotary position embeddings, RoPE (Su et al., 2021, "RoFormer"): the position enters attention
// as a rotation of each query and key, not as a vector added to the input.
//
// The math. A head's vector x (d entries, d even) at position p is cut into h = d / 2 pairs,
// the "rotate half" pairing of GPT-NeoX and LLaMA: pair i is (x_i, x_{i+h}), turned by the
// angle p theta_i with theta_i = base^(-2i / d) (base 10000: pair 0 turns a radian a position,
// the last pair about 1/10000 of one):
//   y_i     = x_i cos(p theta_i) - x_{i+h} sin(p theta_i)
//   y_{i+h} = x_{i+h} cos(p theta_i) + x_i sin(p theta_i)
// Why it encodes relative position: rotations compose, R(a)^T R(b) = R(b - a), so the score
// q_p . k_s of a query rotated by p and a key rotated by s depends on p - s only, and the
// model needs no position table (GPT's wpe) and no limit on the position but precision.
//
// The gradient. A rotation is orthogonal, so dx = R^T dy = R(-angle) dy: rope_backward is the
// same kernel turning the other way,
//   dx_i = dy_i cos + dy_{i+h} sin,   dx_{i+h} = dy_{i+h} cos - dy_i sin.
//
// The ops' definitions and cost (the argument struct is args.h, which the CUDA files include
// alone): everything the op is, beside its kernels (naive.cpp, optimized.cpp, rope.cu) and its
// description for the lab (opinfo.cpp).
#pragma once

#include <cstdint>

#include "kernels/costs.h"
#include "kernels/op_def.h"
#include "kernels/ops/rope/args.h"

namespace prism::kernels {

namespace ops {

inline constexpr OpDef rope{
    .name = "rope",
    .op_class = OpClass::attention,
    .cost_formula =
        "3 FLOPs per element (a pair's two products and a sum, per output); the "
        "angles' sines and cosines not counted; bytes = x + y",
    .cpu = {.variant = "optimized",
            .why = "a cos and sin table shared by every row and call at the same positions, "
                   "SIMD rows over the threads (docs/PERFORMANCE.md, \"RoPE (CPU)\")"},
};
inline constexpr OpDef rope_backward{
    .name = "rope_backward",
    .op_class = OpClass::attention,
    .cost_formula = "3 FLOPs per element (the forward's rotation turned back); bytes = dy + dx",
    .cpu = {.variant = "optimized", .why = "the forward's reason: the same kernel"},
};

}  // namespace ops
}  // namespace prism::kernels

namespace prism::costs {

// rope and rope_backward of `numel` elements: each output is two products and a sum, 3 FLOPs
// (the angles' sin and cos are a table's work, not counted); x read once, y written once.
inline Cost rope(int64_t numel, int64_t elem_size) {
  return make_cost(3 * Count(numel), 0, 2 * Count(numel) * elem_size);
}

}  // namespace prism::costs
