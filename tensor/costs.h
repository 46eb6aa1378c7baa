// Cost formulas of the ops, from shapes alone (DESIGN.md conventions; docs/COSTS.md table).
// Each op's front end calls its formula only while a profiling session records.
#pragma once

#include "profiler/cost.h"
#include "tensor/dims.h"

namespace prism::costs {

using profiler::Cost;

// An elementwise op: `flops_per_elem` arithmetic steps per output element; reads each input's
// own elements once (a broadcast input is read once, not once per use).
Cost elementwise(const Dims& out, int flops_per_elem, int64_t in_bytes, int64_t elem_size);

// matmul of a [..., m, k] by b [..., k, n] (shapes after NumPy broadcasting of the batch dims):
// m n k multiply-adds per batch entry.
Cost matmul(const Dims& a, const Dims& b, int64_t elem_size);

// A reduction of `in_numel` elements to `out_numel` outputs, `flops_per_in` per input element
// (sum: 1 add per element, minus one per output).
Cost reduce(int64_t in_numel, int64_t out_numel, int64_t elem_size, int64_t out_elem_size);

// softmax / log_softmax of `numel` elements: 4 FLOPs each (max, subtract + exp, sum, divide).
Cost softmax(int64_t numel, int64_t elem_size);

// softmax_backward / log_softmax_backward: 4 FLOPs per element (product or sum, subtract,
// multiply, and the exp of log_softmax counted as 1); reads y and g, writes dx.
Cost softmax_backward(int64_t numel, int64_t elem_size);

// A copy of numel elements: no FLOPs, read once and write once.
Cost copy(int64_t numel, int64_t elem_size);

// sgd_update of `numel` elements in place (kernels/args.h has the math): 2 FLOPs per element
// for p -= lr * g, + 2 for weight decay (g += wd * p), + 2 for momentum (v = mu * v + g),
// + 2 more for Nesterov (g + mu * v). Bytes: param read and written, grad read; with momentum
// the velocity read and written too (3 or 5 accesses per element).
Cost sgd_update(int64_t numel, int64_t elem_size, bool weight_decay, bool momentum, bool nesterov);

// adam_update of `numel` elements in place: 13 FLOPs per element (m: 3, v: 4, denominator
// sqrt / divide / add: 3, p -= step_size * m / denom: 3), + 2 for L2 weight decay (Adam) or
// + 1 for the decoupled shrink p *= 1 - lr wd (AdamW). Bytes: param, m and v read and written,
// grad read (7 accesses per element).
Cost adam_update(int64_t numel, int64_t elem_size, bool weight_decay, bool decoupled);

// The output size of a convolution or pooling window along one dim (floor mode):
// (in + 2 padding - kernel) / stride + 1. The caller has checked kernel <= in + 2 padding.
int64_t window_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t padding);

// conv2d of x [N, C, H, W] by weight [O, C, kh, kw]: every output element is a C kh kw-term
// dot product, so N O Ho Wo C kh kw MACs = 2x that in FLOPs, plus 1 FLOP per output element for
// the bias add when there is a bias (MACs leave it out, like fvcore). Bytes = x + weight
// (+ bias) + y.
Cost conv2d(const Dims& x, const Dims& weight, bool has_bias, int64_t stride, int64_t padding,
            int64_t elem_size);
// Gradients of conv2d: each is one multiply-add per forward multiply-add (the forward's FLOPs
// without the bias). backward_input reads dy + weight and writes dx (x's size); backward_weight
// reads dy + x and writes dw (weight's size). `x` and `weight` are the forward's shapes.
Cost conv2d_backward_input(const Dims& x, const Dims& weight, int64_t stride, int64_t padding,
                           int64_t elem_size);
Cost conv2d_backward_weight(const Dims& x, const Dims& weight, int64_t stride, int64_t padding,
                            int64_t elem_size);

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
