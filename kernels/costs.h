// Cost formulas of the ops, from shapes alone (DESIGN.md conventions; docs/COSTS.md table).
// Each op's front end calls its formula only while a profiling session records. Each op's
// definition (kernels/ops/<op>/op.h) says the same formula in one line of words.
#pragma once

#include <string_view>
#include <vector>

#include "kernels/dims.h"
#include "profiler/cost.h"

namespace prism::costs {

using profiler::Cost;

// A count of FLOPs, MACs or bytes, with overflow checked. A count is a product of sizes (conv2d:
// N O Ho Wo C kh kw), and sizes that are each fine, such as `prism summary` accepts on the meta
// device, can multiply past 2^63 - 1: signed overflow, undefined behaviour, printed as a
// negative count. Every formula below computes in Count, whose *, + and - throw an Error ("a
// FLOP, MAC or byte count exceeds 2^63 - 1") instead; the op's front end adds the op's name.
class Count {
 public:
  Count(int64_t v) : v_(v) {}  // implicit: a formula mixes counts and plain sizes
  int64_t value() const { return v_; }
  friend Count operator*(Count a, Count b);
  friend Count operator+(Count a, Count b);
  friend Count operator-(Count a, Count b);
  friend Count operator/(Count a, Count b) { return a.v_ / b.v_; }

 private:
  int64_t v_;
};
inline Cost make_cost(Count flops, Count macs, Count bytes) {
  return {flops.value(), macs.value(), bytes.value()};
}

// The output size of a convolution or pooling window along one dim (floor mode):
// (in + 2 padding - kernel) / stride + 1. The caller has checked kernel <= in + 2 padding.
int64_t window_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t padding);

}  // namespace prism::costs
