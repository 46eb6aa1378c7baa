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

}  // namespace prism::costs
